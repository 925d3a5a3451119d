"""Trunks, tees and joined line ends of synthetic metro systems (SPEC 1, 7), and the shape
figures that measure them (shared track, dead ends per line, large maps; ``maptab stats``):
properties over random specs, and figures checked against a brute-force count."""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.network import Network, connected_components
from maptab.core.validate import validate_network
from maptab.generate.attributes import synthesize_attributes
from maptab.generate.synth import MetroSpec, sample_metro_spec, synth_metro
from maptab.report.describe import (
    LARGE_MAP,
    SHARED_HEAVY,
    network_figures,
    summarize_networks,
)
from test_synth import SEEDS, metro_specs


def trunk_specs(max_lines: int = 8, max_stations: int = 160) -> st.SearchStrategy[MetroSpec]:
    """Specs with trunks, tees and joins switched on (and sometimes off)."""
    return metro_specs(max_lines, max_stations, with_trunks=True)


def _pair(u: str, v: str) -> frozenset[str]:
    return frozenset((u, v))


def line_graph(net: Network, line: str) -> dict[str, set[str]]:
    adj: dict[str, set[str]] = defaultdict(set)
    for e in net.line_edges(line):
        adj[e.u].add(e.v)
        adj[e.v].add(e.u)
    return adj


def check_lines_and_runs(net: Network) -> None:
    """Every line is a ring, a simple path or (branched) a tree with one fork; the track two
    lines share is one run of consecutive edges of both."""
    loops, branched = set(net.meta["loop_lines"]), set(net.meta["branched_lines"])
    for line in net.line_names:
        adj = line_graph(net, line)
        n_edges = len(net.line_edges(line))
        assert len({_pair(e.u, e.v) for e in net.line_edges(line)}) == n_edges
        assert len(connected_components(adj)) == 1
        degrees = Counter(len(n) for n in adj.values())
        if line in loops:
            assert set(degrees) == {2} and n_edges == len(adj)
        else:
            assert n_edges == len(adj) - 1  # connected and acyclic
            assert degrees.get(3, 0) == (line in branched) and max(degrees) <= 3
    edges_of = {line: {_pair(e.u, e.v) for e in net.line_edges(line)} for line in net.line_names}
    for a, b in itertools.combinations(net.line_names, 2):
        common = edges_of[a] & edges_of[b]
        if not common:
            continue
        run: dict[str, set[str]] = defaultdict(set)
        for u, v in (tuple(p) for p in common):
            run[u].add(v)
            run[v].add(u)
        # one path: connected, acyclic, no station with three shared neighbours
        assert len(connected_components(run)) == 1
        assert len(common) == len(run) - 1 and max(len(n) for n in run.values()) <= 2
        for line in (a, b):  # consecutive along a line that is a simple path
            if line in loops or line in branched:
                continue
            seq = net.line_stations(line)
            at = sorted(seq.index(s) for s in run)
            assert at == list(range(at[0], at[0] + len(at)))


# ---------------------------------------------------------------- generated networks
@settings(max_examples=examples(40), deadline=None)
@given(trunk_specs(), SEEDS)
def test_trunk_networks_are_valid_and_lines_are_simple(spec, seed):
    net = synth_metro(spec, seed, "m")
    assert len(net.vertices) == spec.n_stations and len(net.line_names) == spec.n_lines
    check_lines_and_runs(net)
    assert len(net.meta["trunks"]) == spec.trunks
    for host, line in net.meta["trunks"]:
        lines = net.line_names
        assert lines.index(host) < lines.index(line)
        common = {_pair(e.u, e.v) for e in net.line_edges(host)} & {
            _pair(e.u, e.v) for e in net.line_edges(line)
        }
        assert 5 <= len(common) <= 40
    assert validate_network(synthesize_attributes(net, seed), profile="maptab") == []


@settings(max_examples=examples(15), deadline=None)
@given(trunk_specs(max_lines=6, max_stations=90), SEEDS)
def test_same_seed_same_network(spec, seed):
    a, b = synth_metro(spec, seed, "x"), synth_metro(spec, seed, "x")
    assert a.to_dict() == b.to_dict() and a.labels == b.labels and a.meta == b.meta


def test_sampled_specs_are_valid_at_every_size():
    rng = np.random.default_rng(11)
    for size in ("small", "medium", "large"):
        for i in range(4):
            spec = sample_metro_spec(rng, size)
            net = synth_metro(spec, i)
            check_lines_and_runs(net)
            assert validate_network(synthesize_attributes(net, i), profile="maptab") == []


def test_largest_systems_reach_four_hundred_stations():
    rng = np.random.default_rng(3)
    specs = [sample_metro_spec(rng, "large") for _ in range(400)]
    assert max(s.n_lines for s in specs) == 24 and max(s.n_stations for s in specs) == 450
    assert all(s.n_stations >= 408 for s in specs if s.n_lines == 24)
    assert all(s.tee_rate == 0.0 for s in specs if s.n_lines >= 17)
    assert 0.03 <= np.mean([s.trunks > 0 for s in specs]) <= 0.2


def test_tees_and_joins_leave_fewer_dead_ends():
    """The same sampled specs with and without tees and joins (fixed seeds, pooled over
    30 maps): dead ends per line fall, and every join or tee keeps the station count."""
    rng = np.random.default_rng(5)
    specs = [sample_metro_spec(rng, size) for size in ("small", "medium", "large") * 10]
    counts = {}
    for on in (True, False):
        dead = lines = 0
        for i, spec in enumerate(specs):
            if not on:
                spec = dataclasses.replace(spec, tee_rate=0.0, join_rate=0.0)
            f = network_figures(synth_metro(spec, i))
            assert f.stations == spec.n_stations
            dead, lines = dead + f.dead_ends, lines + f.lines
        counts[on] = dead / lines
    assert counts[True] < counts[False] - 0.15


def test_default_specs_have_no_trunks_tees_or_joins():
    net = synth_metro(MetroSpec(6, 90, 1, 1, 2, "ja"), 11)
    assert net.meta["trunks"] == [] and net.meta["spec"]["tee_rate"] == 0.0
    assert net.meta["spec"]["join_rate"] == 0.0


# ---------------------------------------------------------------- shape figures
def brute_figures(net: Network) -> dict[str, float]:
    """Shared track, dead ends and cycles counted directly from the edge rows."""
    carried: dict[frozenset[str], set[str]] = defaultdict(set)
    for e in net.edges:
        carried[_pair(e.u, e.v)].add(e.line)
    degree = Counter(s for p in carried for s in p)
    stations = set(net.vertices)
    dead = sum(1 for s in stations if degree[s] == 1)
    lines = {e.line for e in net.edges}
    shared = sum(len(ls) >= 2 for ls in carried.values())
    adj: dict[str, set[str]] = {s: set() for s in stations}
    for p in carried:
        u, v = tuple(p)
        adj[u].add(v)
        adj[v].add(u)
    return {
        "stations": len(stations),
        "dead": dead,
        "lines": len(lines),
        "shared_share": shared / len(carried),
        "cycles": len(carried) - len(stations) + len(connected_components(adj)),
    }


def trunk_map() -> Network:
    """A and B share the trunk b-c-d; C runs on from A's terminus e (through running)."""
    return Network.from_lines(
        {
            "A": ["a", "b", "c", "d", "e"],
            "B": ["x", "b", "c", "d", "y"],
            "C": ["e", "f", "g"],
        }
    )


def test_shared_track_and_dead_ends_by_hand():
    f = network_figures(trunk_map())
    # track: a-b b-c c-d d-e x-b d-y e-f f-g = 8 edges, b-c and c-d on two lines
    assert (f.edges, f.shared_edges) == (8, 2) and f.shared_track_share == 2 / 8
    # dead ends a, x, y, g: four for three lines; e is on A and C (degree 2)
    assert f.dead_ends == 4 and f.lines == 3
    s = summarize_networks([f, network_figures(Network.from_lines({"L": ["p", "q", "r"]}))])
    assert s["shared_track_share"] == pytest.approx((2 / 8 + 0) / 2)
    assert s["maps_shared_track_over_25"] == 0.0  # 25% exactly is not over
    assert s["dead_ends_per_line"] == pytest.approx((4 / 3 + 2 / 1) / 2)
    assert s["cycles_max"] == 0
    # no map of LARGE_MAP stations: no large-map figure
    assert s["large_maps_dead_end_share"] != s["large_maps_dead_end_share"]  # NaN


def test_large_map_dead_end_share_pools_the_large_maps_only():
    ring = [f"r{i}" for i in range(LARGE_MAP)]
    big = Network.from_lines({"O": [*ring, ring[0]], "S": ["r0", "t1", "t2"], "U": ["r7", "u1"]})
    small = trunk_map()
    s = summarize_networks([network_figures(big), network_figures(small)])
    # the big map: a ring of LARGE_MAP stations plus 3 spur stations; dead ends t2, u1
    assert s["large_maps_dead_end_share"] == pytest.approx(2 / (LARGE_MAP + 3))
    assert s["cycles_max"] == 1


@st.composite
def line_maps(draw) -> Network:
    """Up to four lines, each a simple path over eight stations (parallel edges where two
    lines take the same pair)."""
    names = [f"s{i}" for i in range(8)]
    lines = {}
    for k in range(draw(st.integers(1, 4))):
        seq = draw(st.permutations(names))[: draw(st.integers(2, 6))]
        lines[f"L{k}"] = list(seq)
    return Network.from_lines(lines)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(line_maps(), min_size=1, max_size=4))
def test_figures_equal_a_brute_force_count(nets):
    figs = [network_figures(n) for n in nets]
    ref = [brute_figures(n) for n in nets]
    for f, r in zip(figs, ref, strict=True):
        assert f.shared_track_share == pytest.approx(r["shared_share"])
        assert (f.dead_ends, f.lines, f.cycles) == (r["dead"], r["lines"], r["cycles"])
    s = summarize_networks(figs)
    assert s["shared_track_share"] == pytest.approx(np.mean([r["shared_share"] for r in ref]))
    assert s["maps_shared_track_over_25"] == pytest.approx(
        np.mean([r["shared_share"] > SHARED_HEAVY for r in ref])
    )
    assert s["dead_ends_per_line"] == pytest.approx(np.mean([r["dead"] / r["lines"] for r in ref]))
    assert s["cycles_max"] == max(r["cycles"] for r in ref)
