"""The solver's own line-assignment programme (``maptab.solver._assignments``) against
:func:`maptab.costs.optimal_assignments`: the very same floats and markings (lines
included) on every route, with shared tracks, ties and zero costs (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.test_solver import any_network, weight_vectors

from maptab.costs import CostTable, Weights, optimal_assignments
from maptab.network import Edge, Network, Vertex
from maptab.solver import Solver, _assignments

LINES = ("L1", "L2", "L3")


@st.composite
def shared_track_routes(draw):
    """A route of 2-9 stations whose hops each run on 1-3 lines (parallel edges with their
    own attributes, from few values so that ties are common), and weights (or None)."""
    n = draw(st.integers(2, 9))
    stations = [f"S{i}" for i in range(n)]
    number = st.sampled_from([0.0, 0.5, 1.0, 2.5, 3.0])
    edges = []
    for a, b in zip(stations, stations[1:], strict=False):
        for line in draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=3, unique=True)):
            edges.append(
                Edge(a, b, line, draw(number), draw(number), draw(st.sampled_from([0.0, 0.5])), 0.5)
            )
    vertices = {
        s: Vertex(s, LINES, draw(number), 0.0, 0.5, 0.5, draw(st.sampled_from([0.0, 1.0, 4.0])))
        for s in stations
    }
    net = Network(vertices=vertices, edges=edges, scenario="metromap")
    raw = draw(st.one_of(st.none(), st.lists(st.integers(0, 3), min_size=4, max_size=4)))
    weights = None if not raw or not sum(raw) else Weights(*(x / sum(raw) for x in raw))
    items = draw(st.sampled_from(["edge_vertex", "vertex"]))
    return net, stations, weights, items


def same(solver: Solver, table: CostTable, weights: Weights | None, path: list[int]) -> None:
    costs = table.weighted(weights)
    want = optimal_assignments(table, costs, path)
    got = _assignments(solver._single, solver._options, costs, path)
    assert got[0] == want[0]  # the same float, not merely close
    assert got[1] == want[1]  # markings: transfers and representative lines


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=shared_track_routes())
def test_same_floats_and_markings_as_costs_on_shared_tracks(case):
    net, stations, weights, items = case
    solver = Solver(net, items=items)
    same(solver, solver.table, weights, solver.table.path_index(stations))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_same_floats_and_markings_as_costs_on_random_maps(data):
    net = data.draw(any_network)
    weights = data.draw(st.one_of(st.none(), weight_vectors))
    solver = Solver(net, items=data.draw(st.sampled_from(["edge_vertex", "vertex"])))
    adj = solver._nbrs
    path = [data.draw(st.integers(0, len(adj) - 1))]
    for _ in range(data.draw(st.integers(1, 8))):
        nxt = [v for v in adj[path[-1]] if v not in path]
        if not nxt:
            break
        path.append(data.draw(st.sampled_from(nxt)))
    if len(path) >= 2:
        same(solver, solver.table, weights, path)
