"""``maptab report``: compare scored runs in tables, figures and an HTML browser."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from maptab.cli.app import VerifyOption, app, console, err_console, fail, warn
from maptab.cli.progress import track
from maptab.errors import MaptabError

if TYPE_CHECKING:
    from maptab.report.tables import ReportTable


def print_notes(table: ReportTable) -> None:
    """The leaderboard's notes (what ReasonMap's n counts, why baselines score 100% …)."""
    from maptab.report.tables import leaderboard_notes

    for note in leaderboard_notes(table):
        console.print(f"[dim]note:[/] {escape(note)}", highlight=False)


@app.command("report")
def report_cmd(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(help="Scored run folders; the first is the baseline of paired differences."),
    ],
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("report"),
    overlays: Annotated[
        int,
        typer.Option(
            help="Route pictures per run and RP category: this many right and this many wrong."
        ),
    ] = 3,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    samples: Annotated[
        int,
        typer.Option(
            help="Samples listed per run in index.html (a stratified selection beyond it; "
            "0 lists all). Tables and figures always use every sample."
        ),
    ] = 3000,
    verify: VerifyOption = True,
) -> None:
    """Write leaderboard tables (Markdown, CSV, LaTeX), figures and OUT/index.html."""
    from maptab.report import transposed_table, write_report

    seen: dict[Path, Path] = {}
    for run_dir in run_dirs:  # the same run twice only repeats a row of every table
        key = run_dir.resolve()
        if key in seen:
            warn(f"{run_dir} is the same run as {seen[key]}; it is reported twice")
        seen.setdefault(key, run_dir)
    if progress:  # tables and figures come before the first bar (a minute at paper size)
        err_console.print(
            f"writing the report to {escape(str(out))}: tables and figures, then route "
            "pictures and index.html …",
            highlight=False,
        )
    try:
        files = write_report(
            run_dirs,
            out,
            overlays_per_group=overlays,
            progress=track if progress else None,
            samples_per_run=samples or None,
            verify=verify,
        )

    except (MaptabError, OSError) as exc:
        fail(str(exc))
    console.print(transposed_table(files.leaderboard))
    print_notes(files.leaderboard)
    for problem in files.problems:
        console.print(f"[yellow]warning:[/] {problem}", highlight=False)
    console.print(
        f"wrote {len(files.tables)} table files, {len(files.plots)} figures, "
        f"{files.images} route pictures; open {files.index}",
        highlight=False,
    )
