"""ReasonMap questions (SPEC 14): the ``reasonmap`` task kind, wired in one place.

Samples are :class:`~maptab.core.schema.ReasonMapQuestion` rows of ``reasonmap.jsonl``; each row
is asked twice, as ``<id>/short`` and ``<id>/long``; an answer (line segments) is scored for
lenient and strict correctness and a map score; the summary gives per mode the accuracy and
map score, plain and difficulty-weighted (ReasonMap Table 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from maptab.core.schema import ReasonMapQuestion, row_decoder
from maptab.report.tables import Cell, Column, ReportTable, by, metric_cell
from maptab.score.errors import ERROR_TYPES
from maptab.score.metrics import Columns, Metric, aggregate, metric_text
from maptab.score.parse import parse_reasonmap
from maptab.score.reasonmap import score_reasonmap
from maptab.tasks.base import Prompt, RewardSpec, TaskKind

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
M = {m.name: m for m in METRICS}
FORMAT_ERRORS = Metric("format_errors", "parsed", aggregate="count_false", fmt="int")
# ReasonMap Table 2 column order
_TABLE_ORDER = (
    "accuracy",
    "accuracy_strict",
    "weighted_accuracy",
    "weighted_accuracy_strict",
    "map_score",
    "weighted_map_score",
)


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


# --------------------------------------------------------------------------- report tables
def reasonmap_table(runs: Sequence[Any]) -> ReportTable:
    """ReasonMap Table 2: per mode (S. short, L. long) accuracy and map score."""
    metrics = [M[k] for k in _TABLE_ORDER]
    cols = [Column("Model")]
    cols += [Column(m, metric.header) for metric in metrics for m in ("S.", "L.")]
    table = ReportTable(
        "reasonmap",
        "ReasonMap: accuracy and map score (ReasonMap Table 2)",
        cols,
        note=(
            "W.: difficulty-weighted (SPEC 14 weights). Map score out of 20 (short) and "
            "40 (long). Strict also checks every segment along its line."
        ),
    )
    for run in runs:
        modes = by(run.rows(NAME), "mode")
        row = [Cell(run.name)]
        for metric in metrics:
            for mode in MODES:
                row.append(metric_cell(metric, modes.get(mode, [])))
        table.rows.append(row)
    return table


# --------------------------------------------------------------------------- report
def _leaderboard(rows: Sequence[dict[str, Any]] | None) -> Any:
    pooled = (M["weighted_accuracy"], M["weighted_map_score"])
    if rows is None:
        return [Column(n, "ReasonMap") for n in ("n", "W.Acc", "W.Score")]
    return [Cell(len(rows), kind="int")] + [metric_cell(m, rows) for m in pooled]


def _tables(runs: Sequence[Any]) -> list[Any]:
    if not any(run.rows(NAME) for run in runs):
        return []
    return [reasonmap_table(runs)]


def _paired(run: Any) -> list[tuple[Any, str, str, Any]]:
    return [
        (
            (1, ""),
            f"ReasonMap {mode} accuracy",
            "correct",
            lambda r, m=mode: r["kind"] == NAME and r["mode"] == m,
        )
        for mode in MODES
    ]


def _describe(row: dict[str, Any], query: Any, response: str) -> dict[str, Any]:
    from maptab.report.html import fmt_value, segments_text

    rec: dict[str, Any] = {"prompt": "", "inputs": "", "gold": "", "pred": "", "metrics": []}
    rec["category"] = f"ReasonMap {row['mode']}"
    rec["mdiff"], rec["qdiff"] = row.get("map_difficulty"), row.get("question_difficulty")
    rec["metrics"] = [
        ["correct", fmt_value(row.get("correct"))],
        ["correct (strict)", fmt_value(row.get("correct_strict"))],
        ["map score", f"{fmt_value(row.get('map_score'))} / {fmt_value(row.get('max_score'))}"],
    ]
    segments = parse_reasonmap(response, row["mode"])
    rec["pred"] = segments_text([asdict(s) for s in segments]) if segments else ""
    if isinstance(query, ReasonMapQuestion):
        short = row["mode"] == "short"
        rec["prompt"] = query.question_short if short else query.question_long
        rec["inputs"] = "Map"
        rec["gold"] = "\n\n".join(
            f"Reference {k}:\n{segments_text(r)}" for k, r in enumerate(query.routes, 1)
        )
    return rec


def _summary_view(block: dict[str, Any]) -> list[Any]:
    cols = ("mode", "n", "acc", "acc strict", "weighted acc", "map score", "weighted")
    rows = [
        (
            mode,
            str(b["accuracy"]["n"]),
            metric_text(M["accuracy"], b["accuracy"]),
            metric_text(M["accuracy_strict"], b["accuracy_strict"]),
            metric_text(M["weighted_accuracy"], b["weighted_accuracy"]),
            f"{b['map_score']['mean']:.2f}/{b['max_score']:.0f}",
            f"{b['weighted_map_score']['mean']:.2f}",
        )
        for mode, b in block.items()
    ]
    return [("ReasonMap", cols, 1, rows)]


def _heatmaps(run: Any) -> list[Any]:
    rows = run.rows(NAME)
    if not rows:
        return []
    return [("ReasonMap", rows, "map_difficulty", "question_difficulty", "correct")]


def _reward(ref: Any, text: str) -> Any:
    from maptab.rewards.core import reasonmap_reward

    return reasonmap_reward(text, ref.record, ref.network, ref.mode)


TASK = TaskKind(
    name=NAME,
    title="ReasonMap",
    query_file="reasonmap.jsonl",
    record=ReasonMapQuestion,
    decode=decode,
    prompt=prompt,
    score=score,
    summarise=summarise,
    answer=answer,
    order=30,
    variants=MODES,
    metrics=METRICS,
    leaderboard=_leaderboard,
    tables=_tables,
    paired=_paired,
    describe=_describe,
    summary_view=_summary_view,
    heatmaps=_heatmaps,
    reward=RewardSpec(_reward, ability="route_planning"),
)
