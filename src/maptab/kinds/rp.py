"""Route planning (MapTab, SPEC 9, 11-13): the ``rp`` task kind, wired in one place.

Samples are :class:`~maptab.core.schema.RPQuery` rows of ``rp.jsonl``; the prompt shows the
category's inputs; an answer is scored with the paper metrics (EMA, PMA, DS) and the strict,
verified check; the summary breaks the metrics down per scenario, category, difficulty,
repetition class, reported totals and error type; the report adds MapTab Tables 2 and 4 and
the strict table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from maptab._cache import KeyedCache
from maptab.core.schema import RP_BY_NAME, RPQuery, row_decoder
from maptab.score.error_types import ERROR_TYPES
from maptab.score.metrics import Columns, Metric, aggregate
from maptab.score.paper import difficulty_score, matching_references, paper_scores, reference_tokens
from maptab.score.parse import ParsedRoute, parse_route, parse_totals
from maptab.score.verified import (
    RoutePlan,
    StationIndex,
    gold_routes,
    station_index,
    verify_reported,
)
from maptab.tasks.base import Prompt, RewardSpec, Samples, Scoring, TaskKind

NAME = "rp"

METRICS = (
    Metric("ema", "ema", label="EMA", group_by=("scenario", "category")),
    Metric("pma", "pma", label="PMA", group_by=("scenario", "category")),
    Metric("ds", "ds", aggregate="total", fmt="int", label="DS"),
    Metric("strict", "strict", label="Strict", group_by=("scenario", "category")),
    Metric("valid", "valid", label="Valid"),
    Metric("optimal", "optimal", label="Optimal"),
    Metric("transfers_ok", "transfers_ok", label="Transfers"),
    Metric("gap", "gap", fmt="num", where="valid", higher_is_better=False, label="Gap"),
    Metric("format_errors", "parsed", aggregate="count_false", fmt="int", label="Format err."),
)
_FALSE_ACCEPT = Metric("lenient_false_accept", "lenient_false_accept", aggregate="count", fmt="int")
_ACCEPTED = Metric("accepted", "ema", aggregate="count", fmt="int")


# --------------------------------------------------------------------------- samples
decode = row_decoder(RPQuery)


def selector(token: str) -> Any:
    if token in RP_BY_NAME:
        return lambda r: r.category == token
    return None


def slim(record: RPQuery) -> RPQuery:
    """Scoring never reads the prompt or the table row orders, most of a row's size: both
    are dropped from the record (in place; it was decoded for the scorer alone)."""
    record.question = ""
    record.tables = {}
    return record


def prompt(rec: RPQuery, variant: str) -> Prompt:
    from maptab.io.dataset import DatasetError

    cat = RP_BY_NAME.get(rec.category)
    if cat is None:
        raise DatasetError(f"{rec.id}: unknown RP category {rec.category!r}")
    keep = ("Edge",) if cat.edge_column_only else None
    return Prompt(rec.question, cat.inputs, rec.tables, keep, (), {"category": rec.category})


def answer(baseline: Any, request: Any) -> str:
    """A built-in baseline's answer (:mod:`maptab.run.baselines`); the request's decoded
    ``record`` when it has one (a request built by hand may carry the row only)."""
    q = request.meta.get("record")
    if not isinstance(q, RPQuery):
        q = RPQuery.from_dict(request.meta["sample"])
    net = baseline.network(request)
    s, t = net.resolve(q.source), net.resolve(q.target)
    if s is None or t is None:
        raise ValueError(f"{request.id}: source or target is not a station of the map")
    return baseline.rp_text(request, q, s, t)


# --------------------------------------------------------------------------- scoring
@dataclass(slots=True)
class _Reading:
    """What an answer text gives on one map, whatever the query: the parsed route, its
    paper tokens (and as a tuple, to find it among a query's references) and its string."""

    parsed: ParsedRoute | None
    tokens: list[str] | None
    key: tuple[str, ...] | None
    route: str | None


# answers that repeat on one map (the same route asked for by several queries: a third of
# a results file's distinct answers) are read once; only short texts are kept, so the memo
# stays small whatever the responses' length
_READINGS: KeyedCache[tuple[StationIndex, str], _Reading] = KeyedCache(1 << 14)
_READ_KEPT_CHARS = 1000


def _read(index: StationIndex, response: str) -> _Reading:
    """:func:`parse_route` of ``response`` on the map of ``index``, with its tokens and route
    string (memoised for texts up to :data:`_READ_KEPT_CHARS` characters)."""
    if isinstance(response, str) and len(response) <= _READ_KEPT_CHARS:
        return _READINGS.get((index, response), lambda: _reading(index, response))
    return _reading(index, response)


def _reading(index: StationIndex, response: str) -> _Reading:
    parsed = parse_route(response, index.vocabulary)
    if parsed is None:
        return _Reading(None, None, None, None)
    tokens = parsed.tokens()
    return _Reading(parsed, tokens, tuple(tokens), "-".join(tokens))


@dataclass(slots=True)
class _References:
    """A query's gold routes on its map: as paper tokens, the first index of each token
    tuple, and as station keys and marks (:func:`gold_routes`)."""

    tokens: list[list[str]]
    first: dict[tuple[str, ...], int]
    gold: tuple[tuple[tuple[str, ...], frozenset[int]], ...]


# keyed by map and routes (the answers to one query are not scored one after another)
_REFERENCES: KeyedCache[tuple[StationIndex, tuple[str, ...]], _References] = KeyedCache(1 << 14)


def _make_references(index: StationIndex, routes: tuple[str, ...]) -> _References:
    tokens = [reference_tokens(r) for r in routes]
    first: dict[tuple[str, ...], int] = {}
    for i, t in enumerate(tokens):
        first.setdefault(tuple(t), i)
    return _References(tokens, first, gold_routes(index, routes))


def _references(index: StationIndex, routes: Sequence[str]) -> _References:
    key = tuple(routes)
    return _REFERENCES.get((index, key), lambda: _make_references(index, key))


def score(maps: Any, query: RPQuery, variant: str, response: str) -> dict[str, Any]:
    """Score row of one route-planning answer (paper and strict metrics, error type).

    Equal to the straightforward composition of :func:`parse_route`,
    :func:`paper_scores` and :func:`verify_route` (tests check it against that): an answer
    text is read once per map (:func:`_read`), a query's references are tokenised once,
    and an answer whose tokens are a reference's scores EMA 1 and PMA 1 without the fuzzy
    rule (identical tokens always match, docs/reference/metrics.md). Reported totals are
    checked against those of the optimal route the answer gives, one of several tied ones
    too (:func:`~maptab.score.verified.answered_totals`; SPEC 13)."""
    net = maps.network(query.map_id)
    index = station_index(net)
    reading = _read(index, response)
    parsed, tokens = reading.parsed, reading.tokens
    refs = _references(index, query.routes)
    exact = refs.first.get(reading.key) if reading.key is not None else None  # type: ignore[arg-type]
    ema, pma = (1, 1.0) if exact is not None else paper_scores(tokens, refs.tokens)
    reported = parse_totals(response) if query.report_totals and query.totals else None
    mix = maps.mix(query.map_id) if parsed is not None and query.category == "map_mix" else None
    plan = RoutePlan.build(net, query, mix, index, refs.gold)
    v, totals = verify_reported(plan, parsed, reported)
    # the 0.5 rule accepted a wrong station: EMA 1, yet no reference that the prediction
    # matches has the same stations as the resolved prediction
    false_accept = False
    if ema:
        gold = refs.gold
        stations = tuple(v.stations)
        if exact is None or gold[exact][0] != stations:  # any() over the matching references
            false_accept = not any(
                gold[i][0] == stations for i in matching_references(tokens, refs.tokens)
            )
    return {
        "id": query.id,
        "kind": NAME,
        "map_id": query.map_id,
        "scenario": query.scenario,
        "category": query.category,
        "map_difficulty": query.map_difficulty,
        "query_difficulty": query.query_difficulty,
        "repetition": query.repetition,
        "parsed": parsed is not None,
        "route": reading.route,
        "ema": ema,
        "pma": pma,
        "ds": difficulty_score(ema, query.map_difficulty, query.query_difficulty),
        "valid": v.valid,
        "endpoints_ok": v.endpoints_ok,
        "simple": v.simple,
        "adjacent": v.adjacent,
        "transfers_ok": v.transfers_ok,
        "optimal": v.optimal,
        "strict": v.correct,
        "gap": v.gap if v.gap is not None and math.isfinite(v.gap) else None,
        "unresolved": v.unresolved_names,
        "lenient_false_accept": false_accept,
        "totals": totals,
        "error_type": v.error_type,
    }


def _block(c: Columns, idx: np.ndarray) -> dict[str, Any]:
    n = int(idx.size)
    out: dict[str, Any] = {"n": n}
    out.update({m.name: aggregate(m, c, idx) for m in METRICS})
    accepted = aggregate(_ACCEPTED, c, idx)
    false_accepts = aggregate(_FALSE_ACCEPT, c, idx)
    out["lenient_false_accept"] = {
        "count": false_accepts,
        "share_of_ema": false_accepts / accepted if accepted else 0.0,
    }
    return out


def _scenario(c: Columns, idx: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {"overall": _block(c, idx)}
    for name, key in (
        ("by_category", "category"),
        ("by_map_difficulty", "map_difficulty"),
        ("by_query_difficulty", "query_difficulty"),
        ("by_difficulty", ("map_difficulty", "query_difficulty")),
        ("by_repetition", "repetition"),
    ):
        out[name] = {k: _block(c, g) for k, g in c.groups(idx, key).items()}
    totals, error_type = c.values("totals"), c.values("error_type")
    asked = np.asarray([i for i in idx.tolist() if totals[i] is not None], dtype=np.intp)
    out["totals"] = {}
    for letter in "TPCR":
        if any(letter in totals[i] for i in asked.tolist()):
            ok = np.zeros(len(c.rows))
            for i in asked.tolist():
                ok[i] = float(totals[i].get(letter, False))
            out["totals"][letter] = c.ci(asked, ok)
    wrong = [error_type[i] for i in idx.tolist() if error_type[i]]
    out["errors"] = {
        t: {"count": wrong.count(t), "share": wrong.count(t) / idx.size}
        for t in ERROR_TYPES
        if t in wrong
    }
    return out


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``rp`` block of ``summary.json``: overall, and per scenario (``_scenario``)."""
    c = Columns(rows)
    scen = c.groups(c.every, "scenario")
    return {
        "overall": _block(c, c.every),
        "by_scenario": {k: _scenario(c, g) for k, g in scen.items()},
    }


def check_label(record: RPQuery, network: Any) -> str | None:
    """How the stored gold label of ``record`` differs from the re-derived one (routes,
    station and transfer counts, totals by the exact solver), or ``None``."""
    from maptab.core.costs import CostError
    from maptab.core.tables import derive_mix
    from maptab.generate.queries import gold_label

    category = RP_BY_NAME[record.category]
    if not category.criteria_free and record.weights is None:
        return f"criteria category {record.category!r} without weights"
    mix = network.with_attributes(vertices=derive_mix(network))
    try:
        gold = gold_label(
            network,
            mix,
            category,
            record.source,
            record.target,
            record.weights,
            cost_model=record.cost_model,
        )
    except CostError as exc:
        return f"gold label cannot be re-derived ({exc})"
    label = gold.label()
    for key, stored in (
        ("routes", record.routes),
        ("route_vertex_numbers", record.route_vertex_numbers),
        ("transfer_vertex_numbers", record.transfer_vertex_numbers),
    ):
        if label[key] != stored:
            return f"{key} {stored} != re-derived {label[key]}"
    if (gold.totals or None) != (record.totals or None):
        return f"totals {record.totals} != re-derived {gold.totals}"
    return None


# --------------------------------------------------------------------------- RL reward
def _reward(ref: Any, text: str) -> Any:
    from maptab.rewards.core import rp_reward

    mix = ref.mix if ref.record.category == "map_mix" else None
    return rp_reward(text, ref.record, ref.network, mix)


def _reward_prepare(ref: Any) -> None:
    """Verify the first gold route once (warms the verifier's caches, checks the gold)."""
    _reward(ref, f"<route_begin>{ref.record.routes[0]}<route_end>")


REWARD = RewardSpec(
    _reward,
    ability="route_planning",
    blank={"question": "", "tables": {}},
    prepare=_reward_prepare,
)


TASK = TaskKind(
    name=NAME,
    title="Route planning",
    samples=Samples(
        file="rp.jsonl",
        record=RPQuery,
        decode=decode,
        select=selector,
        select_help=tuple(RP_BY_NAME),
        category=lambda record, variant: record.category,
        check_label=check_label,
    ),
    prompt=prompt,
    answer=answer,
    scoring=Scoring(
        score,
        summarise,
        success="strict",
        once=True,
        slim=slim,
        match_question=True,
        match_pair=("source", "target"),
    ),
    metrics=METRICS,
    reward=REWARD,
    order=10,
)
