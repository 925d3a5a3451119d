"""``maptab demo``: the whole pipeline on the embedded ``mini`` benchmark, offline."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from maptab.cli.app import app, console, fail
from maptab.cli.progress import track
from maptab.cli.report import print_notes
from maptab.errors import MaptabError

DEMO_MODELS = ("oracle", "shortest", "random")


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Folder for the dataset, runs and report.")] = Path(
        "demo"
    ),
    seed: Annotated[int, typer.Option(help="Seed of the mini benchmark.")] = 0,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Build the mini benchmark, run the baselines, score them, report, print the leaderboard.

    Needs no network and no model. The folder is rebuilt from scratch each time (its dataset/, runs/ and report/ are replaced).
    """
    from maptab.generate.pipeline import build_benchmark
    from maptab.render.images import DatasetImager
    from maptab.report import leaderboard_rows, transposed_table, write_report
    from maptab.run import make_provider, run
    from maptab.score.scorer import score_run
    from maptab.tasks import all_kinds

    bar = track if progress else None
    dataset, runs, report = out / "dataset", out / "runs", out / "report"
    try:
        for folder in (dataset, runs, report):
            if folder.exists():
                shutil.rmtree(folder)
        console.rule("[bold]1. build the mini benchmark")
        manifest = build_benchmark(
            dataset, preset="mini", seed=seed, renderer=DatasetImager(), progress=bar
        )
        counts = manifest["counts"]
        samples = ", ".join(
            f"{counts[k.name]} {k.title} queries" for k in all_kinds() if counts.get(k.name)
        )
        console.print(f"{counts['maps']} maps, {samples} -> {dataset}")
        run_dirs = []
        for model in DEMO_MODELS:
            console.rule(f"[bold]2. run {model}")
            run_dir = runs / model
            summary = run(
                dataset, make_provider(model), run_dir, concurrency=8, spec=model, progress=bar
            )
            console.print(f"{summary.completed} answers, {summary.errors} errors -> {run_dir}")
            score_run(run_dir, progress=False)  # a second or less: no bar
            run_dirs.append(run_dir)
        console.rule("[bold]3. report: tables, figures, route pictures")
        files = write_report(run_dirs, report, progress=bar)
        console.print(f"report: {files.index}")
    except (MaptabError, OSError) as exc:
        fail(str(exc))
    console.rule("[bold]leaderboard")
    table = leaderboard_rows(run_dirs)
    console.print(transposed_table(table))
    print_notes(table)
