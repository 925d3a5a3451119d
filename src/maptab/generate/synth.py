"""Synthetic networks with geometry: metro systems and scenic areas (SPEC 1).

**Metro systems** (:func:`synth_metro`) are grown on an octilinear grid. Every station sits
on an integer grid point (x to the right, y downward as in an image) and every edge is a
straight run of 1–3 grid units (:data:`_SPACING`) in one of the eight compass directions,
so lines run horizontally, vertically or diagonally and bend by 45°. Because station
spacing varies, the station count of a route is not its grid length, and geometrically
equal detours rarely have equally many stations: tied fewest-stations routes stay at the
level of real networks. Lines are added one at a time:

* line 0 is a path grown in both directions from the origin;
* every later line passes through an existing station near the middle of the network (its
  *anchor*, which becomes a transfer station), so the network is connected by construction
  and shortest paths stay short; a *shared-segment* line instead runs along 1–3
  consecutive edges of an earlier line (parallel edges with different lines) and then
  leaves it, a *trunk* line along 5–40 of them (from a terminus of the earlier line: the
  two share it and fork, a Y; or from an inner station) and a *tee* line starts at an
  earlier line (at a terminus where there is one: two dead ends fewer) about half its
  length from the middle and heads for the middle;
* a *loop line* is an axis-aligned rectangle with 45° chamfered corners (unit steps) through
  an existing station; its first and last station coincide (SPEC 1);
* a *branched line* forks at an inner station into a second arm (the line's edges form a
  tree, which :meth:`Network.line_stations` walks depth first).

A step may land on another line's station (a further transfer) but never on its own line
(lines stay simple), never along an existing edge except inside a requested shared
segment or trunk (so ``shared_segments`` and ``trunks`` count exactly the shared runs), and
never along another line's track; it may cross another line's track between stations (no
interchange there). Stations are never placed on the same point or on track. The station
count is exact: each line gets a budget of new stations, unused budget is spent by
extending line ends evenly. Last, a dead end may go one step further onto a station of
another line (:func:`_join_ends`; preferring another line's terminus), closing a cycle.
An attempt that cannot meet the spec (a walk boxed in, no room for a loop) is redrawn from
the same generator, and of up to twenty grown networks the first whose shortest paths are
within real ranges (:func:`_hop_excess`) is kept, so the result is still a pure function
of ``(spec, seed)``.

**Scenic areas** (:func:`synth_scenic`) place spots with a minimum spacing, join them by
the Euclidean minimum spanning tree of their Delaunay triangulation (planar: no crossing
roads), add ``extra_edges`` short Delaunay edges (each closes one independent cycle;
chords at the tree's leaves first, so few dead ends remain), then attach ``spurs``
dead-end paths of 1–3 spots pointing outward. Some maps carry time or distance
annotations on part of their edges; every edge has a rendering mode (walk/drive).

The language mix and the size presets of :func:`sample_metro_spec` /
:func:`sample_scenic_spec` (fitted to real networks) are documented in
``docs/reference/synthesis.md``.
"""

from __future__ import annotations

import colorsys
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path
from scipy.spatial import Delaunay

from maptab.core.network import Edge, Network, Vertex, table_name
from maptab.errors import MaptabError
from maptab.generate.names import (
    HUB_KINDS,
    LANGUAGES,
    hub_names,
    line_names,
    spot_names,
    station_names,
)

Size = Literal["small", "medium", "large"]
SIZES: tuple[Size, ...] = ("small", "medium", "large")

#: Map language weights (image language, after the MapTab paper, appendix G.4: Chinese most
#: frequent, then English; metro maps are drawn in many languages, travel maps in few).
METRO_LANGUAGE_WEIGHTS: dict[str, float] = {
    "zh": 0.36,
    "en": 0.23,
    "ja": 0.05,
    "ko": 0.04,
    "fr": 0.03,
    "de": 0.03,
    "es": 0.03,
    "ru": 0.03,
    "ar": 0.02,
    "th": 0.02,
    # one map in a hundred each: with the ten above, 26 languages in 14 scripts (the paper
    # covers 28 languages)
    **dict.fromkeys(
        ("it", "pt", "nl", "pl", "cs", "hu", "id", "el", "uk", "he", "fa", "hi", "bn", "ka")
        + ("hy", "zh-tw"),
        0.01,
    ),
}
TRAVEL_LANGUAGE_WEIGHTS: dict[str, float] = {
    "zh": 0.55,
    "en": 0.30,
    "ja": 0.05,
    "ko": 0.05,
    "fr": 0.05,
}

_DIRS: tuple[tuple[int, int], ...] = (
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
)
_MAX_ATTEMPTS = 60
MAX_DIAMETER = 46
MAX_AVG_HOPS = 17.0
_COMPACT_TRIES = 20
#: Grid units between neighbouring stations of a line, and their probabilities.
_SPACING: dict[int, float] = {1: 0.30, 2: 0.40, 3: 0.30}
#: Stations a line needs to host a trunk, and the edges a trunk spans.
_TRUNK_HOST = 6
_TRUNK_RUN = (5, 40)


class SynthError(MaptabError):
    """A spec that cannot be generated (out of range, inconsistent counts)."""


_Spec = TypeVar("_Spec")
_Grown = TypeVar("_Grown")


# ============================================================================ specs
@dataclass(frozen=True, slots=True)
class MetroSpec:
    """What :func:`synth_metro` builds.

    ``n_lines`` 1–25 and ``n_stations`` 15–450 (exact counts); ``loop_lines`` lines are
    loops, ``branches`` lines fork once, ``shared_segments`` lines share a run of 1–3
    consecutive edges with an earlier line, ``trunks`` lines share a trunk of 5–40
    consecutive edges with an earlier line and then branch off. ``turn_rate`` is the chance
    per step that a line bends by 45°. Fewer dead ends: ``tee_rate`` is the chance that a
    line that would cross the middle starts at an earlier line instead (at a terminus of it
    where there is one), ``join_rate`` the chance that a dead end goes one step further to
    a station of another line.
    """

    n_lines: int
    n_stations: int
    loop_lines: int = 0
    branches: int = 0
    shared_segments: int = 0
    language: str = "en"
    turn_rate: float = 0.12
    trunks: int = 0
    join_rate: float = 0.0
    tee_rate: float = 0.0

    def __post_init__(self) -> None:
        _check(1 <= self.n_lines <= 25, f"n_lines {self.n_lines} outside 1..25")
        _check(15 <= self.n_stations <= 450, f"n_stations {self.n_stations} outside 15..450")
        _check(
            0 <= self.loop_lines <= self.n_lines - 1,
            f"loop_lines {self.loop_lines} outside 0..{self.n_lines - 1}",
        )
        free = self.n_lines - 1 - self.loop_lines
        _check(
            0 <= self.shared_segments <= free,
            f"shared_segments {self.shared_segments} outside 0..{free} (one per non-loop line after the first)",
        )
        _check(
            0 <= self.trunks <= free - self.shared_segments,
            f"trunks {self.trunks} outside 0..{free - self.shared_segments} (one per non-loop line "
            "after the first that shares no segment)",
        )
        _check(
            0 <= self.branches <= free + 1,
            f"branches {self.branches} outside 0..{free + 1} (one per non-loop line)",
        )
        _check(self.language in LANGUAGES, f"unknown language {self.language!r}")
        _check(0.0 <= self.turn_rate <= 0.5, f"turn_rate {self.turn_rate} outside 0..0.5")
        _check(0.0 <= self.tee_rate <= 1.0, f"tee_rate {self.tee_rate} outside 0..1")
        _check(0.0 <= self.join_rate <= 1.0, f"join_rate {self.join_rate} outside 0..1")
        need = _min_stations(self)
        _check(
            self.n_stations >= need,
            f"n_stations {self.n_stations} too small for this many lines (need at least {need})",
        )


@dataclass(frozen=True, slots=True)
class ScenicSpec:
    """What :func:`synth_scenic` builds.

    ``n_spots`` 10–40; ``extra_edges`` independent cycles (``|E| − |V| + 1``); ``spurs``
    dead-end paths of 1–3 spots; ``hubs`` transport hubs (airport / railway station, 0–2);
    ``annotation`` the kind of edge label the map shows (``None``: none) on about
    ``annotated_fraction`` of its edges.
    """

    n_spots: int
    extra_edges: int = 2
    spurs: int = 1
    hubs: int = 0
    annotation: Literal["time", "distance"] | None = None
    annotated_fraction: float = 0.6
    language: str = "en"

    def __post_init__(self) -> None:
        _check(10 <= self.n_spots <= 40, f"n_spots {self.n_spots} outside 10..40")
        core = self.n_spots - self.spurs
        _check(
            0 <= self.spurs <= self.n_spots // 4,
            f"spurs {self.spurs} outside 0..{self.n_spots // 4}",
        )
        _check(
            0 <= self.extra_edges <= core // 2,
            f"extra_edges {self.extra_edges} outside 0..{core // 2}",
        )
        _check(0 <= self.hubs <= 2, f"hubs {self.hubs} outside 0..2")
        _check(self.annotation in (None, "time", "distance"), f"bad annotation {self.annotation!r}")
        _check(
            0.0 < self.annotated_fraction <= 1.0,
            f"annotated_fraction {self.annotated_fraction} outside (0, 1]",
        )
        _check(self.language in LANGUAGES, f"unknown language {self.language!r}")


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise SynthError(message)


def _attempts(
    grow: Callable[[_Spec, np.random.Generator], _Grown | None],
    spec: _Spec,
    rng: np.random.Generator,
    kind: str,
) -> _Grown:
    """The first of up to ``_MAX_ATTEMPTS`` calls of ``grow`` (one generator) that meets ``spec``."""
    for _ in range(_MAX_ATTEMPTS):
        grown = grow(spec, rng)
        if grown is not None:
            return grown
    raise SynthError(f"could not generate a {kind} network for {spec}")


# ============================================================================ sampling
#: Lines per metro map by size class, fitted to the 25 real ReasonMap networks (their line
#: counts: median 4, mean 5.6, 20 % with at most two lines, one single-line map), with
#: the size classes drawn equally often: ``{lines: probability}``.
_METRO_LINES: dict[str, dict[int, float]] = {
    "small": {1: 0.12, 2: 0.43, 3: 0.30, 4: 0.15},
    "medium": {3: 0.25, 4: 0.40, 5: 0.20, 6: 0.15},
    "large": {
        6: 0.25,
        7: 0.10,
        8: 0.10,
        10: 0.10,
        11: 0.10,
        12: 0.10,
        14: 0.10,
        17: 0.06,
        21: 0.05,
        24: 0.04,
    },
}
#: Systems of this many lines or more get this many stations per line (Beijing: 21 lines,
#: 363 stations), so the largest maps reach 400–450 stations.
_BIG_SYSTEM = 21
_BIG_SYSTEM_PER_LINE = (17.0, 21.0)
#: Stations per line (uniform range; real networks: 9.5–28, median 21) and the station
#: range of each size class (a single line keeps to 15–40 stations: its average
#: shortest path, (n + 1) / 3 hops, stays below the real maximum of 17).
_METRO_STATIONS: dict[str, tuple[tuple[float, float], tuple[int, int]]] = {
    "small": ((10.0, 22.0), (15, 60)),
    "medium": ((16.0, 26.0), (50, 160)),
    "large": ((14.0, 22.0), (100, 450)),
}
#: Per size class: the share of maps built around trunks (lines sharing 5–40 edges, then
#: branching off; real networks: 2 of 25 share over a quarter of their track, the large
#: ones little), and the ``tee_rate`` and ``join_rate`` of :class:`MetroSpec` (fewer dead
#: ends; joins close cycles, which move weighted optima off the fewest-stations routes, so
#: large maps, which get most queries, lose their dead ends mainly to tees).
_METRO_TRUNK_MAPS: dict[str, float] = {"small": 0.6, "medium": 0.4, "large": 0.1}
_METRO_TEE_RATE: dict[str, float] = {"small": 0.2, "medium": 0.1, "large": 0.55}
_METRO_JOIN_RATE: dict[str, float] = {"small": 1.0, "medium": 1.0, "large": 0.0}
#: Systems of this many lines or more get no tees (a tee line need not pass the middle,
#: which stretches the largest systems beyond the real shortest-path ranges).
_NO_TEES = 17
_SCENIC_SIZES: dict[str, tuple[int, int]] = {
    "small": (10, 17),
    "medium": (18, 27),
    "large": (28, 40),
}


def _pick_language(rng: np.random.Generator, weights: dict[str, float]) -> str:
    codes = list(weights)
    p = np.array([weights[c] for c in codes], dtype=float)
    return codes[int(rng.choice(len(codes), p=p / p.sum()))]


def _check_size(size: str, table: dict) -> None:
    _check(size in table, f"unknown size {size!r}; expected one of {SIZES}")


def sample_metro_spec(
    rng: np.random.Generator, size: Size, language: str | None = None
) -> MetroSpec:
    """A random :class:`MetroSpec` of the given size class (ranges in ``docs/reference/synthesis.md``)."""
    _check_size(size, _METRO_LINES)
    choices = _METRO_LINES[size]
    n_lines = list(choices)[int(rng.choice(len(choices), p=list(choices.values())))]
    (per_lo, per_hi), (s_lo, s_hi) = _METRO_STATIONS[size]
    if n_lines == 1:
        s_hi = 40
    if n_lines >= _BIG_SYSTEM:
        per_lo, per_hi = _BIG_SYSTEM_PER_LINE
    n_stations = int(np.clip(round(n_lines * rng.uniform(per_lo, per_hi)), s_lo, s_hi))
    loops = int(min(rng.binomial(2, 0.05 if size == "small" else 0.15), n_lines - 1))
    free = n_lines - 1 - loops
    shared = int(rng.binomial(3, 0.3))
    branches = int(min(rng.binomial(2, 0.25), free + 1))
    trunks = 0
    if rng.random() < _METRO_TRUNK_MAPS[size]:
        trunks = int(min(1 + rng.binomial(n_lines // 4, 0.5), free))
    shared = min(shared, free - trunks)
    lang = language or _pick_language(rng, METRO_LANGUAGE_WEIGHTS)
    return MetroSpec(
        n_lines,
        n_stations,
        loops,
        branches,
        shared,
        lang,
        trunks=trunks,
        join_rate=_METRO_JOIN_RATE[size],
        tee_rate=0.0 if n_lines >= _NO_TEES else _METRO_TEE_RATE[size],
    )


def sample_scenic_spec(
    rng: np.random.Generator, size: Size, language: str | None = None
) -> ScenicSpec:
    """A random :class:`ScenicSpec` of the given size class (ranges in ``docs/reference/synthesis.md``)."""
    _check_size(size, _SCENIC_SIZES)
    lo, hi = _SCENIC_SIZES[size]
    n = int(rng.integers(lo, hi + 1))
    spurs = min(n // 4, int(rng.choice(3, p=[0.55, 0.35, 0.10])))
    core = n - spurs
    extra = int(rng.integers(round(0.25 * core), round(0.35 * core) + 1))
    hubs = int(rng.choice(3, p=[0.6, 0.3, 0.1]))
    annotation = [None, "time", "distance"][int(rng.choice(3, p=[0.4, 0.3, 0.3]))]
    fraction = round(float(rng.uniform(0.4, 1.0)), 2)
    lang = language or _pick_language(rng, TRAVEL_LANGUAGE_WEIGHTS)
    return ScenicSpec(n, extra, spurs, hubs, annotation, fraction, lang)


# ============================================================================ metro
def _min_stations(spec: MetroSpec) -> int:
    """Fewest stations the generator needs: 3 for line 0 (:data:`_TRUNK_HOST` with trunks),
    4 per loop, 2 per other line, +1 per branch."""
    first = _TRUNK_HOST if spec.trunks else 3
    return first + 4 * spec.loop_lines + 2 * (spec.n_lines - 1 - spec.loop_lines) + spec.branches


@dataclass(slots=True)
class _Line:
    """One line being grown: ``main`` in travel order (a loop is closed implicitly)."""

    loop: bool = False
    main: list[int] = field(default_factory=list)
    fork: int | None = None
    branch: list[int] = field(default_factory=list)
    shares_with: int | None = None
    trunk: bool = False
    closed: set[str] = field(default_factory=set)  # ends ("head", "tail") never extended
    spare: int = 0  # budget a trunk line leaves to the line ends (its trunk stands in for it)


class _Grid:
    """Stations on integer grid points, their adjacency, and the stations of each line."""

    def __init__(self, rng: np.random.Generator, turn_rate: float) -> None:
        self.rng = rng
        self.turn_rate = turn_rate
        self.points: list[tuple[int, int]] = []
        self.at: dict[tuple[int, int], int] = {}
        self.nbrs: list[set[int]] = []
        self.members: list[set[int]] = []
        self.track: dict[tuple[int, int], int] = {}  # grid point inside a segment -> its axis

    def station(self, p: tuple[int, int]) -> tuple[int, bool]:
        """The station at ``p`` (created if absent) and whether it is new."""
        sid = self.at.get(p)
        if sid is not None:
            return sid, False
        sid = len(self.points)
        self.points.append(p)
        self.at[p] = sid
        self.nbrs.append(set())
        return sid, True

    def direction(self, a: int, b: int) -> int:
        """The compass direction (index into ``_DIRS``) of the segment ``a → b``."""
        (ax, ay), (bx, by) = self.points[a], self.points[b]
        dx, dy = bx - ax, by - ay
        k = max(abs(dx), abs(dy))
        return _DIRS.index((dx // k, dy // k))

    def used_directions(self, a: int) -> set[int]:
        return {self.direction(a, b) for b in self.nbrs[a]}

    def link(self, line: int, a: int, b: int) -> None:
        """Join ``a`` and ``b`` on ``line``; grid points strictly between them become track."""
        self.nbrs[a].add(b)
        self.nbrs[b].add(a)
        self.members[line].update((a, b))
        (ax, ay), (bx, by) = self.points[a], self.points[b]
        h = self.direction(a, b)
        dx, dy = _DIRS[h]
        for i in range(1, max(abs(bx - ax), abs(by - ay))):
            self.track[(ax + i * dx, ay + i * dy)] = h % 4

    def can_step(self, line: int, a: int, p: tuple[int, int]) -> bool:
        """A step onto ``p`` keeps the line simple and adds no track beside existing track."""
        b = self.at.get(p)
        return b is None or (b not in self.members[line] and b not in self.nbrs[a])

    def reach(self, line: int, a: int, h: int, length: int) -> tuple[int, int] | None:
        """Where a step of up to ``length`` grid units from ``a`` in direction ``h`` ends.

        It ends early on the first station it meets (a transfer, if :meth:`can_step`
        allows it); it may cross another line's track at a right or 45° angle (no
        station there) but never run along it, and never ends on track; ``None`` if blocked.
        """
        x, y = self.points[a]
        dx, dy = _DIRS[h]
        for i in range(1, length + 1):
            q = (x + i * dx, y + i * dy)
            if q in self.at:
                return q if self.can_step(line, a, q) else None
            axis = self.track.get(q)
            if axis == h % 4:
                return None
            if i == length:
                return q if axis is None else None
        return None

    def roomy(self, line: int, a: int, p: tuple[int, int]) -> bool:
        """Whether ``p`` is a station already, or a free point with room for a label: at
        most one station of other lines among its eight neighbours (besides ``a``)."""
        if p in self.at:
            return True
        x, y = p
        crowd = 0
        for dx, dy in _DIRS:
            b = self.at.get((x + dx, y + dy))
            crowd += b is not None and b != a and b not in self.members[line]
        return crowd <= 1

    def walk(self, line: int, start: int, heading: int, budget: int) -> tuple[list[int], int]:
        """Grow ``line`` from ``start``: the stations passed after ``start``, and how many are new.

        Each step spans 1–3 grid units (:data:`_SPACING`), so hop counts are not grid
        distances and geometrically equal detours rarely have equal station counts. Goes
        straight, bending by 45° with probability ``turn_rate`` after at least two straight
        steps; a blocked step tries ±45° then ±90°, and points with room around them
        (:meth:`roomy`) are preferred; stops when ``budget`` new stations are made, when
        boxed in, or after ``2·budget + 4`` steps.
        """
        out: list[int] = []
        new, cur, h, straight = 0, start, heading, 0
        lengths, weights = zip(*_SPACING.items(), strict=True)
        for _ in range(2 * budget + 4):
            if new >= budget:
                break
            if straight >= 2 and self.rng.random() < self.turn_rate:
                h = (h + (1 if self.rng.random() < 0.5 else -1)) % 8
                straight = 0
            length = lengths[int(self.rng.choice(len(lengths), p=weights))]
            order = (h, (h + 1) % 8, (h - 1) % 8, (h + 2) % 8, (h - 2) % 8)
            steps = [(c, self.reach(line, cur, c, length)) for c in order]
            steps = [(c, p) for c, p in steps if p is not None]
            if not steps:
                break
            cand, p = next(((c, p) for c, p in steps if self.roomy(line, cur, p)), steps[0])
            straight = straight + 1 if cand == h else 1
            h = cand
            nxt, created = self.station(p)
            self.link(line, cur, nxt)
            new += created
            out.append(nxt)
            cur = nxt
        return out, new


def _octagon(w: int, h: int, c: int) -> list[tuple[int, int]]:
    """Grid points of a ``w×h`` rectangle with 45° corners cut by ``c``, in order."""
    legs = [
        ((1, 0), w - 2 * c),
        ((1, 1), c),
        ((0, 1), h - 2 * c),
        ((-1, 1), c),
        ((-1, 0), w - 2 * c),
        ((-1, -1), c),
        ((0, -1), h - 2 * c),
        ((1, -1), c),
    ]
    x, y = c, 0
    out: list[tuple[int, int]] = []
    for (dx, dy), steps in legs:
        for _ in range(steps):
            out.append((x, y))
            x, y = x + dx, y + dy
    return out


def _central(grid: _Grid, draws: int = 3) -> int:
    """The station nearest the network's centroid among ``draws`` random ones (new lines
    cross the middle, as real lines do, keeping shortest paths short)."""
    pts = np.array(grid.points, dtype=float)
    centre = pts.mean(axis=0)
    picks = grid.rng.integers(len(pts), size=draws)
    return int(min(picks, key=lambda i: float(np.hypot(*(pts[i] - centre)))))


def _tee_anchor(grid: _Grid, budget: int) -> tuple[int, int] | None:
    """Where a tee line starts, and its heading: a station of an earlier line about
    ``budget`` grid units (half the line's length) from the network's centroid, within
    ``budget / 2`` of that, a terminus (through running) before any of six random
    stations; the heading is the free direction nearest to the centroid's, at most 90°
    off. ``None`` when no station qualifies."""
    rng = grid.rng
    pts = np.array(grid.points, dtype=float)
    centre = pts.mean(axis=0)
    termini = [a for a in range(len(pts)) if len(grid.nbrs[a]) == 1]
    randoms = [int(i) for i in rng.integers(len(pts), size=6)]
    for picks in (termini, randoms):
        off = [abs(float(np.hypot(*(pts[a] - centre))) - budget) for a in picks]
        for i in np.argsort(off, kind="stable"):
            if off[i] > budget / 2:
                break
            anchor = picks[int(i)]
            dx, dy = centre - pts[anchor]
            h0 = round(math.atan2(dy, dx) / (math.pi / 4)) % 8
            taken = grid.used_directions(anchor)
            for turn in (0, 1, -1, 2, -2):
                if (h0 + turn) % 8 not in taken:
                    return anchor, (h0 + turn) % 8
    return None


def _add_loop(grid: _Grid, line: _Line, j: int, budget: int) -> int | None:
    """Place loop line ``j`` through an existing station; the number of new stations."""
    rng = grid.rng
    for _ in range(40):
        perimeter = max(4, int(budget * rng.uniform(0.9, 1.3)))
        c = 1 if perimeter >= 12 and rng.random() < 0.7 else 0
        half = perimeter // 2 + 2 * c
        w = max(2 * c + 1, round(half * rng.uniform(0.35, 0.65)))
        h = max(2 * c + 1, half - w)
        ring = _octagon(w, h, c)
        a = int(rng.integers(len(grid.points)))
        k = int(rng.integers(len(ring)))
        ox, oy = grid.points[a][0] - ring[k][0], grid.points[a][1] - ring[k][1]
        pts = [(x + ox, y + oy) for x, y in ring[k:] + ring[:k]]
        sids = [grid.at.get(p) for p in pts]
        new = sum(s is None for s in sids)
        clash = any(
            s is not None and t is not None and t in grid.nbrs[s]
            for s, t in zip(sids, sids[1:] + sids[:1], strict=True)
        )
        if clash or new > budget or any(p in grid.track for p in pts):
            continue
        stations = [grid.station(p)[0] for p in pts]
        for s, t in zip(stations, stations[1:] + stations[:1], strict=True):
            grid.link(j, s, t)
        line.main = stations
        return new
    return None


def _trunk_run(grid: _Grid, lines: list[_Line], j: int) -> list[int] | None:
    """Where trunk line ``j`` runs along an earlier path line (5–40 consecutive edges of its
    main line, :data:`_TRUNK_RUN`), so that it passes the host's station nearest the
    network's centroid (the lines share the middle, as trunks in real systems do): from
    one of the host's ends to that station or somewhat beyond (they share a terminus and
    fork, a Y), or half to nearly all of the host centred on it (they meet and part)."""
    rng = grid.rng
    hosts = [i for i in range(j) if not lines[i].loop and len(lines[i].main) >= _TRUNK_HOST]
    if not hosts:
        return None
    host = hosts[int(rng.integers(len(hosts)))]
    path = lines[host].main
    pts = np.array([grid.points[a] for a in path], dtype=float)
    centre = np.array(grid.points, dtype=float).mean(axis=0)
    mid = int(np.argmin(np.hypot(*(pts - centre).T)))
    last = len(path) - 1
    lo, hi = _TRUNK_RUN[0], min(_TRUNK_RUN[1], last)
    if rng.random() < 0.5:  # a Y: from a terminus to the middle or somewhat beyond
        head = rng.random() < 0.5
        near = mid if head else last - mid
        k = int(np.clip(near + round((last - near) * rng.uniform(0.0, 0.6)), lo, hi))
        s = 0 if head else last - k
    else:
        k = int(np.clip(round(last * rng.uniform(0.5, 0.95)), lo, hi))
        s = int(np.clip(mid - k // 2, 0, last - k))
    lines[j].shares_with, lines[j].trunk = host, True
    if s == 0:
        lines[j].closed.add("head")
    elif s + k == last:
        lines[j].closed.add("tail")
    return path[s : s + k + 1]


def _add_path(
    grid: _Grid,
    lines: list[_Line],
    j: int,
    budget: int,
    share: Literal["segment", "trunk"] | None,
    branched: bool,
) -> int | None:
    """Grow path line ``j``: crossing an anchor, sharing a segment or a trunk of an earlier
    line, or (``"head"`` in its ``closed`` ends) a tee; optionally forked."""
    rng, line = grid.rng, lines[j]
    arm_budget = max(1, round(budget * rng.uniform(0.2, 0.4))) if branched else 0
    used = 0
    if j == 0:
        origin, _ = grid.station((0, 0))
        grid.members[j].add(origin)
        middle, used = [origin], 1
        ha = int(rng.integers(8))
        hb = (ha + 4) % 8
    elif share == "trunk":
        run = _trunk_run(grid, lines, j)
        if run is None:
            return None
        middle = run
        for a, b in zip(middle, middle[1:], strict=False):
            grid.link(j, a, b)
        ha = grid.direction(middle[1], middle[0])
        hb = grid.direction(middle[-2], middle[-1])
    elif share == "segment":
        hosts = [i for i in range(j) if not lines[i].loop and len(lines[i].main) >= 2]
        host = hosts[int(rng.integers(len(hosts)))]
        path = lines[host].main
        k = int(rng.integers(1, min(3, len(path) - 1) + 1))
        s = int(rng.integers(0, len(path) - k))
        middle = path[s : s + k + 1]
        for a, b in zip(middle, middle[1:], strict=False):
            grid.link(j, a, b)
        ha = grid.direction(middle[1], middle[0])
        hb = grid.direction(middle[-2], middle[-1])
        line.shares_with = host
    elif "head" in line.closed and (tee := _tee_anchor(grid, budget)) is not None:
        anchor, ha = tee
        hb = ha
        middle = [anchor]
        grid.members[j].add(anchor)
    else:
        line.closed.discard("head")  # no station for a tee: the line crosses the middle
        for _ in range(20):
            anchor = _central(grid)
            taken = grid.used_directions(anchor)
            free = [h for h in range(8) if h not in taken]
            crossing = [h for h in free if (h + 4) % 8 not in taken]
            if crossing or free:
                break
        else:
            return None
        options = crossing or free
        ha = options[int(rng.integers(len(options)))]
        hb = (ha + 4) % 8
        middle = [anchor]
        grid.members[j].add(anchor)
    main_budget = budget - arm_budget - used
    if share == "trunk":
        line.spare = max(0, min(main_budget - 1, len(middle) - 1))
        main_budget -= line.spare
    first = round(main_budget * rng.uniform(0.3, 0.7))
    if "head" in line.closed:
        first = 0
    elif "tail" in line.closed:
        first = main_budget
    arm_a, new_a = grid.walk(j, middle[0], ha, first)
    rest = 0 if "tail" in line.closed else main_budget - new_a
    arm_b, new_b = grid.walk(j, middle[-1], hb, rest)
    line.main = [*reversed(arm_a), *middle, *arm_b]
    used += new_a + new_b
    if len(line.main) < 3:  # a line has at least three stations
        return None
    if branched:
        inner = line.main[1:-1]
        for idx in rng.permutation(len(inner))[:10]:
            fork = inner[int(idx)]
            free = [h for h in range(8) if h not in grid.used_directions(fork)]
            if not free:
                continue
            arm, new = grid.walk(j, fork, free[int(rng.integers(len(free)))], arm_budget)
            if arm:
                line.fork, line.branch = fork, arm
                return used + new
        return None
    return used


def _ends(lines: list[_Line]) -> list[tuple[int, str]]:
    """The open ends of the path lines: ``(line, "head" | "tail" | "arm")``."""
    ends = [
        (j, side)
        for j, ln in enumerate(lines)
        if not ln.loop
        for side in ("head", "tail")
        if side not in ln.closed
    ]
    return ends + [(j, "arm") for j, ln in enumerate(lines) if ln.branch]


def _end(ln: _Line, side: str) -> tuple[int, int]:
    """The end station of ``ln`` on ``side`` and the station before it."""
    if side == "head":
        return ln.main[0], ln.main[1]
    if side == "tail":
        return ln.main[-1], ln.main[-2]
    return ln.branch[-1], ln.branch[-2] if len(ln.branch) > 1 else ln.fork


def _join_ends(grid: _Grid, lines: list[_Line], rate: float) -> None:
    """With probability ``rate`` per dead end, let the line stop at a station of another
    line one step further (1–3 grid units, straight on or bending by up to 90°); another
    line's terminus first (through running: two dead ends go), else the nearest station.
    Adds an edge and no station, so the line stays a simple path and the count exact."""
    if rate <= 0.0:
        return
    rng = grid.rng
    ends = _ends(lines)
    for idx in rng.permutation(len(ends)):
        j, side = ends[int(idx)]
        ln = lines[j]
        end, prev = _end(ln, side)
        if len(grid.nbrs[end]) != 1 or rng.random() >= rate:
            continue
        h = grid.direction(prev, end)
        options = []
        for turn in (0, 1, -1, 2, -2):
            p = grid.reach(j, end, (h + turn) % 8, 3)
            if p is not None and p in grid.at:
                b = grid.at[p]
                steps = max(abs(p[0] - grid.points[end][0]), abs(p[1] - grid.points[end][1]))
                options.append((len(grid.nbrs[b]) != 1, steps, abs(turn), b))
        if not options:
            continue
        b = min(options)[3]
        grid.link(j, end, b)
        if side == "head":
            ln.main.insert(0, b)
        elif side == "tail":
            ln.main.append(b)
        else:
            ln.branch.append(b)


def _extend(grid: _Grid, lines: list[_Line], carry: int) -> bool:
    """Spend ``carry`` new stations by extending line ends, an even share per end and pass
    (so no line grows a long tail); ``False`` when all are boxed in."""
    rng = grid.rng
    while carry > 0:
        ends = _ends(lines)
        progress = False
        for idx in rng.permutation(len(ends)):
            j, side = ends[int(idx)]
            ln = lines[j]
            end, prev = _end(ln, side)
            chunk = -(-carry // len(ends))  # spread evenly over the ends, rounding up
            arm, new = grid.walk(j, end, grid.direction(prev, end), chunk)
            if side == "head":
                ln.main[:0] = reversed(arm)
            elif side == "tail":
                ln.main += arm
            else:
                ln.branch += arm
            carry -= new
            progress = progress or new > 0
            if carry == 0:
                break
        if not progress:
            return False
    return True


def _grow_metro(spec: MetroSpec, rng: np.random.Generator) -> tuple[_Grid, list[_Line]] | None:
    """One attempt at the metro topology and geometry; ``None`` if it missed the spec."""
    n_lines = spec.n_lines
    later = [int(j) for j in rng.permutation(np.arange(1, n_lines))]
    loops = set(later[: spec.loop_lines])
    paths = [j for j in range(n_lines) if j not in loops]
    order = [int(j) for j in rng.permutation(paths[1:])]
    shared = set(order[: spec.shared_segments])
    trunked = set(order[spec.shared_segments : spec.shared_segments + spec.trunks])
    branched = {int(j) for j in rng.permutation(paths)[: spec.branches]}
    crossing = [j for j in paths[1:] if j not in shared | trunked]
    tees = {j for j in crossing if spec.tee_rate > 0 and rng.random() < spec.tee_rate}
    first = _TRUNK_HOST if trunked else 3
    floors = [
        (first if j == 0 else 4 if j in loops else 2) + (j in branched) for j in range(n_lines)
    ]
    spread = rng.multinomial(spec.n_stations - sum(floors), rng.dirichlet(np.full(n_lines, 6.0)))
    grid = _Grid(rng, spec.turn_rate)
    lines = [_Line(loop=j in loops) for j in range(n_lines)]
    carry = spare = 0
    for j in range(n_lines):
        grid.members.append(set())
        budget = floors[j] + int(spread[j]) + carry
        if j in loops:
            used = _add_loop(grid, lines[j], j, budget)
        else:
            share = "trunk" if j in trunked else "segment" if j in shared else None
            if j in tees:
                lines[j].closed.add("head")
            used = _add_path(grid, lines, j, budget, share, j in branched)
        if used is None:
            return None
        carry = budget - used - lines[j].spare
        spare += lines[j].spare
    if not _extend(grid, lines, carry + spare) or len(grid.points) != spec.n_stations:
        return None
    _join_ends(grid, lines, spec.join_rate)
    return grid, lines


def _hop_excess(grid: _Grid) -> float:
    """How far shortest paths exceed real ranges (0 when within them): hops of the longest
    beyond :data:`MAX_DIAMETER` plus the average's excess over :data:`MAX_AVG_HOPS` (the
    25 ReasonMap networks: longest 46 hops, map averages 7.3–15.6)."""
    n = len(grid.points)
    rows = [a for a in range(n) for _ in grid.nbrs[a]]
    cols = [b for a in range(n) for b in grid.nbrs[a]]
    adj = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    hops = shortest_path(adj, method="D", unweighted=True)
    avg = float(hops.sum()) / (n * (n - 1))
    return max(0.0, float(hops.max()) - MAX_DIAMETER) + max(0.0, avg - MAX_AVG_HOPS)


def _compact_metro(spec: MetroSpec, rng: np.random.Generator) -> tuple[_Grid, list[_Line]]:
    """The first of up to :data:`_COMPACT_TRIES` grown networks whose shortest paths are
    within real ranges (:func:`_hop_excess`), else the one closest to them (a spec with
    long lines, such as one line of 60 stations, cannot be within them)."""
    best: tuple[float, tuple[_Grid, list[_Line]]] | None = None
    for _ in range(_COMPACT_TRIES):
        grown = _attempts(_grow_metro, spec, rng, "metro")
        excess = _hop_excess(grown[0])
        if excess == 0.0:
            return grown
        if best is None or excess < best[0]:
            best = (excess, grown)
    assert best is not None
    return best[1]


def _line_colors(names: list[str], rng: np.random.Generator) -> dict[str, str]:
    """Distinct hex colours: golden-ratio hues from a random start, three tone levels."""
    start = float(rng.random())
    tones = ((0.85, 0.85), (0.65, 0.95), (0.9, 0.6))
    out = {}
    for i, name in enumerate(names):
        s, v = tones[i % len(tones)]
        r, g, b = colorsys.hsv_to_rgb((start + i * 0.618033988749895) % 1.0, s, v)
        out[name] = f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
    return out


def _spec_meta(spec: MetroSpec | ScenicSpec) -> dict[str, object]:
    return {f: getattr(spec, f) for f in spec.__dataclass_fields__}


def synth_metro(spec: MetroSpec, seed: int, map_id: str = "") -> Network:
    """A synthetic metromap following ``spec``, a pure function of ``(spec, seed)``.

    Returns a :class:`Network` with zero attributes (see
    :func:`maptab.generate.attributes.synthesize_attributes`), grid ``positions`` for every
    station, display ``labels`` for hyphenated names, and ``meta`` with ``kind="metro"``,
    ``language``, ``line_colors`` ({line: "#rrggbb"}), ``loop_lines``, ``branched_lines``,
    ``shared_segments`` ([[host line, line], …]) and ``spec``.

    Raises :class:`SynthError` if no attempt meets the spec (not seen for valid specs).
    """
    rng = np.random.default_rng(seed)
    grid, lines = _compact_metro(spec, rng)
    names = station_names(len(grid.points), spec.language, rng)
    keys = [table_name(n) for n in names]
    lnames = line_names(spec.n_lines, spec.language, rng)
    on: list[list[str]] = [[] for _ in grid.points]
    edges: list[Edge] = []
    for j, ln in enumerate(lines):
        seq = ln.main + ln.main[:1] if ln.loop else ln.main
        pairs = list(zip(seq, seq[1:], strict=False))
        if ln.fork is not None:
            arm = [ln.fork, *ln.branch]
            pairs += list(zip(arm, arm[1:], strict=False))
        for a, b in pairs:
            edges.append(Edge(keys[a], keys[b], lnames[j]))
        for s in dict.fromkeys(s for pair in pairs for s in pair):
            on[s].append(lnames[j])
    vertices = {keys[s]: Vertex(keys[s], tuple(on[s])) for s in range(len(grid.points))}
    return Network(
        "metromap",
        vertices,
        edges,
        map_id=map_id,
        labels={k: n for k, n in zip(keys, names, strict=True) if k != n},
        positions={keys[s]: (float(x), float(y)) for s, (x, y) in enumerate(grid.points)},
        meta={
            "kind": "metro",
            "language": spec.language,
            "line_colors": _line_colors(lnames, rng),
            "loop_lines": [lnames[j] for j, ln in enumerate(lines) if ln.loop],
            "branched_lines": [lnames[j] for j, ln in enumerate(lines) if ln.fork is not None],
            "shared_segments": [
                [lnames[ln.shares_with], lnames[j]]
                for j, ln in enumerate(lines)
                if ln.shares_with is not None and not ln.trunk
            ],
            "trunks": [
                [lnames[ln.shares_with], lnames[j]]
                for j, ln in enumerate(lines)
                if ln.shares_with is not None and ln.trunk
            ],
            "spec": _spec_meta(spec),
        },
    )


# ============================================================================ scenic
_Point = tuple[float, float]


def _cross(o: _Point, a: _Point, b: _Point) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _segments_cross(p: _Point, q: _Point, r: _Point, s: _Point) -> bool:
    """Whether segments ``pq`` and ``rs`` intersect properly (shared endpoints do not count)."""
    if {p, q} & {r, s}:
        return False
    d1, d2 = _cross(r, s, p), _cross(r, s, q)
    d3, d4 = _cross(p, q, r), _cross(p, q, s)
    return d1 * d2 < 0 and d3 * d4 < 0


def _point_segment_distance(p: _Point, a: _Point, b: _Point) -> float:
    ax, ay = b[0] - a[0], b[1] - a[1]
    t = ((p[0] - a[0]) * ax + (p[1] - a[1]) * ay) / (ax * ax + ay * ay)
    t = min(1.0, max(0.0, t))
    return math.dist(p, (a[0] + t * ax, a[1] + t * ay))


def _scatter(m: int, rng: np.random.Generator) -> list[_Point]:
    """``m`` points at least one unit apart in a box of about 2.6 units² per point."""
    side = math.sqrt(m * 2.6)
    pts: list[_Point] = []
    while len(pts) < m:
        x, y = rng.uniform(0.0, side * 1.2), rng.uniform(0.0, side / 1.2)
        p = (round(float(x), 3), round(float(y), 3))
        if all(math.dist(p, q) >= 1.0 for q in pts):
            pts.append(p)
    return pts


def _core_edges(
    pts: list[_Point], extra: int, rng: np.random.Generator
) -> list[tuple[int, int]] | None:
    """Minimum spanning tree of the Delaunay triangulation plus ``extra`` short chords
    (preferring chords at the tree's leaves, so few dead ends remain)."""
    tri = Delaunay(np.array(pts))
    cand = sorted(
        {
            tuple(sorted((int(a), int(b))))
            for t in tri.simplices
            for a, b in ((t[0], t[1]), (t[1], t[2]), (t[0], t[2]))
        }
    )
    length = {e: math.dist(pts[e[0]], pts[e[1]]) for e in cand}
    parent = list(range(len(pts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    tree: list[tuple[int, int]] = []
    chords: list[tuple[int, int]] = []
    for e in sorted(cand, key=length.__getitem__):
        ra, rb = root(e[0]), root(e[1])
        if ra != rb:
            parent[ra] = rb
            tree.append(e)
        else:
            chords.append(e)
    limit = 2.2 * float(np.median([length[e] for e in tree]))
    short = [e for e in chords if length[e] <= limit]
    if len(short) < extra:
        return None
    degree = Counter(v for e in tree for v in e)
    leafy = [sum(degree[v] == 1 for v in e) for e in short]
    score = [length[e] * rng.uniform(1.0, 1.6) * 0.5**k for e, k in zip(short, leafy, strict=True)]
    return tree + [short[i] for i in np.argsort(score, kind="stable")[:extra]]


def _add_spurs(
    pts: list[_Point], edges: list[tuple[int, int]], lengths: list[int], rng: np.random.Generator
) -> bool:
    """Attach one outward dead-end path per entry of ``lengths`` (in place)."""
    core = len(pts)
    cx, cy = float(np.mean([p[0] for p in pts])), float(np.mean([p[1] for p in pts]))
    outer = sorted(range(core), key=lambda i: -math.dist(pts[i], (cx, cy)))[: max(2, core // 2)]
    for n in lengths:
        for _ in range(40):
            prev = outer[int(rng.integers(len(outer)))]
            angle = math.atan2(pts[prev][1] - cy, pts[prev][0] - cx) + rng.uniform(-0.7, 0.7)
            chain: list[_Point] = []
            a = pts[prev]
            for _ in range(n):
                step = rng.uniform(1.1, 1.6)
                b = (
                    round(a[0] + step * math.cos(angle), 3),
                    round(a[1] + step * math.sin(angle), 3),
                )
                segs = [(pts[u], pts[v]) for u, v in edges] + list(
                    zip([pts[prev], *chain], chain, strict=False)
                )
                if any(math.dist(b, q) < 1.0 for q in [*pts, *chain]) or any(
                    _segments_cross(a, b, r, s) or _point_segment_distance(b, r, s) < 0.45
                    for r, s in segs
                ):
                    break
                chain.append(b)
                a = b
                angle += rng.uniform(-0.5, 0.5)
            if len(chain) == n:
                ids = list(range(len(pts), len(pts) + n))
                pts.extend(chain)
                edges.extend(zip([prev, *ids], ids, strict=False))
                break
        else:
            return False
    return True


def _grow_scenic(
    spec: ScenicSpec, rng: np.random.Generator
) -> tuple[list[_Point], list[tuple[int, int]]] | None:
    lengths = [int(x) for x in 1 + rng.binomial(2, 0.3, size=spec.spurs)]
    need = max(7, spec.extra_edges + 4, spec.n_spots - 3 * spec.spurs)
    while spec.n_spots - sum(lengths) < need and max(lengths, default=1) > 1:
        lengths[lengths.index(max(lengths))] -= 1
    pts = _scatter(spec.n_spots - sum(lengths), rng)
    edges = _core_edges(pts, spec.extra_edges, rng)
    if edges is None or not _add_spurs(pts, edges, lengths, rng):
        return None
    return pts, edges


def synth_scenic(spec: ScenicSpec, seed: int, map_id: str = "") -> Network:
    """A synthetic travelmap following ``spec``, a pure function of ``(spec, seed)``.

    ``positions`` are in map units (spots at least one unit apart; x right, y down).
    ``meta`` holds ``kind="scenic"``, ``language``, ``km_per_unit``, ``hubs``
    ({spot: "airport"|"station"}; SPEC 6 gives them Vertex Time 0), ``modes``
    ({edge name: "walk"|"drive"}, every edge: walk below 1.5 km of road), ``annotations``
    ({edge name: {"kind": "time", "value": minutes (int), "unit": "min"} or
    {"kind": "distance", "value": km, "unit": "km"}}, on part of the edges, empty when
    ``spec.annotation`` is ``None``) and ``spec``. Edge names are ``Edge.name`` (``u-v``).
    """
    rng = np.random.default_rng(seed)
    pts, pairs = _attempts(_grow_scenic, spec, rng, "scenic")
    degree = np.bincount(np.array(pairs).ravel(), minlength=len(pts))
    by_degree = sorted(range(len(pts)), key=lambda i: (int(degree[i]), float(rng.random())))
    hub_ids = by_degree[: spec.hubs]
    kinds = [HUB_KINDS[int(rng.integers(len(HUB_KINDS)))] for _ in hub_ids]
    hubs = dict(zip(hub_ids, hub_names(kinds, spec.language, rng), strict=True))
    others = iter(spot_names(len(pts) - len(hubs), spec.language, rng, taken=hubs.values()))
    names = [hubs[i] if i in hubs else next(others) for i in range(len(pts))]
    keys = [table_name(n) for n in names]
    edges = [Edge(keys[a], keys[b]) for a, b in pairs]

    km_per_unit = round(float(rng.uniform(0.3, 2.5)), 3)
    road_km = [
        math.dist(pts[a], pts[b]) * km_per_unit * float(rng.uniform(1.05, 1.35)) for a, b in pairs
    ]
    modes = {e.name: "walk" if km < 1.5 else "drive" for e, km in zip(edges, road_km, strict=True)}
    annotations: dict[str, dict[str, object]] = {}
    if spec.annotation is not None:
        count = max(1, round(spec.annotated_fraction * len(edges)))
        for i in sorted(int(i) for i in rng.choice(len(edges), size=count, replace=False)):
            km, name = road_km[i], edges[i].name
            if spec.annotation == "distance":
                value: float | int = round(km, 1) if km >= 1.0 else max(0.05, round(km, 2))
                annotations[name] = {"kind": "distance", "value": value, "unit": "km"}
            else:
                speed = 4.5 if modes[name] == "walk" else 35.0  # km/h
                annotations[name] = {
                    "kind": "time",
                    "value": max(1, round(km / speed * 60)),
                    "unit": "min",
                }
    return Network(
        "travelmap",
        {k: Vertex(k) for k in keys},
        edges,
        map_id=map_id,
        labels={k: n for k, n in zip(keys, names, strict=True) if k != n},
        positions={keys[i]: p for i, p in enumerate(pts)},
        meta={
            "kind": "scenic",
            "language": spec.language,
            "km_per_unit": km_per_unit,
            "hubs": {keys[i]: kind for i, kind in zip(hub_ids, kinds, strict=True)},
            "modes": modes,
            "annotations": annotations,
            "spec": _spec_meta(spec),
        },
    )
