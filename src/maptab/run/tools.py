"""Tool-use mode: tools a model may call while it answers, and the conversation loop.

``maptab run … --tools zoom,lookup,check`` offers a model up to three tools (OpenAI
function-calling format, :data:`SCHEMAS`), each a pure function of the dataset sample being
answered:

* ``zoom(x0, y0, x1, y1)`` — a crop of the original, full-resolution map image (normalised
  coordinates in [0, 1], origin top left), sent back as an image within the run's pixel
  budget (:class:`~maptab.run.requests.ImageSpec`, the resize of the map itself). Offered
  when the sample shows the map and the model reads images.
* ``lookup(name)`` — what the sample's tables say about one station or spot: its rows of
  the tables the sample shows (the columns shown, the rows shown: a table that drops a row
  keeps it dropped), as CSV, and when the sample also shows the map, the station's edges as
  the map draws them (``Map_edges``: ``Edge`` and, on a metromap, ``Line``). The name is
  matched as the metrics match names: exactly up to case, diacritics, whitespace and ``-``
  / ``_`` (the strict rule), else by the papers' fuzzy rule (``difflib`` ratio ≥ 0.5 of the
  lower-cased names; the best match, ambiguity refused). Offered only when the sample shows
  a table (never in map-only categories).
* ``check(route)`` — route-planning samples: whether a route text is valid on the map
  (parsed, every name a station, right endpoints, simple, consecutive stations adjacent),
  whether its transfer marks fit its lines and, for criteria queries, its totals and its
  cost ``J`` under the query's weights; never whether it is optimal. The verdict is the
  strict metric's (the ``rp`` task kind's scoring, through the task registry).

A tool never raises on what a model sends: bad arguments, an unknown station, a tool not
offered, all come back as a one-line ``error: …`` tool result.

:class:`Conversation` runs one sample's exchange: the model is asked, each tool call it
makes is answered with a ``role: tool`` message (a zoom's image follows in a ``user``
message, as chat APIs take images only there), and it is asked again, until it answers
without a tool call or a budget is spent (:class:`ToolBudget`: model turns, tool calls
run); the answer is then its last non-empty text. The transcript kept with the prediction
(:attr:`Conversation.transcript`) is every message, with each image replaced by a reference
(``maptab:map/<map_id>``, ``maptab:zoom/<map_id>/<x0>,<y0>,<x1>,<y1>``) and each table shown
in the first message by ``{"type": "table_ref", "table": …, "rows": n}``.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from maptab.core.costs import CostError, Weights, route_cost, route_totals
from maptab.core.matching import station_match
from maptab.core.network import Network
from maptab.core.route_text import normalise_name
from maptab.core.schema import RP_BY_NAME, RPQuery
from maptab.errors import MaptabError
from maptab.io.dataset import TABLE_FILES, DatasetError, Maps
from maptab.run.provider import Completion
from maptab.run.requests import (
    TABLE_TITLES,
    ChatRequest,
    ImageSpec,
    RequestBuilder,
    crop_image,
    decoded_image,
)
from maptab.tasks.base import get as get_kind

__all__ = [
    "DEFAULT_MAX_TOOL_CALLS",
    "DEFAULT_MAX_TURNS",
    "SCHEMAS",
    "TOOL_NAMES",
    "Conversation",
    "ToolBudget",
    "ToolResult",
    "Toolbox",
    "parse_tools",
]

TOOL_NAMES = ("zoom", "lookup", "check")
DEFAULT_MAX_TURNS = 8
"""Model turns per sample at most (each a request to the model)."""
DEFAULT_MAX_TOOL_CALLS = 16
"""Tool calls run per sample at most."""


def _function(name: str, description: str, props: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": props,
                "required": list(props),
                "additionalProperties": False,
            },
        },
    }


_COORD = {"type": "number", "minimum": 0, "maximum": 1}
SCHEMAS: dict[str, dict[str, Any]] = {
    "zoom": _function(
        "zoom",
        "Zoom into the map: returns the part of the original full-resolution map image inside "
        "the box (x0, y0)-(x1, y1), in coordinates normalised to [0, 1] from the top-left "
        "corner (x to the right, y down), as an image.",
        {
            "x0": {**_COORD, "description": "left edge"},
            "y0": {**_COORD, "description": "top edge"},
            "x1": {**_COORD, "description": "right edge (> x0)"},
            "y1": {**_COORD, "description": "bottom edge (> y0)"},
        },
    ),
    "lookup": _function(
        "lookup",
        "Look up one station (or spot) in the tables shown: returns its rows (vertex row, the "
        "edges at it, its lines) as CSV. Names are matched loosely (case, accents, spacing, "
        "close spellings).",
        {"name": {"type": "string", "description": "the station's name"}},
    ),
    "check": _function(
        "check",
        "Check a route written as in the answer (A-B(transfer)-C): says whether it is valid "
        "on the map (stations, endpoints, adjacency, no repeats), whether its transfer marks "
        "fit its lines, and its totals under the query's weights. It does not say whether the "
        "route is the best one.",
        {"route": {"type": "string", "description": "the route, e.g. A-B(transfer)-C"}},
    ),
}


def parse_tools(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """The tool names of ``--tools`` (comma-separated; ``all`` for every tool), in
    :data:`TOOL_NAMES` order; an unknown name is a one-line :class:`MaptabError`."""
    if text is None:
        return ()
    items = [text] if isinstance(text, str) else list(text)
    names = {n.strip().lower() for item in items for n in item.split(",") if n.strip()}
    if "all" in names:
        names = (names - {"all"}) | set(TOOL_NAMES)
    unknown = sorted(names - set(TOOL_NAMES))
    if unknown:
        raise MaptabError(
            f"--tools: unknown tool {unknown[0]!r}; expected some of {', '.join(TOOL_NAMES)}"
        )
    return tuple(n for n in TOOL_NAMES if n in names)


@dataclass(frozen=True, slots=True)
class ToolBudget:
    """What one sample's conversation may spend: model turns and tool calls run."""

    max_turns: int = DEFAULT_MAX_TURNS
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise MaptabError("--max-turns must be at least 1")
        if self.max_tool_calls < 0:
            raise MaptabError("--max-tool-calls must be at least 0")


@dataclass(slots=True)
class ToolResult:
    """A tool's answer: its text (the ``role: tool`` content) and, for ``zoom``, the image
    (a data URL) with its transcript reference."""

    text: str
    image: str | None = None
    ref: str | None = None


class _Refused(MaptabError):
    """A tool call that cannot be answered (its message is the tool result)."""


# ----------------------------------------------------------------------------- names
class _Names:
    """Station names of one map: the strict rule of the metrics (``Network.resolve``, then
    the comparison key of :func:`~maptab.core.route_text.normalise_name`, ambiguity
    refused; the rule of :class:`maptab.score.verified.StationIndex`), then the papers'
    fuzzy rule (:func:`~maptab.core.matching.station_match`)."""

    def __init__(self, network: Network) -> None:
        self.network = network
        self.norm: dict[str, str | None] = {}
        for key in network.vertices:
            for name in {key, network.label(key)}:
                n = normalise_name(name)
                prev = self.norm.get(n, key)
                self.norm[n] = key if prev == key else None

    def exact(self, name: str) -> str | None:
        return self.network.resolve(name) or self.norm.get(normalise_name(name))

    def match(self, name: str) -> str:
        """The station ``name`` denotes; raises :class:`_Refused` naming the problem."""
        key = self.exact(name)
        if key is not None:
            return key
        want = name.strip().lower()
        best: dict[str, float] = {}
        for key in self.network.vertices:
            for cand in {key, self.network.label(key)}:
                if station_match(cand, name):
                    ratio = SequenceMatcher(None, cand.strip().lower(), want).ratio()
                    best[key] = max(best.get(key, 0.0), ratio)
        if not best:
            raise _Refused(f"no station matches {name!r}")
        top = max(best.values())
        keys = sorted(k for k, r in best.items() if r == top)
        if len(keys) > 1:
            shown = ", ".join(repr(self.network.label(k)) for k in keys[:5])
            raise _Refused(f"{name!r} matches several stations equally: {shown}")
        return keys[0]


class _Maps(Maps):
    """:class:`~maptab.io.dataset.Maps` plus each map's station-name index."""

    def __init__(self, builder: RequestBuilder) -> None:
        super().__init__(builder.dataset)
        self._names: dict[str, _Names] = {}

    def names(self, map_id: str) -> _Names:
        if map_id not in self._names:
            self._names[map_id] = _Names(self.network(map_id))
        return self._names[map_id]


# ----------------------------------------------------------------------------- tools
class Toolbox:
    """The tools of one run (``names``, a subset of :data:`TOOL_NAMES`) over the dataset of
    ``builder``; zoom images are prepared within ``image`` (the run's budget). A tool is
    *offered* for a sample only where it applies (:meth:`offered`)."""

    def __init__(
        self, builder: RequestBuilder, names: Sequence[str], image: ImageSpec | None = None
    ) -> None:
        self.builder = builder
        self.names = tuple(n for n in TOOL_NAMES if n in names)
        self.image = image or builder.encoder.spec
        self.maps = _Maps(builder)
        self._decoded: tuple[Path, Any] | None = None

    def _prompt(self, request: ChatRequest) -> Any:
        kind = get_kind(request.kind)
        split = kind.split_id(request.id)
        variant = split[1] if split else ""
        return kind.prompt(request.meta["record"], variant)

    def offered(self, request: ChatRequest) -> tuple[str, ...]:
        """The tools offered for ``request``'s sample: ``zoom`` when it shows the map and
        the model reads images, ``lookup`` when it shows a table, ``check`` for route
        planning."""
        inputs = set(self._prompt(request).inputs)
        applies = {
            "zoom": "map" in inputs and self.builder.images,
            "lookup": bool(inputs & set(TABLE_FILES)),
            "check": get_kind(request.kind).samples.record is RPQuery,
        }
        return tuple(n for n in self.names if applies[n])

    def schemas(self, names: Sequence[str]) -> list[dict[str, Any]]:
        return [SCHEMAS[n] for n in names]

    def call(self, request: ChatRequest, name: str, arguments: Any) -> ToolResult:
        """Run one tool call; never raises for what the model sent (module docstring)."""
        try:
            if name not in SCHEMAS:
                raise _Refused(f"unknown tool {name!r}")
            if name not in self.offered(request):
                raise _Refused(f"tool {name!r} is not offered for this question")
            args = _arguments(arguments, SCHEMAS[name])
            if name == "zoom":
                return self.zoom(request, args["x0"], args["y0"], args["x1"], args["y1"])
            if name == "lookup":
                return ToolResult(self.lookup(request, args["name"]))
            return ToolResult(self.check(request, args["route"]))
        except _Refused as exc:
            return ToolResult(f"error: {_line(str(exc))}")
        except (DatasetError, MaptabError, ValueError, OSError) as exc:
            return ToolResult(f"error: {name} failed ({_line(str(exc))})")

    # ------------------------------------------------------------------ zoom
    def zoom(self, request: ChatRequest, x0: float, y0: float, x1: float, y1: float) -> ToolResult:
        """A crop of the original map image (normalised box), within the pixel budget."""
        box = (x0, y0, x1, y1)
        if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in box):
            raise _Refused("zoom coordinates must be numbers in [0, 1]")
        if not (x0 < x1 and y0 < y1):
            raise _Refused("zoom needs x0 < x1 and y0 < y1")
        map_id = request.meta["map_id"]
        path = self.builder.dataset.image_path(map_id)
        if path is None:
            raise _Refused("this map has no image")
        if self._decoded is None or self._decoded[0] != path:
            self._decoded = (path, decoded_image(path))  # the last map's image, decoded once
        data, size, crop = crop_image(self._decoded[1], box, self.image)
        url = f"data:image/{self.image.format};base64,{base64.b64encode(data).decode('ascii')}"
        ref = f"maptab:zoom/{map_id}/" + ",".join(f"{v:g}" for v in box)
        text = (
            f"zoom {x0:g},{y0:g},{x1:g},{y1:g}: {crop[0]}x{crop[1]} px of the map, "
            f"shown as a {size[0]}x{size[1]} image in the next message"
        )
        return ToolResult(text, url, ref)

    # ------------------------------------------------------------------ lookup
    def lookup(self, request: ChatRequest, name: str) -> str:
        """The station's rows of the tables shown, and its edges on the map when shown."""
        prompt = self._prompt(request)
        map_id = request.meta["map_id"]
        net = self.maps.network(map_id)
        key = self.maps.names(map_id).match(name)
        shown_name = net.label(key)
        parts = [f"Station: {key}"]
        if shown_name != key:
            parts.append(f"Label: {shown_name}")
        if name not in (key, shown_name):
            parts.append(f"Matched: {name}")
        found = False
        for table in prompt.inputs:
            if table not in TABLE_FILES:
                continue
            tab = self.builder.table(map_id, table)
            order = prompt.tables.get(table) or range(len(tab.rows))
            cols = [c for c in tab.columns if (prompt.keep is None or c in prompt.keep)]
            cols = [c for c in cols if c not in prompt.drop]
            first = tab.columns[0]
            col0 = tab.columns.index(first)
            rows = []
            for i in order:
                cell = tab.rows[i][col0]
                hit = cell == key if first != "Edge" else key in _edge_ends(cell, net)
                if hit:
                    rows.append([tab.rows[i][tab.columns.index(c)] for c in cols])
            if rows:
                found = True
                parts.append(f"{TABLE_TITLES[table]} (CSV):\n{_csv(cols, rows)}")
        if "map" in prompt.inputs:
            travel = net.scenario == "travelmap"
            cols = ["Edge"] if travel else ["Edge", "Line"]
            rows = [[e.name] if travel else [e.name, e.line or ""] for e in net.adjacency[key]]
            if rows:
                found = True
                parts.append(f"Map_edges (CSV):\n{_csv(cols, rows)}")
        if not found:
            raise _Refused(f"{shown_name!r} has no row in the tables shown")
        return "\n".join(parts)

    # ------------------------------------------------------------------ check
    def check(self, request: ChatRequest, route: str) -> str:
        """The verdict on a route text (module docstring); one line."""
        kind = get_kind(request.kind)
        if kind.samples.record is not RPQuery:
            raise _Refused("check is for route-planning questions")
        q = request.meta["record"]
        if not isinstance(q, RPQuery):
            q = RPQuery.from_dict(request.meta["sample"])
        row = kind.scoring.score(self.maps, q, "", route)
        if not row["parsed"]:
            return "invalid: no route could be read from the text"
        net = self.maps.network(q.map_id)
        names = self.maps.names(q.map_id)
        tokens = (row["route"] or "").split("-")
        marks = {i for i, t in enumerate(tokens) if t.endswith("(transfer)")}
        raw = [t.removesuffix("(transfer)") for t in tokens]
        keys = [names.exact(t) for t in raw]
        if not row["valid"]:
            why = []
            if row["unresolved"]:
                why.append("not stations of the map: " + ", ".join(row["unresolved"]))
            if not row["endpoints_ok"]:
                why.append(f"it must start at {q.source} and end at {q.target}")
            if not row["simple"]:
                why.append("it visits a station twice")
            if not row["adjacent"] and not row["unresolved"]:
                pair = next(
                    (
                        (a, b)
                        for a, b in zip(keys, keys[1:], strict=False)
                        if a and b and not net.edges_between(a, b)
                    ),
                    None,
                )
                if pair:
                    why.append(f"{net.label(pair[0])} and {net.label(pair[1])} are not adjacent")
            return "invalid: " + "; ".join(why or ["not a route of the map"])
        stations = [k for k in keys if k is not None]
        out = [f"valid: {len(stations)} stations, {len(stations) - 1} hops"]
        if net.scenario == "metromap":
            out.append(f"{len(marks)} transfer marks")
            out.append(
                "transfer marks fit the route"
                if row["transfers_ok"]
                else "transfer marks do not fit the route's lines"
            )
        cat = RP_BY_NAME[q.category]
        if not cat.criteria_free and q.weights is not None:
            costed = self.maps.mix(q.map_id) if cat.items == "vertex" else net
            w = Weights(*q.weights)
            try:
                j = route_cost(costed, stations, w, items=cat.items, model=q.cost_model)
                totals = route_totals(costed, stations, items=cat.items, weights=w).as_label()
            except CostError as exc:
                raise _Refused(f"cannot cost the route ({exc})") from None
            out.append(f"J = {j:.6f} under the query's weights (lower is better)")
            out.append(", ".join(f"{k}: {_num(v)}" for k, v in totals.items()))
        return "; ".join(out)


def _edge_ends(cell: str, net: Network) -> tuple[str, ...]:
    """The two stations of an ``Edge`` cell ``A-B`` (table spellings hold no ``-``)."""
    a, _, b = cell.partition("-")
    return a, b


def _csv(cols: list[str], rows: list[list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    w.writerows(rows)
    return buf.getvalue().rstrip("\n")


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def _line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _arguments(arguments: Any, schema: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments checked against the tool's parameters."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            raise _Refused(f"arguments are not valid JSON ({exc})") from None
    if not isinstance(arguments, dict):
        raise _Refused("arguments must be a JSON object")
    params = schema["function"]["parameters"]
    props = params["properties"]
    for key in params["required"]:
        if key not in arguments:
            raise _Refused(f"missing argument {key!r}")
    extra = sorted(set(arguments) - set(props))
    if extra:
        raise _Refused(f"unknown argument {extra[0]!r}")
    out = {}
    for key, spec in props.items():
        value = arguments[key]
        if spec["type"] == "number":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise _Refused(f"argument {key!r} must be a number")
            out[key] = float(value)
        else:
            if not isinstance(value, str) or not value.strip():
                raise _Refused(f"argument {key!r} must be a non-empty string")
            out[key] = value
    return out


# ----------------------------------------------------------------------------- the loop
@dataclass(slots=True)
class Conversation:
    """One sample's exchange with a model that may call tools (module docstring).

    Drive it with ``while (req := conv.next_request()) is not None: conv.receive(model(req))``;
    then :meth:`completion` is the answer (texts' last, reasoning joined, tokens summed),
    :attr:`transcript` the messages kept, :attr:`tool_calls` and :attr:`turns` what was
    spent and :attr:`stop` why it ended (``answer``, ``max_turns``, ``max_tool_calls``).
    """

    request: ChatRequest
    toolbox: Toolbox
    budget: ToolBudget
    messages: list[dict[str, Any]] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    offered: tuple[str, ...] = ()
    tool_calls: int = 0
    turns: int = 0
    stop: str | None = None
    calls_by_tool: dict[str, int] = field(default_factory=dict)
    _texts: list[str] = field(default_factory=list)
    _reasoning: list[str] = field(default_factory=list)
    _tokens: list[int] = field(default_factory=lambda: [0, 0])
    _refs: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.messages = list(self.request.messages)
        self.offered = self.toolbox.offered(self.request)
        self.transcript = [_kept_first(m, self.request) for m in self.messages]

    def next_request(self) -> ChatRequest | None:
        """The next request to send, or ``None`` when the conversation is over."""
        if self.stop is not None:
            return None
        tools = self.toolbox.schemas(self.offered) or None
        return replace(self.request, messages=list(self.messages), tools=tools)

    def receive(self, c: Completion) -> None:
        """Take the model's answer to the last request: run its tool calls, or end."""
        self.turns += 1
        self._tokens[0] += c.prompt_tokens
        self._tokens[1] += c.completion_tokens
        if c.reasoning:
            self._reasoning.append(c.reasoning)
        if c.text.strip():
            self._texts.append(c.text)
        calls = list(c.tool_calls or ())
        kept: dict[str, Any] = {"role": "assistant", "content": c.text}
        if c.reasoning:
            kept["reasoning"] = c.reasoning
        if not calls:
            self.transcript.append(kept)
            self.stop = "answer"
            return
        wire = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
        ]
        kept["tool_calls"] = wire
        self.transcript.append(kept)
        if self.tool_calls >= self.budget.max_tool_calls:
            self.stop = "max_tool_calls"
            return
        self.messages.append({"role": "assistant", "content": c.text or None, "tool_calls": wire})
        images = []
        for call in calls:
            if self.tool_calls < self.budget.max_tool_calls:
                self.tool_calls += 1
                self.calls_by_tool[call.name] = self.calls_by_tool.get(call.name, 0) + 1
                result = self.toolbox.call(self.request, call.name, call.arguments)
            else:
                result = ToolResult("error: tool-call budget spent; answer without tools")
            msg = {"role": "tool", "tool_call_id": call.id, "content": result.text}
            self.messages.append(msg)
            self.transcript.append({**msg, "name": call.name})
            if result.image is not None:
                images.append((call.id, result))
        for call_id, result in images:
            assert result.image is not None and result.ref is not None
            content = [
                {"type": "text", "text": f"zoom result of tool call {call_id}"},
                {"type": "image_url", "image_url": {"url": result.image}},
            ]
            self.messages.append({"role": "user", "content": content})
            self.transcript.append(
                {
                    "role": "user",
                    "content": [
                        content[0],
                        {"type": "image_url", "image_url": {"url": result.ref}},
                    ],
                }
            )
        if self.turns >= self.budget.max_turns:
            self.stop = "max_turns"

    def completion(self) -> Completion:
        """The answer: the last non-empty text, the reasonings joined, tokens summed."""
        return Completion(
            self._texts[-1] if self._texts else "",
            "\n\n".join(self._reasoning),
            self._tokens[0],
            self._tokens[1],
        )

    def record(self) -> dict[str, Any]:
        """The fields added to the sample's prediction row."""
        return {
            "transcript": self.transcript,
            "tool_calls": self.tool_calls,
            "turns": self.turns,
            "tools_used": dict(sorted(self.calls_by_tool.items())),
            "stop": self.stop,
        }


def _kept_first(message: dict[str, Any], request: ChatRequest) -> dict[str, Any]:
    """A message of the request as kept: images by reference, tables by name and size."""
    content = message.get("content")
    if not isinstance(content, list):
        return dict(message)
    titles = {f"{title} (": name for name, title in TABLE_TITLES.items()}
    parts: list[Any] = []
    for i, part in enumerate(content):
        if not isinstance(part, dict):
            parts.append(part)
        elif part.get("type") == "image_url":
            ref = f"maptab:map/{request.meta.get('map_id', '')}"
            parts.append({"type": "image_url", "image_url": {"url": ref}})
        elif i and part.get("type") == "text":
            text = str(part.get("text", ""))
            name = next((n for t, n in titles.items() if text.startswith(t)), None)
            if name is None:
                parts.append(part)
            else:
                json_rows = text.rstrip().endswith("]")
                rows = max(0, text.count("\n") - (2 if json_rows else 1))
                parts.append({"type": "table_ref", "table": name, "rows": rows})
        else:
            parts.append(part)
    return {**message, "content": parts}
