"""Exact route solver: every optimal simple route with its transfer marks (SPEC 4).

Definitions
-----------
Feasible routes are **simple paths** ``source … target`` (no station twice).

* **Criteria-free** (:func:`fewest_stations`): all routes with the fewest stations; each is
  marked with the transfers of its minimum-transfer line assignment(s).
* **Criteria-based** (:func:`optimal_routes`): all routes whose cost ``J``
  (:mod:`maptab.core.costs`, SPEC 3) is within the relative tolerance ``1e-9`` of the optimum, each
  marked with its J-optimal line assignment; among tied assignments the fewest transfers;
  if that still ties with different transfer stations, each marking is a separate
  :class:`Route`.

Algorithm (``additive`` model)
------------------------------
Dijkstra over *states* ``(station, incoming line)`` (plus one start state per station), where
an arc ``(u, l_in) → (v, l)`` follows an edge ``u-v`` of line ``l`` and costs
``leave(u) + edge + [l ≠ l_in]·transfer(u)``. Item costs must be non-negative (a
:class:`~maptab.core.costs.CostError` names the first item that is not). The solver backtracks
from the target over *tied predecessors* (``dist[y] + c ≤ dist[x] + slack``, where the slack
is a small multiple of the tie tolerance measured on the optimum ``J`` itself, never on the
partial distance), enumerating distinct station sequences and dropping any that repeats a
station; every simple route within the tolerance of the optimum is among them, and each
candidate is then scored exactly: its J-optimal, fewest-transfer markings come from
:func:`maptab.core.costs.optimal_assignments`, and candidates outside the tolerance are dropped.

Why simple paths need care: the state-graph optimum is taken over *walks*, and a walk may
revisit a station through a line change (ride a shared track one stop on line A, change
to line B where the transfer is cheap, ride back) and be strictly cheaper than every simple
path. Every simple path is a walk, so the walk optimum ``D`` is a lower bound; if some
candidate is within the tolerance of ``D``, the simple optima are among the candidates.
Otherwise the solver answers that query with an exact best-first (A*) search over partial
simple paths (:meth:`Solver._best_first`: per-prefix line-assignment DP, keyed by the exact
walk cost-to-go of a reverse Dijkstra, an admissible and consistent bound; the proof is in
docs/reference/cost-model.md).

Ties are counted, not necessarily listed (:class:`Solution`): past ``max_routes + 64``
candidates the exact number of optimal routes comes from a dynamic programme over the
acyclic graph of near-optimal arcs (:meth:`Solver._count_dag`), with exact integers.

The ``mean`` model is not additive; its candidates are the simple paths with at most
``shortest + max_detour`` stations, enumerated exactly with a hop-distance bound.

Every search of one query is bounded (:attr:`Solver.max_expansions` steps); past it the query
fails with :class:`SearchLimit`, a one-line error naming the stations and weights.
"""

from __future__ import annotations

import difflib
import heapq
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from maptab._cache import IdentityCache, KeyedCache
from maptab.core.costs import (
    MODELS,
    REL_TOL,
    CostError,
    CostTable,
    Marking,
    WeightedCosts,
    Weights,
    _check_items,
    deficit_columns,
    mean_assignments,
    mean_cost,
    optimal_assignments,
    weigh,
    weigh_rows,
    within,
)
from maptab.core.network import Network
from maptab.core.tables import ATTRIBUTE_OF_COLUMN


class SearchLimit(CostError):
    """An exact route search that would take longer than its expansion limit allows."""

    def __init__(self, what: str, limit: int) -> None:
        super().__init__(
            f"{what}: no exact answer within {limit:,} search steps "
            "(raise Solver.max_expansions to search further)"
        )


class UnknownStation(CostError):
    """A station name that is neither a table name nor a display label of the map."""

    def __init__(self, name: str, network: Network) -> None:
        names = list(network.vertices) + list(network.labels.values())
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        super().__init__(f"unknown station {name!r}{hint}")


@dataclass(frozen=True)
class Route:
    """One optimal route: stations, transfer stations, line per hop, and its cost.

    ``cost`` is ``J`` for criteria-based queries and the number of stations for
    criteria-free ones. ``lines`` is one representative assignment realising the marks
    (``None`` per hop on a travelmap).
    """

    stations: tuple[str, ...]
    transfers: tuple[str, ...]
    lines: tuple[str | None, ...]
    cost: float

    def format(self) -> str:
        """The route string ``A-B(transfer)-C`` (SPEC 4)."""
        if not self.transfers:
            return "-".join(self.stations)
        marked = set(self.transfers)
        return "-".join([f"{s}(transfer)" if s in marked else s for s in self.stations])

    @property
    def vertex_count(self) -> int:
        return len(self.stations)

    @property
    def transfer_count(self) -> int:
        return len(self.transfers)


def _routes(table: CostTable, found: list[tuple[float, list[int], list[Marking]]]) -> list[Route]:
    """Routes from ``(cost, path, markings)`` triples, sorted by cost, then route string."""
    names = table.stations
    out = []
    for cost, path, marks in found:
        stations = tuple(map(names.__getitem__, path))
        for m in marks:
            transfers = tuple(map(stations.__getitem__, m.transfers))
            out.append(Route(stations, transfers, m.lines, cost))
    if len(out) == 1:
        return out
    return sorted(out, key=lambda r: (r.cost, r.format()))


def _slack(j: float) -> float:
    """How far above the optimum ``j`` the state search looks for candidates: three times the
    tie tolerance of :func:`maptab.core.costs.within`, so that every route within the tolerance
    of the best *simple* route is found whenever that route is within the tolerance of the
    walk optimum ``j`` (candidates are then filtered with their exact cost)."""
    return 3 * (REL_TOL * abs(j) + 1e-12)


MAX_ROUTES = 10_000
"""Default number of optimal routes listed per query (all are counted, see :class:`Solution`):
above the largest tie count of the ``paper`` preset (``benchmarks/bench_gold.py``), so its
gold labels list every optimal route, as MapTab's do."""


def _topological_order(s: int, succ: dict[int, list[int]]) -> list[int]:
    """The stations reachable from ``s`` in the acyclic graph ``succ``, each before its
    successors (iterative depth-first search)."""
    order: list[int] = []
    seen = {s}
    stack = [(s, iter(succ.get(s, ())))]
    while stack:
        u, it = stack[-1]
        for v in it:
            if v not in seen:
                seen.add(v)
                stack.append((v, iter(succ.get(v, ()))))
                break
        else:
            stack.pop()
            order.append(u)
    return order[::-1]


class _Adjacency:
    """The arcs of every state under one weight vector: ``rows[x]`` lists ``(end, arc)``
    for state ``x`` (fixed per solver) and ``cost[arc]`` is the arc's cost (one sequence of
    floats per weight vector), so a new weight vector costs one weighted sum of arrays
    (:func:`~maptab.core.costs.weigh_rows`) and no per-state list.
    ``adj[x]`` is the ``[(end, cost), …]`` list of ``x``, for the searches off the hot path."""

    __slots__ = ("cost", "rows")

    def __init__(self, rows: list[list[tuple[int, int]]], cost: Sequence[float]) -> None:
        self.rows, self.cost = rows, cost

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, x: int) -> list[tuple[int, float]]:
        cost = self.cost
        return [(y, cost[i]) for y, i in self.rows[x]]


@dataclass(frozen=True)
class Solution:
    """The optimal routes of one query: ``count`` of them in all (exact), ``routes`` the
    first ones listed (sorted by cost, then route string; at most the ``max_routes`` asked)."""

    routes: list[Route]
    count: int
    method: str = "walks"
    """How the answer was found: ``walks`` (tied state walks, all listed), ``counted`` (tied
    walks listed in part, the rest counted), ``best-first`` (exact simple-path search, where
    no optimal walk is simple or the ties may revisit stations), ``enumerated`` (``mean``)."""

    @property
    def truncated(self) -> bool:
        """More optimal routes exist than are listed."""
        return self.count > len(self.routes)


SOLVED_CACHE = 4096
"""Queries a :class:`Solver` remembers (least recently used dropped first): a query asked
again (the three criteria-free categories of an OD pair, a rerun, a baseline answering a
dataset) is answered from the memo. A solution is a few routes, so the memo stays small."""

MAX_EXPANSIONS = 200_000
"""Default cap on the node expansions of one exact search (best-first simple-path search,
tie counting, ``mean``-model enumeration); beyond it the query fails with
:class:`SearchLimit` instead of running for minutes."""

_COLUMNS = ("Time", "Price", "Comfort Level", "Reliability")


def _check_non_negative(table: CostTable, costs: WeightedCosts, weights: Weights) -> None:
    """Raise :class:`CostError` naming the first item whose weighted additive cost is negative
    or not a number (a negative Time or Price, a Comfort Level or Reliability above its scale,
    a negative Transfer Time). Dijkstra is exact only for non-negative arc costs; with a
    negative one it can loop for ever on a negative cycle."""
    net = table.network
    w = np.array(weights.as_list())
    rows = (
        ("station", costs.leave, table.leave),
        ("station", costs.dest, table.dest),
        ("transfer", costs.transfer, table.transfer),
        ("edge", costs.edge, table.edge),
    )
    for kind, weighted, feats in rows:
        for i, c in enumerate(weighted):
            if c >= 0:
                continue
            obj: object
            if kind == "edge":
                e = net.edges[i]
                item, obj = f"edge {e.name}" + (f" (line {e.line!r})" if e.line else ""), e
            else:
                item, obj = f"station {table.stations[i]!r}", net.vertices[table.stations[i]]
            cols = (
                ["Transfer Time"]
                if kind == "transfer"
                else [_COLUMNS[j] for j in range(4) if not w[j] * feats[i, j] >= 0]
            )
            values = ", ".join(f"{col} {getattr(obj, ATTRIBUTE_OF_COLUMN[col]):g}" for col in cols)
            raise CostError(
                f"{item}: {values} gives a negative cost (Time, Price and Transfer Time must be "
                "at least 0, Comfort Level and Reliability at most their scale; "
                "see maptab validate)"
            )


class Solver:
    """Reusable solver for one network and item mode; precomputes the state graph.

    ``items`` is ``"edge_vertex"`` (default) or ``"vertex"`` (the Map+Mix_tab category: pass
    ``network.with_attributes(vertices=derive_mix(network))``). Per weight vector the arc
    costs are one weighted sum of arrays, cached, so many queries on one map are cheap; a source
    queried again under the same weights reuses a cached shortest-path tree
    (``cache_size`` trees, 0 disables it). ``max_expansions`` bounds every exact search of
    one query (:class:`SearchLimit` beyond it); ``candidates`` (attribute) is how many
    candidate paths are listed before the rest are counted (``None``: the default).
    """

    def __init__(
        self,
        network: Network,
        *,
        items: str = "edge_vertex",
        cache_size: int = 512,
        max_expansions: int = MAX_EXPANSIONS,
    ) -> None:
        _check_items(items)
        self.cache_size = cache_size
        self.max_expansions = max_expansions
        self.candidates: int | None = None
        self._trees: dict[tuple[float, ...], Sequence[float]] = {}
        self._seen: dict[tuple[float, ...], None] = {}
        self.network = network
        self.items = items
        self.table = table = CostTable(network, items)
        n = len(table.stations)
        travel = network.scenario == "travelmap"
        nbrs: list[list[int]] = [[] for _ in range(n)]
        out_hops: list[list[tuple[int, str | None, int]]] = [[] for _ in range(n)]
        for (a, b), opts in table.hops.items():
            nbrs[a].append(b)
            out_hops[a].extend((b, line, k) for line, k in opts)
        self._nbrs = [sorted(v) for v in nbrs]
        # states: a start state per station (numbered like the station), then one state per
        # (station, incoming line); a travelmap has no lines, its start states are its states
        state_of: dict[tuple[int, str | None], int] = {}
        station_of = list(range(n))
        line_in: list[str | None] = [None] * n
        for (_, b), opts in table.hops.items():
            for line, _ in opts:
                if (b, line) not in state_of:
                    if travel:
                        state_of[(b, line)] = b
                        continue
                    state_of[(b, line)] = len(station_of)
                    station_of.append(b)
                    line_in.append(line)
        self.station_of = station_of
        self._state_of = state_of
        self._line_of = line_in if not travel else [None] * n
        self.n_states = len(station_of)
        self._states_at: list[list[int]] = [[] for _ in range(n)]
        for x, u in enumerate(station_of):
            self._states_at[u].append(x)
        tails, heads, at, edges, changes = [], [], [], [], []
        for x in range(self.n_states):
            u = station_of[x]
            for b, line, k in out_hops[u]:
                tails.append(x)
                heads.append(state_of[(b, line)])
                at.append(u)
                edges.append(k)
                changes.append(x >= n and line != line_in[x])
        # an arc's features: leaving its station, its edge, and a transfer when it changes line
        stations, change = np.array(at, dtype=np.int64), np.array(changes, dtype=bool)
        feat = table.leave[stations] + table.edge[np.array(edges, dtype=np.int64)]
        feat[change] += table.transfer[stations[change]]
        self.arc_tail = np.array(tails, dtype=np.int64)
        self.arc_head = np.array(heads, dtype=np.int64)
        self.arc_feat = feat.reshape(len(tails), table.leave.shape[1])
        self._arc_columns = deficit_columns(self.arc_feat)
        # per state, its arcs as (other end, arc number); per weight vector only the list
        # of arc costs changes (_build_arcs). Reverse rows list the arcs into a state in
        # arc order.
        self._fwd_rows: list[list[tuple[int, int]]] = [[] for _ in range(self.n_states)]
        self._rev_rows: list[list[tuple[int, int]]] = [[] for _ in range(self.n_states)]
        for i, (x, y) in enumerate(zip(tails, heads, strict=True)):
            self._fwd_rows[x].append((y, i))
            self._rev_rows[y].append((x, i))
        # with every item feature finite and >= 0, non-negative weights give item costs >= 0
        arrays = (table.leave, table.dest, table.transfer, table.edge)
        self._features_non_negative = all(np.isfinite(a).all() and (a >= 0).all() for a in arrays)
        self._arc_cache: KeyedCache[
            tuple[float, ...], tuple[_Adjacency, _Adjacency, WeightedCosts]
        ] = KeyedCache(16)
        self._solved: KeyedCache[tuple, Solution] = KeyedCache(SOLVED_CACHE)
        self._zero = table.weighted(None)  # the costs of the criteria-free queries

    # ------------------------------------------------------------------ helpers
    def _candidate_cap(self, max_routes: int) -> int:
        """How many candidate paths a query lists before it counts the rest instead: at
        least ``max_routes``, and :attr:`candidates` (default ``max_routes + 64``; nearly
        every candidate is optimal)."""
        more = self.candidates if self.candidates is not None else max_routes + 64
        return max(max_routes, more)

    def _index(self, name: str) -> int:
        key = self.network.resolve(name)
        if key is None:
            raise UnknownStation(name, self.network)
        return self.table.index[key]

    def _endpoints(self, source: str, target: str) -> tuple[int, int]:
        s, t = self._index(source), self._index(target)
        if s == t:
            raise CostError(f"source and target are the same station {self.table.stations[s]!r}")
        return s, t

    def _arcs(self, weights: Weights) -> tuple[_Adjacency, _Adjacency, WeightedCosts]:
        """Forward and reverse adjacency ``[(head, cost), …]`` per state, and the costs."""
        key = tuple(weights.as_list())
        return self._arc_cache.get(key, lambda: self._build_arcs(weights, key))

    def _build_arcs(
        self, weights: Weights, key: tuple[float, ...]
    ) -> tuple[_Adjacency, _Adjacency, WeightedCosts]:
        costs = self.table.weighted(weights)
        if not (self._features_non_negative and all(v >= 0 for v in key)):
            _check_non_negative(self.table, costs, weights)  # names a negative item
        cost = weigh_rows(self._arc_columns, key)
        return _Adjacency(self._fwd_rows, cost), _Adjacency(self._rev_rows, cost), costs

    def _hops_from(self, t: int, until: int | None = None) -> list[int]:
        """Hop distance of every station to ``t`` (``n`` when unreachable); with ``until``,
        only the stations no farther than ``until`` are certain (the search stops once it
        has reached ``until``; the farther ones may be left at ``n``)."""
        n = len(self.table.stations)
        dist = [n] * n
        dist[t] = 0
        frontier = [t]
        adj = self._nbrs
        while frontier and (until is None or dist[until] == n):
            nxt = []
            for u in frontier:
                for v in adj[u]:
                    if dist[v] == n:
                        dist[v] = dist[u] + 1
                        nxt.append(v)
            frontier = nxt
        return dist

    # ------------------------------------------------------------------ criteria-free
    def fewest_stations(self, source: str, target: str) -> list[Route]:
        """The listed routes of :meth:`solve` without weights (fewest stations)."""
        return self.solve(source, target).routes

    def _fewest(self, s: int, t: int, max_routes: int) -> Solution:
        """Fewest-station routes: the paths of the hop-distance DAG (every one is simple,
        the distance to ``t`` falls by one per hop), marked with minimum-transfer
        assignments; counted by :meth:`_count_dag` when there are too many to list."""
        dist = self._hops_from(t, s)
        n = len(dist)
        if dist[s] == n:
            return Solution([], 0)
        adj = self._nbrs
        cap = self._candidate_cap(max_routes)
        paths: list[list[int]] = []

        def walk(path: list[int]) -> bool:
            u = path[-1]
            if u == t:
                paths.append(list(path))
                return len(paths) <= cap
            du = dist[u] - 1
            for v in adj[u]:
                if dist[v] != du:
                    continue
                path.append(v)
                going = walk(path)  # noqa: F821 (deleted once the search is over)
                path.pop()
                if not going:
                    return False
            return True

        complete = walk([s])
        del walk  # breaks the cycle walk -> its cell -> walk: freed now, not by the collector
        zero = self._zero
        found = []
        for p in paths[:cap]:
            _, marks = optimal_assignments(self.table, zero, p)
            found.append((float(len(p)), p, marks))
        routes = _routes(self.table, found)
        if complete:
            return Solution(routes[:max_routes], len(routes))
        query = f"fewest stations from {self._query(s, t)}"
        succ = {u: [v for v in adj[u] if dist[v] == dist[u] - 1] for u in range(n)}
        count = self._count_dag(s, t, succ, zero, [0.0] * self.n_states, 0.0, query)
        return Solution(routes[:max_routes], count, "counted")

    def _query(self, s: int, t: int, weights: Weights | None = None) -> str:
        """How an error names a query: ``'A' to 'B'`` (on map …, and the weights)."""
        names = self.table.stations
        where = f" on map {self.network.map_id!r}" if self.network.map_id else ""
        text = f"{names[s]!r} to {names[t]!r}{where}"
        return text if weights is None else f"{text}, weights {weights.as_list()}"

    # ------------------------------------------------------------------ criteria-based
    def optimal_routes(
        self,
        source: str,
        target: str,
        weights: Weights,
        *,
        model: str = "additive",
        max_detour: int = 2,
        max_routes: int | None = None,
    ) -> list[Route]:
        """The listed optimal routes of :meth:`solve` (see module docstring)."""
        return self.solve(
            source, target, weights, model=model, max_detour=max_detour, max_routes=max_routes
        ).routes

    def solve(
        self,
        source: str,
        target: str,
        weights: Weights | None = None,
        *,
        model: str = "additive",
        max_detour: int = 2,
        max_routes: int | None = None,
    ) -> Solution:
        """Every optimal route, counted exactly, the first ``max_routes`` listed.

        ``weights=None``: the criteria-free gold (fewest stations). ``max_routes`` defaults
        to :data:`MAX_ROUTES`. Raises :class:`SearchLimit` when an exact answer would need
        more than :attr:`max_expansions` search steps.
        """
        if model not in MODELS:
            raise CostError(f"unknown cost model {model!r}; expected one of {MODELS}")
        cap = MAX_ROUTES if max_routes is None else max_routes
        if cap < 1:
            raise CostError(f"max_routes must be at least 1, got {cap}")
        s, t = self._endpoints(source, target)
        w = None if weights is None else tuple(weights.as_list())
        mode = (model, max_detour if model == "mean" else 0) if w else None
        # the search settings are in the key too: a test may change them between queries
        key = (s, t, w, mode, cap, self.candidates, self.max_expansions)
        solved = self._solved.get(key, lambda: self._solve(s, t, weights, model, max_detour, cap))
        # a fresh list per call: a caller may edit it without changing the memo
        return Solution(list(solved.routes), solved.count, solved.method)

    def _solve(
        self, s: int, t: int, weights: Weights | None, model: str, max_detour: int, cap: int
    ) -> Solution:
        if weights is None:
            return self._fewest(s, t, cap)
        if model == "mean":
            return self._mean(s, t, weights, max_detour, cap)
        return self._additive(s, t, weights, cap)

    def _additive(self, s: int, t: int, weights: Weights, max_routes: int) -> Solution:
        """Additive model: tied walks first, exact best-first search when no optimal walk is
        simple, dynamic-programming count when the ties are too many to list."""
        fwd, rev, costs = self._arcs(weights)
        dest = costs.dest[t]
        dist = self._distances(s, t, weights, fwd, dest)
        walk_best = min(dist[x] for x in self._states_at[t])
        if walk_best == math.inf:
            return Solution([], 0)
        slack = _slack(walk_best + dest)
        cap = self._candidate_cap(max_routes)
        paths, complete = self._tied_simple_paths(s, t, dist, rev, slack, cap)
        found = []
        for p in paths:
            cost, marks = optimal_assignments(self.table, costs, p)
            found.append((cost, p, marks))
        best = min((c for c, _, _ in found), default=math.inf)
        simple_optimum = within(best, walk_best + dest)
        if simple_optimum:
            routes = _routes(self.table, [f for f in found if within(f[0], best)])
            if complete:
                return Solution(routes[:max_routes], len(routes))
        query = self._query(s, t, weights)
        h = self._reverse_distances(t, rev)
        if simple_optimum:
            succ = self._tight_dag(s, t, fwd, dist, h, walk_best + slack)
            if succ is not None:
                count = self._count_dag(s, t, succ, costs, h, walk_best, query)
                return Solution(routes[:max_routes], count, "counted")
        # every optimal walk revisits a station, or the ties may: search simple paths, with
        # the best candidate (a simple route, exactly costed) as the first incumbent
        incumbent = best - dest
        found = []
        for p in self._best_first(s, t, fwd, h, dest, query, incumbent):
            cost, marks = optimal_assignments(self.table, costs, p)
            found.append((cost, p, marks))
        best = min(c for c, _, _ in found)
        routes = _routes(self.table, [f for f in found if within(f[0], best)])
        return Solution(routes[:max_routes], len(routes), "best-first")

    def _distances(
        self, s: int, t: int, weights: Weights, fwd: _Adjacency, dest: float = 0.0
    ) -> Sequence[float]:
        """State distances from ``s``: exact for every state within :func:`_slack` of the
        optimum to ``t`` (``dest``: the target's destination item cost, part of ``J``).

        The first query from a source (per weight vector) stops once the target's optimum is
        settled; a repeated source computes the whole tree once and caches it (bounded LRU),
        which serves every later target. States re-entering the source are not expanded
        (no simple path uses them); target states are, harmlessly, in a whole tree.
        """
        key = (*weights.as_list(), s)
        tree = self._trees.get(key)
        if tree is not None:
            return tree
        whole = self.cache_size > 0 and key in self._seen
        if not whole and self.cache_size:
            self._seen[key] = None
            if len(self._seen) > 4 * self.cache_size:
                self._seen.pop(next(iter(self._seen)))
        dist = self._search(s, -1 if whole else t, fwd, dest)
        if whole:
            self._trees[key] = dist
            if len(self._trees) > self.cache_size:
                self._trees.pop(next(iter(self._trees)))
        return dist

    def _search(self, s: int, stop: int, fwd: _Adjacency, dest: float) -> list[float]:
        """The Dijkstra search of :meth:`_distances` (``stop``: the target station, or -1
        for the whole tree)."""
        station_of = self.station_of
        dist = [math.inf] * self.n_states
        dist[s] = 0.0
        heap = [(0.0, s)]
        bound = math.inf
        pop, push = heapq.heappop, heapq.heappush
        rows, cost = fwd.rows, fwd.cost
        while heap:
            d, x = pop(heap)
            if d > dist[x]:
                continue
            if d > bound:
                break
            u = station_of[x]
            if u == stop:
                if bound == math.inf:
                    bound = d + _slack(d + dest)
                continue
            if u == s and x != s:  # re-entering the source: never on a simple path
                continue
            for y, i in rows[x]:
                nd = d + cost[i]
                if nd < dist[y]:
                    dist[y] = nd
                    if nd <= bound:  # beyond the bound it would never be expanded
                        push(heap, (nd, y))
        return dist

    def _tied_simple_paths(
        self, s: int, t: int, dist: Sequence[float], rev: _Adjacency, slack: float, cap: int
    ) -> tuple[list[list[int]], bool]:
        """Simple station paths of the state walks to ``t`` whose every arc is tight within
        ``slack`` (``dist[y] + c <= dist[x] + slack``), and whether that list is complete.

        A walk that costs at most ``optimum + slack`` has every arc tight within ``slack``
        (its prefix to ``y`` costs at least ``dist[y]``, its rest at least the cost-to-go of
        ``x``), so every such simple path is returned; some returned paths may cost more.
        The backtrack stops (incomplete) after ``cap`` paths or :attr:`max_expansions` steps.
        """
        best = min(dist[x] for x in self._states_at[t])
        targets = [x for x in self._states_at[t] if dist[x] <= best + slack]
        station_of = self.station_of
        paths: list[list[int]] = []
        budget = [self.max_expansions]
        rows, cost = rev.rows, rev.cost

        def back(states: list[int], seq: list[int]) -> bool:
            depth = len(seq)
            try:
                while True:
                    budget[0] -= 1
                    if budget[0] < 0:
                        return False
                    tied = [  # the tight predecessor states, in arc order
                        y
                        for x in states
                        for dx in (dist[x] + slack,)
                        for y, i in rows[x]
                        if dist[y] + cost[i] <= dx
                    ]
                    if not tied:
                        return True
                    u = station_of[tied[0]]
                    if len(tied) == 1 or all(  # one way back: follow it without recursing
                        map(u.__eq__, map(station_of.__getitem__, tied))
                    ):
                        if u != s and u not in seq:
                            seq.append(u)
                            states = tied if len(tied) == 1 else list(dict.fromkeys(tied))
                            continue
                        by_station = {u: tied}
                    else:
                        by_station = {}
                        for y in tied:
                            by_station.setdefault(station_of[y], []).append(y)
                    for u, ys in by_station.items():
                        if u == s:
                            if s in ys:
                                paths.append([s, *reversed(seq)])
                                if len(paths) > cap:
                                    return False
                            continue
                        if u in seq:
                            continue
                        seq.append(u)
                        going = back(  # noqa: F821 (deleted once the search is over)
                            ys if len(ys) == 1 else list(dict.fromkeys(ys)), seq
                        )
                        seq.pop()
                        if not going:
                            return False
                    return True
            finally:
                del seq[depth:]  # the stations followed without recursing

        complete = back(targets, [t])
        del back  # breaks the cycle back -> its cell -> back (and frees dist, paths now)
        return paths[:cap], complete

    def _tight_dag(
        self, s: int, t: int, fwd: _Adjacency, dist: Sequence[float], h: list[float], bound: float
    ) -> dict[int, list[int]] | None:
        """The station graph of the arcs on near-optimal walks, or ``None`` if it has a cycle.

        Station ``u → v`` is kept when some state arc ``x → y`` between them lies on a walk of
        cost at most ``bound`` (``dist[x] + c + h[y] <= bound``); arcs into ``s`` and out of
        ``t`` are left out (no simple route uses them). When this graph is acyclic, every walk
        in it visits each station at most once, so every near-optimal walk is a simple route.
        """
        station_of = self.station_of
        succ: dict[int, set[int]] = {}
        for x, dx in enumerate(dist):
            u = station_of[x]
            if dx > bound or u == t or (u == s and x != s):
                continue
            for y, c in fwd[x]:
                v = station_of[y]
                if v != s and dx + c + h[y] <= bound:
                    succ.setdefault(u, set()).add(v)
        # Kahn's algorithm over the part reachable from s
        seen, stack = {s}, [s]
        while stack:
            for v in succ.get(stack.pop(), ()):
                if v not in seen:
                    seen.add(v)
                    stack.append(v)
        indeg = dict.fromkeys(seen, 0)
        for u in seen:
            for v in succ.get(u, ()):
                indeg[v] += 1
        ready = [u for u in seen if indeg[u] == 0]
        done = 0
        while ready:
            u = ready.pop()
            done += 1
            for v in succ.get(u, ()):
                indeg[v] -= 1
                if indeg[v] == 0:
                    ready.append(v)
        if done < len(seen):
            return None
        return {u: sorted(succ.get(u, ())) for u in seen}

    def _count_dag(
        self,
        s: int,
        t: int,
        succ: dict[int, list[int]],
        costs: WeightedCosts,
        h: list[float],
        base: float,
        query: str,
    ) -> int:
        """Exact number of optimal routes (simple path × marking) among the paths of the
        acyclic station graph ``succ`` from ``s`` to ``t``, without listing them.

        Dynamic programme over path prefixes in topological order. A prefix is summarised by
        its *runs*: one run per set of transfer stations so far, holding the lines that can
        still carry the open segment (since the last transfer) and, per line, the excess
        ``g + h − base`` of the cheapest such assignment, in integer units of 2⁻¹⁶ of the tie
        tolerance (``base``: the walk optimum; ``h``: admissible cost-to-go). Runs whose every
        excess is above the slack are dropped; among runs with equal lines and excesses only
        the fewest transfers can ever become a marking, so only those are kept, with their
        multiplicity. Prefixes with the same summary have the same completions, so the
        programme counts prefixes per (station, summary) with exact integers. At ``t`` a
        path's cost is its least run; it is optimal within the tolerance of the best path,
        and its markings are its near-optimal runs with the fewest transfers (as in
        :func:`maptab.core.costs.optimal_assignments`).
        """
        tol = REL_TOL * abs(base + costs.dest[t]) + 1e-12
        unit = tol / 65536
        tol_units, slack_units = 65536, 3 * 65536
        hops, state_of, line_of = self.table.hops, self._state_of, self._line_of
        edge, leave, transfer = costs.edge, costs.leave, costs.transfer
        travel = self.network.scenario == "travelmap"

        def units(x: int, y: int, c: float) -> int:
            return round((c + h[y] - h[x]) / unit)

        def step(u: int, v: int, runs: tuple) -> tuple:
            opts = hops[(u, v)]
            out: dict[tuple, list[int]] = {}

            def add(open_: dict[int, int], transfers: int, count: int) -> None:
                key = tuple(sorted(open_.items()))
                cur = out.get(key)
                if cur is None or transfers < cur[0]:
                    out[key] = [transfers, count]
                elif transfers == cur[0]:
                    cur[1] += count

            def keep(into: dict[int, int], y: int, ex: int) -> None:
                if ex <= slack_units and ex < into.get(y, slack_units + 1):
                    into[y] = ex

            for open_, transfers, count in runs:
                ride: dict[int, int] = {}
                change: dict[int, int] = {}
                for x, ex in open_:
                    for line2, k in opts:
                        y = state_of[(v, line2)]
                        if x == s:  # the first hop: no transfer
                            keep(ride, y, ex + units(x, y, leave[u] + edge[k]))
                            continue
                        if line2 == line_of[x]:
                            keep(ride, y, ex + units(x, y, leave[u] + edge[k]))
                        if not travel:
                            keep(change, y, ex + units(x, y, leave[u] + edge[k] + transfer[u]))
                if ride:
                    add(ride, transfers, count)
                if change:
                    add(change, transfers + 1, count)
            return tuple(sorted((k, tr, c) for k, (tr, c) in out.items()))

        order = _topological_order(s, succ)
        table: dict[int, dict[tuple, int]] = {u: {} for u in order}
        table[s][((((s, 0),), 0, 1),)] = 1
        summaries = 0
        for u in order:
            if u == t:
                continue
            here = table.pop(u)
            for runs, n_prefixes in here.items():
                for v in succ.get(u, ()):
                    new = step(u, v, runs)
                    if not new:
                        continue
                    row = table[v]
                    if new not in row:
                        summaries += 1
                        if summaries > self.max_expansions:
                            raise SearchLimit(f"counting routes {query}", self.max_expansions)
                    row[new] = row.get(new, 0) + n_prefixes
        finals = table.get(t, {})
        if not finals:
            return 0
        cost_of = {runs: min(min(ex for _, ex in o) for o, _, _ in runs) for runs in finals}
        best = min(cost_of.values())
        total = 0
        for runs, n_paths in finals.items():
            cost = cost_of[runs]
            if cost > best + tol_units:
                continue
            tied = [(tr, c) for o, tr, c in runs if min(ex for _, ex in o) <= cost + tol_units]
            fewest = min(tr for tr, _ in tied)
            total += n_paths * sum(c for tr, c in tied if tr == fewest)
        return total

    def _reverse_distances(self, t: int, rev: _Adjacency) -> list[float]:
        """Exact walk cost-to-go of every state to any state of station ``t`` (reverse
        Dijkstra on the state graph; ``inf`` when ``t`` is unreachable). A lower bound on the
        rest of every simple path, and consistent: ``h[x] <= c + h[y]`` for every arc."""
        h = [math.inf] * self.n_states
        heap = []
        for x in self._states_at[t]:
            h[x] = 0.0
            heap.append((0.0, x))
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            d, x = pop(heap)
            if d > h[x]:
                continue
            for y, c in rev[x]:
                nd = d + c
                if nd < h[y]:
                    h[y] = nd
                    push(heap, (nd, y))
        return h

    def _best_first(
        self,
        s: int,
        t: int,
        fwd: _Adjacency,
        h: list[float],
        dest: float,
        query: str,
        incumbent: float = math.inf,
    ) -> list[list[int]]:
        """Every simple path whose cost is within :func:`_slack` of the simple-path optimum
        (exact A* over partial simple paths; used when no optimal walk is simple).

        A search node is a simple station path ``s … u`` with, per state ``x`` at ``u``, the
        least cost ``g[x]`` of a line assignment of the path ending in ``x`` (a per-prefix
        dynamic programme). Its key ``f = min_x g[x] + h[x]`` is a lower bound on every
        simple completion (``h``: :meth:`_reverse_distances`), and ``f`` never decreases
        from a node to its children (``h`` is consistent). Nodes leave the heap in order of
        ``f``, so the first complete path to leave it is optimal (every prefix of an optimal
        path has ``f <= S`` and leaves before it), and the search goes on until ``f``
        exceeds the optimum ``S`` by the slack, collecting every near-optimal path; each is
        then scored exactly by the caller. ``incumbent``, the cost (without ``dest``) of some
        simple route, bounds ``S`` from above: children beyond it plus the slack are never
        queued. Stops with :class:`SearchLimit` after :attr:`max_expansions` expansions.
        """
        station_of = self.station_of
        limit = self.max_expansions
        counter = itertools.count()
        heap: list[tuple[float, int, int, int, dict[int, float], tuple | None]] = [
            (h[s], next(counter), s, 1 << s, {s: 0.0}, None)
        ]
        found: list[list[int]] = []
        ceiling = incumbent + _slack(incumbent + dest) if incumbent < math.inf else math.inf
        stop = math.inf
        expansions = 0
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            f, _, u, mask, g, parent = pop(heap)
            if f > stop:
                break
            if u == t:
                if stop == math.inf:
                    stop = f + _slack(f + dest)
                path = [u]
                node = parent
                while node is not None:
                    path.append(node[0])
                    node = node[1]
                found.append(path[::-1])
                continue
            expansions += 1
            if expansions > limit:
                raise SearchLimit(f"route search {query}", limit)
            here = (u, parent)
            nxt: dict[int, dict[int, float]] = {}
            for x, gx in g.items():
                for y, c in fwd[x]:
                    v = station_of[y]
                    if mask >> v & 1:
                        continue
                    row = nxt.get(v)
                    if row is None:
                        nxt[v] = {y: gx + c}
                    elif gx + c < row.get(y, math.inf):
                        row[y] = gx + c
            for v, row in nxt.items():
                fv = min(gy + h[y] for y, gy in row.items())
                if fv <= min(stop, ceiling) and fv < math.inf:
                    push(heap, (fv, next(counter), v, mask | 1 << v, row, here))
        return found

    def _mean(self, s: int, t: int, weights: Weights, max_detour: int, max_routes: int) -> Solution:
        """``mean`` model: exact over simple paths with ≤ shortest + max_detour stations.

        Enumerates those paths (depth first, pruned by hop distance to ``t``) and scores each
        line assignment; every candidate is visited, so the count is exact. The number of
        paths grows like ``branching ** max_detour`` per shortest path, so the search stops
        with :class:`SearchLimit` after :attr:`max_expansions` steps (scored assignments
        included).
        """
        if max_detour < 0:
            raise CostError(f"max_detour must be non-negative, got {max_detour}")
        dist = self._hops_from(t)
        n = len(dist)
        if dist[s] == n:
            return Solution([], 0)
        limit = dist[s] + 1 + max_detour  # stations
        adj = self._nbrs
        hops = self.table.hops
        found = []
        steps = [0]
        query = f"{self._query(s, t, weights)}, mean model, max_detour {max_detour}"

        def tick(k: int) -> None:
            steps[0] += k
            if steps[0] > self.max_expansions:
                raise SearchLimit(f"route search {query}", self.max_expansions)

        def walk(path: list[int], on: set[int]) -> None:
            tick(1)
            u = path[-1]
            if u == t:
                tick(math.prod(len(hops[(a, b)]) for a, b in itertools.pairwise(path)))
                cost, marks = mean_assignments(self.table, weights, path)
                found.append((cost, list(path), marks))
                return
            for v in adj[u]:
                if v not in on and len(path) + 1 + dist[v] <= limit:
                    path.append(v)
                    on.add(v)
                    walk(path, on)  # noqa: F821 (deleted once the search is over)
                    on.discard(v)
                    path.pop()

        walk([s], {s})
        del walk  # breaks the cycle walk -> its cell -> walk
        best = min(c for c, _, _ in found)
        routes = _routes(self.table, [f for f in found if within(f[0], best)])
        return Solution(routes[:max_routes], len(routes), "enumerated")


# --------------------------------------------------------------------------- module functions
_SOLVERS: IdentityCache[Network, Solver] = IdentityCache(4)


def _solver(network: Network, items: str) -> Solver:
    """A :class:`Solver` for ``network``, reused while the same objects are asked again
    (:mod:`maptab._cache`; the key also holds the station and edge containers and sizes)."""
    return _SOLVERS.get(
        network,
        lambda: Solver(network, items=items),
        id(network.vertices),
        id(network.edges),
        len(network.vertices),
        len(network.edges),
        items,
    )


def solve_routes(
    network: Network,
    source: str,
    target: str,
    weights: Weights | None = None,
    *,
    items: str = "edge_vertex",
    model: str = "additive",
    max_detour: int = 2,
    max_routes: int | None = None,
) -> Solution:
    """Every optimal route from ``source`` to ``target`` (SPEC 4): exact count, first
    ``max_routes`` (default :data:`MAX_ROUTES`) listed, sorted by cost then route string.

    ``weights=None``: criteria-free gold (fewest stations). ``items="vertex"`` scores vertex
    items only (Map+Mix_tab; pass the Mix_tab network); ``model="mean"`` uses SPEC 3's
    alternative model over simple paths with at most ``shortest + max_detour`` stations.
    Names may be table names or display labels (:class:`UnknownStation` otherwise). No
    route (count 0) when the stations are not connected.
    """
    return _solver(network, items).solve(
        source, target, weights, model=model, max_detour=max_detour, max_routes=max_routes
    )


def fewest_stations(
    network: Network, source: str, target: str, *, max_routes: int | None = None
) -> list[Route]:
    """The listed fewest-station routes of :func:`solve_routes` (criteria-free gold)."""
    return solve_routes(network, source, target, max_routes=max_routes).routes


def optimal_routes(
    network: Network,
    source: str,
    target: str,
    weights: Weights,
    *,
    items: str = "edge_vertex",
    model: str = "additive",
    max_detour: int = 2,
    max_routes: int | None = None,
) -> list[Route]:
    """The listed optimal routes of :func:`solve_routes` for ``weights`` (criteria gold)."""
    return solve_routes(
        network,
        source,
        target,
        weights,
        items=items,
        model=model,
        max_detour=max_detour,
        max_routes=max_routes,
    ).routes


def brute_force_routes(
    network: Network,
    source: str,
    target: str,
    weights: Weights | None = None,
    *,
    items: str = "edge_vertex",
    model: str = "additive",
    max_detour: int = 2,
) -> list[Route]:
    """Reference enumerator: every simple path, every line assignment, scored directly.

    Same definitions as :func:`fewest_stations` (``weights=None``) and
    :func:`optimal_routes`; exponential, for tests on small networks only.
    """
    _check_items(items, model)
    table = CostTable(network, items)
    key_s, key_t = network.resolve(source), network.resolve(target)
    if key_s is None:
        raise UnknownStation(source, network)
    if key_t is None:
        raise UnknownStation(target, network)
    s, t = table.index[key_s], table.index[key_t]
    nbrs = {i: sorted({b for (a, b) in table.hops if a == i}) for i in range(len(table.stations))}
    paths: list[list[int]] = []

    def walk(path: list[int]) -> None:
        if path[-1] == t:
            paths.append(list(path))
            return
        for v in nbrs[path[-1]]:
            if v not in path:
                walk([*path, v])

    walk([s])
    if not paths:
        return []
    shortest = min(len(p) for p in paths)
    if weights is None or model == "mean":
        limit = shortest if weights is None else shortest + max_detour
        paths = [p for p in paths if len(p) <= limit]
    w = None if weights is None else weights.as_list()
    net_edges = network.edges
    scored = []  # (route cost, path, assignment cost, transfer positions, lines)
    for p in paths:
        for edges in itertools.product(
            *[[e for _, e in table.hops[(a, b)]] for a, b in itertools.pairwise(p)]
        ):
            feats = table.feature_sum(p, edges)
            if weights is None:
                j = 0.0
            elif model == "mean":
                j = mean_cost(feats, weights)
            else:
                j = weigh(feats[:4].tolist(), w)
            lines = tuple(net_edges[k].line for k in edges)
            changes = tuple(h for h in range(1, len(lines)) if lines[h - 1] != lines[h])
            scored.append((p, j, changes, lines))
    by_path: dict[tuple[int, ...], list] = {}
    for p, j, changes, lines in scored:
        by_path.setdefault(tuple(p), []).append((j, changes, lines))
    found = []
    for key, rows in by_path.items():
        jbest = min(r[0] for r in rows)
        tied = [r for r in rows if within(r[0], jbest)]
        fewest = min(len(r[1]) for r in tied)
        marks: dict[tuple[int, ...], tuple[str | None, ...]] = {}
        for _, m, lines in tied:
            if len(m) == fewest:
                marks.setdefault(m, lines)
        cost = float(len(key)) if weights is None else jbest
        found.append((cost, list(key), [Marking(ls, m) for m, ls in sorted(marks.items())]))
    best = min(c for c, _, _ in found)
    return _routes(table, [f for f in found if within(f[0], best)])
