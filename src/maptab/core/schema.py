"""Records that flow through the pipeline: queries (dataset), predictions (run), and the
registry of the 12 route-planning categories (SPEC 9) expressed as data.

Each record is one :class:`msgspec.Struct`: its fields are the keys of its JSON row (the
dataset contract, docs/reference/file-formats.md), and the annotations, with their
:class:`msgspec.Meta` constraints, are the whole check of a row. :func:`row_decoder` and
:func:`line_decoder` read a row into its record, or raise :class:`RecordError` naming the
field. The four reported totals keep their MapTab spellings (``Total_Time``,
``Total_Price``, ``Average_Comfort Level``, ``Average_Reliability``).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import re
import sys
import types
import typing
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, Union

import msgspec

from maptab._limits import loads_json, open_regular
from maptab.errors import MaptabError

SCHEMA_VERSION = 1

TOTAL_FIELDS = ("Total_Time", "Total_Price", "Average_Comfort Level", "Average_Reliability")
CRITERIA = ("time", "price", "comfort", "reliability")


@dataclasses.dataclass(frozen=True, slots=True)
class RPCategory:
    """One route-planning category: what the model is shown and what it optimises.

    ``inputs`` names the parts shown: ``map`` (image), ``edges`` (Edge_tab), ``vertices``
    (Vertex_tab), ``mix`` (Mix_tab). ``edge_column_only`` shows only the ``Edge`` column.
    ``criteria`` empty means criteria-free (fewest stations). ``items`` is ``edge_vertex``
    (edges and vertices are cost items) or ``vertex`` (Mix_tab category: vertex items only).
    """

    name: str
    inputs: tuple[str, ...]
    criteria: tuple[str, ...] = ()
    edge_column_only: bool = False
    items: str = "edge_vertex"

    @property
    def criteria_free(self) -> bool:
        return not self.criteria

    @property
    def uses_tables(self) -> bool:
        """Whether the model sees any table (the oracle can then solve it exactly)."""
        return any(i in self.inputs for i in ("edges", "vertices", "mix"))


_EV = ("map", "edges", "vertices")
RP_CATEGORIES: tuple[RPCategory, ...] = (
    RPCategory("map_only", ("map",)),
    RPCategory("edge_only", ("edges",), edge_column_only=True),
    RPCategory("map_edge", ("map", "edges"), edge_column_only=True),
    RPCategory("time", _EV, ("time",)),
    RPCategory("price", _EV, ("price",)),
    RPCategory("comfort", _EV, ("comfort",)),
    RPCategory("reliability", _EV, ("reliability",)),
    RPCategory("time_price_reliability", _EV, ("time", "price", "reliability")),
    RPCategory("time_comfort_reliability", _EV, ("time", "comfort", "reliability")),
    RPCategory("price_comfort_reliability", _EV, ("price", "comfort", "reliability")),
    RPCategory("all_criteria", _EV, CRITERIA),
    RPCategory("map_mix", ("map", "mix"), CRITERIA, items="vertex"),
)
RP_BY_NAME: dict[str, RPCategory] = {c.name: c for c in RP_CATEGORIES}

RP_STYLES = (
    "direct_optimization",
    "graph_theoretic",
    "instruction_seeking",
    "user_oriented",
    "constraint_explicit",
)
QA_CAPABILITIES: dict[str, str] = {
    "VP": "Visual Perception",
    "TU": "Table Understanding",
    "CA": "Cross-modal Alignment",
    "GT": "Graph Topology Reasoning",
    "SL": "Spatial Localization",
    "NR": "Numerical Reasoning",
    "PP": "Path Planning",
    "GR": "Global Reasoning",
}
"""The QA capabilities (MapTab Table 1): paper abbreviation → name, in the paper's column
order; the builder tags QA types with the codes, reports print the abbreviations."""
QA_TYPE_COUNT = 24
"""How many diagnostic QA types there are (SPEC 10), numbered 1 … ``QA_TYPES``."""
QA_STYLES = ("direct", "conversational", "formal", "academic", "concise")


# --------------------------------------------------------------------------- field types
# ``extra`` of a ``Meta`` holds the wording of a refused value: ``expected`` replaces the
# type's name in "expected X, found Y"; ``refused`` is the whole message when a constraint
# refuses a value of the right type ({field}: the field's path, {value}, {count}: its length)
_MAX = sys.float_info.max
Finite = Annotated[
    float,
    msgspec.Meta(
        ge=-_MAX,
        le=_MAX,
        extra={"refused": "field {field}: expected a finite number, found {value!r}"},
    ),
]
Number = int | Finite
"""A JSON number as ``json.loads`` reads it (``1`` stays an int); NaN and infinities are
refused."""
NonEmpty = Annotated[str, msgspec.Meta(min_length=1, extra={"refused": "field {field} is empty"})]
Total = Annotated[int | Finite | None, msgspec.Meta(extra={"expected": "a number"})]
Category = Annotated[
    Literal[tuple(RP_BY_NAME)],  # type: ignore[valid-type]
    msgspec.Meta(extra={"refused": "field {field}: unknown RP category {value!r}"}),
]
GoldRoutes = Annotated[
    list[str], msgspec.Meta(min_length=1, extra={"refused": "field {field}: no gold route"})
]
Weights = Annotated[
    list[Number],
    msgspec.Meta(
        min_length=len(CRITERIA),
        max_length=len(CRITERIA),
        extra={"refused": f"field {{field}}: expected {len(CRITERIA)} numbers, found {{count}}"},
    ),
]
QAType = Annotated[
    int,
    msgspec.Meta(
        ge=1,
        le=QA_TYPE_COUNT,
        extra={"refused": f"field {{field}}: {{value}} is not a QA type (1-{QA_TYPE_COUNT})"},
    ),
]


class RPQuery(msgspec.Struct):
    """One route-planning sample (a row of ``rp.jsonl``).

    ``routes`` are the gold references as MapTab route strings (``A-B(transfer)-C``), each
    with its ``route_vertex_numbers`` / ``transfer_vertex_numbers`` entry. ``weights`` is
    ``[wT, wP, wC, wR]`` for criteria categories, ``None`` otherwise; ``totals`` (the four
    totals of ``routes[0]``, criteria categories only) are written as four top-level keys of
    the row (:data:`TOTAL_FIELDS`), which the last four fields read and hand over to
    ``totals`` when the record is made. ``tables`` gives, per table shown
    (``edges``/``vertices``/``mix``), the row indices of the map's CSV in the order shown to
    the model (per-sample shuffle, SPEC 5). ``repetition`` is FR/PR/NR (criteria only).
    ``release_rank`` is the rank field of a record imported from a MapTab release (metromap
    ``shortest_route_vertex_numbers_rank``, travelmap ``qdi_rank``), kept verbatim so the
    record can be exported back; maptab never computes it (``docs/guides/import-and-export.md``).
    ``route_count`` is the exact number of optimal routes, of which ``routes`` lists the
    first ones (``truncated`` when it lists fewer; ``None`` in records that do not say,
    e.g. imported MapTab labels, whose lists are complete). Scoring never needs the full
    list (docs/reference/metrics.md, docs/reference/cost-model.md).
    """

    id: NonEmpty
    map_id: NonEmpty
    scenario: str
    split: str
    category: Category
    style: str
    question: str
    source: str
    target: str
    routes: GoldRoutes
    route_vertex_numbers: list[int]
    transfer_vertex_numbers: list[int]
    map_difficulty: str
    query_difficulty: str
    weights: Weights | None = None
    totals: dict[str, Number] | None = None
    repetition: str | None = None
    report_totals: bool = False
    cost_model: str = "additive"
    tables: dict[str, list[int]] = msgspec.field(default_factory=dict)
    release_rank: int | None = None
    route_count: int | None = None
    truncated: bool = False
    total_time: Total = msgspec.field(default=None, name=TOTAL_FIELDS[0])
    total_price: Total = msgspec.field(default=None, name=TOTAL_FIELDS[1])
    average_comfort: Total = msgspec.field(default=None, name=TOTAL_FIELDS[2])
    average_reliability: Total = msgspec.field(default=None, name=TOTAL_FIELDS[3])

    def __post_init__(self) -> None:
        given = (self.total_time, self.total_price, self.average_comfort, self.average_reliability)
        if given != _NO_TOTALS:  # a row's totals: they are the record's ``totals``
            self.totals = {k: v for k, v in zip(TOTAL_FIELDS, given, strict=True) if v is not None}
            self.total_time = self.total_price = None
            self.average_comfort = self.average_reliability = None

    def to_dict(self) -> dict[str, Any]:
        """The row: fields in order, ``totals`` written as the four top-level keys."""
        d = dict(zip(_RP_KEYS, msgspec.structs.astuple(self), strict=False))
        totals = d.pop("totals") or {}
        for k in TOTAL_FIELDS:
            d[k] = totals.get(k)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RPQuery:
        """The record of a row (keys it does not know are ignored); raises
        :class:`RecordError` naming the field."""
        return row_decoder(cls)(d)


_NO_TOTALS = (None, None, None, None)
_RP_KEYS = RPQuery.__struct_fields__[: -len(TOTAL_FIELDS)]


class QAQuery(msgspec.Struct):
    """One diagnostic QA sample (a row of ``qa.jsonl``); ``type`` is 1–24 (SPEC 10).

    ``params`` are the stations, lines or edges the question is about, so the answer can be
    recomputed from the map (:func:`maptab.core.qa_types.qa_answer`).
    """

    id: NonEmpty
    map_id: NonEmpty
    scenario: str
    split: str
    type: QAType
    capabilities: list[str]
    style: str
    question: str
    answer: Number
    inputs: list[str]
    tables: dict[str, list[int]] = msgspec.field(default_factory=dict)
    drop_line_column: bool = False
    params: dict[str, Any] = msgspec.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> QAQuery:
        """The record of a row (keys it does not know are ignored); raises
        :class:`RecordError` naming the field."""
        return row_decoder(cls)(d)


class RMSegment(msgspec.Struct):
    """One ReasonMap route segment."""

    route_name: str
    departure_stop: str
    arrival_stop: str
    via_stops: list[str]
    num_via_stops: int

    def to_dict(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self)


class ReasonMapQuestion(msgspec.Struct):
    """One ReasonMap station pair (a row of ``reasonmap.jsonl``).

    A run expands each row into two requests, ``<id>/short`` and ``<id>/long``.
    ``routes`` are the reference routes, each a list of segments: JSON objects with the
    fields of :class:`RMSegment` (checked when the record is made; other keys are kept).
    """

    id: NonEmpty
    map_id: NonEmpty
    split: str
    station_1: str
    station_2: str
    question_short: str
    question_long: str
    long_template: str
    question_difficulty: str
    map_difficulty: str
    routes: list[list[dict[str, Any]]]

    def __post_init__(self) -> None:
        for i, route in enumerate(self.routes):
            for j, seg in enumerate(route):
                try:
                    msgspec.convert(seg, RMSegment)
                except msgspec.ValidationError as exc:
                    raise ValueError(f"routes[{i}][{j}]: {_problem(RMSegment, exc, seg)}") from None

    def to_dict(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ReasonMapQuestion:
        """The record of a row (keys it does not know are ignored); raises
        :class:`RecordError` naming the field."""
        return row_decoder(cls)(d)


class Prediction(msgspec.Struct):
    """One model answer (a row of ``RUN_DIR/predictions.jsonl``), keyed by sample ``id``.

    ``error`` is set (and ``response`` empty) when the request failed after its retries; such
    rows are API failures, not wrong answers, and ``maptab run --retry-errors`` redoes them.
    """

    id: str
    kind: str  # "rp" | "qa" | "reasonmap"
    response: str
    reasoning: str = ""
    latency_s: Number = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    provider: str = ""
    model: str = ""
    settings: dict[str, Any] = msgspec.field(default_factory=dict)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Prediction:
        """The record of a row (keys it does not know are ignored); raises
        :class:`RecordError` naming the field."""
        return row_decoder(cls)(d)


_encode_str = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) uses


class PredictionLines:
    """``line(pred)``: the ``predictions.jsonl`` row of a prediction (no newline), the text
    ``json.dumps(row, ensure_ascii=False)`` writes. The usual field types are written
    directly, strings with ``json``'s own encoder, and the ``settings`` object (one per run)
    encoded once while it stays the same (5 µs a row less; an empty one, as each row of a
    results file has, is ``{}`` without a look); a row with any other value goes
    through ``json.dumps``. One per writer (the run's store, a scored results file)."""

    def __init__(self) -> None:
        # the last rows' settings object, a copy of it (unchanged since?), and its JSON
        self._settings: tuple[Any, Any, str] = (None, None, "")

    def line(self, pred: Prediction) -> str:
        p = pred
        if not (
            type(p.id) is str
            and type(p.kind) is str
            and type(p.response) is str
            and type(p.reasoning) is str
            and type(p.latency_s) is float
            and math.isfinite(p.latency_s)
            and type(p.prompt_tokens) is int
            and type(p.completion_tokens) is int
            and type(p.provider) is str
            and type(p.model) is str
            and (p.error is None or type(p.error) is str)
        ):
            row = msgspec.structs.asdict(pred)
            return json.dumps(row, ensure_ascii=False)
        settings = p.settings
        if type(settings) is dict and not settings:
            settings_text = "{}"  # rows read from a results file: each has its own, empty
        else:
            if settings is not self._settings[0] or settings != self._settings[1]:
                text = json.dumps(settings, ensure_ascii=False)
                self._settings = (settings, copy.deepcopy(settings), text)
            settings_text = self._settings[2]
        s = _encode_str
        return (
            f'{{"id": {s(p.id)}, "kind": {s(p.kind)}, "response": {s(p.response)}, '
            f'"reasoning": {s(p.reasoning)}, "latency_s": {float.__repr__(p.latency_s)}, '
            f'"prompt_tokens": {int.__repr__(p.prompt_tokens)}, '
            f'"completion_tokens": {int.__repr__(p.completion_tokens)}, '
            f'"provider": {s(p.provider)}, "model": {s(p.model)}, '
            f'"settings": {settings_text}, '
            f'"error": {"null" if p.error is None else s(p.error)}}}'
        )


class RecordError(MaptabError):
    """A JSONL row or JSON record that breaks its schema; the caller adds file and line."""


Record = Union["RPQuery", "QAQuery", "ReasonMapQuestion"]
R = TypeVar("R")


@cache
def row_decoder(cls: type[R]) -> Callable[[Any], R]:
    """``decode(row)``: the record of the class ``cls`` (a :class:`msgspec.Struct`, or a
    dataclass of a third-party task kind) made from a JSON value (a row as ``json.loads``
    gives it), every field checked against its annotation; keys ``cls`` does not know are
    ignored. A row it refuses raises :class:`RecordError` with a one-line message naming
    the field (``field 'weights': expected 4 numbers, found 2``). The ``decode`` of the
    built-in task kinds."""
    convert = msgspec.convert

    def decode(row: Any) -> R:
        try:
            return convert(row, cls)
        except msgspec.ValidationError as exc:
            raise RecordError(_problem(cls, exc, row)) from None

    return decode


@cache
def line_decoder(cls: type[R]) -> Callable[..., R | None]:
    """``decode(line, where, error=RecordError)``: the record of one JSONL line (bytes) of
    the class ``cls``, as :func:`row_decoder` makes it from the line's JSON value; ``None``
    for a blank line. Bytes that are not UTF-8 text or not JSON raise ``error`` naming
    ``where``; a row its schema refuses raises :class:`RecordError` naming the field (the
    caller adds the file and line).

    The line is decoded by msgspec straight into the record; a line msgspec refuses is
    read again with ``json.loads`` (:func:`~maptab._limits.loads_json`) and checked as a
    value, which names the problem (or accepts what only ``json.loads`` reads, such as an
    unpaired surrogate escape)."""
    typed = msgspec.json.Decoder(cls).decode
    checked = row_decoder(cls)

    def decode(line: bytes, where: str, error: type[MaptabError] = RecordError) -> R | None:
        try:
            # msgspec does not look inside the keys it skips: their bytes are checked here
            if line.isascii() or line.decode("utf-8"):
                return typed(line)
        except (msgspec.DecodeError, ValueError, RecursionError):
            pass
        text = line_json_text(line, where, error)
        return None if text is None else checked(loads_json(text, where, error=error))

    return decode


def line_json_text(line: bytes, where: str, error: type[MaptabError] = RecordError) -> str | None:
    """The text of one JSONL line (bytes), ``None`` for a blank line; bytes that are not
    UTF-8 text raise ``error`` naming ``where``."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text ({exc.reason})") from None
    return text if text.strip() else None


def decode_record(
    cls: type, row: Any, extra: Callable[[dict[str, Any]], str | None] | None = None
) -> Any:
    """The record of the class ``cls`` made from a dataset row (:func:`row_decoder`), after
    checking that its ``id`` and ``map_id`` are not empty and ``extra`` (the values the
    scorer relies on); raises :class:`RecordError` naming the field. For third-party task
    kinds whose records are dataclasses (``docs/guides/add-a-task-kind.md``)."""
    record = row_decoder(cls)(row)
    for key in ("id", "map_id"):
        if getattr(record, key, None) == "":
            raise RecordError(f"field {key!r} is empty")
    problem = extra(row) if extra else None
    if problem:
        raise RecordError(problem)
    return record


def parse_record(kind: str, row: Any) -> Record:
    """The typed record of a dataset row of the task kind ``kind`` (its
    :attr:`~maptab.tasks.base.Samples.decode`); raises :class:`RecordError` naming the
    field."""
    from maptab.tasks.base import get

    return get(kind).samples.decode(row)  # type: ignore[no-any-return]


def parse_prediction(row: Any) -> Prediction:
    """A :class:`Prediction` from a ``predictions.jsonl`` row, its fields type-checked."""
    return row_decoder(Prediction)(row)


# --------------------------------------------------------------------------- messages
_AT = re.compile(r"(?P<text>.*?)(?: - at `\$(?P<path>.*)`)?", re.DOTALL)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[\.\.\.\]")
_WRONG_TYPE = re.compile(r"Expected `[^`]*`, got `([^`]*)`")
_MISSING = re.compile(r"Object missing required field `(.*)`")
_JSON_NAMES = {"null": "NoneType", "array": "list", "object": "dict"}


def _problem(cls: type, exc: msgspec.ValidationError, row: Any) -> str:
    """The one-line message of a row of ``cls`` that msgspec refused with ``exc``: the
    field's path as the row spells it, and what was expected and found."""
    m = _AT.fullmatch(str(exc))
    assert m is not None  # the pattern matches any text
    text, path = m["text"], m["path"]
    if path is None:  # the row itself, or a message of the record's own check
        missing = _MISSING.fullmatch(text)
        if missing:
            return f"field {missing[1]!r} is missing"
        if _WRONG_TYPE.fullmatch(text):
            return f"expected a JSON object, found {type(row).__name__}"
        return text
    field, tp, value, found = _walk(cls, [m.groups() for m in _STEP.finditer(path)], row)
    missing = _MISSING.fullmatch(text)
    if missing:
        return f"field {f'{field}.{missing[1]}'!r} is missing"
    wrong = _WRONG_TYPE.fullmatch(text)
    if wrong:
        name = type(value).__name__ if found else _JSON_NAMES.get(wrong[1], wrong[1])
        return f"field {field!r}: expected {_type_text(tp)}, found {name}"
    template = _refusal(tp, value) if found else None
    if template:
        count = len(value) if isinstance(value, list | dict | str) else 0
        return template.format(field=repr(field), value=value, count=count)
    return f"field {field!r}: {text[:1].lower()}{text[1:]}"


def _walk(
    cls: type, steps: list[tuple[str | None, str | None]], row: Any
) -> tuple[str, Any, Any, bool]:
    """Follow a msgspec error path (``(field, None)`` then ``(None, index)`` steps, or
    ``(None, None)`` for a dict's value) into the row and the annotations: the path as text
    (``weights[0]``, ``tables.edges[3]``), the annotation and the value there, and whether
    the value was found."""
    first = steps[0][0] or "" if steps else ""
    tp = _field_types(cls).get(first, Any)
    found = isinstance(row, dict) and first in row
    value = row.get(first) if found else None
    shown = first
    for _, index in steps[1:]:
        if index is not None:
            i = int(index)
            tp = _inner(tp, list)
            shown += f"[{i}]"
            found = found and isinstance(value, list) and i < len(value)
            value = value[i] if found else None
        else:  # a dict's value: msgspec does not say which; the first that fails
            tp = _inner(tp, dict)
            key = _failing_key(value, tp) if found else None
            found = key is not None
            shown += f".{key if found else '...'}"
            value = value[key] if found else None
    return shown, tp, value, found


def _failing_key(value: Any, tp: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    for key, item in value.items():
        try:
            msgspec.convert(item, tp)
        except msgspec.ValidationError:
            return str(key)
    return None


def _strip(tp: Any) -> Any:
    while typing.get_origin(tp) is Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _arms(tp: Any) -> tuple[Any, ...]:
    tp = _strip(tp)
    if typing.get_origin(tp) in (Union, types.UnionType):
        return typing.get_args(tp)
    return (tp,)


def _inner(tp: Any, container: type) -> Any:
    """The item annotation of the ``container`` (list or dict) arm of ``tp``."""
    for arm in _arms(tp):
        base = _strip(arm)
        if base is container or typing.get_origin(base) is container:
            args = typing.get_args(base)
            return args[-1] if args else Any
    return Any


@cache
def _field_types(cls: type) -> dict[str, Any]:
    """JSON key -> annotation of each field of the record class ``cls``."""
    if isinstance(cls, type) and issubclass(cls, msgspec.Struct):
        return {f.encode_name: f.type for f in msgspec.structs.fields(cls)}
    if dataclasses.is_dataclass(cls):
        hints = typing.get_type_hints(cls, include_extras=True)
        return {f.name: hints[f.name] for f in dataclasses.fields(cls)}
    return {}


def _extra(tp: Any, key: str) -> Any:
    """``key`` of the ``Meta.extra`` of the outermost ``Annotated`` layers of ``tp``."""
    while typing.get_origin(tp) is Annotated:
        for meta in tp.__metadata__:
            if isinstance(meta, msgspec.Meta) and meta.extra and key in meta.extra:
                return meta.extra[key]
        tp = typing.get_args(tp)[0]
    return None


def _refusal(tp: Any, value: Any) -> str | None:
    """The ``refused`` message of the constraint on ``tp`` that applies to ``value``."""
    found = _extra(tp, "refused")
    if found is not None:
        return str(found)
    arms = _arms(tp)
    if len(arms) == 1:
        return None
    for arm in arms:
        if _fits(arm, value):
            found = _refusal(arm, value)
            if found is not None:
                return found
    return None


def _fits(tp: Any, value: Any) -> bool:
    """Whether ``value`` has the JSON type of the (non-union) annotation ``tp``."""
    base = _strip(tp)
    origin = typing.get_origin(base) or base
    if origin is Literal:
        return any(type(a) is type(value) for a in typing.get_args(base))
    if base is None or base is type(None):
        return value is None
    return origin is Any or type(value) is origin


def _type_text(tp: Any) -> str:
    """An annotation as messages show it (``list[str]``, ``float | None``: a JSON number
    is a ``float``)."""
    expected = _extra(tp, "expected")
    if expected is not None:
        return str(expected)
    tp = _strip(tp)
    if tp is None or tp is type(None):
        return "None"
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " | ".join(dict.fromkeys(type(a).__name__ for a in typing.get_args(tp)))
    if origin in (Union, types.UnionType):
        parts = list(dict.fromkeys(_type_text(a) for a in typing.get_args(tp)))
        if "int" in parts and "float" in parts:
            parts.remove("int")
        return " | ".join(parts)
    if origin is not None:
        args = ", ".join(_type_text(a) for a in typing.get_args(tp))
        return f"{getattr(origin, '__name__', origin)}[{args}]"
    if tp is Any:
        return "Any"
    return getattr(tp, "__name__", str(tp))


# --------------------------------------------------------------------------- JSONL files
def read_jsonl_lines(path: str | Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a JSONL file (a regular file);
    a malformed line raises :class:`RecordError` naming file and line."""
    p = Path(path)
    n = 0
    with open_regular(p, error=RecordError) as fh:
        try:
            for n, line in enumerate(fh, 1):  # noqa: B007 (n names the line of a decode error)
                if line.strip():
                    yield n, loads_json(line, f"{p}:{n}", error=RecordError)
        except UnicodeDecodeError as exc:
            raise RecordError(f"{p}:{n + 1}: not UTF-8 text ({exc.reason})") from None


_LINE_BUFFER = 1 << 16


def jsonl_byte_lines(
    path: str | Path, *, error: type[MaptabError] = RecordError
) -> Iterator[tuple[int, int, bytes]]:
    """``(line number, byte offset, bytes)`` of every line of a JSONL file (a regular file;
    :func:`line_text` reads one). Read through a 64 KiB buffer: dataset rows run to a few
    KB, and the default 8 KiB one made reading a paper-size ``rp.jsonl`` line by line take
    3.3 instead of 0.9 µs a row."""
    offset = 0
    with open_regular(Path(path), binary=True, error=error, buffering=_LINE_BUFFER) as fh:
        for n, line in enumerate(fh, 1):
            start, offset = offset, offset + len(line)
            yield n, start, line


def line_text(
    line: bytes, shown: str | Path, n: int, *, error: type[MaptabError] = RecordError
) -> str | None:
    """The text of line ``n`` of a JSONL file (``shown`` in errors), ``None`` when it is
    blank; a line that is not UTF-8 raises ``error`` naming the file and line."""
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{shown}:{n}: not UTF-8 text ({exc.reason})") from None
    return text if text.strip() else None


def jsonl_text_lines(
    path: str | Path, *, error: type[MaptabError] = RecordError, shown: str | Path | None = None
) -> Iterator[tuple[int, int, int, str]]:
    """``(line number, byte offset, byte length, text)`` of each non-blank line of a JSONL
    file (a regular file), so that a row can be read again by offset; a line that is not
    UTF-8 raises ``error`` naming the file (``shown``, default ``path``) and line."""
    where = shown or Path(path)
    for n, start, line in jsonl_byte_lines(path, error=error):
        text = line_text(line, where, n, error=error)
        if text is not None:
            yield n, start, len(line), text


def read_jsonl(path: str | Path) -> Iterator[Any]:
    """Rows of a JSONL file; a malformed line raises :class:`RecordError` naming file and line."""
    for _, row in read_jsonl_lines(path):
        yield row


def write_jsonl(path: str | Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as deterministic JSONL (UTF-8, keys in insertion order, ``\\n`` endings)."""
    with Path(path).open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
