"""``maptab render``: draw one map (and optionally a route on it) as PNG or SVG."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from maptab._limits import MAX_RENDER_SCALE, read_json
from maptab.cli.app import app, console, fail
from maptab.core.network import Network
from maptab.errors import MaptabError
from maptab.io.dataset import Dataset


class RenderInputError(MaptabError):
    """A path, map id or route that ``maptab render`` cannot use."""


def _load_json_map(path: Path) -> Network:
    """A ``network.json`` (Network.to_dict) or a ReasonMap metadata file ({line: [stations]})."""
    from maptab.io.metadata import load_reasonmap

    data = read_json(path, error=RenderInputError)
    if isinstance(data, dict) and "vertices" in data:
        try:
            return Network.from_dict(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RenderInputError(f"{path}: not a valid network ({exc})") from None
    return load_reasonmap(path)


def load_map(paths: list[Path], map_id: str | None) -> Network:
    """The network named by the ``render`` arguments.

    * ``DIR`` — a dataset (``DIR/maps/<id>/network.json``; ``--map`` picks one unless there
      is only one) or a map folder holding ``network.json``;
    * ``FILE.json`` — a ``network.json`` or a ReasonMap metadata file;
    * ``EDGE_TAB VERTEX_TAB`` — a pair of MapTab tables (CSV or JSON, either order).
    """
    from maptab.core.tables import read_network

    if len(paths) == 2:
        edges, vertices = paths
        if "vertex" in edges.name.lower() and "vertex" not in vertices.name.lower():
            edges, vertices = vertices, edges
        for p in (edges, vertices):
            if not p.is_file():
                raise RenderInputError(f"{p}: no such table file")
        return read_network(edges, vertices, map_id=map_id or edges.stem.removesuffix("_edge"))
    if len(paths) != 1:
        raise RenderInputError("give a dataset folder, a map JSON file, or EDGE_TAB VERTEX_TAB")
    path = paths[0]
    if path.is_file():
        return _load_json_map(path)
    if not path.is_dir():
        raise RenderInputError(f"{path}: no such file or folder")
    if (path / "network.json").is_file():
        return _load_json_map(path / "network.json")
    dataset = Dataset(path, verify=False) if (path / "manifest.json").is_file() else None
    if dataset is not None:  # files read through the dataset stay inside it (SPEC 16)
        maps = sorted(dataset.maps)
    else:
        maps = sorted(p.name for p in (path / "maps").glob("*") if (p / "network.json").is_file())
    if not maps:
        raise RenderInputError(f"{path}: no maps/<id>/network.json in this folder")
    if map_id is None:
        if len(maps) > 1:
            shown = ", ".join(maps[:5]) + (", …" if len(maps) > 5 else "")
            raise RenderInputError(f"{path}: {len(maps)} maps; pick one with --map ({shown})")
        map_id = maps[0]
    if map_id not in maps:
        raise RenderInputError(f"{path}: no map {map_id!r} (maps/{map_id}/network.json)")
    if dataset is not None:
        return dataset.network(map_id)
    return _load_json_map(path / "maps" / map_id / "network.json")


def parse_route(network: Network, text: str) -> list[str]:
    """Station keys of a route written ``A-B-C`` (or with ``→``/``>``).

    Station names may contain hyphens, so pieces are joined greedily: at each position the
    longest run of ``-``-separated pieces that names a station (table name or label) wins.
    A run of ``m`` pieces resolves only to a key with at least ``m - 1`` hyphens or
    underscores (:func:`maptab.core.network.table_name`), so runs are tried up to the longest
    such key: linear in the route's length.
    """
    text = text.replace("→", "-").replace(">", "-")
    pieces = [p.strip() for p in text.split("-")]
    widest = 1 + max((k.count("-") + k.count("_") for k in network.vertices), default=0)
    out: list[str] = []
    i = 0
    while i < len(pieces):
        for j in range(min(len(pieces), i + widest), i, -1):
            key = network.resolve("-".join(pieces[i:j]))
            if key is not None:
                out.append(key)
                i = j
                break
        else:
            raise RenderInputError(f"route: unknown station {pieces[i]!r} in {text!r}")
    return out


def route_transfers(network: Network, stops: list[str], text: str) -> list[str]:
    """The ``--transfers`` stations (comma-separated), each checked to be a station of the
    route ``stops``."""
    out = []
    for name in (t.strip() for t in text.split(",")):
        if not name:
            continue
        key = network.resolve(name)
        if key is None:
            raise RenderInputError(f"--transfers: unknown station {name!r}")
        if key not in stops:
            raise RenderInputError(f"--transfers: {name!r} is not a station of the route")
        out.append(key)
    return out


@app.command()
def render(
    paths: Annotated[
        list[Path],
        typer.Argument(help="A dataset folder, a map JSON file, or EDGE_TAB VERTEX_TAB."),
    ],
    map_id: Annotated[
        str | None, typer.Option("--map", help="Map id inside a dataset folder.")
    ] = None,
    route: Annotated[
        str | None, typer.Option(help='Route to draw on the map, e.g. "A-B-C".')
    ] = None,
    kind: Annotated[str, typer.Option(help="Route style: gold or pred.")] = "gold",
    transfers: Annotated[
        str | None, typer.Option(help="Comma-separated stations where the route changes line.")
    ] = None,
    scale: Annotated[float, typer.Option(help="Size factor (1.0 = paper-like size).")] = 1.0,
    style: Annotated[
        str | None,
        typer.Option(help="clean, realistic or hard (default: the map's own, else clean)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Output file (.png or .svg); default <map id>.png.")
    ] = None,
) -> None:
    """Render a metro or scenic map, optionally with a route drawn on it."""
    from maptab.render import (
        check_legibility,
        draw_route,
        layout_network,
        layout_quality,
        render_map,
        save_map,
    )

    try:
        if not 0 < scale <= MAX_RENDER_SCALE:
            raise RenderInputError(f"--scale must be in (0, {MAX_RENDER_SCALE:g}], not {scale:g}")
        if kind not in ("gold", "pred"):
            raise RenderInputError(f"--kind must be gold or pred, not {kind!r}")
        network = load_map(paths, map_id)
        laid_out = not network.positions or any(
            s not in network.positions for s in network.vertices
        )
        if laid_out:  # lay out once: the map and the quality numbers use the same positions
            network.positions = layout_network(network)
        name = network.map_id or "map"
        target = out or Path(f"{name}{'_route' if route else ''}.png")
        if route is None:
            result = save_map(network, target, scale=scale, style=style)
        else:
            if target.suffix.lower() != ".png":
                raise RenderInputError(f"{target}: a route overlay is written as .png")
            stops = parse_route(network, route)
            changes = route_transfers(network, stops, transfers or "")
            result = render_map(network, scale=scale, style=style)
            target.parent.mkdir(parents=True, exist_ok=True)
            draw_route(network, result, stops, transfers=changes, kind=kind).save(target)
    except (MaptabError, OSError) as exc:
        fail(str(exc))
    problems = check_legibility(result.placed, network)
    w, h = result.placed.width, result.placed.height
    noun = "stations" if network.scenario == "metromap" else "spots"
    console.print(f"wrote {target} ({w}×{h} px, {len(network.vertices)} {noun})")
    if laid_out:  # say how good the computed layout is
        quality = layout_quality(network, network.positions)
        console.print(
            "layout: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in quality.items()),
            highlight=False,
        )
    for p in problems[:10]:
        console.print(f"[yellow]legibility:[/] {p}", highlight=False)
    if len(problems) > 10:
        console.print(f"[yellow]legibility:[/] … {len(problems) - 10} more")
