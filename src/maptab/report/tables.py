"""Report tables and their renderers: cells with intervals, in the shape of the papers'
tables (SPEC 13); :mod:`maptab.report.views` assembles them per task kind.

Every number is recomputed from the runs' ``scores.jsonl`` rows with the scorer's own
interval code (:func:`maptab.score.bootstrap.bootstrap_ci`: 95% percentile bootstrap, 2000
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
* ``tools``, ``tools_by_tool``, ``tools_stop``, ``tools_vs_plain`` — tool use, only when a
  run used tools (:mod:`maptab.report.tools_view`; section ``tools``).

Renderers: :func:`to_markdown`, :func:`to_csv` (each interval as ``_lo`` / ``_hi``
columns), :func:`to_latex` (booktabs).

Each table's note spells out its abbreviations; :data:`LEADERBOARD_NOTES` says what the
leaderboard's QA and ReasonMap numbers count (:func:`leaderboard_notes`).
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from maptab.core.schema import QA_CAPABILITIES, RP_CATEGORIES
from maptab.report.loader import Run
from maptab.score.metrics import Columns, Metric, interval
from maptab.score.scorer import compare_runs

__all__ = [
    "CAPABILITY_ABBREV",
    "CATEGORY_TITLES",
    "CRITERIA_LEGEND",
    "LEADERBOARD_NOTES",
    "TOOLS_SECTION",
    "Cell",
    "Column",
    "ReportTable",
    "capability_legend",
    "capability_name",
    "leaderboard_notes",
    "paired_cells",
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
CATEGORY_ORDER = [c.name for c in RP_CATEGORIES]
CRITERIA_LEGEND = (
    "Categories (SPEC 9): Map-only, Edge_tab-only and Map+Edge_tab ask for the fewest "
    "stations from what is shown; Time, Price, Comfort, Reliability and their sums "
    "(T Time, P Price, C Comfort, R Reliability: T+P+R, T+C+R, P+C+R, T+P+C+R) ask for the "
    "cheapest route under those criteria with Map, Edge_tab and Vertex_tab shown; "
    "Map+Mix_tab under all four with Map and Mix_tab shown."
)

# paper Table 1 capabilities, in the paper's column order
CAPABILITY_ABBREV = {name.lower(): code for code, name in QA_CAPABILITIES.items()}
CAPABILITY_ORDER = list(CAPABILITY_ABBREV.values())


def capability_abbrev(name: str) -> str:
    """Paper abbreviation of a capability name (``visual_perception`` → ``VP``); names
    outside Table 1 and names already abbreviated are returned unchanged."""
    key = " ".join(name.replace("_", " ").replace("-", " ").lower().split())
    for full, abbrev in CAPABILITY_ABBREV.items():
        if key == full.replace("-", " "):
            return abbrev
    return name


def capability_name(code: str) -> str:
    """The full name of a capability given by code or name (``VP`` → ``Visual
    Perception``); a capability outside Table 1 is returned unchanged."""
    return QA_CAPABILITIES.get(capability_abbrev(code), code)


def capability_legend(capabilities: Sequence[str]) -> str:
    """``VP: Visual Perception, TU: …`` for the Table 1 capabilities among ``capabilities``."""
    codes = dict.fromkeys(capability_abbrev(c) for c in capabilities)
    return ", ".join(f"{c}: {QA_CAPABILITIES[c]}" for c in codes if c in QA_CAPABILITIES)


REASONMAP_N = (
    "n counts answers, not questions: each question is asked twice, in a short and a long "
    "form (n = 2 × the questions)."
)
REASONMAP_ACCURACY = (
    "ReasonMap accuracy only checks that the answer is a valid route between the asked "
    "stations (its lines exist, its stops are on them, its segments meet), not that it is "
    "the reference route. A baseline that reads the network instead of the picture (oracle, "
    "shortest, random) always answers a valid route and scores 100%: it is perception-free, "
    "and its accuracy says nothing about reading maps."
)
REASONMAP_SCORE = (
    "Map score: at most 20 points for a short answer and 40 for a long one, but the maximum "
    "differs per question (SPEC 14): the points for matching segments fill up only on routes "
    "of several segments, so even the reference route earns 15 of 20 (short) and 29 of 40 "
    "(long) on a trip along one line, and the oracle's mean map score stays below 20 / 40."
)

# what a reader of the leaderboard needs to know about a column group (SPEC 13-14), shown
# under the leaderboard in index.html and by ``maptab report`` and ``maptab demo``
LEADERBOARD_NOTES: dict[str, tuple[str, ...]] = {
    "QA": (
        "QA capabilities (paper Table 1): " + capability_legend(list(QA_CAPABILITIES)) + "; "
        "the QA tables break accuracy down by capability and by QA type (Q1-Q24, SPEC 10).",
    ),
    "ReasonMap": (
        "ReasonMap " + REASONMAP_N + " W.Acc and W.Score pool both forms, weighted by "
        "difficulty; W.Score thus mixes 20- and 40-point answers (at most 30 on average).",
        REASONMAP_ACCURACY,
        REASONMAP_SCORE,
    ),
}


def leaderboard_notes(table: ReportTable) -> list[str]:
    """The :data:`LEADERBOARD_NOTES` of the column groups ``table`` has, in column order."""
    groups = dict.fromkeys(c.group for c in table.columns)
    return [note for g in groups for note in LEADERBOARD_NOTES.get(g, ())]


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


TOOLS_SECTION = "tools"
"""The browser section of the tool-use tables (:mod:`maptab.report.tools_view`)."""


@dataclass(slots=True)
class ReportTable:
    """A titled table: ``columns`` and ``rows`` of :class:`Cell` (same length each).
    ``section`` names the browser section that shows it (``""``: with the other tables)."""

    key: str
    title: str
    columns: list[Column]
    rows: list[list[Cell]] = field(default_factory=list)
    note: str = ""
    section: str = ""


# --------------------------------------------------------------------------- statistics
def interval_cell(
    rows: Sequence[dict[str, Any]],
    value: Callable[[dict[str, Any]], float],
    kind: str = "pct",
    weight: Callable[[dict[str, Any]], float] | None = None,
) -> Cell:
    """The mean of ``value`` over ``rows`` (weighted) with its interval, computed by the
    scorer's one interval code (:meth:`maptab.score.metrics.Columns.ci`)."""
    if not rows:
        return Cell(None, kind=kind)
    derived = [
        {"map_id": r["map_id"], "v": value(r), "w": 1.0 if weight is None else weight(r)}
        for r in rows
    ]
    c = Columns(derived)
    ci = c.ci(c.every, c["v"], None if weight is None else c["w"])
    if math.isnan(ci["mean"]):
        return Cell(None, kind=kind)
    return Cell(ci["mean"], ci["lo"], ci["hi"], kind)


def metric_cell(metric: Metric, rows: Sequence[dict[str, Any]]) -> Cell:
    """The cell of a declared metric over ``rows`` (:func:`maptab.score.metrics.interval`)."""
    value, lo, hi = interval(metric, rows)
    if value is None:
        return Cell(None, kind=metric.fmt)
    return Cell(value, lo, hi, metric.fmt)


def paired_cells(
    run_rows: Sequence[Mapping[str, Any]],
    base_rows: Sequence[Mapping[str, Any]],
    value: str,
    keep: Callable[[Mapping[str, Any]], bool] | None = None,
) -> tuple[Cell, Cell, Cell, Cell] | None:
    """``(n, Δ, run mean, base mean)`` of the score field ``value`` over the samples both
    row sets scored (and ``keep`` accepts), Δ in percentage points with its paired,
    map-clustered bootstrap interval (:func:`maptab.score.scorer.compare_runs`); ``None``
    when no sample is shared."""
    cmp = compare_runs(run_rows, base_rows, value, keep)  # type: ignore[arg-type]
    if not cmp["n"]:
        return None
    return (
        Cell(cmp["n"], kind="int"),
        Cell(cmp["diff"], cmp["lo"], cmp["hi"], "pp"),
        Cell(cmp["mean_a"], kind="pct"),
        Cell(cmp["mean_b"], kind="pct"),
    )


def by(rows: Sequence[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    """``rows`` grouped by the value of ``key`` (rows without it left out)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r.get(key) is not None:
            out[str(r[key])].append(r)
    return out


def scenarios_of(runs: Sequence[Run], kind: str) -> list[str]:
    """The scenarios of the score rows of task kind ``kind`` in any of ``runs``, sorted."""
    return sorted({str(r["scenario"]) for run in runs for r in run.rows(kind)})


def category_title(category: str) -> str:
    return CATEGORY_TITLES.get(category, category)


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
