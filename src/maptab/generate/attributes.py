"""Attribute synthesis for Edge_tab and Vertex_tab (SPEC 6; MapTab appendix E.1).

:func:`synthesize_attributes` fills every attribute of a network from a seeded
:class:`numpy.random.Generator`; the same network and seed always give the same values.
Values are drawn directly on their decimal grid (integers divided by 100, by 10, or by 365),
so they are exact after rounding and always inside their SPEC 6 ranges.

**metromap** (uniform draws, two decimals)

* Edge_tab: Time U[2.00, 3.00]; Price U[0.00, 1.50]; Comfort U[0.00, 1.00]; Reliability 0.
* Vertex_tab: Time U[0.50, 2.00]; Price 0; Comfort U[0.00, 1.00]; Reliability U[0.50, 1.00];
  Transfer Time an integer U[5, 15] on transfer stations (two or more lines), else 0.

**travelmap** (the skewed distributions are ours; see ``docs/synthesis.md``)

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

from collections.abc import Mapping

import numpy as np

from maptab.errors import MaptabError
from maptab.network import Edge, Network, Vertex


class AttributeSynthesisError(MaptabError):
    """A network whose metadata cannot drive attribute synthesis (bad annotation)."""


def _hundredths(rng: np.random.Generator, lo: int, hi: int) -> float:
    """Uniform on ``{lo, lo+1, …, hi} / 100``."""
    return int(rng.integers(lo, hi + 1)) / 100


def _skewed(rng: np.random.Generator, lo: int, span: int, a: float, b: float) -> int:
    """``lo + round(span·B)`` with ``B ~ Beta(a, b)``: an integer in ``[lo, lo + span]``."""
    return lo + round(span * float(rng.beta(a, b)))


def _comfort(rng: np.random.Generator) -> float:
    return _skewed(rng, 10, 40, 4.0, 2.0) / 10


def _metro(network: Network, rng: np.random.Generator) -> Network:
    edges = [
        Edge(
            e.u,
            e.v,
            e.line,
            time=_hundredths(rng, 200, 300),
            price=_hundredths(rng, 0, 150),
            comfort=_hundredths(rng, 0, 100),
            reliability=0.0,
        )
        for e in network.edges
    ]
    vertices = {}
    for name, v in network.vertices.items():
        time = _hundredths(rng, 50, 200)
        comfort = _hundredths(rng, 0, 100)
        reliability = _hundredths(rng, 50, 100)
        transfer = float(rng.integers(5, 16)) if v.is_transfer else 0.0
        vertices[name] = Vertex(name, v.lines, time, 0.0, comfort, reliability, transfer)
    return network.with_attributes(vertices=vertices, edges=edges)


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
