"""Report stage: compare scored runs in tables, figures and a static HTML browser (SPEC 13).

Data flows one way: run folders (``scores.jsonl`` from ``maptab score``) →
:mod:`~maptab.report.loader` → :mod:`~maptab.report.tables` (leaderboards with 95%
intervals and paired differences; Markdown, CSV, LaTeX) → :mod:`~maptab.report.plots`
(PNG figures) → :mod:`~maptab.report.overlays` (routes drawn on maps) →
:mod:`~maptab.report.tools_view` (tool-use tables and conversation pages, for runs with
tools) → :mod:`~maptab.report.html` (``index.html``). :func:`write_report` does all of it.

Output folder layout::

    OUT/index.html                  the browser (open it from disk; no network needed)
    OUT/tables/<key>.md|.csv|.tex   every table (keys in maptab.report.tables)
    OUT/tables/all.md               all Markdown tables in one file
    OUT/plots/*.png                 figures
    OUT/images/*.png                gold / predicted route pictures
    OUT/transcripts/*.html          tool-use conversations, turn by turn (runs with tools)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich import box
from rich.markup import escape
from rich.table import Table

from maptab._progress import Progress
from maptab.report.loader import QueryRecords, load_runs
from maptab.report.tables import ReportTable, to_csv, to_latex, to_markdown
from maptab.report.views import build_tables, leaderboard_table

__all__ = ["ReportFiles", "leaderboard", "leaderboard_rows", "transposed_table", "write_report"]


@dataclass
class ReportFiles:
    """What :func:`write_report` wrote."""

    index: Path
    leaderboard: ReportTable
    tables: list[Path] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    images: int = 0
    problems: list[str] = field(default_factory=list)


def leaderboard_rows(run_dirs: Sequence[str | Path]) -> ReportTable:
    """The headline comparison of the runs in ``run_dirs`` as a :class:`ReportTable`."""
    return leaderboard_table(load_runs(list(run_dirs)))


def transposed_table(table: ReportTable) -> Table:
    """A :class:`ReportTable` turned on its side for a terminal: one row per metric, one
    column per run (the first column), the interval under each value."""
    runs = [row[0].text() for row in table.rows]
    out = Table(
        title=table.title,
        caption=table.note or None,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    out.add_column("metric", justify="left", no_wrap=True)
    for name in runs:
        out.add_column(escape(name), justify="right", no_wrap=True)
    for i, col in enumerate(table.columns[1:], 1):
        cells = []
        for row in table.rows:
            c = row[i]
            band = c.interval() if c.value is not None else ""
            cells.append(f"{c.text()}\n[dim]{escape(band)}[/dim]" if band else c.text())
        out.add_row(escape(col.label), *cells)
    return out


def leaderboard(run_dirs: Sequence[str | Path]) -> Table:
    """The headline comparison as a rich table, ready to print (``maptab demo`` does)."""
    return transposed_table(leaderboard_rows(run_dirs))


def write_report(
    run_dirs: Sequence[str | Path],
    out_dir: str | Path,
    *,
    overlays_per_group: int = 3,
    progress: Progress | None = None,
    samples_per_run: int | None = 3_000,
    verify: bool = True,
) -> ReportFiles:
    """Write the full report of ``run_dirs`` (the first is the baseline of the paired
    differences) into ``out_dir``; see the module docstring for the layout. The HTML browser
    lists at most ``samples_per_run`` samples of each run (``None``: all). ``verify`` checks
    the dataset files read against their manifest (``--no-verify`` turns it off).
    ``progress`` shows the figures, the drawing of route pictures and the browser's map
    pictures (:mod:`maptab._progress`).

    Raises :class:`ReportError` (one line, naming the file) on an unreadable run folder.
    """
    from maptab.report.html import listed_ids, shown_rows, write_browser
    from maptab.report.overlays import render_overlays, select_samples
    from maptab.report.plots import write_plots
    from maptab.report.tools_view import tool_tables, write_transcripts

    out = Path(out_dir)
    runs = load_runs(list(run_dirs), verify=verify)
    tables = build_tables(runs) + tool_tables(runs)
    table_dir = out / "tables"
    table_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for t in tables:
        for suffix, render in ((".md", to_markdown), (".csv", to_csv), (".tex", to_latex)):
            path = table_dir / f"{t.key}{suffix}"
            path.write_text(render(t), encoding="utf-8", newline="\n")
            written.append(path)
    all_md = table_dir / "all.md"
    all_md.write_text("\n".join(to_markdown(t) for t in tables), encoding="utf-8", newline="\n")
    written.append(all_md)
    plots = write_plots(runs, out / "plots", progress=progress)
    # the dataset records of the pictured and the listed samples, read in one pass over
    # each dataset: the listing is announced as it will be when every picture is drawn
    # (a map that fails changes it, and the ids it adds cost one more pass); the selection
    # and the listing are handed on, not made again (at paper size 0.9 s a run)
    queries = QueryRecords()
    selected = [select_samples(run, overlays_per_group) for run in runs]
    listings: list[tuple[set[str], list[dict[str, Any]]]] = []
    for run, rows in zip(runs, selected, strict=True):
        pictured = {str(row["id"]) for row in rows}
        listings.append((pictured, shown_rows(run, samples_per_run, pictured)))
        queries.expect(run, pictured | listed_ids(listings[-1][1]))
    overlays = render_overlays(
        runs,
        out,
        per_group=overlays_per_group,
        progress=progress,
        queries=queries,
        selected=selected,
    )
    conversations = write_transcripts(runs, out, per_group=overlays_per_group)
    index = write_browser(
        runs,
        tables,
        plots,
        out,
        overlays,
        samples_per_run=samples_per_run,
        queries=queries,
        listings=listings,
        progress=progress,
        conversations=conversations,
    )
    n_images = sum(len(v) for v in overlays.images.values())
    return ReportFiles(index, tables[0], written, plots, n_images, overlays.problems)
