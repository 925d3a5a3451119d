"""Exact solver (SPEC 4): hand-made cases and property tests against brute force."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.costs import CostError, Weights, optimal_assignments, route_cost, within
from maptab.core.network import Edge, Network, Vertex
from maptab.core.solver import (
    MAX_EXPANSIONS,
    Route,
    SearchLimit,
    Solver,
    UnknownStation,
    _routes,
    _slack,
    brute_force_routes,
    fewest_stations,
    optimal_routes,
)

T = Weights(1, 0, 0, 0)
P = Weights(0, 1, 0, 0)
C = Weights(0, 0, 1, 0)


def metro(lines: dict[str, list[str]], edge_attrs=None, vertex_attrs=None) -> Network:
    """A metromap from line sequences; attributes default to time 2 (edges) / 1 (vertices)."""
    net = Network.from_lines(lines)
    edge_attrs = edge_attrs or {}
    vertex_attrs = vertex_attrs or {}
    edges = [
        Edge(e.u, e.v, e.line, *edge_attrs.get((e.u, e.v, e.line), (2.0, 0.5, 0.5, 0.0)))
        for e in net.edges
    ]
    vertices = {
        s: Vertex(
            s, v.lines, *vertex_attrs.get(s, (1.0, 0.0, 0.5, 0.8, 5.0 if v.is_transfer else 0.0))
        )
        for s, v in net.vertices.items()
    }
    return net.with_attributes(vertices=vertices, edges=edges)


def formats(routes: list[Route]) -> list[str]:
    return sorted(r.format() for r in routes)


# --------------------------------------------------------------------------- hand-made cases
def test_route_format_and_counts():
    r = Route(("A", "B", "C"), ("B",), ("L1", "L2"), 1.5)
    assert r.format() == "A-B(transfer)-C"
    assert (r.vertex_count, r.transfer_count) == (3, 1)


def test_straight_line_and_criteria_free():
    net = metro({"Red": ["A", "B", "C", "D"]})
    [r] = optimal_routes(net, "A", "D", T)
    assert r.format() == "A-B-C-D" and r.lines == ("Red",) * 3
    assert r.cost == pytest.approx((3 * 2 + 3 * 1) / 3)
    [f] = fewest_stations(net, "D", "A")
    assert f.format() == "D-C-B-A" and f.cost == 4


def test_transfer_marks_and_time():
    net = metro({"Red": ["A", "B", "C"], "Blue": ["D", "B", "E"]})
    [r] = optimal_routes(net, "A", "E", T)
    assert r.format() == "A-B(transfer)-E"
    assert r.lines == ("Red", "Blue")
    assert r.cost == pytest.approx((2 + 2 + 1 + 1 + 5) / 3)


def test_loop_line_goes_the_short_way_round():
    net = metro({"Circle": ["A", "B", "C", "D", "E", "A"]})
    assert formats(optimal_routes(net, "A", "D", T)) == ["A-E-D"]
    assert formats(fewest_stations(net, "B", "E")) == ["B-A-E"]
    # opposite station on an even loop: both directions tie
    net6 = metro({"Circle": ["A", "B", "C", "D", "E", "F", "A"]})
    assert formats(optimal_routes(net6, "A", "D", T)) == ["A-B-C-D", "A-F-E-D"]
    assert formats(fewest_stations(net6, "A", "D")) == ["A-B-C-D", "A-F-E-D"]


def test_parallel_lines_on_one_track_choose_the_cheaper_edge():
    lines = {"A": ["P", "X", "Y", "Z"], "B": ["Q", "X", "Y"]}
    attrs = {("X", "Y", "A"): (3.0, 1.5, 0.0, 0.0), ("X", "Y", "B"): (2.0, 0.0, 1.0, 0.0)}
    net = metro(lines, attrs)
    # time: riding B from X to Y is faster, but staying on A avoids a 5-minute transfer
    [r] = optimal_routes(net, "P", "Z", T)
    assert r.format() == "P-X-Y-Z" and r.lines == ("A", "A", "A")
    # price: B's X-Y is free; transfers cost no money, so the fewest-transfer tie-break
    # among the two J-optimal assignments (P-X on A, X-Y on B, Y-Z on A) has two transfers
    [r] = optimal_routes(net, "P", "Z", P)
    assert r.format() == "P-X(transfer)-Y(transfer)-Z" and r.lines == ("A", "B", "A")


def test_zero_time_weight_ties_give_one_route_per_marking():
    # two lines share X-Y-W; going from P (line A only) to Z (line B only) needs one transfer,
    # at X, Y or W. With wT = 0 transfers are free and shared edges have equal attributes.
    lines = {"A": ["P", "X", "Y", "W"], "B": ["X", "Y", "W", "Z"]}
    net = metro(lines)
    routes = optimal_routes(net, "P", "Z", C)
    assert formats(routes) == [
        "P-X(transfer)-Y-W-Z",
        "P-X-Y(transfer)-W-Z",
        "P-X-Y-W(transfer)-Z",
    ]
    assert len({r.cost for r in routes}) == 1
    # criteria-free gives the same three markings
    assert formats(fewest_stations(net, "P", "Z")) == formats(routes)
    # with time weight the cheapest transfer station wins
    net2 = metro(
        lines,
        vertex_attrs={
            "X": (1.0, 0, 0.5, 0.8, 9.0),
            "Y": (1.0, 0, 0.5, 0.8, 3.0),
            "W": (1.0, 0, 0.5, 0.8, 7.0),
        },
    )
    assert formats(optimal_routes(net2, "P", "Z", T)) == ["P-X-Y(transfer)-W-Z"]


def test_optimal_walk_revisiting_a_station_falls_back_to_exact_simple_search():
    # A: P-X-Y, B: Y-X-Q share X-Y. Changing at X costs 15 minutes; riding to Y, changing
    # there (1 minute) and riding back through X is a cheaper *walk*, but not a simple path.
    lines = {"A": ["P", "X", "Y"], "B": ["Y", "X", "Q"]}
    vattrs = {"X": (0.5, 0, 0.5, 0.8, 15.0), "Y": (0.5, 0, 0.5, 0.8, 1.0)}
    net = metro(lines, vertex_attrs=vattrs)
    solver = Solver(net)
    fwd, rev, _ = solver._arcs(T)
    s, t = solver.table.index["P"], solver.table.index["Q"]
    dist = solver._distances(s, t, T, fwd)
    walk_best = min(dist[x] for x in solver._states_at[t])
    assert all(  # every walk within the tolerance of the optimum is non-simple
        optimal_assignments(solver.table, solver.table.weighted(T), p)[0] > walk_best + 1e-6
        for p in solver._tied_simple_paths(s, t, dist, rev, _slack(walk_best), 64)[0]
    )
    [r] = solver.optimal_routes("P", "Q", T)
    assert solver.solve("P", "Q", T).method == "best-first"
    assert r.format() == "P-X(transfer)-Q"
    assert r.cost == pytest.approx((1 + 0.5 + 2 + 2 + 15) / 3)
    assert formats(brute_force_routes(net, "P", "Q", T)) == ["P-X(transfer)-Q"]


def test_vertex_items_count_transfer_time():
    lines = {"A": ["P", "X", "Y", "Z"], "B": ["Q", "X"], "C": ["Q", "K", "Y"]}
    # Q-X-Y-Z needs a transfer at X (12 min); Q-K-Y-Z one at Y (1 min) and more vertex time
    vattrs = {
        "X": (0.5, 0, 0.5, 0.8, 12.0),
        "Y": (0.5, 0, 0.5, 0.8, 1.0),
        "K": (3.0, 0, 0.5, 0.8, 0.0),
    }
    net = metro(lines, vertex_attrs=vattrs)
    assert formats(optimal_routes(net, "Q", "Z", T, items="vertex")) == ["Q-K-Y(transfer)-Z"]
    [r] = optimal_routes(net, "Q", "Z", T, items="vertex")
    assert r.cost == pytest.approx((1 + 3 + 0.5 + 1) / 3)


def test_travelmap_counts_destination():
    v = {
        "S": Vertex("S", (), 30, 10, 3.0, 0.5),
        "A": Vertex("A", (), 20, 10, 3.0, 0.5),
        "B": Vertex("B", (), 25, 10, 3.0, 0.5),
        "D": Vertex("D", (), 30, 10, 3.0, 0.5),
    }
    e = [Edge(*p, None, 10, 10, 3.0, 0.5) for p in [("S", "A"), ("A", "D"), ("S", "B"), ("B", "D")]]
    net = Network("travelmap", v, e)
    [r] = optimal_routes(net, "S", "D", T)
    assert r.format() == "S-A-D" and r.lines == (None, None)
    assert r.cost == pytest.approx((30 + 20 + 30 + 20) / 180)
    assert formats(fewest_stations(net, "S", "D")) == ["S-A-D", "S-B-D"]


def test_mean_model_prefers_high_average_within_detour_bound():
    # direct A-D has a poor edge; the detour A-B-C-D has excellent comfort everywhere
    net = metro(
        {"L": ["A", "B", "C", "D", "A"]},
        {("D", "A", "L"): (2.0, 0.5, 0.1, 0.0)},
        {s: (1.0, 0.0, 1.0 if s != "A" else 0.1, 0.8, 0.0) for s in "ABCD"},
    )
    assert formats(optimal_routes(net, "A", "D", C)) == ["A-D"]  # additive: fewer items
    assert formats(optimal_routes(net, "A", "D", C, model="mean")) == ["A-B-C-D"]
    # with no detour allowed only the shortest route is a candidate
    assert formats(optimal_routes(net, "A", "D", C, model="mean", max_detour=0)) == ["A-D"]


def test_errors():
    net = metro({"Red": ["West 117th-Madison", "B", "C"]})
    with pytest.raises(UnknownStation, match="did you mean 'West 117th_Madison'"):
        optimal_routes(net, "West 117 Madison", "C", T)
    # display labels resolve to table names
    assert formats(fewest_stations(net, "West 117th-Madison", "C")) == ["West 117th_Madison-B-C"]
    with pytest.raises(CostError, match="same station"):
        fewest_stations(net, "B", "B")
    with pytest.raises(CostError, match="model"):
        optimal_routes(net, "B", "C", T, model="median")
    split = metro({"Red": ["A", "B"], "Blue": ["C", "D"]})
    assert optimal_routes(split, "A", "D", T) == []
    assert fewest_stations(split, "A", "D") == []
    assert optimal_routes(split, "A", "D", T, model="mean") == []


# --------------------------------------------------------------------------- property tests
EDGE_T = [0.0, 0.5, 2.0, 3.0]
VALUES01 = [0.0, 0.5, 1.0]


def random_lines(draw) -> dict[str, list[str]]:
    """Up to three random lines (some loops), sometimes one more sharing a segment of L0."""
    n = draw(st.integers(4, 7))
    names = [f"S{i}" for i in range(n)]
    lines: dict[str, list[str]] = {}
    for li in range(draw(st.integers(1, 3))):
        seq = draw(st.permutations(names))[: draw(st.integers(2, n))]
        if len(seq) >= 3 and draw(st.booleans()):
            seq = [*seq, seq[0]]  # loop line
        lines[f"L{li}"] = seq
    if draw(st.booleans()):  # a line sharing a track segment with L0
        base = [s for s in lines["L0"] if s != lines["L0"][0]] or lines["L0"]
        lo = draw(st.integers(0, max(0, len(base) - 2)))
        seg = base[lo : lo + draw(st.integers(2, 3))]
        head, tail = draw(st.sampled_from(names)), draw(st.sampled_from(names))
        seg = [*([head] if head not in seg else []), *seg]
        lines["P"] = [*seg, tail] if tail not in seg else seg
    return {k: v for k, v in lines.items() if len(set(v)) >= 2}


@st.composite
def metro_networks(draw, lines: dict[str, list[str]] | None = None) -> Network:
    """Random small metromaps with loop lines and parallel lines; attributes from few values
    so that ties are common. ``lines`` fixes the topology."""
    if lines is None:
        lines = random_lines(draw)
    net = Network.from_lines(lines)
    edges = [
        Edge(
            e.u,
            e.v,
            e.line,
            draw(st.sampled_from(EDGE_T)),
            draw(st.sampled_from([0.0, 0.75, 1.5])),
            draw(st.sampled_from(VALUES01)),
            0.0,
        )
        for e in net.edges
    ]
    vertices = {
        s: Vertex(
            s,
            v.lines,
            draw(st.sampled_from([0.5, 1.0, 2.0])),
            0.0,
            draw(st.sampled_from(VALUES01)),
            draw(st.sampled_from([0.0, 0.5, 1.0])),
            draw(st.sampled_from([0.0, 1.0, 5.0, 15.0])) if v.is_transfer else 0.0,
        )
        for s, v in net.vertices.items()
    }
    return net.with_attributes(vertices=vertices, edges=edges)


@st.composite
def detour_networks(draw) -> Network:
    """Lines sharing a track where changing at a far station can beat changing at the near
    one by riding back: optimal walks that are not simple paths (the solver's fallback)."""
    lines = {"A": ["P", "X", "Y", "Z"], "B": ["Q", "X", "Y"]}
    if draw(st.booleans()):
        lines["C"] = draw(st.permutations(["P", "Q", "Z", "X", "K"]))[: draw(st.integers(2, 4))]
    return draw(metro_networks(lines))


@st.composite
def travel_networks(draw) -> Network:
    n = draw(st.integers(3, 7))
    names = [f"T{i}" for i in range(n)]
    pairs = {(names[i], names[draw(st.integers(0, i - 1))]) for i in range(1, n)}  # a tree
    for _ in range(draw(st.integers(0, n))):
        a, b = draw(st.permutations(names))[:2]
        if (b, a) not in pairs:
            pairs.add((a, b))
    edges = [
        Edge(
            a,
            b,
            None,
            draw(st.sampled_from([10.0, 60.0])),
            draw(st.sampled_from([10.0, 80.0])),
            draw(st.sampled_from([1.0, 3.0, 5.0])),
            draw(st.sampled_from([0.2, 0.9])),
        )
        for a, b in sorted(pairs)
    ]
    vertices = {
        s: Vertex(
            s,
            (),
            draw(st.sampled_from([0.0, 20.0, 90.0])),
            draw(st.sampled_from([10.0, 100.0])),
            draw(st.sampled_from([0.0, 3.0, 5.0])),
            draw(st.sampled_from([0.5, 1.0])),
        )
        for s in names
    }
    return Network("travelmap", vertices, edges)


weight_vectors = st.one_of(
    st.sampled_from(
        [T, P, C, Weights(0, 0, 0, 1), Weights(0, 0.5, 0.5, 0), Weights(0.25, 0.25, 0.25, 0.25)]
    ),
    st.lists(st.integers(0, 9), min_size=4, max_size=4)
    .filter(any)
    .map(lambda xs: Weights(*[x / sum(xs) for x in xs])),
)


def assert_same_gold(net: Network, got: list[Route], ref: list[Route], weights, items, model):
    assert formats(got) == formats(ref)
    ref_cost = {r.format(): r.cost for r in ref}
    for r in got:
        assert r.cost == pytest.approx(ref_cost[r.format()], rel=1e-9, abs=1e-12)
        marks = tuple(r.stations[h] for h in range(1, len(r.lines)) if r.lines[h - 1] != r.lines[h])
        assert marks == r.transfers  # the representative lines realise the marks
        if weights is not None:  # … at the optimal cost
            again = route_cost(net, r.stations, weights, r.lines, items=items, model=model)
            assert again == pytest.approx(r.cost, rel=1e-9, abs=1e-12)


def endpoints(net: Network, data) -> tuple[str, str]:
    s, t = data.draw(st.permutations(net.stations))[:2]
    return s, t


any_network = st.one_of(metro_networks(), detour_networks(), travel_networks())
PROPS = settings(
    max_examples=examples(70), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPS
@given(net=any_network, weights=weight_vectors, items=st.sampled_from(["edge_vertex", "vertex"]))
def test_state_arcs_match_their_definition(net, weights, items):
    """Every state arc (built with array indexing) has the features of its definition, one
    arc at a time: leave the tail's station, ride the edge, plus a transfer where a state
    with an incoming line takes another line; its cost per weight vector is their product,
    and the forward and reverse rows list the same arcs with the same costs."""
    solver = Solver(net, items=items)
    table = solver.table
    n = len(table.stations)
    fwd, rev, _ = solver._arcs(weights)
    w = [*weights.as_list(), 0.0, 0.0]
    arcs = []
    for x in range(solver.n_states):
        u = solver.station_of[x]
        for (a, b), opts in table.hops.items():
            if a != u:
                continue
            for line, k in opts:
                y = solver._state_of[(b, line)]
                want = table.leave[u] + table.edge[k]
                if x >= n and line != solver._line_of[x]:
                    want = want + table.transfer[u]
                arcs.append((x, y, want.tolist()))
    rows = fwd.rows
    got = [(x, y, solver.arc_feat[i].tolist()) for x in range(len(rows)) for y, i in rows[x]]
    assert sorted(got) == sorted(arcs)
    for x in range(len(rows)):
        for (y, i), (_, c) in zip(rows[x], fwd[x], strict=True):
            assert c == pytest.approx(
                sum(a * b for a, b in zip(solver.arc_feat[i], w, strict=True)), abs=1e-12
            )
            assert (x, c) in rev[y]


@PROPS
@given(
    net=any_network,
    weights=weight_vectors,
    items=st.sampled_from(["edge_vertex", "vertex"]),
    data=st.data(),
)
def test_additive_matches_brute_force(net, weights, items, data):
    s, t = endpoints(net, data)
    solver = Solver(net, items=items)
    got = solver.optimal_routes(s, t, weights)
    ref = brute_force_routes(net, s, t, weights, items=items)
    assert_same_gold(net, got, ref, weights, items, "additive")
    # a repeated source is answered from a whole cached shortest-path tree: same gold
    # (the memo of solved queries is cleared so that the tree is what answers)
    for _ in range(2):
        solver._solved.clear()
        assert solver.optimal_routes(s, t, weights) == got
    # and a query asked again is answered from the memo: same gold, a list of its own
    again = solver.solve(s, t, weights)
    assert again.routes == got
    again.routes.clear()
    assert solver.optimal_routes(s, t, weights) == got


@PROPS
@given(
    net=any_network,
    weights=weight_vectors,
    detour=st.integers(0, 2),
    data=st.data(),
)
def test_mean_matches_brute_force(net, weights, detour, data):
    s, t = endpoints(net, data)
    got = optimal_routes(net, s, t, weights, model="mean", max_detour=detour)
    ref = brute_force_routes(net, s, t, weights, model="mean", max_detour=detour)
    assert_same_gold(net, got, ref, weights, "edge_vertex", "mean")


@PROPS
@given(net=any_network, data=st.data())
def test_criteria_free_matches_brute_force(net, data):
    s, t = endpoints(net, data)
    got = fewest_stations(net, s, t)
    ref = brute_force_routes(net, s, t)
    assert_same_gold(net, got, ref, None, "edge_vertex", "additive")
    assert len({r.vertex_count for r in got}) <= 1
    assert fewest_stations(net, s, t) == got  # from the memo


def test_memo_key_holds_the_search_settings():
    """A solver whose search settings change does not answer from the memo of the old ones."""
    net = metro({"A": ["a", "b", "c", "d", "e"], "B": ["a", "x", "y", "e"], "C": ["b", "z", "d"]})
    solver = Solver(net)
    full = solver.solve("a", "e", Weights(1, 0, 0, 0), max_routes=1)
    solver.max_expansions = 1
    with pytest.raises(SearchLimit):
        solver.solve("a", "e", Weights(1, 0, 0, 0), max_routes=1)
    solver.max_expansions = MAX_EXPANSIONS
    assert solver.solve("a", "e", Weights(1, 0, 0, 0), max_routes=1) == full


@PROPS
@given(
    net=detour_networks(),
    weights=st.one_of(st.just(T), weight_vectors),
    ends=st.sampled_from([("P", "Q"), ("Q", "P")]),
    items=st.sampled_from(["edge_vertex", "vertex"]),
)
def test_revisiting_walks_match_brute_force(net, weights, ends, items):
    s, t = ends
    got = optimal_routes(net, s, t, weights, items=items)
    ref = brute_force_routes(net, s, t, weights, items=items)
    assert_same_gold(net, got, ref, weights, items, "additive")


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("edge_attrs", "vertex_attrs", "weights", "culprit"),
    [
        # a negative edge time: B-C-B is a negative cycle for plain Dijkstra
        ({("B", "C", "Red"): (-20.0, 0.5, 0.5, 0.0)}, {}, T, "edge B-C (line 'Red'): Time -20"),
        # comfort above its 0-1 scale gives a negative deficit 1 - 7 = -6
        ({}, {"B": (1.0, 0.0, 7.0, 0.8, 0.0)}, C, "station 'B': Comfort Level 7"),
    ],
)
def test_negative_item_costs_are_an_error_not_a_hang(edge_attrs, vertex_attrs, weights, culprit):
    net = metro({"Red": ["A", "B", "C", "D"]}, edge_attrs, vertex_attrs)
    with pytest.raises(CostError, match="negative cost") as err:
        optimal_routes(net, "A", "D", weights)
    assert culprit in str(err.value)
    # a criterion with weight 0 does not make any cost negative: still solvable
    other = P if weights is not P else T
    assert formats(optimal_routes(net, "A", "D", other)) == ["A-B-C-D"]
    assert formats(fewest_stations(net, "A", "D")) == ["A-B-C-D"]


def test_near_tie_is_measured_against_the_optimum_not_the_partial_distance():
    """Two routes differ by 1e-8 in J (0.333333·0.01 against 0.333334·0.01) on their first
    hops, J ≈ 19.5: a relative gap of 5e-10 < 1e-9, so both are optimal (SPEC 4), although
    1e-8 is far above 1e-9 of the distance where the routes diverge."""
    chain = [f"C{i}" for i in range(25)]
    net = Network.from_lines({"Red": ["S", "A", *chain], "Blue": ["S", "B", "C0"]})
    edges = [
        Edge(
            e.u,
            e.v,
            e.line,
            *((2.03, 0.5, 0.51, 0.0) if {e.u, e.v} == {"S", "A"} else (2.0, 0.5, 0.5, 0.0)),
        )
        for e in net.edges
    ]
    vertices = {k: Vertex(k, v.lines, 1.0, 0.0, 0.5, 0.75, 0.0) for k, v in net.vertices.items()}
    net = net.with_attributes(vertices=vertices, edges=edges)
    w = Weights(0.333333, 0.0, 0.333334, 0.333333)
    got = optimal_routes(net, "S", "C24", w)
    assert [r.stations[:3] for r in got] == [("S", "A", "C0"), ("S", "B", "C0")]
    assert got[1].cost - got[0].cost == pytest.approx(1e-8, rel=1e-3)
    assert_same_gold(net, got, brute_force_routes(net, "S", "C24", w), w, "edge_vertex", "additive")


# --------------------------------------------------------------------------- counts and search
def best_first_reference(net: Network, s: str, t: str, weights, items: str) -> list[str]:
    """The best-first simple-path search run on any query (not only where the solver needs
    it), its candidates scored exactly: the optimal route strings."""
    solver = Solver(net, items=items)
    fwd, rev, costs = solver._arcs(weights)
    si, ti = solver.table.index[s], solver.table.index[t]
    h = solver._reverse_distances(ti, rev)
    if h[si] == math.inf:
        return []
    scored = []
    for p in solver._best_first(si, ti, fwd, h, costs.dest[ti], "test"):
        cost, marks = optimal_assignments(solver.table, costs, p)
        scored.append((cost, p, marks))
    best = min(c for c, _, _ in scored)
    return formats(_routes(solver.table, [f for f in scored if within(f[0], best)]))


@PROPS
@given(
    net=any_network,
    weights=weight_vectors,
    items=st.sampled_from(["edge_vertex", "vertex"]),
    data=st.data(),
)
def test_best_first_search_matches_brute_force(net, weights, items, data):
    s, t = endpoints(net, data)
    ref = brute_force_routes(net, s, t, weights, items=items)
    assert best_first_reference(net, s, t, weights, items) == formats(ref)


# a query with the solver's listing settings: few routes listed, few candidates (0-2 force
# the counting programme)
LISTING = {
    "net": any_network,
    "weights": st.one_of(st.none(), weight_vectors),
    "items": st.sampled_from(["edge_vertex", "vertex"]),
    "max_routes": st.integers(1, 3),
    "candidates": st.sampled_from([None, 0, 1, 2]),
}


@PROPS
@given(**LISTING, data=st.data())
def test_counts_match_brute_force(net, weights, items, max_routes, candidates, data):
    """Counted ties equal the brute-force number of routes, also when the solver lists only a
    few candidates and counts the rest (``candidates`` 0-2 forces the counting programme)."""
    s, t = endpoints(net, data)
    items = items if weights is not None else "edge_vertex"
    solver = Solver(net, items=items)
    solver.candidates = candidates
    got = solver.solve(s, t, weights, max_routes=max_routes)
    ref = brute_force_routes(net, s, t, weights, items=items)
    assert got.count == len(ref)
    assert len(got.routes) == min(max_routes, len(ref))
    assert got.truncated == (len(ref) > max_routes)
    assert set(formats(got.routes)) <= set(formats(ref))


@PROPS
@given(net=detour_networks(), weights=weight_vectors, data=st.data())
def test_mean_counts_match_brute_force(net, weights, data):
    s, t = endpoints(net, data)
    got = Solver(net).solve(s, t, weights, model="mean", max_routes=1)
    ref = brute_force_routes(net, s, t, weights, model="mean")
    assert got.count == len(ref) and len(got.routes) == min(1, len(ref))


def travel_grid(k: int) -> Network:
    """A k×k travelmap grid, every spot and edge alike: corner to corner, every monotone
    staircase ties, C(2k−2, k−1) optimal routes."""
    names = {(i, j): f"G{i}_{j}" for i in range(k) for j in range(k)}
    vertices = {n: Vertex(n, (), 20.0, 10.0, 3.0, 0.5) for n in names.values()}
    edges = [
        Edge(names[(i, j)], names[(i + di, j + dj)], None, 10.0, 10.0, 3.0, 0.5)
        for i in range(k)
        for j in range(k)
        for di, dj in ((0, 1), (1, 0))
        if i + di < k and j + dj < k
    ]
    return Network("travelmap", vertices, edges)


@pytest.mark.parametrize("k", [2, 5, 12, 30])
def test_equal_cost_grid_ties_are_counted_not_listed(k):
    net = travel_grid(k)
    corner = f"G{k - 1}_{k - 1}"
    expected = math.comb(2 * k - 2, k - 1)
    got = Solver(net).solve("G0_0", corner, T, max_routes=100)
    assert got.count == expected
    assert len(got.routes) == min(expected, 100) and got.truncated == (expected > 100)
    assert all(r.vertex_count == 2 * k - 1 for r in got.routes)
    free = Solver(net).solve("G0_0", corner, max_routes=5)
    assert free.count == expected and len(free.routes) == min(5, expected)


def metro_grid(k: int) -> Network:
    """A k×k metro grid: one line per row and per column, equal attributes."""
    rows = {f"R{i}": [f"M{i}_{j}" for j in range(k)] for i in range(k)}
    cols = {f"C{j}": [f"M{i}_{j}" for i in range(k)] for j in range(k)}
    return metro({**rows, **cols})


@pytest.mark.parametrize("k", [3, 4])
@pytest.mark.parametrize("weights", [None, C, T])
def test_metro_grid_counts_match_brute_force(k, weights):
    net = metro_grid(k)
    solver = Solver(net)
    solver.candidates = 0
    got = solver.solve("M0_0", f"M{k - 1}_{k - 1}", weights, max_routes=2)
    ref = brute_force_routes(net, "M0_0", f"M{k - 1}_{k - 1}", weights)
    assert got.count == len(ref) and got.truncated == (len(ref) > 2)


def test_metro_grid_without_weights_counts_markings_at_scale():
    # 10×10 lines grid, corner to corner, fewest stations: every monotone staircase is
    # minimal and has one marking (a transfer at each turn, one line per row and column)
    got = Solver(metro_grid(10)).solve("M0_0", "M9_9", max_routes=100)
    assert got.count == math.comb(18, 9) and len(got.routes) == 100 and got.truncated
    assert all(r.transfer_count == len({ln for ln in r.lines}) - 1 for r in got.routes)


def test_search_limit_names_the_query():
    lines = {"A": ["P", "X", "Y"], "B": ["Y", "X", "Q"]}
    vattrs = {"X": (0.5, 0, 0.5, 0.8, 15.0), "Y": (0.5, 0, 0.5, 0.8, 1.0)}
    solver = Solver(metro(lines, vertex_attrs=vattrs), max_expansions=1)
    with pytest.raises(
        SearchLimit, match=r"^route search 'P' to 'Q', weights \[1, 0, 0, 0\]: .* 1 "
    ):
        solver.solve("P", "Q", T)
    grid = Solver(travel_grid(6), max_expansions=30)
    grid.candidates = 0  # list one route, count the rest: 36 stations, 1 summary each
    with pytest.raises(SearchLimit, match="^counting routes 'G0_0' to 'G5_5'"):
        grid.solve("G0_0", "G5_5", T, max_routes=1)
    grid.max_expansions = 60
    assert grid.solve("G0_0", "G5_5", T, max_routes=1).count == math.comb(10, 5)
    with pytest.raises(SearchLimit, match="mean model, max_detour 2"):
        Solver(travel_grid(4), max_expansions=50).solve("G0_0", "G3_3", T, model="mean")
