"""``maptab merge``: combine the shards of one ``maptab build --shard i/N`` into one dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from maptab.cli.app import app, console, fail, interruptible
from maptab.errors import MaptabError
from maptab.io.dataset import BuildLock, merge_shards


@app.command()
def merge(
    shards: Annotated[list[Path], typer.Argument(help="The shard folders, all N of them.")],
    out: Annotated[Path, typer.Option(help="Output folder of the merged dataset.")] = Path(
        "out/dataset"
    ),
) -> None:
    """Merge build shards into one dataset with one manifest (SPEC 16): byte-identical to
    the same build made at once; every shard file is checked against its manifest.

    Examples:
      maptab merge out/shard0 out/shard1 out/shard2 out/shard3 --out out/paper
    """
    try:
        with interruptible(), BuildLock(out):
            manifest = merge_shards(shards, out)
    except (MaptabError, OSError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail(f"merge interrupted; {out} is unchanged", code=130)
    from maptab.tasks import all_kinds

    counts = manifest["counts"]
    rows = ", ".join(f"{counts[k.name]} {k.title}" for k in all_kinds() if counts.get(k.name))
    console.print(
        f"[green]merged[/] {len(shards)} shards into {out}: {counts['maps']} maps"
        + (f", {rows}" if rows else "")
    )
