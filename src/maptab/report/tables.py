"""Leaderboard tables comparing runs, in the shape of the papers' tables (SPEC 13).

Every number is recomputed from the runs' ``scores.jsonl`` rows with the scorer's own
interval code (:func:`maptab.score.stats.bootstrap_ci`: 95% percentile bootstrap, 2000
replicates, clustered by ``map_id``), so a cell and its interval agree with ``summary.json``.

Tables (``key``: what it holds):

* ``leaderboard`` — one row per run: route planning strict accuracy (the verified metric,
  our default), EMA, PMA, DS, mean optimality gap; QA accuracy; ReasonMap accuracy and map
  score (difficulty-weighted, both modes pooled).
* ``rp_<scenario>`` — MapTab Table 2: EMA / PMA / DS per RP category (and all).
* ``rp_strict_<scenario>`` — strict accuracy per RP category, and the checks behind it
  (valid, optimal, transfer marks, mean gap, format errors, answers the paper's 0.5 rule
  accepted although a station is not the reference's: ``lenient_false_accept``).
* ``qa_<scenario>`` — MapTab Table 3: accuracy per capability (mean of the accuracies of
  the QA types attached to it), and per QA type.
* ``repetition_<scenario>`` — MapTab Table 4: EMA / PMA by repetition class FR / PR / NR
  and overall, per criteria category and over all criteria categories, with the accuracy of
  reported totals T / P / C / R where the queries asked for them.
* ``reasonmap`` — ReasonMap Table 2: accuracy (lenient and strict) and map score, plain
  and difficulty-weighted, short and long questions.
* ``paired`` — each run minus the first, on the samples both scored: mean difference with
  its paired, map-clustered bootstrap interval (:func:`maptab.score.scorer.compare_runs`).

Renderers: :func:`to_markdown`, :func:`to_csv` (each interval as ``_lo`` / ``_hi``
columns), :func:`to_latex` (booktabs).
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from maptab.report.loader import Run
from maptab.schema import RP_BY_NAME, RP_CATEGORIES
from maptab.score.qa import capability_weights
from maptab.score.scorer import LEVEL, N_BOOT, compare_runs
from maptab.score.stats import bootstrap_ci

__all__ = [
    "CAPABILITY_ABBREV",
    "CATEGORY_TITLES",
    "Cell",
    "Column",
    "ReportTable",
    "build_tables",
    "leaderboard_table",
    "to_csv",
    "to_latex",
    "to_markdown",
]


CATEGORY_TITLES = {
    "map_only": "Map-only",
    "edge_only": "Edge_tab-only",
    "map_edge": "Map+Edge_tab",
    "time": "Time",
    "price": "Price",
    "comfort": "Comfort",
    "reliability": "Reliability",
    "time_price_reliability": "T+P+R",
    "time_comfort_reliability": "T+C+R",
    "price_comfort_reliability": "P+C+R",
    "all_criteria": "T+P+C+R",
    "map_mix": "Map+Mix_tab",
}
_CATEGORY_ORDER = [c.name for c in RP_CATEGORIES]

# paper Table 1 capabilities, in the paper's column order
CAPABILITY_ABBREV = {
    "visual perception": "VP",
    "table understanding": "TU",
    "cross-modal alignment": "CA",
    "graph topology reasoning": "GT",
    "spatial localization": "SL",
    "numerical reasoning": "NR",
    "path planning": "PP",
    "global reasoning": "GR",
}
_ABBREVS = list(CAPABILITY_ABBREV.values())


def capability_abbrev(name: str) -> str:
    """Paper abbreviation of a capability name (``visual_perception`` → ``VP``); names
    outside Table 1 and names already abbreviated are returned unchanged."""
    key = " ".join(name.replace("_", " ").replace("-", " ").lower().split())
    for full, abbrev in CAPABILITY_ABBREV.items():
        if key == full.replace("-", " "):
            return abbrev
    return name


# --------------------------------------------------------------------------- the model
@dataclass(frozen=True, slots=True)
class Cell:
    """One table cell: text, or a number with an optional interval.

    ``kind`` says how numbers print: ``pct`` (a share, printed ×100), ``pp`` (a difference of
    shares in percentage points, ×100 with a sign), ``num`` (2 decimals), ``int``.
    ``value=None`` prints as ``–`` (no samples).
    """

    value: float | str | None
    lo: float | None = None
    hi: float | None = None
    kind: str = "text"

    @property
    def has_interval(self) -> bool:
        return self.lo is not None and self.hi is not None

    def scaled(self, x: float) -> float:
        return 100 * x if self.kind in ("pct", "pp") else x

    def number(self, x: float) -> str:
        v = self.scaled(x)
        if self.kind == "int":
            return f"{v:.0f}"
        if self.kind == "num":
            return f"{v:.2f}"
        if self.kind == "pp":
            return f"{v:+.1f}"
        return f"{v:.1f}"

    def text(self) -> str:
        """The value alone, as printed (``–`` when missing)."""
        if self.value is None:
            return "–"
        if isinstance(self.value, str):
            return self.value
        return self.number(self.value)

    def interval(self) -> str:
        """``[lo, hi]`` as printed, or ``""``."""
        if not self.has_interval:
            return ""
        return f"[{self.number(self.lo)}, {self.number(self.hi)}]"  # type: ignore[arg-type]

    def __str__(self) -> str:
        band = self.interval()
        return f"{self.text()} {band}" if band and self.value is not None else self.text()


@dataclass(frozen=True, slots=True)
class Column:
    """A column header; ``group`` is the spanning header above it (``""`` for none)."""

    name: str
    group: str = ""

    @property
    def label(self) -> str:
        return f"{self.group} {self.name}".strip()


@dataclass(slots=True)
class ReportTable:
    """A titled table: ``columns`` and ``rows`` of :class:`Cell` (same length each)."""

    key: str
    title: str
    columns: list[Column]
    rows: list[list[Cell]] = field(default_factory=list)
    note: str = ""


# --------------------------------------------------------------------------- statistics
def _interval(
    rows: Sequence[dict[str, Any]],
    value: Callable[[dict[str, Any]], float],
    kind: str = "pct",
    weight: Callable[[dict[str, Any]], float] | None = None,
) -> Cell:
    if not rows:
        return Cell(None, kind=kind)
    w = None if weight is None else [weight(r) for r in rows]
    mean, lo, hi = bootstrap_ci(
        [float(value(r)) for r in rows],
        clusters=[r["map_id"] for r in rows],
        weights=w,
        n_boot=N_BOOT,
        level=LEVEL,
    )
    if math.isnan(mean):
        return Cell(None, kind=kind)
    return Cell(mean, lo, hi, kind)


def _ds(rows: Sequence[dict[str, Any]]) -> Cell:
    """DS is a total (paper Table 2); its interval is the mean's scaled by the count."""
    c = _interval(rows, lambda r: r["ds"], "int")
    if c.value is None:
        return c
    n = len(rows)
    return Cell(c.value * n, c.lo * n, c.hi * n, "int")  # type: ignore[operator]


def _gap(rows: Sequence[dict[str, Any]]) -> Cell:
    valid = [r for r in rows if r.get("valid") and r.get("gap") is not None]
    return _interval(valid, lambda r: r["gap"], "num")


def _by(rows: Sequence[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r.get(key) is not None:
            out[str(r[key])].append(r)
    return out


def _scenarios(runs: Sequence[Run], kind: str) -> list[str]:
    return sorted({str(r["scenario"]) for run in runs for r in run.rows(kind)})


def _categories(runs: Sequence[Run], scenario: str) -> list[str]:
    present = {
        str(r["category"]) for run in runs for r in run.rows("rp") if r["scenario"] == scenario
    }
    order = {c: i for i, c in enumerate(_CATEGORY_ORDER)}
    return sorted(present, key=lambda c: (order.get(c, len(order)), c))


def _title(category: str) -> str:
    return CATEGORY_TITLES.get(category, category)


# --------------------------------------------------------------------------- tables
def _rm_pooled(rows: Sequence[dict[str, Any]], value: str, kind: str) -> Cell:
    return _interval(rows, lambda r: r[value], kind, weight=lambda r: r["weight"])


def leaderboard_table(runs: Sequence[Run]) -> ReportTable:
    """The headline comparison, one row per run (module docstring)."""
    has = {k: any(run.rows(k) for run in runs) for k in ("rp", "qa", "reasonmap")}
    cols = [Column("Model")]
    if has["rp"]:
        cols += [Column(n, "RP") for n in ("n", "Strict", "EMA", "PMA", "DS", "Gap")]
    if has["qa"]:
        cols += [Column("n", "QA"), Column("Acc", "QA")]
    if has["reasonmap"]:
        cols += [Column(n, "ReasonMap") for n in ("n", "W.Acc", "W.Score")]
    table = ReportTable(
        "leaderboard",
        "Leaderboard (95% CI, bootstrap clustered by map)",
        cols,
        note=(
            "Strict: route valid, optimal and transfer marks right (verified on the graph). "
            "EMA/PMA/DS: the papers' metrics. Gap: mean J(pred)/J(opt)-1 over valid routes. "
            "ReasonMap: difficulty-weighted accuracy and map score, short and long pooled."
        ),
    )
    for run in runs:
        row = [Cell(run.name)]
        if has["rp"]:
            rp = run.rows("rp")
            row += [
                Cell(len(rp), kind="int"),
                _interval(rp, lambda r: r["strict"]),
                _interval(rp, lambda r: r["ema"]),
                _interval(rp, lambda r: r["pma"]),
                _ds(rp),
                _gap(rp),
            ]
        if has["qa"]:
            qa = run.rows("qa")
            row += [Cell(len(qa), kind="int"), _interval(qa, lambda r: r["correct"])]
        if has["reasonmap"]:
            rm = run.rows("reasonmap")
            row += [
                Cell(len(rm), kind="int"),
                _rm_pooled(rm, "correct", "pct"),
                _rm_pooled(rm, "map_score", "num"),
            ]
        table.rows.append(row)
    return table


def rp_paper_table(runs: Sequence[Run], scenario: str) -> ReportTable:
    """MapTab Table 2 for one scenario: EMA / PMA / DS per category."""
    cats = _categories(runs, scenario)
    groups = [("all", "All")] + [(c, _title(c)) for c in cats]
    cols = [Column("Model")] + [Column(m, g) for _, g in groups for m in ("EMA", "PMA", "DS")]
    table = ReportTable(
        f"rp_{scenario}",
        f"Route planning, {scenario}: paper metrics (MapTab Table 2)",
        cols,
        note="EMA and PMA in %, DS a total; 95% CI in brackets.",
    )
    for run in runs:
        rows = [r for r in run.rows("rp") if r["scenario"] == scenario]
        per = _by(rows, "category")
        row = [Cell(run.name)]
        for key, _ in groups:
            g = rows if key == "all" else per.get(key, [])
            row += [
                _interval(g, lambda r: r["ema"]),
                _interval(g, lambda r: r["pma"]),
                _ds(g),
            ]
        table.rows.append(row)
    return table


def rp_strict_table(runs: Sequence[Run], scenario: str) -> ReportTable:
    """Strict accuracy per category and the verification checks, for one scenario."""
    cats = _categories(runs, scenario)
    cols = [Column("Model")]
    cols += [Column(n, "All") for n in ("Strict", "Valid", "Optimal", "Transfers", "Gap")]
    cols += [Column("Format err.", "All"), Column("0.5-rule false acc.", "All")]
    cols += [Column(_title(c), "Strict") for c in cats]
    table = ReportTable(
        f"rp_strict_{scenario}",
        f"Route planning, {scenario}: strict and verified metrics",
        cols,
        note=(
            "Valid: the route exists on the map, is simple and joins the asked stations. "
            "Optimal: its cost equals the optimum. Transfers: marks right. "
            "0.5-rule false acc.: answers the paper's lenient EMA accepted although a "
            "station is not the reference's (misspelt into another station, or not on the "
            "map; count)."
        ),
    )
    for run in runs:
        rows = [r for r in run.rows("rp") if r["scenario"] == scenario]
        per = _by(rows, "category")
        row = [
            Cell(run.name),
            _interval(rows, lambda r: r["strict"]),
            _interval(rows, lambda r: r["valid"]),
            _interval(rows, lambda r: r["optimal"]),
            _interval(rows, lambda r: r["transfers_ok"]),
            _gap(rows),
            Cell(sum(not r["parsed"] for r in rows), kind="int"),
            Cell(sum(bool(r.get("lenient_false_accept")) for r in rows), kind="int"),
        ]
        row += [_interval(per.get(c, []), lambda r: r["strict"]) for c in cats]
        table.rows.append(row)
    return table


def capabilities_of(runs: Sequence[Run], scenario: str) -> list[str]:
    names = {
        c
        for run in runs
        for r in run.rows("qa")
        if r["scenario"] == scenario
        for c in r.get("capabilities", [])
    }
    order = {a: i for i, a in enumerate(_ABBREVS)}
    return sorted(names, key=lambda c: (order.get(capability_abbrev(c), len(order)), c))


def capability_cell(rows: Sequence[dict[str, Any]], capability: str) -> Cell:
    """Accuracy on a capability: the mean of the per-type accuracies of the QA types that
    carry it (paper Table 3), as a weighted mean with weight 1/n(type)."""
    mine = [r for r in rows if capability in r.get("capabilities", [])]
    weights = dict(zip(map(id, mine), capability_weights([r["type"] for r in mine]), strict=True))
    return _interval(mine, lambda r: r["correct"], weight=lambda r: weights[id(r)])


def qa_table(runs: Sequence[Run], scenario: str) -> ReportTable:
    """MapTab Table 3 for one scenario: accuracy per capability, overall and per type."""
    caps = capabilities_of(runs, scenario)
    types = sorted(
        {int(r["type"]) for run in runs for r in run.rows("qa") if r["scenario"] == scenario}
    )
    cols = [Column("Model"), Column("Acc", "All")]
    cols += [Column(capability_abbrev(c), "Capability") for c in caps]
    cols += [Column(f"Q{t}", "Type") for t in types]
    table = ReportTable(
        f"qa_{scenario}",
        f"QA, {scenario}: accuracy by capability (MapTab Table 3) and by type",
        cols,
        note="Capability = mean accuracy of the QA types attached to it (paper Table 1). "
        + ", ".join(f"{capability_abbrev(c)}: {c}" for c in caps if capability_abbrev(c) != c),
    )
    for run in runs:
        rows = [r for r in run.rows("qa") if r["scenario"] == scenario]
        per = _by(rows, "type")
        row = [Cell(run.name), _interval(rows, lambda r: r["correct"])]
        row += [capability_cell(rows, c) for c in caps]
        row += [_interval(per.get(str(t), []), lambda r: r["correct"]) for t in types]
        table.rows.append(row)
    return table


def repetition_table(runs: Sequence[Run], scenario: str) -> ReportTable | None:
    """MapTab Table 4 for one scenario; ``None`` when no criteria queries were scored."""
    cats = [
        c
        for c in _categories(runs, scenario)
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
        rows = [r for r in run.rows("rp") if r["scenario"] == scenario and r["category"] in cats]
        per = _by(rows, "category")
        for key, label in [(c, _title(c)) for c in cats] + [("", "All criteria")]:
            g = per.get(key, []) if key else rows
            reps = _by(g, "repetition")
            row = [Cell(run.name), Cell(label)]
            for cls in ("FR", "PR", "NR", "All"):
                sub = g if cls == "All" else reps.get(cls, [])
                row += [_interval(sub, lambda r: r["ema"]), _interval(sub, lambda r: r["pma"])]
            asked = [r for r in g if r.get("totals")]
            for letter in "TPCR":
                has = [r for r in asked if letter in r["totals"]]
                row.append(_interval(has, lambda r, x=letter: r["totals"][x]))
            table.rows.append(row)
    return table


_RM_METRICS = (
    ("Acc", "correct", "pct", False),
    ("Acc strict", "correct_strict", "pct", False),
    ("W.Acc", "correct", "pct", True),
    ("W.Acc strict", "correct_strict", "pct", True),
    ("Map score", "map_score", "num", False),
    ("W.Map score", "map_score", "num", True),
)


def reasonmap_table(runs: Sequence[Run]) -> ReportTable:
    """ReasonMap Table 2: per mode (S. short, L. long) accuracy and map score."""
    cols = [Column("Model")]
    cols += [Column(m, title) for title, *_ in _RM_METRICS for m in ("S.", "L.")]
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
        modes = _by(run.rows("reasonmap"), "mode")
        row = [Cell(run.name)]
        for _, field_, kind, weighted in _RM_METRICS:
            for mode in ("short", "long"):
                g = modes.get(mode, [])
                w = (lambda r: r["weight"]) if weighted else None
                row.append(_interval(g, lambda r, f=field_: r[f], kind, w))
        table.rows.append(row)
    return table


def _paired_metrics(run: Run) -> list[tuple[str, str, Callable[[dict[str, Any]], bool]]]:
    """(label, value field, row filter) for each paired comparison."""
    out: list[tuple[str, str, Callable[[dict[str, Any]], bool]]] = []
    scen = sorted({r["scenario"] for r in run.scores if r.get("kind") in ("rp", "qa")})
    for s in scen:
        for metric in ("strict", "ema", "pma"):
            out.append(
                (
                    f"RP {s} {metric}",
                    metric,
                    lambda r, s=s: r["kind"] == "rp" and r["scenario"] == s,
                )
            )
        out.append(
            (f"QA {s} accuracy", "correct", lambda r, s=s: r["kind"] == "qa" and r["scenario"] == s)
        )
    for mode in ("short", "long"):
        out.append(
            (
                f"ReasonMap {mode} accuracy",
                "correct",
                lambda r, m=mode: r["kind"] == "reasonmap" and r["mode"] == m,
            )
        )
    return out


def paired_table(runs: Sequence[Run]) -> ReportTable | None:
    """Each run minus the first on their common scored samples; ``None`` for one run."""
    if len(runs) < 2:
        return None
    base = runs[0]
    table = ReportTable(
        "paired",
        f"Paired differences against {base.name} (same samples)",
        [
            Column("Model"),
            Column("Metric"),
            Column("n"),
            Column("Δ (pp)"),
            Column("Run"),
            Column("Base"),
        ],
        note=(
            "Δ: mean of (run − base) over the samples both runs scored, in percentage points, "
            "with a paired bootstrap interval clustered by map. An interval that excludes 0 "
            "is a difference beyond resampling noise."
        ),
    )
    for run in runs[1:]:
        for label, value, keep in _paired_metrics(base):
            cmp = compare_runs(run.scores, base.scores, value, keep)
            if not cmp["n"]:
                continue
            table.rows.append(
                [
                    Cell(run.name),
                    Cell(label),
                    Cell(cmp["n"], kind="int"),
                    Cell(cmp["diff"], cmp["lo"], cmp["hi"], "pp"),
                    Cell(cmp["mean_a"], kind="pct"),
                    Cell(cmp["mean_b"], kind="pct"),
                ]
            )
    return table


def build_tables(runs: Sequence[Run]) -> list[ReportTable]:
    """Every table of the report, leaderboard first (module docstring)."""
    tables = [leaderboard_table(runs)]
    for s in _scenarios(runs, "rp"):
        tables += [rp_paper_table(runs, s), rp_strict_table(runs, s)]
        rep = repetition_table(runs, s)
        if rep is not None:
            tables.append(rep)
    tables += [qa_table(runs, s) for s in _scenarios(runs, "qa")]
    if any(run.rows("reasonmap") for run in runs):
        tables.append(reasonmap_table(runs))
    paired = paired_table(runs)
    if paired is not None and paired.rows:
        tables.append(paired)
    return tables


# --------------------------------------------------------------------------- renderers
def _text_column(table: ReportTable, i: int) -> bool:
    return all(row[i].kind == "text" for row in table.rows)


def _md_escape(text: str) -> str:
    """Cell text safe in Markdown: pipes escaped, HTML metacharacters as entities (Markdown
    renderers pass raw HTML through), newlines flattened."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def to_markdown(table: ReportTable) -> str:
    """GitHub-flavoured Markdown: ``### title``, the table (group joined into each header),
    then the note; each number printed with its interval as ``12.3 [8.1, 16.0]``."""
    head = [_md_escape(c.label) for c in table.columns]
    align = ["---" if _text_column(table, i) else "---:" for i in range(len(head))]
    lines = [f"### {_md_escape(table.title)}", "", "| " + " | ".join(head) + " |"]
    lines.append("| " + " | ".join(align) + " |")
    for row in table.rows:
        lines.append("| " + " | ".join(_md_escape(str(c)) for c in row) + " |")
    if table.note:
        lines += ["", _md_escape(table.note)]
    return "\n".join(lines) + "\n"


def _csv_value(cell: Cell, x: float | str | None) -> str:
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    return f"{cell.scaled(x):.4f}".rstrip("0").rstrip(".") if cell.kind != "int" else f"{x:.0f}"


def to_csv(table: ReportTable) -> str:
    """CSV with one header row; a column with intervals gets ``<label>_lo``/``<label>_hi``.
    Shares are written in percent (as printed), unrounded to 4 decimals."""
    with_ci = [any(row[i].has_interval for row in table.rows) for i in range(len(table.columns))]
    header: list[str] = []
    for col, ci in zip(table.columns, with_ci, strict=True):
        header += [col.label, f"{col.label}_lo", f"{col.label}_hi"] if ci else [col.label]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in table.rows:
        out: list[str] = []
        for cell, ci in zip(row, with_ci, strict=True):
            out.append(_csv_value(cell, cell.value))
            if ci:
                out += [_csv_value(cell, cell.lo), _csv_value(cell, cell.hi)]
        w.writerow(out)
    return buf.getvalue()


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(table: ReportTable) -> str:
    """A booktabs ``table`` environment: grouped headers via ``\\multicolumn`` and
    ``\\cmidrule``, intervals in ``\\scriptsize`` after each number."""
    spec = "".join("l" if _text_column(table, i) else "r" for i in range(len(table.columns)))
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        rf"\caption{{{latex_escape(table.title)}}}",
        rf"\label{{tab:{table.key}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
    ]
    if any(c.group for c in table.columns):
        spans: list[tuple[str, int, int]] = []
        for i, c in enumerate(table.columns):
            if spans and spans[-1][0] == c.group:
                spans[-1] = (c.group, spans[-1][1], i)
            else:
                spans.append((c.group, i, i))
        cells: list[str] = []
        rules: list[str] = []
        for g, start, end in spans:
            if g:
                cells.append(rf"\multicolumn{{{end - start + 1}}}{{c}}{{{latex_escape(g)}}}")
                rules.append(rf"\cmidrule(lr){{{start + 1}-{end + 1}}}")
            else:
                cells += [""] * (end - start + 1)
        lines.append(" & ".join(cells) + r" \\")
        lines.append(" ".join(rules))
    lines.append(" & ".join(latex_escape(c.name) for c in table.columns) + r" \\")
    lines.append(r"\midrule")
    for row in table.rows:
        out = []
        for cell in row:
            text = latex_escape(cell.text())
            if cell.has_interval and cell.value is not None:
                text += rf"\,{{\scriptsize[{cell.number(cell.lo)}, {cell.number(cell.hi)}]}}"  # type: ignore[arg-type]
            out.append(text)
        lines.append(" & ".join(out) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if table.note:
        lines.append(rf"\par\footnotesize {latex_escape(table.note)}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
