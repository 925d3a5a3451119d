"""Layout of coordinate-less networks, crossing counts and polyline geometry."""

from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.network import Network
from maptab.render import check_legibility, layout_network, layout_quality, render_map
from maptab.render.geometry import octilinear_route, offset_polyline, segments_cross
from maptab.render.layout import count_crossings
from samplenets import sample_metro

coord = st.integers(-6, 6).map(float)
point = st.tuples(coord, coord)
segment = st.tuples(point, point).filter(lambda s: s[0] != s[1])


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(segment, max_size=12))
def test_count_crossings_matches_brute_force(segs):
    expected = sum(
        1
        for (a, b), (c, d) in combinations(segs, 2)
        if not ({a, b} & {c, d}) and segments_cross(a, b, c, d)
    )
    assert count_crossings(segs) == expected


@settings(max_examples=examples(80), deadline=None)
@given(point, point)
def test_octilinear_route_keeps_ends_and_angles(a, b):
    pts = octilinear_route(a, b)
    assert pts[0] == a and pts[-1] == b
    for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
        if (x0, y0) != (x1, y1):
            ang = math.degrees(math.atan2(y1 - y0, x1 - x0))
            assert abs(ang / 45 - round(ang / 45)) < 1e-6


@settings(max_examples=examples(60), deadline=None)
@given(point, point, st.floats(-8, 8))
def test_offset_route_stays_parallel_at_distance(a, b, d):
    pts = octilinear_route(a, b)
    if len(pts) < 2 or a == b:
        return
    off = offset_polyline(pts, d)
    for (p, q), (r, s) in zip(
        zip(pts, pts[1:], strict=False), zip(off, off[1:], strict=False), strict=False
    ):
        length = math.dist(p, q)
        if length < 1e-9:
            continue
        # signed distance of both offset points from the original segment's line is d
        for x, y in (r, s):
            cross = ((q[0] - p[0]) * (y - p[1]) - (q[1] - p[1]) * (x - p[0])) / length
            assert cross == pytest.approx(d, abs=1e-6)


NETWORKS = {
    "path": Network.from_lines({"L": [f"S{i}" for i in range(12)]}),
    "cross": Network.from_lines(
        {
            "A": [f"a{i}" for i in range(6)] + ["X"] + [f"b{i}" for i in range(6)],
            "B": [f"c{i}" for i in range(6)] + ["X"] + [f"d{i}" for i in range(6)],
        }
    ),
    "loop": Network.from_lines(
        {"R": [f"r{i}" for i in range(10)] + ["r0"], "S": ["r0", "s1", "r5"]}
    ),
    "two parts": Network.from_lines({"A": ["p", "q", "r"], "B": ["x", "y", "z"]}),
}


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_layout_places_every_station_apart_without_crossings(name):
    net = NETWORKS[name]
    pos = layout_network(net)
    assert set(pos) == set(net.vertices)
    assert len(set(pos.values())) == len(pos)  # no two stations on one point
    quality = layout_quality(net, pos)
    assert quality["edge_crossings"] == 0
    assert quality["label_overlaps"] == 0
    assert quality["station_overlaps"] == 0


def test_path_layout_is_straight_and_octilinear():
    net = NETWORKS["path"]
    quality = layout_quality(net, layout_network(net))
    assert quality["octilinear_fraction"] == 1.0


def test_layout_is_deterministic_and_used_when_positions_are_missing():
    net = sample_metro(60, seed=5)
    net.positions = {}
    assert layout_network(net) == layout_network(net)
    result = render_map(net)
    assert check_legibility(result.placed, net) == []


def test_layout_quality_counts_a_crossing():
    net = Network.from_lines({"A": ["a", "b"], "B": ["c", "d"]})
    pos = {"a": (0.0, 0.0), "b": (2.0, 2.0), "c": (0.0, 2.0), "d": (2.0, 0.0)}
    quality = layout_quality(net, pos)
    assert quality["edge_crossings"] == 1
    assert quality["octilinear_fraction"] == 1.0


DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.mark.conformance
@pytest.mark.parametrize("city", ["china/jinan.json", "australia/sydney.json"])
def test_reasonmap_topologies_lay_out_legibly(city):
    path = DATA / "reasonmap-stations" / city
    if not path.is_file():
        pytest.skip(f"{path} is absent (shared data not beside the repo)")
    from maptab.io.metadata import load_reasonmap

    net = load_reasonmap(path)
    pos = layout_network(net)
    quality = layout_quality(net, pos)
    assert quality["label_overlaps"] == 0 and quality["station_overlaps"] == 0
    assert quality["edge_crossings"] == 0
    net.positions = pos
    assert check_legibility(render_map(net).placed, net) == []


@pytest.mark.conformance
def test_crowded_real_topology_renders_legibly():
    """Singapore's laid-out centre left 'Downtown Station' with no free place (its label
    covered 'Gardens by the Bay Station') until crowded labels got a second chance."""
    path = DATA / "reasonmap-stations" / "singapore" / "singapore.json"
    if not path.is_file():
        pytest.skip(f"{path} is absent (shared data not beside the repo)")
    from maptab.io.metadata import load_reasonmap

    net = load_reasonmap(path)
    net.positions = layout_network(net)
    placed = render_map(net).placed
    assert placed.crowded == []
    assert check_legibility(placed, net) == []


def _stress_step_reference(x, d, w):
    """Stress majorization's update written out pair by pair."""
    n = len(x)
    out = []
    for i in range(n):
        acc = [0.0, 0.0]
        for j in range(n):
            if i == j:
                continue
            dist = math.dist(x[i], x[j]) or 1e-9
            for k in range(2):
                acc[k] += w[i][j] * (x[j][k] + d[i][j] * (x[i][k] - x[j][k]) / dist)
        total = sum(w[i][j] for j in range(n) if j != i)
        out.append([acc[0] / total, acc[1] / total])
    return out


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.tuples(coord, coord), min_size=2, max_size=7, unique=True), st.randoms())
def test_stress_step_matches_its_definition(points, rnd):
    import numpy as np

    from maptab.render.layout import _stress_step

    n = len(points)
    d = np.zeros((n, n))
    for i, j in combinations(range(n), 2):
        d[i, j] = d[j, i] = rnd.randint(1, 5)
    w = np.where(d > 0, 1.0 / np.maximum(d, 1.0) ** 2, 0.0)
    x = np.array(points, dtype=float)
    got = _stress_step(x, d, w)
    want = _stress_step_reference(points, d, w)
    assert got.ravel().tolist() == pytest.approx([float(v) for p in want for v in p], abs=1e-9)
