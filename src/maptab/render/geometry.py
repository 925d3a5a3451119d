"""Placed geometry: the renderer's record of what it drew and where (SPEC 15).

Every drawing backend (PNG, SVG) and every check (:mod:`maptab.render.legibility`) and the
route overlay read the same :class:`PlacedGeometry`, so a check passes only for what was
actually drawn. Coordinates are image pixels, ``y`` downwards.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from maptab.render.text import TextBlock

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Box:
    """An axis-aligned rectangle ``[x0, x1] × [y0, y1]`` in pixels."""

    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        """True when the interiors intersect (touching edges do not count)."""
        return (
            self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1
        )

    def inflate(self, d: float) -> Box:
        return Box(self.x0 - d, self.y0 - d, self.x1 + d, self.y1 + d)

    def inside(self, width: float, height: float) -> bool:
        return self.x0 >= 0 and self.y0 >= 0 and self.x1 <= width and self.y1 <= height

    @property
    def center(self) -> Point:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    def hits_segment(self, a: Point, b: Point) -> bool:
        """True when segment ``a``–``b`` meets the box (Liang–Barsky clipping)."""
        t0, t1 = 0.0, 1.0
        dx, dy = b[0] - a[0], b[1] - a[1]
        for p, q in (
            (-dx, a[0] - self.x0),
            (dx, self.x1 - a[0]),
            (-dy, a[1] - self.y0),
            (dy, self.y1 - a[1]),
        ):
            if p == 0:
                if q < 0:
                    return False
                continue
            t = q / p
            if p < 0:
                t0 = max(t0, t)
            else:
                t1 = min(t1, t)
            if t0 > t1:
                return False
        return True


class GridIndex:
    """A uniform grid hash of boxes: the spatial index used for collision checks."""

    def __init__(self, cell: float = 64.0) -> None:
        self.cell = cell
        self._cells: dict[tuple[int, int], list[int]] = defaultdict(list)
        self.items: list[tuple[Box, object]] = []
        self._removed: set[int] = set()

    def _keys(self, box: Box) -> Iterator[tuple[int, int]]:
        c = self.cell
        for i in range(math.floor(box.x0 / c), math.floor(box.x1 / c) + 1):
            for j in range(math.floor(box.y0 / c), math.floor(box.y1 / c) + 1):
                yield i, j

    def insert(self, box: Box, item: object) -> int:
        """Add ``box``; the returned handle can :meth:`remove` it again."""
        idx = len(self.items)
        self.items.append((box, item))
        for k in self._keys(box):
            self._cells[k].append(idx)
        return idx

    def remove(self, handle: int) -> None:
        """Forget the box that :meth:`insert` returned ``handle`` for."""
        self._removed.add(handle)

    def query(self, box: Box) -> list[tuple[Box, object]]:
        """Items whose box overlaps ``box`` (each once)."""
        seen: set[int] = set()
        out = []
        for k in self._keys(box):
            for idx in self._cells.get(k, ()):
                if idx not in seen and idx not in self._removed:
                    seen.add(idx)
                    b, item = self.items[idx]
                    if b.overlaps(box):
                        out.append((b, item))
        return out


@dataclass(slots=True)
class StationMark:
    """A drawn station: ``style`` is ``dot``, ``ring`` (transfer) or ``spot`` (scenic)."""

    station: str
    center: Point
    radius: float
    style: str
    color: str
    outline: float

    @property
    def box(self) -> Box:
        r = self.radius + self.outline / 2
        return Box(self.center[0] - r, self.center[1] - r, self.center[0] + r, self.center[1] + r)


@dataclass(slots=True)
class LabelBox:
    """A drawn text: its owner (station key, edge name or line name) and ink box."""

    owner: str
    block: TextBlock
    box: Box
    kind: str = "station"  # station | annotation | legend | title
    frame: str | None = None  # outline colour of a boxed label (annotations)
    halo: bool = False  # drawn with a halo in the background colour (it crosses a stroke)

    @property
    def angle(self) -> int:
        """Degrees the text is turned anticlockwise (0, 90, 45, -45); ``box`` holds the turned
        ink (:func:`maptab.render.text.footprint`)."""
        return self.block.angle

    @property
    def vertical(self) -> bool:
        """True when the glyphs are set one under another (CJK labels)."""
        return self.block.vertical


@dataclass(slots=True)
class Stroke:
    """A drawn polyline (one line's chain, or one scenic path)."""

    key: str
    points: list[Point]
    color: str
    width: float
    dash: tuple[float, float] | None = None
    casing: str | None = None  # colour of an outline drawn under the stroke


@dataclass(slots=True)
class Shape:
    """A scenery shape drawn under the network (water, park, pictogram, street, compass…):
    ``kind`` is ``polygon``, ``polyline``, ``ellipse`` (``points`` = two corners) or ``rect``."""

    kind: str
    points: list[Point]
    fill: str | None = None
    outline: str | None = None
    width: float = 1.0
    dash: tuple[float, float] | None = None


@dataclass(slots=True)
class LegendEntry:
    """One legend row: a swatch drawn like the strokes it explains, and its text."""

    name: str
    swatch: Stroke
    label: LabelBox


@dataclass(slots=True)
class PlacedGeometry:
    """Everything a map image contains, in drawing order, with pixel coordinates."""

    width: int
    height: int
    scenario: str
    background: str
    line_width: float
    strokes: list[Stroke] = field(default_factory=list)
    stations: dict[str, StationMark] = field(default_factory=dict)
    labels: dict[str, LabelBox] = field(default_factory=dict)
    annotations: dict[str, LabelBox] = field(default_factory=dict)
    legend: list[LegendEntry] = field(default_factory=list)
    title: LabelBox | None = None
    #: centre path per station pair (``tuple(sorted((u, v)))``), used by the route overlay
    edge_paths: dict[tuple[str, str], list[Point]] = field(default_factory=dict)
    #: stations whose label could not be placed clear of every obstacle
    crowded: list[str] = field(default_factory=list)
    #: the render style (:mod:`maptab.render.style`) and what it added: scenery under the
    #: network, scenery texts (street names, compass letter), second-language station labels,
    #: a background texture seed
    style: str = "clean"
    scenery: list[Shape] = field(default_factory=list)
    scenery_labels: list[LabelBox] = field(default_factory=list)
    secondary: dict[str, LabelBox] = field(default_factory=dict)
    texture: int | None = None

    def lines_drawn(self) -> set[str]:
        """Line names (metro) or edge names (scenic) with at least one stroke."""
        return {s.key for s in self.strokes}

    def all_labels(self) -> list[LabelBox]:
        """Station labels, edge annotations, legend texts and the title."""
        out = [*self.labels.values(), *self.annotations.values()]
        out += [*self.secondary.values(), *self.scenery_labels]
        out += [e.label for e in self.legend]
        if self.title is not None:
            out.append(self.title)
        return out


# ------------------------------------------------------------------- polyline geometry
def octilinear_route(a: Point, b: Point) -> list[Point]:
    """``a`` → ``b`` with segments at multiples of 45°.

    A pair already at such an angle is joined straight; otherwise the path runs straight,
    then diagonally across the shorter extent, then straight again (halves of the remainder
    at each end), the usual metro-map bend.
    """
    dx, dy = b[0] - a[0], b[1] - a[1]
    adx, ady = abs(dx), abs(dy)
    if adx < 1e-9 or ady < 1e-9 or abs(adx - ady) < 1e-6 * max(adx, ady):
        return [a, b]
    sx, sy = math.copysign(1, dx), math.copysign(1, dy)
    if adx > ady:
        half = (adx - ady) / 2
        p1 = (a[0] + sx * half, a[1])
        p2 = (b[0] - sx * half, b[1])
    else:
        half = (ady - adx) / 2
        p1 = (a[0], a[1] + sy * half)
        p2 = (b[0], b[1] - sy * half)
    return [a, p1, p2, b]


def offset_polyline(points: Sequence[Point], d: float) -> list[Point]:
    """The polyline shifted ``d`` px to its left (mitred joins), same number of points."""
    if d == 0 or len(points) < 2:
        return list(points)
    normals = []
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        length = math.hypot(x1 - x0, y1 - y0) or 1.0
        normals.append(((y0 - y1) / length, (x1 - x0) / length))
    out = []
    for i, (x, y) in enumerate(points):
        if i == 0:
            nx, ny = normals[0]
        elif i == len(points) - 1:
            nx, ny = normals[-1]
        else:
            (ax, ay), (bx, by) = normals[i - 1], normals[i]
            mx, my = ax + bx, ay + by
            dot = mx * ax + my * ay
            if abs(dot) < 1e-9:
                nx, ny = ax, ay
            else:
                nx, ny = mx / dot, my / dot
        out.append((x + nx * d, y + ny * d))
    return out


def dedupe(points: Iterable[Point]) -> list[Point]:
    """Drop consecutive repeated points."""
    out: list[Point] = []
    for p in points:
        if not out or math.dist(out[-1], p) > 1e-6:
            out.append(p)
    return out


def segments_cross(a: Point, b: Point, c: Point, d: Point) -> bool:
    """True when segments ``ab`` and ``cd`` properly cross (interiors meet at one point)."""

    def orient(p: Point, q: Point, r: Point) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    o1, o2 = orient(a, b, c), orient(a, b, d)
    o3, o4 = orient(c, d, a), orient(c, d, b)
    return o1 * o2 < 0 and o3 * o4 < 0


# ------------------------------------------------------------------- canvas
@dataclass(frozen=True, slots=True)
class Frame:
    """Map units → pixels: ``x`` right, ``y`` up in map units; ``y`` down in the image."""

    ppu: float
    min_x: float
    max_y: float
    margin: float
    map_width: float
    map_height: float

    def __call__(self, p: Point) -> Point:
        return (
            self.margin + (p[0] - self.min_x) * self.ppu,
            self.margin + (self.max_y - p[1]) * self.ppu,
        )


def fit_frame(
    positions: dict[str, Point],
    pairs: Iterable[tuple[str, str]],
    *,
    edge_px: float,
    min_gap_px: float,
    margin: float,
    max_side: float,
) -> Frame:
    """Scale the map so its median edge is ``edge_px`` long and no two stations are closer
    than ``min_gap_px`` (as far as ``max_side`` allows)."""
    xs = [p[0] for p in positions.values()] or [0.0]
    ys = [p[1] for p in positions.values()] or [0.0]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
    lengths = sorted(
        math.dist(positions[u], positions[v])
        for u, v in pairs
        if u in positions and v in positions and positions[u] != positions[v]
    )
    unit = lengths[len(lengths) // 2] if lengths else span / max(1.0, math.sqrt(len(xs)))
    ppu = edge_px / (unit or 1.0)
    closest = _closest_pair_distance(list(positions.values()))
    if closest > 0:
        ppu = max(ppu, min_gap_px / closest)
    ppu = min(ppu, max_side / span)
    return Frame(
        ppu,
        min(xs),
        max(ys),
        margin,
        (max(xs) - min(xs)) * ppu,
        (max(ys) - min(ys)) * ppu,
    )


def density_edge_px(
    positions: dict[str, Point], pairs: Iterable[tuple[str, str]], station_area_px: float
) -> float:
    """The median-edge length (px) at which the map's bounding box gives each station
    ``station_area_px`` square pixels (a thin map counts one median edge across)."""
    pts = list(positions.values())
    lengths = sorted(
        math.dist(positions[u], positions[v])
        for u, v in pairs
        if u in positions and v in positions and positions[u] != positions[v]
    )
    if not pts or not lengths:
        return math.inf
    unit = lengths[len(lengths) // 2]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    area = max(max(xs) - min(xs), unit) * max(max(ys) - min(ys), unit)
    return unit * math.sqrt(len(pts) * station_area_px / area)


def _closest_pair_distance(points: list[Point]) -> float:
    """Smallest distance between two distinct points (grid-bucketed, near-linear)."""
    if len(points) < 2:
        return 0.0
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
    cell = span / math.sqrt(len(points))
    buckets: dict[tuple[int, int], list[Point]] = defaultdict(list)
    for p in points:
        buckets[(int(p[0] // cell), int(p[1] // cell))].append(p)
    best = math.inf
    for (i, j), pts in buckets.items():
        near = [
            q for di in (-1, 0, 1) for dj in (-1, 0, 1) for q in buckets.get((i + di, j + dj), ())
        ]
        for p in pts:
            for q in near:
                d = math.dist(p, q)
                if 0 < d < best:
                    best = d
    if best == math.inf:  # no pair within one cell of each other
        best = cell
    return best
