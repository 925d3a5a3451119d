"""In-process models for the Ctrl-C tests of ``maptab run``, which hold a run in progress
until the test has sent its signal, however loaded the machine is.

Both are module-level classes, so ``spawn`` worker processes (``--jobs``) unpickle them by
name (``tests`` must be on their ``PYTHONPATH``). They share files with the test in a
*gate folder*:

* :class:`GatedProvider` (the ``gated:FOLDER`` model of :func:`write_plugin`): answers
  samples ``0 .. hold_from - 1`` at once; every later sample waits until ``FOLDER/open``
  exists, then takes :data:`PACE` seconds. A run cannot end before the test opens the gate,
  and once open, stopping "at once" means after a few samples, not after all of them;
* :class:`SlowModel`: takes :data:`SLOW` seconds a sample (a local model called in process)
  and appends ``ID before`` or ``ID after`` to ``FOLDER/calls`` as each sample begins:
  ``after`` once the test has made ``FOLDER/signalled``, so the test counts the samples
  begun after its signal. Samples from ``hold_from`` on wait for ``signalled`` first (after
  logging), so the run cannot end before the signal either.
"""

from __future__ import annotations

import time
from pathlib import Path

from maptab.run.provider import InProcessProvider

PACE = 0.01
"""Seconds a held sample takes once the gate is open."""
SLOW = 0.5
"""Seconds :class:`SlowModel` takes a sample."""
HOLD_AT_MOST = 600.0
"""Seconds a held sample waits for the gate at most (a test that died never opens it)."""


def _index(sample_id: str) -> int:
    return int(sample_id.rsplit("-", 1)[1])


class GatedProvider(InProcessProvider):
    """The ``gated`` model (module docstring); ``FOLDER/hold_from`` holds ``hold_from``."""

    name = "gated"
    uses_images = False
    uses_messages = False  # answers from the sample id: no prompt is built

    def __init__(self, folder: str) -> None:
        self.model = folder
        self.settings = {}
        self.folder = Path(folder)
        self.hold_from = int((self.folder / "hold_from").read_text())

    def answer(self, request) -> str:
        if _index(request.id) >= self.hold_from:
            gate = self.folder / "open"
            deadline = time.monotonic() + HOLD_AT_MOST
            while not gate.exists() and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(PACE)
        return request.id


class SlowModel:
    """The slow model (module docstring), logging to ``FOLDER/calls``."""

    def __init__(self, folder: str, hold_from: int) -> None:
        self.folder = folder
        self.hold_from = hold_from

    def __call__(self, request) -> str:
        folder = Path(self.folder)
        signalled = folder / "signalled"
        when = "after" if signalled.exists() else "before"
        with open(folder / "calls", "a") as fh:
            fh.write(f"{request.id} {when}\n")
        if _index(request.id) >= self.hold_from:
            deadline = time.monotonic() + HOLD_AT_MOST
            while not signalled.exists() and time.monotonic() < deadline:
                time.sleep(0.005)
        time.sleep(SLOW)
        return request.id


def write_plugin(site: Path) -> Path:
    """Make ``site`` a folder that, on ``PYTHONPATH`` with ``tests``, registers
    :class:`GatedProvider` as the model prefix ``gated`` (entry-point group
    ``maptab.providers``); returns ``site``."""
    info = site / "gated_maptab_model-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: gated-maptab-model\nVersion: 0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[maptab.providers]\ngated = gated_model:GatedProvider\n", encoding="utf-8"
    )
    return site
