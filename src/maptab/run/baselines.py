"""Built-in baselines: providers that answer from the dataset itself, with no network.

Each reads the sample (``request.meta["sample"]``) and the map's ``network.json``, and
answers in the prompt contract's format (SPEC 11): RP as one line ``A-B(transfer)-C``
inside ``<route_begin>…<route_end>``, written by :mod:`maptab.core.route_text`; QA as
``<answer_begin>…<answer_end>``; ReasonMap as ``Route Name: … / Departure Stop: … / Arrival
Stop: …`` segments joined by ``--`` (long questions add ``Number of Via Stops:`` or ``Via
Stops:`` per the row's ``long_template``).

* ``oracle`` solves every sample from the map's own data; it never reads a stored label
  except in the one fallback named below.

  - RP (SPEC 9): :mod:`maptab.core.solver` — criteria-free categories: a fewest-stations route;
    criteria categories: the optimum of the query's weights and cost model over the
    category's cost items (Mix_tab values and vertex items only for ``map_mix``). The first
    route in the solver's order is answered. When the sample has ``report_totals`` set, the
    answer adds one line per total (``Total_Time: x`` …, SPEC 9, 13) with the totals of that
    route and its line assignment from :func:`maptab.core.costs.route_totals`, written as the
    dataset labels are (times and prices to 2 decimals, averages to 6).
  - QA (SPEC 10): :func:`maptab.core.qa_types.qa_answer` of the row's ``type`` and ``params``,
    with the station order of the tables as shown (``tables`` row indices into the map's
    stations; type 22's dropped spot is absent from them). For a row without a
    ``params`` key (nothing to derive from), the stored ``answer`` is echoed.
  - ReasonMap (SPEC 14): the optimum of :func:`maptab.core.planning.plan_routes`.

  So the oracle scores 100% on every category that shows tables, and a disagreement with a
  stored label points at the label, the scorer or the solver.
* ``shortest`` answers every RP query with a fewest-stations route, ignoring the criteria
  (the papers' "shortest-path trap"); ReasonMap: that route cut into line segments.
* ``random`` answers a random simple path (seeded per sample id, so reruns and any
  concurrency give the same answers); ReasonMap likewise.
* ``blank`` answers nothing (every sample is a format error).

``shortest`` and ``random`` answer QA with ``0`` and a seeded coin flip (0/1) respectively;
no baseline but the oracle reports totals.

Baselines answer from ``request.meta`` alone (``uses_messages = False``), so the runner
builds no table text or image for them; the oracle remembers the RP answers it has given
(keyed by map, cost items, stations, weights, cost model and totals), and the solver its
solutions, so a query asked again costs a dictionary look-up.
"""

from __future__ import annotations

import random
from typing import Any

from maptab._cache import IdentityCache, KeyedCache
from maptab.core.costs import Weights, route_totals
from maptab.core.network import Network
from maptab.core.planning import plan_routes
from maptab.core.qa_types import qa_answer_of
from maptab.core.route_text import format_route_of, route_block
from maptab.core.schema import RP_BY_NAME, TOTAL_FIELDS, QAQuery, RPCategory, RPQuery
from maptab.core.solver import Route, fewest_stations, optimal_routes
from maptab.core.tables import derive_mix
from maptab.io.dataset import Dataset
from maptab.run.provider import Completion, InProcessProvider
from maptab.run.requests import ChatRequest
from maptab.tasks.base import get as get_kind


def walked_route(network: Network, stations: list[str]) -> Route:
    """``stations`` as a :class:`~maptab.core.solver.Route` with a fewest-transfers line per hop.

    Greedy, which is optimal: keep the lines common to the hops so far and change (a
    transfer) only when none of them continues. ``cost`` is the number of stations.
    """
    hops = [
        {e.line for e in network.edges_between(a, b)}
        for a, b in zip(stations, stations[1:], strict=False)
    ]
    lines: list[str | None] = []
    start, common = 0, set(hops[0]) if hops else set()
    for i in range(1, len(hops) + 1):
        nxt = common & hops[i] if i < len(hops) else set()
        if not nxt:
            pick = min(common, key=lambda x: (x is None, str(x)))
            lines.extend([pick] * (i - start))
            if i < len(hops):
                start, common = i, set(hops[i])
        else:
            common = nxt
    transfers = tuple(stations[i] for i in range(1, len(lines)) if lines[i] != lines[i - 1])
    return Route(tuple(stations), transfers, tuple(lines), float(len(stations)))


def number_text(value: Any) -> str:
    """A number as answers write it: integers without decimals, other floats as stored."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def answer_block(value: Any) -> str:
    """The QA answer, wrapped in the answer tags."""
    return f"<answer_begin>{number_text(value)}<answer_end>"


def totals_lines(totals: dict[str, float]) -> str:
    """Reported totals, one ``Name: value`` line each in ``TOTAL_FIELDS`` order (the
    ``[output] report_totals`` contract of ``templates/rp.toml``)."""
    return "\n".join(f"{name}: {number_text(totals[name])}" for name in TOTAL_FIELDS)


def reasonmap_answer(segments: list[dict[str, Any]], variant: str, template: str) -> str:
    """ReasonMap segments in the answer format the questions ask for."""
    blocks = []
    for seg in segments:
        lines = [
            f"Route Name: {seg['route_name']}",
            f"Departure Stop: {seg['departure_stop']}",
            f"Arrival Stop: {seg['arrival_stop']}",
        ]
        if variant == "long" and template == "via_list":
            lines.append(f"Via Stops: {', '.join(seg['via_stops']) or 'none'}")
        elif variant == "long":
            lines.append(f"Number of Via Stops: {seg['num_via_stops']}")
        blocks.append("\n".join(lines))
    return "\n--\n".join(blocks)


def path_segments(network: Network, path: Route) -> list[dict[str, Any]]:
    """A metro path cut into ReasonMap segments at each line change (display names)."""
    segs: list[dict[str, Any]] = []
    start = 0
    st = path.stations
    for i in range(1, len(path.lines) + 1):
        if i == len(path.lines) or path.lines[i] != path.lines[i - 1]:
            via = [network.label(s) for s in st[start + 1 : i]]
            segs.append(
                {
                    "route_name": path.lines[start] or "",
                    "departure_stop": network.label(st[start]),
                    "arrival_stop": network.label(st[i]),
                    "via_stops": via,
                    "num_via_stops": len(via),
                }
            )
            start = i
    return segs


class _Baseline(InProcessProvider):
    """Shared plumbing: networks per (dataset, map), dispatch on the request kind."""

    name = ""
    uses_images = False
    uses_messages = False

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.model = self.name
        self.settings: dict[str, Any] = {"seed": seed} if self.name == "random" else {}
        self._datasets: dict[str, Dataset] = {}
        self._mix: dict[tuple[str, str], Network] = {}

    def network(self, request: ChatRequest) -> Network:
        root = request.meta["dataset"]
        if root not in self._datasets:
            self._datasets[root] = Dataset(root, verify=request.meta.get("verify", True))
        return self._datasets[root].network(request.meta["map_id"])

    def cost_network(self, request: ChatRequest, category: RPCategory) -> Network:
        """The network whose attributes the category's costs read: the map's, or for a
        vertex-item (Mix_tab) category the map with its Mix_tab rows (derived once per map)."""
        net = self.network(request)
        if category.items != "vertex":
            return net
        key = (request.meta["dataset"], request.meta["map_id"])
        if key not in self._mix:
            self._mix[key] = net.with_attributes(vertices=derive_mix(net))
        return self._mix[key]

    async def complete(self, request: ChatRequest) -> Completion:
        return Completion(self.answer(request))

    def answer(self, request: ChatRequest) -> str:
        """The answer to one request: its task kind's ``answer`` calls back into this
        baseline (:meth:`rp_text`, :meth:`qa`, :meth:`reasonmap` for the built-in kinds)."""
        return get_kind(request.kind).answer(self, request)

    def rp_text(self, request: ChatRequest, q: RPQuery, s: str, t: str) -> str:
        """The whole RP answer: the route block (the oracle adds reported totals)."""
        return route_block(format_route_of(self.rp(self.network(request), q, s, t)))

    def rp(self, net: Network, q: RPQuery, s: str, t: str) -> Route:
        raise NotImplementedError

    def qa(self, request: ChatRequest, row: dict[str, Any]) -> str:
        raise NotImplementedError

    def reasonmap(self, net: Network, row: dict[str, Any], s: str, t: str) -> list[dict[str, Any]]:
        return path_segments(net, self.rp_path(net, s, t, row["id"]))

    def rp_path(self, net: Network, s: str, t: str, sid: str) -> Route:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


def _fewest(net: Network, s: str, t: str) -> Route:
    routes = fewest_stations(net, s, t)
    if not routes:
        raise ValueError(f"no route from {s!r} to {t!r}")
    return routes[0]


ANSWER_CACHE = 8192
"""RP answers the oracle remembers (least recently used dropped first)."""


class OracleProvider(_Baseline):
    """Exact answers from the sample's own data (see the module docstring)."""

    name = "oracle"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self._answers: KeyedCache[tuple[Any, ...], str] = KeyedCache(ANSWER_CACHE)
        # keyed by the network's id; the entry holds the network, so the id stays its own
        self._plans: KeyedCache[tuple[int, str, str], tuple[Network, Any]] = KeyedCache(64)

    def rp_text(self, request: ChatRequest, q: RPQuery, s: str, t: str) -> str:
        """The answer of :meth:`_rp_text`, remembered per query: everything the answer
        depends on is in the key (the category matters only through its cost items and
        whether it has criteria)."""
        cat = RP_BY_NAME[q.category]
        weights = None if cat.criteria_free or q.weights is None else tuple(q.weights)
        key = (
            request.meta["dataset"],
            request.meta["map_id"],
            cat.items,
            cat.criteria_free,
            s,
            t,
            weights,
            q.cost_model,
            q.report_totals,
        )
        return self._answers.get(key, lambda: self._rp_text(request, q, s, t))

    def _rp_text(self, request: ChatRequest, q: RPQuery, s: str, t: str) -> str:
        cat = RP_BY_NAME[q.category]
        net = self.cost_network(request, cat)
        route = self.rp(net, q, s, t)
        text = route_block(format_route_of(route))
        if not q.report_totals:
            return text
        totals = route_totals(net, route.stations, route.lines, items=cat.items)
        return f"{text}\n{totals_lines(totals.as_label())}"

    def rp(self, net: Network, q: RPQuery, s: str, t: str) -> Route:
        """The solver's first optimal route; ``net`` carries the category's cost values."""
        cat = RP_BY_NAME[q.category]
        if cat.criteria_free:
            return _fewest(net, s, t)
        if q.weights is None:
            raise ValueError(f"{q.id}: criteria category {q.category!r} without weights")
        w = Weights(*q.weights)
        routes = optimal_routes(net, s, t, w, items=cat.items, model=q.cost_model)
        if not routes:
            raise ValueError(f"{q.id}: no route from {s!r} to {t!r}")
        return routes[0]

    def qa(self, request: ChatRequest, row: dict[str, Any]) -> str:
        if "params" not in row:  # no QA params to derive from: echo the label
            return answer_block(row["answer"])
        return answer_block(qa_answer_of(QAQuery.from_dict(row), self.network(request)))

    def reasonmap(self, net: Network, row: dict[str, Any], s: str, t: str) -> list[dict[str, Any]]:
        """The best plan's segments; a row's short and long requests share one planning."""
        best = self._plans.get((id(net), s, t), lambda: (net, plan_routes(net, s, t)[0]))[1]
        return [seg.to_dict() for seg in best]


class ShortestProvider(_Baseline):
    """A fewest-stations route whatever the criteria (the shortest-path trap)."""

    name = "shortest"

    def rp(self, net: Network, q: RPQuery, s: str, t: str) -> Route:
        return _fewest(net, s, t)

    def rp_path(self, net: Network, s: str, t: str, sid: str) -> Route:
        return _fewest(net, s, t)

    def qa(self, request: ChatRequest, row: dict[str, Any]) -> str:
        return answer_block(0)


_GRAPHS: IdentityCache[Network, dict[str, list[str]]] = IdentityCache(8)
"""Each network's station graph with sorted neighbour lists (the random walk's input)."""


class RandomProvider(_Baseline):
    """A random simple path from source to target (randomised depth-first search)."""

    name = "random"

    def _rng(self, sid: str) -> random.Random:
        return random.Random(f"{self.seed}:{sid}")

    def rp(self, net: Network, q: RPQuery, s: str, t: str) -> Route:
        return self.rp_path(net, s, t, q.id)

    def rp_path(self, net: Network, s: str, t: str, sid: str) -> Route:
        rng = self._rng(sid)
        graph = _GRAPHS.get(net, lambda: {k: sorted(v) for k, v in net.simple_graph().items()})
        parent: dict[str, str | None] = {s: None}
        stack = [s]
        while stack:
            cur = stack.pop()
            if cur == t:
                break
            nbrs = [n for n in graph[cur] if n not in parent]
            if len(nbrs) > 1:  # shuffling fewer draws no random number: same sequence
                rng.shuffle(nbrs)
            for n in nbrs:
                parent[n] = cur
            stack.extend(nbrs)
        if t not in parent:
            raise ValueError(f"{sid}: no path between the asked stations")
        seq: list[str] = [t]
        while (p := parent[seq[-1]]) is not None:
            seq.append(p)
        seq.reverse()
        return walked_route(net, seq)

    def qa(self, request: ChatRequest, row: dict[str, Any]) -> str:
        return answer_block(self._rng(request.id).randint(0, 1))


class BlankProvider(_Baseline):
    """An empty answer for every sample (scored as format errors)."""

    name = "blank"

    def answer(self, request: ChatRequest) -> str:
        return ""


BASELINE_CLASSES: dict[str, type[_Baseline]] = {
    c.name: c for c in (OracleProvider, ShortestProvider, RandomProvider, BlankProvider)
}
