"""How ReasonMap questions (``reasonmap``) are shown (SPEC 13-14): ReasonMap Table 2, the
leaderboard columns, the browser text and the heatmap."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from maptab.core.schema import ReasonMapQuestion
from maptab.report.html import fmt_value, segments_text
from maptab.report.tables import (
    REASONMAP_ACCURACY,
    REASONMAP_SCORE,
    Cell,
    Column,
    ReportTable,
    by,
    metric_cell,
)
from maptab.report.views import KindView
from maptab.report.views import metric as kind_metric
from maptab.score.metrics import Metric, metric_text
from maptab.score.parse import parse_reasonmap

NAME = "reasonmap"
MODES = ("short", "long")
# ReasonMap Table 2 column order
_TABLE_ORDER = (
    "accuracy",
    "accuracy_strict",
    "weighted_accuracy",
    "weighted_accuracy_strict",
    "map_score",
    "weighted_map_score",
)


def _m(name: str) -> Metric:
    return kind_metric(NAME, name)


def reasonmap_table(runs: Sequence[Any]) -> ReportTable:
    """ReasonMap Table 2: per mode (S. short, L. long) accuracy and map score."""
    metrics = [_m(k) for k in _TABLE_ORDER]
    cols = [Column("Model")]
    cols += [Column(m, metric.header) for metric in metrics for m in ("S.", "L.")]
    table = ReportTable(
        "reasonmap",
        "ReasonMap: accuracy and map score (ReasonMap Table 2)",
        cols,
        note=" ".join(
            (
                "S.: short questions, L.: long questions (the same questions, asked both ways).",
                "W.: difficulty-weighted (SPEC 14 weights).",
                "Strict also checks every segment along its line.",
                REASONMAP_ACCURACY,
                REASONMAP_SCORE,
                "95% CI in brackets.",
            )
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


def _leaderboard(rows: Sequence[dict[str, Any]] | None) -> Any:
    pooled = (_m("weighted_accuracy"), _m("weighted_map_score"))
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


def _printout(block: dict[str, Any]) -> list[Any]:
    cols = ("mode", "n", "acc", "acc strict", "weighted acc", "map score", "weighted")
    rows = [
        (
            mode,
            str(b["accuracy"]["n"]),
            metric_text(_m("accuracy"), b["accuracy"]),
            metric_text(_m("accuracy_strict"), b["accuracy_strict"]),
            metric_text(_m("weighted_accuracy"), b["weighted_accuracy"]),
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
    # n counts answers: each question is asked short and long
    title = "ReasonMap, short + long answers"
    return [(title, rows, "map_difficulty", "question_difficulty", "correct")]


VIEW = KindView(
    leaderboard=_leaderboard,
    tables=_tables,
    paired=_paired,
    printout=_printout,
    describe=_describe,
    heatmaps=_heatmaps,
)
