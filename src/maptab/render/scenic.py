"""Scenic (travelmap) geometry: spots, styled paths and edge annotations.

* ``network.meta["modes"]`` — ``{edge_name: "walk" | "drive"}``: walking paths are dashed
  green, driving roads solid brown with a light casing, others solid grey; a legend band
  explains the styles that occur.
* ``network.meta["annotations"]`` — ``{edge_name: {"kind": "time" | "distance", "value": v}}``:
  drawn as a framed tag on its edge (``"v min"`` / ``"v km"``, or ``"v <unit>"`` when the note
  has a ``"unit"``; a string value is shown as is).
  Edge names are ``"u-v"`` with table names; ``"v-u"`` is accepted too.
* spots are filled circles; names are placed like metro labels (greedy, collision-checked,
  then a second chance for crowded ones), after the annotations, which have fewer places to go.
"""

from __future__ import annotations

from collections.abc import Mapping

from maptab.core.network import Edge, Network
from maptab.render.geometry import (
    Box,
    Frame,
    LabelBox,
    PlacedGeometry,
    Point,
    StationMark,
    Stroke,
    fit_frame,
)
from maptab.render.labels import (
    Placer,
    add_legend_entry,
    around_point,
    label_candidates,
    off_the_lines,
    place_label,
    preferred_sides,
    record_station_labels,
)
from maptab.render.metro import pair_key
from maptab.render.style import (
    CLEAN,
    Style,
    label_orientations,
    orient_block,
    size_factors,
    station_texts,
)
from maptab.render.text import measure

EDGE_PX = 220.0
SPOT_RADIUS = 11.0
FONT_PX = 21
NOTE_FONT_PX = 16
BACKGROUND = "#F6F3EA"

#: (colour, width, dash, casing) per mode; ``None`` is an edge without a mode
STYLES: dict[str | None, tuple[str, float, tuple[float, float] | None, str | None]] = {
    "walk": ("#2E8B57", 4.0, (14.0, 9.0), None),
    "drive": ("#9A6B3F", 7.0, None, "#E8DCC8"),
    None: ("#7A7A7A", 5.0, None, None),
}
MODE_NAMES = {"walk": "walk", "drive": "drive", None: "path"}


def _lookup(table: Mapping[str, object], e: Edge) -> object | None:
    return table.get(e.name, table.get(f"{e.v}-{e.u}"))


def annotation_text(note: object) -> str:
    """``{"kind": "time", "value": 12}`` → ``"12 min"``; distance → ``"km"``; an explicit
    ``"unit"`` (as the builder writes) wins over the kind's default."""
    if not isinstance(note, Mapping):
        return str(note)
    value = note.get("value")
    if isinstance(value, str):
        return value
    unit = note.get("unit") or {"time": "min", "distance": "km"}.get(str(note.get("kind")), "")
    num = f"{value:g}" if isinstance(value, int | float) else str(value)
    return f"{num} {unit}".strip()


def scenic_geometry(
    network: Network,
    positions: dict[str, Point],
    *,
    scale: float = 1.0,
    style: Style = CLEAN,
) -> PlacedGeometry:
    """Place every spot, path, annotation and spot name of a travelmap (module docstring);
    ``style`` chooses label texts and sizes (:mod:`maptab.render.style`)."""
    lang = str(network.meta.get("language") or "") or None
    modes = dict(network.meta.get("modes") or {})
    notes = dict(network.meta.get("annotations") or {})
    frame = _frame(network, positions, scale)
    px = {s: frame(positions[s]) for s in network.vertices}
    used_modes = list(dict.fromkeys(_lookup(modes, e) for e in network.edges))
    used_modes = [m if m in STYLES else None for m in used_modes]
    legend_h = (60 * scale) if used_modes else 0
    legend_w = sum(
        134 * scale + measure(MODE_NAMES[m], round(FONT_PX * scale), None).width for m in used_modes
    )
    width = round(max(frame.map_width, legend_w) + 2 * frame.margin)
    height = round(frame.map_height + 2 * frame.margin + legend_h)
    placed = PlacedGeometry(width, height, "travelmap", BACKGROUND, STYLES[None][1] * scale)
    for e in network.edges:
        mode = _lookup(modes, e)
        color, w, dash, casing = STYLES[mode if mode in STYLES else None]
        pts = [px[e.u], px[e.v]]
        placed.edge_paths.setdefault(pair_key(e.u, e.v), pts if e.u <= e.v else pts[::-1])
        d = (dash[0] * scale, dash[1] * scale) if dash else None
        placed.strokes.append(Stroke(e.name, pts, color, w * scale, d, casing))
    for s in network.vertices:
        placed.stations[s] = StationMark(
            s, px[s], SPOT_RADIUS * scale, "spot", "#C8423B", 3.0 * scale
        )
    placer = Placer.for_image(width, height, placed.stations.values(), placed.strokes)
    placer.pad = 3.0 * scale
    _legend(placed, placer, used_modes, frame.margin, height - legend_h, scale)

    note_size = round(NOTE_FONT_PX * scale)
    for e in network.edges:
        note = _lookup(notes, e)
        if note is None:
            continue
        block = measure(annotation_text(note), note_size, lang)
        a, b = px[e.u], px[e.v]
        frame_pad = note_size * 0.3
        candidates = []
        for t in (0.5, 0.38, 0.62, 0.28, 0.72):
            cx, cy = a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t
            box = Box(
                cx - block.width / 2,
                cy - block.height / 2,
                cx + block.width / 2,
                cy + block.height / 2,
            )
            candidates.append(box)
        box, _ = placer.choose([c.inflate(frame_pad) for c in candidates])
        box = box.inflate(-frame_pad)
        placer.block(box.inflate(frame_pad + placer.pad), ("note", e.name))
        color = STYLES[_lookup(modes, e) if _lookup(modes, e) in STYLES else None][0]
        placed.annotations[e.name] = LabelBox(e.name, block, box, "annotation", frame=color)

    size = round(FONT_PX * scale)
    texts = station_texts(network, style)
    factor = size_factors(network, style)
    orients = label_orientations(network, style, texts)
    slots = {}
    for s in network.vertices:
        mark = placed.stations[s]
        block = measure(texts[s], round(size * factor[s]), lang)
        sides = preferred_sides(mark.center, (px[n] for n in network.neighbours(s)))
        gap = mark.radius + mark.outline + 3 * scale + placer.pad
        boxes = around_point(mark.center, gap, block, sides)
        boxes += around_point(mark.center, gap * 2.2, block, sides)
        tiers = [[(box, block) for box in boxes]]
        turned = orient_block(block, orients.get(s), level=sides[0] == "N")
        if turned is not None:
            tier = label_candidates(mark.center, gap, turned, sides, (1.0, 2.2))
            tiers.insert(0, off_the_lines(placer, tier))
        slots[s] = place_label(placer, s, tiers)
    record_station_labels(placer, slots, placed)
    return placed


def _frame(network: Network, positions: dict[str, Point], scale: float) -> Frame:
    pairs = [pair_key(e.u, e.v) for e in network.edges]
    return fit_frame(
        positions,
        pairs,
        edge_px=EDGE_PX * scale,
        min_gap_px=9 * SPOT_RADIUS * scale,
        margin=150 * scale,
        max_side=9000 * scale,
    )


def scenic_extent(network: Network, positions: dict[str, Point], scale: float) -> Point:
    """The image size a travelmap gets at ``scale`` (map, margins, legend band)."""
    frame = _frame(network, positions, scale)
    return frame.map_width + 2 * frame.margin, frame.map_height + 2 * frame.margin + 60 * scale


def _legend(
    placed: PlacedGeometry,
    placer: Placer,
    modes: list[str | None],
    left: float,
    top: float,
    scale: float,
) -> None:
    x = left
    mid = top + 25 * scale
    for mode in modes:
        color, w, dash, casing = STYLES[mode]
        d = (dash[0] * scale, dash[1] * scale) if dash else None
        swatch = Stroke(
            MODE_NAMES[mode], [(x, mid), (x + 70 * scale, mid)], color, w * scale, d, casing
        )
        block = measure(MODE_NAMES[mode], round(FONT_PX * scale), None)
        box = add_legend_entry(placed, placer, swatch, block, x + 84 * scale, mid)
        x = box.x1 + 50 * scale
