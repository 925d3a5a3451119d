"""Map and query difficulty, and the train/test map split (SPEC 8; MapTab appendix C.2).

Every metric here is computed on the *station graph*: one node per station (spot), one edge
per pair of adjacent stations. Two lines sharing a track segment give two Edge_tab rows but
one station-graph edge, so parallel edges are merged before counting ``|E|`` — the graph a
route walks on, and the only reading under which the meshedness coefficient keeps its
meaning (a cycle count).

Map difficulty
    ``GS = |V| + |E|``; ``WASP`` = node-weighted mean over connected components of the
    component's average shortest-path length (hops); ``MC = (|E| - |V| + 2) / |E|``. Each
    metric is min-max normalised over the maps of one scenario and the normalised metrics are
    averaged (metromap: GS, WASP; travelmap: GS, WASP, MC). The averages are sorted and cut
    into thirds: easy, medium, hard.

Query difficulty
    ``SPLI(s, t)`` = hops of a shortest ``s``–``t`` path (metromap); ``SPCI(s, t)`` = mean hop
    length over *all* simple ``s``–``t`` paths (travelmap). Queries of one map are sorted by
    their index and cut into thirds the same way.

Split
    Maps of one scenario sorted by difficulty score are cut into consecutive triples (the last
    group may hold one or two maps); one map per group, drawn with a seeded generator, goes to
    the test split. 160 metromaps give 54 test maps and 168 travelmaps 56: the paper's
    218 train / 110 test.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction

import numpy as np

from maptab.core.network import Network
from maptab.errors import MaptabError

LEVELS: tuple[str, str, str] = ("easy", "medium", "hard")
SPLITS: tuple[str, str] = ("train", "test")


class DifficultyError(MaptabError):
    """A metric asked of a graph where it is undefined (no edge, unknown or unreachable station)."""


# --------------------------------------------------------------------------- station graph
def _station_graph(network: Network) -> tuple[list[str], list[list[int]]]:
    """Station names in table order and, per station index, its distinct neighbours' indices."""
    names = network.stations
    index = {s: i for i, s in enumerate(names)}
    adj: list[set[int]] = [set() for _ in names]
    for e in network.edges:
        i, j = index[e.u], index[e.v]
        adj[i].add(j)
        adj[j].add(i)
    return names, [sorted(a) for a in adj]


def _bfs(adj: Sequence[Sequence[int]], source: int) -> list[int]:
    """Hop distances from ``source`` (``-1`` where unreachable)."""
    dist = [-1] * len(adj)
    dist[source] = 0
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for w in adj[u]:
            if dist[w] < 0:
                dist[w] = dist[u] + 1
                queue.append(w)
    return dist


def _lookup(network: Network, index: dict[str, int], station: str) -> int:
    """Index of ``station``; an unknown name raises :class:`DifficultyError`."""
    try:
        return index[station]
    except KeyError:
        raise DifficultyError(f"map {network.map_id or '?'}: unknown station {station!r}") from None


# --------------------------------------------------------------------------- map metrics
def edge_count(network: Network) -> int:
    """``|E|``: distinct pairs of adjacent stations (parallel edges of shared tracks merged)."""
    return len({frozenset((e.u, e.v)) for e in network.edges})


def graph_size(network: Network) -> int:
    """Graph Size ``GS = |V| + |E|`` (appendix C.2, eq. 3), ``|E|`` as in :func:`edge_count`.

    >>> graph_size(Network.from_edges([("a", "b"), ("b", "c")]))
    5
    """
    return len(network.vertices) + edge_count(network)


def wasp(network: Network) -> float:
    """Weighted Average Shortest Path (appendix C.2, eq. 4), in hops.

    ``WASP = Σ_i |C_i| · ASPD(C_i) / |V|`` over the connected components ``C_i``, where
    ``ASPD(C)`` is the mean of ``d(u, v)`` over ordered pairs ``u ≠ v`` of ``C`` (0 for a
    one-station component). A connected graph gives its ordinary average shortest-path length.
    Raises :class:`DifficultyError` on a network with no station.
    """
    names, adj = _station_graph(network)
    if not names:
        raise DifficultyError(f"map {network.map_id or '?'}: WASP of an empty network")
    weighted = 0.0
    for u in range(len(names)):
        dist = [d for d in _bfs(adj, u) if d > 0]
        # u's share of |C| · ASPD(C) = |C| · Σ_{v≠u} d(u,v) / (|C| (|C|-1)), with |C| = len(dist)+1
        if dist:
            weighted += sum(dist) / len(dist)
    return weighted / len(names)


def mesh_coefficient(network: Network) -> float:
    """Meshedness Coefficient ``MC = (|E| - |V| + 2) / |E|`` (appendix C.2, eq. 5).

    Raises :class:`DifficultyError` when the network has no edge.
    """
    e = edge_count(network)
    if e == 0:
        raise DifficultyError(f"map {network.map_id or '?'}: meshedness of a graph with no edge")
    return (e - len(network.vertices) + 2) / e


MAP_METRICS: dict[str, tuple[Callable[[Network], float], ...]] = {
    "metromap": (graph_size, wasp),
    "travelmap": (graph_size, wasp, mesh_coefficient),
}
"""The map-difficulty metrics of each scenario (appendix C.2)."""


def _min_max(values: Sequence[float]) -> list[float]:
    lo, hi = min(values), max(values)
    return [0.0 if hi == lo else (v - lo) / (hi - lo) for v in values]


def map_difficulty_scores(networks: Sequence[Network]) -> list[float]:
    """Map difficulty score per network, in input order (SPEC 8).

    Maps are grouped by scenario; within a scenario each metric of :data:`MAP_METRICS` is
    min-max normalised over that scenario's maps (all 0 when every map has the same value)
    and the normalised metrics are averaged. Scores lie in ``[0, 1]``.
    """
    scores = [0.0] * len(networks)
    for scenario, metrics in MAP_METRICS.items():
        idx = [i for i, n in enumerate(networks) if n.scenario == scenario]
        if not idx:
            continue
        columns = [_min_max([float(m(networks[i])) for i in idx]) for m in metrics]
        for k, i in enumerate(idx):
            scores[i] = sum(col[k] for col in columns) / len(columns)
    return scores


def _rank_order(scores: Sequence[float]) -> list[int]:
    """Indices sorted by score; equal scores keep input order (a stable sort)."""
    return sorted(range(len(scores)), key=lambda i: (scores[i], i))


def tercile_levels(scores: Sequence[float]) -> list[str]:
    """``easy``/``medium``/``hard`` per score, in input order: sorted thirds (SPEC 8).

    The item of rank ``r`` (0-based, ascending score, ties in input order) among ``n`` gets
    level ``LEVELS[3r // n]``. Thirds are strict, as in the paper: equal scores may fall on
    both sides of a cut. When ``n`` is not a multiple of 3 the extra items go to the easier
    levels (``n = 4`` gives 2/1/1, ``n = 5`` gives 2/2/1).
    """
    n = len(scores)
    levels = [""] * n
    for rank, i in enumerate(_rank_order(scores)):
        levels[i] = LEVELS[3 * rank // n]
    return levels


def split_maps(scores: Sequence[float], seed: int) -> list[str]:
    """``train``/``test`` per map, in input order (appendix C.2; SPEC 8).

    Maps sorted by score (ties in input order) are cut into consecutive groups of three, the
    last group holding the remaining one or two maps; one map of every group, drawn with
    ``numpy.random.default_rng(seed)``, is ``test``, the others ``train``. Call it once per
    scenario. Deterministic for a given ``seed``.
    """
    rng = np.random.default_rng(seed)
    order = _rank_order(scores)
    split = ["train"] * len(scores)
    for start in range(0, len(order), 3):
        group = order[start : start + 3]
        split[group[int(rng.integers(len(group)))]] = "test"
    return split


# --------------------------------------------------------------------------- query metrics
def spli(network: Network, s: str, t: str) -> int:
    """Shortest Path Length Index: hops of a shortest ``s``–``t`` path (appendix C.2, eq. 6).

    ``spli(n, s, s) == 0``. Raises :class:`DifficultyError` for an unknown station or when
    ``t`` cannot be reached from ``s``. For many pairs of one map use :func:`spli_pairs`.
    """
    return spli_pairs(network, [(s, t)])[0]


def spli_pairs(network: Network, pairs: Iterable[tuple[str, str]]) -> list[int]:
    """:func:`spli` for every ``(s, t)`` of ``pairs``, one breadth-first search per source."""
    names, adj = _station_graph(network)
    index = {name: i for i, name in enumerate(names)}
    by_source: dict[int, list[int]] = {}
    out = []
    for s, t in pairs:
        i, j = _lookup(network, index, s), _lookup(network, index, t)
        if i not in by_source:
            by_source[i] = _bfs(adj, i)
        d = by_source[i][j]
        if d < 0:
            raise DifficultyError(f"map {network.map_id or '?'}: no path from {s!r} to {t!r}")
        out.append(d)
    return out


class SimplePathCounter:
    """Exact count and total hop length of all simple paths between stations of one network.

    Paths are never listed. ``F(v, A)`` — the number of simple paths from ``v`` to the target
    whose other stations lie in the set ``A`` of still-unvisited stations, and the sum of their
    lengths — only depends on the part of ``A`` that ``v`` can reach without passing through
    the target (a path that enters any other part can never come back). That reachable part
    is computed with bit masks and used as the memo key, so

    * dead-end branches are cut the moment the search would enter them,
    * every way of arriving at the same station with the same region left unvisited is
      solved once (the search collapses onto the block structure of the graph: after a cut
      vertex the remaining region no longer depends on the route taken before it),
    * the memo is kept per target, so many sources towards one target share their work.

    The worst case stays exponential (counting simple paths is #P-complete), but scenic maps
    (10–40 spots, a handful of cycles) solve all pairs in well under a second.
    """

    def __init__(self, network: Network) -> None:
        self.network = network
        self._names, adj = _station_graph(network)
        self._index = {s: i for i, s in enumerate(self._names)}
        self._nbr = [sum(1 << j for j in a) for a in adj]
        self._memo: dict[int, dict[tuple[int, int], tuple[int, int]]] = {}

    def _reach(self, v: int, allowed: int, target: int) -> int:
        """Stations of ``allowed`` reachable from ``v`` inside ``allowed``, not through ``target``."""
        nbr = self._nbr
        comp = frontier = nbr[v] & allowed
        while frontier:
            grow = 0
            rest = frontier & ~(1 << target)
            while rest:
                low = rest & -rest
                grow |= nbr[low.bit_length() - 1]
                rest ^= low
            frontier = grow & allowed & ~comp
            comp |= frontier
        return comp

    def _peel(self, v: int, region: int, target: int) -> int:
        """``region`` without its dead ends: stations other than the target that keep at most
        one neighbour (a simple path from ``v`` to the target can pass through none of them)."""
        nbr = self._nbr
        keep = region | (1 << v)
        fixed = (1 << v) | (1 << target)
        stack = []
        rest = region & ~fixed
        while rest:
            low = rest & -rest
            u = low.bit_length() - 1
            if (nbr[u] & keep).bit_count() <= 1:
                stack.append(u)
            rest ^= low
        while stack:
            u = stack.pop()
            if not (keep >> u) & 1:
                continue
            keep &= ~(1 << u)
            touched = nbr[u] & keep & ~fixed
            while touched:
                low = touched & -touched
                w = low.bit_length() - 1
                if (nbr[w] & keep).bit_count() <= 1:
                    stack.append(w)
                touched ^= low
        return keep & ~(1 << v)

    def _paths(self, v: int, allowed: int, target: int) -> tuple[int, int]:
        if v == target:
            return 1, 0
        region = self._reach(v, allowed, target)
        if not (region >> target) & 1:
            return 0, 0
        region = self._peel(v, region, target)
        memo = self._memo.setdefault(target, {})
        key = (v, region)
        hit = memo.get(key)
        if hit is not None:
            return hit
        count = total = 0
        step = self._nbr[v] & region
        while step:
            low = step & -step
            c, h = self._paths(low.bit_length() - 1, region & ~low, target)
            count += c
            total += h + c
            step ^= low
        memo[key] = (count, total)
        return count, total

    def stats(self, s: str, t: str) -> tuple[int, int]:
        """``(N, L)``: number of simple ``s``–``t`` paths and the sum of their hop lengths.

        ``s == t`` gives ``(1, 0)`` (the one-station path). Raises :class:`DifficultyError`
        for an unknown station.
        """
        i, j = _lookup(self.network, self._index, s), _lookup(self.network, self._index, t)
        everyone = (1 << len(self._names)) - 1
        return self._paths(i, everyone & ~(1 << i), j)

    def mean_length(self, s: str, t: str) -> float:
        """SPCI: ``L / N`` of :meth:`stats`, computed exactly then rounded once to a float."""
        count, total = self.stats(s, t)
        if count == 0:
            raise DifficultyError(f"map {self.network.map_id or '?'}: no path from {s!r} to {t!r}")
        return float(Fraction(total, count))


def spci(network: Network, s: str, t: str) -> float:
    """Simple Path Complexity Index (appendix C.2, eq. 7): mean hop length of all simple paths.

    ``SPCI(s, t) = (1/N) Σ_i l(L_i)`` over the ``N`` simple ``s``–``t`` paths ``L_i`` of the
    station graph, ``l`` counting edges. Exact (see :class:`SimplePathCounter`; for many pairs
    of one map use :func:`spci_pairs`, which shares the work). Raises
    :class:`DifficultyError` for an unknown station or when ``t`` cannot be reached.

    >>> square = Network.from_edges([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")])
    >>> spci(square, "a", "c")  # a-b-c and a-d-c
    2.0
    """
    return SimplePathCounter(network).mean_length(s, t)


def spci_pairs(network: Network, pairs: Iterable[tuple[str, str]]) -> list[float]:
    """:func:`spci` for every ``(s, t)`` of ``pairs``, with one shared counter.

    SPCI is symmetric (the simple paths of ``t``–``s`` are those of ``s``–``t`` reversed), so
    each unordered pair is solved once.
    """
    counter = SimplePathCounter(network)
    done: dict[tuple[str, str], float] = {}
    out = []
    for s, t in pairs:
        key = (s, t) if s <= t else (t, s)
        if key not in done:
            done[key] = counter.mean_length(*key)
        out.append(done[key])
    return out


QUERY_METRICS: dict[str, Callable[[Network, Sequence[tuple[str, str]]], Sequence[float]]] = {
    "metromap": spli_pairs,
    "travelmap": spci_pairs,
}
"""The query-difficulty index of each scenario, over a list of OD pairs (appendix C.2)."""


def query_difficulty_levels(network: Network, pairs: Sequence[tuple[str, str]]) -> list[str]:
    """``easy``/``medium``/``hard`` for the OD ``pairs`` of one map (SPEC 8).

    The scenario's index (SPLI for metromap, SPCI for travelmap) is computed per pair and the
    pairs are cut into sorted thirds with :func:`tercile_levels` (ties in the order given).
    """
    return tercile_levels(QUERY_METRICS[network.scenario](network, pairs))
