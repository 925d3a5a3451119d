"""``maptab build``: make a benchmark dataset (synthetic MapTab-style, or ReasonMap from real
topologies)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from maptab.cli.app import (
    BranchSplitsOption,
    StationAliasesOption,
    app,
    console,
    fail,
    interruptible,
    warn,
)
from maptab.cli.progress import track
from maptab.errors import MaptabError
from maptab.io.dataset import BuildLock, MapImager


def _renderer(render: bool) -> MapImager | None:
    """The map imager the builders draw with, or ``None`` under ``--no-render``."""
    if not render:
        return None
    from maptab.render.images import DatasetImager

    return DatasetImager()


def _style_name(name: str | None) -> str | None:
    """``--map-style`` checked and canonical even under ``--no-render`` (it is recorded)."""
    if name is None:
        return None
    from maptab.render.style import get_style

    return get_style(name).name


@app.command()
def build(
    preset: Annotated[
        str,
        typer.Option(help="Dataset size: 'mini' (a few maps, seconds) or 'paper' (full scale)."),
    ] = "mini",
    seed: Annotated[
        int, typer.Option(help="Seed; the same seed and options give identical files.")
    ] = 0,
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("out/dataset"),
    render: Annotated[bool, typer.Option(help="Render a map image for every map.")] = True,
    report_totals: Annotated[
        bool, typer.Option(help="Ask criteria queries to also report the route's four totals.")
    ] = False,
    cost_model: Annotated[
        str, typer.Option(help="Cost model for gold labels: 'additive' (default) or 'mean'.")
    ] = "additive",
    from_reasonmap: Annotated[
        Path | None,
        typer.Option(help="Build a ReasonMap-style dataset from a metadata folder instead."),
    ] = None,
    images: Annotated[
        Path | None, typer.Option(help="With --from-reasonmap: folder of real map images.")
    ] = None,
    branch_splits: BranchSplitsOption = None,
    station_aliases: StationAliasesOption = None,
    per_map: Annotated[
        int, typer.Option(help="With --from-reasonmap: station pairs per map.")
    ] = 40,
    map_style: Annotated[
        str | None,
        typer.Option(
            help="Map image style: clean, realistic or hard (default: the preset's; "
            "paper uses realistic)."
        ),
    ] = None,
    from_maptab: Annotated[
        Path | None,
        typer.Option(help="Import a MapTab release folder (images/, tabulars/, data/) instead."),
    ] = None,
    from_tables: Annotated[
        Path | None,
        typer.Option(
            help="Build over your own maps: a folder with one sub-folder per map holding "
            "Edge_tab.csv, Vertex_tab.csv (optional Mix_tab.csv, image.png)."
        ),
    ] = None,
    pairs_per_map: Annotated[
        int, typer.Option(min=1, help="With --from-tables: OD pairs per map on average.")
    ] = 8,
    maps: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Maps per scenario (metro and travel each), the preset's OD pairs per map "
            "kept; default: the preset's.",
        ),
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            min=0,
            help="Worker processes (or Ray tasks) building maps (1: this process only; 0: "
            "one per CPU, at most 8, above 2,000 OD pairs). The files do not depend on it.",
        ),
    ] = 0,
    executor: Annotated[
        str,
        typer.Option(
            help="Where workers run: 'local' processes, or 'ray' tasks (pip install "
            "'maptab\\[ray]'; joins the cluster of RAY_ADDRESS when set)."
        ),
    ] = "local",
    shard: Annotated[
        str | None,
        typer.Option(
            help="Write shard i/N only: maps i, i+N, ... (after the global allocation); "
            "combine the N shards with maptab merge."
        ),
    ] = None,
) -> None:
    """Build a benchmark: maps, tables, images, RP and QA queries with exact gold labels.

    Examples:
      maptab build --preset mini --out out/mini
      maptab build --preset paper --seed 1 --out out/paper
      maptab build --from-reasonmap STATIONS_DIR --images MAPS_DIR --out out/reasonmap
      maptab build --from-maptab RELEASE_DIR --out out/imported
      maptab build --from-tables MY_MAPS --out out/mine
      maptab build --from-tables MY_MAPS --executor ray --jobs 8 --out out/mine
      maptab build --preset paper --maps 100 --jobs 8 --out out/p200
      maptab build --preset paper --shard 0/4 --out out/shard0   (then maptab merge)
    """
    try:
        with interruptible(), BuildLock(out):  # from the start: a second build is refused
            sources = [from_maptab, from_reasonmap, from_tables]
            if sum(s is not None for s in sources) > 1:
                fail("choose one of --from-maptab, --from-reasonmap, --from-tables")
            if any(s is not None for s in sources) and (maps or shard):
                fail("--maps and --shard apply to synthetic builds (no --from-*)")
            from maptab.executors import executor_factory, local_executor

            executors = executor_factory(executor)
            imported = from_maptab is not None or from_reasonmap is not None
            if imported and executors is not local_executor:
                fail(
                    "--executor applies to synthetic and --from-tables builds; drop it with "
                    "--from-maptab or --from-reasonmap"
                )
            if from_tables is not None:
                from maptab.generate.owntables import build_from_tables

                manifest = build_from_tables(
                    from_tables,
                    out,
                    seed=seed,
                    pairs_per_map=pairs_per_map,
                    renderer=_renderer(render),
                    map_style=_style_name(map_style) or "clean",
                    report_totals=report_totals,
                    cost_model=cost_model,
                    progress=track,
                    warn=warn,
                    workers=jobs or None,
                    executors=executors,
                )
            elif from_maptab is not None:
                from maptab.generate.release import import_maptab_release

                manifest = import_maptab_release(from_maptab, out, warn=warn)
            elif from_reasonmap is not None:
                from maptab.generate.from_reasonmap import build_reasonmap_dataset

                manifest = build_reasonmap_dataset(
                    from_reasonmap,
                    out,
                    images_dir=images,
                    branch_splits=branch_splits,
                    station_aliases=station_aliases,
                    seed=seed,
                    per_map=per_map,
                    progress=track,
                    renderer=_renderer(render),
                    warn=warn,
                )
            else:
                from maptab.generate.pipeline import (
                    PRESETS,
                    build_benchmark,
                    parse_shard,
                    scaled_preset,
                )

                spec = PRESETS.get(preset)
                if spec is None:
                    fail(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
                manifest = build_benchmark(
                    out,
                    preset=spec if maps is None else scaled_preset(spec, maps),
                    seed=seed,
                    workers=jobs or None,
                    executors=executors,
                    shard=parse_shard(shard) if shard is not None else None,
                    renderer=_renderer(render),
                    report_totals=report_totals,
                    cost_model=cost_model,
                    progress=track,
                    map_style=_style_name(map_style),
                )
    except (MaptabError, OSError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail(f"build interrupted; {out} is incomplete", code=130)
    counts = manifest["counts"]
    console.print(
        f"[green]built[/] {out}: {counts['maps']} maps, {counts.get('rp', 0)} RP, "
        f"{counts.get('qa', 0)} QA, {counts.get('reasonmap', 0)} ReasonMap questions"
    )
