"""Metro map geometry: octilinear lines, offsets on shared track, stations, labels, legend.

SPEC 15. :func:`metro_geometry` turns a metromap with positions into a
:class:`~maptab.render.geometry.PlacedGeometry`; the backends in :mod:`maptab.render.draw`
paint it. Conventions:

* every edge is drawn as an octilinear path (:func:`~maptab.render.geometry.octilinear_route`)
  between its stations; the ``k`` lines sharing a station pair are drawn side by side,
  offset by ``(i - (k - 1) / 2) × spacing`` from the centre path in line order, to the left
  of the path run rightwards (straight down for a vertical pair), so a line keeps its side
  along a straight shared run whatever the station names;
* each line is drawn as few polylines as possible (greedy trail decomposition of its edges),
  so a loop line comes out as one closed polyline;
* a station on one line is a white dot outlined in the line's colour; a station on two or
  more lines is a larger ring, wide enough to join all its offset lines;
* colours come from ``network.meta["line_colors"]`` ({line: "#rrggbb"}) when given, else a
  fixed palette in line order; a legend band under the map lists every line;
* size: the median edge is made long enough that the map's bounding box gives each station
  ``STATION_AREA_PX × scale²`` square pixels (about 4,000 × 3,700 px for 400 stations, as in
  the papers), but no shorter than ``MIN_EDGE_PX`` and no longer than ``EDGE_PX`` (× scale);
  when some label finds no free place, the map is placed again with edges
  ``RETRY_GROWTH`` times longer, up to ``EDGE_PX``. A sparse layout therefore does not blow
  up the canvas, and a crowded one still gets room for its labels.
"""

from __future__ import annotations

import colorsys
from collections import defaultdict

from maptab.core.network import Network
from maptab.render.geometry import (
    Frame,
    PlacedGeometry,
    Point,
    StationMark,
    Stroke,
    dedupe,
    density_edge_px,
    fit_frame,
    octilinear_route,
    offset_polyline,
)
from maptab.render.labels import (
    LabelSlot,
    Placer,
    Tier,
    add_legend_entry,
    label_candidates,
    off_the_lines,
    place_label,
    preferred_sides,
    record_station_labels,
)
from maptab.render.style import (
    CLEAN,
    Style,
    label_orientations,
    line_looks,
    orient_block,
    size_factors,
    station_texts,
)
from maptab.render.text import measure

EDGE_PX = 150.0
MIN_EDGE_PX = 60.0
STATION_AREA_PX = 36_000.0
RETRY_GROWTH = 1.25
LINE_WIDTH = 9.0
FONT_PX = 20
LEGEND_FONT_PX = 26

PALETTE = (
    "#E3002B",
    "#0072BC",
    "#009B48",
    "#F7931D",
    "#8E44AD",
    "#00AEEF",
    "#A0522D",
    "#EC008C",
    "#7AC143",
    "#D4A600",
    "#1A237E",
    "#C1272D",
    "#009688",
    "#6D6E71",
    "#8D7B2F",
    "#3F51B5",
    "#FF6F61",
    "#2E7D32",
    "#D81B60",
    "#00838F",
)


def line_colors(network: Network) -> dict[str, str]:
    """Colour per line: ``meta["line_colors"]`` first, then the palette, then golden-ratio hues."""
    given = network.meta.get("line_colors") or {}
    out: dict[str, str] = {}
    k = 0
    for line in network.line_names:
        if isinstance(given, dict) and line in given:
            out[line] = str(given[line])
            continue
        if k < len(PALETTE):
            out[line] = PALETTE[k]
        else:
            r, g, b = colorsys.hsv_to_rgb((k * 0.618034) % 1.0, 0.75, 0.8)
            out[line] = f"#{int(r * 255):02X}{int(g * 255):02X}{int(b * 255):02X}"
        k += 1
    return out


def pair_key(u: str, v: str) -> tuple[str, str]:
    """The canonical (sorted) key of an undirected station pair."""
    return (u, v) if u <= v else (v, u)


def trails(pairs: list[tuple[str, str]]) -> list[list[str]]:
    """Cover the edges of one line with few station sequences (each edge exactly once).

    Trails start at stations of odd degree (termini, branch points) so a path line is one
    trail and a loop line is one closed trail (first station repeated at the end).
    """
    adj: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for i, (u, v) in enumerate(pairs):
        adj[u].append((v, i))
        adj[v].append((u, i))
    used = [False] * len(pairs)
    order = list(dict.fromkeys(s for p in pairs for s in p))
    starts = [s for s in order if len(adj[s]) % 2 == 1] + order
    out: list[list[str]] = []
    for start in starts:
        while any(not used[i] for _, i in adj[start]):
            seq, cur = [start], start
            while True:
                nxt = next(((n, i) for n, i in adj[cur] if not used[i]), None)
                if nxt is None:
                    break
                used[nxt[1]] = True
                cur = nxt[0]
                seq.append(cur)
            out.append(seq)
    return out


def metro_geometry(
    network: Network,
    positions: dict[str, Point],
    *,
    scale: float = 1.0,
    style: Style = CLEAN,
) -> PlacedGeometry:
    """Place every line, station, label and legend entry of a metromap (module docstring);
    ``style`` chooses label texts, label sizes and line looks (:mod:`maptab.render.style`)."""
    pair_lines = _pair_lines(network)
    longest = EDGE_PX * scale
    edge_px = _start_edge_px(positions, pair_lines, scale)
    while True:
        placed = _place_metro(network, positions, pair_lines, edge_px, scale, style)
        if not placed.crowded or edge_px >= longest:
            return placed
        edge_px = min(longest, edge_px * RETRY_GROWTH)


def _pair_lines(network: Network) -> dict[tuple[str, str], list[str]]:
    """The lines on each station pair, in line order."""
    line_order = {line: i for i, line in enumerate(network.line_names)}
    pair_lines: dict[tuple[str, str], list[str]] = defaultdict(list)
    for e in network.edges:
        key = pair_key(e.u, e.v)
        if e.line not in pair_lines[key]:
            pair_lines[key].append(str(e.line))
    for lines in pair_lines.values():
        lines.sort(key=line_order.__getitem__)
    return pair_lines


def _start_edge_px(
    positions: dict[str, Point], pair_lines: dict[tuple[str, str], list[str]], scale: float
) -> float:
    dense = density_edge_px(positions, pair_lines, STATION_AREA_PX * scale**2)
    return min(EDGE_PX * scale, max(MIN_EDGE_PX * scale, dense))


def _frame(
    positions: dict[str, Point],
    pair_lines: dict[tuple[str, str], list[str]],
    edge_px: float,
    scale: float,
) -> Frame:
    return fit_frame(
        positions,
        pair_lines,
        edge_px=edge_px,
        min_gap_px=5.0 * LINE_WIDTH * scale,
        margin=140 * scale,
        max_side=9000 * scale,
    )


def metro_extent(network: Network, positions: dict[str, Point], scale: float) -> Point:
    """The image size a metromap gets at ``scale`` before any crowding retry (map, margins and
    one legend row): what :func:`maptab.render.maps.place_map` fits to a target size."""
    pair_lines = _pair_lines(network)
    frame = _frame(positions, pair_lines, _start_edge_px(positions, pair_lines, scale), scale)
    legend = LEGEND_FONT_PX * scale * 1.8 + 40 * scale
    return frame.map_width + 2 * frame.margin, frame.map_height + 2 * frame.margin + legend


def side_of(a: Point, b: Point) -> int:
    """``+1`` when ``a`` → ``b`` runs rightwards in the image (straight down for a vertical
    pair), else ``-1``: the sign that puts a line's offset on the same side of every pair
    along a straight run."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    if abs(dx) > 1e-9:
        return 1 if dx > 0 else -1
    return 1 if dy >= 0 else -1


def _place_metro(
    network: Network,
    positions: dict[str, Point],
    pair_lines: dict[tuple[str, str], list[str]],
    edge_px: float,
    scale: float,
    style: Style,
) -> PlacedGeometry:
    lw = LINE_WIDTH * scale
    spacing = lw * 1.2
    lang = _lang(network)
    colors = line_colors(network)
    frame = _frame(positions, pair_lines, edge_px, scale)
    px = {s: frame(positions[s]) for s in network.vertices}
    legend_block = [measure(str(line), round(LEGEND_FONT_PX * scale), lang) for line in colors]
    widest = max((120 * scale + b.width for b in legend_block), default=0.0)
    width = round(max(frame.map_width, widest) + 2 * frame.margin)
    legend_rows = _legend_rows(legend_block, width, frame.margin, scale)
    row_h = LEGEND_FONT_PX * scale * 1.8
    height = round(frame.map_height + 2 * frame.margin + legend_rows * row_h + 40 * scale)
    placed = PlacedGeometry(width, height, "metromap", "#FFFFFF", lw)

    # centre paths and per-line offset paths
    offsets: dict[tuple[str, str, str], float] = {}
    for key, lines in pair_lines.items():
        placed.edge_paths[key] = octilinear_route(px[key[0]], px[key[1]])
        k, side = len(lines), side_of(px[key[0]], px[key[1]])
        for i, line in enumerate(lines):
            offsets[(*key, line)] = side * (i - (k - 1) / 2) * spacing

    def line_path(line: str, a: str, b: str) -> list[Point]:
        key = pair_key(a, b)
        pts = offset_polyline(placed.edge_paths[key], offsets[(*key, line)])
        return pts if key == (a, b) else pts[::-1]

    looks = line_looks(colors) if style.distinct_lines else {}
    for line in network.line_names:
        pairs = list(dict.fromkeys(pair_key(e.u, e.v) for e in network.line_edges(line)))
        for seq in trails(pairs):
            pts: list[Point] = []
            for a, b in zip(seq, seq[1:], strict=False):
                pts.extend(line_path(line, a, b))
            placed.strokes.append(_line_stroke(line, dedupe(pts), colors[line], lw, looks))

    # stations
    station_lines: dict[str, set[str]] = {s: set(v.lines) for s, v in network.vertices.items()}
    reach: dict[str, float] = defaultdict(float)
    for (u, v, line), off in offsets.items():
        station_lines[u].add(line)
        station_lines[v].add(line)
        reach[u] = max(reach[u], abs(off))
        reach[v] = max(reach[v], abs(off))
    for s in network.vertices:
        lines = station_lines[s]
        if len(lines) >= 2:
            radius = max(lw * 1.15, reach[s] + lw * 0.9)
            mark = StationMark(s, px[s], radius, "ring", "#111111", lw * 0.45)
        else:
            color = colors[next(iter(lines))] if lines else "#555555"
            radius = max(lw * 0.8, reach[s] + lw * 0.55)
            mark = StationMark(s, px[s], radius, "dot", color, lw * 0.4)
        placed.stations[s] = mark

    # legend band under the map
    legend_top = frame.margin * 1.5 + frame.map_height
    placer = Placer.for_image(width, height, placed.stations.values(), placed.strokes)
    placer.pad = 2.0 * scale
    _place_legend(placed, placer, legend_block, colors, legend_top, frame, scale, looks)

    # labels: transfers and termini first, then the rest in table order
    degree = {s: len(network.neighbours(s)) for s in network.vertices}
    order = sorted(
        network.vertices,
        key=lambda s: (-len(station_lines[s]), degree[s] != 1, 0),
    )
    size = round(FONT_PX * scale)
    texts = station_texts(network, style)
    factor = size_factors(network, style)
    orients = label_orientations(network, style, texts)
    slots = {
        s: _station_label(
            network, placed, placer, s, round(size * factor[s]), lang, px, texts[s], orients.get(s)
        )
        for s in order
    }
    record_station_labels(placer, slots, placed)
    return placed


def _line_stroke(
    line: str,
    pts: list[Point],
    color: str,
    lw: float,
    looks: dict[str, tuple[tuple[float, float] | None, float]],
) -> Stroke:
    """A line's stroke in its look (dash and width factor; plain when it has none)."""
    dash, wf = looks.get(line, (None, 1.0))
    d = (dash[0] * lw, dash[1] * lw) if dash else None
    return Stroke(line, pts, color, lw * wf, d)


def _lang(network: Network) -> str | None:
    lang = network.meta.get("language")
    return str(lang) if lang else None


def _legend_rows(blocks: list, width: float, margin: float, scale: float) -> int:
    rows, x = 1, margin
    for b in blocks:
        w = 70 * scale + b.width + 50 * scale
        if x + w > width - margin and x > margin:
            rows += 1
            x = margin
        x += w
    return rows if blocks else 0


def _place_legend(
    placed: PlacedGeometry,
    placer: Placer,
    blocks: list,
    colors: dict[str, str],
    top: float,
    frame: Frame,
    scale: float,
    looks: dict[str, tuple[tuple[float, float] | None, float]],
) -> None:
    row_h = LEGEND_FONT_PX * scale * 1.8
    x, y = frame.margin, top
    for (line, color), block in zip(colors.items(), blocks, strict=True):
        w = 70 * scale + block.width + 50 * scale
        if x + w > placed.width - frame.margin and x > frame.margin:
            x, y = frame.margin, y + row_h
        mid = y + row_h / 2
        swatch = _line_stroke(
            line, [(x, mid), (x + 56 * scale, mid)], color, placed.line_width, looks
        )
        add_legend_entry(placed, placer, swatch, block, x + 70 * scale, mid)
        x += w


def _station_label(
    network: Network,
    placed: PlacedGeometry,
    placer: Placer,
    station: str,
    size: int,
    lang: str | None,
    px: dict[str, Point],
    text: str,
    orient: str | None = None,
) -> LabelSlot:
    """Place one station label: 16 boxes around the mark, then 16 in a smaller font. With an
    ``orient`` (:func:`maptab.render.style.label_orientations`) the turned, diagonal or
    stacked label is tried first; a quarter turn only on level track."""
    mark = placed.stations[station]
    center = mark.center
    sides = preferred_sides(center, (px[n] for n in network.neighbours(station)))
    gap = mark.radius + mark.outline / 2 + 3.0 * (size / FONT_PX)
    tiers: list[Tier] = []
    block = measure(text, size, lang)
    turned = orient_block(block, orient, level=sides[0] == "N")
    if turned is not None:
        tier = label_candidates(center, gap, turned, sides, (1.0, 1.8), placer.pad)
        tiers.append(off_the_lines(placer, tier))
    tiers.append(label_candidates(center, gap, block, sides, (1.0, 1.8), placer.pad))
    small = max(9, round(size * 0.8))
    tiers.append(
        lambda: label_candidates(
            center, gap, measure(text, small, lang), sides, (1.0, 2.2), placer.pad
        )
    )
    return place_label(placer, station, tiers)
