"""``maptab report``: compare scored runs in tables, figures and an HTML browser."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from maptab.cli.app import VerifyOption, app, console, fail
from maptab.cli.progress import track
from maptab.errors import MaptabError


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
    for problem in files.problems:
        console.print(f"[yellow]warning:[/] {problem}", highlight=False)
    console.print(
        f"wrote {len(files.tables)} table files, {len(files.plots)} figures, "
        f"{files.images} route pictures; open {files.index}",
        highlight=False,
    )
