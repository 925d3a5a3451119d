"""How map QA (``qa``) is shown (SPEC 13): MapTab Table 3 (accuracy by capability and by
type), the leaderboard columns, the browser text and the capability profile."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from maptab.core.qa_types import QA_BY_NUMBER
from maptab.core.schema import QAQuery
from maptab.report.html import TABLE_TITLES, fmt_value
from maptab.report.plots import capability_profile
from maptab.report.tables import (
    CAPABILITY_ORDER,
    Cell,
    Column,
    ReportTable,
    by,
    capability_abbrev,
    capability_legend,
    capability_name,
    interval_cell,
    metric_cell,
    scenarios_of,
)
from maptab.report.views import KindView
from maptab.report.views import metric as kind_metric
from maptab.score.answers import capability_weights
from maptab.score.metrics import Metric, metric_text

NAME = "qa"


def _m(name: str) -> Metric:
    return kind_metric(NAME, name)


def capabilities_of(runs: Sequence[Any], scenario: str) -> list[str]:
    names = {
        c
        for run in runs
        for r in run.rows(NAME)
        if r["scenario"] == scenario
        for c in r.get("capabilities", [])
    }
    order = {a: i for i, a in enumerate(CAPABILITY_ORDER)}
    return sorted(names, key=lambda c: (order.get(capability_abbrev(c), len(order)), c))


def capability_cell(rows: Sequence[dict[str, Any]], capability: str) -> Cell:
    """Accuracy on a capability: the mean of the per-type accuracies of the QA types that
    carry it (paper Table 3), as a weighted mean with weight 1/n(type)."""
    mine = [r for r in rows if capability in r.get("capabilities", [])]
    weights = dict(zip(map(id, mine), capability_weights([r["type"] for r in mine]), strict=True))
    return interval_cell(mine, lambda r: r["correct"], weight=lambda r: weights[id(r)])


def type_legend(types: Sequence[int]) -> str:
    """``Q1: number of lines; Q2: …`` for the QA types of SPEC 10 among ``types``."""
    known = [t for t in types if t in QA_BY_NUMBER]
    return "; ".join(f"Q{t}: {QA_BY_NUMBER[t].description}" for t in known)


def _note(caps: Sequence[str], types: Sequence[int]) -> str:
    """The legend of a QA table: what a capability cell is, the codes and the types."""
    parts = ["Capability = mean accuracy of the QA types attached to it (paper Table 1)."]
    legend = capability_legend(caps)
    if legend:
        parts.append(f"Capabilities: {legend}.")
    described = type_legend(types)
    if described:
        parts.append(f"Types (SPEC 10): {described}.")
    parts.append("95% CI in brackets.")
    return " ".join(parts)


def qa_table(runs: Sequence[Any], scenario: str) -> ReportTable:
    """MapTab Table 3 for one scenario: accuracy per capability, overall and per type."""
    caps = capabilities_of(runs, scenario)
    types = sorted(
        {int(r["type"]) for run in runs for r in run.rows(NAME) if r["scenario"] == scenario}
    )
    cols = [Column("Model"), Column("Acc", "All")]
    cols += [Column(capability_abbrev(c), "Capability") for c in caps]
    cols += [Column(f"Q{t}", "Type") for t in types]
    table = ReportTable(
        f"qa_{scenario}",
        f"QA, {scenario}: accuracy by capability (MapTab Table 3) and by type",
        cols,
        note=_note(caps, types),
    )
    for run in runs:
        rows = [r for r in run.rows(NAME) if r["scenario"] == scenario]
        per = by(rows, "type")
        row = [Cell(run.name), metric_cell(_m("accuracy"), rows)]
        row += [capability_cell(rows, c) for c in caps]
        row += [metric_cell(_m("accuracy"), per.get(str(t), [])) for t in types]
        table.rows.append(row)
    return table


def _leaderboard(rows: Sequence[dict[str, Any]] | None) -> Any:
    if rows is None:
        return [Column("n", "QA"), Column(_m("accuracy").header, "QA")]
    return [Cell(len(rows), kind="int"), metric_cell(_m("accuracy"), rows)]


def _tables(runs: Sequence[Any]) -> list[Any]:
    return [qa_table(runs, s) for s in scenarios_of(runs, NAME)]


def _paired(run: Any) -> list[tuple[Any, str, str, Any]]:
    return [
        (
            (0, s),
            f"QA {s} accuracy",
            "correct",
            lambda r, s=s: r["kind"] == NAME and r["scenario"] == s,
        )
        for s in sorted({r["scenario"] for r in run.rows(NAME)})
    ]


def _describe(row: dict[str, Any], query: Any, response: str) -> dict[str, Any]:
    rec: dict[str, Any] = {"prompt": "", "inputs": "", "gold": "", "pred": "", "metrics": []}
    rec["category"] = f"QA type {row['type']}"
    rec["mdiff"] = rec["qdiff"] = None
    rec["pred"] = fmt_value(row.get("pred"))
    rec["gold"] = fmt_value(row.get("answer"))
    rec["metrics"] = [["correct", fmt_value(row.get("correct"))]]
    described = type_legend([row["type"]] if isinstance(row.get("type"), int) else [])
    if described:
        rec["metrics"].append(["type", described])
    caps = row.get("capabilities", [])
    pairs = [(capability_abbrev(c), capability_name(c)) for c in caps]
    named = [f"{code} ({name})" if code != name else code for code, name in pairs]
    rec["metrics"].append(["capabilities", ", ".join(named)])
    if isinstance(query, QAQuery):
        rec["prompt"] = query.question
        rec["inputs"] = ", ".join(TABLE_TITLES.get(i, i) for i in query.inputs)
    return rec


def _printout(block: dict[str, Any]) -> list[Any]:
    rows = [
        (scenario, str(b["overall"]["n"]), metric_text(_m("accuracy"), b["overall"]))
        for scenario, b in block["by_scenario"].items()
    ]
    return [("QA accuracy", ("scenario", "n", "accuracy"), 1, rows)]


def _capability_figure(runs: Sequence[Any], path: Any) -> Any:
    return capability_profile(
        runs, path, kind=NAME, capabilities=capabilities_of, cell=capability_cell
    )


VIEW = KindView(
    leaderboard=_leaderboard,
    tables=_tables,
    paired=_paired,
    printout=_printout,
    describe=_describe,
    figures=((20, _capability_figure, "capability_profile.png"),),
)
