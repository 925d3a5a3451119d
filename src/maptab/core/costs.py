"""The route cost model: items, normalisation, the weighted cost ``J`` and reported totals (SPEC 3).

Definitions
-----------
A route ``r = (v1 … vk)`` on a metromap also has a *line assignment*: one line per hop,
chosen among the edges joining the two stations (two lines may share a track). Its
**items** are

* its ``k − 1`` edges (the edge of the assigned line on each hop), unless ``items="vertex"``
  (the Map+Mix_tab category, SPEC 5: vertex items only);
* its vertices: on a metromap ``v1 … v(k-1)`` (the source counts, the destination does not);
  on a travelmap ``v1 … vk`` (every vertex, the destination too), where a vertex that is not
  the destination and has ``Time = 0`` (a transport hub) counts ``Price = 0``.

A **transfer** happens at an inner station where the incoming and outgoing hop lines differ;
it adds the station's Transfer Time. Transfers count in both item modes (the Mix_tab keeps
the Transfer Time column).

Every item is normalised with the scenario's :data:`SCALES` into four *deficits*
``(t̂, p̂, (1 − ĉ)·[c ≠ 0], (1 − r̂)·[r ≠ 0])``; zero comfort / reliability values are
excluded (they add nothing and do not enter averages).

* ``additive`` model (default): ``J = Σ_items w · deficits + wT · Σ_transfers tt̂``.
* ``mean`` model (the paper's Eq. 1 as printed):
  ``J = wT·T̂ + wP·P̂ + wC·(1 − Ĉavg) + wR·(1 − R̂avg)`` where ``T̂`` includes transfer time
  and an average over no non-zero item is 0 (so its term is the full weight).

When a function is given no line assignment it uses the **J-optimal** one; among assignments
whose ``J`` ties (relative tolerance :data:`REL_TOL`) the one with fewest transfers; among
those, each distinct set of transfer stations is a separate marking (see
:func:`optimal_assignments`).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from maptab._cache import IdentityCache
from maptab.core.network import Edge, Network
from maptab.core.rounding import round_half_up
from maptab.errors import MaptabError

REL_TOL = 1e-9
"""Relative tolerance under which two costs are the same optimum (SPEC 4)."""

ITEMS = ("edge_vertex", "vertex")
MODELS = ("additive", "mean")


_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class CostError(MaptabError):
    """Bad input to the cost model: unknown station, non-adjacent hop, bad weights…"""


def weigh(columns: Sequence[Any], weights: Sequence[float]) -> Any:
    """SPEC 3's weighted sum ``wT·T + wP·P + wC·C + wR·R`` of the four deficit columns
    ``(T, P, C, R)``, added left to right.

    ``columns`` are four float arrays (a weighted sum per row) or four floats (one sum):
    element-wise products and sums round each step the same way on every machine, so an
    array row and the same row as floats give the same float. (A matrix product would not:
    its rounding depends on the BLAS kernel the CPU selects.)
    """
    t, p, c, r = columns
    wt, wp, wc, wr = weights
    return ((t * wt + p * wp) + c * wc) + r * wr


def weigh_rows(columns: Sequence[np.ndarray], weights: Sequence[float]) -> list[float]:
    """The weighted sum of every row (:func:`weigh`) as a list of floats."""
    return weigh(columns, weights).tolist()


def deficit_columns(rows: np.ndarray) -> list[np.ndarray]:
    """The four deficit columns ``(T, P, C, R)`` of feature rows, each contiguous: what
    :func:`weigh` takes to weigh every row at once."""
    return [np.ascontiguousarray(rows[:, j]) for j in range(4)]


def within(value: float, best: float) -> bool:
    """``value`` ties with or beats the optimum ``best`` (relative tolerance :data:`REL_TOL`)."""
    return value <= best + REL_TOL * abs(best) + 1e-12


# --------------------------------------------------------------------------- weights, scales
@dataclass(frozen=True)
class Weights:
    """Criterion weights ``(wT, wP, wC, wR)``: non-negative, summing to 1 (± 1e-6)."""

    time: float
    price: float
    comfort: float
    reliability: float

    def __post_init__(self) -> None:
        vals = self.as_list()
        if any(not math.isfinite(v) or v < 0 for v in vals):
            raise CostError(f"weights must be finite and non-negative, got {vals}")
        if abs(sum(vals) - 1.0) > 1e-6:
            raise CostError(f"weights must sum to 1, got {vals} (sum {sum(vals):.6g})")

    @classmethod
    def parse(cls, text: str) -> Weights:
        """Parse ``"wT,wP,wC,wR"``: four non-negative decimal numbers (digits, an optional
        fraction and exponent; no sign, no ``_``) with a positive sum, normalised to sum 1.

        ``"1,2,1,0"`` (how the papers state integer conditions) gives 0.25, 0.5, 0.25, 0;
        ``"0.333333,0.333333,0.333333,0"`` gives thirds. The only parser of weight text.
        """
        parts = [p.strip() for p in str(text).split(",")]
        if len(parts) != 4:
            raise CostError(f"weights {text!r}: expected four comma-separated numbers wT,wP,wC,wR")
        for p in parts:
            if not _DECIMAL.fullmatch(p):
                raise CostError(f"weights {text!r}: {p!r} is not a non-negative decimal number")
        vals = [float(p) for p in parts]
        if not all(math.isfinite(v) for v in vals):
            raise CostError(f"weights {text!r}: a value is too large")
        total = math.fsum(vals)
        if total <= 0:
            raise CostError(f"weights {text!r}: at least one weight must be positive")
        return cls(*(v / total for v in vals))

    def as_list(self) -> list[float]:
        return [self.time, self.price, self.comfort, self.reliability]


@dataclass(frozen=True)
class Scale:
    """Divisors that normalise raw attribute values of one scenario (SPEC 3 table)."""

    time: float
    price: float
    comfort: float
    reliability: float
    transfer: float


SCALES: dict[str, Scale] = {
    "metromap": Scale(time=3.0, price=1.5, comfort=1.0, reliability=1.0, transfer=3.0),
    # travelmaps have no transfers; the transfer divisor is the time one for completeness
    "travelmap": Scale(time=180.0, price=200.0, comfort=5.0, reliability=1.0, transfer=180.0),
}

# feature columns: four deficits, then counts of non-zero comfort / reliability items
_NF = 6


def _features(t: float, p: float, c: float, r: float, s: Scale) -> tuple[float, ...]:
    """Normalised deficits of one item plus its non-zero comfort / reliability indicators."""
    return (
        t / s.time,
        p / s.price,
        (1.0 - c / s.comfort) if c != 0 else 0.0,
        (1.0 - r / s.reliability) if r != 0 else 0.0,
        1.0 if c != 0 else 0.0,
        1.0 if r != 0 else 0.0,
    )


def _check_items(items: str, model: str = "additive") -> None:
    if items not in ITEMS:
        raise CostError(f"unknown items {items!r}; expected one of {ITEMS}")
    if model not in MODELS:
        raise CostError(f"unknown cost model {model!r}; expected one of {MODELS}")


# --------------------------------------------------------------------------- per-network tables
class CostTable:
    """Normalised item features of one network, indexed for fast route evaluation.

    Stations are numbered in table order (``index``), edges in Edge_tab order. ``hops[(i, j)]``
    lists ``(line, edge number)`` for every edge joining stations ``i`` and ``j``.
    Feature rows (six columns: four deficits, non-zero comfort / reliability flags):

    * ``leave[i]`` — station ``i`` counted as a non-destination vertex;
    * ``dest[i]`` — station ``i`` counted as the destination (all zero on a metromap);
    * ``transfer[i]`` — a transfer at ``i`` (normalised Transfer Time in the time column);
    * ``edge[e]`` — edge ``e`` (all zero when ``items == "vertex"``).
    """

    def __init__(self, network: Network, items: str = "edge_vertex") -> None:
        _check_items(items)
        self.network = network
        self.items = items
        s = SCALES[network.scenario]
        travel = network.scenario == "travelmap"
        self.stations = list(network.vertices)
        self.index = {name: i for i, name in enumerate(self.stations)}
        n, m = len(self.stations), len(network.edges)
        self.leave = np.zeros((n, _NF))
        self.dest = np.zeros((n, _NF))
        self.transfer = np.zeros((n, _NF))
        self.edge = np.zeros((m, _NF))
        for i, v in enumerate(network.vertices.values()):
            price = 0.0 if travel and v.time == 0 else v.price
            self.leave[i] = _features(v.time, price, v.comfort, v.reliability, s)
            if travel:
                self.dest[i] = _features(v.time, v.price, v.comfort, v.reliability, s)
            self.transfer[i, 0] = v.transfer_time / s.transfer
        hops: dict[tuple[int, int], list[tuple[str | None, int]]] = {}
        for k, e in enumerate(network.edges):
            if items == "edge_vertex":
                self.edge[k] = _features(e.time, e.price, e.comfort, e.reliability, s)
            a, b = self.index[e.u], self.index[e.v]
            hops.setdefault((a, b), []).append((e.line, k))
            hops.setdefault((b, a), []).append((e.line, k))
        self.hops = hops
        #: no route's cost can overflow or be NaN: the absolute item features sum to a
        #: finite total well under the float range (weights are at most 1), so a route
        #: costs exactly what it costs again (see :meth:`single_marks`)
        self.bounded = bool(
            sum(float(np.abs(a).sum()) for a in (self.leave, self.dest, self.transfer, self.edge))
            < 1e300
        )
        # the four deficit columns of every item row (leave, dest, transfer, edge), for
        # weighted(): one element-wise weighted sum per weight vector
        self._columns = deficit_columns(
            np.concatenate((self.leave, self.dest, self.transfer, self.edge))
        )

    def single_marks(self, path: Sequence[int]) -> tuple[int, ...] | None:
        """Transfer positions of a route's only line assignment when every hop has one line
        (``None`` when one has more). Such a route has one marking whatever the weights and
        the cost model: :func:`optimal_assignments` and :func:`mean_assignments` give it."""
        only = _only_assignment(list(map(self.hops.__getitem__, itertools.pairwise(path))))
        return None if only is None else only.transfers

    def path_index(self, stations: Sequence[str]) -> list[int]:
        """Station numbers of a route; raises :class:`CostError` on unknown or non-adjacent."""
        try:
            idx = list(map(self.index.__getitem__, stations))
        except (KeyError, TypeError):
            for s in stations:
                if s not in self.index:
                    raise CostError(f"unknown station {s!r}") from None
            raise
        if len(idx) < 2:
            raise CostError("a route needs at least two stations")
        hops = self.hops
        if not all(map(hops.__contains__, itertools.pairwise(idx))):
            for a, b in itertools.pairwise(idx):
                if (a, b) not in hops:
                    raise CostError(
                        f"stations {self.stations[a]!r} and {self.stations[b]!r} are not adjacent"
                    )
        return idx

    def hop_edges(self, path: Sequence[int], lines: Sequence[str | None]) -> list[int]:
        """Edge numbers of a route under a given line assignment (one line per hop)."""
        if len(lines) != len(path) - 1:
            raise CostError(f"{len(lines)} lines given for a route of {len(path) - 1} hops")
        out = []
        for a, b, line in zip(path, path[1:], lines, strict=False):
            match = [k for ln, k in self.hops[(a, b)] if ln == line]
            if not match:
                raise CostError(f"no edge {self.stations[a]}-{self.stations[b]} on line {line!r}")
            out.append(match[0])
        return out

    def weighted(self, weights: Weights | None) -> WeightedCosts:
        """Per-item additive costs for ``weights`` (``None``: all zero, transfers decide),
        each the :func:`weigh` of the item's feature row."""
        n = len(self.stations)
        if weights is None:
            return WeightedCosts([0.0] * n, [0.0] * n, [0.0] * n, [0.0] * len(self.edge))
        costs = weigh_rows(self._columns, weights.as_list())
        return WeightedCosts(costs[:n], costs[n : 2 * n], costs[2 * n : 3 * n], costs[3 * n :])

    # ------------------------------------------------------------------ one fixed assignment
    def feature_sum(self, path: Sequence[int], edges: Sequence[int]) -> np.ndarray:
        """Summed feature row of a route with the given hop edges (transfers included)."""
        net_edges = self.network.edges
        total = self.dest[path[-1]].copy()
        for pos, i in enumerate(path[:-1]):
            total += self.leave[i] + self.edge[edges[pos]]
            if pos and net_edges[edges[pos - 1]].line != net_edges[edges[pos]].line:
                total += self.transfer[i]
        return total


@dataclass(frozen=True, slots=True)
class WeightedCosts:
    """Additive costs of one weight vector: per station (leave / dest / transfer), per edge;
    each a sequence of floats (:func:`weigh_rows`)."""

    leave: Sequence[float]
    dest: Sequence[float]
    transfer: Sequence[float]
    edge: Sequence[float]


def mean_cost(features: np.ndarray, weights: Weights) -> float:
    """``J`` of the ``mean`` model from a route's summed feature row."""
    wt, wp, wc, wr = weights.as_list()
    t, p, cdef, rdef, nc, nr = features.tolist()
    c_term = cdef / nc if nc else 1.0
    r_term = rdef / nr if nr else 1.0
    return wt * t + wp * p + wc * c_term + wr * r_term


# --------------------------------------------------------------------------- assignments
@dataclass(frozen=True, slots=True)
class Marking:
    """One J-optimal, fewest-transfer line assignment of a route and its transfer stations."""

    lines: tuple[str | None, ...]
    transfers: tuple[int, ...]  # positions in the route (1 … k-2) where a transfer happens


def _only_assignment(opts: Sequence[Sequence[tuple[str | None, int]]]) -> Marking | None:
    """The line assignment of a route whose every hop has one ``(line, edge)`` option
    (``opts``, per hop); ``None`` when a hop has more (a shared track)."""
    if max(map(len, opts), default=1) != 1:
        return None
    hop = tuple(o[0][0] for o in opts)
    return Marking(hop, tuple(h for h in range(1, len(hop)) if hop[h - 1] != hop[h]))


def optimal_assignments(
    table: CostTable, costs: WeightedCosts, path: Sequence[int]
) -> tuple[float, list[Marking]]:
    """Additive ``J*`` of a route over all line assignments and its markings (SPEC 4).

    Returns ``J*`` (destination item included) and one :class:`Marking` per distinct set of
    transfer stations among the assignments that reach ``J*`` (within :data:`REL_TOL`) with the
    fewest transfers. With ``costs`` all zero (``table.weighted(None)``) every assignment ties
    and the markings are those of the minimum-transfer assignments (criteria-free gold).

    Layered dynamic programme over hop options: forward/backward optimal costs select the
    J-tight transitions; forward/backward transfer counts on those select the fewest-transfer
    transitions; markings are collected over what remains.
    """
    k = len(path) - 1
    opts = list(map(table.hops.__getitem__, itertools.pairwise(path)))
    edges = table.network.edges
    only = _only_assignment(opts)
    if only is not None:  # one assignment: no shared track on the route
        # (the sums below add in the order of the plain loops: the same floats)
        total = sum(map(costs.leave.__getitem__, path[:-1])) + costs.dest[path[-1]]
        edge = costs.edge
        transfer = costs.transfer
        total += sum(edge[o[0][1]] for o in opts) + sum(transfer[path[h]] for h in only.transfers)
        return total, [only]
    lines = [[edges[e].line for _, e in o] for o in opts]
    ec = [[costs.edge[e] for _, e in o] for o in opts]
    leave = [costs.leave[i] for i in path]
    tr = [costs.transfer[i] for i in path]
    inf = math.inf
    # Each list below is indexed by hop h and option(s); a hop with one option next to a hop
    # with one option (most hops: no shared track) takes a scalar lane that computes what
    # the general expression does for one option, the same floats in the same order.
    # step[h][a][b]: cost of entering hop h by its option b from option a of hop h-1.
    # one[h]: hops h-1 and h have one option each (one[0] unused)
    one = [False] + [len(lines[h - 1]) == 1 and len(lines[h]) == 1 for h in range(1, k)]
    step: list[list[list[float]]] = [[]] * k
    for h in range(1, k):
        lh, eh, trh, before, now = leave[h], ec[h], tr[h], lines[h - 1], lines[h]
        if one[h]:
            step[h] = [[lh + eh[0] + (trh if before[0] != now[0] else 0.0)]]
        else:
            step[h] = [
                [lh + eh[b] + (trh if la != lb else 0.0) for b, lb in enumerate(now)]
                for la in before
            ]
    fwd: list[list[float]]
    bwd: list[list[float]]
    if not any(leave) and not any(tr) and not any(map(any, ec)):
        # all costs zero (criteria-free): every assignment is J-optimal, every step tight
        fwd = bwd = [[0.0] * len(o) for o in opts]
        best = min(fwd[-1])
        tight = [[[True] * len(lines[h]) for _ in lines[h - 1]] if h else [] for h in range(k)]
    else:
        fwd = [[leave[0] + c for c in ec[0]]]
        for h in range(1, k):
            prev, sh = fwd[-1], step[h]
            if one[h]:
                fwd.append([prev[0] + sh[0][0]])
            else:
                fwd.append(
                    [min(prev[a] + sh[a][b] for a in range(len(prev))) for b in range(len(sh[0]))]
                )
        bwd = [[]] * k
        bwd[k - 1] = [0.0] * len(opts[k - 1])
        for h in range(k - 1, 0, -1):
            nxt, sh = bwd[h], step[h]
            if one[h]:
                bwd[h - 1] = [sh[0][0] + nxt[0]]
            else:
                bwd[h - 1] = [min(row[b] + nxt[b] for b in range(len(nxt))) for row in sh]
        best = min(fwd[-1])
        limit = best + REL_TOL * abs(best) + 1e-12  # within(x, best) is x <= limit
        tight = [[]] * k
        for h in range(1, k):
            sh, f, bh = step[h], fwd[h - 1], bwd[h]
            if one[h]:
                tight[h] = [[f[0] + sh[0][0] + bh[0] <= limit]]
            else:
                tight[h] = [
                    [f[a] + s + bh[b] <= limit for b, s in enumerate(row)]
                    for a, row in enumerate(sh)
                ]

    # fewest transfers over J-tight transitions (integer DP, forward and backward)
    tf = [[0 if within(fwd[0][b] + bwd[0][b], best) else inf for b in range(len(opts[0]))]]
    for h in range(1, k):
        prev, th, before, now = tf[-1], tight[h], lines[h - 1], lines[h]
        if one[h]:
            tf.append([prev[0] + (before[0] != now[0]) if prev[0] < inf and th[0][0] else inf])
            continue
        tf.append(
            [
                min(
                    (
                        prev[a] + (before[a] != lb)
                        for a in range(len(before))
                        if prev[a] < inf and th[a][b]
                    ),
                    default=inf,
                )
                for b, lb in enumerate(now)
            ]
        )
    fewest = min(tf[-1])
    tb: list[list[float]] = [[]] * k
    tb[k - 1] = [0 if tf[-1][b] < inf else inf for b in range(len(opts[k - 1]))]
    for h in range(k - 1, 0, -1):
        nxt, th, before, now = tb[h], tight[h], lines[h - 1], lines[h]
        if one[h]:
            tb[h - 1] = [(before[0] != now[0]) + nxt[0] if nxt[0] < inf and th[0][0] else inf]
            continue
        tb[h - 1] = [
            min(
                ((la != now[b]) + nxt[b] for b in range(len(now)) if nxt[b] < inf and th[a][b]),
                default=inf,
            )
            for a, la in enumerate(before)
        ]
    # markings: forward over transitions that keep both optimality conditions
    layer: list[dict[tuple[int, ...], tuple[str | None, ...]]] = [
        {(): (lines[0][b],)} if tf[0][b] + tb[0][b] == fewest else {} for b in range(len(opts[0]))
    ]
    for h in range(1, k):
        new: list[dict[tuple[int, ...], tuple[str | None, ...]]] = [{} for _ in opts[h]]
        th, tfp, tbh, before, now = tight[h], tf[h - 1], tb[h], lines[h - 1], lines[h]
        if one[h]:  # the loop below for one option each
            marks, change = layer[0], before[0] != now[0]
            if marks and th[0][0] and tfp[0] + change + tbh[0] == fewest:
                # keys stay distinct (h is new to every m), so no setdefault is needed
                new[0] = {((*m, h) if change else m): (*ls, now[0]) for m, ls in marks.items()}
            layer = new
            continue
        for b in range(len(now)):
            for a, marks in enumerate(layer):
                if not marks or not th[a][b]:
                    continue
                change = before[a] != now[b]
                if tfp[a] + change + tbh[b] != fewest:
                    continue
                for m, ls in marks.items():
                    key = (*m, h) if change else m
                    new[b].setdefault(key, (*ls, now[b]))
        layer = new
    found: dict[tuple[int, ...], tuple[str | None, ...]] = {}
    for marks in layer:
        for m, ls in marks.items():
            found.setdefault(m, ls)
    total = best + costs.dest[path[-1]]
    return total, [Marking(ls, m) for m, ls in sorted(found.items())]


def _all_assignments(table: CostTable, path: Sequence[int]) -> list[list[int]]:
    """Every line assignment of a route as hop edge numbers (exponential in parallel hops)."""
    choices = [[e for _, e in table.hops[(a, b)]] for a, b in itertools.pairwise(path)]
    return [list(p) for p in itertools.product(*choices)]


def _transfer_positions(table: CostTable, edges: Sequence[int]) -> tuple[int, ...]:
    net_edges = table.network.edges
    return tuple(
        h for h in range(1, len(edges)) if net_edges[edges[h - 1]].line != net_edges[edges[h]].line
    )


def mean_assignments(
    table: CostTable, weights: Weights, path: Sequence[int]
) -> tuple[float, list[Marking]]:
    """Like :func:`optimal_assignments` for the ``mean`` model, by enumerating assignments.

    The ``mean`` objective is not additive, so every line assignment of the route is scored;
    the count is the product of the number of parallel lines per hop.
    """
    scored = []
    for edges in _all_assignments(table, path):
        j = mean_cost(table.feature_sum(path, edges), weights)
        scored.append((j, _transfer_positions(table, edges), edges))
    best = min(j for j, _, _ in scored)
    tied = [(m, e) for j, m, e in scored if within(j, best)]
    fewest = min(len(m) for m, _ in tied)
    net_edges = table.network.edges
    found: dict[tuple[int, ...], tuple[str | None, ...]] = {}
    for m, e in tied:
        if len(m) == fewest:
            found.setdefault(m, tuple(net_edges[k].line for k in e))
    return best, [Marking(ls, m) for m, ls in sorted(found.items())]


# --------------------------------------------------------------------------- public functions
@dataclass(frozen=True)
class Totals:
    """Reported totals of a route in raw units (SPEC 3), unrounded."""

    total_time: float
    total_price: float
    average_comfort: float
    average_reliability: float

    def as_label(self) -> dict[str, float]:
        """MapTab label fields: times/prices to 2 decimals, averages to 6 (half-up)."""
        return {
            "Total_Time": round_half_up(self.total_time, 2),
            "Total_Price": round_half_up(self.total_price, 2),
            "Average_Comfort Level": round_half_up(self.average_comfort, 6),
            "Average_Reliability": round_half_up(self.average_reliability, 6),
        }


def _resolve_lines(
    table: CostTable, path: list[int], lines: Sequence[str | None] | None, weights: Weights | None
) -> list[int]:
    """Hop edges of a route: the given assignment, else the first optimal marking's."""
    if lines is None:
        _, marks = optimal_assignments(table, table.weighted(weights), path)
        lines = marks[0].lines
    return table.hop_edges(path, lines)


_TABLES: IdentityCache[Network, CostTable] = IdentityCache(8)


def cost_table(network: Network, items: str = "edge_vertex") -> CostTable:
    """The :class:`CostTable` of ``network``, reused while the same network object is asked
    again (:mod:`maptab._cache`), so per-route calls on one map do not rebuild it."""
    return _TABLES.get(network, lambda: CostTable(network, items), items)


def route_totals(
    network: Network,
    stations: Sequence[str],
    lines: Sequence[str | None] | None = None,
    *,
    items: str = "edge_vertex",
    weights: Weights | None = None,
) -> Totals:
    """Total_Time, Total_Price, Average_Comfort Level, Average_Reliability of a route (SPEC 3).

    ``lines`` is the line per hop (``None`` entries on a travelmap). Without it the route uses
    its J-optimal assignment for ``weights`` (first marking), or with no weights its
    fewest-transfer assignment. Sums are exact decimal sums of the table values.
    """
    _check_items(items)
    table = cost_table(network, items)
    path = table.path_index(stations)
    edges = _resolve_lines(table, path, lines, weights)
    travel = network.scenario == "travelmap"
    rows: list[tuple[float, float, float, float]] = []
    verts = [network.vertices[s] for s in stations]
    counted = verts if travel else verts[:-1]
    for pos, v in enumerate(counted):
        hub = travel and v.time == 0 and pos < len(verts) - 1
        rows.append((v.time, 0.0 if hub else v.price, v.comfort, v.reliability))
    if items == "edge_vertex":
        for k in edges:
            e: Edge = network.edges[k]
            rows.append((e.time, e.price, e.comfort, e.reliability))
    time = sum((Decimal(repr(r[0])) for r in rows), Decimal(0))
    time += sum(
        (Decimal(repr(verts[h].transfer_time)) for h in _transfer_positions(table, edges)),
        Decimal(0),
    )
    price = sum((Decimal(repr(r[1])) for r in rows), Decimal(0))

    def average(col: int) -> float:
        vals = [Decimal(repr(r[col])) for r in rows if r[col] != 0]
        return float(sum(vals, Decimal(0)) / len(vals)) if vals else 0.0

    return Totals(float(time), float(price), average(2), average(3))


def route_cost(
    network: Network,
    stations: Sequence[str],
    weights: Weights,
    lines: Sequence[str | None] | None = None,
    *,
    items: str = "edge_vertex",
    model: str = "additive",
) -> float:
    """``J`` of a route under ``weights`` (SPEC 3); lower is better.

    ``lines`` is the line per hop; ``None`` takes the J-minimising assignment. Raises
    :class:`CostError` for unknown stations, non-adjacent hops or a line with no such edge.
    """
    _check_items(items, model)
    table = cost_table(network, items)
    path = table.path_index(stations)
    if lines is None:
        if model == "mean":
            return mean_assignments(table, weights, path)[0]
        return optimal_assignments(table, table.weighted(weights), path)[0]
    feats = table.feature_sum(path, table.hop_edges(path, lines))
    if model == "mean":
        return mean_cost(feats, weights)
    return weigh(feats[:4].tolist(), weights.as_list())
