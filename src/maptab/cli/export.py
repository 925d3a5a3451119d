"""``maptab export``: a dataset in the MapTab release layout or as a Hugging Face folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from maptab.cli.app import app, console, fail
from maptab.errors import MaptabError

FORMATS = ("maptab", "hf")


@app.command()
def export(
    dataset: Annotated[Path, typer.Argument(help="A dataset folder made by `maptab build`.")],
    out: Annotated[Path, typer.Option(help="Output folder.")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="'maptab': the MapTab release layout (images/, tabulars/, data/training_set|test_set/); "
            "'hf': Parquet with embedded images, loadable with datasets.load_dataset(OUT, 'rp').",
        ),
    ] = "maptab",
) -> None:
    """Export a dataset to another layout (the reverse of `maptab build --from-maptab`)."""
    if fmt not in FORMATS:
        fail(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if out.resolve().is_relative_to(dataset.resolve()):
        fail(f"--out {out} is inside the dataset {dataset}; choose a folder outside it")
    try:
        if fmt == "maptab":
            from maptab.generate.release import export_maptab_release

            path = export_maptab_release(dataset, out)
        else:
            from maptab.generate.hf import export_hf

            path = export_hf(dataset, out)
    except (MaptabError, OSError) as exc:
        fail(str(exc))
    console.print(f"[green]exported[/] {dataset} -> {path} ({fmt})")
