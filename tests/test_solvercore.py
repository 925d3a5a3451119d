"""maptab._solvercore (the C search) against the Python search it accelerates.

Each test solves the same query twice, once with the solver's C graph and once with it
removed (``solver._core = None``: the Python loops), and asks for the same answer to the
bit: the weighted sums, distances, the backtrack's paths in order and its completeness, and
whole Solutions (routes, markings, costs, counts, method). The networks are test_solver's random ones
(loop lines, shared tracks, revisiting walks, travelmaps), with few attribute values so
that ties are common, and search budgets small enough to stop the backtrack part way.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from maptab import solver as solver_module
from maptab.costs import REL_TOL, Weights, weigh
from maptab.solver import SearchLimit, Solver, _slack
from samplenets import sample_metro, sample_scenic
from test_solver import LISTING, PROPS, any_network, endpoints, weight_vectors

pytestmark = pytest.mark.skipif(
    solver_module._solvercore is None,
    reason="maptab._solvercore is not built (no C compiler at install): the Python search runs",
)


def python_twin(solver: Solver) -> Solver:
    """A solver of the same network and items that searches in Python."""
    twin = Solver(solver.network, items=solver.items)
    twin._core = None
    twin.candidates, twin.max_expansions = solver.candidates, solver.max_expansions
    return twin


def solve_both(solver: Solver, *args, **kwargs):
    """The solver's answer (or error) and its Python twin's."""
    out = []
    for sv in (solver, python_twin(solver)):
        try:
            got = sv.solve(*args, **kwargs)
            out.append(("ok", got.routes, got.count, got.method))
        except SearchLimit as exc:
            out.append(("limit", str(exc)))
    return out


@PROPS
@given(
    net=any_network,
    weights=weight_vectors,
    items=st.sampled_from(["edge_vertex", "vertex"]),
    whole=st.booleans(),
    data=st.data(),
)
def test_distances_are_the_python_search_to_the_bit(net, weights, items, whole, data):
    s_name, t_name = endpoints(net, data)
    solver = Solver(net, items=items)
    s, t = solver._endpoints(s_name, t_name)
    fwd, _, costs = solver._arcs(weights)
    stop = -1 if whole else t
    dest = float(costs.dest[t])
    got = solver._core.distances(fwd.cost, s, stop, dest, REL_TOL)
    ref = solver._python_distances(s, stop, fwd, dest)
    assert [x.hex() for x in got] == [x.hex() for x in ref]


@PROPS
@given(
    net=any_network,
    weights=weight_vectors,
    items=st.sampled_from(["edge_vertex", "vertex"]),
    cap=st.integers(0, 4),
    budget=st.one_of(st.integers(0, 12), st.just(10**6)),
    data=st.data(),
)
def test_tied_paths_are_the_python_backtrack(net, weights, items, cap, budget, data):
    """The same paths in the same order, and the same completeness, also when the cap or
    the step budget stops the backtrack part way."""
    s_name, t_name = endpoints(net, data)
    solver = Solver(net, items=items)
    solver.max_expansions = budget
    s, t = solver._endpoints(s_name, t_name)
    fwd, rev, costs = solver._arcs(weights)
    dest = float(costs.dest[t])
    dist = solver._python_distances(s, t, fwd, dest)
    best = min(dist[x] for x in solver._states_at[t])
    if best == math.inf:
        return
    slack = _slack(best + dest)
    got = solver._tied_simple_paths(s, t, dist, rev, slack, cap)
    twin = python_twin(solver)
    _, twin_rev, _ = twin._arcs(weights)
    ref = twin._tied_simple_paths(s, t, dist, twin_rev, slack, cap)
    assert got == ref


@PROPS
@given(**LISTING, budget=st.sampled_from([3, 20, 10**6]), data=st.data())
def test_solutions_are_the_python_solutions(
    net, weights, items, max_routes, candidates, budget, data
):
    s, t = endpoints(net, data)
    items = items if weights is not None else "edge_vertex"
    solver = Solver(net, items=items)
    solver.candidates, solver.max_expansions = candidates, budget
    got, ref = solve_both(solver, s, t, weights, max_routes=max_routes)
    assert got == ref


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_maps_give_the_python_gold(seed):
    """Every pair of stations of a generated 40-station metromap and a scenic map, under
    several weight vectors: the same Solutions (costs compared by their bits)."""
    weights = [
        Weights(1, 0, 0, 0),
        Weights(0.25, 0.25, 0.25, 0.25),
        Weights(0.1, 0.6, 0.2, 0.1),
    ]
    for net in (sample_metro(40, seed=seed), sample_scenic(15, seed=seed)):
        solver = Solver(net)
        twin = python_twin(solver)
        names = sorted(net.stations)[:12]
        for w in weights:
            for a in names:
                for b in names:
                    if a == b:
                        continue
                    got, ref = solver.solve(a, b, w), twin.solve(a, b, w)
                    assert got.routes == ref.routes and got.count == ref.count
                    assert [r.cost.hex() for r in got.routes] == [r.cost.hex() for r in ref.routes]


def test_a_cost_that_is_not_finite_or_is_negative_is_left_to_python():
    """The solver never hands such costs to the search (it raises CostError first); the C
    search refuses them all the same rather than search with them."""
    solver = Solver(sample_metro(12, seed=3))
    fwd, _, _ = solver._arcs(Weights(1, 0, 0, 0))
    for bad in (math.inf, math.nan, -1.0):
        cost = list(fwd.cost)
        cost[0] = bad
        assert solver._core.distances(cost, 0, -1, 0.0, REL_TOL) is None


def test_bad_arguments_are_errors_not_crashes():
    solver = Solver(sample_metro(12, seed=3))
    core = solver._core
    fwd, _, _ = solver._arcs(Weights(1, 0, 0, 0))
    with pytest.raises(ValueError):
        core.distances(fwd.cost[:-1], 0, -1, 0.0, REL_TOL)  # one cost short
    with pytest.raises(ValueError):
        core.distances(tuple(fwd.cost), 0, -1, 0.0, REL_TOL)  # not a list
    with pytest.raises(TypeError):
        core.distances(["x", *fwd.cost[1:]], 0, -1, 0.0, REL_TOL)
    with pytest.raises(ValueError):
        core.distances(fwd.cost, 10**6, -1, 0.0, REL_TOL)
    dist = solver._python_distances(0, -1, fwd, 0.0)
    with pytest.raises(ValueError):
        core.tied_paths(fwd.cost, dist[:-1], 0, 1, [1], 0.0, 4, 100)
    with pytest.raises(ValueError):
        core.tied_paths(fwd.cost, dist, 0, 1, [10**6], 0.0, 4, 100)
    with pytest.raises(ValueError):
        solver_module._solvercore.Graph([0, 5], 2, 0, [[], []], [[], []])  # station 5 of 2
    empty = solver_module._solvercore.Graph([], 0, 0, [], [])  # no station: no source
    with pytest.raises(ValueError):
        empty.distances([], 0, -1, 0.0, REL_TOL)
    with pytest.raises(ValueError):
        solver_module._solvercore.Graph.__new__(solver_module._solvercore.Graph).tied_paths(
            [], [], 0, 0, [], 0.0, 1, 1
        )  # never initialised
    col = np.zeros(3)
    with pytest.raises(ValueError):
        core_weigh([col, col, col], (1, 0, 0, 0))  # three columns
    with pytest.raises(ValueError):
        core_weigh([col, col, col, np.zeros(2)], (1, 0, 0, 0))  # lengths differ
    with pytest.raises(ValueError):
        core_weigh([col, col, col, col.astype(np.float32)], (1, 0, 0, 0))
    with pytest.raises(TypeError):
        core_weigh([col] * 4, (1, 0, 0))  # three weights


core_weigh = solver_module._solvercore.weigh if solver_module._solvercore else None

floats = st.floats(allow_nan=False, width=64)
columns = st.integers(0, 40).flatmap(
    lambda n: st.lists(hnp.arrays(np.float64, n, elements=floats), min_size=4, max_size=4)
)


@PROPS
@given(
    cols=columns,
    weights=st.one_of(
        st.lists(st.floats(0, 1), min_size=4, max_size=4),
        st.lists(floats, min_size=4, max_size=4),
        st.lists(st.integers(0, 3), min_size=4, max_size=4),
    ),
)
def test_weigh_is_numpys_weighted_sum_to_the_bit(cols, weights):
    """Every row as numpy's element-wise ``weigh`` gives it (infinities, overflow and NaN
    from inf * 0 included; NaN compared as NaN)."""
    got = core_weigh(cols, weights)
    with np.errstate(all="ignore"):
        ref = weigh(cols, weights).tolist()
    assert len(got) == len(ref)
    for a, b in zip(got, ref, strict=True):
        assert (math.isnan(a) and math.isnan(b)) or a.hex() == b.hex()


def test_without_the_extension_the_python_code_gives_the_same_answers(monkeypatch):
    """An install that could not compile the module (``maptab.native.core`` is None): the
    solver and the weighted sums take their Python paths, with the same results."""
    from maptab import costs

    net = sample_metro(30, seed=5)
    names = sorted(net.stations)[:8]
    weights = Weights(0.1, 0.6, 0.2, 0.1)
    with_c = Solver(net)
    cols = costs.CostTable(net)._columns
    fast = costs.weigh_rows(cols, weights.as_list())
    monkeypatch.setattr(solver_module, "_solvercore", None)
    monkeypatch.setattr(costs, "_native", None)
    plain = Solver(net)
    assert plain._core is None
    assert [x.hex() for x in costs.weigh_rows(cols, weights.as_list())] == [x.hex() for x in fast]
    for a in names:
        for b in names:
            if a != b:
                got, ref = with_c.solve(a, b, weights), plain.solve(a, b, weights)
                assert (got.routes, got.count, got.method) == (ref.routes, ref.count, ref.method)


# --------------------------------------------------------------------------- assignments
@st.composite
def walks(draw, table):
    """A hop sequence on ``table``'s network: a random walk of 1-12 hops (stations may
    repeat, as in the walks the solver and the verifier hand to the assignments)."""
    nbrs: dict[int, list[int]] = {}
    for a, b in table.hops:
        nbrs.setdefault(a, []).append(b)
    path = [draw(st.sampled_from(sorted(nbrs)))]
    for _ in range(draw(st.integers(1, 12))):
        path.append(draw(st.sampled_from(sorted(nbrs[path[-1]]))))
    return path


def assignments_both(table, costs, path):
    """``optimal_assignments`` through the C module and the Python twin, as comparable
    values (the cost by its bits, the markings' lines and transfers in order)."""
    from maptab.costs import _optimal_assignments, optimal_assignments

    out = []
    for fn in (optimal_assignments, _optimal_assignments):
        j, marks = fn(table, costs, path)
        out.append((j.hex(), [(m.lines, m.transfers) for m in marks]))
    return out


tie_prone = st.sampled_from([0.0, 0.0, 0.1, 0.2, 1 / 3, 0.30000000000000004, 1e-13, 5.0])
# (and costs that tie only by the absolute 1e-12 of within(): 0.0, 1e-13, 2e-13)


@PROPS
@given(
    net=any_network,
    weights=st.one_of(st.none(), weight_vectors),
    items=st.sampled_from(["edge_vertex", "vertex"]),
    data=st.data(),
)
def test_assignments_are_the_python_assignments(net, weights, items, data):
    """J* to the bit and the same markings in the same order, on random walks of random
    networks (shared tracks and loops: several line options per hop) under the solver's
    weight vectors, all-zero costs (criteria-free) and hand-drawn tie-prone costs."""
    from maptab.costs import CostTable, WeightedCosts

    table = CostTable(net, items)
    path = data.draw(walks(table))
    costs = table.weighted(weights)
    got, ref = assignments_both(table, costs, path)
    assert got == ref
    if data.draw(st.booleans()):  # costs near one another: ties within REL_TOL or not
        n, m = len(table.stations), len(table.edge)
        values = data.draw(st.sampled_from([tie_prone, st.sampled_from([0.0, 1e-13, 2e-13])]))
        lists = [data.draw(st.lists(values, min_size=x, max_size=x)) for x in (n, n, n, m)]
        got, ref = assignments_both(table, WeightedCosts(*lists), path)
        assert got == ref


def test_assignments_left_to_python_where_the_c_code_cannot_read_them():
    """Values the C code does not take (a negative station number, which Python indexes
    from the end; a cost that is not a float; a hop that is not in the table; a route of
    one station) return None from the module, and the public function gives Python's
    answer or error."""
    from maptab.costs import CostTable, WeightedCosts, _optimal_assignments, optimal_assignments

    core = solver_module._solvercore
    table = CostTable(sample_metro(30, seed=5))
    path = [0]
    nbrs = sorted(b for a, b in table.hops if a == 0)
    path.append(nbrs[0])
    costs = table.weighted(Weights(0.1, 0.6, 0.2, 0.1))
    args = (costs.leave, costs.dest, costs.transfer, costs.edge, REL_TOL)
    assert core.assignments(table.hops, path, *args) is not None
    assert core.assignments(table.hops, path[:1], *args) is None
    n = len(table.stations)
    wrapped = [path[0] - n, path[1]]
    assert (path[0] - n, path[1]) not in table.hops
    assert core.assignments(table.hops, wrapped, *args) is None
    with pytest.raises(KeyError):
        optimal_assignments(table, costs, wrapped)
    ints = WeightedCosts([1] * n, costs.dest, costs.transfer, costs.edge)
    assert core.assignments(table.hops, path, ints.leave, *args[1:]) is None
    assert optimal_assignments(table, ints, path) == _optimal_assignments(table, ints, path)
    with pytest.raises(TypeError):
        core.assignments([], path, *args)


# --------------------------------------------------------------------------- Floats
any_float = st.floats(allow_nan=True, allow_infinity=True)


def bits(xs) -> list[str]:
    return [x.hex() if not math.isnan(x) else "nan" for x in xs]


@PROPS
@given(
    xs=st.lists(any_float, max_size=12),
    start=st.one_of(st.none(), st.integers(-15, 15)),
    stop=st.one_of(st.none(), st.integers(-15, 15)),
    step=st.one_of(st.none(), st.integers(-4, 4).filter(bool)),
    i=st.integers(-15, 15),
)
def test_floats_index_slice_and_compare_as_a_list(xs, start, stop, step, i):
    """``Floats`` (what ``weigh`` returns) reads as the list of its floats: indexing (from
    the end too, IndexError past either end), slicing with any step, iteration, length,
    ``tolist``, pickling, and equality with lists, tuples and other Floats."""
    import pickle

    Floats = solver_module._solvercore.Floats
    f = Floats(xs)
    assert len(f) == len(xs) and bits(f) == bits(xs) and bits(f.tolist()) == bits(xs)
    assert bits(f[start:stop:step]) == bits(xs[start:stop:step])
    assert isinstance(f[start:stop:step], Floats)
    if -len(xs) <= i < len(xs):
        assert bits([f[i]]) == bits([xs[i]])
    else:
        with pytest.raises(IndexError):
            f[i]
    assert bits(pickle.loads(pickle.dumps(f))) == bits(xs)
    plain = not any(math.isnan(x) for x in xs)  # NaN equals nothing, not even itself
    assert (f == xs) is plain and (f == tuple(xs)) is plain and (f == Floats(xs)) is plain
    assert f != [*xs, 0.0] and f != xs[:-1] or not xs
    assert f.__eq__({}) is NotImplemented


def test_floats_refuse_what_is_not_a_float_sequence():
    Floats = solver_module._solvercore.Floats
    with pytest.raises(TypeError):
        Floats(["a"])
    with pytest.raises(TypeError):
        Floats(3)
    with pytest.raises(TypeError):
        Floats([1.0])["x"]
    with pytest.raises(TypeError):
        hash(Floats([1.0]))
    assert Floats([1, 2]).tolist() == [1.0, 2.0] and repr(Floats([0.5])) == "Floats([0.5])"
