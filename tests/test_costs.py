"""Cost model (SPEC 3): weights, normalisation, item rules, totals and rounding."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.costs import (
    SCALES,
    CostError,
    CostTable,
    Totals,
    Weights,
    round_half_up,
    route_cost,
    route_totals,
    weigh,
    within,
)
from maptab.core.network import Edge, Network, Vertex
from maptab.core.solver import Solver

# The released Cleveland sample, Triskett → West 25th_Ohio City (SPEC 3 worked example).
ROUTE = (
    "Triskett",
    "West 117th_Madison",
    "West Boulevard_Cudell",
    "West 65th_Lorain",
    "West 25th_Ohio City",
)
EDGE_ROWS = [  # time, price, comfort (reliability 0 on metromap edges)
    (2.42, 0.64, 0.08),
    (2.78, 0.26, 0.46),
    (2.39, 0.68, 0.76),
    (2.13, 0.81, 0.61),
]
VERTEX_ROWS = [  # time, comfort, reliability (price 0)
    (0.7, 0.73, 0.54),
    (1.48, 0.17, 0.61),
    (1.57, 0.72, 0.91),
    (0.65, 0.93, 0.96),
    (1.34, 0.96, 0.79),
]
MIX_PRICES = [0.42, 0.45, 0.47, 0.75, 1.1]  # mean of incident edge prices (SPEC 5)


def cleveland(mix: bool = False) -> Network:
    vertices = {
        name: Vertex(name, ("Red Line",), t, MIX_PRICES[i] if mix else 0.0, c, r)
        for i, (name, (t, c, r)) in enumerate(zip(ROUTE, VERTEX_ROWS, strict=True))
    }
    edges = [
        Edge(a, b, "Red Line", t, p, c, 0.0)
        for (a, b), (t, p, c) in zip(itertools.pairwise(ROUTE), EDGE_ROWS, strict=True)
    ]
    return Network("metromap", vertices, edges)


def test_worked_example_totals():
    assert route_totals(cleveland(), ROUTE).as_label() == {
        "Total_Time": 14.12,
        "Total_Price": 2.39,
        "Average_Comfort Level": 0.5575,
        "Average_Reliability": 0.755,
    }


def test_worked_example_mix_totals_vertex_items_only():
    assert route_totals(cleveland(mix=True), ROUTE, items="vertex").as_label() == {
        "Total_Time": 4.4,
        "Total_Price": 2.09,
        "Average_Comfort Level": 0.6375,
        "Average_Reliability": 0.755,
    }


def test_worked_example_cost_by_hand():
    w = Weights(0.212746, 0.354479, 0.30175, 0.131025)
    t = sum(r[0] for r in EDGE_ROWS) + sum(r[0] for r in VERTEX_ROWS[:-1])
    p = sum(r[1] for r in EDGE_ROWS)
    c = sum(1 - r[2] for r in EDGE_ROWS) + sum(1 - r[1] for r in VERTEX_ROWS[:-1])
    rel = sum(1 - r[2] for r in VERTEX_ROWS[:-1])
    expected = w.time * t / 3 + w.price * p / 1.5 + w.comfort * c + w.reliability * rel
    assert route_cost(cleveland(), ROUTE, w) == pytest.approx(expected, rel=1e-12)
    mean = w.time * t / 3 + w.price * p / 1.5 + w.comfort * c / 8 + w.reliability * rel / 4
    assert route_cost(cleveland(), ROUTE, w, model="mean") == pytest.approx(mean, rel=1e-12)


_unit = st.floats(0, 1, allow_nan=False)
_feature = st.floats(-1e6, 1e6, allow_nan=False)


@settings(max_examples=examples(300), deadline=None)
@given(
    rows=st.lists(st.tuples(_feature, _feature, _feature, _feature), min_size=1, max_size=40),
    raw=st.tuples(_unit, _unit, _unit, _unit).filter(lambda w: sum(w) > 0),
)
def test_weigh_rows_and_arrays_give_the_same_floats(rows, raw) -> None:
    """weigh() is the SPEC 3 sum added left to right: an array of rows and each row as
    floats give the same bits (a matrix product would depend on the BLAS kernel)."""
    w = [x / sum(raw) for x in raw]
    columns = [np.array([r[j] for r in rows]) for j in range(4)]
    got = weigh(columns, w).tolist()
    for row, value in zip(rows, got, strict=True):
        expected = ((row[0] * w[0] + row[1] * w[1]) + row[2] * w[2]) + row[3] * w[3]
        assert weigh(row, w) == value == expected


@settings(max_examples=examples(60), deadline=None)
@given(raw=st.tuples(_unit, _unit, _unit, _unit).filter(lambda w: sum(w) > 0))
def test_weighted_costs_and_arc_costs_are_weigh_of_their_rows(raw) -> None:
    """Every item cost of CostTable.weighted and every arc cost of the solver's state
    graph is weigh() of its feature row, to the bit."""
    w = Weights(*(x / sum(raw) for x in raw))
    base = cleveland()
    blue = [Edge(e.u, e.v, "Blue Line", e.time + 1, e.price / 2, 0.3, 0.0) for e in base.edges[1:3]]
    vertices = {k: replace(v, lines=("Red Line", "Blue Line")) for k, v in base.vertices.items()}
    shared = Network("metromap", vertices, [*base.edges, *blue])  # transfers on shared track
    for net in (base, cleveland(mix=True), shared):
        table = CostTable(net)
        costs = table.weighted(w)
        for got, feats in (
            (costs.leave, table.leave),
            (costs.dest, table.dest),
            (costs.transfer, table.transfer),
            (costs.edge, table.edge),
        ):
            assert got == [weigh(row[:4].tolist(), w.as_list()) for row in feats]
        solver = Solver(net)
        arcs = solver._arcs(w)[0]
        for x in range(solver.n_states):
            for (y, c), (y2, i) in zip(arcs[x], solver._fwd_rows[x], strict=True):
                assert y == y2 and c == weigh(solver.arc_feat[i, :4].tolist(), w.as_list())
    zero = CostTable(cleveland()).weighted(None)
    assert set(zero.leave + zero.dest + zero.transfer + zero.edge) == {0.0}


def test_scales_match_spec():
    assert SCALES["metromap"].time == 3 and SCALES["metromap"].price == 1.5
    assert SCALES["metromap"].transfer == 3 and SCALES["metromap"].comfort == 1
    assert SCALES["travelmap"].time == 180 and SCALES["travelmap"].price == 200
    assert SCALES["travelmap"].comfort == 5 and SCALES["travelmap"].reliability == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,0,0,0", [1, 0, 0, 0]),
        (" 0.25, 0.25,0.25 ,0.25", [0.25] * 4),
        ("1,2,1,0", [0.25, 0.5, 0.25, 0]),  # the papers' integer conditions
        ("0.333333,0.333333,0.333333,0", [1 / 3, 1 / 3, 1 / 3, 0]),
        ("0.5,0.4,0,0", [5 / 9, 4 / 9, 0, 0]),
        ("2e-1,.2,0.,0", [0.5, 0.5, 0, 0]),
        ("0.3333333,0.3333333,0.3333334,0", None),
    ],
)
def test_weights_parse_normalises(text, expected):
    w = Weights.parse(text)
    if expected is not None:
        assert w.as_list() == pytest.approx(expected, abs=1e-15)
    assert sum(w.as_list()) == pytest.approx(1, abs=1e-12)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,0,0", "four comma-separated"),
        ("0.5,0.5,0.5,-0.5", "'-0.5' is not a non-negative decimal number"),
        ("1_0,0,0,1", "'1_0' is not"),  # float() would read 10
        ("a,b,c,d", "'a' is not"),
        ("1,0,0,nan", "'nan' is not"),
        ("1,0,0,inf", "'inf' is not"),
        ("+1,0,0,0", r"'\+1' is not"),
        ("\u0661,0,0,0".encode().decode("unicode_escape"), "is not"),  # Arabic-Indic 1
        ("1e999,0,0,0", "too large"),
        ("0,0,0,0", "at least one weight must be positive"),
        ("0,0.0,0e5,.0", "at least one weight must be positive"),
    ],
)
def test_weights_parse_rejects(text, message):
    with pytest.raises(CostError, match=message):
        Weights.parse(text)


def test_round_half_up():
    assert round_half_up(2.675, 2) == 2.68  # round() gives 2.67
    assert round_half_up(0.1234565, 6) == 0.123457
    assert round_half_up(0.745, 2) == 0.75
    assert Totals(1.005, 2.0, 1 / 3, 0.5).as_label()["Total_Time"] == 1.01


def shared_track() -> Network:
    """Lines A: P-X-Y-Z and B: Q-X-Y, sharing X-Y with different attributes."""
    v = {
        "P": Vertex("P", ("A",), 1.0, 0, 0.5, 0.8),
        "X": Vertex("X", ("A", "B"), 1.0, 0, 0.5, 0.8, transfer_time=6),
        "Y": Vertex("Y", ("A", "B"), 1.0, 0, 0.0, 0.8, transfer_time=9),
        "Z": Vertex("Z", ("A",), 1.0, 0, 0.5, 0.8),
        "Q": Vertex("Q", ("B",), 1.0, 0, 0.5, 0.8),
    }
    e = [
        Edge("P", "X", "A", 2.0, 1.0, 0.5),
        Edge("X", "Y", "A", 3.0, 1.5, 0.0),
        Edge("Y", "Z", "A", 2.0, 0.0, 0.5),
        Edge("Q", "X", "B", 2.0, 0.0, 1.0),
        Edge("X", "Y", "B", 2.0, 0.0, 1.0),
    ]
    return Network("metromap", v, e)


def test_transfers_add_time_and_lines_choose_edges():
    net = shared_track()
    route = ("Q", "X", "Y", "Z")
    # B to Y, transfer at Y (9 min) to A
    t = route_totals(net, route, ["B", "B", "A"])
    assert t.total_time == pytest.approx(3 * 1.0 + 2 + 2 + 2 + 9)
    assert t.total_price == pytest.approx(0.0)
    # comfort items: vertices Q, X (0.5 each; Y is 0 and excluded) and edges 1, 1, 0.5
    assert t.average_comfort == pytest.approx((0.5 + 0.5 + 1 + 1 + 0.5) / 5)
    # transfer at X (6 min) to A instead: edge X-Y on A is slower and dearer
    t2 = route_totals(net, route, ["B", "A", "A"])
    assert t2.total_time == pytest.approx(3 + 2 + 3 + 2 + 6)
    w = Weights(1, 0, 0, 0)
    assert route_cost(net, route, w, ["B", "B", "A"]) == pytest.approx(18 / 3)
    assert route_cost(net, route, w, ["B", "A", "A"]) == pytest.approx(16 / 3)
    assert route_cost(net, route, w) == pytest.approx(16 / 3)  # J-minimising assignment
    # with no weights: the first fewest-transfer marking (transfer at X, the earlier station)
    assert route_totals(net, route).total_time == pytest.approx(16)
    # with weights: the J-optimal assignment
    assert route_totals(net, route, weights=Weights(0, 1, 0, 0)).total_time == pytest.approx(18)


def test_vertex_items_keep_transfer_time():
    net = shared_track()
    t = route_totals(net, ("Q", "X", "Y", "Z"), ["B", "B", "A"], items="vertex")
    assert t.total_time == pytest.approx(3 * 1.0 + 9)
    assert t.average_comfort == pytest.approx(0.5)


def test_travelmap_item_rules():
    v = {
        "S": Vertex("S", (), 60, 40, 4.0, 0.5),
        "Hub": Vertex("Hub", (), 0, 100, 3.0, 0.9),
        "D": Vertex("D", (), 30, 20, 0.0, 0.7),
    }
    e = [Edge("S", "Hub", None, 90, 30, 5.0, 0.6), Edge("Hub", "D", None, 45, 10, 2.0, 0.8)]
    net = Network("travelmap", v, e)
    t = route_totals(net, ("S", "Hub", "D"))
    assert t.total_time == pytest.approx(60 + 0 + 30 + 90 + 45)  # destination counted
    assert t.total_price == pytest.approx(40 + 0 + 20 + 30 + 10)  # hub not destination: price 0
    assert t.average_comfort == pytest.approx((4 + 3 + 5 + 2) / 4)  # D's zero comfort excluded
    assert t.average_reliability == pytest.approx((0.5 + 0.9 + 0.7 + 0.6 + 0.8) / 5)
    # a hub as destination pays its price
    assert route_totals(net, ("D", "Hub")).total_price == pytest.approx(20 + 10 + 100)
    w = Weights(0, 0, 1, 0)
    deficits = (1 - 4 / 5) + (1 - 3 / 5) + (1 - 5 / 5) + (1 - 2 / 5)
    assert route_cost(net, ("S", "Hub", "D"), w) == pytest.approx(deficits)


@pytest.mark.parametrize(
    ("route", "lines", "message"),
    [
        (("P", "Z"), None, "not adjacent"),
        (("P", "Nowhere"), None, "unknown station"),
        (("P", "X"), ["B"], "no edge P-X on line 'B'"),
        (("P", "X", "Y"), ["A"], "2 hops"),
        (("P",), None, "at least two"),
    ],
)
def test_bad_routes(route, lines, message):
    with pytest.raises(CostError, match=message):
        route_totals(shared_track(), route, lines)


def test_bad_items_and_model():
    with pytest.raises(CostError, match="items"):
        route_totals(shared_track(), ("P", "X"), items="edges")
    with pytest.raises(CostError, match="model"):
        route_cost(shared_track(), ("P", "X"), Weights(1, 0, 0, 0), model="median")


# --------------------------------------------------------------------------- assignments
_LINES = ("L1", "L2", "L3")


@st.composite
def _shared_track_route(draw):
    """A route of 2-6 stations whose hops each run on 1-3 of three lines (parallel edges
    with their own attributes), and weights (or None: criteria-free)."""
    n = draw(st.integers(2, 6))
    stations = [f"S{i}" for i in range(n)]
    number = st.floats(0, 9, allow_nan=False).map(lambda x: round(x, 1))
    edges = []
    for a, b in zip(stations, stations[1:], strict=False):
        for line in draw(st.lists(st.sampled_from(_LINES), min_size=1, max_size=3, unique=True)):
            edges.append(Edge(a, b, line, draw(number), draw(number), draw(st.floats(0, 1)), 0.5))
    vertices = {
        s: Vertex(s, tuple(_LINES), draw(number), 0.0, 0.5, 0.5, draw(number)) for s in stations
    }
    net = Network(vertices=vertices, edges=edges, scenario="metromap")
    raw = draw(st.one_of(st.none(), st.lists(st.integers(0, 3), min_size=4, max_size=4)))
    weights = None if not raw or not sum(raw) else Weights(*(x / sum(raw) for x in raw))
    return net, stations, weights


@settings(max_examples=examples(400), deadline=None)
@given(case=_shared_track_route())
def test_optimal_assignments_equal_enumeration(case) -> None:
    """The layered programme of optimal_assignments against every line assignment scored
    one by one: the same J* and the same markings (J-tight, fewest transfers)."""
    from maptab.core.costs import _all_assignments, _transfer_positions, optimal_assignments

    net, stations, weights = case
    table = CostTable(net)
    costs = table.weighted(weights)
    path = table.path_index(stations)
    scored = []
    for edges in _all_assignments(table, path):
        marks = _transfer_positions(table, edges)
        j = sum(costs.leave[i] for i in path[:-1]) + costs.dest[path[-1]]
        j += sum(costs.edge[e] for e in edges) + sum(costs.transfer[path[h]] for h in marks)
        scored.append((j, marks))
    best = min(j for j, _ in scored)
    tied = [m for j, m in scored if within(j, best)]
    fewest = min(map(len, tied))
    total, markings = optimal_assignments(table, costs, path)
    assert total == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert [m.transfers for m in markings] == sorted({m for m in tied if len(m) == fewest})
    for m in markings:  # each marking's lines are an assignment with those transfers
        assert len(m.lines) == len(path) - 1


def _plain_programme(table: CostTable, costs: Any, path: list[int]) -> tuple[float, list]:
    """The layered programme of optimal_assignments written plainly (every transition
    through one ``step`` function, no scalar lanes): what the scalar lanes must equal."""
    from maptab.core.costs import Marking

    k = len(path) - 1
    opts = [table.hops[(path[h], path[h + 1])] for h in range(k)]
    lines = [[table.network.edges[e].line for _, e in o] for o in opts]
    ec = [[costs.edge[e] for _, e in o] for o in opts]
    leave = [costs.leave[i] for i in path]
    tr = [costs.transfer[i] for i in path]

    def step(h: int, a: int, b: int) -> float:
        return leave[h] + ec[h][b] + (tr[h] if lines[h - 1][a] != lines[h][b] else 0.0)

    zero = not any(leave) and not any(tr) and not any(map(any, ec))
    if zero:
        fwd = bwd = [[0.0] * len(o) for o in opts]
    else:
        fwd = [[leave[0] + c for c in ec[0]]]
        for h in range(1, k):
            fwd.append(
                [
                    min(fwd[-1][a] + step(h, a, b) for a in range(len(opts[h - 1])))
                    for b in range(len(opts[h]))
                ]
            )
        bwd = [[0.0] * len(opts[k - 1])]
        for h in range(k - 1, 0, -1):
            bwd.insert(
                0,
                [
                    min(step(h, a, b) + bwd[0][b] for b in range(len(opts[h])))
                    for a in range(len(opts[h - 1]))
                ],
            )
    best = min(fwd[-1])

    def tight(h: int, a: int, b: int) -> bool:
        return zero or within(fwd[h - 1][a] + step(h, a, b) + bwd[h][b], best)

    inf = math.inf
    tf = [[0 if within(fwd[0][b] + bwd[0][b], best) else inf for b in range(len(opts[0]))]]
    for h in range(1, k):
        tf.append(
            [
                min(
                    (
                        tf[-1][a] + (lines[h - 1][a] != lines[h][b])
                        for a in range(len(opts[h - 1]))
                        if tf[-1][a] < inf and tight(h, a, b)
                    ),
                    default=inf,
                )
                for b in range(len(opts[h]))
            ]
        )
    fewest = min(tf[-1])
    tb = [[0 if tf[-1][b] < inf else inf for b in range(len(opts[k - 1]))]]
    for h in range(k - 1, 0, -1):
        tb.insert(
            0,
            [
                min(
                    (
                        (lines[h - 1][a] != lines[h][b]) + tb[0][b]
                        for b in range(len(opts[h]))
                        if tb[0][b] < inf and tight(h, a, b)
                    ),
                    default=inf,
                )
                for a in range(len(opts[h - 1]))
            ],
        )
    layer = [
        {(): (lines[0][b],)} if tf[0][b] + tb[0][b] == fewest else {} for b in range(len(opts[0]))
    ]
    for h in range(1, k):
        new: list[dict] = [{} for _ in opts[h]]
        for b in range(len(opts[h])):
            for a, marks in enumerate(layer):
                if not marks or not tight(h, a, b):
                    continue
                change = lines[h - 1][a] != lines[h][b]
                if tf[h - 1][a] + change + tb[h][b] != fewest:
                    continue
                for m, ls in marks.items():
                    new[b].setdefault((*m, h) if change else m, (*ls, lines[h][b]))
        layer = new
    found: dict = {}
    for marks in layer:
        for m, ls in marks.items():
            found.setdefault(m, ls)
    return best + costs.dest[path[-1]], [Marking(ls, m) for m, ls in sorted(found.items())]


@st.composite
def _long_route(draw):
    """A route of 2-14 stations, most hops on one line and some on 2-3 parallel ones, with
    attribute values of any size (so that sums round), and weights or None."""
    n = draw(st.integers(2, 14))
    stations = [f"S{i}" for i in range(n)]
    # values that round when summed (x / 997), zero, or any float
    number = st.one_of(
        st.just(0.0),
        st.integers(1, 10**6).map(lambda x: x / 997),
        st.floats(0, 50, allow_nan=False, allow_infinity=False),
    )
    edges = []
    for a, b in zip(stations, stations[1:], strict=False):
        k = draw(st.sampled_from([1, 1, 1, 1, 2, 3]))
        for line in draw(st.permutations(_LINES))[:k]:
            edges.append(Edge(a, b, line, draw(number), draw(number), draw(st.floats(0, 1)), 0.5))
    vertices = {
        s: Vertex(s, tuple(_LINES), draw(number), draw(number), 0.5, 0.5, draw(number))
        for s in stations
    }
    net = Network(vertices=vertices, edges=edges, scenario="metromap")
    raw = draw(st.one_of(st.none(), st.lists(st.integers(0, 997), min_size=4, max_size=4)))
    weights = None if not raw or not sum(raw) else Weights(*(x / sum(raw) for x in raw))
    return net, stations, weights


@settings(max_examples=examples(600), deadline=None)
@given(case=st.one_of(_long_route(), _shared_track_route()))
def test_optimal_assignments_equal_the_plain_programme(case) -> None:
    """The scalar lanes of optimal_assignments give the same floats and markings (lines
    included) as the plain programme."""
    from maptab.core.costs import optimal_assignments

    net, stations, weights = case
    table = CostTable(net)
    costs = table.weighted(weights)
    path = table.path_index(stations)
    # (a route with one line per hop takes the one-assignment sum, not the programme)
    assume(any(len(table.hops[hop]) > 1 for hop in itertools.pairwise(path)))
    got = optimal_assignments(table, costs, path)
    assert repr(got) == repr(_plain_programme(table, costs, path))
