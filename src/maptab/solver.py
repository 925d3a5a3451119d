"""Exact route solver: every optimal simple route with its transfer marks (SPEC 4).

Definitions
-----------
Feasible routes are **simple paths** ``source … target`` (no station twice).

* **Criteria-free** (:func:`fewest_stations`): all routes with the fewest stations; each is
  marked with the transfers of its minimum-transfer line assignment(s).
* **Criteria-based** (:func:`optimal_routes`): all routes whose cost ``J``
  (:mod:`maptab.costs`, SPEC 3) is within the relative tolerance ``1e-9`` of the optimum, each
  marked with its J-optimal line assignment; among tied assignments the fewest transfers;
  if that still ties with different transfer stations, each marking is a separate
  :class:`Route`.

Algorithm (``additive`` model)
------------------------------
Dijkstra over *states* ``(station, incoming line)`` (plus one start state per station), where
an arc ``(u, l_in) → (v, l)`` follows an edge ``u-v`` of line ``l`` and costs
``leave(u) + edge + [l ≠ l_in]·transfer(u)``. Item costs must be non-negative (a
:class:`~maptab.costs.CostError` names the first item that is not). The solver backtracks
from the target over *tied predecessors* (``dist[y] + c ≤ dist[x] + slack``, where the slack
is a small multiple of the tie tolerance measured on the optimum ``J`` itself, never on the
partial distance), enumerating distinct station sequences and dropping any that repeats a
station; every simple route within the tolerance of the optimum is among them, and each
candidate is then scored exactly: its J-optimal, fewest-transfer markings come from
:func:`maptab.costs.optimal_assignments`, and candidates outside the tolerance are dropped.

Why simple paths need care: the state-graph optimum is taken over *walks*, and a walk may
revisit a station through a line change (ride a shared track one stop on line A, change
to line B where the transfer is cheap, ride back) and be strictly cheaper than every simple
path. Every simple path is a walk, so the walk optimum ``D`` is a lower bound; if some
candidate is within the tolerance of ``D``, the simple optima are among the candidates.
Otherwise the solver falls back, for that query only, to an exact
branch-and-bound search over simple paths (depth first, per-prefix line-assignment DP,
pruned with the exact walk cost-to-go from a reverse Dijkstra, an admissible bound).

The ``mean`` model is not additive; its candidates are the simple paths with at most
``shortest + max_detour`` stations, enumerated exactly with a hop-distance bound.
"""

from __future__ import annotations

import difflib
import heapq
import itertools
import math
from dataclasses import dataclass

import numpy as np

from maptab.costs import (
    MODELS,
    REL_TOL,
    CostError,
    CostTable,
    Marking,
    WeightedCosts,
    Weights,
    _check_items,
    mean_assignments,
    mean_cost,
    optimal_assignments,
    within,
)
from maptab.network import Network
from maptab.tables import ATTRIBUTE_OF_COLUMN


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
        marked = set(self.transfers)
        return "-".join(f"{s}(transfer)" if s in marked else s for s in self.stations)

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
        stations = tuple(names[i] for i in path)
        for m in marks:
            out.append(Route(stations, tuple(stations[h] for h in m.transfers), m.lines, cost))
    return sorted(out, key=lambda r: (r.cost, r.format()))


def _slack(j: float) -> float:
    """How far above the optimum ``j`` the state search looks for candidates: three times the
    tie tolerance of :func:`maptab.costs.within`, so that every route within the tolerance
    of the best *simple* route is found whenever that route is within the tolerance of the
    walk optimum ``j`` (candidates are then filtered with their exact cost)."""
    return 3 * (REL_TOL * abs(j) + 1e-12)


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
    costs are one matrix product, cached, so many queries on one map are cheap; a source
    queried again under the same weights reuses a cached shortest-path tree
    (``cache_size`` trees, 0 disables it).
    """

    def __init__(
        self, network: Network, *, items: str = "edge_vertex", cache_size: int = 512
    ) -> None:
        _check_items(items)
        self.cache_size = cache_size
        self._trees: dict[tuple[float, ...], list[float]] = {}
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
        self.n_states = len(station_of)
        self._states_at: list[list[int]] = [[] for _ in range(n)]
        for x, u in enumerate(station_of):
            self._states_at[u].append(x)
        tails, heads, feats = [], [], []
        for x in range(self.n_states):
            u = station_of[x]
            for b, line, k in out_hops[u]:
                tails.append(x)
                heads.append(state_of[(b, line)])
                row = table.leave[u] + table.edge[k]
                if x >= n and line != line_in[x]:
                    row = row + table.transfer[u]
                feats.append(row)
        self.arc_tail = np.array(tails, dtype=np.int64)
        self.arc_head = np.array(heads, dtype=np.int64)
        self.arc_feat = np.array(feats).reshape(len(tails), table.leave.shape[1])
        self._cache: dict[tuple[float, ...], tuple[list, list, WeightedCosts]] = {}

    # ------------------------------------------------------------------ helpers
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

    def _arcs(self, weights: Weights) -> tuple[list, list, WeightedCosts]:
        """Forward and reverse adjacency ``[(head, cost), …]`` per state, and the costs."""
        key = tuple(weights.as_list())
        hit = self._cache.get(key)
        if hit is None:
            costs = self.table.weighted(weights)
            _check_non_negative(self.table, costs, weights)
            w = np.zeros(self.arc_feat.shape[1])
            w[:4] = key
            cost = (self.arc_feat @ w).tolist()
            fwd: list[list[tuple[int, float]]] = [[] for _ in range(self.n_states)]
            rev: list[list[tuple[int, float]]] = [[] for _ in range(self.n_states)]
            for x, y, c in zip(self.arc_tail.tolist(), self.arc_head.tolist(), cost, strict=True):
                fwd[x].append((y, c))
                rev[y].append((x, c))
            if len(self._cache) >= 16:
                self._cache.pop(next(iter(self._cache)))
            hit = self._cache[key] = (fwd, rev, costs)
        return hit

    def _hops_from(self, t: int) -> list[int]:
        """Hop distance of every station to ``t`` (``n`` when unreachable)."""
        n = len(self.table.stations)
        dist = [n] * n
        dist[t] = 0
        frontier = [t]
        adj = self._nbrs
        while frontier:
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
        """All routes with the fewest stations, marked with minimum-transfer assignments."""
        s, t = self._endpoints(source, target)
        dist = self._hops_from(t)
        n = len(dist)
        if dist[s] == n:
            return []
        adj = self._nbrs
        paths: list[list[int]] = []

        def walk(path: list[int]) -> None:
            u = path[-1]
            if u == t:
                paths.append(list(path))
                return
            for v in adj[u]:
                if dist[v] == dist[u] - 1:
                    path.append(v)
                    walk(path)
                    path.pop()

        walk([s])
        zero = self.table.weighted(None)
        found = []
        for p in paths:
            _, marks = optimal_assignments(self.table, zero, p)
            found.append((float(len(p)), p, marks))
        return _routes(self.table, found)

    # ------------------------------------------------------------------ criteria-based
    def optimal_routes(
        self,
        source: str,
        target: str,
        weights: Weights,
        *,
        model: str = "additive",
        max_detour: int = 2,
    ) -> list[Route]:
        """All optimal routes for ``weights`` under ``model`` (see module docstring)."""
        if model not in MODELS:
            raise CostError(f"unknown cost model {model!r}; expected one of {MODELS}")
        s, t = self._endpoints(source, target)
        if model == "mean":
            return self._mean(s, t, weights, max_detour)
        fwd, rev, costs = self._arcs(weights)
        dist = self._distances(s, t, weights, fwd, costs.dest[t])
        walk_best = min(dist[x] for x in self._states_at[t])
        if walk_best == math.inf:
            return []
        walk_best += costs.dest[t]
        found = []
        for p in self._tied_simple_paths(s, t, dist, rev, _slack(walk_best)):
            cost, marks = optimal_assignments(self.table, costs, p)
            found.append((cost, p, marks))
        if not found or not within(min(c for c, _, _ in found), walk_best):
            # every optimal walk revisits a station: search the simple paths themselves
            found = []
            for p in self._branch_and_bound(s, t, fwd, rev):
                cost, marks = optimal_assignments(self.table, costs, p)
                found.append((cost, p, marks))
        best = min(c for c, _, _ in found)
        return _routes(self.table, [f for f in found if within(f[0], best)])

    def _distances(
        self, s: int, t: int, weights: Weights, fwd: list, dest: float = 0.0
    ) -> list[float]:
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
        station_of = self.station_of
        dist = [math.inf] * self.n_states
        dist[s] = 0.0
        heap = [(0.0, s)]
        bound = math.inf
        stop = -1 if whole else t
        pop, push = heapq.heappop, heapq.heappush
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
            for y, c in fwd[x]:
                nd = d + c
                if nd < dist[y]:
                    dist[y] = nd
                    push(heap, (nd, y))
        if whole:
            self._trees[key] = dist
            if len(self._trees) > self.cache_size:
                self._trees.pop(next(iter(self._trees)))
        return dist

    def _tied_simple_paths(
        self, s: int, t: int, dist: list[float], rev: list, slack: float
    ) -> list[list[int]]:
        """Simple station paths of the state walks to ``t`` whose every arc is tight within
        ``slack`` (``dist[y] + c <= dist[x] + slack``).

        A walk that costs at most ``optimum + slack`` has every arc tight within ``slack``
        (its prefix to ``y`` costs at least ``dist[y]``, its rest at least the cost-to-go of
        ``x``), so every such simple path is returned; some returned paths may cost more.
        """
        station_of = self.station_of
        best = min(dist[x] for x in self._states_at[t])
        targets = [x for x in self._states_at[t] if dist[x] <= best + slack]
        paths: list[list[int]] = []

        def back(states: list[int], seq: list[int]) -> None:
            by_station: dict[int, list[int]] = {}
            for x in states:
                dx = dist[x] + slack
                for y, c in rev[x]:
                    if dist[y] + c <= dx:
                        by_station.setdefault(station_of[y], []).append(y)
            for u, ys in by_station.items():
                if u == s:
                    if s in ys:
                        paths.append([s, *reversed(seq)])
                    continue
                if u in seq:
                    continue
                seq.append(u)
                back(list(dict.fromkeys(ys)), seq)
                seq.pop()

        back(targets, [t])
        return paths

    def _branch_and_bound(self, s: int, t: int, fwd: list, rev: list) -> list[list[int]]:
        """Exact search for all optimal simple paths (used when no optimal walk is simple)."""
        station_of = self.station_of
        # h: exact walk cost-to-go to any target state (reverse Dijkstra), a lower bound
        h = [math.inf] * self.n_states
        heap = []
        for x in self._states_at[t]:
            h[x] = 0.0
            heap.append((0.0, x))
        heapq.heapify(heap)
        while heap:
            d, x = heapq.heappop(heap)
            if d > h[x]:
                continue
            for y, c in rev[x]:
                if d + c < h[y]:
                    h[y] = d + c
                    heapq.heappush(heap, (d + c, y))
        found: list[tuple[float, list[int]]] = []
        best = [math.inf]

        def expand(g: dict[int, float], path: list[int]) -> None:
            nxt: dict[int, dict[int, float]] = {}
            for x, gx in g.items():
                for y, c in fwd[x]:
                    v = station_of[y]
                    if v in path:
                        continue
                    row = nxt.setdefault(v, {})
                    if gx + c < row.get(y, math.inf):
                        row[y] = gx + c
            ranked = sorted(
                (min(gy + h[y] for y, gy in row.items()), v, row) for v, row in nxt.items()
            )
            for lb, v, row in ranked:
                if not within(lb, best[0]):
                    break
                if v == t:
                    found.append((lb, [*path, v]))
                    best[0] = min(best[0], lb)
                    continue
                path.append(v)
                expand(row, path)
                path.pop()

        expand({s: 0.0}, [s])
        return [p for c, p in found if within(c, best[0])]

    def _mean(self, s: int, t: int, weights: Weights, max_detour: int) -> list[Route]:
        """``mean`` model: exact over simple paths with ≤ shortest + max_detour stations."""
        if max_detour < 0:
            raise CostError(f"max_detour must be non-negative, got {max_detour}")
        dist = self._hops_from(t)
        n = len(dist)
        if dist[s] == n:
            return []
        limit = dist[s] + 1 + max_detour  # stations
        adj = self._nbrs
        found = []

        def walk(path: list[int], on: set[int]) -> None:
            u = path[-1]
            if u == t:
                cost, marks = mean_assignments(self.table, weights, path)
                found.append((cost, list(path), marks))
                return
            for v in adj[u]:
                if v not in on and len(path) + 1 + dist[v] <= limit:
                    path.append(v)
                    on.add(v)
                    walk(path, on)
                    on.discard(v)
                    path.pop()

        walk([s], {s})
        best = min(c for c, _, _ in found)
        return _routes(self.table, [f for f in found if within(f[0], best)])


# --------------------------------------------------------------------------- module functions
_LAST: list[tuple[tuple, Solver]] = []


def _solver(network: Network, items: str) -> Solver:
    """A :class:`Solver` for ``network``, reusing the last one built for the same objects."""
    key = (
        id(network),
        id(network.vertices),
        id(network.edges),
        len(network.vertices),
        len(network.edges),
        items,
    )
    for k, solver in _LAST:
        if k == key and solver.network is network:
            return solver
    solver = Solver(network, items=items)
    _LAST[:] = [(key, solver), *_LAST[:3]]
    return solver


def fewest_stations(network: Network, source: str, target: str) -> list[Route]:
    """All fewest-station routes from ``source`` to ``target`` (criteria-free gold, SPEC 4).

    Names may be table names or display labels; raises :class:`UnknownStation`. Returns
    ``[]`` when the two stations are not connected.
    """
    return _solver(network, "edge_vertex").fewest_stations(source, target)


def optimal_routes(
    network: Network,
    source: str,
    target: str,
    weights: Weights,
    *,
    items: str = "edge_vertex",
    model: str = "additive",
    max_detour: int = 2,
) -> list[Route]:
    """All optimal routes for ``weights`` (criteria-based gold, SPEC 4), sorted by cost.

    ``items="vertex"`` scores vertex items only (Map+Mix_tab; pass the Mix_tab network);
    ``model="mean"`` uses SPEC 3's alternative model over simple paths with at most
    ``shortest + max_detour`` stations. Returns ``[]`` when the stations are not connected.
    """
    return _solver(network, items).optimal_routes(
        source, target, weights, model=model, max_detour=max_detour
    )


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
    for name, key in ((source, key_s), (target, key_t)):
        if key is None:
            raise UnknownStation(name, network)
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
    w = None if weights is None else np.array(weights.as_list())
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
                j = float(feats[:4] @ w)
            lines = tuple(net_edges[k].line for k in edges)
            marks = tuple(h for h in range(1, len(lines)) if lines[h - 1] != lines[h])
            scored.append((p, j, marks, lines))
    by_path: dict[tuple[int, ...], list] = {}
    for p, j, marks, lines in scored:
        by_path.setdefault(tuple(p), []).append((j, marks, lines))
    found = []
    for p, rows in by_path.items():
        jbest = min(r[0] for r in rows)
        tied = [r for r in rows if within(r[0], jbest)]
        fewest = min(len(r[1]) for r in tied)
        marks = {}
        for _, m, lines in tied:
            if len(m) == fewest:
                marks.setdefault(m, lines)
        cost = float(len(p)) if weights is None else jbest
        found.append((cost, list(p), [Marking(ls, m) for m, ls in sorted(marks.items())]))
    best = min(c for c, _, _ in found)
    return _routes(table, [f for f in found if within(f[0], best)])
