"""``maptab legibility``: how many station labels OCR finds on a map image."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from maptab._progress import Ticker
from maptab.cli.app import app, console, fail
from maptab.cli.progress import track
from maptab.errors import MaptabError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


class LegibilityInputError(MaptabError):
    """An image or station list that ``maptab legibility`` cannot use."""


def _inputs(paths: list[Path], map_id: str | None):
    """(image path, network) from ``IMAGE STATIONS…`` or a dataset / map folder alone."""
    from maptab.cli.render import load_map

    if paths and paths[0].suffix.lower() in IMAGE_SUFFIXES:
        image, rest = paths[0], paths[1:]
        if not rest:
            raise LegibilityInputError(f"{image}: give the map's stations after the image")
        return image, load_map(rest, map_id)
    if len(paths) == 1 and paths[0].is_dir():
        network = load_map(paths, map_id)
        folder = paths[0] if (paths[0] / "network.json").is_file() else paths[0] / "maps"
        folder = folder / network.map_id if folder.name == "maps" else folder
        return folder / "image.png", network
    raise LegibilityInputError(
        "give IMAGE STATIONS (a map JSON, ReasonMap metadata, or EDGE_TAB VERTEX_TAB) "
        "or a dataset / map folder"
    )


class _CountingEngine:
    """The OCR engine, counting each tile it has read on ``ticker`` (a tile of a large map
    takes half a minute: the bar is the only sign of life)."""

    def __init__(self, ticker: Ticker) -> None:
        self.ticker = ticker

    def __call__(self, tile: Any, **options: Any) -> Any:
        from maptab.render import ocr

        result = ocr.rapid_engine()(tile, **options)
        self.ticker.tick()
        return result


@app.command()
def legibility(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="IMAGE then its stations (map JSON, ReasonMap metadata or EDGE_TAB "
            "VERTEX_TAB), or a dataset / map folder (uses its image.png)."
        ),
    ],
    map_id: Annotated[
        str | None, typer.Option("--map", help="Map id inside a dataset folder.")
    ] = None,
    threshold: Annotated[float, typer.Option(help="Fuzzy match threshold (difflib ratio).")] = 0.8,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    show_missing: Annotated[
        int, typer.Option("--missing", help="List up to this many stations not found.")
    ] = 10,
    progress: Annotated[
        bool, typer.Option(help="Show a progress bar (on stderr) while the image is read.")
    ] = True,
) -> None:
    """OCR a map image and report station-label recall, false detections, stray-text share
    and location error."""
    from PIL import Image, UnidentifiedImageError

    from maptab.render import place_map
    from maptab.render.ocr import (
        MAX_PIXELS,
        measure,
        read_image,
        readable_share,
        station_labels,
        tile_count,
    )

    if not 0 < threshold <= 1:
        fail(f"--threshold must be in (0, 1], got {threshold}")
    try:
        image_path, network = _inputs(paths, map_id)
        if not image_path.is_file():
            raise LegibilityInputError(f"{image_path}: no such image")
        Image.MAX_IMAGE_PIXELS = None  # real maps reach 140 MP; read_image shrinks to MAX_PIXELS
        unreadable = f"{image_path}: not a readable image"
        try:
            source = Image.open(image_path)
        except (UnidentifiedImageError, OSError) as exc:
            raise LegibilityInputError(f"{unreadable} ({exc})") from None
        # one step for loading and placing, then one per OCR tile (minutes on a big map)
        steps = 1 + tile_count(*source.size)
        with source, Ticker(track if progress else None, "reading the map", steps) as ticker:
            try:
                source.load()
            except (UnidentifiedImageError, OSError) as exc:
                raise LegibilityInputError(f"{unreadable} ({exc})") from None
            image = source.copy()
            placed = None
            if network.positions and all(s in network.positions for s in network.vertices):
                candidate = place_map(network)  # deterministic: the geometry the image came from
                if (candidate.width, candidate.height) == image.size:
                    placed = candidate
            ticker.tick()
            detections = read_image(image, engine=_CountingEngine(ticker) if progress else None)
        report = measure(detections, station_labels(network, placed), threshold=threshold)
    except (ValueError, OSError) as exc:
        fail(str(exc))
    readable = readable_share(network)
    data = {
        "image": str(image_path),
        "size": list(image.size),
        "readable_share": round(readable, 4),
        **report.to_dict(),
    }
    if as_json:
        print(json.dumps(data, ensure_ascii=False))
        return
    noun = "stations" if network.scenario == "metromap" else "spots"
    console.print(
        f"{image_path} ({image.width}×{image.height} px, read at ≤{MAX_PIXELS / 1e6:.0f} MP): "
        f"recall {report.recall:.1%} ({report.found}/{report.stations} {noun}), "
        f"{report.false_detections} of {report.detections} detections match no {noun[:-1]}; "
        f"stray text {report.stray_share:.1%} ({report.stray_detections} detections are part "
        f"of no {noun[:-1]} name)",
        highlight=False,
    )
    if readable < 0.5:
        console.print(
            f"[yellow]note:[/] only {readable:.0%} of the names are in scripts the OCR models "
            "read (Latin, Chinese): recall on this map says little",
            highlight=False,
        )
    if placed is not None:
        console.print(
            f"location error: p50 {report.location_error(0.5)} px, "
            f"p90 {report.location_error(0.9)} px",
            highlight=False,
        )
    if report.missing and show_missing > 0:
        shown = ", ".join(network.label(s) for s in report.missing[:show_missing])
        more = len(report.missing) - show_missing
        console.print(f"not found: {shown}" + (f", … {more} more" if more > 0 else ""))
