"""What real maps carry and the tables do not: distractor layers, second-language
labels and the paper-like canvas of the ``realistic`` / ``hard`` styles.

:func:`decorate` runs after a map is placed (:func:`maptab.render.maps.place_map`):

1. the canvas grows to the style's paper-like size (:func:`maptab.render.style.target_size`)
   with the map centred in it (:func:`fit_canvas`);
2. second-language station labels are placed under (else over) their station label where that
   is free (:func:`add_secondary_labels`);
3. scenery (:func:`add_scenery`): a street grid, water, parks and other rail lines in muted
   colours under the network; landmark pictograms, street names, a compass and an inset map in
   free places only, so no label or station is covered and the legibility checks still hold;
   ``hard`` metro maps get real-map extras instead (:func:`add_furniture`): water and parks,
   station icons, regional-rail and under-construction lines with their own stations, a
   compass and an inset.

Everything is drawn from generators seeded by the map id (:func:`maptab.render.style.rng_for`),
so a map always comes out the same.
"""

from __future__ import annotations

import difflib
import math
import random

import numpy as np

from maptab.core.network import Network
from maptab.render import furniture as fur
from maptab.render.geometry import Box, LabelBox, PlacedGeometry, Point, Shape
from maptab.render.labels import Placer, label_candidates, preferred_sides
from maptab.render.metro import FONT_PX, LINE_WIDTH, PALETTE, line_colors
from maptab.render.ocr import normalise
from maptab.render.style import Style, bilingual, rng_for, romanise, target_size
from maptab.render.text import measure

WATER = "#B9DAF2"
PARK = "#D5ECCB"
STREET = "#E9E7E2"
MUTED = ("#BDBDBD", "#C9B8A6", "#B7C4D6", "#D1B3C4", "#C4CFB0")


def translate(placed: PlacedGeometry, dx: float, dy: float) -> None:
    """Move everything drawn by ``(dx, dy)`` pixels."""

    def pt(p: Point) -> Point:
        return (p[0] + dx, p[1] + dy)

    def box(b: Box) -> Box:
        return Box(b.x0 + dx, b.y0 + dy, b.x1 + dx, b.y1 + dy)

    for s in placed.strokes:
        s.points = [pt(p) for p in s.points]
    for m in placed.stations.values():
        m.center = pt(m.center)
    labels = [*placed.all_labels()]
    for lab in labels:
        lab.box = box(lab.box)
    for e in placed.legend:
        e.swatch.points = [pt(p) for p in e.swatch.points]
    for shape in placed.scenery:
        shape.points = [pt(p) for p in shape.points]
    placed.edge_paths = {k: [pt(p) for p in v] for k, v in placed.edge_paths.items()}


def fit_canvas(placed: PlacedGeometry, size: tuple[float, float]) -> None:
    """Grow the canvas to ``size`` (never shrink it), the drawing centred."""
    w, h = max(placed.width, round(size[0])), max(placed.height, round(size[1]))
    dx, dy = (w - placed.width) / 2, (h - placed.height) / 2
    if dx or dy:
        translate(placed, round(dx), round(dy))
    placed.width, placed.height = w, h


def _placer(placed: PlacedGeometry, pad: float) -> Placer:
    placer = Placer.for_image(placed.width, placed.height, placed.stations.values(), placed.strokes)
    placer.pad = pad
    for lab in placed.all_labels():
        placer.block(lab.box.inflate(pad), ("label", lab.owner))
    for entry in placed.legend:  # keep pictograms and texts off the legend swatches
        (x0, y0), (x1, y1) = entry.swatch.points[0], entry.swatch.points[-1]
        half = entry.swatch.width
        placer.block(
            Box(min(x0, x1), min(y0, y1) - half, max(x0, x1), max(y0, y1) + half),
            ("legend", entry.name),
        )
    return placer


def _free(placer: Placer, box: Box) -> bool:
    return placer.is_free(box) and placer.line_hits(box) == 0


def add_secondary_labels(
    placed: PlacedGeometry, network: Network, placer: Placer, scale: float
) -> int:
    """Second-language lines under (else over) each station label, where free; returns how
    many were placed."""
    lang = str(network.meta.get("language") or "") or None
    n = 0
    for s, lab in placed.labels.items():
        text = romanise(network.label(s), lang)
        if not text or lab.angle or lab.vertical:
            continue
        block = measure(text, max(9, round(lab.block.size * 0.62)), None)
        cx = (lab.box.x0 + lab.box.x1) / 2
        gap = 2 * placer.pad + 1.0  # clear of its own label's padded box
        for y0 in (lab.box.y1 + gap, lab.box.y0 - gap - block.height):
            box = Box(cx - block.width / 2, y0, cx + block.width / 2, y0 + block.height)
            if _free(placer, box):
                placer.block(box.inflate(placer.pad), ("label", s))
                placed.secondary[s] = LabelBox(s, block, box, "secondary")
                n += 1
                break
    return n


def _walk(rng: random.Random, w: float, h: float, steps: int) -> list[Point]:
    """An octilinear-ish path across the canvas, from one side to the opposite."""
    if rng.random() < 0.5:
        pts = [(0.0, float(rng.uniform(0.1, 0.9)) * h)]
        for i in range(1, steps + 1):
            pts.append((w * i / steps, pts[-1][1] + rng.gauss(0, h / (2 * steps))))
    else:
        pts = [(float(rng.uniform(0.1, 0.9)) * w, 0.0)]
        for i in range(1, steps + 1):
            pts.append((pts[-1][0] + rng.gauss(0, w / (2 * steps)), h * i / steps))
    return pts


def _pictogram(kind: int, x: float, y: float, r: float) -> list[Shape]:
    """A small landmark symbol centred on (x, y) with radius ``r``."""
    if kind == 0:  # tree
        return [
            Shape("rect", [(x - r * 0.15, y), (x + r * 0.15, y + r)], "#8B5A2B"),
            Shape("ellipse", [(x - r * 0.7, y - r), (x + r * 0.7, y + r * 0.2)], "#4E9A48"),
        ]
    if kind == 1:  # museum / building
        return [
            Shape("polygon", [(x - r, y - r * 0.2), (x, y - r), (x + r, y - r * 0.2)], "#9C8A74"),
            Shape("rect", [(x - r * 0.8, y - r * 0.2), (x + r * 0.8, y + r)], "#B8A88F"),
        ]
    if kind == 2:  # hospital
        a, b = r * 0.3, r * 0.8
        cross = [
            (x - a, y - b), (x + a, y - b), (x + a, y - a), (x + b, y - a), (x + b, y + a),
            (x + a, y + a), (x + a, y + b), (x - a, y + b), (x - a, y + a), (x - b, y + a),
            (x - b, y - a), (x - a, y - a),
        ]  # fmt: skip
        return [Shape("rect", [(x - r, y - r), (x + r, y + r)], "#FFFFFF", "#D33", 2.0),
                Shape("polygon", cross, "#D33")]  # fmt: skip
    star = []
    for i in range(10):  # viewpoint / sight
        rr = r if i % 2 == 0 else r * 0.45
        a = -math.pi / 2 + i * math.pi / 5
        star.append((x + rr * math.cos(a), y + rr * math.sin(a)))
    return [Shape("polygon", star, "#E0A526", "#9A6B00", 1.0)]


def _street_names(network: Network, count: int, rng: random.Random) -> list[str]:
    """Street names in the map's language that no station name resembles."""
    from maptab.generate.names import LANGUAGES, station_names

    lang = str(network.meta.get("language") or "en")
    lang = lang if lang in LANGUAGES else "en"
    try:
        seeded = np.random.default_rng(rng.getrandbits(32))
        pool = station_names(count * 3, lang, seeded, taken=network.vertices)
    except ValueError:
        return []
    labels = [normalise(network.label(s)) for s in network.vertices]
    out = []
    for name in pool:
        if not _resembles_any(normalise(name), labels, 0.6):
            out.append(name)
        if len(out) == count:
            break
    return out


def _resembles_any(name: str, labels: list[str], threshold: float) -> bool:
    """True when some label reaches ``threshold`` (difflib ratio) against ``name``; one
    matcher holds ``name`` so its index is built once, and lengths alone rule most out."""
    if not name:
        return False
    m = difflib.SequenceMatcher(None, autojunk=False)
    m.set_seq2(name)
    for lab in labels:
        if not lab or 2 * min(len(lab), len(name)) / (len(lab) + len(name)) < threshold:
            continue
        m.set_seq1(lab)
        if m.quick_ratio() >= threshold and m.ratio() >= threshold:
            return True
    return False


def add_scenery(
    placed: PlacedGeometry, network: Network, placer: Placer, style: Style, scale: float
) -> None:
    """The distractor layers of the module docstring, in the style's amount."""
    rng = rng_for(network, "scenery")
    w, h, k = float(placed.width), float(placed.height), style.scenery
    lw = placed.line_width
    # street grid (partial lines), water, parks and muted lines: under everything
    step = max(w, h) / (10 + 4 * k)
    for i in range(1, int(w / step) + 1):
        if rng.random() < 0.6:
            y0, y1 = sorted((rng.uniform(0, h), rng.uniform(0, h)))
            placed.scenery.append(
                Shape("polyline", [(i * step, y0), (i * step, y1)], None, STREET, 0.35 * lw)
            )
    for j in range(1, int(h / step) + 1):
        if rng.random() < 0.6:
            x0, x1 = sorted((rng.uniform(0, w), rng.uniform(0, w)))
            placed.scenery.append(
                Shape("polyline", [(x0, j * step), (x1, j * step)], None, STREET, 0.35 * lw)
            )
    river = _walk(rng, w, h, 6)
    placed.scenery.append(Shape("polyline", river, None, WATER, min(w, h) * 0.025))
    cx, cy = float(rng.uniform(0.1, 0.9)) * w, float(rng.uniform(0.1, 0.9)) * h
    rx, ry = float(rng.uniform(0.04, 0.09)) * w, float(rng.uniform(0.03, 0.07)) * h
    placed.scenery.append(Shape("ellipse", [(cx - rx, cy - ry), (cx + rx, cy + ry)], WATER))
    for _ in range(round(3 * k)):
        cx, cy = float(rng.uniform(0.05, 0.95)) * w, float(rng.uniform(0.05, 0.95)) * h
        rx, ry = float(rng.uniform(0.03, 0.08)) * w, float(rng.uniform(0.03, 0.08)) * h
        kind = "ellipse" if rng.random() < 0.5 else "rect"
        placed.scenery.append(Shape(kind, [(cx - rx, cy - ry), (cx + rx, cy + ry)], PARK))
    if placed.scenario == "metromap":
        for i in range(round(2 * k)):
            pts = _walk(rng, w, h, 8)
            dash = (2.5 * lw, 1.5 * lw) if i % 2 else None
            placed.scenery.append(
                Shape("polyline", pts, None, MUTED[i % len(MUTED)], 0.5 * lw, dash)
            )
    # landmarks, street names, compass and inset: only where nothing is drawn
    r = 14.0 * scale
    for i in range(round(8 * k)):
        for _ in range(20):
            x, y = float(rng.uniform(0, w)), float(rng.uniform(0, h))
            box = Box(x - r, y - r, x + r, y + r)
            if _free(placer, box):
                placer.block(box, ("scenery", i))
                placed.scenery.extend(_pictogram(i % 4, x, y, r))
                break
    size = max(9, round(15 * scale))
    for name in _street_names(network, round(8 * k), rng):
        block = measure(name, size, str(network.meta.get("language") or "") or None)
        for _ in range(20):
            x, y = float(rng.uniform(0, w - block.width)), float(rng.uniform(0, h - block.height))
            box = Box(x, y, x + block.width, y + block.height)
            if _free(placer, box):
                placer.block(box.inflate(placer.pad), ("scenery", name))
                placed.scenery_labels.append(LabelBox(name, block, box, "scenery"))
                break
    _compass(placed, placer, scale)
    _inset(placed, placer, scale)


def _corners(w: float, h: float, bw: float, bh: float, m: float) -> list[Box]:
    return [
        Box(w - m - bw, m, w - m, m + bh),
        Box(m, m, m + bw, m + bh),
        Box(w - m - bw, h - m - bh, w - m, h - m),
        Box(m, h - m - bh, m + bw, h - m),
    ]


def _compass(placed: PlacedGeometry, placer: Placer, scale: float) -> None:
    r = 34.0 * scale
    block = measure("N", max(9, round(20 * scale)), None)
    for box in _corners(placed.width, placed.height, 2 * r, 2 * r + block.height, 40 * scale):
        if _free(placer, box):
            placer.block(box, ("scenery", "compass"))
            cx, cy = (box.x0 + box.x1) / 2, box.y1 - r
            placed.scenery.append(
                Shape(
                    "ellipse",
                    [(cx - r, cy - r), (cx + r, cy + r)],
                    "#FFFFFF",
                    "#777777",
                    2.0 * scale,
                )
            )
            placed.scenery.append(
                Shape(
                    "polygon",
                    [(cx, cy - r * 0.9), (cx + r * 0.3, cy), (cx - r * 0.3, cy)],
                    "#333333",
                )
            )
            placed.scenery.append(
                Shape(
                    "polygon",
                    [(cx, cy + r * 0.9), (cx + r * 0.3, cy), (cx - r * 0.3, cy)],
                    "#BBBBBB",
                )
            )
            top = Box(cx - block.width / 2, box.y0, cx + block.width / 2, box.y0 + block.height)
            placed.scenery_labels.append(LabelBox("compass", block, top, "scenery"))
            return


def _inset(placed: PlacedGeometry, placer: Placer, scale: float) -> None:
    """A small overview of the network in a free corner (no text in it)."""
    bw, bh = placed.width * 0.16, placed.height * 0.16
    pts = [p for s in placed.strokes for p in s.points]
    if not pts:
        return
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    f = min((bw * 0.85) / max(x1 - x0, 1.0), (bh * 0.85) / max(y1 - y0, 1.0))
    for box in _corners(placed.width, placed.height, bw, bh, 40 * scale)[::-1]:
        if _free(placer, box):
            placer.block(box, ("scenery", "inset"))
            placed.scenery.append(
                Shape(
                    "rect", [(box.x0, box.y0), (box.x1, box.y1)], "#FAFAFA", "#888888", 2.0 * scale
                )
            )
            ox, oy = box.x0 + bw * 0.075 - x0 * f, box.y0 + bh * 0.075 - y0 * f
            for s in placed.strokes:
                mini = [(ox + x * f, oy + y * f) for x, y in s.points]
                placed.scenery.append(
                    Shape("polyline", mini, None, s.color, max(1.0, s.width * f * 2))
                )
            return


def decorate(placed: PlacedGeometry, network: Network, style: Style, scale: float) -> None:
    """Apply the style's canvas, second-language labels and scenery (module docstring)."""
    placed.style = style.name
    if style.paper_size:
        fit_canvas(placed, target_size(network))
    placer = _placer(placed, 3.0 * scale)
    if bilingual(network, style):
        add_secondary_labels(placed, network, placer, scale)
    if style.furniture and placed.scenario == "metromap":
        add_furniture(placed, network, placer)
    elif style.scenery > 0:
        add_scenery(placed, network, placer, style, scale)
    if style.texture and placed.scenario == "travelmap":
        placed.texture = rng_for(network, "texture").getrandbits(31)


# ------------------------------------------------------------------------- hard metro maps

#: words in a station name that put an airport icon beside its label
AIRPORT_WORDS = (
    "airport", "flughafen", "aéroport", "aeropuerto", "aeroporto", "luchthaven", "lotnisko",
    "letiště", "repülőtér", "bandara", "机场", "機場", "空港", "공항", "аэропорт", "аеропорт",
    "αεροδρόμιο",
)  # fmt: skip
#: words in a station name that put a rail icon beside its label
RAIL_WORDS = (
    "station", "bahnhof", "hauptbahnhof", "gare", "estación", "stazione", "estação", "vokzal",
    "вокзал", "火车站", "駅", "역",
)  # fmt: skip
ICON_COLORS = {"airport": "#1F4E79", "rail": "#B3261E", "parking": "#1565C0"}


def add_furniture(placed: PlacedGeometry, network: Network, placer: Placer) -> None:
    """The real-map extras of a ``hard`` metro map (:mod:`maptab.render.furniture`): water and
    parks under the network, icons beside some station labels, regional-rail and
    under-construction lines with their own stations (names that match no table name), a
    compass and an inset map."""
    scale = placed.line_width / (LINE_WIDTH * fur.LINE_FACTOR)  # as placed, after any refit
    rng = rng_for(network, "furniture")
    w, h = float(placed.width), float(placed.height)
    under = [Shape("polyline", _walk(rng, w, h, 6), None, WATER, min(w, h) * 0.03)]
    for _ in range(1 + len(network.vertices) // 120):
        cx, cy = float(rng.uniform(0.1, 0.9)) * w, float(rng.uniform(0.1, 0.9)) * h
        rx, ry = float(rng.uniform(0.03, 0.07)) * w, float(rng.uniform(0.03, 0.06)) * h
        under.append(Shape("rect", [(cx - rx, cy - ry), (cx + rx, cy + ry)], PARK))
    panel = next((i for i, sh in enumerate(placed.scenery) if sh.fill == fur.PANEL), None)
    if panel is not None:  # nothing of the map's own goes on the legend panel
        (x0, y0), (x1, y1) = placed.scenery[panel].points
        placer.block(Box(x0, y0, x1, y1), ("legend", "panel"))
    add_icons(placed, network, placer, rng)
    add_other_lines(placed, network, placer, rng, scale, under)
    at = len(placed.scenery) if panel is None else panel
    placed.scenery[at:at] = under  # water, parks and other lines under the legend panel
    _compass(placed, placer, scale)
    _inset(placed, placer, scale)


def add_icons(placed: PlacedGeometry, network: Network, placer: Placer, rng: random.Random) -> int:
    """Airport, rail and parking icons right (else left) of some station labels: stations
    named like an airport or a railway station, and a few drawn at random. Returns how many."""
    n = 0
    for s in network.vertices:
        lab = placed.labels.get(s)
        if lab is None or lab.angle or lab.vertical:
            continue
        name = network.label(s).casefold()
        r = rng.random()
        if any(word in name for word in AIRPORT_WORDS):
            kind = "airport"
        elif any(word in name for word in RAIL_WORDS) or r < 0.04:
            kind = "rail"
        elif r < 0.09:
            kind = "parking"
        else:
            continue
        side = lab.block.height * 1.05
        gap = 2 * placer.pad + 2
        y = (lab.box.y0 + lab.box.y1 - side) / 2
        for x in (lab.box.x1 + gap, lab.box.x0 - gap - side):
            box = Box(x, y, x + side, y + side)
            if _free(placer, box):
                placer.block(box.inflate(placer.pad), ("scenery", f"icon:{s}"))
                placed.scenery.extend(icon(kind, box))
                n += 1
                break
    return n


def icon(kind: str, box: Box) -> list[Shape]:
    """A station icon filling ``box``: a coloured square with a white plane, train or P."""
    x0, y0, x1, y1 = box.x0, box.y0, box.x1, box.y1
    s = x1 - x0
    out = [Shape("rect", [(x0, y0), (x1, y1)], ICON_COLORS[kind])]

    def at(u: float, v: float) -> Point:
        return (x0 + u * s, y0 + v * s)

    white = "#FFFFFF"
    if kind == "airport":  # a plane seen from above, nose up
        plane = [(0.5, 0.12), (0.56, 0.4), (0.88, 0.56), (0.88, 0.63), (0.56, 0.55),
                 (0.54, 0.76), (0.64, 0.84), (0.64, 0.89), (0.5, 0.85), (0.36, 0.89),
                 (0.36, 0.84), (0.46, 0.76), (0.44, 0.55), (0.12, 0.63), (0.12, 0.56),
                 (0.44, 0.4)]  # fmt: skip
        out.append(Shape("polygon", [at(u, v) for u, v in plane], white))
    elif kind == "rail":  # a train's front: body, window, lamps
        out.append(Shape("rect", [at(0.25, 0.15), at(0.75, 0.72)], white))
        out.append(Shape("rect", [at(0.32, 0.24), at(0.68, 0.45)], ICON_COLORS[kind]))
        out.append(
            Shape("polygon", [at(0.3, 0.72), at(0.4, 0.72), at(0.25, 0.9), at(0.15, 0.9)], white)
        )
        out.append(
            Shape("polygon", [at(0.6, 0.72), at(0.7, 0.72), at(0.85, 0.9), at(0.75, 0.9)], white)
        )
    else:  # parking: a white P
        out.append(Shape("ellipse", [at(0.3, 0.16), at(0.74, 0.56)], white))
        out.append(Shape("ellipse", [at(0.43, 0.27), at(0.6, 0.45)], ICON_COLORS[kind]))
        out.append(Shape("rect", [at(0.3, 0.16), at(0.44, 0.86)], white))
    return out


def add_other_lines(
    placed: PlacedGeometry,
    network: Network,
    placer: Placer,
    rng: random.Random,
    scale: float,
    under: list[Shape],
) -> int:
    """Regional-rail lines (grey, white dashes; ``1 + stations // 100`` of them, with up to
    ``4 + stations // 40`` stops each) and lines under construction (dashed, in a colour no
    table line has; ``1 + stations // 150``, up to ``2 + stations // 80`` stops) across the
    map, each stop drawn where it and its label find a free place. The lines go to
    ``under`` (drawn under the legend), the stops to ``placed``. Returns how many stops were
    drawn."""
    n = len(network.vertices)
    regional, planned = 1 + n // 100, 1 + n // 150
    lang = fur.language(network)
    stops_of = [4 + n // 40 if i < regional else 2 + n // 80 for i in range(regional + planned)]
    drawn = [lab.block.text for lab in placed.labels.values()]
    names = fur.distractor_names(network, sum(stops_of) + 4, "other-lines", drawn)
    used = set(line_colors(network).values())
    spare = [c for c in PALETTE if c not in used] or ["#9E9E9E"]
    lengths = sorted(math.dist(p[0], p[-1]) for p in placed.edge_paths.values() if len(p) >= 2)
    spacing = 1.5 * (lengths[len(lengths) // 2] if lengths else 120.0 * scale)
    size = round(fur.OTHER_STATION_SIZE * FONT_PX * scale)
    lw = placed.line_width
    count = 0
    for i in range(regional + planned):
        is_rail = i < regional
        path = fur.rounded(_octilinear_walk(rng, placed.width, placed.height), 4 * lw)
        color = fur.RAIL if is_rail else spare[i % len(spare)]
        shapes = fur.rail_shapes(path, lw) if is_rail else fur.planned_shapes(path, color, lw)
        under.extend(shapes)
        stops = stops_of[i]
        for p, d in _along(path, spacing, rng.uniform(0.3, 0.9) * spacing):
            if stops <= 0 or not names:
                break
            if _other_station(placed, placer, p, d, names[0], color, size, lang, lw, is_rail):
                names.pop(0)
                stops -= 1
                count += 1
    return count


def _other_station(
    placed: PlacedGeometry,
    placer: Placer,
    p: Point,
    d: Point,
    name: str,
    color: str,
    size: int,
    lang: str | None,
    lw: float,
    rail: bool,
) -> bool:
    """A station of a line not in the tables at ``p`` with its label, if both are free."""
    r = lw * 0.62
    mark = Box(p[0] - r, p[1] - r, p[0] + r, p[1] + r)
    if not _free(placer, mark):
        return False
    block = measure(name, size, lang)
    sides = preferred_sides(p, [(p[0] + d[0], p[1] + d[1]), (p[0] - d[0], p[1] - d[1])])
    for box, blk in label_candidates(p, r + 3.0, block, sides, (1.0, 1.6), placer.pad):
        if _free(placer, box):
            placer.block(mark.inflate(placer.pad), ("scenery", f"stop:{name}"))
            placer.block(box.inflate(placer.pad), ("scenery", name))
            outline = fur.RAIL if rail else color
            placed.scenery.append(
                Shape(
                    "ellipse",
                    [(mark.x0, mark.y0), (mark.x1, mark.y1)],
                    "#FFFFFF",
                    outline,
                    lw * 0.3,
                )
            )
            ink = fur.OTHER_INK if rail else fur.PLANNED_INK
            placed.scenery_labels.append(fur.Styled(name, blk, box, "scenery", color=ink))
            return True
    return False


def _octilinear_walk(rng: random.Random, w: float, h: float) -> list[Point]:
    """A path of 45° multiples from one side of the canvas inwards, turning now and then,
    until it leaves the canvas (clipped to it)."""
    side = rng.randrange(4)
    t = float(rng.uniform(0.15, 0.85))
    start, heading = [((0.0, t * h), 0), ((w, t * h), 4), ((t * w, 0.0), 2), ((t * w, h), 6)][side]
    pts = [start]
    cur, head = start, heading
    for _ in range(12):
        step = float(rng.uniform(0.12, 0.3)) * min(w, h)
        a = math.radians(head * 45)
        nxt = (cur[0] + math.cos(a) * step, cur[1] + math.sin(a) * step)
        pts.append(nxt)
        cur = nxt
        if not (0 <= cur[0] <= w and 0 <= cur[1] <= h):
            break
        turn = rng.choice((-1, 0, 0, 1))
        if abs(((head + turn - heading + 4) % 8) - 4) <= 1:
            head = (head + turn) % 8
    last = pts[-1]
    pts[-1] = (min(max(last[0], 0.0), w), min(max(last[1], 0.0), h))
    return pts


def _along(path: list[Point], spacing: float, first: float) -> list[tuple[Point, Point]]:
    """Points every ``spacing`` px along ``path`` (the first ``first`` px in), each with the
    path's unit direction there."""
    out = []
    want = first
    walked = 0.0
    for a, b in zip(path, path[1:], strict=False):
        seg = math.dist(a, b)
        if seg < 1e-9:
            continue
        d = ((b[0] - a[0]) / seg, (b[1] - a[1]) / seg)
        while want <= walked + seg:
            t = want - walked
            out.append(((a[0] + d[0] * t, a[1] + d[1] * t), d))
            want += spacing
        walked += seg
    return out
