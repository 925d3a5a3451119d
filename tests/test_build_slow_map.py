"""A slow map in a parallel build (issue 16): the output stays byte-identical, and maps that
finish after it wait on disk as parts (written by the workers), not in the parent's memory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from maptab.generate import pipeline
from maptab.generate.pipeline import PARTS, Preset, build_benchmark
from maptab.io.dataset import DatasetError

TINY = Preset("tiny", 3, 3, 18, 18, q_min=2, sizes=("small",), reasonmap_per_map=4)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_slow_first_map_keeps_output_and_parts_wait_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "plain"
    build_benchmark(plain, preset=TINY, seed=3, workers=1)

    seen: list[set[str]] = []  # the parts on disk each time the parent hears of a map

    def track(items: Iterable[object], label: str, total: int) -> Iterator[object]:
        for item in items:
            folders = list(tmp_path.glob(f".slow.building-*/{PARTS}"))
            seen.append({p.name.split(".")[0] for f in folders for p in f.iterdir()})
            yield item

    monkeypatch.setitem(pipeline.SLOW_MAPS, "metro-000", 3.0)
    slow = tmp_path / "slow"
    build_benchmark(slow, preset=TINY, seed=3, workers=2, progress=track)

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
