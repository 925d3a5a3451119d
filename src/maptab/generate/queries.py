"""Route-planning queries: origin–destination sampling, weights, gold labels (SPEC 9).

Each OD pair yields one query per category of :data:`maptab.core.schema.RP_CATEGORIES` (12),
with gold labels from the exact solver (:mod:`maptab.core.solver`): all minimum-hop routes for
the criteria-free categories, all J-optimal routes for the criteria categories.

Weights (SPEC 9): one integer triple and one integer quadruple (each entry drawn from 1–9)
per OD pair, normalised to six decimals. As in MapTab's released labels, where the three
3-criteria categories of a pair carry the same weights (in criterion order) and
``all_criteria`` / ``map_mix`` share theirs, the triple and the quadruple are shared that way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from maptab.core.costs import CostError, Weights, route_totals
from maptab.core.network import Network, hop_distances
from maptab.core.route_text import format_route_of
from maptab.core.schema import CRITERIA, RP_CATEGORIES, RPCategory
from maptab.core.solver import Route, Solution, solve_routes

MIN_ROUTE_STATIONS = 3


def normalised_weights(integers: list[int]) -> list[float]:
    """Integers → weights with six decimals summing to exactly 1 (last entry absorbs rounding)."""
    total = sum(integers)
    out = [round(i / total, 6) for i in integers[:-1]]
    out.append(round(1.0 - sum(out), 6))
    return out


def category_weights(category: RPCategory, triple: list[float], quad: list[float]) -> list[float]:
    """``[wT, wP, wC, wR]`` for ``category``: 1 on a single criterion, the shared draws otherwise."""
    if len(category.criteria) == 1:
        return [1.0 if c in category.criteria else 0.0 for c in CRITERIA]
    source = iter(triple if len(category.criteria) == 3 else quad)
    return [next(source) if c in category.criteria else 0.0 for c in CRITERIA]


def eligible_pairs(network: Network) -> list[tuple[str, str]]:
    """Ordered distinct OD pairs whose shortest route has at least 3 stations (2+ hops)."""
    graph = network.simple_graph()
    pairs = []
    for s in network.stations:
        dist = hop_distances(graph, s)
        pairs.extend((s, t) for t in network.stations if dist.get(t, 0) >= MIN_ROUTE_STATIONS - 1)
    return pairs


def sample_pairs(network: Network, count: int, rng: np.random.Generator) -> list[tuple[str, str]]:
    """``count`` distinct eligible OD pairs (all of them when fewer exist), seeded."""
    pairs = eligible_pairs(network)
    if count >= len(pairs):
        order = rng.permutation(len(pairs))
    else:
        order = rng.choice(len(pairs), size=count, replace=False)
    return [pairs[i] for i in order]


def repetition_class(
    optimal: list[Route], shortest: list[Route], shortest_count: int | None = None
) -> str:
    """FR / PR / NR (SPEC 9): is an optimal route among the criteria-free (min-hop) routes?

    FR: it is the unique shortest path; PR: it is one of several; NR: none of them. The
    min-hop routes are all the simple paths with the fewest stations, so an optimal route is
    among them exactly when it has that many stations. ``shortest_count`` is the exact
    number of min-hop routes when ``shortest`` is a capped list (more than listed: PR). With
    a capped ``optimal`` list the answer is read from the listed routes (see
    docs/reference/cost-model.md: the default cap does not bind on the ``paper`` preset).
    """
    fewest = shortest[0].vertex_count
    if not any(r.vertex_count == fewest for r in optimal):
        return "NR"
    unique = len({r.stations for r in shortest}) == 1
    return "FR" if unique and (shortest_count or 0) <= len(shortest) else "PR"


@dataclass(frozen=True, slots=True)
class Gold:
    """Gold label of one query: the listed reference routes, the exact number of optimal
    routes (``count``; more than listed when the list was capped) and, for criteria
    queries, the totals of ``routes[0]``."""

    routes: list[Route]
    totals: dict[str, float] | None
    count: int

    @classmethod
    def of(cls, solution: Solution, totals: dict[str, float] | None = None) -> Gold:
        return cls(solution.routes, totals, solution.count)

    def label(self) -> dict[str, object]:
        return {
            "routes": [format_route_of(r) for r in self.routes],
            "route_vertex_numbers": [r.vertex_count for r in self.routes],
            "transfer_vertex_numbers": [r.transfer_count for r in self.routes],
            "route_count": self.count,
            "truncated": self.count > len(self.routes),
        }


def _joined(solution: Solution, source: str, target: str) -> Solution:
    """``solution``, refused with one line when no route joins the two stations."""
    if not solution.routes:
        raise CostError(f"no route from {source!r} to {target!r}")
    return solution


def gold_label(
    network: Network,
    mix_network: Network,
    category: RPCategory,
    source: str,
    target: str,
    weights: list[float] | None,
    *,
    cost_model: str = "additive",
) -> Gold:
    """Exact gold routes (and totals of ``routes[0]``) for one query (SPEC 3–4): every
    optimal route counted, the first :data:`maptab.core.solver.MAX_ROUTES` listed."""
    if category.criteria_free:
        return Gold.of(_joined(solve_routes(network, source, target), source, target))
    net = mix_network if category.items == "vertex" else network
    w = Weights(*weights)  # type: ignore[misc]
    solution = solve_routes(net, source, target, w, items=category.items, model=cost_model)
    best = _joined(solution, source, target).routes[0]
    totals = route_totals(net, best.stations, best.lines, items=category.items).as_label()
    return Gold.of(solution, totals)


def od_queries(
    network: Network,
    mix_network: Network,
    source: str,
    target: str,
    rng: np.random.Generator,
    *,
    cost_model: str = "additive",
) -> Iterator[tuple[RPCategory, list[float] | None, Gold, str | None]]:
    """The 12 (category, weights, gold, repetition class) tuples of one OD pair."""
    triple = normalised_weights([int(x) for x in rng.integers(1, 10, size=3)])
    quad = normalised_weights([int(x) for x in rng.integers(1, 10, size=4)])
    shortest: Gold | None = None
    for category in RP_CATEGORIES:
        if category.criteria_free:
            if shortest is None:
                shortest = Gold.of(solve_routes(network, source, target))
            yield category, None, shortest, None
        else:
            weights = category_weights(category, triple, quad)
            gold = gold_label(
                network, mix_network, category, source, target, weights, cost_model=cost_model
            )
            assert shortest is not None  # criteria-free categories come first in the registry
            yield (
                category,
                weights,
                gold,
                repetition_class(gold.routes, shortest.routes, shortest.count),
            )
