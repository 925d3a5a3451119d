"""The build pipeline end to end: counts, determinism, and gold labels re-derived by brute force."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import pytest

from maptab.core.costs import Weights
from maptab.core.schema import RP_BY_NAME, RP_CATEGORIES, RP_STYLES
from maptab.core.solver import brute_force_routes
from maptab.core.tables import derive_mix
from maptab.executors import local_executor
from maptab.generate.pipeline import PRESETS, Preset, build_benchmark
from maptab.io.dataset import Dataset

# small maps only, so brute-force enumeration of simple paths stays instant
TINY = Preset("tiny", 3, 3, 18, 18, q_min=2, sizes=("small",), reasonmap_per_map=4)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny")
    build_benchmark(out, preset=TINY, seed=7, report_totals=True)
    return out


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_same_seed_gives_byte_identical_dataset(tiny: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_benchmark(again, preset=TINY, seed=7, report_totals=True)
    assert _files(again) == _files(tiny)
    other = tmp_path / "other"
    build_benchmark(other, preset=TINY, seed=8, report_totals=True)
    assert _files(other)["rp.jsonl"] != _files(tiny)["rp.jsonl"]


@pytest.mark.slow
def test_parallel_build_is_identical(tiny: Path, tmp_path: Path) -> None:
    made: list[int] = []

    def executors(workers: int, initializer: Any = None, initargs: tuple = ()) -> Executor:
        made.append(workers)
        return local_executor(workers, initializer, initargs)

    parallel = tmp_path / "parallel"
    build_benchmark(
        parallel, preset=TINY, seed=7, report_totals=True, workers=2, executors=executors
    )
    assert made == [2]  # the executor given computed the queries
    assert _files(parallel) == _files(tiny)


def test_manifest_hashes_verify_and_counts_match(tiny: Path) -> None:
    ds = Dataset(tiny)
    assert ds.verify() == []
    counts = ds.manifest["counts"]
    assert counts == {
        "maps": 6,
        "rp": len(ds.rp()),
        "qa": len(ds.qa()),
        "reasonmap": len(ds.reasonmap()),
    }
    assert counts["qa"] == 6 * 12
    assert counts["reasonmap"] == 3 * 4


def test_every_od_pair_has_the_twelve_categories(tiny: Path) -> None:
    ds = Dataset(tiny)
    by_pair: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for q in ds.rp():
        by_pair[(q.map_id, q.source, q.target)].append(q.category)
    assert by_pair
    for cats in by_pair.values():
        assert cats == [c.name for c in RP_CATEGORIES]
    per_scenario = Counter(ds.maps[m].scenario for m, _, _ in by_pair)
    # Algorithm 1 hands out exactly Q pairs per scenario when the maps can hold them
    assert per_scenario == {"metromap": TINY.metro_pairs, "travelmap": TINY.travel_pairs}


def test_styles_cycle_and_weights_are_normalised(tiny: Path) -> None:
    ds = Dataset(tiny)
    for scenario in ("metromap", "travelmap"):
        for cat in RP_CATEGORIES:
            styles = [q.style for q in ds.rp() if q.category == cat.name and q.scenario == scenario]
            assert styles == [RP_STYLES[i % 5] for i in range(len(styles))]
    for q in ds.rp():
        cat = RP_BY_NAME[q.category]
        if cat.criteria_free:
            assert q.weights is None and q.totals is None and q.repetition is None
            continue
        assert sum(q.weights) == pytest.approx(1.0, abs=1e-12)
        assert all(round(w, 6) == w for w in q.weights)
        assert [w > 0 for w in q.weights] == [c in cat.criteria for c in Weights.__annotations__]
        assert q.repetition in ("FR", "PR", "NR")
        assert q.report_totals


def test_qa_has_one_query_per_type_of_its_scenario(tiny: Path) -> None:
    ds = Dataset(tiny)
    per_map: dict[str, list[int]] = defaultdict(list)
    for q in ds.qa():
        per_map[q.map_id].append(q.type)
    for map_id, types in per_map.items():
        first = 1 if ds.maps[map_id].scenario == "metromap" else 13
        assert types == list(range(first, first + 12))


def test_split_follows_the_maps(tiny: Path) -> None:
    ds = Dataset(tiny)
    splits = {m.id: m.split for m in ds.maps.values()}
    assert sorted(splits.values()) == ["test", "test", "train", "train", "train", "train"]
    for q in [*ds.rp(), *ds.qa(), *ds.reasonmap()]:
        assert q.split == splits[q.map_id]


# the brute-force reference tries every line on every edge of every simple path: a pair whose
# paths run along a long shared trunk has too many assignments for it (2^19 on one path here)
MAX_ASSIGNMENTS = 100_000


def _assignments(net: Any, source: str, target: str) -> int:
    """Line assignments the reference would enumerate for this pair: over every simple path,
    the product of the lines on each of its edges."""
    lines: dict[str, dict[str, int]] = defaultdict(Counter)
    for e in net.edges:
        lines[e.u][e.v] += 1
        lines[e.v][e.u] += 1
    s, t = net.resolve(source), net.resolve(target)
    total = 0

    def walk(path: list[str], product: int) -> None:
        nonlocal total
        if path[-1] == t:
            total += product
            return
        for v, k in lines[path[-1]].items():
            if v not in path and total <= MAX_ASSIGNMENTS:
                walk([*path, v], product * k)

    walk([s], 1)
    return total


def test_gold_labels_equal_brute_force(tiny: Path) -> None:
    """Every gold label of the tiny build, re-derived by enumerating all simple paths and all
    line assignments (pairs beyond :data:`MAX_ASSIGNMENTS` left to the solver's property
    tests: at most one pair in ten)."""
    ds = Dataset(tiny)
    checked = skipped = 0
    for q in ds.rp():
        net = ds.network(q.map_id)
        if _assignments(net, q.source, q.target) > MAX_ASSIGNMENTS:
            skipped += 1
            continue
        cat = RP_BY_NAME[q.category]
        if cat.items == "vertex":
            net = net.with_attributes(vertices=derive_mix(net))
        weights = None if cat.criteria_free else Weights(*q.weights)
        ref = brute_force_routes(net, q.source, q.target, weights, items=cat.items)
        assert q.routes == [r.format() for r in ref], q.id
        assert q.route_vertex_numbers == [r.vertex_count for r in ref]
        assert q.transfer_vertex_numbers == [r.transfer_count for r in ref]
        assert q.route_count == len(ref) and q.truncated is False
        checked += 1
    assert checked + skipped == len(ds.rp()) and skipped <= checked / 9


def test_shown_tables_are_permutations(tiny: Path) -> None:
    ds = Dataset(tiny)
    for q in ds.rp():
        net = ds.network(q.map_id)
        for part, order in q.tables.items():
            n = len(net.edges) if part == "edges" else len(net.vertices)
            assert sorted(order) == list(range(n))


def test_unknown_preset_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown preset 'huge'"):
        build_benchmark(tmp_path, preset="huge")


def test_paper_preset_matches_the_paper_scale() -> None:
    paper = PRESETS["paper"]
    assert (paper.metro_maps, paper.travel_maps) == (160, 168)
    assert (paper.metro_pairs + paper.travel_pairs) * len(RP_CATEGORIES) == 196_800
    assert (paper.metro_maps + paper.travel_maps) * 12 == 3_936


def test_build_cli_writes_a_dataset(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from maptab.cli import app

    out = tmp_path / "ds"
    result = CliRunner().invoke(
        app, ["build", "--preset", "mini", "--no-render", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["rp"] == 12 * 48
    bad = CliRunner().invoke(app, ["build", "--preset", "nope", "--out", str(out)])
    assert bad.exit_code == 1 and "unknown preset" in bad.output


HASH_SEED_SCRIPT = """
import hashlib, json, sys, tempfile
from pathlib import Path
from maptab.generate.pipeline import Preset, build_benchmark
from maptab.core.network import Network
from maptab.render import layout_network

tiny = Preset("tiny", 2, 2, 8, 8, q_min=2, sizes=("small",), reasonmap_per_map=4)
out = Path(tempfile.mkdtemp()) / "ds"
build_benchmark(out, preset=tiny, seed=3)
digest = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.glob("*.jsonl"))}
net = Network.from_lines({"A": list("abcdefg"), "B": list("xcyzf"), "C": list("ghijkg")})
digest["layout"] = json.dumps(sorted(layout_network(net).items()))
print(json.dumps(digest, sort_keys=True))
"""


@pytest.mark.slow
def test_output_does_not_depend_on_the_hash_seed() -> None:
    """Set iteration order changes with PYTHONHASHSEED; nothing we write may follow it."""
    import os
    import subprocess
    import sys

    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", HASH_SEED_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]


def test_mean_model_build_states_its_rules_and_labels_equal_brute_force(tmp_path: Path) -> None:
    small = Preset("small", 1, 1, 6, 6, q_min=2, sizes=("small",))
    build_benchmark(tmp_path, preset=small, seed=5, cost_model="mean")
    ds = Dataset(tmp_path)
    criteria = [q for q in ds.rp() if not RP_BY_NAME[q.category].criteria_free]
    assert criteria
    for q in criteria:
        assert q.cost_model == "mean"
        assert "at most 2 more" in q.question
        cat = RP_BY_NAME[q.category]
        net = ds.network(q.map_id)
        if cat.items == "vertex":
            net = net.with_attributes(vertices=derive_mix(net))
        ref = brute_force_routes(
            net, q.source, q.target, Weights(*q.weights), items=cat.items, model="mean"
        )
        assert q.routes == [r.format() for r in ref], q.id
