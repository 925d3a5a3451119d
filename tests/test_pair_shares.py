"""OD pair selection of generated maps: the tied-pair and NR targets (SPEC 9; the rule in
docs/reference/difficulty-and-qa.md), checked against brute force and re-derived gold."""

from __future__ import annotations

import itertools
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.network import fewest_hops_counts
from maptab.core.tables import derive_mix
from maptab.generate.attributes import synthesize_attributes
from maptab.generate.queries import (
    PairShares,
    eligible_pairs,
    gold_label,
    sample_pairs,
    select_pairs,
    tied_pairs,
)
from maptab.generate.synth import MetroSpec, ScenicSpec, synth_metro, synth_scenic


def _brute_counts(graph: dict[int, set[int]], s: int) -> dict[int, int]:
    """Fewest-hops paths from ``s``: every simple path enumerated, the shortest counted."""
    best: dict[int, tuple[int, int]] = {s: (0, 1)}
    stack: deque[list[int]] = deque([[s]])
    while stack:
        path = stack.pop()
        for v in graph[path[-1]]:
            if v in path:
                continue
            hops = len(path)
            got = best.get(v)
            if got is None or hops < got[0]:
                best[v] = (hops, 1)
            elif hops == got[0]:
                best[v] = (hops, got[1] + 1)
            stack.append([*path, v])
    return {v: n for v, (_, n) in best.items()}


@settings(max_examples=examples(200))
@given(
    n=st.integers(2, 8),
    edges=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=16),
)
def test_fewest_hops_counts_equal_brute_force(n: int, edges: list[tuple[int, int]]) -> None:
    graph: dict[int, set[int]] = {i: set() for i in range(n)}
    for a, b in edges:
        if a < n and b < n and a != b:
            graph[a].add(b)
            graph[b].add(a)
    for s in range(n):
        assert fewest_hops_counts(graph, s) == _brute_counts(graph, s)  # type: ignore[arg-type]


NETWORKS = [
    ("metro", lambda seed: synth_metro(MetroSpec(4, 60, 1, 1, 1, "en", trunks=1), seed)),
    ("metro-one-line", lambda seed: synth_metro(MetroSpec(1, 18, 0, 0, 0, "en"), seed)),
    ("scenic", lambda seed: synth_scenic(ScenicSpec(20, 6, 2, 1, None, 0.6, "en"), seed)),
]


@pytest.mark.parametrize(("name", "make"), NETWORKS, ids=[n for n, _ in NETWORKS])
@pytest.mark.parametrize("seed", [1, 2])
def test_selection_follows_its_rule(name: str, make, seed: int) -> None:  # type: ignore[no-untyped-def]
    net = synthesize_attributes(make(seed), seed=seed)
    mix = net.with_attributes(vertices=derive_mix(net))
    eligible = eligible_pairs(net)
    tied = tied_pairs(net)
    shares = PairShares(tied=0.2, nr=0.2)
    for count in (3, 10, len(eligible) + 5):
        got = select_pairs(net, mix, count, np.random.default_rng(seed), shares)
        pairs = [p for p, _ in got]
        assert len(set(pairs)) == len(pairs) == min(count, len(eligible))
        assert set(pairs) <= set(eligible)
        n_tied = sum(p in tied for p in pairs)
        if count < len(eligible):
            plain = len(eligible) - len(tied)
            want = [max(min(k, len(tied)), count - plain) for k in (int(0.2 * count),)]
            want.append(max(min(int(0.2 * count) + 1, len(tied)), count - plain))
            assert n_tied in want
        for (s, t), queries in got:  # each pair's queries are its own, gold re-derived
            assert len(queries) == 12
            for category, weights, gold, _ in queries:
                again = gold_label(net, mix, category, s, t, weights)
                assert again.routes == gold.routes and again.count == gold.count


def test_tied_pairs_are_the_pairs_with_two_shortest_routes() -> None:
    net = synthesize_attributes(synth_scenic(ScenicSpec(16, 5, 1, 0, None, 0.6, "en"), 3), 3)
    graph = net.simple_graph()
    want = {
        (s, t)
        for s, t in itertools.permutations(net.stations, 2)
        if _brute_counts(graph, s).get(t, 0) > 1  # type: ignore[arg-type]
    }
    assert tied_pairs(net) == want and want


def test_without_shares_the_draw_is_uniform() -> None:
    net = synthesize_attributes(synth_metro(MetroSpec(3, 40, 0, 0, 1, "en"), 5), seed=5)
    mix = net.with_attributes(vertices=derive_mix(net))
    got = [p for p, _ in select_pairs(net, mix, 7, np.random.default_rng(9))]
    assert got == sample_pairs(net, 7, np.random.default_rng(9))


def test_shares_move_the_dataset_toward_the_targets() -> None:
    """Over 12 maps, a tight tie target asks fewer tied pairs than the uniform draw does,
    and an NR target of 0 fewer NR queries (same networks, same seeds)."""
    nets = [
        synthesize_attributes(synth_metro(MetroSpec(5, 80, 1, 1, 1, "en", trunks=1), s), s)
        for s in range(12)
    ]
    totals = {}
    for label, shares in (("uniform", None), ("capped", PairShares(tied=0.0, nr=0.0))):
        tied = nr = 0
        for s, net in enumerate(nets):
            mix = net.with_attributes(vertices=derive_mix(net))
            got = select_pairs(net, mix, 8, np.random.default_rng(s), shares)
            ties = tied_pairs(net)
            tied += sum(p in ties for p, _ in got)
            nr += sum(rep == "NR" for _, qs in got for *_, rep in qs)
        totals[label] = (tied, nr)
    assert totals["capped"][0] < totals["uniform"][0]
    assert totals["capped"][1] < totals["uniform"][1]


def test_targets_are_scaled_to_the_maps_with_a_cycle() -> None:
    """A map without a cycle has no tied or NR pair: the others aim higher, so the
    scenario's share is the target; never above one half."""
    from maptab.generate.pipeline import MapSummary, pair_shares
    from maptab.generate.queries import PAIR_SHARES

    def summary(map_id: str, scenario: str, cycles: int) -> MapSummary:
        return MapSummary(map_id, scenario, "en", (1.0,), 20, 100, cycles)

    maps = [summary("m0", "metromap", 0), summary("m1", "metromap", 3)]
    maps += [summary("t0", "travelmap", 2)]
    got = pair_shares(maps, {"m0": 30, "m1": 10, "t0": 5})
    metro = PAIR_SHARES["metromap"]
    assert got["metromap"].tied == pytest.approx(min(metro.tied * 4, 0.5))
    assert metro.nr is not None
    assert got["metromap"].nr == pytest.approx(min(metro.nr * 4, 0.5))
    assert got["travelmap"].tied == pytest.approx(PAIR_SHARES["travelmap"].tied)
    assert got["travelmap"].nr == PAIR_SHARES["travelmap"].nr
    tree_only = pair_shares([summary("m0", "metromap", 0)], {"m0": 30})
    assert tree_only["metromap"].tied == pytest.approx(metro.tied)
