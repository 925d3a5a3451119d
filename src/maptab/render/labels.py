"""Greedy label placement with collision checks on a grid hash (SPEC 15).

Each label tries candidate boxes in order of preference. A candidate is *feasible* when it
lies inside the image and overlaps no station mark and no label already placed (hard
obstacles); among feasible candidates the cheapest wins, where cost = preference rank +
``LINE_PENALTY`` × number of stroke segments the box crosses (soft obstacles). When no
candidate is feasible, the candidate touching the fewest hard obstacles is used and the
owner is reported as crowded (the legibility check then names it).

:func:`repair` then gives each crowded label a second chance: a candidate of it that is
blocked by exactly one other label, and nothing else, is taken when that label can move to
a feasible candidate of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from maptab.render.geometry import (
    Box,
    GridIndex,
    LabelBox,
    LegendEntry,
    PlacedGeometry,
    Point,
    StationMark,
    Stroke,
)
from maptab.render.text import TextBlock, footprint

LINE_PENALTY = 8.0

#: unit directions of the eight candidate positions around a point
DIRECTIONS: dict[str, tuple[int, int]] = {
    "E": (1, 0),
    "W": (-1, 0),
    "N": (0, -1),
    "S": (0, 1),
    "NE": (1, -1),
    "SE": (1, 1),
    "NW": (-1, -1),
    "SW": (-1, 1),
}


@dataclass
class Placer:
    """Collision state for one image: hard boxes and soft stroke segments."""

    width: float
    height: float
    pad: float
    hard: GridIndex
    soft: GridIndex

    @classmethod
    def for_image(
        cls, width: float, height: float, marks: Iterable[StationMark], strokes: Iterable[Stroke]
    ) -> Placer:
        placer = cls(width, height, 0.0, GridIndex(96.0), GridIndex(96.0))
        for m in marks:
            placer.hard.insert(m.box, ("station", m.station))
        for s in strokes:
            half = s.width / 2
            for a, b in zip(s.points, s.points[1:], strict=False):
                box = Box(min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1]))
                placer.soft.insert(box.inflate(half), (a, b, half))
        return placer

    def block(self, box: Box, owner: object) -> int:
        """Mark ``box`` as taken (a placed label, a legend); returns a handle for :meth:`free`."""
        return self.hard.insert(box, owner)

    def free(self, handle: int) -> None:
        """Give back a box taken by :meth:`block`."""
        self.hard.remove(handle)

    def is_free(self, box: Box) -> bool:
        """True when ``box`` (padded) lies inside the image and touches no hard obstacle."""
        padded = box.inflate(self.pad)
        return padded.inside(self.width, self.height) and not self.hard.query(padded)

    def line_hits(self, box: Box) -> int:
        """Number of stroke segments that ``box`` touches."""
        hits = 0
        for _, (a, b, half) in self.soft.query(box):
            if box.inflate(half).hits_segment(a, b):
                hits += 1
        return hits

    def choose(self, candidates: Sequence[Box]) -> tuple[Box, bool]:
        """The best candidate box and whether it is collision-free (nothing is recorded)."""
        rank, ok = self.pick(candidates)
        return candidates[rank], ok

    def pick(self, candidates: Sequence[Box]) -> tuple[int, bool]:
        """Index of the best candidate (module docstring) and whether it is collision-free."""
        best: tuple[float, int] | None = None
        fallback: tuple[int, int] | None = None
        for rank, box in enumerate(candidates):
            padded = box.inflate(self.pad)
            if not padded.inside(self.width, self.height):
                continue
            hard = len(self.hard.query(padded))
            if hard:
                if fallback is None or hard < fallback[0]:
                    fallback = (hard, rank)
                continue
            cost = rank + LINE_PENALTY * self.line_hits(box)
            if best is None or cost < best[0]:
                best = (cost, rank)
                if cost == 0:
                    break
        if best is not None:
            return best[1], True
        if fallback is not None:
            return fallback[1], False
        return 0, False


Candidate = tuple[Box, TextBlock]
#: a tier of candidates, or a function that makes it (called only when the tier is reached)
Tier = list[Candidate] | Callable[[], list[Candidate]]


@dataclass
class LabelSlot:
    """A placed label: its candidate tiers (boxes with the text each would show, tried tier by
    tier), the chosen box and text, whether it is collision-free, and its handle."""

    owner: str
    tiers: list[Tier]
    box: Box
    block: TextBlock
    ok: bool
    handle: int = field(default=-1)

    def tier(self, k: int) -> list[Candidate]:
        """Tier ``k``, made (once) if it was given as a function."""
        return _resolve(self.tiers, k)

    def all_tiers(self) -> Iterator[list[Candidate]]:
        return (self.tier(k) for k in range(len(self.tiers)))


def _resolve(tiers: list[Tier], k: int) -> list[Candidate]:
    t = tiers[k]
    if callable(t):
        t = tiers[k] = t()
    return t


def place_label(placer: Placer, owner: str, tiers: list[Tier]) -> LabelSlot:
    """Place a label greedily: the best box of the first tier with a free one, else the first
    tier's least-blocked box (crowded); the box is recorded in ``placer``. A tier given as a
    function is made only when reached (a smaller font is measured only if needed)."""
    slot: LabelSlot | None = None
    for k in range(len(tiers)):
        tier = _resolve(tiers, k)
        if not tier:
            continue
        i, ok = placer.pick([b for b, _ in tier])
        if ok:
            slot = LabelSlot(owner, tiers, *tier[i], True)
            break
        if slot is None:
            slot = LabelSlot(owner, tiers, *tier[i], False)
    assert slot is not None
    slot.handle = placer.block(slot.box.inflate(placer.pad), ("label", owner))
    return slot


def repair(placer: Placer, slots: dict[str, LabelSlot]) -> None:
    """Second chance for crowded labels (module docstring); ``slots`` is updated in place."""
    for slot in slots.values():
        if slot.ok:
            continue
        placer.free(slot.handle)
        moved = any(
            _move_blocker(placer, slots, slot, box, block)
            for tier in slot.all_tiers()
            for box, block in tier
        )
        if not moved:
            slot.handle = placer.block(slot.box.inflate(placer.pad), ("label", slot.owner))


def record_station_labels(
    placer: Placer,
    slots: dict[str, LabelSlot],
    placed: PlacedGeometry,
    make: Callable[[LabelSlot, bool], LabelBox] | None = None,
) -> None:
    """:func:`repair` the slots, then record each as a station label of ``placed`` (with a
    halo where it touches a stroke; ``make(slot, halo)`` builds it when given) and list the
    still-crowded ones in ``placed.crowded``."""
    repair(placer, slots)
    for s, slot in slots.items():
        if not slot.ok:
            placed.crowded.append(s)
        halo = placer.line_hits(slot.box.inflate(placer.pad * 2)) > 0
        if make is not None:
            placed.labels[s] = make(slot, halo)
        else:
            placed.labels[s] = LabelBox(s, slot.block, slot.box, "station", halo=halo)


def _move_blocker(
    placer: Placer, slots: dict[str, LabelSlot], slot: LabelSlot, box: Box, block: TextBlock
) -> bool:
    padded = box.inflate(placer.pad)
    if not padded.inside(placer.width, placer.height):
        return False
    owners = {owner for _, owner in placer.hard.query(padded)}
    if len(owners) != 1:
        return False
    kind, name = next(iter(owners))  # type: ignore[misc]
    other = slots.get(name) if kind == "label" else None
    if other is None or other is slot:
        return False
    placer.free(other.handle)
    handle = placer.block(padded, ("label", slot.owner))
    for tier in other.all_tiers():
        i, ok = placer.pick([b for b, _ in tier])
        if ok:
            other.box, other.block = tier[i]
            other.handle = placer.block(other.box.inflate(placer.pad), ("label", other.owner))
            slot.box, slot.block, slot.ok, slot.handle = box, block, True, handle
            return True
    placer.free(handle)
    other.handle = placer.block(other.box.inflate(placer.pad), ("label", other.owner))
    return False


def add_legend_entry(
    placed: PlacedGeometry, placer: Placer, swatch: Stroke, block: TextBlock, x: float, mid: float
) -> Box:
    """Add a legend row: ``swatch`` and its text starting at ``x``, centred on ``mid``; the
    text box is marked taken in ``placer`` and returned."""
    box = Box(x, mid - block.height / 2, x + block.width, mid + block.height / 2)
    placer.block(box, ("legend", swatch.key))
    placed.legend.append(
        LegendEntry(swatch.key, swatch, LabelBox(swatch.key, block, box, "legend"))
    )
    return box


@dataclass(frozen=True, slots=True)
class Extent:
    """A width and a height: the footprint of a label as drawn."""

    width: float
    height: float


#: sides a label turned by ±45° may take, so that it runs away from its station: text
#: reading up to the right starts above-right of the station (or ends below-left of it)
DIAGONAL_SIDES: dict[int, tuple[str, ...]] = {45: ("NE", "SW"), -45: ("SE", "NW")}
#: a diagonal label's box corner sits this much closer in (its ink starts inside the corner)
DIAGONAL_GAP = 0.7


def label_candidates(
    center: Point,
    gap: float,
    block: TextBlock,
    sides: Sequence[str],
    factors: Sequence[float] = (1.0,),
    pad: float = 0.0,
) -> list[tuple[Box, TextBlock]]:
    """Candidate boxes for ``block`` around ``center``, ``gap × f + pad`` px away for each
    factor ``f``, each box
    the label's extent as drawn (:func:`maptab.render.text.footprint`): level, a quarter turn,
    ±45° (only on the two sides it runs away from the station) or stacked vertically."""
    w, h = footprint(block)
    shape = Extent(w, h)
    order: Sequence[str] = sides
    if block.angle in DIAGONAL_SIDES:
        keep = DIAGONAL_SIDES[block.angle]
        order = [d for d in sides if d in keep]
        gap *= DIAGONAL_GAP
    return [
        (box, block) for f in factors for box in around_point(center, gap * f + pad, shape, order)
    ]


def ink_boxes(box: Box, block: TextBlock) -> list[Box]:
    """Small boxes covering the ink of a label drawn in ``box``: the box itself, or for a
    label turned ±45° a chain of squares along its slanted text line (its box's corners are
    empty)."""
    if block.angle in (0, 90, -90) or block.vertical:
        return [box]
    a = math.radians(block.angle)
    ux, uy = math.cos(a), -math.sin(a)  # the text's direction in the image (y down)
    h = block.height
    half = h * abs(math.cos(a)) / 2 + h * abs(math.sin(a)) / 2  # half-side of a turned square
    cx, cy = box.center
    n = max(1, math.ceil(block.width / h))
    step = (block.width - h) / (n - 1) if n > 1 else 0.0
    out = []
    for i in range(n):
        t = -block.width / 2 + h / 2 + i * step
        x, y = cx + ux * t, cy + uy * t
        out.append(Box(x - half, y - half, x + half, y + half))
    return out


def off_the_lines(placer: Placer, tier: list[tuple[Box, TextBlock]]) -> list[tuple[Box, TextBlock]]:
    """The candidates whose ink (:func:`ink_boxes`) touches no stroke: a turned, diagonal or
    stacked label is only drawn clear of the lines (else the level label is used)."""
    return [
        (box, block)
        for box, block in tier
        if not any(placer.line_hits(b) for b in ink_boxes(box, block))
    ]


def around_point(
    center: Point, gap: float, block: TextBlock | Extent, order: Sequence[str]
) -> list[Box]:
    """Candidate boxes for a label beside ``center``, ``gap`` px away, in ``order``."""
    cx, cy = center
    w, h = block.width, block.height
    out = []
    for name in order:
        dx, dy = DIRECTIONS[name]
        x0 = cx - w / 2 if dx == 0 else (cx + gap if dx > 0 else cx - gap - w)
        y0 = cy - h / 2 if dy == 0 else (cy + gap if dy > 0 else cy - gap - h)
        out.append(Box(x0, y0, x0 + w, y0 + h))
    return out


def preferred_sides(center: Point, neighbours: Iterable[Point]) -> list[str]:
    """Candidate order for a station: sides away from its track first.

    A station whose track runs mostly horizontally prefers above/below; vertically, right
    and left; diagonally, the two perpendicular diagonals.
    """
    hx = hy = d1 = d2 = 0.0
    for nx, ny in neighbours:
        dx, dy = abs(nx - center[0]), abs(ny - center[1])
        if dx > 2 * dy:
            hx += 1
        elif dy > 2 * dx:
            hy += 1
        elif (nx - center[0]) * (ny - center[1]) > 0:
            d1 += 1  # "\" diagonal on screen
        else:
            d2 += 1  # "/" diagonal
    best = max(hx, hy, d1, d2)
    if best == 0 or best == hy:
        order = ["E", "W", "NE", "SE", "NW", "SW", "N", "S"]
    elif best == hx:
        order = ["N", "S", "NE", "SE", "NW", "SW", "E", "W"]
    elif best == d1:
        order = ["NE", "SW", "E", "W", "N", "S", "SE", "NW"]
    else:
        order = ["SE", "NW", "E", "W", "N", "S", "NE", "SW"]
    return order
