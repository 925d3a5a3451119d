"""Records that flow through the pipeline: queries (dataset), predictions (run), and the
registry of the 12 route-planning categories (SPEC 9) expressed as data.

JSONL rows use the field names of the dataset contract (README, "Dataset layout"); the four
reported totals keep their MapTab spellings (``Total_Time``, ``Total_Price``,
``Average_Comfort Level``, ``Average_Reliability``).
"""

from __future__ import annotations

import copy
import json
import math
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import MISSING, dataclass, field, fields
from functools import cache, partial
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import msgspec

from maptab.errors import MaptabError
from maptab.limits import loads_json, open_regular

SCHEMA_VERSION = 1

TOTAL_FIELDS = ("Total_Time", "Total_Price", "Average_Comfort Level", "Average_Reliability")
CRITERIA = ("time", "price", "comfort", "reliability")


@cache
def field_names(cls: type) -> tuple[str, ...]:
    """The field names of the dataclass ``cls``, in order; computed once per class, so
    decoding and encoding rows does not call :func:`dataclasses.fields` per row."""
    return tuple(f.name for f in fields(cls))


@cache
def _known(cls: type) -> frozenset[str]:
    return frozenset(field_names(cls))


def _shallow(record: Any) -> dict[str, Any]:
    """Field name -> value, without copying nested containers (records are JSON-ready)."""
    return {name: getattr(record, name) for name in field_names(type(record))}


def _known_fields(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    """The items of ``d`` that are fields of ``cls`` (keys it does not know are ignored)."""
    known = _known(cls)
    return {k: v for k, v in d.items() if k in known}


@cache
def _defaults(cls: type) -> tuple[tuple[str, Any, Callable[[], Any] | None], ...]:
    """Per field of the dataclass ``cls``, in order: name, default, default factory."""
    return tuple(
        (f.name, f.default, None if f.default_factory is MISSING else f.default_factory)
        for f in fields(cls)
    )


def _construct(cls: type, d: dict[str, Any], **given: Any) -> Any:
    """``cls(**_known_fields(cls, d), **given)``, built positionally: the same record (keys
    ``cls`` does not know ignored, defaults for the absent ones; a required field missing is
    the same ``TypeError``), in half the time of the keyword form for a dataset row."""
    args = []
    for name, default, factory in _defaults(cls):
        if name in given:
            args.append(given[name])
        elif name in d:
            args.append(d[name])
        elif factory is not None:
            args.append(factory())
        elif default is not MISSING:
            args.append(default)
        else:
            return cls(**{**_known_fields(cls, d), **given})  # raises: a field is missing
    return cls(*args)


@dataclass(frozen=True, slots=True)
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


@dataclass(slots=True)
class RPQuery:
    """One route-planning sample (a row of ``rp.jsonl``).

    ``routes`` are the gold references as MapTab route strings (``A-B(transfer)-C``), each
    with its ``route_vertex_numbers`` / ``transfer_vertex_numbers`` entry. ``weights`` is
    ``[wT, wP, wC, wR]`` for criteria categories, ``None`` otherwise; the four totals are those
    of ``routes[0]`` (criteria categories only). ``tables`` gives, per table shown
    (``edges``/``vertices``/``mix``), the row indices of the map's CSV in the order shown to
    the model (per-sample shuffle, SPEC 5). ``repetition`` is FR/PR/NR (criteria only).
    ``release_rank`` is the rank field of a record imported from a MapTab release (metromap
    ``shortest_route_vertex_numbers_rank``, travelmap ``qdi_rank``), kept verbatim so the
    record can be exported back; maptab never computes it (``docs/import-export.md``).
    ``route_count`` is the exact number of optimal routes, of which ``routes`` lists the
    first ones (``truncated`` when it lists fewer; ``None`` in records that do not say,
    e.g. imported MapTab labels, whose lists are complete). Scoring never needs the full
    list (docs/scoring.md, docs/cost-model.md).
    """

    id: str
    map_id: str
    scenario: str
    split: str
    category: str
    style: str
    question: str
    source: str
    target: str
    routes: list[str]
    route_vertex_numbers: list[int]
    transfer_vertex_numbers: list[int]
    map_difficulty: str
    query_difficulty: str
    weights: list[float] | None = None
    totals: dict[str, float] | None = None
    repetition: str | None = None
    report_totals: bool = False
    cost_model: str = "additive"
    tables: dict[str, list[int]] = field(default_factory=dict)
    release_rank: int | None = None
    route_count: int | None = None
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = _shallow(self)
        totals = d.pop("totals") or {}
        for k in TOTAL_FIELDS:
            d[k] = totals.get(k)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RPQuery:
        totals = {k: d[k] for k in TOTAL_FIELDS if d.get(k) is not None}
        return _construct(cls, d, totals=totals or None)  # type: ignore[no-any-return]


@dataclass(slots=True)
class QAQuery:
    """One diagnostic QA sample (a row of ``qa.jsonl``); ``type`` is 1–24 (SPEC 10).

    ``params`` are the stations, lines or edges the question is about, so the answer can be
    recomputed from the map (:func:`maptab.qa.qa_answer`).
    """

    id: str
    map_id: str
    scenario: str
    split: str
    type: int
    capabilities: list[str]
    style: str
    question: str
    answer: float
    inputs: list[str]
    tables: dict[str, list[int]] = field(default_factory=dict)
    drop_line_column: bool = False
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return _shallow(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> QAQuery:
        return _construct(cls, d)  # type: ignore[no-any-return]


@dataclass(slots=True)
class RMSegment:
    """One ReasonMap route segment."""

    route_name: str
    departure_stop: str
    arrival_stop: str
    via_stops: list[str]
    num_via_stops: int


@dataclass(slots=True)
class ReasonMapQuestion:
    """One ReasonMap station pair (a row of ``reasonmap.jsonl``).

    A run expands each row into two requests, ``<id>/short`` and ``<id>/long``.
    ``routes`` are the reference routes, each a list of segments.
    """

    id: str
    map_id: str
    split: str
    station_1: str
    station_2: str
    question_short: str
    question_long: str
    long_template: str
    question_difficulty: str
    map_difficulty: str
    routes: list[list[dict[str, Any]]]

    def to_dict(self) -> dict[str, Any]:
        return _shallow(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ReasonMapQuestion:
        return cls(**_known_fields(cls, d))


@dataclass(slots=True)
class Prediction:
    """One model answer (a row of ``RUN_DIR/predictions.jsonl``), keyed by sample ``id``.

    ``error`` is set (and ``response`` empty) when the request failed after its retries; such
    rows are API failures, not wrong answers, and ``maptab run --retry-errors`` redoes them.
    """

    id: str
    kind: str  # "rp" | "qa" | "reasonmap"
    response: str
    reasoning: str = ""
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    provider: str = ""
    model: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _shallow(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Prediction:
        return cls(**_known_fields(cls, d))


_PREDICTION_FIELDS = fields(Prediction)
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
            row = {f.name: getattr(pred, f.name) for f in _PREDICTION_FIELDS}  # asdict copies
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


_SCALARS: dict[Any, frozenset[type]] = {
    str: frozenset({str}),
    bool: frozenset({bool}),
    int: frozenset({int}),
    float: frozenset({int, float}),
    type(None): frozenset({type(None)}),
}
"""JSON types accepted for a scalar annotation (``float`` takes integers; ``int`` and
``float`` refuse booleans: values come from ``json.loads``, so exact types are compared)."""

Check = Callable[[Any], bool]


@cache
def _checker(tp: Any) -> Check:
    """A predicate telling whether a JSON value fits the annotation ``tp``; built once per
    annotation, so checking a record costs little beside parsing it."""
    if tp is Any:
        return lambda v: True
    if tp is None:
        tp = type(None)
    if tp in _SCALARS:
        ok = _SCALARS[tp]
        return lambda v: type(v) in ok
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if all(t in _SCALARS for t in args):
            ok = frozenset().union(*(_SCALARS[t] for t in args))
            return lambda v: type(v) in ok
        rest = [t for t in args if t is not type(None)]
        if len(rest) == 1:  # X | None
            inner = _checker(rest[0])
            return lambda v: v is None or inner(v)
        options = tuple(_checker(t) for t in args)
        return lambda v: any(c(v) for c in options)
    if origin is list:
        (item,) = typing.get_args(tp)
        if item in _SCALARS:
            kinds = _SCALARS[item]
            return lambda v: type(v) is list and {*map(type, v)} <= kinds
        each = _checker(item)
        return lambda v: type(v) is list and all(map(each, v))
    if origin is dict:
        key, item = typing.get_args(tp)
        keys, values = _checker(key), _checker(item)
        return lambda v: type(v) is dict and all(map(keys, v)) and all(map(values, v.values()))
    raise TypeError(f"no JSON check for the annotation {tp!r}")


def _scalar_kinds(tp: Any) -> frozenset[type] | None:
    """The JSON types a scalar annotation (or a union of scalars) accepts; ``None`` for any
    other annotation (checked by its :func:`_checker`)."""
    if tp is None:
        tp = type(None)
    if tp in _SCALARS:
        return _SCALARS[tp]
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = typing.get_args(tp)
        if all(t in _SCALARS for t in args):
            return frozenset().union(*(_SCALARS[t] for t in args))
    return None


@cache
def _plan(cls: type) -> tuple[tuple[str, bool, Check, str, frozenset[type] | None], ...]:
    """Per field of the dataclass ``cls``: name, required, check, annotation text, and the
    accepted types of a scalar field (compared directly, without calling the check)."""
    hints = typing.get_type_hints(cls)
    return tuple(
        (
            f.name,
            f.default is MISSING and f.default_factory is MISSING,
            _checker(hints[f.name]),
            _type_text(hints[f.name]),
            _scalar_kinds(hints[f.name]),
        )
        for f in fields(cls)
    )


_ABSENT = object()


def _type_ok(value: Any, tp: Any) -> bool:
    """Whether the JSON value ``value`` fits the annotation ``tp``."""
    return _checker(tp)(value)


def _type_text(tp: Any) -> str:
    if typing.get_origin(tp) is None and hasattr(tp, "__name__"):
        return tp.__name__
    return str(tp).replace("typing.", "")


def check_fields(cls: type, row: Any) -> str | None:
    """The first problem of ``row`` as a record of the dataclass ``cls`` (a required field
    missing, a value of the wrong JSON type), or ``None``. Unknown keys are ignored."""
    if type(row) is not dict:
        return f"expected a JSON object, found {type(row).__name__}"
    for name, required, ok, text, kinds in _plan(cls):
        value = row.get(name, _ABSENT)
        if value is _ABSENT:
            if required:
                return f"field {name!r} is missing"
        elif type(value) not in kinds if kinds is not None else not ok(value):
            return f"field {name!r}: expected {text}, found {type(value).__name__}"
    return None


def _empty_key(row: dict[str, Any]) -> str | None:
    for key in ("id", "map_id"):
        if not row[key]:
            return f"field {key!r} is empty"
    return None


def rp_row_problem(row: dict[str, Any]) -> str | None:
    """The first value of an :class:`RPQuery` row the scorer cannot use, or ``None``."""
    for key in TOTAL_FIELDS:
        value = row.get(key)
        if value is not None and not _type_ok(value, float):
            return f"field {key!r}: expected a number, found {type(value).__name__}"
    if row["category"] not in RP_BY_NAME:
        return f"field 'category': unknown RP category {row['category']!r}"
    if not row["routes"]:
        return "field 'routes': no gold route"
    if row.get("weights") is not None and len(row["weights"]) != len(CRITERIA):
        return f"field 'weights': expected {len(CRITERIA)} numbers, found {len(row['weights'])}"
    return None


def qa_row_problem(row: dict[str, Any]) -> str | None:
    """A QA row whose ``type`` is not one of the :data:`QA_TYPE_COUNT` types, or ``None``."""
    if not 1 <= row["type"] <= QA_TYPE_COUNT:
        return f"field 'type': {row['type']} is not a QA type (1-{QA_TYPE_COUNT})"
    return None


def reasonmap_row_problem(row: dict[str, Any]) -> str | None:
    """The first ReasonMap route segment that breaks :class:`RMSegment`, or ``None``."""
    for i, route in enumerate(row["routes"]):
        for j, seg in enumerate(route):
            problem = check_fields(RMSegment, seg)
            if problem:
                return f"routes[{i}][{j}]: {problem}"
    return None


def _row_struct(
    cls: type, overrides: dict[str, Any], extra: dict[str, Any], *, strict: bool
) -> type[msgspec.Struct]:
    """A msgspec ``Struct`` whose typed JSON decoding accepts only rows that
    :func:`check_fields` of ``cls`` accepts too: every field of ``cls``, in order, with its
    annotation (``overrides`` narrows some, for the row checks beyond the types) and its
    default, plus the ``extra`` keys (JSON names of optional fields that are not attributes
    of ``cls``). A number is kept as ``json.loads`` reads it (``int | float``: ``1`` stays
    an int). ``strict`` refuses a row with any other key (so that every string of a row it
    accepts was decoded, and its UTF-8 checked)."""
    hints = typing.get_type_hints(cls)
    spec: list[Any] = []
    for f in fields(cls):
        tp = _json_numbers(overrides.get(f.name, hints[f.name]))
        if f.default_factory is not MISSING:
            spec.append((f.name, tp, msgspec.field(default_factory=f.default_factory)))
        else:
            spec.append((f.name, tp) if f.default is MISSING else (f.name, tp, f.default))
    for i, (name, tp) in enumerate(extra.items()):
        spec.append((f"extra_{i}", _json_numbers(tp), msgspec.field(default=None, name=name)))
    return msgspec.defstruct(
        f"{cls.__name__}Check", spec, kw_only=True, forbid_unknown_fields=strict
    )


def _json_numbers(tp: Any) -> Any:
    """``tp`` with every ``float`` in it read as ``int | float`` (msgspec would turn a JSON
    ``1`` into ``1.0``; ``json.loads`` keeps it an int)."""
    if tp is float:
        return int | float
    args = typing.get_args(tp)
    if not args:
        return tp
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return Annotated[(_json_numbers(args[0]), *tp.__metadata__)]  # type: ignore[misc]
    if origin is Literal:
        return tp
    new = tuple(_json_numbers(a) for a in args)
    if origin in (Union, types.UnionType):
        return Union[new]  # noqa: UP007 (built from a tuple)
    return origin[new]  # type: ignore[index]


_NON_EMPTY = Annotated[str, msgspec.Meta(min_length=1)]


@cache
def row_checker(cls: type) -> Callable[[bytes], Any] | None:
    """A fast check of the dataset rows of the record class ``cls`` (:class:`RPQuery`,
    :class:`QAQuery`; ``None`` for others), exact where it accepts: ``check(line)`` decodes
    one JSONL line (bytes) into a struct with the row's fields (``id``, ``split``,
    ``category`` ...), or raises when the line is not such a row.

    A row it accepts is one that the built-in kind's ``decode`` accepts (every field's JSON
    type as :func:`check_fields` compares them, ``id`` and ``map_id`` not empty, the checks
    of :func:`rp_row_problem` / :func:`qa_row_problem`), and the fields read have the values
    ``json.loads`` gives. It refuses more: what msgspec does not decode (``NaN``, ``1e400``,
    a lone surrogate escape, ...) besides every malformed row (bytes that are not UTF-8
    raise ``UnicodeDecodeError``, a ``ValueError``); the caller then checks that
    line the full way, which names its problem, or accepts it. A 2.6 KB RP row is checked
    in about 10 µs this way, instead of 36 (decode, field checks and record;
    :meth:`maptab.dataset.Dataset.select`)."""
    struct = _check_struct(cls)
    if struct is None:
        return None
    decode = msgspec.json.Decoder(struct).decode

    def check(line: bytes) -> Any:
        if not line.isascii():  # msgspec skips unknown keys without checking their UTF-8
            line.decode("utf-8")
        return decode(line)

    return check


@cache
def decoded_row_checker(cls: type) -> Callable[[dict[str, Any]], Any] | None:
    """:func:`row_checker` for a row that msgspec has already decoded (untyped, to a dict):
    ``check(row)`` converts the dict into the same struct, raising
    ``msgspec.ValidationError`` where the full check would refuse the row. Only for a dict
    msgspec decoded (it holds no ``NaN`` or ``1e400``; ``json.loads``' values), and about a
    fifth of the time of decoding the line again (6 against 28 µs a 2.7 KB RP row). It may
    accept a little more than :func:`row_checker`: a row that repeats a key is checked as
    ``json.loads`` reads it (the last value), as the full check does."""
    struct = _check_struct(cls)
    if struct is None:
        return None
    return partial(msgspec.convert, type=struct)


@cache
def strict_row_decoder(cls: type) -> Callable[[bytes], Any] | None:
    """The record of one JSONL row (bytes) of the record class ``cls`` (:class:`RPQuery`,
    :class:`QAQuery`; ``None`` for others) decoded straight into it, or an error: the fast
    check of :func:`row_checker` that also refuses a row with a key ``cls`` does not read
    (the row then goes the full way). What it returns equals ``cls.from_dict`` of the row
    ``json.loads`` gives, after the full check (the same values and types). About 12 µs a
    2.7 KB RP row, where decoding it to a dict, checking the dict and building the record
    from it took 30."""
    struct = _check_struct(cls, strict=True)
    if struct is None:
        return None
    decode = msgspec.json.Decoder(struct).decode
    astuple = msgspec.structs.astuple
    n = len(fields(cls))
    if cls is not RPQuery:
        return lambda line: cls(*astuple(decode(line)))
    totals_at = [f.name for f in fields(cls)].index("totals")

    def record(line: bytes) -> RPQuery:
        values = astuple(decode(line))
        args = list(values[:n])
        totals = {k: v for k, v in zip(TOTAL_FIELDS, values[n:], strict=True) if v is not None}
        args[totals_at] = totals or None  # from_dict reads the totals from the extra keys
        return RPQuery(*args)

    return record


@cache
def _check_struct(cls: type, *, strict: bool = False) -> type[msgspec.Struct] | None:
    """The struct of :func:`row_checker` (``None`` for a class without a fast check);
    ``strict`` that of :func:`strict_row_decoder`."""
    if cls is RPQuery:
        cats = Literal[tuple(RP_BY_NAME)]  # type: ignore[valid-type]
        weights = Annotated[list[float], msgspec.Meta(min_length=4, max_length=4)]
        struct = _row_struct(
            RPQuery,
            {
                "id": _NON_EMPTY,
                "map_id": _NON_EMPTY,
                "category": cats,
                "routes": Annotated[list[str], msgspec.Meta(min_length=1)],
                "weights": weights | None,
            },
            dict.fromkeys(TOTAL_FIELDS, float | None),
            strict=strict,
        )
    elif cls is QAQuery:
        qa_type = Annotated[int, msgspec.Meta(ge=1, le=QA_TYPE_COUNT)]
        struct = _row_struct(
            QAQuery,
            {"id": _NON_EMPTY, "map_id": _NON_EMPTY, "type": qa_type},
            {},
            strict=strict,
        )
    else:
        return None
    return struct


_CHECKED: ContextVar[bool] = ContextVar("maptab_rows_checked", default=False)


@contextmanager
def rows_checked() -> Iterator[None]:
    """Within this block, :func:`decode_record` trusts that its rows were checked before:
    for rows read back, unchanged, from a file whose rows this process has already
    checked (:meth:`maptab.dataset.Dataset.load`), so that each row is checked once."""
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def decode_record(
    cls: type, row: Any, extra: Callable[[dict[str, Any]], str | None] | None = None
) -> Any:
    """The record of the dataclass ``cls`` (with ``from_dict``) of a dataset row, after
    checking every field's type, that ``id`` and ``map_id`` are not empty, and ``extra``
    (the values the scorer relies on); raises :class:`RecordError` naming the field.
    Inside :func:`rows_checked` the row is taken as already checked."""
    if not _CHECKED.get():
        problem = check_fields(cls, row) or _empty_key(row) or (extra(row) if extra else None)
        if problem:
            raise RecordError(problem)
    return cls.from_dict(row)


def parse_record(kind: str, row: Any) -> Record:
    """The typed record of a dataset row of the task kind ``kind`` (its
    :attr:`~maptab.tasks.base.TaskKind.decode`); raises :class:`RecordError` naming the
    field."""
    from maptab.tasks.base import get

    return get(kind).decode(row)


def parse_prediction(row: Any) -> Prediction:
    """A :class:`Prediction` from a ``predictions.jsonl`` row, its fields type-checked."""
    problem = check_fields(Prediction, row)
    if problem:
        raise RecordError(problem)
    return Prediction.from_dict(row)


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


def read_jsonl_offsets(
    path: str | Path, *, error: type[MaptabError] = RecordError
) -> Iterator[tuple[int, int, Any]]:
    """``(line number, byte offset, value)`` of each non-blank line of a JSONL file (a
    regular file), so that a row can be read again by offset; a malformed line raises
    ``error`` naming file and line."""
    p = Path(path)
    for n, start, _, text in jsonl_text_lines(p, error=error):
        yield n, start, loads_json(text, f"{p}:{n}", error=error)


def read_jsonl(path: str | Path) -> Iterator[Any]:
    """Rows of a JSONL file; a malformed line raises :class:`RecordError` naming file and line."""
    for _, row in read_jsonl_lines(path):
        yield row


def write_jsonl(path: str | Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as deterministic JSONL (UTF-8, keys in insertion order, ``\\n`` endings)."""
    with Path(path).open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
