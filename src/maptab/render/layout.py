"""Layout for topologies without coordinates, and layout quality numbers.

:func:`layout_network` places each connected component in four steps:

1. **stress majorization** — positions whose distances match hop distances (weights
   ``d⁻²``, started from classical MDS), which keeps lines straight-ish;
2. **octilinear pull** — each edge is nudged towards the nearest multiple of 45° and unit
   length, interleaved with stress steps so the global shape holds;
3. **grid snap** — positions are scaled so the median edge spans two grid steps, rounded to
   the integer grid, and a station landing on an occupied point moves to the nearest free
   one, so no two stations coincide;
4. the result is computed for four start rotations (0°, 22.5°, 45°, 67.5°) and the one
   with the fewest edge crossings (then the most octilinear edges) is kept.

Components are laid side by side. Everything is deterministic. Positions are map units
(``x`` right, ``y`` up), one grid step apart at least.

:func:`layout_quality` reports ``edge_crossings`` (pairs of edges between different station
pairs that properly cross), ``label_overlaps`` (label–label overlaps plus labels covering a
station they do not name, in the rendered geometry), ``station_overlaps`` (pairs of station
marks that overlap), ``octilinear_fraction`` and ``crowded_labels``.
"""

from __future__ import annotations

import math

import numpy as np

from maptab.core.network import Network, connected_components, hop_distances
from maptab.render.geometry import GridIndex, Point
from maptab.render.legibility import overlap_count
from maptab.render.metro import metro_geometry, pair_key
from maptab.render.scenic import scenic_geometry

_ROTATIONS = (0.0, 22.5, 45.0, 67.5)


def _hop_distances(nodes: list[str], graph: dict[str, set[str]]) -> np.ndarray:
    index = {s: i for i, s in enumerate(nodes)}
    d = np.zeros((len(nodes), len(nodes)))
    for i, s in enumerate(nodes):
        for t, k in hop_distances(graph, s).items():
            d[i, index[t]] = k
    return d


def _classical_mds(d: np.ndarray) -> np.ndarray:
    n = len(d)
    j = np.eye(n) - 1.0 / n
    b = -0.5 * j @ (d**2) @ j
    vals, vecs = np.linalg.eigh(b)
    top = np.argsort(vals)[::-1][:2]
    x = vecs[:, top] * np.sqrt(np.maximum(vals[top], 1e-9))
    # a tiny deterministic jitter breaks exact symmetries (e.g. a path laid on one axis)
    x += 1e-3 * np.column_stack([np.sin(np.arange(n) * 1.7), np.cos(np.arange(n) * 2.3)])
    return x


def _stress_step(x: np.ndarray, d: np.ndarray, w: np.ndarray) -> np.ndarray:
    """One Jacobi step of stress majorization (Gansner, Koren & North 2004):
    ``x_i ← Σ_j w_ij (x_j + d_ij (x_i − x_j) / ‖x_i − x_j‖) / Σ_j w_ij``, computed with
    matrix products (no ``n × n × 2`` temporaries)."""
    sq = (x * x).sum(axis=1)
    dist = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2.0 * (x @ x.T), 0.0))
    np.fill_diagonal(dist, 1.0)
    coef = w * d / np.maximum(dist, 1e-9)
    target = w @ x + coef.sum(axis=1)[:, None] * x - coef @ x
    return target / w.sum(axis=1)[:, None]


def _octilinear_step(x: np.ndarray, edges: np.ndarray, rate: float) -> np.ndarray:
    v = x[edges[:, 1]] - x[edges[:, 0]]
    ang = np.arctan2(v[:, 1], v[:, 0])
    snapped = np.round(ang / (np.pi / 4)) * (np.pi / 4)
    want = np.column_stack([np.cos(snapped), np.sin(snapped)])
    corr = (want - v) * (rate / 2)
    out = x.copy()
    np.add.at(out, edges[:, 0], -corr)
    np.add.at(out, edges[:, 1], corr)
    return out


def _snap(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    lengths = np.linalg.norm(x[edges[:, 1]] - x[edges[:, 0]], axis=1)
    unit = float(np.median(lengths)) if len(lengths) else 1.0
    y = x * (2.0 / max(unit, 1e-9))
    taken: set[tuple[int, int]] = set()
    out = np.zeros_like(y)
    for i in np.argsort(np.linalg.norm(y - y.mean(axis=0), axis=1)):
        gx, gy = int(round(y[i, 0])), int(round(y[i, 1]))
        best = (gx, gy)
        r = 0
        while best in taken:
            r += 1
            ring = [(gx + a, gy + b) for a in range(-r, r + 1) for b in range(-r, r + 1)]
            free = [p for p in ring if p not in taken]
            if free:
                best = min(free, key=lambda p: (p[0] - y[i, 0]) ** 2 + (p[1] - y[i, 1]) ** 2)
        taken.add(best)
        out[i] = best
    return out


def count_crossings(segments: list[tuple[Point, Point]]) -> int:
    """Pairs of segments that properly cross (segments sharing an endpoint never count)."""
    if len(segments) < 2:
        return 0
    s = np.array(segments, dtype=float)  # (m, 2, 2)
    a, b = s[:, 0], s[:, 1]
    i, j = np.triu_indices(len(s), 1)

    def orient(p, q, r):
        return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (
            r[..., 0] - p[..., 0]
        )

    o1 = orient(a[i], b[i], a[j])
    o2 = orient(a[i], b[i], b[j])
    o3 = orient(a[j], b[j], a[i])
    o4 = orient(a[j], b[j], b[i])
    shared = (
        np.all(a[i] == a[j], axis=1)
        | np.all(a[i] == b[j], axis=1)
        | np.all(b[i] == a[j], axis=1)
        | np.all(b[i] == b[j], axis=1)
    )
    crosses = (o1 * o2 < 0) & (o3 * o4 < 0) & ~shared
    return int(crosses.sum())


def _octilinear_fraction(x: np.ndarray, edges: np.ndarray) -> float:
    if len(edges) == 0:
        return 1.0
    v = x[edges[:, 1]] - x[edges[:, 0]]
    ang = np.degrees(np.arctan2(v[:, 1], v[:, 0]))
    off = np.abs(ang / 45.0 - np.round(ang / 45.0)) * 45.0
    return float(np.mean(off < 1.0))


def _layout_component(nodes: list[str], graph: dict[str, set[str]]) -> np.ndarray:
    n = len(nodes)
    if n == 1:
        return np.zeros((1, 2))
    index = {s: i for i, s in enumerate(nodes)}
    edges = np.array(sorted({tuple(sorted((index[u], index[v]))) for u in nodes for v in graph[u]}))
    d = _hop_distances(nodes, graph)
    w = np.where(d > 0, 1.0 / np.maximum(d, 1.0) ** 2, 0.0)
    x = _classical_mds(d)
    for _ in range(60):
        x = _stress_step(x, d, w)
    best: tuple[tuple[int, float], np.ndarray] | None = None
    for deg in _ROTATIONS:
        t = math.radians(deg)
        y = x @ np.array([[math.cos(t), math.sin(t)], [-math.sin(t), math.cos(t)]])
        for k in range(40):
            y = _octilinear_step(y, edges, 0.8)
            if k % 4 == 3:
                y = 0.5 * y + 0.5 * _stress_step(y, d, w)
        y = _snap(y, edges)
        segs = [((y[a, 0], y[a, 1]), (y[b, 0], y[b, 1])) for a, b in edges]
        score = (count_crossings(segs), -_octilinear_fraction(y, edges))
        if best is None or score < best[0]:
            best = (score, y)
    assert best is not None
    return best[1]


def layout_network(network: Network) -> dict[str, Point]:
    """Positions for every station of ``network`` (module docstring), in map units."""
    graph = network.simple_graph()
    out: dict[str, Point] = {}
    x_off = 0.0
    for comp in connected_components(graph):
        y = _layout_component(comp, graph)
        y = y - y.min(axis=0)
        for s, (px, py) in zip(comp, y, strict=True):
            out[s] = (float(px + x_off), float(py))
        x_off += float(y[:, 0].max()) + 4.0
    return out


def layout_quality(network: Network, positions: dict[str, Point]) -> dict[str, float | int]:
    """Quality numbers of a layout as rendered (module docstring)."""
    pairs = sorted({pair_key(e.u, e.v) for e in network.edges})
    segs = [(positions[u], positions[v]) for u, v in pairs]
    build = metro_geometry if network.scenario == "metromap" else scenic_geometry
    placed = build(network, positions, scale=1.0)
    marks = GridIndex(64.0)
    station_overlaps = 0
    for m in placed.stations.values():
        station_overlaps += len(marks.query(m.box))
        marks.insert(m.box, m.station)
    index = {s: i for i, s in enumerate(network.vertices)}
    x = np.array([positions[s] for s in network.vertices], dtype=float)
    edges = np.array([(index[u], index[v]) for u, v in pairs], dtype=int).reshape(-1, 2)
    return {
        "edge_crossings": count_crossings(segs),
        "label_overlaps": overlap_count(placed),
        "station_overlaps": station_overlaps,
        "octilinear_fraction": round(_octilinear_fraction(x, edges), 4),
        "crowded_labels": len(placed.crowded),
    }
