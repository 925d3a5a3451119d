"""Scaled-out builds: self-contained map jobs, ``--jobs``, Ray, shards and ``maptab merge``
give the same bytes as a serial build of the same seed and spec; ``--from-tables`` builds too,
through the same executors."""

from __future__ import annotations

import importlib.util
import json
import shutil
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maptab import executors
from maptab.cli import app
from maptab.core import tables
from maptab.errors import MaptabError
from maptab.executors import executor_factory, local_executor, ray_executor
from maptab.generate.owntables import build_from_tables
from maptab.generate.pipeline import (
    PRESETS,
    MapRecipe,
    Preset,
    build_benchmark,
    classify_maps,
    classify_summaries,
    map_count,
    parse_shard,
    recipe_network,
    scaled_preset,
    summarize_recipe,
    synthesize_maps,
)
from maptab.io.dataset import DatasetError, merge_shards

TINY = Preset("tiny", 4, 3, 24, 18, q_min=2, sizes=("small", "medium"), reasonmap_per_map=4)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("serial") / "ds"
    build_benchmark(out, preset=TINY, seed=11, workers=1, report_totals=True)
    return out


def _shards(root: Path, count: int, **kw: object) -> list[Path]:
    folders = []
    for i in range(count):
        folder = root / f"shard{i}"
        build_benchmark(folder, preset=TINY, seed=11, shard=(i, count), report_totals=True, **kw)
        folders.append(folder)
    return folders


def test_recipe_is_the_map_the_preset_synthesises() -> None:
    nets = synthesize_maps(TINY, 5)
    assert len(nets) == map_count(TINY) == 7
    for i, net in enumerate(nets):
        again = recipe_network(MapRecipe(5, i, TINY))
        assert again.map_id == net.map_id
        assert again.to_dict() == net.to_dict()
    summaries = [summarize_recipe(MapRecipe(5, i, TINY)) for i in range(len(nets))]
    assert classify_summaries(summaries, 5) == classify_maps(nets, 5)


def test_two_workers_give_the_same_bytes(serial: Path, tmp_path: Path) -> None:
    out = tmp_path / "jobs2"
    build_benchmark(out, preset=TINY, seed=11, workers=2, report_totals=True)
    assert _files(out) == _files(serial)


@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_merged_give_the_same_bytes(serial: Path, tmp_path: Path, count: int) -> None:
    folders = _shards(tmp_path, count, workers=1)
    manifest = json.loads((folders[0] / "manifest.json").read_text())
    assert manifest["options"]["shard"]["index"] == 0
    assert [m["id"] for m in manifest["maps"]] == [
        ("metro-%03d" if p < 4 else "travel-%03d") % (p if p < 4 else p - 4)
        for p in range(0, 7, count)
    ]
    merged = tmp_path / "merged"
    merge_shards(list(reversed(folders)), merged)  # any order of shards
    assert _files(merged) == _files(serial)


def test_merge_refuses_incomplete_or_foreign_or_damaged_shards(tmp_path: Path) -> None:
    folders = _shards(tmp_path, 2, workers=1)
    out = tmp_path / "merged"
    with pytest.raises(DatasetError, match=r"missing shard 1/2"):
        merge_shards(folders[:1], out)
    with pytest.raises(DatasetError, match=r"given twice"):
        merge_shards([folders[0], folders[0]], out)
    other = tmp_path / "other"
    build_benchmark(other, preset=TINY, seed=12, shard=(1, 2), workers=1, report_totals=True)
    with pytest.raises(DatasetError, match=r"another build"):
        merge_shards([folders[0], other], out)
    with pytest.raises(DatasetError, match=r"no such file"):
        merge_shards([folders[0], tmp_path / "nowhere"], out)
    assert not out.exists()
    # a damaged file is refused, and a dataset already at the output stays as it was
    build_benchmark(out, preset=TINY, seed=3, workers=1)
    with pytest.raises(DatasetError, match=r"not a shard"):
        merge_shards([folders[0], out], tmp_path / "elsewhere")
    before = _files(out)
    net = folders[1] / "maps" / "metro-001" / "edges.csv"
    net.write_bytes(net.read_bytes() + b"\n")
    with pytest.raises(DatasetError, match=r"edges.csv: does not match"):
        merge_shards(folders, out)
    rp = folders[0] / "rp.jsonl"
    shutil.copyfile(folders[1] / "rp.jsonl", rp)
    with pytest.raises(DatasetError):
        merge_shards(folders, out)
    assert _files(out) == before
    assert not list(tmp_path.glob(".merged.*"))


def test_cli_jobs_maps_shard_and_merge(tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["build", "--preset", "mini", "--maps", "2", "--no-render", "--seed", "4"]
    one = tmp_path / "one"
    result = runner.invoke(app, [*base, "--jobs", "1", "--out", str(one)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((one / "manifest.json").read_text())
    assert manifest["counts"]["maps"] == 4
    assert manifest["options"]["preset"] == {
        **manifest["options"]["preset"],
        "metro_maps": 2,
        "travel_maps": 2,
        "metro_pairs": 16,
        "travel_pairs": 16,
    }
    two = tmp_path / "two"
    result = runner.invoke(app, [*base, "--jobs", "2", "--out", str(two)])
    assert result.exit_code == 0, result.output
    shards = [tmp_path / f"s{i}" for i in range(2)]
    for i, folder in enumerate(shards):
        result = runner.invoke(app, [*base, "--shard", f"{i}/2", "--out", str(folder)])
        assert result.exit_code == 0, result.output
    merged = tmp_path / "merged"
    result = runner.invoke(app, ["merge", *map(str, shards), "--out", str(merged)])
    assert result.exit_code == 0, result.output
    assert _files(one) == _files(two) == _files(merged)
    for bad, message in (
        (["--shard", "2/2"], "expected i/N"),
        (["--executor", "spark"], "unknown executor"),
        (["--maps", "2", "--from-tables", str(tmp_path)], "apply to synthetic builds"),
    ):
        result = runner.invoke(app, [*base, *bad, "--out", str(tmp_path / "bad")])
        assert result.exit_code == 1 and message in result.output, result.output
    result = runner.invoke(app, ["merge", str(shards[0]), "--out", str(tmp_path / "bad")])
    assert result.exit_code == 1 and "missing shard 1/2" in result.output


def test_shard_and_preset_helpers() -> None:
    assert parse_shard("0/1") == (0, 1) and parse_shard(" 3/4 ") == (3, 4)
    for bad in ("4/4", "-1/2", "1", "a/b", "0/0"):
        with pytest.raises(DatasetError, match="expected i/N"):
            parse_shard(bad)
    paper = scaled_preset(PRESETS["paper"], 100)
    assert (paper.metro_maps, paper.travel_maps) == (100, 100)
    assert (paper.metro_pairs, paper.travel_pairs) == (5000, 5000)
    assert paper.map_style == "realistic" and paper.alpha == PRESETS["paper"].alpha
    assert scaled_preset(PRESETS["mini"], 1).metro_pairs == 8
    with pytest.raises(DatasetError):
        scaled_preset(PRESETS["mini"], 0)
    assert executor_factory("local") is local_executor
    assert executor_factory("Ray") is ray_executor
    with pytest.raises(MaptabError, match="choose one of local, ray"):
        executor_factory("dask")


@pytest.mark.slow
def test_rendered_build_in_shards_and_workers(tmp_path: Path) -> None:
    from maptab.render.images import DatasetImager

    small = Preset("small", 2, 2, 8, 8, q_min=2, sizes=("small",), map_style="realistic")
    plain = tmp_path / "plain"
    build_benchmark(plain, preset=small, seed=2, renderer=DatasetImager(), workers=1)
    jobs = tmp_path / "jobs"
    build_benchmark(jobs, preset=small, seed=2, renderer=DatasetImager(), workers=2)
    folders = []
    for i in range(2):
        folders.append(tmp_path / f"s{i}")
        build_benchmark(folders[-1], preset=small, seed=2, renderer=DatasetImager(), shard=(i, 2))
    merge_shards(folders, tmp_path / "merged")
    files = _files(plain)
    assert sum(name.endswith("image.png") for name in files) == 4
    assert _files(jobs) == files == _files(tmp_path / "merged")


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="needs Ray: pip install 'maptab[ray]'"
)
def test_ray_local_gives_the_same_bytes(
    serial: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # a local Ray, whatever the machine
    out = tmp_path / "ray"
    build_benchmark(
        out, preset=TINY, seed=11, workers=2, report_totals=True, executors=ray_executor
    )
    assert _files(out) == _files(serial)


@pytest.fixture(scope="module")
def own_maps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``--from-tables`` folder: TINY's seven maps as tables, one with its own image."""
    root = tmp_path_factory.mktemp("own")
    for net in synthesize_maps(TINY, 3):
        folder = root / "city" / net.map_id
        folder.mkdir(parents=True)
        s = net.scenario
        tables.write_csv(tables.edge_rows(net), folder / "Edge_tab.csv", tables.EDGE_COLUMNS[s])
        tables.write_csv(
            tables.vertex_rows(net), folder / "Vertex_tab.csv", tables.VERTEX_COLUMNS[s]
        )
    (root / "city" / "metro-001" / "image.png").write_bytes(b"\x89PNG supplied image")
    return root


@pytest.fixture(scope="module")
def own_serial(own_maps: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("own-serial") / "ds"
    build_from_tables(own_maps, out, seed=5, pairs_per_map=6, workers=1, report_totals=True)
    return out


def test_from_tables_goes_through_the_executor_seam(
    own_maps: Path, own_serial: Path, tmp_path: Path
) -> None:
    made: list[int] = []

    def threads(workers: int, initializer: Any = None, initargs: tuple[Any, ...] = ()) -> Executor:
        made.append(workers)
        return ThreadPoolExecutor(workers, initializer=initializer, initargs=initargs)

    out = tmp_path / "threads"
    build_from_tables(
        own_maps, out, seed=5, pairs_per_map=6, workers=3, executors=threads, report_totals=True
    )
    assert made == [3]
    files = _files(own_serial)
    assert files["maps/city/metro-001/image.png"] == b"\x89PNG supplied image"
    assert _files(out) == files


def test_cli_from_tables_jobs_and_refusals(own_maps: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    base = ["build", "--from-tables", str(own_maps), "--pairs-per-map", "6", "--no-render"]
    one, two = tmp_path / "one", tmp_path / "two"
    result = runner.invoke(app, [*base, "--jobs", "1", "--out", str(one)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, [*base, "--jobs", "2", "--executor", "local", "--out", str(two)])
    assert result.exit_code == 0, result.output
    assert _files(one) == _files(two)
    for bad, message in (
        ([*base, "--shard", "0/2"], "--maps and --shard apply to synthetic builds"),
        ([*base, "--executor", "spark"], "unknown executor"),
        (
            ["build", "--from-maptab", str(own_maps), "--executor", "ray"],
            "--executor applies to synthetic and --from-tables builds",
        ),
        (
            ["build", "--from-reasonmap", str(own_maps), "--executor", "ray"],
            "drop it with --from-maptab or --from-reasonmap",
        ),
    ):
        result = runner.invoke(app, [*bad, "--out", str(tmp_path / "bad")])
        assert result.exit_code == 1 and message in result.output, result.output
    assert not (tmp_path / "bad").exists()


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("ray") is None, reason="needs Ray: pip install 'maptab[ray]'"
)
def test_cli_from_tables_on_ray_gives_the_same_bytes(
    own_maps: Path, own_serial: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)  # a local Ray, whatever the machine
    made: list[int] = []

    def on_ray(workers: int, initializer: Any = None, initargs: tuple[Any, ...] = ()) -> Executor:
        made.append(workers)
        return ray_executor(workers, initializer, initargs)

    monkeypatch.setitem(executors.EXECUTORS, "ray", on_ray)
    out = tmp_path / "ray"
    result = CliRunner().invoke(
        app,
        [
            "build", "--from-tables", str(own_maps), "--pairs-per-map", "6", "--seed", "5",
            "--no-render", "--report-totals", "--executor", "ray", "--jobs", "2",
            "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert made == [2]  # the maps were built by Ray tasks
    assert _files(out) == _files(own_serial)
