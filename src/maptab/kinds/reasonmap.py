"""ReasonMap questions (SPEC 14): the ``reasonmap`` task kind, wired in one place.

Samples are :class:`~maptab.core.schema.ReasonMapQuestion` rows of ``reasonmap.jsonl``; each row
is asked twice, as ``<id>/short`` and ``<id>/long``; an answer (line segments) is scored for
lenient and strict correctness and a map score; the summary gives per mode the accuracy and
map score, plain and difficulty-weighted (ReasonMap Table 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from maptab.core.schema import ReasonMapQuestion, row_decoder
from maptab.score.error_types import ERROR_TYPES
from maptab.score.map_score import score_reasonmap
from maptab.score.metrics import Columns, Metric, aggregate
from maptab.score.parse import parse_reasonmap
from maptab.tasks.base import Prompt, RewardSpec, Samples, Scoring, TaskKind

NAME = "reasonmap"
MODES = ("short", "long")

_W = "weight"
METRICS = (
    Metric("accuracy", "correct", label="Acc", group_by=("mode",)),
    Metric("accuracy_strict", "correct_strict", label="Acc strict", group_by=("mode",)),
    Metric("map_score", "map_score", fmt="num", label="Map score", group_by=("mode",)),
    Metric("weighted_accuracy", "correct", label="W.Acc", weight=_W, group_by=("mode",)),
    Metric(
        "weighted_accuracy_strict",
        "correct_strict",
        label="W.Acc strict",
        weight=_W,
        group_by=("mode",),
    ),
    Metric(
        "weighted_map_score",
        "map_score",
        fmt="num",
        label="W.Map score",
        weight=_W,
        group_by=("mode",),
    ),
)
FORMAT_ERRORS = Metric("format_errors", "parsed", aggregate="count_false", fmt="int")


# --------------------------------------------------------------------------- samples
decode = row_decoder(ReasonMapQuestion)


def prompt(rec: ReasonMapQuestion, variant: str) -> Prompt:
    text = rec.question_short if variant == "short" else rec.question_long
    return Prompt(text, ("map",), {}, None, (), {"variant": variant})


def answer(baseline: Any, request: Any) -> str:
    from maptab.run.baselines import reasonmap_answer

    row = request.meta["sample"]
    net = baseline.network(request)
    s, t = net.resolve(row["station_1"]), net.resolve(row["station_2"])
    if s is None or t is None:
        raise ValueError(f"{request.id}: station_1 or station_2 is not a station of the map")
    segs = baseline.reasonmap(net, row, s, t)
    return reasonmap_answer(segs, request.meta.get("variant", "short"), row["long_template"])


# --------------------------------------------------------------------------- scoring
def score(maps: Any, question: ReasonMapQuestion, mode: str, response: str) -> dict[str, Any]:
    """Score row of one ReasonMap answer (``mode`` short or long)."""
    segments = parse_reasonmap(response, mode)
    s = score_reasonmap(maps.network(question.map_id), question, segments, mode)
    return {
        "id": f"{question.id}/{mode}",
        "kind": NAME,
        "question_id": question.id,
        "mode": mode,
        "map_id": question.map_id,
        "question_difficulty": question.question_difficulty,
        "map_difficulty": question.map_difficulty,
        "long_template": question.long_template,
        "parsed": s.parsed,
        "correct": s.correct,
        "correct_strict": s.correct_strict,
        "map_score": s.map_score,
        "max_score": s.max_score,
        "weight": s.weight,
        "error_type": None if s.parsed else ERROR_TYPES[0],
    }


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``reasonmap`` block of ``summary.json``: per mode, every metric."""
    c = Columns(rows)
    out = {}
    for mode, idx in c.groups(c.every, "mode").items():
        block: dict[str, Any] = {m.name: aggregate(m, c, idx) for m in METRICS}
        block["max_score"] = c.rows[int(idx[0])]["max_score"]
        block["format_errors"] = aggregate(FORMAT_ERRORS, c, idx)
        out[mode] = block
    return out


def _reward(ref: Any, text: str) -> Any:
    from maptab.rewards.core import reasonmap_reward

    return reasonmap_reward(text, ref.record, ref.network, ref.mode)


TASK = TaskKind(
    name=NAME,
    title="ReasonMap",
    samples=Samples(
        file="reasonmap.jsonl", record=ReasonMapQuestion, decode=decode, variants=MODES
    ),
    prompt=prompt,
    answer=answer,
    scoring=Scoring(score, summarise),
    metrics=METRICS,
    reward=RewardSpec(_reward, ability="route_planning"),
    order=30,
)
