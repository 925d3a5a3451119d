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
  up the canvas, and a crowded one still gets room for its labels;
* a style with :attr:`~maptab.render.style.Style.furniture` (``hard``) draws the real-map
  furniture of :mod:`maptab.render.furniture`: lines 1.45× thicker in tight bundles with
  round corners, a title band, ticks for one-line stations (or dots, per map), pills across a
  bundle for interchanges on shared track and rings or double rings (per map) elsewhere, a
  type hierarchy (interchange labels 1.2× and bold, termini bold), a badge at each terminus
  and a legend listing every line with its badge and termini, then a key to the marks.
"""

from __future__ import annotations

import colorsys
from collections import defaultdict
from dataclasses import dataclass, replace

from maptab.core.network import Network
from maptab.render import furniture as fur
from maptab.render.furniture import INK, PillMark, Styled, TickMark
from maptab.render.geometry import (
    Box,
    Frame,
    LabelBox,
    PlacedGeometry,
    Point,
    Shape,
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
    rng_for,
    size_factors,
    station_texts,
)
from maptab.render.text import TextBlock, measure

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
    longest = EDGE_PX * scale * (fur.LONGEST_EDGE if style.furniture else 1.0)
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
    furnished = style.furniture
    lw = LINE_WIDTH * scale * (fur.LINE_FACTOR if furnished else 1.0)
    spacing = lw * (fur.BUNDLE_SPACING if furnished else 1.2)
    lang = _lang(network)
    colors = line_colors(network)
    size = round(FONT_PX * scale)
    texts = station_texts(network, style)
    frame = _frame(positions, pair_lines, edge_px, scale)
    words_lang = fur.language(network) if furnished else None
    title = _title_blocks(words_lang, size) if furnished else []
    top = sum(b.height for b in title) * 1.35 if title else 0.0
    px = {s: _moved(frame(positions[s]), top) for s in network.vertices}
    if furnished:
        entries = _legend_entries(network, colors, texts, lang, size, words_lang)
        widths = [e.width for e in entries]
        row_h = max((e.height for e in entries), default=0.0) * 1.5
    else:
        legend_block = [measure(str(line), round(LEGEND_FONT_PX * scale), lang) for line in colors]
        widths = [70 * scale + b.width + 50 * scale for b in legend_block]
        row_h = LEGEND_FONT_PX * scale * 1.8
    if furnished:
        widest = max([*widths, *(b.width for b in title)], default=0.0)
    else:
        widest = max((120 * scale + b.width for b in legend_block), default=0.0)
    width = round(max(frame.map_width, widest) + 2 * frame.margin)
    legend_rows = _legend_rows(widths, width, frame.margin)
    height = round(top + frame.map_height + 2 * frame.margin + legend_rows * row_h + 40 * scale)
    placed = PlacedGeometry(width, height, "metromap", "#FFFFFF", lw)

    # centre paths (round-cornered with furniture) and per-line offset paths
    offsets: dict[tuple[str, str, str], float] = {}
    for key, lines in pair_lines.items():
        path = octilinear_route(px[key[0]], px[key[1]])
        k, side = len(lines), side_of(px[key[0]], px[key[1]])
        if furnished:
            path = fur.rounded(path, fur.CORNER * lw + k * spacing / 2)
        placed.edge_paths[key] = path
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
    if furnished:
        _furnished_marks(network, placed, px, station_lines, reach, colors, lw)
    else:
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

    # title band over the map, legend band under it
    legend_top = top + frame.margin * 1.5 + frame.map_height
    placer = Placer.for_image(width, height, placed.stations.values(), placed.strokes)
    placer.pad = 2.0 * scale
    if furnished:
        _place_title(placed, placer, title, frame.margin, frame.margin * 0.6)
        _place_furnished_legend(
            placed, placer, network, entries, (legend_top, row_h), frame.margin, looks, lang
        )
    else:
        _place_legend(placed, placer, legend_block, colors, legend_top, frame, scale, looks)

    # labels: transfers and termini first, then the rest in table order
    degree = {s: len(network.neighbours(s)) for s in network.vertices}
    order = sorted(
        network.vertices,
        key=lambda s: (-len(station_lines[s]), degree[s] != 1, 0),
    )
    if furnished:  # a type hierarchy instead of random sizes, and no quarter turns
        factor = {
            s: fur.INTERCHANGE_SIZE if len(station_lines[s]) >= 2 else 1.0 for s in network.vertices
        }
        bold = {s: len(station_lines[s]) >= 2 or degree[s] == 1 for s in network.vertices}
        orients = label_orientations(network, replace(style, turned_share=0.0), texts)
    else:
        factor = size_factors(network, style)
        bold = dict.fromkeys(network.vertices, False)
        orients = label_orientations(network, style, texts)
    slots = {
        s: _station_label(
            network,
            placed,
            placer,
            s,
            round(size * factor[s]),
            lang,
            px,
            texts[s],
            orients.get(s),
            bold[s],
        )
        for s in order
    }
    if furnished:
        record_station_labels(
            placer, slots, placed, lambda slot, halo: _furnished_label(slot, halo, bold[slot.owner])
        )
    else:
        record_station_labels(placer, slots, placed)
    if furnished:
        _point_ticks(placed)
        fur.place_badges(placed, placer, network, colors, round(size * fur.BADGE_SIZE), lang)
    return placed


def _moved(p: Point, dy: float) -> Point:
    return (p[0], p[1] + dy)


def _furnished_marks(
    network: Network,
    placed: PlacedGeometry,
    px: dict[str, Point],
    station_lines: dict[str, set[str]],
    reach: dict[str, float],
    colors: dict[str, str],
    lw: float,
) -> None:
    """Ticks (or dots, per map) for one-line stations; pills across a bundle for interchanges
    whose lines all run along one axis; rings or double rings (per map) for the others."""
    single, ring = mark_kinds(network)
    dirs: dict[str, list[Point]] = defaultdict(list)
    for (u, v), path in placed.edge_paths.items():
        dirs[u].append(fur.leaving(path, at_start=True))
        dirs[v].append(fur.leaving(path, at_start=False))
    for s in network.vertices:
        lines, ds = station_lines[s], dirs.get(s, [])
        mark: StationMark
        if len(lines) >= 2:
            if reach[s] > 0 and len({fur.axis_key(d) for d in ds}) == 1:
                d = ds[0]
                mark = PillMark(
                    s, px[s], lw * 0.8, "pill", "#111111", lw * 0.32, (-d[1], d[0]), reach[s]
                )
            else:
                radius = max(lw * 1.15, reach[s] + lw * 0.9)
                mark = StationMark(s, px[s], radius, ring, "#111111", lw * 0.4)
        else:
            color = colors[next(iter(lines))] if lines else "#555555"
            if single == "tick":
                t = _tangent(ds)
                mark = TickMark(s, px[s], lw * 1.25, "tick", color, lw * 0.6, (-t[1], t[0]))
            else:
                mark = StationMark(s, px[s], lw * 0.8, "dot", color, lw * 0.4)
        placed.stations[s] = mark


def mark_kinds(network: Network) -> tuple[str, str]:
    """The furnished map's marks, drawn per map: one-line stations as ``tick`` (3 maps in 4)
    or ``dot``; interchanges off a single bundle as ``double`` or ``ring`` (1 in 2)."""
    rng = rng_for(network, "marks")
    single = "tick" if rng.random() < 0.75 else "dot"
    return single, "double" if rng.random() < 0.5 else "ring"


def _tangent(ds: list[Point]) -> Point:
    """The track's direction through a station left in directions ``ds``."""
    if not ds:
        return (1.0, 0.0)
    if len(ds) >= 2:
        t = fur.unit(ds[0][0] - ds[1][0], ds[0][1] - ds[1][1])
        if t != (0.0, 0.0):
            return t
    return ds[0]


def _point_ticks(placed: PlacedGeometry) -> None:
    """Turn each tick towards its station's label."""
    for s, mark in placed.stations.items():
        lab = placed.labels.get(s)
        if isinstance(mark, TickMark) and lab is not None:
            cx, cy = lab.box.center
            n = mark.normal
            if (cx - mark.center[0]) * n[0] + (cy - mark.center[1]) * n[1] < 0:
                mark.normal = (-n[0], -n[1])


def _furnished_label(slot: LabelSlot, halo: bool, bold: bool) -> LabelBox:
    """A station label with its weight: a bold station's level label was measured bold."""
    block = slot.block
    weight = fur.bold_px(block.size) if bold and not block.angle and not block.vertical else 0.0
    return Styled(slot.owner, block, slot.box, "station", halo=halo, bold=weight)


def _title_blocks(lang: str | None, size: int) -> list[TextBlock]:
    """The title (bold) and subtitle in the language of the map."""
    w = fur.words(lang)
    return [
        fur.bold_block(w["title"], round(size * fur.TITLE_SIZE), lang),
        measure(w["subtitle"], round(size * fur.SUBTITLE_SIZE), lang),
    ]


def _place_title(
    placed: PlacedGeometry, placer: Placer, blocks: list[TextBlock], left: float, top: float
) -> None:
    """The title (bold) and its subtitle, top left over the map."""
    y = top
    for i, block in enumerate(blocks):
        box = Box(left, y, left + block.width, y + block.height)
        lab = Styled(
            "title" if i == 0 else "subtitle",
            block,
            box,
            "title" if i == 0 else "annotation",
            bold=fur.bold_px(block.size) if i == 0 else 0.0,
            color=fur.INK if i == 0 else fur.OTHER_INK,
        )
        if i == 0:
            placed.title = lab
        else:
            placed.annotations[lab.owner] = lab
        placer.block(box.inflate(placer.pad), ("title", lab.owner))
        y = box.y1 + block.size * 0.35


@dataclass
class _Entry:
    """One legend entry: a sample (a line with its badge, or a key mark), a bold name and a
    note (the line's termini)."""

    key: str
    kind: str
    color: str
    name: TextBlock
    note: TextBlock | None
    code: str | None
    size: int

    @property
    def sample(self) -> float:
        return self.size * 3.4

    @property
    def width(self) -> float:
        note = self.note.width + self.size * 0.6 if self.note is not None else 0.0
        return self.sample + self.size * 0.6 + self.name.width + note + self.size * 1.6

    @property
    def height(self) -> float:
        return max(self.name.height, self.size * 1.9)


def _legend_entries(
    network: Network,
    colors: dict[str, str],
    texts: dict[str, str],
    lang: str | None,
    size: int,
    words_lang: str | None,
) -> list[_Entry]:
    """Every line (badge, bold name, its termini), then a key to the station marks and to the
    lines that are not in the tables."""
    codes = fur.badge_codes(network.line_names)
    named = round(size * fur.LEGEND_SIZE)
    small = round(size * fur.TERMINI_SIZE)
    out = []
    for line in network.line_names:
        ends = [texts[s] for s in fur.termini(network, line)[:3]]
        note = measure(" – ".join(ends), small, lang) if ends else None
        name = fur.bold_block(line, named, lang)
        out.append(_Entry(line, "line", colors[line], name, note, codes[line], size))
    w = fur.words(words_lang)
    for kind in ("interchange", "station", "regional", "planned"):
        block = measure(w[kind], small, words_lang)
        out.append(_Entry(f"key:{kind}", kind, "#555555", block, None, None, size))
    return out


def _place_furnished_legend(
    placed: PlacedGeometry,
    placer: Placer,
    network: Network,
    entries: list[_Entry],
    band: tuple[float, float],
    margin: float,
    looks: dict[str, tuple[tuple[float, float] | None, float]],
    lang: str | None,
) -> None:
    """The legend band on a white panel (:data:`~maptab.render.furniture.PANEL`): each line's
    sample stroke with its badge, bold name and termini, then the key (samples drawn as
    shapes)."""
    (y, row_h), x = band, margin
    lw = placed.line_width
    kinds = mark_kinds(network)
    panel = Shape("rect", [(margin / 2, y), (placed.width - margin / 2, y)], fur.PANEL, "#B0B0B0")
    placed.scenery.append(panel)
    for e in entries:
        if x + e.width > placed.width - margin and x > margin:
            x, y = margin, y + row_h
        mid = y + row_h / 2
        x_text = x + e.sample + e.size * 0.6
        if e.kind == "line":
            swatch = _line_stroke(e.key, [(x, mid), (x + e.sample, mid)], e.color, lw, looks)
            add_legend_entry(placed, placer, swatch, e.name, x_text, mid)
            lab = placed.legend[-1].label
            placed.legend[-1].label = Styled(
                lab.owner, lab.block, lab.box, "legend", bold=fur.bold_px(e.name.size)
            )
            code = e.code or e.key
            b = fur.badge(
                code,
                e.color,
                round(e.size * fur.BADGE_SIZE),
                lang,
                (x + e.sample / 2, mid),
                f"legend-badge:{e.key}",
            )
            placed.annotations[b.owner] = b
            placer.block(b.box, ("legend", b.owner))
            if e.note is not None:
                nx = x_text + e.name.width + e.size * 0.6
                box = Box(nx, mid - e.note.height / 2, nx + e.note.width, mid + e.note.height / 2)
                note = Styled(f"legend-note:{e.key}", e.note, box, "legend", color=fur.OTHER_INK)
                placed.annotations[note.owner] = note
                placer.block(box, ("legend", note.owner))
        else:
            placed.scenery.extend(_key_sample(e.kind, x, mid, e.sample, lw, kinds))
            box = Box(
                x_text, mid - e.name.height / 2, x_text + e.name.width, mid + e.name.height / 2
            )
            lab = Styled(e.key, e.name, box, "legend", color=fur.OTHER_INK)
            placed.annotations[e.key] = lab
            placer.block(box, ("legend", e.key))
            placer.block(Box(x, mid - lw * 1.5, x + e.sample, mid + lw * 1.5), ("legend", e.key))
        x += e.width
    pad = row_h * 0.15
    panel.points = [(margin / 2, band[0] - pad), (placed.width - margin / 2, y + row_h + pad)]
    panel.width = max(1.0, lw * 0.15)


def _key_sample(
    kind: str, x: float, mid: float, length: float, lw: float, kinds: tuple[str, str]
) -> list[Shape]:
    """What a legend key entry explains, drawn in ``length`` px from ``x`` (station marks of
    the map's ``kinds``, :func:`mark_kinds`)."""
    c = x + length / 2
    track = Shape("polyline", [(x, mid), (x + length, mid)], None, "#9E9E9E", lw)
    if kind == "interchange":
        r, w = lw * 1.15, lw * 0.4
        out = [track, Shape("ellipse", [(c - r, mid - r), (c + r, mid + r)], "#FFFFFF", INK, w)]
        if kinds[1] == "double":
            q = (r - w) * 0.55
            out.append(Shape("ellipse", [(c - q, mid - q), (c + q, mid + q)], None, INK, w))
        return out
    if kind == "station":
        if kinds[0] == "dot":
            r = lw * 0.8
            dot = [(c - r, mid - r), (c + r, mid + r)]
            return [track, Shape("ellipse", dot, "#FFFFFF", "#9E9E9E", lw * 0.4)]
        return [
            track,
            Shape("polyline", [(c, mid), (c, mid - lw * 1.25)], None, "#9E9E9E", lw * 0.6),
        ]
    if kind == "regional":
        return fur.rail_shapes([(x, mid), (x + length, mid)], lw)
    return fur.planned_shapes([(x, mid), (x + length, mid)], "#9E9E9E", lw)


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


def _legend_rows(widths: list[float], width: float, margin: float) -> int:
    rows, x = 1, margin
    for w in widths:
        if x + w > width - margin and x > margin:
            rows += 1
            x = margin
        x += w
    return rows if widths else 0


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
    bold: bool = False,
) -> LabelSlot:
    """Place one station label: 16 boxes around the mark, then 16 in a smaller font. With an
    ``orient`` (:func:`maptab.render.style.label_orientations`) the turned, diagonal or
    stacked label is tried first; a quarter turn only on level track. A ``bold`` label's level
    boxes hold its bold stroke (:func:`maptab.render.furniture.bold_block`)."""
    mark = placed.stations[station]
    center = mark.center
    sides = preferred_sides(center, (px[n] for n in network.neighbours(station)))
    reach = mark.radius + mark.outline / 2 + (mark.half if isinstance(mark, PillMark) else 0.0)
    gap = reach + 3.0 * (size / FONT_PX)
    tiers: list[Tier] = []

    def level(n: int) -> TextBlock:
        return fur.bold_block(text, n, lang) if bold else measure(text, n, lang)

    block = measure(text, size, lang)
    turned = orient_block(block, orient, level=sides[0] == "N")
    if turned is not None:
        tier = label_candidates(center, gap, turned, sides, (1.0, 1.8), placer.pad)
        tiers.append(off_the_lines(placer, tier))
    tiers.append(label_candidates(center, gap, level(size), sides, (1.0, 1.8), placer.pad))
    small = max(9, round(size * 0.8))
    tiers.append(lambda: label_candidates(center, gap, level(small), sides, (1.0, 2.2), placer.pad))
    return place_label(placer, station, tiers)
