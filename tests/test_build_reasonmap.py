"""ReasonMap reference routes, question sampling and the dataset build (SPEC 14)."""

from __future__ import annotations

import json
from itertools import pairwise, product
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.network import Edge, Network, Vertex
from maptab.core.planning import PlanError, RoutePlanner, plan_routes
from maptab.core.schema import RMSegment
from maptab.generate.from_reasonmap import (
    question_difficulty,
    reasonmap_questions,
    scaled_quota,
)

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
STATIONS = SHARED / "reasonmap-stations"


# --------------------------------------------------------------------------- brute force
def _simple_paths(adj: dict[str, set[str]], a: str, b: str) -> list[list[str]]:
    out, path = [], [a]

    def walk(s: str) -> None:
        if s == b:
            out.append(list(path))
            return
        for n in sorted(adj[s]):
            if n not in path:
                path.append(n)
                walk(n)
                path.pop()

    walk(a)
    return out


def brute_force(net: Network, a: str, b: str, k: int = 3, extra: int = 1):
    """Every simple station path with every line assignment of its edges; its maximal
    same-line runs are the segments (lines pairwise distinct). Best route per line sequence,
    ranked by (transfers, stops, line order, stations); returns (sequence, transfers, stops)."""
    rank = {line: i for i, line in enumerate(net.line_names)}
    best: dict[tuple[str, ...], tuple] = {}
    for path in _simple_paths(net.simple_graph(), a, b):
        options = [sorted({e.line for e in net.edges_between(u, v)}) for u, v in pairwise(path)]
        for assign in product(*options):
            seq = [assign[0]]
            for line in assign[1:]:
                if line != seq[-1]:
                    seq.append(line)
            if len(set(seq)) != len(seq):
                continue
            key = (len(seq) - 1, len(path) - 1, tuple(rank[x] for x in seq), tuple(path))
            if tuple(seq) not in best or key < best[tuple(seq)]:
                best[tuple(seq)] = key
    if not best:
        return []
    ranked = sorted(best.items(), key=lambda kv: kv[1])
    fewest = ranked[0][1][0]
    ranked = [kv for kv in ranked if kv[1][0] <= fewest + extra][:k]
    return [(seq, key[0], key[1]) for seq, key in ranked]


def _check_route(net: Network, a: str, b: str, route: list[RMSegment]) -> tuple:
    """Validate a planned route against the graph; returns (sequence, transfers, stops)."""
    assert net.resolve(route[0].departure_stop) == a
    assert net.resolve(route[-1].arrival_stop) == b
    stations = [a]
    for prev, seg in zip([None, *route], route, strict=False):
        if prev is not None:
            assert prev.arrival_stop == seg.departure_stop
            assert prev.route_name != seg.route_name
        ride = [seg.departure_stop, *seg.via_stops, seg.arrival_stop]
        assert seg.num_via_stops == len(seg.via_stops)
        for u, v in pairwise(ride):
            between = net.edges_between(net.resolve(u), net.resolve(v))
            assert any(e.line == seg.route_name for e in between), (u, v)
        stations.extend(ride[1:])
    assert len(set(stations)) == len(stations), "route visits a station twice"
    lines = tuple(s.route_name for s in route)
    assert len(set(lines)) == len(lines)
    return lines, len(route) - 1, len(stations) - 1


STATIONS_POOL = list("ABCDEFGHJ")


@st.composite
def networks(draw):
    """Small metromaps with path, loop and branched (tree) lines, shared tracks allowed."""
    n_lines = draw(st.integers(1, 5))
    edges: list[Edge] = []
    for i in range(n_lines):
        line = f"L{i}"
        kind = draw(st.sampled_from(["path", "loop", "branch"]))
        size = draw(st.integers(3 if kind != "path" else 2, 4))
        seq = draw(st.permutations(STATIONS_POOL).map(lambda p, n=size: list(p[:n])))
        pairs = list(pairwise(seq))
        if kind == "loop":
            pairs.append((seq[-1], seq[0]))
        elif kind == "branch":
            spare = [s for s in STATIONS_POOL if s not in seq]
            root = draw(st.sampled_from(seq[1:-1] or seq))
            pairs.append((root, spare[0]))
        edges.extend(Edge(u, v, line) for u, v in pairs)
    lines_of: dict[str, list[str]] = {}
    for e in edges:
        for s in (e.u, e.v):
            lines_of.setdefault(s, [])
            if e.line not in lines_of[s]:
                lines_of[s].append(e.line)
    vertices = {s: Vertex(s, tuple(ls)) for s, ls in sorted(lines_of.items())}
    return Network("metromap", vertices, edges, map_id="test/net")


@settings(max_examples=examples(150), deadline=None)
@given(networks(), st.data())
def test_planner_matches_brute_force(net, data):
    a = data.draw(st.sampled_from(net.stations))
    b = data.draw(st.sampled_from([s for s in net.stations if s != a]))
    expected = brute_force(net, a, b)
    if not expected:
        with pytest.raises(PlanError):
            plan_routes(net, a, b)
        return
    routes = plan_routes(net, a, b)
    got = [_check_route(net, a, b, r) for r in routes]
    assert got == expected


def test_loop_line_rides_the_short_way_and_alternatives_are_distinct():
    net = Network.from_lines(
        {
            "Circle": ["A", "B", "C", "D", "E", "F", "A"],
            "Cross": ["A", "X", "D"],
            "Spur": ["D", "Y"],
        }
    )
    routes = plan_routes(net, "B", "Y")
    assert [s.route_name for s in routes[0]] == ["Circle", "Spur"]
    assert routes[0][0].via_stops == ["C"]
    assert question_difficulty(routes) == "medium"
    seqs = [tuple(s.route_name for s in r) for r in routes]
    assert len(set(seqs)) == len(seqs) == 2  # Circle+Spur, Circle+Cross+Spur
    assert seqs[1] == ("Circle", "Cross", "Spur")


def test_branched_line_rides_through_the_branch_point():
    # Line B: main line L-M-N-R, branch from M: M-S-J (as Rome's Line B after the split)
    edges = [
        Edge(u, v, "B") for u, v in [("L", "M"), ("M", "N"), ("N", "R"), ("M", "S"), ("S", "J")]
    ]
    vertices = {s: Vertex(s, ("B",)) for s in "LMNRSJ"}
    net = Network("metromap", vertices, edges, map_id="x/y")
    (route,) = plan_routes(net, "R", "J")
    assert [(s.route_name, s.via_stops) for s in route] == [("B", ["N", "M", "S"])]
    assert route[0].num_via_stops == 3


def test_plan_errors_are_clear():
    net = Network.from_lines({"L1": ["A", "B"], "L2": ["C", "D"]}, map_id="m")
    with pytest.raises(PlanError, match="no route"):
        plan_routes(net, "A", "D")
    with pytest.raises(PlanError, match="unknown station 'Z'"):
        plan_routes(net, "A", "Z")
    with pytest.raises(PlanError, match="both"):
        plan_routes(net, "A", "A")


def test_question_difficulty_levels():
    seg = {"route_name": "L", "departure_stop": "A", "arrival_stop": "B"}
    assert question_difficulty([[seg]]) == "easy"
    assert question_difficulty([[seg] * 2, [seg]]) == "medium"
    assert question_difficulty([[seg] * 4]) == "hard"
    with pytest.raises(PlanError):
        question_difficulty([])


def test_scaled_quota():
    assert scaled_quota((20, 15, 5), 40) == (20, 15, 5)
    assert scaled_quota((20, 15, 5), 8) == (4, 3, 1)
    assert scaled_quota((20, 15, 5), 10) == (5, 4, 1)
    assert sum(scaled_quota((20, 15, 5), 7)) == 7


def _grid_city() -> Network:
    """Four lines in a ring of transfers, plus a spur: all three levels are available."""
    return Network.from_lines(
        {
            "Red": ["R1", "R2", "R3", "X1", "R4", "R5"],
            "Blue": ["B1", "X1", "B2", "B3", "X2", "B4"],
            "Green": ["G1", "X2", "G2", "G3", "X3", "G4", "G5"],
            "Gold": ["Y1", "X3", "Y2", "Y3", "Y4"],
        },
        map_id="testland/ringville",
    )


def test_questions_content_and_quota():
    net = _grid_city()
    qs = reasonmap_questions(net, map_difficulty="medium", split="test", rng_seed=3, per_map=8)
    assert [q.id for q in qs] == [f"testland/ringville/rm-{i:04d}" for i in range(1, 9)]
    levels = [q.question_difficulty for q in qs]
    assert (levels.count("easy"), levels.count("medium"), levels.count("hard")) == (4, 3, 1)
    assert [q.long_template for q in qs] == ["num_via", "via_list"] * 4
    pairs = {frozenset((q.station_1, q.station_2)) for q in qs}
    assert len(pairs) == len(qs)
    for q in qs:
        assert q.split == "test" and q.map_difficulty == "medium"
        assert q.station_2 not in net.neighbours(q.station_1)
        for text in (q.question_short, q.question_long):
            assert q.station_1 in text and q.station_2 in text and "Ringville" in text
            assert "Route Name:" in text and "Departure Stop:" in text and "Arrival Stop:" in text
        assert "Via Stops" not in q.question_short
        if q.long_template == "num_via":
            assert "Number of Via Stops:" in q.question_long
        else:
            assert "Via Stops:" in q.question_long and "Number of" not in q.question_long
        routes = [[RMSegment(**s) for s in r] for r in q.routes]
        for r in routes:
            _check_route(net, q.station_1, q.station_2, r)
        first = routes[0]
        assert q.question_difficulty == ["easy", "medium", "hard"][min(len(first) - 1, 2)]
        assert RoutePlanner(net).min_transfers(q.station_1, q.station_2) == len(first) - 1


def test_questions_fallback_fills_from_other_levels():
    net = Network.from_lines({"Only": [f"S{i}" for i in range(12)]}, map_id="x/line")
    qs = reasonmap_questions(net, map_difficulty="easy", split="train", rng_seed=0, per_map=10)
    assert len(qs) == 10 and {q.question_difficulty for q in qs} == {"easy"}


def test_questions_are_deterministic():
    net = _grid_city()
    one = reasonmap_questions(net, map_difficulty="easy", split="train", rng_seed=7, per_map=8)
    two = reasonmap_questions(net, map_difficulty="easy", split="train", rng_seed=7, per_map=8)
    other = reasonmap_questions(net, map_difficulty="easy", split="train", rng_seed=8, per_map=8)
    assert [q.to_dict() for q in one] == [q.to_dict() for q in two]
    assert [q.to_dict() for q in one] != [q.to_dict() for q in other]


# --------------------------------------------------------------------------- real cities
def _need_stations() -> None:
    if not STATIONS.is_dir():
        pytest.skip(f"shared ReasonMap data not found at {STATIONS}")


@pytest.mark.conformance
def test_quota_on_a_real_city():
    _need_stations()
    from maptab.io.metadata import load_reasonmap

    net = load_reasonmap(STATIONS / "china" / "beijing.json", map_id="china/beijing")
    qs = reasonmap_questions(net, map_difficulty="hard", split="test", rng_seed=0)
    levels = [q.question_difficulty for q in qs]
    assert (levels.count("easy"), levels.count("medium"), levels.count("hard")) == (20, 15, 5)
    for q in qs[:10]:
        for r in q.routes:
            _check_route(
                net, net.resolve(q.station_1), net.resolve(q.station_2), [RMSegment(**s) for s in r]
            )


@pytest.mark.conformance
def test_rome_branch_is_respected():
    _need_stations()
    from maptab.io.metadata import load_reasonmap

    net = load_reasonmap(STATIONS / "italy" / "rome.json", map_id="italy/rome")
    (route,) = plan_routes(net, "Rebibbia Station", "Jonio Station")
    assert [s.route_name for s in route] == ["Line B"]
    assert "Bologna Station" in route[0].via_stops
    assert "S. Agnese Annibaliano Station" in route[0].via_stops


@pytest.mark.conformance
def test_build_reasonmap_dataset_is_deterministic(tmp_path):
    _need_stations()
    from maptab.generate.from_reasonmap import build_reasonmap_dataset
    from maptab.io.dataset import Dataset

    src = tmp_path / "stations"
    for rel in (
        "italy/rome.json",
        "china/jinan.json",
        "hungary/budapest.json",
        "america/miami.json",
    ):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_bytes((STATIONS / rel).read_bytes())
    images = SHARED / "reasonmap-maps"
    kw = dict(images_dir=images, seed=5, per_map=12)
    m1 = build_reasonmap_dataset(src, tmp_path / "a", **kw)
    build_reasonmap_dataset(src, tmp_path / "b", **kw)
    a = (tmp_path / "a" / "reasonmap.jsonl").read_bytes()
    assert a == (tmp_path / "b" / "reasonmap.jsonl").read_bytes()
    assert (tmp_path / "a" / "manifest.json").read_bytes() == (
        tmp_path / "b" / "manifest.json"
    ).read_bytes()
    assert m1["counts"]["reasonmap"] == 48 and m1["counts"]["maps"] == 4
    ds = Dataset(tmp_path / "a")
    assert set(ds.maps) == {"italy/rome", "china/jinan", "hungary/budapest", "america/miami"}
    assert ds.image_path("italy/rome") is not None  # real image copied
    assert ds.image_path("america/miami") is not None
    assert ds.image_path("china/jinan") is not None
    assert {m.split for m in ds.maps.values()} <= {"train", "test"}
    ids = [q.id for q in ds.reasonmap()]
    assert len(ids) == len(set(ids))
    first = json.loads(a.splitlines()[0])
    assert set(first) >= {
        "id",
        "map_id",
        "station_1",
        "station_2",
        "question_short",
        "question_long",
        "long_template",
        "question_difficulty",
        "map_difficulty",
        "routes",
    }


# --------------------------------------------------------------------------- real-city inputs
def _stations_dir(root: Path, cities: dict[str, dict[str, list[str]]]) -> Path:
    for map_id, lines in cities.items():
        path = root / f"{map_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(lines, ensure_ascii=False), encoding="utf-8")
    return root


def test_homonymous_stations_build_with_one_warning_each(tmp_path):
    from maptab.generate.from_reasonmap import build_reasonmap_dataset
    from maptab.io.dataset import Dataset
    from reasonmap_fixtures import AV7_BROOKLYN, AV7_MANHATTAN, NYC

    src = _stations_dir(tmp_path / "st", {"america/nyc_subset": NYC})
    warnings: list[str] = []
    manifest = build_reasonmap_dataset(src, tmp_path / "ds", per_map=40, warn=warnings.append)
    assert len(warnings) == 2 and "'7 Av Station' 2 times" in warnings[0]
    assert manifest["options"]["homonyms"] == {
        "america/nyc_subset": ["7 Av Station", "36 St Station"]
    }
    assert manifest["counts"]["reasonmap"] == 40
    ds = Dataset(tmp_path / "ds")
    net = ds.network("america/nyc_subset")
    assert {AV7_MANHATTAN, AV7_BROOKLYN} <= {net.label(s) for s in net.vertices}
    for q in ds.reasonmap():
        a, b = net.resolve(q.station_1), net.resolve(q.station_2)
        assert a is not None and b is not None and a != b
        for r in q.routes:
            _check_route(net, a, b, [RMSegment(**s) for s in r])


def test_cli_prints_homonym_warnings_and_succeeds(tmp_path):
    from typer.testing import CliRunner

    from maptab.cli import app
    from reasonmap_fixtures import NYC

    src = _stations_dir(tmp_path / "st", {"america/nyc_subset": NYC})
    args = ["build", "--from-reasonmap", str(src), "--out", str(tmp_path / "ds"), "--no-render"]
    result = CliRunner().invoke(app, [*args, "--per-map", "6"])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("warning:")]
    assert len(lines) == 2
    assert lines[1].startswith("warning: america/nyc_subset: line 'R' lists '36 St Station' 2")


def test_all_missing_branch_splits_are_named_in_one_error(tmp_path):
    from maptab.generate.from_reasonmap import build_reasonmap_dataset
    from maptab.io.metadata import MissingBranchSplits

    branched = ["A", "B (Branch-starting Station)", "C", "D", "E"]
    src = _stations_dir(
        tmp_path / "st",
        {
            "land/one": {"L1": branched, "L2": ["A", "X"], "L3": ["X", *branched[1:]]},
            "land/two": {"Main": ["P", "Q"]},
            "sea/three": {"K": ["Z (Branch-starting Station)", "Y", "W", "V"]},
        },
    )
    with pytest.raises(MissingBranchSplits) as info:
        build_reasonmap_dataset(src, tmp_path / "ds")
    assert info.value.missing == {"land/one/L1": "B", "land/one/L3": "B", "sea/three/K": "Z"}
    message = str(info.value)
    assert "\n" not in message and "branched 3 lines are missing a split" in message
    splits = tmp_path / "splits.json"
    splits.write_text(
        json.dumps({"land/one/L1": "D", "land/one/L3": "D", "sea/three/K": "W"}), "utf-8"
    )
    manifest = build_reasonmap_dataset(src, tmp_path / "ds", branch_splits=splits, per_map=4)
    assert manifest["counts"]["maps"] == 3


@pytest.mark.slow
@pytest.mark.conformance
def test_all_real_cities_build_with_sane_question_counts(tmp_path):
    """Every one of the 25 shared cities imports (no homonyms in them: the NYC case is a
    fixture), yields 40 questions, and misses the 20:15:5 quota only where the city has
    fewer eligible pairs of that level than asked (then all of them are used)."""
    _need_stations()
    from maptab.generate.from_reasonmap import LEVELS, build_reasonmap_dataset
    from maptab.io.dataset import Dataset

    warnings: list[str] = []
    manifest = build_reasonmap_dataset(STATIONS, tmp_path / "ds", warn=warnings.append)
    assert manifest["counts"] == {"maps": 25, "qa": 0, "reasonmap": 1000, "rp": 0}
    assert warnings == [] and manifest["options"]["homonyms"] == {}
    ds = Dataset(tmp_path / "ds")
    by_map: dict[str, list] = {}
    for q in ds.reasonmap():
        by_map.setdefault(q.map_id, []).append(q)
    assert len(by_map) == 25
    for map_id, qs in by_map.items():
        net = ds.network(map_id)
        planner = RoutePlanner(net)
        assert len(qs) == 40, map_id
        pairs = {frozenset((q.station_1, q.station_2)) for q in qs}
        assert len(pairs) == 40, map_id
        counts = {level: 0 for level in LEVELS}
        for q in qs:
            counts[q.question_difficulty] += 1
        for level, want in zip(LEVELS, (20, 15, 5), strict=True):
            if counts[level] >= want:
                continue
            stations = net.stations
            eligible = sum(
                1
                for i, a in enumerate(stations)
                for b in stations[i + 1 :]
                if b not in net.neighbours(a)
                and (t := planner.min_transfers(a, b)) is not None
                and LEVELS[min(t, 2)] == level
            )
            assert eligible == counts[level], (map_id, level)
