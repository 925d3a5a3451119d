"""``maptab build`` stopped by SIGTERM or SIGINT leaves no process behind (pool workers,
resource tracker), as a user killing a long build expects."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from procs import session_processes

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="needs Linux /proc to list processes"
)

# ``maptab`` as a terminal runs it: SIGINT raises KeyboardInterrupt, as Python sets it up
# by default, even where the test itself runs with SIGINT ignored (a background job of a
# non-interactive shell passes that on to every process it starts)
CLI = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from maptab.cli import main; main()"
)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    ("sig", "group"),
    [(signal.SIGTERM, False), (signal.SIGINT, False), (signal.SIGINT, True)],
    ids=["SIGTERM", "SIGINT", "Ctrl-C"],
)
def test_interrupted_build_stops_every_process(
    tmp_path: Path, sig: signal.Signals, group: bool
) -> None:
    """The signal goes to the build, or (``group``: Ctrl-C in a terminal) to every process
    of its group, workers included. The first map takes a day, and the signal comes once
    later maps are done: the build does not wait for the map in progress (it could not
    end at all if it did; the time limits below only keep a broken build from hanging the
    suite)."""
    cmd = [sys.executable, "-c", CLI, "build"]
    args = ["--preset", "paper", "--no-render", "--out", str(tmp_path / "paper")]
    proc = subprocess.Popen(
        [*cmd, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "MAPTAB_SLOW_MAPS": "metro-000=86400"},
    )
    try:
        deadline = time.monotonic() + 300
        workers: list[int] = []
        parts: list[Path] = []
        while time.monotonic() < deadline and proc.poll() is None:
            procs = session_processes(proc.pid)
            # pool workers are started with spawn (multiprocessing.spawn.spawn_main)
            workers = [p for p, c in procs.items() if "spawn_main" in c]
            parts = list(tmp_path.glob(".paper.building-*/.parts/*"))  # maps after the first
            if len(workers) >= 2 and parts:
                break
            time.sleep(0.2)
        assert proc.poll() is None and len(workers) >= 2, "the build never started its pool"
        assert parts, "no map was done"
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 130, err.decode()
        assert "build interrupted" in err.decode() and "Traceback" not in err.decode()
        left: dict[int, str] = {}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            left = session_processes(proc.pid)
            if not left:
                break
            time.sleep(0.2)
        assert not left, f"processes left running: {left}"
    finally:
        for pid in session_processes(proc.pid):  # never leave a stray build on the test machine
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
