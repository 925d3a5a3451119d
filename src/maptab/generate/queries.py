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
from maptab.core.network import Network, fewest_hops_counts, hop_distances
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


def tied_pairs(network: Network) -> set[tuple[str, str]]:
    """Ordered pairs joined by two or more fewest-hops routes (distinct station sequences)."""
    graph = network.simple_graph()
    out = set()
    for s in network.stations:
        count = fewest_hops_counts(graph, s)
        out.update((s, t) for t, n in count.items() if n > 1)
    return out


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


@dataclass(frozen=True, slots=True)
class PairShares:
    """Shares a generated map's OD pairs are drawn to (docs/reference/difficulty-and-qa.md):
    tied pairs (two or more fewest-stations routes) among its pairs and, when set, NR among
    its weighted queries. Each becomes a whole number per map by seeded rounding (up with
    probability equal to the fraction), so over many maps the expected share is the target
    wherever the maps' pairs allow it."""

    tied: float
    nr: float | None = None
    #: pairs labelled before the NR target is dropped, per pair wanted
    lookahead: int = 3


#: Generated maps' targets over a scenario's pairs (scaled per build to the maps that can meet
#: them, :func:`maptab.generate.pipeline.pair_shares`): a uniform draw asks more tied pairs
#: than real metro systems have (tie share over asked pairs at most 14%) and than the paper's
#: scenic PR share (79.4/15.9/4.7), and its metro NR share per category drifts out of 15–25%.
PAIR_SHARES = {"metromap": PairShares(tied=0.12, nr=0.24), "travelmap": PairShares(tied=0.16)}

Query = tuple[RPCategory, list[float] | None, Gold, str | None]
"""One query of an OD pair: category, weights, gold label, repetition class."""


def _nr(queries: list[Query]) -> np.ndarray:
    """1 for each category whose query is NR, else 0 (criteria-free categories: 0)."""
    return np.array([rep == "NR" for *_, rep in queries], dtype=float)


def _rounded(share: float, count: int, rng: np.random.Generator) -> int:
    whole = share * count
    return int(whole) + int(rng.random() < whole - int(whole))


def select_pairs(
    network: Network,
    mix_network: Network,
    count: int,
    rng: np.random.Generator,
    shares: PairShares | None = None,
    *,
    cost_model: str = "additive",
) -> list[tuple[tuple[str, str], list[Query]]]:
    """``count`` OD pairs with their 12 queries (:func:`od_queries`), seeded.

    Without ``shares`` the pairs are a uniform draw (:func:`sample_pairs`). With them the
    eligible pairs are visited in a seeded random order: the first ``round(tied·count)`` tied
    pairs and the first untied ones fill the map (one kind makes up for the other where it
    runs short). With ``shares.nr`` an untied pair is passed over when its NR queries leave
    the map's NR counts per weighted category further from the target's pro-rata path
    (squared distance) than a pair drawn at the target share would on average (only among
    the first ``lookahead × count`` pairs labelled; passed pairs fill up last).
    """

    def labelled(pair: tuple[str, str]) -> list[Query]:
        return list(od_queries(network, mix_network, *pair, rng, cost_model=cost_model))

    if shares is None:
        return [(p, labelled(p)) for p in sample_pairs(network, count, rng)]
    pairs = eligible_pairs(network)
    order = [pairs[i] for i in rng.permutation(len(pairs))]
    if count >= len(order):
        return [(p, labelled(p)) for p in order]
    tied = tied_pairs(network)
    ties = [p for p in order if p in tied]
    plain = [p for p in order if p not in tied]
    n_tied = max(min(_rounded(shares.tied, count, rng), len(ties)), count - len(plain))
    chosen = {p: labelled(p) for p in ties[:n_tied]}
    slots = count - n_tied
    if shares.nr is None:
        chosen.update((p, labelled(p)) for p in plain[:slots])
    else:
        goal = shares.nr * np.array([not c.criteria_free for c in RP_CATEGORIES], dtype=float)
        n_nr = np.zeros(len(RP_CATEGORIES))
        for qs in chosen.values():
            n_nr += _nr(qs)
        taken: list[tuple[tuple[str, str], list[Query]]] = []
        passed: list[tuple[tuple[str, str], list[Query]]] = []
        for seen, pair in enumerate(plain, 1):
            if len(taken) == slots:
                break
            queries = labelled(pair)
            gap = n_nr - goal * (n_tied + len(taken) + 1)  # from the pro-rata path
            x = _nr(queries)
            # passed over when it leaves the counts further from the path than a pair drawn
            # at the target share would on average (squared distance: mean² + variance)
            typical = float(((gap + goal) ** 2).sum() + (goal * (1 - goal)).sum())
            worse = float(((gap + x) ** 2).sum()) > typical
            if worse and seen <= shares.lookahead * count:
                passed.append((pair, queries))
                continue
            taken.append((pair, queries))
            n_nr += x
        chosen.update(taken + passed[: slots - len(taken)])
    rank = {p: i for i, p in enumerate(order)}
    return sorted(chosen.items(), key=lambda item: rank[item[0]])
