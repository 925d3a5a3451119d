"""Difficulty metrics, thirds and the map split (SPEC 8), by hand and against networkx."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.network import Network
from maptab.generate.difficulty import (
    DifficultyError,
    SimplePathCounter,
    edge_count,
    graph_size,
    map_difficulty_scores,
    mesh_coefficient,
    query_difficulty_levels,
    spci,
    spci_pairs,
    spli,
    split_maps,
    tercile_levels,
    wasp,
)

# A 4-cycle a-b-c-d-a with a tail d-e.
KITE = Network.from_edges([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("d", "e")])


def test_hand_worked_map_metrics():
    # |V| = 5, |E| = 5
    assert graph_size(KITE) == 10
    # MC = (5 - 5 + 2) / 5
    assert mesh_coefficient(KITE) == pytest.approx(0.4)
    # distance sums per node: a 1+2+1+2=6, b 1+1+2+3=7, c 6, d 1+1+1+2=5, e 1+2+2+3=8 → 32/20
    assert wasp(KITE) == pytest.approx(1.6)


def test_wasp_weights_components_by_size():
    # x-y-z: ASPD = (1+2+1+1+2+1)/6 = 4/3; p-q: 1; w alone: 0 → (3·4/3 + 2·1 + 1·0) / 6 = 1
    net = Network.from_edges([("x", "y"), ("y", "z"), ("p", "q")])
    net.vertices["w"] = type(net.vertices["x"])("w")
    assert wasp(net) == pytest.approx(1.0)


def test_parallel_lines_count_one_station_graph_edge():
    net = Network.from_lines({"Red": ["A", "B", "C"], "Blue": ["A", "B", "D"]})
    assert len(net.edges) == 4  # A-B twice in the Edge_tab
    assert edge_count(net) == 3
    assert graph_size(net) == 4 + 3


def test_hand_worked_query_metrics():
    assert spli(KITE, "a", "e") == 2
    assert spli(KITE, "b", "b") == 0
    # b→e: b-a-d-e and b-c-d-e, both 3 hops
    assert spci(KITE, "b", "e") == 3.0
    # a→e: a-d-e (2) and a-b-c-d-e (4)
    assert spci(KITE, "a", "e") == 3.0
    assert SimplePathCounter(KITE).stats("a", "e") == (2, 6)
    # a→b: a-b (1) and a-d-c-b (3); e is a dead end
    assert spci_pairs(KITE, [("a", "b"), ("b", "a")]) == [2.0, 2.0]


def test_errors_name_the_problem():
    two = Network.from_edges([("a", "b"), ("c", "d")])
    with pytest.raises(DifficultyError, match="no path"):
        spli(two, "a", "c")
    with pytest.raises(DifficultyError, match="no path"):
        spci(two, "a", "d")
    with pytest.raises(DifficultyError, match="unknown station 'zz'"):
        spci(two, "a", "zz")
    lonely = Network("travelmap", {"a": type(two.vertices["a"])("a")}, [])
    with pytest.raises(DifficultyError, match="no edge"):
        mesh_coefficient(lonely)


def test_tercile_sizes_and_ties():
    assert tercile_levels([0.3, 0.1, 0.2]) == ["hard", "easy", "medium"]
    assert tercile_levels([4, 3, 2, 1]) == ["hard", "medium", "easy", "easy"]  # 2/1/1
    assert [tercile_levels(range(5)).count(x) for x in ("easy", "medium", "hard")] == [2, 2, 1]
    # equal scores are cut strictly, in input order
    assert tercile_levels([1, 1, 1, 1, 1, 1]) == ["easy"] * 2 + ["medium"] * 2 + ["hard"] * 2
    assert tercile_levels([]) == []


def test_map_scores_normalise_per_scenario():
    small = Network.from_edges([("a", "b"), ("b", "c")])  # GS 5, WASP 4/3, MC (2-3+2)/2
    kite = KITE  # GS 10, WASP 1.6, MC 0.4
    path5 = Network.from_edges([("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")])
    metro = Network.from_lines({"R": ["x", "y"]})
    scores = map_difficulty_scores([small, metro, kite, path5])
    # path5: GS 9, WASP 40/20 = 2, MC (4-5+2)/4 = 0.25
    # GS (5, 10, 9) → 0, 1, 0.8; WASP (4/3, 1.6, 2) → 0, 0.4, 1; MC (0.5, 0.4, 0.25) → 1, 0.6, 0
    assert scores[0] == pytest.approx((0 + 0 + 1) / 3)
    assert scores[2] == pytest.approx((1 + 0.4 + 0.6) / 3)
    assert scores[3] == pytest.approx((0.8 + 1 + 0) / 3)
    # a lone metro map: every metric constant → 0
    assert scores[1] == 0.0


def test_split_one_test_map_per_triple_and_deterministic():
    scores = [((i * 37) % 101) / 101 for i in range(160)]
    split = split_maps(scores, seed=7)
    assert split == split_maps(scores, seed=7)
    order = sorted(range(160), key=lambda i: (scores[i], i))
    for start in range(0, 160, 3):
        group = order[start : start + 3]
        assert [split[i] for i in group].count("test") == 1
    assert split.count("test") == 54  # 53 triples + the last single map
    assert split_maps([0.5] * 168, seed=1).count("test") == 56  # paper: 54 + 56 = 110 test maps
    assert any(split_maps(scores, seed=s) != split for s in range(8, 12))


def test_query_levels_use_the_scenario_index():
    # metro: SPLI of (a,b)=1, (a,c)=2, (a,d)=3 on a line
    metro = Network.from_lines({"R": ["a", "b", "c", "d"]})
    assert query_difficulty_levels(metro, [("a", "d"), ("a", "b"), ("a", "c")]) == [
        "hard",
        "easy",
        "medium",
    ]
    # travel: SPCI(a,e)=3, SPCI(b,c)= (1+3)/2 = 2, SPCI(c,e)=(2+4)/2=3, → sorted thirds
    assert query_difficulty_levels(KITE, [("a", "e"), ("b", "c"), ("c", "e")]) == [
        "medium",
        "easy",
        "hard",
    ]


# ---------------------------------------------------------------- against networkx
@st.composite
def graphs(draw, max_nodes=8):
    n = draw(st.integers(2, max_nodes))
    pairs = list(itertools.combinations(range(n), 2))
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=len(pairs), unique=True))
    return Network.from_edges([(f"s{a}", f"s{b}") for a, b in chosen]), n


def _nx(net: Network) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(net.stations)
    g.add_edges_from((e.u, e.v) for e in net.edges)
    return g


@settings(max_examples=examples(60), deadline=None)
@given(graphs())
def test_map_metrics_match_networkx(case):
    net, _ = case
    g = _nx(net)
    assert graph_size(net) == g.number_of_nodes() + g.number_of_edges()
    assert mesh_coefficient(net) == pytest.approx(
        (g.number_of_edges() - g.number_of_nodes() + 2) / g.number_of_edges()
    )
    comps = [g.subgraph(c) for c in nx.connected_components(g)]
    expected = sum(
        len(c) * (nx.average_shortest_path_length(c) if len(c) > 1 else 0) for c in comps
    ) / len(g)
    assert wasp(net) == pytest.approx(expected)


@settings(max_examples=examples(60), deadline=None)
@given(graphs())
def test_spli_and_spci_match_brute_force(case):
    net, _ = case
    g = _nx(net)
    counter = SimplePathCounter(net)
    for s, t in itertools.permutations(net.stations, 2):
        paths = list(nx.all_simple_paths(g, s, t))
        if not paths:
            with pytest.raises(DifficultyError):
                spli(net, s, t)
            continue
        lengths = [len(p) - 1 for p in paths]
        assert spli(net, s, t) == min(lengths)
        assert counter.stats(s, t) == (len(paths), sum(lengths))
        assert counter.mean_length(s, t) == pytest.approx(sum(lengths) / len(lengths), rel=1e-15)
