"""``maptab build --from-tables``: a benchmark over a folder of the user's own MapTab tables."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter, deque
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maptab.cli.app import app
from maptab.core import tables
from maptab.core.schema import RP_CATEGORIES
from maptab.generate.owntables import OwnTablesError, build_from_tables
from maptab.generate.pipeline import PRESETS, synthesize_maps
from maptab.io.dataset import Dataset


def _write_map(folder: Path, net, mix: bool = True) -> None:
    folder.mkdir(parents=True)
    s = net.scenario
    tables.write_csv(tables.edge_rows(net), folder / "Edge_tab.csv", tables.EDGE_COLUMNS[s])
    tables.write_csv(tables.vertex_rows(net), folder / "Vertex_tab.csv", tables.VERTEX_COLUMNS[s])
    if mix:
        tables.write_csv(tables.mix_rows(net), folder / "Mix_tab.csv", tables.MIX_COLUMNS[s])


@pytest.fixture(scope="module")
def own(tmp_path_factory) -> Path:
    """A folder of six maps: the shipped example tables and four synthetic maps, nested ids."""
    root = tmp_path_factory.mktemp("own")
    for scenario in ("metromap", "travelmap"):
        edges, vertices = tables.example_tables(scenario)
        folder = root / "examples" / scenario
        folder.mkdir(parents=True)
        shutil.copyfile(edges, folder / "Edge_tab.csv")
        shutil.copyfile(vertices, folder / "Vertex_tab.csv")
    nets = synthesize_maps(PRESETS["mini"], 11)
    for net in nets[:2] + nets[3:5]:
        _write_map(root / net.map_id, net, mix=net.scenario == "metromap")
    return root


def _bfs_stations(net, source: str, target: str) -> int:
    """Stations on a fewest-stations route, by breadth-first search (brute force)."""
    near: dict[str, set[str]] = {}
    for e in net.edges:
        near.setdefault(e.u, set()).add(e.v)
        near.setdefault(e.v, set()).add(e.u)
    depth, queue = {source: 1}, deque([source])
    while queue:
        station = queue.popleft()
        for n in near[station]:
            if n not in depth:
                depth[n] = depth[station] + 1
                queue.append(n)
    return depth[target]


def _hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_own_maps_become_a_benchmark_with_exact_gold(own, tmp_path):
    manifest = build_from_tables(own, tmp_path / "ds", seed=4, pairs_per_map=4)
    ds = Dataset(tmp_path / "ds")
    assert sorted(ds.maps) == sorted(
        ["examples/metromap", "examples/travelmap", "metro-000", "metro-001"]
        + ["travel-000", "travel-001"]
    )
    assert {m.source for m in ds.maps.values()} == {"tables"}
    assert {m.split for m in ds.maps.values()} <= {"train", "test"}
    assert manifest["options"]["source"] == "tables"
    rp = ds.rp()
    # Algorithm 1 spreads 4 pairs per map over each scenario: 4 x 3 maps each
    pairs = {(q.map_id, q.source, q.target) for q in rp}
    assert len(pairs) == 4 * 6
    per_pair = Counter((q.map_id, q.source, q.target) for q in rp)
    assert set(per_pair.values()) == {len(RP_CATEGORIES)}
    # criteria-free gold (fewest stations) against a breadth-first search over Edge_tab rows
    free = {c.name for c in RP_CATEGORIES if c.criteria_free}
    for q in rp:
        if q.category in free:
            net = ds.network(q.map_id)
            assert set(q.route_vertex_numbers) == {_bfs_stations(net, q.source, q.target)}
            for route in q.routes:
                stations = [s.replace("(transfer)", "") for s in route.split("-")]
                assert stations[0] == q.source and stations[-1] == q.target
    qa = ds.qa()
    assert Counter(q.map_id for q in qa) == dict.fromkeys(ds.maps, 12)


def test_same_seed_same_files_other_seed_other_queries(own, tmp_path):
    build_from_tables(own, tmp_path / "a", seed=4, pairs_per_map=3)
    build_from_tables(own, tmp_path / "b", seed=4, pairs_per_map=3)
    build_from_tables(own, tmp_path / "c", seed=5, pairs_per_map=3)
    a, b, c = (_hashes(tmp_path / x) for x in "abc")
    assert a == b
    assert a["rp.jsonl"] != c["rp.jsonl"]


def test_supplied_images_are_copied_and_the_rest_drawn(own, tmp_path):
    from PIL import Image

    from maptab.render.images import DatasetImager

    folder = tmp_path / "own"
    shutil.copytree(own / "examples", folder / "examples")
    png = folder / "examples" / "metromap" / "image.png"
    Image.new("RGB", (7, 5), "white").save(png)
    build_from_tables(folder, tmp_path / "ds", renderer=DatasetImager(), pairs_per_map=2)
    ds = Dataset(tmp_path / "ds")
    copied = ds.image_path("examples/metromap")
    drawn = ds.image_path("examples/travelmap")
    assert copied is not None and copied.read_bytes() == png.read_bytes()
    assert drawn is not None and Image.open(drawn).size[0] > 100


def _bad(tmp_path: Path) -> Path:
    root = tmp_path / "bad"
    edges, vertices = tables.example_tables("metromap")
    folder = root / "city"
    folder.mkdir(parents=True)
    shutil.copyfile(edges, folder / "Edge_tab.csv")
    shutil.copyfile(vertices, folder / "Vertex_tab.csv")
    return root


@pytest.mark.parametrize(
    "spoil, expected",
    [
        (lambda f: (f / "Vertex_tab.csv").unlink(), "no Vertex_tab.csv"),
        (
            lambda f: (f / "Edge_tab.csv").write_text(
                (f / "Edge_tab.csv").read_text("utf-8-sig").replace("2.15", "fast"), "utf-8"
            ),
            "Edge_tab.csv:3: Time:",
        ),
        (lambda f: shutil.copyfile(f / "Edge_tab.csv", f / "Edge_tab.json"), "keep one"),
        (
            lambda f: (f / "Mix_tab.csv").write_text(
                (f / "Vertex_tab.csv").read_text("utf-8-sig"), "utf-8"
            ),
            "Mix_tab.csv:",
        ),
        (lambda f: shutil.move(f / "Edge_tab.csv", f.parent / "Edge_tab.csv"), "sub-folder"),
    ],
)
def test_bad_input_is_one_line_naming_file_row_and_field(tmp_path, spoil, expected):
    root = _bad(tmp_path)
    spoil(root / "city")
    with pytest.raises(OwnTablesError) as err:
        build_from_tables(root, tmp_path / "ds")
    assert expected in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "ds").exists()
    result = CliRunner().invoke(
        app, ["build", "--from-tables", str(root), "--out", str(tmp_path / "ds"), "--no-render"]
    )
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert expected in " ".join(result.output.split())


def test_mix_tab_that_matches_is_accepted_and_a_wrong_value_is_located(tmp_path):
    root = _bad(tmp_path)
    net = tables.read_network(root / "city" / "Edge_tab.csv", root / "city" / "Vertex_tab.csv")
    rows = tables.mix_rows(net)
    tables.write_csv(rows, root / "city" / "Mix_tab.csv", tables.MIX_COLUMNS["metromap"])
    build_from_tables(root, tmp_path / "ok", pairs_per_map=2)
    rows[2]["Price"] = rows[2]["Price"] + 1
    tables.write_csv(rows, root / "city" / "Mix_tab.csv", tables.MIX_COLUMNS["metromap"])
    with pytest.raises(OwnTablesError, match=r"Mix_tab.csv:4: Price: "):
        build_from_tables(root, tmp_path / "ds")


def test_cli_builds_runs_and_scores_own_maps(own, tmp_path):
    runner = CliRunner()
    ds, run = tmp_path / "ds", tmp_path / "run"
    args = ["build", "--from-tables", str(own), "--out", str(ds), "--no-render"]
    result = runner.invoke(app, [*args, "--pairs-per-map", "2"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        app, ["run", str(ds), "--model", "oracle", "--out", str(run), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["score", str(run), "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    assert summary["rp"]["overall"]["ema"]["mean"] == 1.0
    assert summary["counts"]["scored"]["rp"] == 2 * 6 * len(RP_CATEGORIES)
