"""Strict, verification-based route metrics (SPEC 13, ours; the default in reports).

A parsed route is checked against the map itself, not against strings:

* **names** are resolved exactly against the map vocabulary — the station key, its table
  spelling (``-`` as ``_``) or its display label — ignoring only case, diacritics and runs of
  whitespace (:class:`StationIndex`). There is no fuzzy ratio: a name that resolves to no
  station, or to two, is *unresolved*.
* **valid** — every name resolves, the route starts at the query's source and ends at its
  target (``endpoints_ok``), visits no station twice (``simple``) and every consecutive pair
  is joined by an edge (``adjacent``).
* **transfers_ok** (valid routes) — the set of ``(transfer)`` marks equals the transfer
  stations of one of the route's reference line assignments (SPEC 4): for criteria
  queries the J-optimal assignments with the fewest transfers, for criteria-free queries the
  minimum-transfer assignments (:func:`maptab.core.costs.optimal_assignments`). A travelmap
  route must carry no marks.
* **optimal** (valid routes) — criteria queries: ``J(pred)`` within the relative tolerance
  1e-9 of ``J(opt)``, the cost of the first gold route; criteria-free: as few hops as the
  gold routes.
* **gap** (valid routes) — ``J(pred) / J(opt) − 1`` (criteria-free: hops ratio − 1); 0 for
  an optimal route, ``None`` otherwise.
* **correct** (strict) — valid, optimal and transfers right.
* **reported totals** (queries that ask for them) — checked against the totals of the
  optimal route the answer gives (:func:`answered_totals`): a listed tie's own totals, or
  those of an optimal route missing from a capped list, recomputed from the map as the gold
  label's are (:func:`maptab.core.costs.route_totals`); any other answer's against the
  totals of the first gold route.

The Map+Mix_tab category (``items == "vertex"``) is costed on the Mix_tab network
(:func:`maptab.core.tables.derive_mix`), as its gold labels are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from maptab._cache import IdentityCache, KeyedCache
from maptab.core.costs import (
    CostTable,
    Marking,
    WeightedCosts,
    Weights,
    mean_assignments,
    optimal_assignments,
    route_totals,
    within,
)
from maptab.core.network import Network, table_name
from maptab.core.schema import RP_BY_NAME, RPQuery
from maptab.score.answers import totals_correct
from maptab.score.error_types import error_type
from maptab.score.parse import ParsedRoute, normalise_name

__all__ = [
    "RoutePlan",
    "StationIndex",
    "Verification",
    "answered_totals",
    "gold_routes",
    "route_plan",
    "station_index",
    "verify_planned",
    "verify_reported",
    "verify_route",
]


_RESOLVED_KEPT = 1 << 16  # names remembered per map (StationIndex.resolve)
_UNSEEN = object()


class StationIndex:
    """Exact name → station key look-up for one network (keys, table spellings, labels),
    insensitive to case, diacritics and whitespace runs only."""

    def __init__(self, network: Network) -> None:
        self.network = network
        #: keys and display labels (what :func:`maptab.score.parse.parse_route` splits by)
        self.vocabulary: tuple[str, ...] = (*network.vertices, *network.labels.values())
        self._norm: dict[str, str | None] = {}
        for key in network.vertices:
            for name in {key, network.label(key)}:
                n = normalise_name(name)
                prev = self._norm.get(n, key)
                self._norm[n] = key if prev == key else None  # two stations: ambiguous
        #: ordered pairs of stations joined by at least one edge
        self.adjacent: frozenset[tuple[str, str]] = frozenset(
            pair for e in network.edges for pair in ((e.u, e.v), (e.v, e.u))
        )
        # name -> key memo (answers repeat names); cleared when full, like MATCH_CACHE
        self._resolved: dict[str, str | None] = {}

    def resolve(self, name: str) -> str | None:
        """The station key that ``name`` denotes, or ``None``."""
        memo = self._resolved
        key = memo.get(name, _UNSEEN)
        if key is not _UNSEEN:
            return key  # type: ignore[return-value]
        key = self.network.resolve(name)
        if key is None:
            key = self._norm.get(normalise_name(name))
        if len(memo) >= _RESOLVED_KEPT:
            memo.clear()
        memo[name] = key
        return key

    def resolve_all(self, names: Sequence[str]) -> list[str | None]:
        """``[self.resolve(n) for n in names]``, the memo read in one pass."""
        keys = list(map(self._resolved.get, names, repeat(_UNSEEN)))
        if _UNSEEN in keys:
            keys = [self.resolve(n) for n in names]
        return keys


# per-map caches keep this many maps (a paper-size dataset has 328; keeping only a few dozen
# made scoring a shuffled results file rebuild them); maptab._cache drops the least recent
_MAPS_KEPT = 1024
_INDEX_CACHE: IdentityCache[Network, StationIndex] = IdentityCache(_MAPS_KEPT)


def station_index(network: Network) -> StationIndex:
    """The (cached) :class:`StationIndex` of ``network``."""
    return _INDEX_CACHE.get(network, lambda: StationIndex(network))


@dataclass(slots=True)
class Verification:
    """Outcome of checking one answer against the map (module docstring)."""

    parsed: bool
    stations: list[str | None] = field(default_factory=list)
    unresolved_names: list[str] = field(default_factory=list)
    endpoints_ok: bool = False
    simple: bool = False
    adjacent: bool = False
    valid: bool = False
    transfers_ok: bool = False
    optimal: bool = False
    gap: float | None = None
    error_type: str | None = None

    @property
    def correct(self) -> bool:
        return self.valid and self.optimal and self.transfers_ok


def gold_routes(
    index: StationIndex, routes: Sequence[str]
) -> tuple[tuple[tuple[str, ...], frozenset[int]], ...]:
    """Gold route strings as ``(station keys, marked positions)`` (memoised per index and
    routes: a query's gold is read for every answer to it)."""
    return _GOLD.get((index, tuple(routes)), lambda: _gold_routes(index, routes))


_MEMO_SIZE = 100_000
_WEIGHTED_KEPT = 1024
_GOLD: KeyedCache[tuple[StationIndex, tuple[str, ...]], Any] = KeyedCache(_MEMO_SIZE)


def _gold_routes(
    index: StationIndex, routes: Sequence[str]
) -> tuple[tuple[tuple[str, ...], frozenset[int]], ...]:
    out = []
    # (key, marked) per token: a query's many gold routes repeat their stations
    seen: dict[str, tuple[str, bool]] = {}
    for r in routes:
        keys: list[str] = []
        marks: set[int] = set()
        for pos, tok in enumerate(r.split("-")):
            got = seen.get(tok)
            if got is None:
                name = tok.strip()
                marked = name.endswith("(transfer)")
                if marked:
                    name = name[: -len("(transfer)")].strip()
                got = seen[tok] = (index.resolve(name) or name, marked)
            keys.append(got[0])
            if got[1]:
                marks.add(pos)
        out.append((tuple(keys), frozenset(marks)))
    return tuple(out)


class _Costing:
    """Cost tables and weighted item costs per (network, items), memoised."""

    def __init__(self) -> None:
        self._tables: IdentityCache[Network, CostTable] = IdentityCache(_MAPS_KEPT * 3)
        # (table, weights) -> per-item costs: lists as long as the map, and criteria queries
        # draw their own weights, so a paper-size run would fill 100,000 entries with
        # gigabytes; it is reused by the answers to one query, scored one after the other
        self._weighted: IdentityCache[CostTable, WeightedCosts] = IdentityCache(_WEIGHTED_KEPT)
        # (network, items, stations, weights, cost model) -> assessment: each distinct route
        # is costed once (answers repeat routes; every answer costs its gold)
        self._assessed: IdentityCache[Network, Any] = IdentityCache(_MEMO_SIZE)
        # (network, items, stations) -> markings of a one-assignment route, or None
        self._fixed: IdentityCache[Network, Any] = IdentityCache(_MEMO_SIZE)
        # (network, items, stations, weights, cost model, marks) -> label totals
        self._totals: IdentityCache[Network, dict[str, float]] = IdentityCache(_MEMO_SIZE)
        # weight vectors found valid (Weights checks them; the costs of assess do too)
        self._valid_weights: dict[tuple[float, ...], None] = {}

    def table(self, network: Network, items: str) -> CostTable:
        return self._tables.get(network, lambda: CostTable(network, items), items)

    def weighted(self, table: CostTable, weights: tuple[float, ...] | None) -> WeightedCosts:
        """Item costs of ``weights`` (checked as :class:`Weights` when first computed)."""
        return self._weighted.get(
            table, lambda: table.weighted(None if weights is None else Weights(*weights)), weights
        )

    def assess(
        self,
        network: Network,
        items: str,
        weights: tuple[float, ...] | None,
        stations: Sequence[str],
        query: RPQuery,
    ) -> tuple[float, tuple[frozenset[int], ...]]:
        """``(cost, reference markings)`` of a valid route: J* or hop count (memoised);
        ``items`` and ``weights`` are those of ``query`` (:class:`RoutePlan`)."""
        return self._assessed.get(
            network,
            lambda: self._assess(network, items, stations, query),
            items,
            tuple(stations),
            weights,
            query.cost_model,
        )

    def fixed_markings(
        self,
        network: Network,
        items: str,
        weights: tuple[float, ...] | None,
        stations: Sequence[str],
    ) -> tuple[frozenset[int], ...] | None:
        """The reference markings of a valid route with one line per hop, which are those of
        its only assignment whatever the weights (``assess(...)[1]``, without costing it);
        ``None`` for any other route, or on a map whose costs could overflow
        (:attr:`maptab.core.costs.CostTable.bounded`). ``weights`` are checked as
        :func:`assess` checks them."""
        if weights is not None and weights not in self._valid_weights:
            Weights(*weights)  # raises CostError as costing the route would
            if len(self._valid_weights) >= _MEMO_SIZE:
                self._valid_weights.clear()
            self._valid_weights[weights] = None
        return self._fixed.get(
            network, lambda: self._fixed_markings(network, items, stations), items, tuple(stations)
        )

    def _fixed_markings(
        self, network: Network, items: str, stations: Sequence[str]
    ) -> tuple[frozenset[int], ...] | None:
        table = self.table(network, items)
        if not table.bounded:
            return None
        marks = table.single_marks(table.path_index(stations))
        return None if marks is None else (frozenset(marks),)

    def _assignments(
        self, network: Network, items: str, stations: Sequence[str], query: RPQuery
    ) -> tuple[float, list[Marking]]:
        """``J*`` of a valid route and its reference markings, as the solver finds them for
        a gold route (:func:`optimal_assignments`, :func:`mean_assignments`)."""
        table = self.table(network, items)
        path = table.path_index(stations)
        weights = tuple(query.weights) if query.weights else None
        if weights is not None and query.cost_model == "mean":
            return mean_assignments(table, Weights(*weights), path)
        return optimal_assignments(table, self.weighted(table, weights), path)

    def _assess(
        self, network: Network, items: str, stations: Sequence[str], query: RPQuery
    ) -> tuple[float, tuple[frozenset[int], ...]]:
        j, marks = self._assignments(network, items, stations, query)
        cost = j if query.weights else float(len(stations) - 1)
        return cost, tuple(frozenset(m.transfers) for m in marks)

    def totals(
        self,
        network: Network,
        items: str,
        weights: tuple[float, ...] | None,
        stations: Sequence[str],
        query: RPQuery,
        marks: frozenset[int] | None,
    ) -> dict[str, float]:
        """The label totals of a valid route (memoised): :func:`route_totals` with the line
        assignment of its reference marking ``marks`` (the first marking when ``marks`` is
        none of them), which is the assignment the gold label of that route is computed
        with (:func:`maptab.generate.queries.gold_label`)."""
        return self._totals.get(
            network,
            lambda: self._route_totals(network, items, stations, query, marks),
            items,
            tuple(stations),
            weights,
            query.cost_model,
            marks,
        )

    def _route_totals(
        self,
        network: Network,
        items: str,
        stations: Sequence[str],
        query: RPQuery,
        marks: frozenset[int] | None,
    ) -> dict[str, float]:
        found = self._assignments(network, items, stations, query)[1]
        lines = next((m.lines for m in found if frozenset(m.transfers) == marks), found[0].lines)
        return route_totals(network, stations, lines, items=items).as_label()


_COSTING = _Costing()


@dataclass(slots=True)
class RoutePlan:
    """What checking any answer to one query on one map derives from the query alone: the
    station index, the resolved endpoints, the gold routes, the network the route is costed
    on and the cost of the first gold route (found on first use). :func:`verify_route`
    builds one per call; a caller that checks many answers to one query (the RL reward)
    keeps it (:func:`route_plan`). Results are those of :func:`verify_route`."""

    network: Network
    query: RPQuery
    mix_network: Network | None
    index: StationIndex
    source: str
    target: str
    gold: tuple[tuple[tuple[str, ...], frozenset[int]], ...]
    costed: Network | None  # None: a map_mix query given no Mix_tab network
    items: str
    weights: tuple[float, ...] | None
    best: float | None = None

    @classmethod
    def build(
        cls,
        network: Network,
        query: RPQuery,
        mix_network: Network | None,
        index: StationIndex | None = None,
        gold: tuple[tuple[tuple[str, ...], frozenset[int]], ...] | None = None,
    ) -> RoutePlan:
        """The plan of ``query``; ``index`` (``station_index(network)``) and ``gold``
        (``gold_routes(index, query.routes)``) when the caller has them at hand."""
        if index is None:
            index = station_index(network)
        if gold is None:
            gold = gold_routes(index, query.routes)
        resolve = index.resolve
        category = RP_BY_NAME.get(query.category)
        costed: Network | None = network
        if category is not None and category.items == "vertex":
            costed = mix_network
        return cls(
            network,
            query,
            mix_network,
            index,
            resolve(query.source) or table_name(query.source),
            resolve(query.target) or table_name(query.target),
            gold,
            costed,
            category.items if category else "edge_vertex",
            tuple(query.weights) if query.weights else None,
        )

    def cost(self, stations: Sequence[str]) -> tuple[float, tuple[frozenset[int], ...]]:
        """Cost and reference markings of a valid route on the costed network (memoised)."""
        assert self.costed is not None
        return _COSTING.assess(self.costed, self.items, self.weights, stations, self.query)

    def fixed_markings(self, stations: Sequence[str]) -> tuple[frozenset[int], ...] | None:
        """``cost(stations)[1]`` without the cost when the route has one line assignment
        (:meth:`_Costing.fixed_markings`), else ``None``."""
        assert self.costed is not None
        return _COSTING.fixed_markings(self.costed, self.items, self.weights, stations)

    def totals(self, stations: Sequence[str], marks: frozenset[int] | None) -> dict[str, float]:
        """Label totals of a valid route with the line assignment of its reference marking
        ``marks`` (:meth:`_Costing.totals`; memoised)."""
        assert self.costed is not None
        return _COSTING.totals(self.costed, self.items, self.weights, stations, self.query, marks)


# plans kept for the RL reward (one per sample it scores; a batch of a few thousand)
_PLANS: IdentityCache[RPQuery, RoutePlan] = IdentityCache(1 << 14)


def route_plan(network: Network, query: RPQuery, mix_network: Network | None = None) -> RoutePlan:
    """The (cached) :class:`RoutePlan` of ``query`` on ``network`` and its Mix_tab network
    (kept per query object and network objects; the plan holds them, so their ids stay
    theirs while it is kept)."""
    return _PLANS.get(
        query, lambda: RoutePlan.build(network, query, mix_network), id(network), id(mix_network)
    )


def verify_route(
    network: Network,
    parsed: ParsedRoute | None,
    query: RPQuery,
    *,
    mix_network: Network | None = None,
    totals_ok: bool | None = None,
) -> Verification:
    """Check ``parsed`` against ``network`` and the gold of ``query`` (module docstring).

    ``mix_network`` is the Mix_tab network used to cost ``map_mix`` queries (required for
    them). ``totals_ok`` (reported totals right; ``None`` when not asked) only feeds the
    error type. Never raises for a bad answer; raises ``ValueError`` when the query's own
    gold route does not fit the map (a broken dataset).
    """
    if parsed is None:
        return Verification(parsed=False, error_type=error_type(None))
    return verify_planned(RoutePlan.build(network, query, mix_network), parsed, totals_ok)


def verify_planned(
    plan: RoutePlan, parsed: ParsedRoute | None, totals_ok: bool | None = None
) -> Verification:
    """:func:`verify_route` with the query's work already done (:class:`RoutePlan`)."""
    if parsed is None:
        return Verification(parsed=False, error_type=error_type(None))
    query = plan.query
    keys = plan.index.resolve_all(parsed.stations)
    v = Verification(parsed=True, stations=keys)
    if None in keys:
        v.unresolved_names = [s for s, k in zip(parsed.stations, keys, strict=True) if k is None]
        resolved = [k for k in keys if k is not None]
    else:
        resolved = keys
    v.endpoints_ok = bool(keys) and keys[0] == plan.source and keys[-1] == plan.target
    v.simple = len(set(resolved)) == len(resolved)
    # every consecutive pair joined by an edge (network.edges_between, as a set look-up)
    v.adjacent = not v.unresolved_names and plan.index.adjacent.issuperset(
        zip(resolved, resolved[1:], strict=False)
    )
    v.valid = not v.unresolved_names and v.endpoints_ok and v.simple and v.adjacent
    if v.valid:
        stations: list[str] = resolved  # valid: every name resolved
        if plan.costed is None:
            raise ValueError(f"query {query.id}: map_mix needs the Mix_tab network")
        gold = plan.gold
        # the first gold route (the usual right answer) is optimal by definition (its cost
        # is the optimum); with one line per hop its markings need no cost either
        fixed = plan.fixed_markings(stations) if gold and stations == list(gold[0][0]) else None
        if fixed is not None:
            markings = fixed
            v.optimal = True
            v.gap = 0.0
        else:
            cost, markings = plan.cost(stations)
            if not gold:
                raise ValueError(f"query {query.id}: no gold route")
            best = plan.best
            if best is None:
                try:
                    first = gold[0][0]
                    # the first gold route itself costs what was just found
                    best = cost if stations == list(first) else plan.cost(first)[0]
                except ValueError as exc:
                    raise ValueError(
                        f"query {query.id}: gold route does not fit map "
                        f"{plan.network.map_id!r}: {exc}"
                    ) from None
                plan.best = best
            v.optimal = within(cost, best)
            if v.optimal:
                v.gap = 0.0
            elif best > 0:
                v.gap = cost / best - 1.0
            else:
                v.gap = float("inf")
        marks = frozenset(parsed.transfers)
        if plan.network.scenario == "travelmap":
            v.transfers_ok = not marks
        else:
            v.transfers_ok = marks in markings
    v.error_type = error_type(v, totals_ok)
    return v


def answered_totals(
    plan: RoutePlan, v: Verification, parsed: ParsedRoute | None
) -> dict[str, float] | None:
    """The totals that the totals reported with an answer are checked against (SPEC 3, 13;
    ``None`` when the query has none): for a valid, optimal route, its own — those of the
    listed tie it is (with its marks; with marks that are no reference marking, those of the
    first listed tie with its stations), or, for an optimal route a capped list leaves out,
    recomputed from the map with the line assignment the solver gives it
    (:meth:`RoutePlan.totals`); for any other answer, the stored totals of the first gold
    route. ``v`` is ``verify_planned(plan, parsed)``. Only the letters of the stored totals
    are given."""
    stored = plan.query.totals
    if not stored or parsed is None or not (v.valid and v.optimal):
        return stored
    stations = tuple(v.stations)  # valid: every name resolved
    marks: frozenset[int] | None = frozenset(parsed.transfers)
    gold = plan.gold
    if not v.transfers_ok:
        marks = next((m for s, m in gold if s == stations), None)
    if gold and gold[0][0] == stations and gold[0][1] == marks:
        return stored
    own = plan.totals(stations, marks)
    return {k: own[k] for k in stored if k in own}


def verify_reported(
    plan: RoutePlan,
    parsed: ParsedRoute | None,
    reported: Mapping[str, float] | None,
    right: Callable[[Any, Any], dict[str, bool]] = totals_correct,
) -> tuple[Verification, dict[str, bool] | None]:
    """:func:`verify_planned`, and the reported totals (``reported``, parsed from the
    answer; ``None`` when the query asks for none) checked by ``right`` (default
    :func:`maptab.score.answers.totals_correct`) against :func:`answered_totals`: the
    verification, its error type counting the totals, and the letters right (SPEC 13)."""
    v = verify_planned(plan, parsed)
    if reported is None:
        return v, None
    gold = answered_totals(plan, v, parsed)
    if not gold:
        return v, None
    ok = right(reported, gold)
    if parsed is not None:
        v.error_type = error_type(v, all(ok.values()))
    return v, ok
