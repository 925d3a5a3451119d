"""Route overlay: a gold or predicted route drawn on a rendered map.

The base map is faded, then the route is drawn on the renderer's own centre paths
(``placed.edge_paths``) in the route colour over a dark casing: gold routes in gold,
predicted routes in blue. Each stop gets a numbered badge (1, 2, …; a station visited twice
gets two). Stations listed in ``transfers`` get a diamond around their badge. A hop between
two stations that are not adjacent in the network is drawn as a straight dashed line in the
warning colour; a name the network does not know is skipped and counted. A header box says
what was drawn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from PIL import Image, ImageDraw

from maptab.core.network import Network
from maptab.render.draw import dash_polyline
from maptab.render.geometry import Point
from maptab.render.maps import RenderResult
from maptab.render.metro import pair_key
from maptab.render.text import draw_block, measure

ROUTE_COLORS = {"gold": ("#F2B705", "#4A3A00"), "pred": ("#1E88E5", "#0B2F52")}
WARNING = "#E53935"
TRANSFER = "#7B1FA2"
FADE = 0.45


@lru_cache(maxsize=1)
def _fade_table() -> list[int]:
    """``Image.blend(x, white, FADE)`` of every byte value, computed by ``Image.blend``
    itself (it maps each byte on its own), for the three bands of an RGB image: fading a
    4,000-pixel map through it gives the same bytes as blending with a white copy, without
    allocating the copy and the converted base (~70 MB each)."""
    ramp = Image.frombytes("L", (256, 1), bytes(range(256)))
    return list(Image.blend(ramp, Image.new("L", (256, 1), 255), FADE).tobytes()) * 3


def route_hops(network: Network, stations: Sequence[str]) -> list[tuple[str, str, bool]]:
    """Consecutive known stops as ``(a, b, adjacent)``; unknown names are dropped first."""
    keys = [k for k in (network.resolve(s) for s in stations) if k is not None]
    return [(a, b, b in network.neighbours(a)) for a, b in zip(keys, keys[1:], strict=False)]


def draw_route(
    network: Network,
    base: RenderResult,
    stations: Sequence[str],
    *,
    transfers: Iterable[str] = (),
    kind: str = "gold",
) -> Image.Image:
    """The base map with the route ``stations`` drawn on it (module docstring).

    ``kind`` is ``"gold"`` or ``"pred"``. Names may be table names or display labels.
    """
    if kind not in ROUTE_COLORS:
        raise ValueError(f"unknown route kind {kind!r}; expected 'gold' or 'pred'")
    color, casing = ROUTE_COLORS[kind]
    placed = base.placed
    img = base.image if base.image.mode == "RGB" else base.image.convert("RGB")
    img = img.point(_fade_table())  # = Image.blend(img, white, FADE), without two more copies
    draw = ImageDraw.Draw(img)
    lw = placed.line_width
    keys = [network.resolve(s) for s in stations]
    known = [k for k in keys if k is not None and k in placed.stations]
    hops = route_hops(network, known)
    width = round(lw * 1.4)
    invalid = 0
    for a, b, ok in hops:
        if ok:
            path = placed.edge_paths[pair_key(a, b)]
            pts: list[Point] = path if pair_key(a, b) == (a, b) else path[::-1]
            draw.line(pts, fill=casing, width=width + 4, joint="curve")
            draw.line(pts, fill=color, width=width, joint="curve")
        else:
            invalid += 1
            line = [placed.stations[a].center, placed.stations[b].center]
            for piece in dash_polyline(line, lw * 2.5, lw * 1.5):
                draw.line(piece, fill=WARNING, width=width)
    transfer_keys = {k for k in (network.resolve(t) for t in transfers) if k is not None}
    size = max(12, round(lw * 2.2))
    for i, s in enumerate(known, 1):
        cx, cy = placed.stations[s].center
        block = measure(str(i), size)
        r = max(block.width, block.height) / 2 + size * 0.3
        if s in transfer_keys:
            d = r * 1.9
            draw.polygon(
                [(cx, cy - d), (cx + d, cy), (cx, cy + d), (cx - d, cy)],
                fill="#FFFFFF",
                outline=TRANSFER,
                width=max(3, round(lw * 0.6)),
            )
        ring = max(3, round(lw * 0.45))
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill="#FFFFFF", outline=color, width=ring)
        draw_block(draw, block, cx - block.width / 2, cy - block.height / 2, fill="#000000")
    unknown = len(keys) - len(known)
    title = {"gold": "gold route", "pred": "predicted route"}[kind]
    header = f"{title}: {len(known)} stops"
    if invalid:
        header += f", {invalid} invalid hop{'s' * (invalid != 1)}"
    if unknown:
        header += f", {unknown} unknown station{'s' * (unknown != 1)}"
    block = measure(header, max(14, round(lw * 2.4)))
    pad = block.size * 0.5
    box = (pad, pad, pad * 3 + block.width, pad * 3 + block.height)
    draw.rectangle(box, fill="#FFFFFF", outline=WARNING if invalid or unknown else casing, width=3)
    draw_block(draw, block, pad * 2, pad * 2)
    return img
