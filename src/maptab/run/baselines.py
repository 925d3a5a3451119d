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
* ``agent-oracle`` is for tool-use mode (``--tools``, :mod:`maptab.run.tools`): a scripted
  model that answers route planning and QA through the tools alone. From the question it
  reads only what the prompt states (RP: source, target, category, weights, cost model,
  whether totals are asked; QA: the type and the stations, lines and column it names),
  never the gold, the map, or the tables' values; of the tables in its prompt it reads only
  the station names, to know where to start looking. RP with ``lookup`` offered (every
  category that shows a table): it looks up the source, then, turn by turn, every station
  named in the rows it got and not yet looked up (one call each, all of a turn's at once),
  until the component is known; it rebuilds the network from those rows (Vertex_tab or
  Mix_tab values, Edge_tab values, lines from the ``Line`` columns or the map's
  ``Map_edges``) and answers the solver's first route (fewest stations, or the optimum of
  the query's weights), after one ``check`` of it (whose totals it reports when asked). RP
  without ``lookup`` (map-only categories): it checks and answers the two-station route
  source-target (right only when they are adjacent). Where no input shows the lines (the
  Edge column alone, without the map: ``edge_only``), it finds the route's transfer marks
  with ``check`` instead: every subset of the route's junctions (stations with three
  neighbours or more, or a doubled edge), then up to :data:`MARK_SEARCH` marks anywhere,
  :data:`MARK_BATCH` candidates a turn. QA with ``lookup`` offered (every type that shows a
  table): it looks up the stations the question names (else the first station its tables
  show), then every station named in the rows got, then any station the tables show and
  not yet looked up (a vertex table shows no edges), and answers the type's own answer
  function (:func:`maptab.core.qa_types.qa_answer`) on the network rebuilt as for RP (a
  vertex table alone gives each line as a chain of the stations its ``Line`` column puts on
  it; a table lists the stations a lookup found a row of it for, in the prompt's row
  order). QA without ``lookup`` (map-only types): the same answer function on the stations
  the question names alone, ``0`` where that cannot answer. ReasonMap (the map alone):
  nothing. Without any tool offered it answers as without ``lookup``. It spends one turn
  per step of the exploration and one call per station, so it sets its own budget
  (``tool_budget``: 64 turns, 4,096 calls), used unless ``--max-turns`` /
  ``--max-tool-calls`` are given.

``shortest`` and ``random`` answer QA with ``0`` and a seeded coin flip (0/1) respectively;
no baseline but the oracle reports totals.

The other baselines answer from ``request.meta`` alone (``uses_messages = False``), so the
runner builds no table text or image for them; the oracle remembers the RP answers it has given
(keyed by map, cost items, stations, weights, cost model and totals), and the solver its
solutions, so a query asked again costs a dictionary look-up.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from maptab._cache import IdentityCache, KeyedCache
from maptab.core.costs import Weights, route_totals
from maptab.core.network import Edge, Network, Vertex
from maptab.core.planning import plan_routes
from maptab.core.qa_types import qa_answer, qa_answer_of
from maptab.core.route_text import format_route, format_route_of, route_block
from maptab.core.schema import RP_BY_NAME, TOTAL_FIELDS, QAQuery, RPCategory, RPQuery
from maptab.core.solver import Route, fewest_stations, optimal_routes
from maptab.core.tables import derive_mix, split_lines
from maptab.errors import MaptabError
from maptab.io.dataset import Dataset
from maptab.run.provider import Completion, InProcessProvider, ToolCall
from maptab.run.requests import TABLE_TITLES, ChatRequest
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

    def forget_maps(self) -> None:
        """Drop the networks (and Mix_tab networks) read so far (a caller going map by map
        keeps one map's)."""
        self._mix.clear()
        for dataset in self._datasets.values():
            dataset.forget_networks()

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


class AgentOracleProvider(InProcessProvider):
    """Route planning and QA through the tools alone (module docstring)."""

    name = "agent-oracle"
    model = "agent-oracle"
    uses_images = False
    uses_messages = True  # QA: station names of the tables shown, where to start looking
    tool_budget = (64, 4096)

    def __init__(self, seed: int = 0) -> None:
        self.settings: dict[str, Any] = {}

    def answer(self, request: ChatRequest) -> str:
        return self.complete_sync(request).text

    def complete_sync(self, request: ChatRequest) -> Completion:
        offered = {t["function"]["name"] for t in request.tools or ()}
        record_type = get_kind(request.kind).samples.record
        if record_type is QAQuery:
            return self._qa(request, offered)
        if record_type is not RPQuery:
            return Completion("")
        q = request.meta.get("record")
        if not isinstance(q, RPQuery):
            q = RPQuery.from_dict(request.meta["sample"])
        history = _history(request.messages)
        checks = [r for name, args, r in history if name == "check"]
        if "lookup" not in offered:
            route = f"{q.source}-{q.target}"
            if "check" in offered and not checks:
                return _calls(("check", {"route": route}))
            return Completion(route_block(route))
        looked = {args.get("name"): r for name, args, r in history if name == "lookup"}
        if q.source not in looked or q.target not in looked:
            return _calls(
                *(("lookup", {"name": n}) for n in (q.source, q.target) if n not in looked)
            )
        graph = _Explored(looked.values(), q.scenario)
        todo = sorted(graph.unexplored())
        if todo:
            return _calls(*(("lookup", {"name": n}) for n in todo))
        s, t = graph.key(looked[q.source]), graph.key(looked[q.target])
        if s is None or t is None:
            return Completion("")
        net = graph.network(q.map_id)
        cat = RP_BY_NAME[q.category]
        if cat.criteria_free or q.weights is None:
            routes = fewest_stations(net, s, t)
        else:
            w = Weights(*q.weights)
            routes = optimal_routes(net, s, t, w, items=cat.items, model=q.cost_model)
        if not routes:
            return Completion("")
        text = format_route_of(routes[0])
        if q.scenario == "metromap" and not graph.lined() and "check" in offered:
            return self._marks(routes[0].stations, graph, history)
        if "check" in offered and not checks:
            return _calls(("check", {"route": text}))
        answer = route_block(text)
        if q.report_totals and checks:
            totals = [p.strip() for p in checks[-1].split(";") if "Total_Time:" in p]
            if totals:
                answer += "\n" + "\n".join(x.strip() for x in totals[0].split(","))
        return Completion(answer)

    @staticmethod
    def _qa(request: ChatRequest, offered: set[str]) -> Completion:
        """A QA answer: the network rebuilt from ``lookup`` results, explored from the
        stations the question names (else the first one the prompt's tables show), then
        every station named in the rows got, then any other the tables show; answered by the
        type's own answer function (:func:`maptab.core.qa_types.qa_answer`)."""
        q = request.meta.get("record")
        if not isinstance(q, QAQuery):
            q = QAQuery.from_dict(request.meta["sample"])
        params = {k: v for k, v in q.params.items() if k in QA_STATED}
        named = [v for k, v in params.items() if k in QA_STATIONS and isinstance(v, str)]
        if "lookup" not in offered:  # what the question names, nothing more
            return Completion(answer_block(_qa_value(q, _Explored((), q.scenario, named), params)))
        history = _history(request.messages)
        asked = {str(args.get("name")) for name, args, _ in history if name == "lookup"}
        graph = _Explored((r for name, _, r in history if name == "lookup"), q.scenario)
        listed = _prompt_stations(request.messages)
        shown = [s for names in listed.values() for s in names]
        if not asked:
            todo = list(dict.fromkeys(named)) or shown[:1]
        else:
            todo = sorted(graph.unexplored() - asked)
            if not todo:
                todo = [s for s in dict.fromkeys(shown) if s not in asked | graph.looked]
        if todo:
            return _calls(*(("lookup", {"name": n}) for n in todo))
        return Completion(answer_block(_qa_value(q, graph, params, listed)))

    @staticmethod
    def _marks(stations: tuple[str, ...], graph: _Explored, history: list[Any]) -> Completion:
        """A route whose lines no input shows (the Edge column alone, no map): its transfer
        marks found with ``check`` (:func:`_mark_candidates`), :data:`MARK_BATCH` candidates
        a turn."""
        checked = {args.get("route"): r for name, args, r in history if name == "check"}
        fit = next((rt for rt, r in checked.items() if "marks fit the route" in r), None)
        if fit is not None:
            return Completion(route_block(fit))
        new = []
        for marks in _mark_candidates(stations, graph):
            text = format_route(stations, marks)
            if text not in checked:
                new.append(text)
                if len(new) == MARK_BATCH:
                    break
        if new:
            return _calls(*(("check", {"route": text}) for text in new))
        return Completion(route_block(format_route(stations)))


def _mark_candidates(stations: tuple[str, ...], graph: _Explored) -> Any:
    """Transfer-mark sets to try on ``stations``: first every subset of its *junctions*
    (inner stations with three neighbours or more, or a doubled edge on either side: where
    lines can meet), fewest marks first, up to :data:`MARK_JUNCTIONS` of them; then any inner
    stations, up to :data:`MARK_SEARCH` marks."""
    inner = range(1, len(stations) - 1)
    hubs = [
        i
        for i in inner
        if len(graph.neighbours(stations[i])) >= 3
        or graph.doubled(stations[i - 1], stations[i])
        or graph.doubled(stations[i], stations[i + 1])
    ][:MARK_JUNCTIONS]
    for k in range(len(hubs) + 1):
        yield from combinations(hubs, k)
    for k in range(min(MARK_SEARCH, len(inner)) + 1):
        yield from combinations(inner, k)


QA_STATIONS = ("a", "b", "c", "d")
"""QA parameters that name stations (spots)."""
QA_STATED = (*QA_STATIONS, "line", "line2", "attribute")
"""QA parameters a question states (others, such as the spot a table drops, it does not)."""
QA_TABLES = ("vertices", "mix")
"""The tables whose stations QA types 21 and 22 read (``shown``, :mod:`maptab.core.qa_types`)."""


def _qa_value(
    q: QAQuery,
    graph: _Explored,
    params: dict[str, Any],
    listed: dict[str, list[str]] | None = None,
) -> float:
    """The type's answer on the network rebuilt from ``graph``; the stations a table lists
    are those a lookup found a row of it for, in the prompt's row order (``listed``: names
    per table title). ``0`` where the network lacks what the answer needs."""
    listed = listed or {}
    shown: dict[str, list[str]] = {}
    for part in QA_TABLES:
        title = TABLE_TITLES[part]
        if part in q.inputs:
            order = {s: i for i, s in enumerate(listed.get(title, ()))}
            rows = graph.rows.get(title, set())
            shown[part] = sorted(rows, key=lambda s: (order.get(s, len(order)), s))
    try:
        return qa_answer(q.type, graph.network(q.map_id), params, shown)
    except (MaptabError, ValueError, KeyError, ZeroDivisionError):
        return 0.0


def _prompt_stations(messages: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per table title, the station names of the first column of each table the prompt
    shows (CSV or JSON), in row order; an ``Edge`` cell gives its two stations."""
    content = messages[0].get("content") if messages else None
    out: dict[str, list[str]] = {}
    for part in content if isinstance(content, list) else ():
        text = str(part.get("text", "")) if isinstance(part, dict) else ""
        head, _, body = text.partition("\n")
        title = next((t for t in TABLE_TITLES.values() if head.startswith(f"{t} (")), None)
        if title is None:
            continue
        if body.lstrip().startswith("["):
            try:
                rows = [r for r in json.loads(body) if isinstance(r, dict)]
            except ValueError:
                continue
            cells = [str(r.get("Edge", r.get("Vertex", ""))) for r in rows]
        else:
            cells = [r[0] for r in list(csv.reader(body.split("\n")))[1:] if r]
        names = dict.fromkeys(out.get(title, ()))
        for cell in cells:
            ends = cell.partition("-")[::2] if title == TABLE_TITLES["edges"] else (cell,)
            names.update(dict.fromkeys(n for n in ends if n))
        out[title] = list(names)
    return out


MARK_SEARCH = 3
"""Transfer marks at most that the ``agent-oracle`` tries anywhere on a route whose lines it
cannot see (after its junctions)."""
MARK_JUNCTIONS = 10
"""Junctions of such a route whose every subset it tries first."""
MARK_BATCH = 256
"""Candidates it checks a turn."""


def _calls(*calls: tuple[str, dict[str, Any]]) -> Completion:
    return Completion(
        "",
        tool_calls=[
            ToolCall(f"call_{i}", name, json.dumps(args, ensure_ascii=False))
            for i, (name, args) in enumerate(calls)
        ],
    )


def _history(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    """``(tool, arguments, result)`` of each tool call answered in ``messages``."""
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    out = []
    for m in messages:
        if m.get("role") == "assistant":
            for call in m.get("tool_calls") or ():
                fn = call["function"]
                asked[call["id"]] = (fn["name"], json.loads(fn["arguments"] or "{}"))
        elif m.get("role") == "tool" and m.get("tool_call_id") in asked:
            name, args = asked.pop(m["tool_call_id"])
            out.append((name, args, str(m.get("content", ""))))
    return out


class _Explored:
    """The stations and rows known from ``lookup`` results (:mod:`maptab.run.tools`), and
    the stations ``named`` besides (known to exist, nothing else)."""

    def __init__(self, results: Any, scenario: str, named: Sequence[str] = ()) -> None:
        self.scenario = scenario
        self.vertices: dict[str, dict[str, str]] = {}
        self.edges: dict[tuple[str, str, str], dict[str, str]] = {}
        self.seen: set[str] = set(named)
        self.looked: set[str] = set()
        self.rows: dict[str, set[str]] = {}  # per table title, the stations with a row of it
        self.count: dict[frozenset[str], int] = {}  # rows per station pair, in one table
        for text in results:
            key = self.key(text)
            if key is None:
                continue
            self.looked.add(key)
            for title, rows in _sections(text):
                pairs: dict[frozenset[str], int] = {}
                for row in rows:
                    if title in ("Vertex_tab", "Mix_tab"):
                        self.vertices[row["Vertex"]] = row
                        self.seen.add(row["Vertex"])
                        self.rows.setdefault(title, set()).add(row["Vertex"])
                    elif title in ("Edge_tab", "Map_edges"):
                        u, _, v = row["Edge"].partition("-")
                        self.seen.update((u, v))
                        k = (u, v, row.get("Line", ""))
                        self.edges[k] = {**self.edges.get(k, {}), **row}
                        pair = frozenset((u, v))
                        pairs[pair] = pairs.get(pair, 0) + 1
                for pair, n in pairs.items():
                    self.count[pair] = max(self.count.get(pair, 0), n)

    @staticmethod
    def key(text: str) -> str | None:
        first = text.split("\n", 1)[0]
        return first.removeprefix("Station: ") if first.startswith("Station: ") else None

    def neighbours(self, station: str) -> set[str]:
        return {x for pair in self.count if station in pair for x in pair} - {station}

    def doubled(self, a: str, b: str) -> bool:
        """Whether a table lists the edge ``a``-``b`` more than once (two lines on it)."""
        return self.count.get(frozenset((a, b)), 0) > 1

    def lined(self) -> bool:
        """Whether any row seen gives an edge's line."""
        return any(line for _, _, line in self.edges)

    def unexplored(self) -> set[str]:
        return self.seen - self.looked

    def network(self, map_id: str) -> Network:
        def num(row: dict[str, str], col: str) -> float:
            try:
                return float(row.get(col) or 0.0)
            except ValueError:
                return 0.0

        lined = any(line for _, _, line in self.edges)
        edges = [
            Edge(
                u,
                v,
                line or None,
                num(r, "Time"),
                num(r, "Price"),
                num(r, "Comfort Level"),
                num(r, "Reliability"),
            )
            for (u, v, line), r in self.edges.items()
            if line or not lined
        ]
        lines: dict[str, list[str]] = {}
        for e in edges:
            for st in (e.u, e.v):
                if e.line and e.line not in lines.setdefault(st, []):
                    lines[st].append(e.line)
        if not edges:  # a vertex table alone: its lines, each a chain of its stations
            edges = self._membership()
        vertices = {}
        for st in sorted(self.seen):
            r = self.vertices.get(st, {})
            own = split_lines(r["Line"]) if r.get("Line") else lines.get(st, [])
            vertices[st] = Vertex(
                st,
                tuple(own),
                num(r, "Time"),
                num(r, "Price"),
                num(r, "Comfort Level"),
                num(r, "Reliability"),
                num(r, "Transfer Time"),
            )
        return Network(self.scenario, vertices, edges, map_id)  # type: ignore[arg-type]

    def _membership(self) -> list[Edge]:
        """Edges that carry only which stations each line serves, as the ``Line`` column of
        vertex rows says (their order along the line is not shown: name order stands in)."""
        members: dict[str, list[str]] = {}
        for st in sorted(self.vertices):
            for line in split_lines(self.vertices[st].get("Line") or ""):
                members.setdefault(line, []).append(st)
        return [
            Edge(u, v, line)
            for line, sts in members.items()
            for u, v in zip(sts, sts[1:], strict=False)
        ]


def _sections(text: str) -> list[tuple[str, list[dict[str, str]]]]:
    """The CSV sections (``Title (CSV):`` then rows) of a lookup result."""
    out: list[tuple[str, list[dict[str, str]]]] = []
    title: str | None = None
    body: list[str] = []

    def close() -> None:
        if title is not None:
            out.append((title, list(csv.DictReader(body))))

    for line in text.split("\n"):
        if line.endswith(" (CSV):"):
            close()
            title, body = line.removesuffix(" (CSV):"), []
        elif title is not None:
            body.append(line)
    close()
    return out


BASELINE_CLASSES: dict[str, type[_Baseline]] = {
    c.name: c for c in (OracleProvider, ShortestProvider, RandomProvider, BlankProvider)
}
