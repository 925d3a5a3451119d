"""Rewards for reinforcement learning on maptab samples (``docs/guides/train-with-rewards.md``).

Each reward is a pure function of the completion text and the sample's reference, in
``[0, 1]``, built on the scorer's own parts (:mod:`maptab.score.parse`,
:mod:`maptab.score.verified`, :mod:`maptab.score.answers`, :mod:`maptab.score.map_score`), so a
reward of 1.0 means exactly what maptab's strict scorer counts as right.

Route planning (SPEC 12, 13), with the route parsed as the scorer parses it:

* no route parsed (format error): ``0``;
* a route that is not *valid* (a name not on the map, wrong endpoints, a station twice, a
  hop that is no edge): ``0.05 + 0.10·p``, where ``p`` is the correct prefix — the longest
  run of leading stations equal to a gold route's, divided by that route's length (best
  over the gold routes);
* a valid route: ``0.20 + 0.50·e + 0.15·m + 0.15·t``, where ``e = J*/J`` is the efficiency
  (``1/(1+gap)`` of the verified optimality gap; fewest-stations categories: gold hops over
  answer hops), ``m`` is 1 when the transfer marks are those of one of the route's reference
  line assignments (SPEC 4), and ``t`` is, for an optimal route, the share of the reported
  totals the query asks for that are right (1 when none is asked), 0 otherwise. Right means
  equal to the totals of the optimal route answered, whichever of several tied routes it
  is (:func:`maptab.score.verified.verify_reported`, as the scorer checks them).

So the reward is 1 exactly when the answer is strictly correct (valid, optimal, marks right)
and, when asked, every total is right — the scorer's ``error_type`` is then ``None``.

QA: 1 when :func:`maptab.score.answers.qa_correct` holds, else 0. ReasonMap: best over the
reference routes of the map score against that route (it includes the correctness bonus)
over the route's own score, capped at 1.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import msgspec

from maptab._limits import MAX_RESPONSE_CHARS
from maptab.core.network import Network
from maptab.core.schema import QAQuery, ReasonMapQuestion, RPQuery
from maptab.score.answers import TOTAL_LETTERS, qa_correct
from maptab.score.error_types import ERROR_TYPES
from maptab.score.map_score import canonical_route_names, map_score, score_reasonmap
from maptab.score.parse import (
    _TOTAL_PATTERNS,
    Segment,
    _to_float,
    parse_answer,
    parse_reasonmap,
    parse_route,
    parse_totals,
)
from maptab.score.verified import route_plan, verify_reported
from maptab.tasks.base import all_kinds

__all__ = [
    "RP_WEIGHTS",
    "RewardBreakdown",
    "combine_rp",
    "kind_name",
    "qa_reward",
    "reasonmap_reward",
    "reference_scales",
    "rp_reward",
]

RP_WEIGHTS = {
    "format": 0.05,  # a route was parsed but is not valid
    "prefix": 0.10,  # times the correct-prefix share, for invalid routes
    "valid": 0.20,  # a valid route
    "efficiency": 0.50,  # times J*/J
    "transfers": 0.15,  # transfer marks right
    "totals": 0.15,  # times the share of asked totals right (optimal routes only)
}
"""Weights of the route-planning reward (module docstring; justified in docs/guides/train-with-rewards.md)."""

_BELOW_ONE = math.nextafter(1.0, 0.0)


@dataclass(frozen=True, slots=True)
class RewardBreakdown:
    """One reward and the parts it was computed from.

    Common: ``kind`` (the task kind's name), ``reward`` in [0, 1], ``parsed`` (an
    answer could be read), ``correct`` (what maptab's scorer counts as right: RP strict and
    totals right, i.e. no error type; QA correct; ReasonMap correct as the ReasonMap paper
    defines it), ``error_type`` (the scorer's taxonomy; RP only). RP: ``valid``,
    ``efficiency`` (J*/J, ``None`` for invalid routes), ``gap``, ``transfers_ok``,
    ``totals`` (share of asked totals right, ``None`` when none is asked), ``prefix``.
    ReasonMap: ``map_score`` and ``max_score`` (the reference's own score).
    """

    kind: str
    reward: float
    parsed: bool
    correct: bool
    error_type: str | None = None
    valid: bool = False
    efficiency: float | None = None
    gap: float | None = None
    transfers_ok: bool = False
    totals: float | None = None
    prefix: float = 0.0
    map_score: float | None = None
    max_score: float | None = None


_NAMES: dict[type, str] = {}


def kind_name(record: object) -> str:
    """The name of the registered task kind whose record type ``record`` is (memoised)."""
    t = type(record)
    name = _NAMES.get(t)
    if name is None:
        name = next((k.name for k in all_kinds() if k.samples.record is t), t.__name__)
        _NAMES[t] = name
    return name


def combine_rp(
    *,
    parsed: bool,
    valid: bool,
    gap: float | None,
    transfers_ok: bool,
    totals: float | None,
    prefix: float,
) -> float:
    """The route-planning reward from its parts (module docstring).

    ``gap`` is ``J/J* − 1`` of a valid route (0 when optimal, ``inf`` when J* is 0 and J is
    not); ``totals`` the share of asked totals right (``None``: none asked); ``prefix`` the
    correct-prefix share in [0, 1]. The result is exactly 1.0 only when every part is full.
    """
    w = RP_WEIGHTS
    if not parsed:
        return 0.0
    if not valid:
        return w["format"] + w["prefix"] * min(1.0, max(0.0, prefix))
    g = gap if gap is not None and gap > 0 else 0.0
    efficiency = 1.0 / (1.0 + g) if math.isfinite(g) else 0.0
    optimal = g == 0.0
    t = (1.0 if totals is None else min(1.0, max(0.0, totals))) if optimal else 0.0
    full = optimal and transfers_ok and t == 1.0
    if full:
        return 1.0
    value = w["valid"] + w["efficiency"] * efficiency + w["transfers"] * transfers_ok
    return min(_BELOW_ONE, value + w["totals"] * t)


def _prefix_share(
    stations: Sequence[str | None], gold: Sequence[tuple[Sequence[str], object]]
) -> float:
    """Longest run of leading stations equal to a gold route's (``gold``: the routes as
    :func:`~maptab.score.verified.gold_routes` gives them), over that route's length."""
    best = 0.0
    for route, _ in gold:
        if not route:
            continue
        k = 0
        for a, b in zip(stations, route, strict=False):
            if a is None or a != b:
                break
            k += 1
        best = max(best, k / len(route))
    return best


_BEGIN, _END = "<route_begin>", "<route_end>"


def _canonical_route(text: str) -> str | None:
    """The content of the route tags when ``text`` holds no other tag: exactly two ``<``
    (those of ``<route_begin>…<route_end>``, written so) and no ``◁``. Every reasoning tag
    starts with one of those characters, so :func:`~maptab.score.parse.strip_reasoning`
    leaves such a text as it is, and :func:`~maptab.score.parse.parse_route` of the text
    equals ``parse_route`` of this content (which has no tag at all); ``None`` otherwise.
    The answer format the prompts ask for takes this path, which skips the tag searches."""
    if len(text) > MAX_RESPONSE_CHARS or text.count("<") != 2 or "◁" in text:
        return None
    b = text.find(_BEGIN)
    e = text.find(_END)
    if b == -1 or e < b + len(_BEGIN):
        return None
    return text[b + len(_BEGIN) : e]


# each totals pattern starts with one of these words; under re.IGNORECASE their letters
# match only their ASCII upper and lower case (no other Unicode character case-folds to
# t, o, a, l, v, e, r or g), so a match starts where the A-Z-lowered text has the word
_TOTAL_WORDS = {
    "Total_Time": "total",
    "Total_Price": "total",
    "Average_Comfort Level": "average",
    "Average_Reliability": "average",
}


# where each word occurs, for text that is not ASCII (the same occurrences)
_WORD_AT = {w: re.compile("".join(f"[{c.upper()}{c}]" for c in w)) for w in ("total", "average")}


def _last_match(pattern: re.Pattern[str], text: str, low: str, word: str) -> str | None:
    """The group of the last match ``pattern.findall(text)`` gives (``None``: none).

    A match starts at an occurrence of ``word`` (:data:`_TOTAL_WORDS`; in ``low``, the
    lowered text when it is ASCII, else found by :data:`_WORD_AT`), and
    holds no other start of it: after the word come only the rest of the name (no ``total``
    or ``average`` in it), spaces, ``*``, ``:``/``=``/``：``, ``$`` and a number. So the
    matches findall gives are those at every occurrence where the pattern matches, and
    the last is the one at the last such occurrence: tried from the end."""
    if low:
        end = len(low)
        while (at := low.rfind(word, 0, end)) != -1:
            m = pattern.match(text, at)
            if m is not None:
                return m.group(1)
            end = at + len(word) - 1  # occurrences starting before this one
        return None
    # not ASCII: the occurrences from the regex of the word (it overlaps no other)
    for at in reversed([w.start() for w in _WORD_AT[word].finditer(text)]):
        m = pattern.match(text, at)
        if m is not None:
            return m.group(1)
    return None


def _totals(text: str, canonical: bool) -> dict[str, float]:
    """:func:`~maptab.score.parse.parse_totals` of ``text``; for a canonical text (no
    reasoning tag, so nothing to strip) its patterns are applied directly, each tried only
    where a match can start (:func:`_last_match`; every match holds ``:``, ``=`` or ``：``)."""
    if not canonical:
        return parse_totals(text)
    out: dict[str, float] = {}
    if ":" not in text and "=" not in text and "：" not in text:
        return out
    low = text.lower() if text.isascii() else ""  # ASCII: lowered, every index kept
    for name, pattern in _TOTAL_PATTERNS.items():
        found = _last_match(pattern, text, low, _TOTAL_WORDS[name])
        if found is not None:
            v = _to_float(found)
            if v is not None:
                out[name] = v
    return out


@lru_cache(maxsize=1 << 16)
def _cents_equal(pred: float | None, gold: float) -> bool:
    return qa_correct(pred, gold)


def _totals_right(reported: dict[str, float], gold: dict[str, float]) -> dict[str, bool]:
    """:func:`~maptab.score.answers.totals_correct`, with each (reported, gold) pair memoised."""
    return {
        TOTAL_LETTERS[name]: _cents_equal(reported.get(name), value)
        for name, value in gold.items()
        if name in TOTAL_LETTERS and value is not None
    }


def rp_reward(
    response: str, query: RPQuery, network: Network, mix: Network | None = None
) -> RewardBreakdown:
    """The route-planning reward of one completion (module docstring).

    ``network`` is the sample's map; ``mix`` its Mix_tab network (needed for ``map_mix``
    queries, as in :func:`maptab.score.verified.verify_route`).
    """
    plan = route_plan(network, query, mix)
    inner = _canonical_route(response) if isinstance(response, str) else None
    parsed = parse_route(response if inner is None else inner, plan.index.vocabulary)
    if parsed is None:
        return RewardBreakdown(kind_name(query), 0.0, False, False, error_type=ERROR_TYPES[0])
    reported = None
    if query.report_totals and query.totals:
        reported = _totals(response, inner is not None)
    # the scorer's check: the totals of the optimal route answered, a tie's own included
    v, right = verify_reported(plan, parsed, reported, _totals_right)
    totals_share = sum(right.values()) / len(right) if right else None
    prefix = _prefix_share(v.stations, plan.gold)
    reward = combine_rp(
        parsed=True,
        valid=v.valid,
        gap=v.gap,
        transfers_ok=v.transfers_ok,
        totals=totals_share,
        prefix=prefix,
    )
    efficiency = None
    if v.valid and v.gap is not None:
        efficiency = 1.0 / (1.0 + v.gap) if math.isfinite(v.gap) else 0.0
    return RewardBreakdown(
        kind_name(query),
        reward,
        True,
        v.error_type is None,
        error_type=v.error_type,
        valid=v.valid,
        efficiency=efficiency,
        gap=v.gap,
        transfers_ok=v.transfers_ok,
        totals=totals_share,
        prefix=prefix,
    )


def qa_reward(response: str, query: QAQuery) -> RewardBreakdown:
    """The QA reward: 1 when the parsed answer equals the gold one at 2 decimals (SPEC 10)."""
    pred = parse_answer(response)
    ok = qa_correct(pred, query.answer)
    return RewardBreakdown(
        kind_name(query),
        1.0 if ok else 0.0,
        pred is not None,
        ok,
        error_type=None if pred is not None else ERROR_TYPES[0],
    )


def _as_segments(route: Sequence[dict]) -> list[Segment]:
    return [
        Segment(
            str(s["route_name"]),
            str(s["departure_stop"]),
            str(s["arrival_stop"]),
            int(s["num_via_stops"]),
            [str(x) for x in s["via_stops"]],
        )
        for s in route
    ]


_SCALES: dict[tuple[int, str], tuple[ReasonMapQuestion, list[tuple[ReasonMapQuestion, float]]]] = {}


def reference_scales(
    question: ReasonMapQuestion, mode: str
) -> list[tuple[ReasonMapQuestion, float]]:
    """Per reference route: the question narrowed to that route, and the map score of the
    route answered as itself (the reward's scale for it). Memoised per question and mode."""
    key = (id(question), mode)
    hit = _SCALES.get(key)
    if hit is not None and hit[0] is question:
        return hit[1]
    out = []
    for route in question.routes:
        if not route:
            continue
        narrowed = msgspec.structs.replace(question, routes=[route])
        out.append((narrowed, map_score(_as_segments(route), narrowed, mode, True)))
    if len(_SCALES) > 1 << 16:
        _SCALES.clear()
    _SCALES[key] = (question, out)
    return out


def reasonmap_reward(
    response: str, question: ReasonMapQuestion, network: Network, mode: str
) -> RewardBreakdown:
    """The ReasonMap reward (SPEC 14): best over the reference routes of the answer's map
    score against that route over the route's own score (:func:`reference_scales`), capped
    at 1.

    The map score already adds the correctness bonus (10 short, 20 long), so a correct
    answer always outscores an incorrect one on the same reference, and an answer that
    repeats any reference route gets 1. Without references, the reward is the correctness.
    """
    segments = parse_reasonmap(response, mode)
    s = score_reasonmap(network, question, segments, mode)
    reward = 1.0 if s.correct else 0.0
    scale = None
    if segments:
        segments = canonical_route_names(network, segments)  # printed line names, as scored
        scaled = [
            (min(1.0, map_score(segments, q, mode, s.correct) / top), top)
            for q, top in reference_scales(question, mode)
            if top > 0
        ]
        if scaled:
            reward, scale = max(scaled)
    return RewardBreakdown(
        kind_name(question),
        reward,
        s.parsed,
        s.correct,
        error_type=None if s.parsed else ERROR_TYPES[0],
        map_score=s.map_score,
        max_score=scale,  # the scale of the reference the reward was taken against
    )
