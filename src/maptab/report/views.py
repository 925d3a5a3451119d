"""How each task kind is shown (SPEC 13): report sections, figures and the ``maptab score``
printout, declared apart from the kind itself.

A :class:`KindView` names a kind's leaderboard columns, its report tables, its paired
comparisons, its browser text, its heatmap panels and figures, whether the browser draws its
answered routes on the map, and the tables ``maptab score`` prints. A kind with no view of
its own gets :func:`generic_view`, built from its :class:`~maptab.score.metrics.Metric`
declarations alone: a leaderboard column per metric, one table of every metric per run, a
paired comparison per plain share, and a printout of its ``summary.json`` block.

Where views come from: the entry-point group ``maptab.views`` (``pyproject.toml``:
``[project.entry-points."maptab.views"] mykind = "mypkg.myview:VIEW"``, the entry point's
name being the kind's name; maptab's own kinds are listed there too), and
:func:`register_view` at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from maptab.report.loader import Run
from maptab.report.tables import (
    Cell,
    Column,
    ReportTable,
    leaderboard_notes,
    metric_cell,
    paired_cells,
)
from maptab.score.metrics import Metric, metric_text
from maptab.tasks.base import TaskError, TaskKind, all_kinds, load_entry_points
from maptab.tasks.base import get as get_kind

__all__ = [
    "ENTRY_POINT_GROUP",
    "KindView",
    "build_tables",
    "generic_view",
    "leaderboard_table",
    "metric",
    "paired_table",
    "register_view",
    "view_of",
]

ENTRY_POINT_GROUP = "maptab.views"

Paired = tuple[Any, str, str, Callable[[dict[str, Any]], bool]]
Printout = tuple[str, Sequence[str], int, list[Sequence[str]]]
Heatmap = tuple[str, list[dict[str, Any]], str, str, str]


def _empty(*_: Any) -> list[Any]:
    return []


@dataclass(frozen=True, slots=True)
class KindView:
    """One kind's presentation (module docstring).

    ``leaderboard(rows)``: its leaderboard columns (``rows`` is ``None``) or one run's cells;
    ``tables(runs)``: its report tables; ``paired(run)``: ``(group, label, value field,
    row filter)`` per paired comparison (entries sort by group, then kind);
    ``printout(block)``: ``(title, columns, text columns, rows)`` tables that ``maptab score``
    prints from the kind's ``summary.json`` block; ``describe(row, record, response)``: the
    sample browser's text (``None``: the row's fields); ``heatmaps(run)``: difficulty heatmap
    panels ``(title, rows, y field, x field, value field)``; ``figures``: ``(position,
    function(runs, path), file name)``; ``route_overlays``: the browser draws the answered
    routes of this kind on the map.
    """

    leaderboard: Callable[[Sequence[dict[str, Any]] | None], list[Any]]
    tables: Callable[[Sequence[Run]], list[ReportTable]] = _empty
    paired: Callable[[Run], list[Paired]] = _empty
    printout: Callable[[dict[str, Any]], list[Printout]] = _empty
    describe: Callable[[dict[str, Any], Any, str], dict[str, Any]] | None = None
    heatmaps: Callable[[Run], list[Heatmap]] = _empty
    figures: tuple[tuple[int, Callable[..., Any], str], ...] = ()
    route_overlays: bool = False


_VIEWS: dict[str, KindView] = {}
_loaded = False


def register_view(kind: str, view: KindView) -> KindView:
    """Show the kind called ``kind`` with ``view`` (replacing any view it had); returns it."""
    if not isinstance(view, KindView):
        raise TaskError(f"a view registration must be a KindView, not {type(view).__name__}")
    _VIEWS[kind] = view
    return view


def _load() -> None:
    """Load the views named by the ``maptab.views`` entry points (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name, view in load_entry_points(ENTRY_POINT_GROUP, KindView, "view"):
        _VIEWS.setdefault(name, view)


def view_of(kind: TaskKind) -> KindView:
    """``kind``'s registered view, else :func:`generic_view` of it."""
    _load()
    view = _VIEWS.get(kind.name)
    return view if view is not None else generic_view(kind)


def metric(kind: str, name: str) -> Metric:
    """The metric called ``name`` among the declarations of the kind called ``kind``."""
    for m in get_kind(kind).metrics:
        if m.name == name:
            return m  # type: ignore[no-any-return]
    raise TaskError(f"task kind {kind!r} declares no metric {name!r}")


def generic_view(kind: TaskKind) -> KindView:
    """A view built from ``kind``'s metric declarations (module docstring)."""
    metrics: tuple[Metric, ...] = tuple(kind.metrics)
    name, title = kind.name, kind.title

    def leaderboard(rows: Sequence[dict[str, Any]] | None) -> list[Any]:
        if rows is None:
            return [Column("n", title)] + [Column(m.header, title) for m in metrics]
        return [Cell(len(rows), kind="int")] + [metric_cell(m, rows) for m in metrics]

    def tables(runs: Sequence[Run]) -> list[ReportTable]:
        if not metrics or not any(run.rows(name) for run in runs):
            return []
        cols = [Column("Model"), Column("n")] + [Column(m.header) for m in metrics]
        table = ReportTable(name, f"{title}: metrics", cols, note="95% CI in brackets.")
        for run in runs:
            rows = run.rows(name)
            table.rows.append([Cell(run.name), Cell(len(rows), kind="int")])
            table.rows[-1] += [metric_cell(m, rows) for m in metrics]
        return [table]

    def paired(run: Run) -> list[Paired]:
        shares = [
            m
            for m in metrics
            if m.aggregate == "mean" and m.fmt == "pct" and m.weight is None and m.where is None
        ]
        return [
            ((2, ""), f"{title} {m.header}", m.field, lambda r: r["kind"] == name) for m in shares
        ]

    def printout(block: dict[str, Any]) -> list[Printout]:
        rows = [(m.header, metric_text(m, block[m.name])) for m in metrics if m.name in block]
        return [(title, ("metric", "value"), 1, rows)] if rows else []

    return KindView(leaderboard, tables, paired, printout)


# --------------------------------------------------------------------------- assembly
def leaderboard_table(runs: Sequence[Run]) -> ReportTable:
    """The headline comparison, one row per run (module docstring): each task kind with
    rows in any run adds its ``leaderboard`` columns."""
    kinds = [(k.name, view_of(k)) for k in all_kinds() if any(run.rows(k.name) for run in runs)]
    cols = [Column("Model")]
    for _, view in kinds:
        cols += view.leaderboard(None)
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
    table.note = " ".join([table.note, *leaderboard_notes(table)])
    for run in runs:
        row = [Cell(run.name)]
        for name, view in kinds:
            row += view.leaderboard(run.rows(name))
        table.rows.append(row)
    return table


def _paired_metrics(run: Run) -> list[tuple[str, str, Callable[[dict[str, Any]], bool]]]:
    """(label, value field, row filter) for each paired comparison: every kind's
    ``paired`` entries, ordered by their group (a scenario) and then by kind."""
    entries = []
    for order, k in enumerate(all_kinds()):
        for n, (group, label, value, keep) in enumerate(view_of(k).paired(run)):
            entries.append(((group, order, n), (label, value, keep)))
    entries.sort(key=lambda e: e[0])
    return [e for _, e in entries]


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
            cells = paired_cells(run.scores, base.scores, value, keep)
            if cells is not None:
                table.rows.append([Cell(run.name), Cell(label), *cells])
    return table


def build_tables(runs: Sequence[Run]) -> list[ReportTable]:
    """Every table of the report: the leaderboard, each kind view's ``tables`` in registry
    order, the paired differences (module docstring). The report adds the tool-use tables
    when a run used tools (:func:`maptab.report.tools_view.tool_tables`)."""
    tables = [leaderboard_table(runs)]
    for k in all_kinds():
        tables += view_of(k).tables(runs)
    paired = paired_table(runs)
    if paired is not None and paired.rows:
        tables.append(paired)
    return tables
