"""Attribute synthesis for Edge_tab and Vertex_tab (SPEC 6; MapTab appendix E.1).

:func:`synthesize_attributes` fills every attribute of a network from a seeded
:class:`numpy.random.Generator`; the same network and seed always give the same values.
Values are drawn directly on their decimal grid (integers divided by 100, by 10, or by 365),
so they are exact after rounding and always inside their SPEC 6 ranges.

**metromap** (uniform draws, two decimals; handed out by line and busyness, see below)

* Edge_tab: Time U[2.00, 3.00]; Price U[0.00, 1.50]; Comfort U[0.00, 1.00]; Reliability 0.
* Vertex_tab: Time U[0.50, 2.00]; Price 0; Comfort U[0.00, 1.00]; Reliability U[0.50, 1.00];
  Transfer Time an integer U[5, 15] on transfer stations (two or more lines), else 0.
* Per map and column the values are those i.i.d. draws, handed out by rank of a score
  (highest score, costliest value): the score mixes the line's level (a line quality shared
  by its attributes), the station's or track's busyness (betweenness rank) and noise, so
  whole lines are slow or dear and busy interchanges slow, as on real networks; weighted
  optima then leave the fewest-stations route about as often as in the paper.

**travelmap** (the skewed distributions are ours; see ``docs/reference/synthesis.md``)

* Edge Time: from the map's annotation of that edge (``meta["annotations"]``): a time
  annotation is used as is; a distance ``d`` km gives ``d`` minutes when ``d ≥ 1`` (60 km/h)
  and ``d·1000/4/60`` minutes below (4 m/s), at least 1 minute, two decimals; an edge with
  no annotation gets an integer U[10, 60].
* Edge Price: integer ``10 + round(70·B)``, ``B ~ Beta(1.2, 3)`` (skewed low, median ≈ 28).
* Comfort (edges and vertices): ``(10 + round(40·B)) / 10``, ``B ~ Beta(4, 2)`` (one decimal,
  1.0–5.0, about 83 % at 3.0 or above).
* Edge Reliability: ``a/365``, ``a = 1 + round(364·B)``, ``B ~ Beta(3, 1.3)`` (about 83 % of
  ``a`` above 180), six decimals.
* Vertex Time: 0 for transport hubs (``meta["hubs"]``); otherwise an integer, U[20, 29] with
  probability 0.15 (short stops, so SPEC 10 types 19 and 23 have material) else U[30, 180].
* Vertex Price: hubs 100, 200 or 300; otherwise a multiple of 5, uniform in 10–200.
* Vertex Reliability: ``a/365``, ``a = 60 + round(305·B)``, ``B ~ Beta(2.5, 1.2)`` (about 87 %
  of ``a`` above 180), six decimals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import NormalDist

import numpy as np

from maptab.core.network import Edge, Network, Vertex
from maptab.errors import MaptabError


class AttributeSynthesisError(MaptabError):
    """A network whose metadata cannot drive attribute synthesis (bad annotation)."""


def _skewed(rng: np.random.Generator, lo: int, span: int, a: float, b: float) -> int:
    """``lo + round(span·B)`` with ``B ~ Beta(a, b)``: an integer in ``[lo, lo + span]``."""
    return lo + round(span * float(rng.beta(a, b)))


def _comfort(rng: np.random.Generator) -> float:
    return _skewed(rng, 10, 40, 4.0, 2.0) / 10


# Shares of a metro item's score variance (docs/reference/synthesis.md, "Attributes"): its line's
# level (LINE_SHARE), the busyness of its station (BUSY_SHARE, TRANSFER_BUSY_SHARE) or track
# (EDGE_BUSY_SHARE); the rest is noise. QUALITY_SHARE: the part of a line's level that is
# its overall quality, common to its four attributes. The values stay SPEC 6's uniform
# draws whatever these are; only which item gets which follows the score.
LINE_SHARE = {"time": 0.35, "price": 0.3, "comfort": 0.35, "reliability": 0.35}
QUALITY_SHARE = 0.9
BUSY_SHARE = {"time": 0.55, "comfort": 0.55, "reliability": 0.55}
TRANSFER_BUSY_SHARE = 0.9
EDGE_BUSY_SHARE = {"time": 0.5, "price": 0.1, "comfort": 0.45}
_METRO_GRIDS = {  # hundredths: (lo, hi) of SPEC 6's uniform ranges
    ("edge", "time"): (200, 300),
    ("edge", "price"): (0, 150),
    ("edge", "comfort"): (0, 100),
    ("vertex", "time"): (50, 200),
    ("vertex", "comfort"): (0, 100),
    ("vertex", "reliability"): (50, 100),
}
_STANDARD_NORMAL = NormalDist()
# +1: a higher value costs more (time, price); -1: a lower value does (comfort,
# reliability). Levels and scores are on the cost side: high means costly.
_COST_SIGN = {"time": 1.0, "price": 1.0, "comfort": -1.0, "reliability": -1.0}


def _line_levels(lines: list[str], rng: np.random.Generator) -> dict[str, dict[str, float]]:
    """A standard normal latent level per line and attribute: ``√q·Q + √(1−q)·η``,
    ``Q`` the line's quality (shared by its attributes), ``η`` its own; a high level is a
    high cost (slow, dear, uncomfortable, unreliable)."""
    levels: dict[str, dict[str, float]] = {}
    for line in lines:
        quality = float(rng.standard_normal())
        own = rng.standard_normal(len(_COST_SIGN))
        levels[line] = {
            attr: math.sqrt(QUALITY_SHARE) * quality + math.sqrt(1 - QUALITY_SHARE) * float(x)
            for attr, x in zip(_COST_SIGN, own, strict=True)
        }
    return levels


def _score(rng: np.random.Generator, parts: list[tuple[float, float]]) -> float:
    """``Σ √share·latent`` over ``parts`` plus independent noise for the rest of the
    variance: a standard normal score when the latents are standard normal."""
    rest = 1.0 - sum(share for share, _ in parts)
    noise = math.sqrt(max(0.0, rest)) * float(rng.standard_normal())
    return sum(math.sqrt(share) * latent for share, latent in parts) + noise


def _metro(network: Network, rng: np.random.Generator) -> Network:
    levels = _line_levels(network.line_names, rng)
    node_busy, edge_busy = _busyness(network)
    edge_values: dict[str, list[float]] = {}
    for attr in ("time", "price", "comfort"):
        scores = [
            _score(
                rng,
                [
                    (LINE_SHARE[attr], levels[e.line][attr] if e.line in levels else 0.0),
                    (EDGE_BUSY_SHARE[attr], edge_busy[frozenset((e.u, e.v))]),
                ],
            )
            for e in network.edges
        ]
        lo, hi = _METRO_GRIDS[("edge", attr)]
        draws = [int(x) / 100 for x in rng.integers(lo, hi + 1, size=len(scores))]
        edge_values[attr] = _assign(draws, scores, cost_up=_COST_SIGN[attr] > 0)
    edges = [
        Edge(
            e.u,
            e.v,
            e.line,
            time=edge_values["time"][i],
            price=edge_values["price"][i],
            comfort=edge_values["comfort"][i],
            reliability=0.0,
        )
        for i, e in enumerate(network.edges)
    ]
    stations = list(network.vertices)
    vertex_values: dict[str, list[float]] = {}
    for attr in ("time", "comfort", "reliability"):
        scores = []
        for name in stations:
            own = [levels[line] for line in network.vertices[name].lines if line in levels]
            # a station on k lines: the sum of their levels / √k (still standard normal)
            line_level = sum(lv[attr] for lv in own) / math.sqrt(len(own)) if own else 0.0
            scores.append(
                _score(rng, [(LINE_SHARE[attr], line_level), (BUSY_SHARE[attr], node_busy[name])])
            )
        lo, hi = _METRO_GRIDS[("vertex", attr)]
        draws = [int(x) / 100 for x in rng.integers(lo, hi + 1, size=len(stations))]
        vertex_values[attr] = _assign(draws, scores, cost_up=_COST_SIGN[attr] > 0)
    transfers = [name for name in stations if network.vertices[name].is_transfer]
    transfer_scores = [_score(rng, [(TRANSFER_BUSY_SHARE, node_busy[name])]) for name in transfers]
    transfer_draws = [float(x) for x in rng.integers(5, 16, size=len(transfers))]
    transfer_time = dict(
        zip(transfers, _assign(transfer_draws, transfer_scores, cost_up=True), strict=True)
    )
    vertices = {}
    for i, (name, v) in enumerate(network.vertices.items()):
        vertices[name] = Vertex(
            name,
            v.lines,
            vertex_values["time"][i],
            0.0,
            vertex_values["comfort"][i],
            vertex_values["reliability"][i],
            transfer_time.get(name, 0.0),
        )
    return network.with_attributes(vertices=vertices, edges=edges)


def _assign(draws: list[float], scores: list[float], *, cost_up: bool) -> list[float]:
    """``draws`` handed out by rank of ``scores``: the highest score gets the costliest
    draw (the largest when ``cost_up``, else the smallest). The values of the table stay
    the i.i.d. draws; only who gets which follows the scores."""
    ordered = sorted(draws, reverse=not cost_up)
    out = [0.0] * len(draws)
    for rank, i in enumerate(sorted(range(len(scores)), key=lambda j: scores[j])):
        out[i] = ordered[rank]
    return out


def _normal_scores(values: list[float]) -> list[float]:
    """Normal scores of ``values``' ranks, ``Φ⁻¹((rank + ½)/n)``; equal values are ranked
    by position (mostly the termini tie, all at betweenness 0, at the bottom)."""
    n = len(values)
    out = [0.0] * n
    for rank, i in enumerate(sorted(range(n), key=lambda j: values[j])):
        out[i] = _STANDARD_NORMAL.inv_cdf((rank + 0.5) / n)
    return out


def _busyness(network: Network) -> tuple[dict[str, float], dict[frozenset[str], float]]:
    """How busy each station and each track (station pair) is: normal scores of their
    betweenness ranks over the map (about N(0, 1); high where many fewest-stations
    routes pass)."""
    stations = list(network.vertices)
    node, edge = _betweenness(network.simple_graph(), stations)
    tracks = list(edge)
    return (
        dict(zip(stations, _normal_scores([node[s] for s in stations]), strict=True)),
        dict(zip(tracks, _normal_scores([edge[t] for t in tracks]), strict=True)),
    )


def _betweenness(
    graph: Mapping[str, set[str]], stations: list[str]
) -> tuple[dict[str, float], dict[frozenset[str], float]]:
    """Brandes' betweenness (unnormalised) of every station and every track (adjacent
    pair) of an unweighted graph."""
    index = {s: i for i, s in enumerate(stations)}
    nbrs = [sorted(index[w] for w in graph[s]) for s in stations]
    n = len(stations)
    node = [0.0] * n
    edge: dict[tuple[int, int], float] = {}
    for s in range(n):
        dist = [-1] * n
        sigma = [0.0] * n
        preds: list[list[int]] = [[] for _ in range(n)]
        dist[s], sigma[s] = 0, 1.0
        order = [s]
        head = 0
        while head < len(order):
            v = order[head]
            head += 1
            for w in nbrs[v]:
                if dist[w] < 0:
                    dist[w] = dist[v] + 1
                    order.append(w)
                if dist[w] == dist[v] + 1:
                    sigma[w] += sigma[v]
                    preds[w].append(v)
        delta = [0.0] * n
        for w in reversed(order):
            for v in preds[w]:
                c = sigma[v] / sigma[w] * (1 + delta[w])
                delta[v] += c
                key = (v, w) if v < w else (w, v)
                edge[key] = edge.get(key, 0.0) + c
            if w != s:
                node[w] += delta[w]
    tracks = {
        frozenset((stations[a], stations[b])): edge.get((a, b), 0.0)
        for a in range(n)
        for b in nbrs[a]
        if a < b
    }
    return dict(zip(stations, node, strict=True)), tracks


def travel_edge_time(annotation: Mapping[str, object] | None, rng: np.random.Generator) -> float:
    """Edge Time in minutes from an edge annotation (SPEC 6), else an integer U[10, 60]."""
    if annotation is None:
        return float(rng.integers(10, 61))
    kind, value = annotation.get("kind"), annotation.get("value")
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise AttributeSynthesisError(
            f"annotation {dict(annotation)}: value must be a positive number"
        )
    if kind == "time":
        return round(float(value), 2)
    if kind == "distance":
        minutes = value if value >= 1.0 else value * 1000 / 4 / 60
        return max(1.0, round(float(minutes), 2))
    raise AttributeSynthesisError(
        f"annotation {dict(annotation)}: kind must be 'time' or 'distance'"
    )


def _travel(network: Network, rng: np.random.Generator) -> Network:
    annotations = network.meta.get("annotations") or {}
    hubs = network.meta.get("hubs") or {}
    if not isinstance(annotations, Mapping) or not isinstance(hubs, Mapping):
        raise AttributeSynthesisError("meta 'annotations' and 'hubs' must be mappings")
    edges = [
        Edge(
            e.u,
            e.v,
            None,
            time=travel_edge_time(annotations.get(e.name), rng),
            price=float(_skewed(rng, 10, 70, 1.2, 3.0)),
            comfort=_comfort(rng),
            reliability=round(_skewed(rng, 1, 364, 3.0, 1.3) / 365, 6),
        )
        for e in network.edges
    ]
    vertices = {}
    for name in network.vertices:
        if name in hubs:
            time = 0.0
            price = float((100, 200, 300)[int(rng.integers(3))])
        else:
            short = rng.random() < 0.15
            time = float(rng.integers(20, 30) if short else rng.integers(30, 181))
            price = float(5 * rng.integers(2, 41))
        comfort = _comfort(rng)
        reliability = round(_skewed(rng, 60, 305, 2.5, 1.2) / 365, 6)
        vertices[name] = Vertex(name, (), time, price, comfort, reliability, 0.0)
    return network.with_attributes(vertices=vertices, edges=edges)


def synthesize_attributes(network: Network, seed: int) -> Network:
    """A copy of ``network`` with every Edge_tab and Vertex_tab value drawn per SPEC 6.

    Topology, names, geometry and metadata are kept. Travelmap edge times use
    ``meta["annotations"]`` and hub vertices ``meta["hubs"]`` (both optional, as written by
    :func:`maptab.generate.synth.synth_scenic`). Deterministic in ``(network, seed)``.

    Raises :class:`AttributeSynthesisError` (a ``ValueError``) on a malformed annotation.
    """
    rng = np.random.default_rng(seed)
    if network.scenario == "metromap":
        return _metro(network, rng)
    return _travel(network, rng)
