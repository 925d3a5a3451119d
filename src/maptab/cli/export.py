"""``maptab export``: a dataset in the MapTab release layout, as a Hugging Face folder, as
Parquet splits for the RL trainers TRL and verl (``docs/guides/train-with-rewards.md``), or as an lmms-eval
task folder (``docs/guides/evaluation-harnesses.md``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from maptab.cli.app import app, console, fail
from maptab.errors import MaptabError

FORMATS = ("maptab", "hf", "trl", "verl", "lmms-eval")


@app.command()
def export(
    dataset: Annotated[Path, typer.Argument(help="A dataset folder made by `maptab build`.")],
    out: Annotated[Path, typer.Option(help="Output folder.")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="'maptab': the MapTab release layout (images/, tabulars/, data/training_set|test_set/); "
            "'hf': Parquet configs rp, qa, reasonmap and maps (each map image once), loadable with datasets.load_dataset(OUT, 'rp'); "
            "'trl' / 'verl': train/test Parquet in the columns those RL trainers read, each row "
            "with its self-contained reward reference (docs/guides/train-with-rewards.md); 'lmms-eval': a task "
            "folder for lmms_eval --include_path OUT (docs/guides/evaluation-harnesses.md).",
        ),
    ] = "maptab",
    images: Annotated[
        bool,
        typer.Option(
            "--images/--no-images",
            help="trl/verl: embed the map images (--no-images: text only, and samples that "
            "show only the map are left out).",
        ),
    ] = True,
    table_format: Annotated[
        str,
        typer.Option(
            "--table-format", help="trl/verl/lmms-eval: tables in the prompt as csv or json."
        ),
    ] = "csv",
    inline_maps: Annotated[
        bool,
        typer.Option(
            "--inline-maps",
            help="trl/verl: put the map's tables in every row's reward reference (self-contained "
            "rows, larger) instead of naming OUT/maps/<map_id>.json.",
        ),
    ] = False,
) -> None:
    """Export a dataset to another layout (the reverse of `maptab build --from-maptab`)."""
    if fmt not in FORMATS:
        fail(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if out.resolve().is_relative_to(dataset.resolve()):
        fail(f"--out {out} is inside the dataset {dataset}; choose a folder outside it")
    try:
        if fmt in ("maptab", "lmms-eval"):  # the hf and trl/verl writers check as they go
            from maptab.io.dataset import Dataset
            from maptab.score.integrity import export_problem

            problem = export_problem(Dataset(dataset))
            if problem is not None:
                fail(f"{problem}; nothing exported")
        if fmt == "maptab":
            from maptab.generate.release import export_maptab_release

            path = export_maptab_release(dataset, out)
        elif fmt == "hf":
            from maptab.generate.hf import export_hf

            path = export_hf(dataset, out)
        elif fmt == "lmms-eval":
            from maptab.integrations.lmms import export_lmms

            if table_format not in ("csv", "json"):
                fail(f"unknown table format {table_format!r}; choose csv or json")
            path = export_lmms(dataset, out, table_format=table_format)  # type: ignore[arg-type]
        else:
            from maptab.rewards.export import export_rl

            if table_format not in ("csv", "json"):
                fail(f"unknown table format {table_format!r}; choose csv or json")
            path = export_rl(
                dataset,
                out,
                fmt,
                images=images,
                table_format=table_format,  # type: ignore[arg-type]
                inline_maps=inline_maps,
            )
    except (MaptabError, OSError) as exc:
        fail(str(exc))
    console.print(f"[green]exported[/] {dataset} -> {path} ({fmt})")
