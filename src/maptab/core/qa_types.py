"""The 24 diagnostic QA types, their exact answers and their question wording (SPEC 10).

Each type is a row of :data:`QA_TYPES`: scenario, what the model is shown, the reasoning
level (GP global perception, LP local perception, SR spatial relationship), the
capabilities of the paper's Table 1, the answer kind, and two small pure functions — one
that draws the question's parameters from a map, one that computes the answer. Nothing
dispatches on the type number in code: :func:`qa_answer`, :func:`sample_qa_params` and
:func:`qa_question` look the row up and call what it names.

Conventions
-----------
* ``params`` hold station (spot) *table names* (the keys of :class:`Network`), line names,
  and ``attribute`` (``time``/``price``/``comfort``) — JSON-ready, stored with the sample.
* "Along line X" distances walk the edges of line X only. On a loop line the shorter way
  round counts (type 11 refuses a pair whose two ways tie); samplers prefer non-loop lines.
* Answers are floats rounded to 2 decimals, half-up, computed in exact decimal arithmetic;
  yes/no answers are 1/0.
* Map+Mix_tab types read Time, Reliability and Transfer Time (metromap) and Time and Price
  (travelmap). SPEC 5 keeps all of them equal to the Vertex_tab values (only the metromap
  vertex Price is replaced in Mix_tab), so answers read the vertex rows directly.
* Types 21 and 22 depend on the table as shown to the model: ``shown`` maps a table part
  (``"vertices"`` or ``"mix"``) to the station names in the order shown. Type 22's sampler
  returns ``dropped`` (a list of zero or one spot, chosen in a seeded half of the samples)
  that the dataset builder leaves out of the table; the answer is read from ``shown``.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from maptab.core.network import Edge, Network, Scenario, hop_distances
from maptab.core.rounding import round_half_up
from maptab.core.schema import QA_CAPABILITIES, QA_STYLES, QAQuery
from maptab.errors import MaptabError

Params = dict[str, Any]
Shown = Mapping[str, Sequence[str]] | None
AnswerFn = Callable[[Network, Params, Shown, int], "float | Fraction"]
SampleFn = Callable[[Network, np.random.Generator, int], Params]

CAPABILITIES = QA_CAPABILITIES
"""Capability codes (the paper's Table 3 abbreviations) and their names."""

TABLE1: dict[Scenario, dict[str, str]] = {
    "metromap": {
        "VP": "M-GP M-LP M-SR",
        "TU": "E-GP E-LP E-SR V-GP V-LP V-SR",
        "CA": "MM-GP MM-LP MM-SR",
        "GT": "M-LP E-SR MM-SR",
        "SL": "M-SR V-LP V-SR",
        "NR": "M-GP M-LP E-GP E-SR V-GP V-LP MM-GP MM-LP",
        "PP": "MM-LP MM-SR",
        "GR": "MM-GP MM-SR",
    },
    "travelmap": {
        "VP": "M-GP M-LP M-SR",
        "TU": "E-GP E-LP E-SR V-GP V-LP V-SR",
        "CA": "MM-GP MM-LP MM-SR",
        "GT": "M-SR E-SR",
        "SL": "M-LP V-SR",
        "NR": "M-GP E-GP V-GP V-LP MM-SR",
        "PP": "E-SR MM-LP MM-SR",
        "GR": "MM-GP MM-LP",
    },
}
"""The paper's Table 1: per scenario, capability → problem codes (input-level)."""

INPUTS: dict[str, tuple[str, ...]] = {
    "M": ("map",),
    "E": ("edges",),
    "V": ("vertices",),
    "MM": ("map", "mix"),
}
"""Input code of Table 1 → the parts shown (names as in :class:`maptab.core.schema.RPCategory`)."""

ATTRIBUTES: dict[str, str] = {"time": "Time", "price": "Price", "comfort": "Comfort Level"}
"""``attribute`` parameter values and their table column names."""

EDGE_ATTRIBUTES: dict[Scenario, tuple[str, ...]] = {
    "metromap": ("time", "price", "comfort"),
    "travelmap": ("time", "price"),
}
"""The ``attribute`` values an edge question (types 5 and 17) may ask, per scenario."""

LOW_TIME = 30
"""Types 19 and 23: a spot "with Time < 30"."""
NEAR_HOPS = 5
"""Type 18: a hop distance "below 5"."""


class QAError(MaptabError):
    """A QA question that cannot be asked or answered on this map (names the map and type)."""


# --------------------------------------------------------------------------- helpers
def _fail(network: Network, qtype: int, message: str) -> QAError:
    return QAError(f"map {network.map_id or '?'}, QA type {qtype}: {message}")


def round2(value: float | Fraction) -> float:
    """``value`` rounded to 2 decimals, halves up (``0.745 → 0.75``), as a float."""
    exact = Fraction(value) if isinstance(value, Fraction) else Fraction(repr(float(value)))
    return round_half_up(exact, 2)


def _exact(value: float) -> Fraction:
    """The decimal a table cell holds (``0.72`` exactly, not its binary neighbour)."""
    return Fraction(repr(float(value)))


def _line_adjacency(network: Network, line: str) -> dict[str, list[str]]:
    adj: dict[str, list[str]] = {}
    for e in network.line_edges(line):
        adj.setdefault(e.u, []).append(e.v)
        adj.setdefault(e.v, []).append(e.u)
    return adj


def _line_paths(network: Network, qtype: int, line: str, a: str, b: str) -> list[list[str]]:
    """Every shortest station sequence from ``a`` to ``b`` along ``line`` (2 on a loop tie)."""
    adj = _line_adjacency(network, line)
    if not adj:
        raise _fail(network, qtype, f"unknown line {line!r}")
    for s in (a, b):
        if s not in adj:
            raise _fail(network, qtype, f"station {s!r} is not on {line!r}")
    dist = hop_distances(adj, b)
    paths = [[a]]
    while paths[0][-1] != b:
        paths = [p + [n] for p in paths for n in adj[p[-1]] if dist[n] == dist[p[-1]] - 1]
    return paths


def _line_stations(network: Network, line: str) -> set[str]:
    return {s for e in network.line_edges(line) for s in (e.u, e.v)}


def _edge(network: Network, qtype: int, a: str, b: str, line: str | None) -> Edge:
    for e in network.edges_between(a, b):
        if e.line == line:
            return e
    on = f" on {line!r}" if line else ""
    raise _fail(network, qtype, f"no edge {a}-{b}{on}")


def _line(network: Network, qtype: int, name: str) -> str:
    if name not in network.line_names:
        raise _fail(network, qtype, f"unknown line {name!r}")
    return name


def _attribute(network: Network, qtype: int, name: str) -> str:
    """The ``attribute`` parameter, checked: a column the scenario's edge question asks for."""
    allowed = EDGE_ATTRIBUTES[network.scenario]
    if name not in allowed:
        raise _fail(network, qtype, f"attribute {name!r} is not one of {', '.join(allowed)}")
    return name


def _station(network: Network, qtype: int, name: str) -> str:
    if name not in network.vertices:
        raise _fail(network, qtype, f"unknown station {name!r}")
    return name


def _table(network: Network, qtype: int, shown: Shown, parts: Sequence[str]) -> Sequence[str]:
    for part in parts:
        if shown and part in shown:
            return shown[part]
    raise _fail(network, qtype, f"needs the {parts[0]} table order shown to the model")


# --------------------------------------------------------------------------- answers
# Each takes (network, params, shown, qtype) and returns the unrounded answer.
def _a_line_count(n: Network, p: Params, shown: Shown, q: int) -> float:
    return len(n.line_names)


def _a_stations_between(n: Network, p: Params, shown: Shown, q: int) -> float:
    return len(_line_paths(n, q, p["line"], p["a"], p["b"])[0]) - 2


def _a_on_line(n: Network, p: Params, shown: Shown, q: int) -> float:
    return int(_line(n, q, p["line"]) in n.lines_of(_station(n, q, p["a"])))


def _a_longest_line(n: Network, p: Params, shown: Shown, q: int) -> float:
    return max(len(_line_stations(n, line)) for line in n.line_names)


def _a_edge_value(n: Network, p: Params, shown: Shown, q: int) -> float:
    attribute = _attribute(n, q, p["attribute"])
    return getattr(_edge(n, q, p["a"], p["b"], p.get("line")), attribute)


def _a_edges_between(n: Network, p: Params, shown: Shown, q: int) -> float:
    line = p["line"]
    _edge(n, q, p["a"], p["b"], line)
    _edge(n, q, p["c"], p["d"], line)
    return min(
        len(_line_paths(n, q, line, x, y)[0]) - 1
        for x in (p["a"], p["b"])
        for y in (p["c"], p["d"])
    )


def _a_transfer_count(n: Network, p: Params, shown: Shown, q: int) -> float:
    return len(n.transfer_stations)


def _a_transfers_on_line(n: Network, p: Params, shown: Shown, q: int) -> float:
    return sum(n.vertices[s].is_transfer for s in _line_stations(n, _line(n, q, p["line"])))


def _a_common_line(n: Network, p: Params, shown: Shown, q: int) -> float:
    a, b = _station(n, q, p["a"]), _station(n, q, p["b"])
    return int(bool(set(n.lines_of(a)) & set(n.lines_of(b))))


def _a_max_dwell(n: Network, p: Params, shown: Shown, q: int) -> Fraction:
    return max(
        sum((_exact(n.vertices[s].time) for s in _line_stations(n, line)), Fraction(0))
        for line in n.line_names
    )


def _a_mean_reliability(n: Network, p: Params, shown: Shown, q: int) -> Fraction:
    paths = _line_paths(n, q, p["line"], p["a"], p["b"])
    if len(paths) > 1:
        raise _fail(n, q, f"{p['a']} and {p['b']} are opposite on loop {p['line']!r}")
    values = [_exact(n.vertices[s].reliability) for s in paths[0]]
    return sum(values, Fraction(0)) / len(values)


def _a_min_transfer_time(n: Network, p: Params, shown: Shown, q: int) -> float:
    x, y = _line(n, q, p["line"]), _line(n, q, p["line2"])
    if len(n.line_names) == 1:
        return 1
    shared = [v.transfer_time for v in n.vertices.values() if {x, y} <= set(v.lines)]
    return min(shared, default=0)


def _a_spot_count(n: Network, p: Params, shown: Shown, q: int) -> float:
    return len(n.vertices)


def _a_on_cycle(n: Network, p: Params, shown: Shown, q: int) -> float:
    a = _station(n, q, p["a"])
    graph = n.simple_graph()
    for u in sorted(graph[a]):
        rest = {s: [w for w in ws if {s, w} != {a, u}] for s, ws in graph.items()}
        if a in hop_distances(
            rest, u
        ):  # u still reaches a without the edge a-u: a cycle through it
            return 1
    return 0


def _a_neighbour_count(n: Network, p: Params, shown: Shown, q: int) -> float:
    return len(n.neighbours(_station(n, q, p["a"])))


def _a_most_frequent(n: Network, p: Params, shown: Shown, q: int) -> float:
    counts = Counter(s for e in n.edges for s in (e.u, e.v))
    return max(counts.values(), default=0)


def _hops(n: Network, q: int, a: str, b: str) -> int:
    dist = hop_distances(n.simple_graph(), _station(n, q, a))
    if _station(n, q, b) not in dist:
        raise _fail(n, q, f"{b!r} cannot be reached from {a!r}")
    return dist[b]


def _a_near(n: Network, p: Params, shown: Shown, q: int) -> float:
    return int(_hops(n, q, p["a"], p["b"]) < NEAR_HOPS)


def _a_low_time_count(n: Network, p: Params, shown: Shown, q: int) -> float:
    return sum(v.time < LOW_TIME for v in n.vertices.values())


def _a_cheapest_of_four(n: Network, p: Params, shown: Shown, q: int) -> float:
    return min(n.vertices[_station(n, q, p[k])].price for k in ("a", "b", "c", "d"))


def _a_row_above(n: Network, p: Params, shown: Shown, q: int) -> float:
    order = list(_table(n, q, shown, ("vertices",)))
    for s in (p["a"], p["b"]):
        if s not in order:
            raise _fail(n, q, f"station {s!r} is not in the table shown")
    return int(order.index(p["a"]) < order.index(p["b"]))


def _a_table_complete(n: Network, p: Params, shown: Shown, q: int) -> float:
    listed = set(_table(n, q, shown, ("mix", "vertices")))
    return int(listed >= set(n.vertices))


def _a_low_time_on_shortest(n: Network, p: Params, shown: Shown, q: int) -> float:
    graph = n.simple_graph()
    da, db = (
        hop_distances(graph, _station(n, q, p["a"])),
        hop_distances(graph, _station(n, q, p["b"])),
    )
    if p["b"] not in da:
        raise _fail(n, q, f"{p['b']!r} cannot be reached from {p['a']!r}")
    on_path = [s for s in da if s in db and da[s] + db[s] == da[p["b"]]]
    return int(any(n.vertices[s].time < LOW_TIME for s in on_path))


def _a_cheapest_neighbour(n: Network, p: Params, shown: Shown, q: int) -> float:
    neighbours = n.neighbours(_station(n, q, p["a"]))
    if not neighbours:
        raise _fail(n, q, f"{p['a']!r} has no neighbour")
    return min(n.vertices[s].price for s in neighbours)


# --------------------------------------------------------------------------- samplers
# Each takes (network, rng, qtype) and returns the question's params. ``rng`` is a
# ``numpy.random.Generator``; sequences are drawn from in table order, so draws are seeded.
def _pick(rng: np.random.Generator, seq: Sequence[Any]) -> Any:
    return seq[int(rng.integers(len(seq)))]


def _pick_distinct(rng: np.random.Generator, seq: Sequence[Any], k: int) -> list[Any]:
    return [seq[int(i)] for i in rng.choice(len(seq), size=k, replace=False)]


def _balanced(
    rng: np.random.Generator, draw: Callable[[], Params], key: Callable[[Params], bool]
) -> Params:
    """Draw params whose ``key`` is a seeded coin flip's side, when 64 draws can find one."""
    want = bool(rng.integers(2))
    params = draw()
    for _ in range(63):
        if key(params) == want:
            break
        params = draw()
    return params


def _need(n: Network, q: int, ok: bool, what: str) -> None:
    if not ok:
        raise _fail(n, q, f"the map has {what}")


def _lines(n: Network, q: int, min_edges: int = 1) -> list[str]:
    """Lines with at least ``min_edges`` edges, non-loop ones when the map has any."""
    lines = [line for line in n.line_names if len(n.line_edges(line)) >= min_edges]
    _need(n, q, bool(lines), f"no line with {min_edges} or more edges")
    straight = [line for line in lines if not n.is_loop(line)]
    return straight or lines


def _s_none(n: Network, rng: np.random.Generator, q: int) -> Params:
    return {}


def _s_station(n: Network, rng: np.random.Generator, q: int) -> Params:
    return {"a": _pick(rng, n.stations)}


def _s_two_stations(n: Network, rng: np.random.Generator, q: int) -> Params:
    _need(n, q, len(n.vertices) >= 2, "fewer than 2 stations")
    a, b = _pick_distinct(rng, n.stations, 2)
    return {"a": a, "b": b}


def _s_four_stations(n: Network, rng: np.random.Generator, q: int) -> Params:
    _need(n, q, len(n.vertices) >= 4, "fewer than 4 spots")
    return dict(zip("abcd", _pick_distinct(rng, n.stations, 4), strict=True))


def _s_line(n: Network, rng: np.random.Generator, q: int) -> Params:
    _need(n, q, bool(n.line_names), "no line")
    return {"line": _pick(rng, n.line_names)}


def _s_pair_on_line(n: Network, rng: np.random.Generator, q: int) -> Params:
    """Two stations of one line, redrawn while they sit opposite on a loop (the two ways round
    tie, so "the stretch from A to B" would not be one sequence of stations)."""
    for _ in range(64):
        line = _pick(rng, _lines(n, q))
        a, b = _pick_distinct(rng, sorted(_line_stations(n, line)), 2)
        if len(_line_paths(n, q, line, a, b)) == 1:
            break
    return {"line": line, "a": a, "b": b}


def _s_edge(n: Network, rng: np.random.Generator, q: int) -> Params:
    _need(n, q, bool(n.edges), "no edge")
    e = _pick(rng, n.edges)
    params: Params = {"a": e.u, "b": e.v, "attribute": _pick(rng, EDGE_ATTRIBUTES[n.scenario])}
    if e.line is not None:
        params["line"] = e.line
    return params


def _s_two_edges(n: Network, rng: np.random.Generator, q: int) -> Params:
    line = _pick(rng, _lines(n, q, min_edges=2))
    e1, e2 = _pick_distinct(rng, n.line_edges(line), 2)
    return {"line": line, "a": e1.u, "b": e1.v, "c": e2.u, "d": e2.v}


def _s_station_line(n: Network, rng: np.random.Generator, q: int) -> Params:
    _need(n, q, bool(n.line_names), "no line")
    return {"a": _pick(rng, n.stations), "line": _pick(rng, n.line_names)}


def _yes_no(answer: AnswerFn, draw: SampleFn) -> SampleFn:
    """A sampler that balances the 1/0 answers of ``answer`` over params drawn by ``draw``."""

    def sample(n: Network, rng: np.random.Generator, q: int) -> Params:
        return _balanced(rng, lambda: draw(n, rng, q), lambda p: bool(answer(n, p, None, q)))

    return sample


def _s_line_pair(n: Network, rng: np.random.Generator, q: int) -> Params:
    lines = n.line_names
    _need(n, q, bool(lines), "no line")
    if len(lines) == 1:
        return {"line": lines[0], "line2": lines[0]}

    def draw() -> Params:
        x, y = _pick_distinct(rng, lines, 2)
        return {"line": x, "line2": y}

    return _balanced(
        rng,
        draw,
        lambda p: any({p["line"], p["line2"]} <= set(v.lines) for v in n.vertices.values()),
    )


def _s_dropped(n: Network, rng: np.random.Generator, q: int) -> Params:
    return {"dropped": [_pick(rng, n.stations)] if rng.integers(2) else []}


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True, slots=True)
class QAType:
    """One QA type of SPEC 10.

    ``inputs`` are the parts shown (``map``, ``edges``, ``vertices``, ``mix``); ``level`` is
    ``GP``/``LP``/``SR``; ``capabilities`` are codes of :data:`CAPABILITIES` (Table 1);
    ``kind`` is ``count``, ``yesno`` or ``value`` (how the answer is phrased).
    """

    number: int
    scenario: Scenario
    inputs: tuple[str, ...]
    level: str
    capabilities: tuple[str, ...]
    description: str
    kind: str
    answer: AnswerFn = field(repr=False, compare=False)
    sample: SampleFn = field(repr=False, compare=False)

    @property
    def code(self) -> str:
        """The Table 1 problem code, e.g. ``MM-SR``."""
        short = next(k for k, v in INPUTS.items() if v == self.inputs)
        return f"{short}-{self.level}"

    @property
    def drop_line_column(self) -> bool:
        """Metromap Map+Mix_tab questions hide the ``Line`` column (SPEC 5)."""
        return self.scenario == "metromap" and "mix" in self.inputs


def _row(
    number: int,
    scenario: Scenario,
    code: str,
    description: str,
    kind: str,
    answer: AnswerFn,
    sample: SampleFn = _s_none,
) -> QAType:
    inputs, level = code.rsplit("-", 1)
    caps = tuple(c for c, codes in TABLE1[scenario].items() if code in codes.split())
    return QAType(number, scenario, INPUTS[inputs], level, caps, description, kind, answer, sample)


M, T = "metromap", "travelmap"
QA_TYPES: tuple[QAType, ...] = (
    _row(1, M, "M-GP", "number of lines", "count", _a_line_count),
    _row(2, M, "M-LP", "stations strictly between A and B along line X", "count",
         _a_stations_between, _s_pair_on_line),
    _row(3, M, "M-SR", "is A on line X", "yesno", _a_on_line, _yes_no(_a_on_line, _s_station_line)),
    _row(4, M, "E-GP", "stations on the line with the most stations", "count", _a_longest_line),
    _row(5, M, "E-LP", "Time/Price/Comfort Level of edge A-B on line X", "value",
         _a_edge_value, _s_edge),
    _row(6, M, "E-SR", "edges strictly between edge A-B and edge C-D along line X", "count",
         _a_edges_between, _s_two_edges),
    _row(7, M, "V-GP", "transfer stations in the table", "count", _a_transfer_count),
    _row(8, M, "V-LP", "transfer stations on line X", "count", _a_transfers_on_line, _s_line),
    _row(9, M, "V-SR", "are A and B on a common line", "yesno", _a_common_line,
         _yes_no(_a_common_line, _s_two_stations)),
    _row(10, M, "MM-GP", "largest total dwell time (sum of station Time) over lines", "value",
         _a_max_dwell),
    _row(11, M, "MM-LP", "mean station Reliability from A to B (inclusive) along line X",
         "value", _a_mean_reliability, _s_pair_on_line),
    _row(12, M, "MM-SR", "least Transfer Time among stations on both X and Y; 0 if none; "
         "1 if the map has one line", "value", _a_min_transfer_time, _s_line_pair),
    _row(13, T, "M-GP", "number of spots", "count", _a_spot_count),
    _row(14, T, "M-LP", "does A lie on a cycle", "yesno", _a_on_cycle, _yes_no(_a_on_cycle, _s_station)),
    _row(15, T, "M-SR", "number of neighbours of A", "count", _a_neighbour_count, _s_station),
    _row(16, T, "E-GP", "occurrences of the most frequent spot in the Edge column", "count",
         _a_most_frequent),
    _row(17, T, "E-LP", "Time/Price of edge A-B", "value", _a_edge_value, _s_edge),
    _row(18, T, "E-SR", "is the hop distance between A and B below 5", "yesno", _a_near,
         _yes_no(_a_near, _s_two_stations)),
    _row(19, T, "V-GP", "spots with Time below 30", "count", _a_low_time_count),
    _row(20, T, "V-LP", "lowest Price among A, B, C and D", "value", _a_cheapest_of_four,
         _s_four_stations),
    _row(21, T, "V-SR", "is A's row above B's in the table shown", "yesno", _a_row_above,
         _s_two_stations),
    _row(22, T, "MM-GP", "does the table list every spot of the map", "yesno",
         _a_table_complete, _s_dropped),
    _row(23, T, "MM-LP", "is a spot with Time below 30 on some shortest path from A to B "
         "(ends included)", "yesno", _a_low_time_on_shortest, _yes_no(_a_low_time_on_shortest, _s_two_stations)),
    _row(24, T, "MM-SR", "lowest Price among A's neighbours", "value", _a_cheapest_neighbour,
         _s_station),
)  # fmt: skip
"""All QA types (24), in SPEC 10 order (12 per scenario); every count of QA types is its
length."""

QA_BY_NUMBER: dict[int, QAType] = {t.number: t for t in QA_TYPES}


def qa_type(qtype: int) -> QAType:
    """The :class:`QAType` numbered ``qtype`` (1–24); anything else raises :class:`QAError`."""
    try:
        return QA_BY_NUMBER[qtype]
    except KeyError:
        raise QAError(f"unknown QA type {qtype!r}; expected 1-{len(QA_TYPES)}") from None


def _checked(qtype: int, network: Network) -> QAType:
    row = qa_type(qtype)
    if row.scenario != network.scenario:
        raise _fail(
            network, qtype, f"is a {row.scenario} question, the map is a {network.scenario}"
        )
    return row


# --------------------------------------------------------------------------- public API
def qa_answer(
    qtype: int, network: Network, params: Mapping[str, Any], shown: Shown = None
) -> float:
    """The exact answer of QA type ``qtype`` about ``network`` (SPEC 10), rounded to 2 decimals.

    ``params`` are those of :func:`sample_qa_params` (or hand-written: ``a``–``d`` stations,
    ``line``/``line2``, ``attribute``). ``shown`` is needed by types 21 and 22 (module
    docstring). Yes/no answers are ``1.0``/``0.0``. Raises :class:`QAError` for an unknown
    type, a question of the other scenario, or params that do not fit the map.
    """
    row = _checked(qtype, network)
    try:
        value = row.answer(network, dict(params), shown, qtype)
    except KeyError as exc:
        raise _fail(network, qtype, f"missing parameter {exc.args[0]!r}") from None
    return round2(value)


def qa_answer_of(query: QAQuery, network: Network) -> float:
    """The exact answer of a stored QA query: :func:`qa_answer` with its ``params`` and the
    stations its ``tables`` show (row indices into the map's table order). Raises
    :class:`QAError` for a row index out of range."""
    shown: dict[str, list[str]] = {}
    for part, order in query.tables.items():
        if part == "edges":
            continue
        if any(not 0 <= i < len(network.stations) for i in order):
            raise QAError(f"{query.id}: 'tables.{part}' has a row index out of range")
        shown[part] = [network.stations[i] for i in order]
    return qa_answer(query.type, network, query.params, shown)


def sample_qa_params(qtype: int, network: Network, rng: np.random.Generator) -> Params:
    """Draw the parameters of one type-``qtype`` question about ``network`` (seeded by ``rng``).

    Yes/no types flip a seeded coin for the answer they aim at and draw until they hit it (so
    the 1/0 answers are balanced over a dataset). Type 22 returns ``dropped``: the spot the
    builder must leave out of the table shown, or ``[]``.
    """
    return _checked(qtype, network).sample(network, rng, qtype)


@cache
def qa_templates() -> dict[str, Any]:
    """The parsed ``templates/qa.toml``."""
    text = resources.files("maptab.generate").joinpath("templates/qa.toml").read_text("utf-8")
    return tomllib.loads(text)


def qa_question(qtype: int, style: str, params: Mapping[str, Any], network: Network) -> str:
    """The question text of type ``qtype`` in instruction ``style`` (one of ``QA_STYLES``).

    Wording comes from ``templates/qa.toml`` (``[types.N]``, one entry per style) followed by
    the answer-kind hint (``[hints]``). Placeholders: ``{a}``–``{d}``, ``{line}``,
    ``{line2}``, ``{attribute}`` (the column name), ``{edge1}`` (``a-b``), ``{edge2}``
    (``c-d``).
    """
    row = _checked(qtype, network)
    if style not in QA_STYLES:
        raise QAError(f"unknown QA style {style!r}; expected one of {QA_STYLES}")
    templates = qa_templates()
    fields = {k: v for k, v in params.items() if isinstance(v, str)}
    if "attribute" in params:
        fields["attribute"] = ATTRIBUTES[_attribute(network, qtype, params["attribute"])]
    if "a" in params and "b" in params:
        fields["edge1"] = f"{params['a']}-{params['b']}"
    if "c" in params and "d" in params:
        fields["edge2"] = f"{params['c']}-{params['d']}"
    try:
        text = templates["types"][str(qtype)][style].format(**fields)
    except KeyError as exc:
        raise _fail(network, qtype, f"question needs parameter {exc.args[0]!r}") from None
    return f"{text} {templates['hints'][row.kind]}"
