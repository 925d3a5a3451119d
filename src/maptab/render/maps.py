"""Render a network to an image: dispatch metro/scenic, lay out if needed, paint (SPEC 15)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from maptab._limits import MAX_RENDER_PIXELS, check_image_size, check_label
from maptab.core.network import Network
from maptab.errors import MaptabError
from maptab.render.draw import to_image, to_svg
from maptab.render.geometry import PlacedGeometry, Point
from maptab.render.layout import layout_network
from maptab.render.metro import metro_extent, metro_geometry
from maptab.render.scenery import decorate
from maptab.render.scenic import scenic_extent, scenic_geometry
from maptab.render.style import style_of, target_size


class RenderError(MaptabError):
    """A network or output path that cannot be rendered."""


@dataclass
class RenderResult:
    """The painted image, the placed-geometry record it was painted from, and SVG on request."""

    image: Image.Image
    placed: PlacedGeometry
    svg: str | None = None


def map_positions(network: Network) -> dict[str, Point]:
    """``network.positions`` when every station has one, else :func:`layout_network`."""
    if network.positions and all(s in network.positions for s in network.vertices):
        return {s: network.positions[s] for s in network.vertices}
    return layout_network(network)


def place_map(network: Network, *, scale: float = 1.0, style: str | None = None) -> PlacedGeometry:
    """The placed geometry of a map, without painting it.

    ``style`` (``clean``, ``realistic``, ``hard``; default ``network.meta["render_style"]``,
    else clean) is described in :mod:`maptab.render.style`. A style with a paper-like size
    scales the drawing to fit the map's target size, then grows the canvas to it.
    """
    if scale <= 0:
        raise RenderError(f"scale must be positive, got {scale}")
    if not network.vertices:
        raise RenderError(f"map {network.map_id!r} has no stations to draw")
    check_map_labels(network)  # a huge name would make text layout run for minutes
    st = style_of(network, style)
    metro = network.scenario == "metromap"
    build = metro_geometry if metro else scenic_geometry
    positions = map_positions(network)
    tw, th = target_size(network)
    if st.paper_size:  # one placement, at the scale that fits the target size
        w, h = (metro_extent if metro else scenic_extent)(network, positions, 1.0)
        scale *= min(tw / w, th / h)
    placed = build(network, positions, scale=scale, style=st)
    over = max(placed.width / tw, placed.height / th)
    if st.paper_size and over > 1.1:  # crowding retries grew it: place once more, smaller
        placed = build(network, positions, scale=scale / over, style=st)
    if not st.plain:
        decorate(placed, network, st, scale)
    return placed


def render_map(
    network: Network, *, scale: float = 1.0, fmt: str = "png", style: str | None = None
) -> RenderResult:
    """Render a metromap or travelmap; ``fmt="svg"`` also fills :attr:`RenderResult.svg`."""
    if fmt not in ("png", "svg"):
        raise RenderError(f"unknown image format {fmt!r}; expected 'png' or 'svg'")
    placed = place_map(network, scale=scale, style=style)
    where = f"map {network.map_id!r} at scale {scale:g}"
    check_image_size(placed.width, placed.height, where, MAX_RENDER_PIXELS)
    return RenderResult(to_image(placed), placed, to_svg(placed) if fmt == "svg" else None)


def save_map(network: Network, path: str | Path, **kw: object) -> RenderResult:
    """Render and write ``path``: PNG or SVG by its suffix (keywords go to :func:`render_map`)."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg"):
        raise RenderError(f"{path}: output must end in .png or .svg")
    result = render_map(network, fmt=fmt, **kw)  # type: ignore[arg-type]
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "svg":
        path.write_text(result.svg or "", encoding="utf-8")
    else:
        result.image.save(path, optimize=False, compress_level=3)
    return result


def check_map_labels(network: Network) -> None:
    """:func:`check_label` for every station (or spot) and line name of ``network``, the
    names the renderer draws; called where a map enters the renderer."""
    noun = "station" if network.scenario == "metromap" else "spot"
    for s in network.vertices:
        check_label(network.label(s), noun)
    for line in network.line_names:
        check_label(line, "line")
