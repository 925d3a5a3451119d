"""Records that flow through the pipeline: queries (dataset), predictions (run), and the
registry of the 12 route-planning categories (SPEC 9) expressed as data.

JSONL rows use the field names of the dataset contract (README, "Dataset layout"); the four
reported totals keep their MapTab spellings (``Total_Time``, ``Total_Price``,
``Average_Comfort Level``, ``Average_Reliability``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1

TOTAL_FIELDS = ("Total_Time", "Total_Price", "Average_Comfort Level", "Average_Reliability")
CRITERIA = ("time", "price", "comfort", "reliability")


def _shallow(record: Any) -> dict[str, Any]:
    """Field name -> value, without copying nested containers (records are JSON-ready)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


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
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in known}
        totals = {k: d[k] for k in TOTAL_FIELDS if d.get(k) is not None}
        kw["totals"] = totals or None
        return cls(**kw)


@dataclass(slots=True)
class QAQuery:
    """One diagnostic QA sample (a row of ``qa.jsonl``); ``type`` is 1–24 (SPEC 10).

    ``params`` are the stations, lines or edges the question is about, so the answer can be
    recomputed from the map (:func:`maptab.build.qa.qa_answer`).
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
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


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
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


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
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Rows of a JSONL file; a malformed line raises ``ValueError`` naming file and line."""
    p = Path(path)
    with p.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{p}:{n}: not valid JSON ({exc.msg})") from None


def write_jsonl(path: str | Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as deterministic JSONL (UTF-8, keys in insertion order, ``\\n`` endings)."""
    with Path(path).open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
