"""How route planning (``rp``) is shown (SPEC 13): MapTab Tables 2 and 4, the strict and
verified table, the leaderboard columns, the browser text, heatmaps and figures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from maptab.core.schema import RP_BY_NAME, RPQuery
from maptab.report.html import TABLE_TITLES, fmt_value
from maptab.report.plots import error_bars, gap_distribution
from maptab.report.tables import (
    CATEGORY_ORDER,
    CATEGORY_TITLES,
    CRITERIA_LEGEND,
    Cell,
    Column,
    ReportTable,
    by,
    category_title,
    interval_cell,
    metric_cell,
    scenarios_of,
)
from maptab.report.views import KindView
from maptab.report.views import metric as kind_metric
from maptab.score.metrics import Metric, metric_text

NAME = "rp"


def _m(name: str) -> Metric:
    return kind_metric(NAME, name)


def categories_of(runs: Sequence[Any], scenario: str) -> list[str]:
    present = {
        str(r["category"]) for run in runs for r in run.rows(NAME) if r["scenario"] == scenario
    }
    order = {c: i for i, c in enumerate(CATEGORY_ORDER)}
    return sorted(present, key=lambda c: (order.get(c, len(order)), c))


def rp_paper_table(runs: Sequence[Any], scenario: str) -> ReportTable:
    """MapTab Table 2 for one scenario: EMA / PMA / DS per category."""
    cats = categories_of(runs, scenario)
    groups = [("all", "All")] + [(c, category_title(c)) for c in cats]
    cols = [Column("Model")] + [Column(m, g) for _, g in groups for m in ("EMA", "PMA", "DS")]
    table = ReportTable(
        f"rp_{scenario}",
        f"Route planning, {scenario}: paper metrics (MapTab Table 2)",
        cols,
        note=(
            "EMA: exact-match accuracy (the route equals a reference, a station matching by "
            "the paper's 0.5 name-similarity rule). PMA: partial-match accuracy (the share "
            "of a reference matched from its start). DS: difficulty score, the sum over "
            "exact matches of map level + query level (easy 1, medium 2, hard 3). "
            + CRITERIA_LEGEND
            + " EMA and PMA in %, DS a total; 95% CI in brackets."
        ),
    )
    for run in runs:
        rows = [r for r in run.rows(NAME) if r["scenario"] == scenario]
        per = by(rows, "category")
        row = [Cell(run.name)]
        for key, _ in groups:
            g = rows if key == "all" else per.get(key, [])
            row += [
                metric_cell(_m("ema"), g),
                metric_cell(_m("pma"), g),
                metric_cell(_m("ds"), g),
            ]
        table.rows.append(row)
    return table


def rp_strict_table(runs: Sequence[Any], scenario: str) -> ReportTable:
    """Strict accuracy per category and the verification checks, for one scenario."""
    cats = categories_of(runs, scenario)
    cols = [Column("Model")]
    cols += [Column(n, "All") for n in ("Strict", "Valid", "Optimal", "Transfers", "Gap")]
    cols += [Column("Format err.", "All"), Column("0.5-rule false acc.", "All")]
    cols += [Column(category_title(c), "Strict") for c in cats]
    table = ReportTable(
        f"rp_strict_{scenario}",
        f"Route planning, {scenario}: strict and verified metrics",
        cols,
        note=(
            "Valid: the route exists on the map, is simple and joins the asked stations. "
            "Optimal: its cost equals the optimum. Transfers: marks right. "
            "0.5-rule false acc.: answers the paper's lenient EMA accepted although a "
            "station is not the reference's (misspelt into another station, or not on the "
            "map; count). Strict: valid, optimal and transfer marks right. Gap: mean "
            "J(pred)/J(opt) - 1 over valid routes (0 is optimal). "
            + CRITERIA_LEGEND
            + " 95% CI in brackets."
        ),
    )
    for run in runs:
        rows = [r for r in run.rows(NAME) if r["scenario"] == scenario]
        per = by(rows, "category")
        row = [
            Cell(run.name),
            metric_cell(_m("strict"), rows),
            metric_cell(_m("valid"), rows),
            metric_cell(_m("optimal"), rows),
            metric_cell(_m("transfers_ok"), rows),
            metric_cell(_m("gap"), rows),
            metric_cell(_m("format_errors"), rows),
            Cell(sum(bool(r.get("lenient_false_accept")) for r in rows), kind="int"),
        ]
        row += [metric_cell(_m("strict"), per.get(c, [])) for c in cats]
        table.rows.append(row)
    return table


def repetition_table(runs: Sequence[Any], scenario: str) -> ReportTable | None:
    """MapTab Table 4 for one scenario; ``None`` when no criteria queries were scored."""
    cats = [
        c
        for c in categories_of(runs, scenario)
        if c in RP_BY_NAME and not RP_BY_NAME[c].criteria_free
    ]
    if not cats:
        return None
    cols = [Column("Model"), Column("Criteria")]
    for cls in ("FR", "PR", "NR", "All"):
        cols += [Column("EMA", cls), Column("PMA", cls)]
    cols += [Column(letter, "Totals") for letter in "TPCR"]
    table = ReportTable(
        f"repetition_{scenario}",
        f"Route planning, {scenario}: repetition classes and reported totals (MapTab Table 4)",
        cols,
        note=(
            "FR: the optimum is the unique shortest path; PR: one of several; NR: none. "
            "T/P/C/R: accuracy of reported Total Time, Total Price, Average Comfort, "
            "Average Reliability (only queries that asked for them). 'All criteria' pools "
            "the criteria categories."
        ),
    )
    for run in runs:
        rows = [r for r in run.rows(NAME) if r["scenario"] == scenario and r["category"] in cats]
        per = by(rows, "category")
        for key, label in [(c, category_title(c)) for c in cats] + [("", "All criteria")]:
            g = per.get(key, []) if key else rows
            reps = by(g, "repetition")
            row = [Cell(run.name), Cell(label)]
            for cls in ("FR", "PR", "NR", "All"):
                sub = g if cls == "All" else reps.get(cls, [])
                row += [metric_cell(_m("ema"), sub), metric_cell(_m("pma"), sub)]
            asked = [r for r in g if r.get("totals")]
            for letter in "TPCR":
                has = [r for r in asked if letter in r["totals"]]
                row.append(interval_cell(has, lambda r, x=letter: r["totals"][x]))
            table.rows.append(row)
    return table


def _leaderboard(rows: Sequence[dict[str, Any]] | None) -> Any:
    names = ("strict", "ema", "pma", "ds", "gap")
    if rows is None:
        return [Column("n", "RP")] + [Column(_m(n).header, "RP") for n in names]
    return [Cell(len(rows), kind="int")] + [metric_cell(_m(n), rows) for n in names]


def _tables(runs: Sequence[Any]) -> list[Any]:
    out = []
    for s in scenarios_of(runs, NAME):
        out += [rp_paper_table(runs, s), rp_strict_table(runs, s)]
        rep = repetition_table(runs, s)
        if rep is not None:
            out.append(rep)
    return out


def _paired(run: Any) -> list[tuple[Any, str, str, Any]]:
    out = []
    for s in sorted({r["scenario"] for r in run.rows(NAME)}):
        for metric in ("strict", "ema", "pma"):
            out.append(
                (
                    (0, s),
                    f"RP {s} {metric}",
                    metric,
                    lambda r, s=s: r["kind"] == NAME and r["scenario"] == s,
                )
            )
    return out


def _describe(row: dict[str, Any], query: Any, response: str) -> dict[str, Any]:
    rec: dict[str, Any] = {"prompt": "", "inputs": "", "gold": "", "pred": "", "metrics": []}
    rec["category"] = CATEGORY_TITLES.get(row["category"], row["category"])
    rec["mdiff"], rec["qdiff"] = row.get("map_difficulty"), row.get("query_difficulty")
    rec["pred"] = row.get("route") or ""
    keys = ("ema", "pma", "ds", "strict", "valid", "optimal", "transfers_ok", "gap")
    rec["metrics"] = [[k, fmt_value(row.get(k))] for k in keys]
    if row.get("unresolved"):
        rec["metrics"].append(["not on the map", ", ".join(map(str, row["unresolved"]))])
    if row.get("totals"):
        rec["metrics"].append(
            ["totals right", " ".join(f"{k}:{fmt_value(v)}" for k, v in row["totals"].items())]
        )
    if isinstance(query, RPQuery):
        cat = RP_BY_NAME.get(query.category)
        rec["prompt"] = query.question
        rec["inputs"] = ", ".join(TABLE_TITLES.get(i, i) for i in (cat.inputs if cat else ()))
        rec["gold"] = "\n".join(query.routes)
    return rec


def _printout(block: dict[str, Any]) -> list[Any]:
    """The ``maptab score`` printout: ``(title, columns, text columns, rows)``."""
    cols = ("scenario", "category", "n", "EMA", "PMA", "DS", "strict", "valid", "gap")
    rows = []
    for scenario, sb in block["by_scenario"].items():
        for name, b in [("all", sb["overall"]), *sb["by_category"].items()]:
            rows.append(
                (
                    scenario,
                    name,
                    str(b["n"]),
                    metric_text(_m("ema"), b["ema"]),
                    metric_text(_m("pma"), b["pma"], interval=False),
                    metric_text(_m("ds"), b["ds"]),
                    metric_text(_m("strict"), b["strict"]),
                    metric_text(_m("valid"), b["valid"], interval=False),
                    metric_text(_m("gap"), b.get("gap"), interval=False),
                )
            )
    return [("Route planning", cols, 2, rows)]


def _heatmaps(run: Any) -> list[Any]:
    rows = run.rows(NAME)
    return [
        (
            f"RP {s} (strict)",
            [r for r in rows if r["scenario"] == s],
            "map_difficulty",
            "query_difficulty",
            "strict",
        )
        for s in sorted({r["scenario"] for r in rows})
    ]


def _gap_figure(runs: Sequence[Any], path: Any) -> Any:
    return gap_distribution(runs, path, kind=NAME)


def _error_figure(runs: Sequence[Any], path: Any) -> Any:
    return error_bars(runs, path, kind=NAME)


VIEW = KindView(
    leaderboard=_leaderboard,
    tables=_tables,
    paired=_paired,
    printout=_printout,
    describe=_describe,
    heatmaps=_heatmaps,
    figures=((30, _gap_figure, "optimality_gap.png"), (40, _error_figure, "error_types.png")),
    route_overlays=True,
)
