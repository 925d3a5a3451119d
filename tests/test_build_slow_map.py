"""A slow map in a parallel build: the output stays byte-identical, and maps that
finish after it wait on disk as parts (written by the workers), not in the parent's memory."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from maptab.executors import local_executor
from maptab.generate import pipeline
from maptab.generate.pipeline import PARTS, Preset, build_benchmark
from maptab.io.dataset import DatasetError

TINY = Preset("tiny", 3, 3, 18, 18, q_min=2, sizes=("small",), reasonmap_per_map=4)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


class _GatedTime:
    """The ``time`` module as a worker's pipeline sees it, but for ``sleep`` (a slow map's
    delay), which waits until ``gate`` exists: the slow map ends only after the parent has
    heard of another map, however the workers are scheduled."""

    def __init__(self, gate: str) -> None:
        self.gate = Path(gate)

    def sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + 300  # a test that died never opens the gate
        while not self.gate.exists() and time.monotonic() < deadline:
            time.sleep(0.005)

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)


def _gated_worker(gate: str, initializer, initargs) -> None:
    pipeline.time = _GatedTime(gate)
    if initializer is not None:
        initializer(*initargs)


@pytest.mark.slow
def test_slow_first_map_keeps_output_and_parts_wait_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    build_benchmark(plain, preset=TINY, seed=3, workers=1)

    seen: list[set[str]] = []  # the parts on disk each time the parent hears of a map
    gate = tmp_path / "gate"

    def track(items: Iterable[object], label: str, total: int) -> Iterator[object]:
        for item in items:
            folders = list(tmp_path.glob(f".slow.building-*/{PARTS}"))
            seen.append({p.name.split(".")[0] for f in folders for p in f.iterdir()})
            gate.touch()  # the slow map goes on once another map is heard of
            yield item

    def executors(workers: int, initializer=None, initargs=()):
        return local_executor(workers, _gated_worker, (str(gate), initializer, initargs))

    monkeypatch.setitem(pipeline.SLOW_MAPS, "metro-000", 1.0)  # held until the gate opens
    slow = tmp_path / "slow"
    build_benchmark(slow, preset=TINY, seed=3, workers=2, progress=track, executors=executors)

    assert _files(slow) == _files(plain)
    assert len(seen) == 6  # one report per map
    # the first map to finish is not the slow first one: its rows are a part on disk,
    # waiting for map 0, and the parent holds none of them
    assert seen[0] and "000000" not in seen[0]
    assert not (slow / PARTS).exists()


def test_slow_maps_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pipeline.SLOW_MAPS_ENV, "metro-001=0.5, travel-000=2")
    assert pipeline._slow_maps() == {"metro-001": 0.5, "travel-000": 2.0}
    monkeypatch.setenv(pipeline.SLOW_MAPS_ENV, "metro-001=soon")
    with pytest.raises(DatasetError, match="ID=SECONDS"):
        pipeline._slow_maps()
