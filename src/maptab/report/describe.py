"""Figures that describe the shape of networks and datasets (``maptab stats``).

Network figures (per map, then pooled over the maps of a scenario) are computed the same way
for generated maps and for real ones (ReasonMap topologies, MapTab tables), so they can be
set side by side. Definitions, on the *simple graph* (parallel edges of lines sharing a
track merged; SPEC 1):

* a **pair** is an unordered pair ``{s, t}`` of distinct connected stations;
* **hops(s, t)** — the breadth-first distance; **route stations** = hops + 1 (the station
  count of a fewest-stations route);
* a pair is **tied** when it has two or more fewest-stations routes (distinct station
  sequences); tie shares are over pairs at 2+ hops (adjacent pairs cannot tie), the pairs a
  query can ask about (:data:`maptab.generate.queries.MIN_ROUTE_STATIONS`);
* **transfers(s, t)** (metro) — the fewest line changes over every fewest-stations route
  and every line assignment of it;
* **average shortest path** of a map — the mean of hops over its pairs;
* **cycles** — the cycle rank ``|E| − |V| + components`` of the simple graph;
* **dead ends** — stations of degree 1; **dead ends per line** — a map's dead ends over its
  lines (metro), averaged over maps; the dead-end share of the maps of :data:`LARGE_MAP`
  stations or more, pooled over their stations;
* **shared track** (metro) — the share of a map's track edges (simple-graph edges) carried
  by two or more lines, averaged over maps, and the share of maps where it exceeds
  :data:`SHARED_HEAVY`;
* **simple paths per pair** (scenic) — the number of simple ``s``–``t`` paths, counted up to
  :data:`PATH_CAP` (a pair with more counts as ``PATH_CAP``; medians below the cap are
  exact), on every pair of a map with at most :data:`PATH_PAIRS` pairs and on a seeded sample
  of :data:`PATH_PAIRS` pairs otherwise.

Dataset figures come from the gold labels (``rp.jsonl``): FR / PR / NR shares per weighted
category (SPEC 9: FR — the optimal route is the unique fewest-stations route, PR — one of
several, NR — not a fewest-stations route), gold route lengths and transfers of the
criteria-free queries, split and difficulty shares; and, on request, the paper EMA
(SPEC 13) of the ``shortest`` and ``random`` baselines, answered exactly as
``maptab run --model shortest|random`` (seed 0) answers.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np

from maptab._progress import Progress, or_silent
from maptab.core.network import (
    Network,
    connected_components,
    fewest_hops_counts,
    hop_distances,
)
from maptab.errors import MaptabError
from maptab.generate.queries import MIN_ROUTE_STATIONS

MIN_HOPS = MIN_ROUTE_STATIONS - 1
PATH_CAP = 50
PATH_PAIRS = 200
LARGE_MAP = 120
SHARED_HEAVY = 0.25
ATTRIBUTES = ("time", "price", "comfort", "reliability")


# ============================================================================ per network
@dataclass(slots=True)
class NetworkFigures:
    """The shape of one map (see the module docstring for every definition)."""

    map_id: str
    scenario: str
    stations: int
    lines: int
    edges: int
    cycles: int
    components: int
    degrees: dict[int, int]
    transfer_stations: int
    pairs: int
    avg_hops: float
    max_hops: int
    tied_pairs: int
    far_pairs: int
    route_stations: Counter[int] = field(default_factory=Counter)
    transfers: Counter[int] = field(default_factory=Counter)
    simple_paths: list[int] = field(default_factory=list)
    shared_edges: int = 0

    @property
    def dead_ends(self) -> int:
        return self.degrees.get(1, 0)

    @property
    def shared_track_share(self) -> float:
        """Track edges carried by two or more lines, over all track edges."""
        return self.shared_edges / self.edges if self.edges else 0.0


def _pair_lines(net: Network) -> dict[tuple[str, str], frozenset[str]]:
    """Lines on the track between each ordered adjacent pair (both directions)."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in net.edges:
        if e.line is not None:
            out[(e.u, e.v)].add(e.line)
            out[(e.v, e.u)].add(e.line)
    return {k: frozenset(v) for k, v in out.items()}


def _from_source(
    graph: dict[str, set[str]], s: str, lines: dict[tuple[str, str], frozenset[str]] | None
) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """Hops, number of fewest-stations routes, and (metro) fewest transfers from ``s``.

    Transfers: a dynamic programme over the breadth-first layers of ``(station, line)``
    states; a fewest-stations route is simple, so no state is revisited.
    """
    dist = hop_distances(graph, s)
    count = fewest_hops_counts(graph, s, dist)
    if lines is None:
        return dist, count, {}
    best: dict[str, dict[str, int]] = {s: {}}
    for v in sorted(dist, key=dist.__getitem__)[1:]:
        preds = [u for u in graph[v] if dist.get(u) == dist[v] - 1]
        here: dict[str, int] = {}
        for u in preds:
            at_u = best[u]
            floor = min(at_u.values(), default=-1) + 1  # a change at u (none at the origin)
            for line in lines[(u, v)]:
                t = min(at_u.get(line, floor), floor) if at_u else 0
                if t < here.get(line, math.inf):
                    here[line] = t
        best[v] = here
    return dist, count, {v: min(b.values()) for v, b in best.items() if b}


def count_simple_paths(graph: dict[str, set[str]], s: str, t: str, cap: int = PATH_CAP) -> int:
    """Simple ``s``–``t`` paths, counted up to ``cap`` (an iterative depth-first search
    over simple paths from ``s`` that stops as soon as ``cap`` have reached ``t``)."""
    if s == t:
        return 1
    found = 0
    on = {s}
    stack: list[tuple[str, Iterable[str]]] = [(s, iter(sorted(graph[s])))]
    while stack:
        u, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            on.discard(u)
            continue
        if nxt in on:
            continue
        if nxt == t:
            found += 1
            if found >= cap:
                return cap
            continue
        on.add(nxt)
        stack.append((nxt, iter(sorted(graph[nxt]))))
    return found


def network_figures(net: Network, seed: int = 0) -> NetworkFigures:
    """Every per-map figure of :class:`NetworkFigures` for ``net``."""
    graph = net.simple_graph()
    metro = net.scenario == "metromap"
    lines = _pair_lines(net) if metro else None
    n_edges = sum(len(v) for v in graph.values()) // 2
    comps = len(connected_components(graph))
    degrees = Counter(len(v) for v in graph.values())
    hops_total = pairs = tied = far = max_hops = 0
    route_stations: Counter[int] = Counter()
    transfers: Counter[int] = Counter()
    index = {s: i for i, s in enumerate(graph)}
    for s in graph:
        dist, count, tr = _from_source(graph, s, lines)
        for t, d in dist.items():
            if index[t] <= index[s]:
                continue
            pairs += 1
            hops_total += d
            max_hops = max(max_hops, d)
            if d < MIN_HOPS:
                continue
            far += 1
            tied += count[t] > 1
            route_stations[d + 1] += 1
            if metro:
                transfers[tr[t]] += 1
    simple_paths: list[int] = []
    if not metro:
        stations = list(graph)
        all_pairs = [
            (a, b)
            for i, a in enumerate(stations)
            for b in stations[i + 1 :]
            if b in hop_distances(graph, a)
        ]
        if len(all_pairs) > PATH_PAIRS:
            pick = np.random.default_rng(seed).choice(len(all_pairs), PATH_PAIRS, replace=False)
            all_pairs = [all_pairs[int(i)] for i in sorted(pick)]
        simple_paths = [count_simple_paths(graph, a, b) for a, b in all_pairs]
    return NetworkFigures(
        map_id=net.map_id,
        scenario=net.scenario,
        stations=len(graph),
        lines=len(net.line_names),
        edges=n_edges,
        cycles=n_edges - len(graph) + comps,
        components=comps,
        degrees=dict(sorted(degrees.items())),
        transfer_stations=len(net.transfer_stations),
        pairs=pairs,
        avg_hops=hops_total / pairs if pairs else 0.0,
        max_hops=max_hops,
        tied_pairs=tied,
        far_pairs=far,
        route_stations=route_stations,
        transfers=transfers,
        simple_paths=simple_paths,
        shared_edges=sum(len(v) > 1 for (u, w), v in lines.items() if u < w) if lines else 0,
    )


# ============================================================================ summaries
def _quantile(weights: dict[float, float] | Sequence[float], q: float) -> float:
    """The lower ``q`` quantile of values, or of a ``value → weight`` histogram."""
    if not isinstance(weights, dict):
        weights = Counter(weights)
    total = sum(weights.values())
    if not total:
        return math.nan
    run = 0.0
    for value in sorted(weights):
        run += weights[value]
        if run >= q * total * (1 - 1e-12):
            return float(value)
    return float(max(weights))


def _share(part: float, whole: float) -> float:
    return part / whole if whole else math.nan


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _per_map(hists: Iterable[Counter[int]]) -> dict[float, float]:
    """Histograms summed with each map weighing 1 (a random map, then a random pair)."""
    out: dict[float, float] = defaultdict(float)
    for h in hists:
        total = sum(h.values())
        for value, count in h.items():
            out[float(value)] += count / total
    return dict(out)


def summarize_networks(figs: Sequence[NetworkFigures]) -> dict[str, Any]:
    """Figures of several maps of one scenario (``maptab stats``, network section).

    Per-map figures (stations, lines, average shortest path) are summarised over maps.
    Per-pair figures (route stations, transfers, ties, simple paths) are over query pairs
    (2+ hops) with every map weighing the same: the figure of *a random pair of a random
    map*. Degree shares are pooled over all stations.
    """
    if not figs:
        return {}
    avg_hops = [f.avg_hops for f in figs]
    degrees: Counter[int] = Counter()
    for f in figs:
        degrees.update(f.degrees)
    stations = sum(f.stations for f in figs)
    route = _per_map(f.route_stations for f in figs if f.far_pairs)
    out: dict[str, Any] = {
        "maps": len(figs),
        "stations_median": _quantile([f.stations for f in figs], 0.5),
        "stations_mean": _mean([f.stations for f in figs]),
        "stations_max": max(f.stations for f in figs),
        "edges_mean": _mean([f.edges for f in figs]),
        "cycles_mean": _mean([f.cycles for f in figs]),
        "degree_shares": {str(k): degrees[k] / stations for k in sorted(degrees)},
        "dead_end_share": _share(degrees.get(1, 0), stations),
        "avg_hops_median": _quantile(avg_hops, 0.5),
        "avg_hops_max": max(avg_hops),
        "maps_avg_hops_over_17": _share(sum(h > 17 for h in avg_hops), len(figs)),
        "route_stations_p50": _quantile(route, 0.5),
        "route_stations_p90": _quantile(route, 0.9),
        "route_stations_max": max(route, default=math.nan),
        "tied_pair_share": _mean([f.tied_pairs / f.far_pairs for f in figs if f.far_pairs]),
    }
    if figs[0].scenario == "metromap":
        lines = [f.lines for f in figs]
        transfers = _per_map(f.transfers for f in figs if f.far_pairs)
        n_tr = sum(transfers.values())
        shared = [f.shared_track_share for f in figs]
        large = [f for f in figs if f.stations >= LARGE_MAP]
        out.update(
            {
                "cycles_max": max(f.cycles for f in figs),
                "dead_ends_per_line": _mean([f.dead_ends / f.lines for f in figs if f.lines]),
                "large_maps_dead_end_share": _share(
                    sum(f.dead_ends for f in large), sum(f.stations for f in large)
                ),
                "shared_track_share": _mean(shared),
                "maps_shared_track_over_25": _share(
                    sum(x > SHARED_HEAVY for x in shared), len(figs)
                ),
                "lines_median": _quantile(lines, 0.5),
                "lines_mean": _mean(lines),
                "lines_max": max(lines),
                "maps_le_2_lines": _share(sum(n <= 2 for n in lines), len(figs)),
                "maps_1_line": _share(sum(n == 1 for n in lines), len(figs)),
                "transfer_station_share": _share(sum(f.transfer_stations for f in figs), stations),
                "transfers_mean": _share(sum(k * c for k, c in transfers.items()), n_tr),
                "transfers_zero_share": _share(transfers.get(0.0, 0.0), n_tr),
            }
        )
    else:
        paths = _per_map(Counter(f.simple_paths) for f in figs if f.simple_paths)
        n_p = sum(paths.values())
        out.update(
            {
                "one_path_share": _share(paths.get(1.0, 0.0), n_p),
                "simple_paths_median": _quantile(paths, 0.5),
                "path_cap": PATH_CAP,
            }
        )
    return out


# ============================================================================ datasets
def _shares(values: Iterable[object]) -> dict[str, float]:
    counts = Counter(str(v) for v in values)
    total = sum(counts.values())
    return {k: counts[k] / total for k in sorted(counts)}


def _distinct_routes(routes: Sequence[str]) -> int:
    """Distinct station sequences among gold route strings (transfer marks dropped)."""
    return len({r.replace("(transfer)", "") for r in routes})


def _attribute_figures(nets: Sequence[Network]) -> dict[str, dict[str, float]]:
    """Quantiles (min, p10, p50, p90, max) of every attribute, edges and vertices apart."""
    out: dict[str, dict[str, float]] = {}
    for part in ("edge", "vertex"):
        names = [*ATTRIBUTES, "transfer_time"] if part == "vertex" else list(ATTRIBUTES)
        for name in names:
            values = [
                float(getattr(item, name))
                for n in nets
                for item in (n.edges if part == "edge" else n.vertices.values())
            ]
            if values:
                arr = np.array(values)
                out[f"{part}_{name}"] = {
                    "min": float(arr.min()),
                    "p10": float(np.quantile(arr, 0.1)),
                    "p50": float(np.quantile(arr, 0.5)),
                    "p90": float(np.quantile(arr, 0.9)),
                    "max": float(arr.max()),
                }
    return out


def gold_figures(rows: Sequence[Any]) -> dict[str, Any]:
    """Figures of one scenario's RP rows (:class:`maptab.core.schema.RPQuery`): FR/PR/NR per
    weighted category and over all of them, criteria-free gold routes (stations,
    transfers, ties; one row per OD pair, the ``map_only`` category), split and
    difficulty shares."""
    from maptab.core.schema import RP_BY_NAME

    weighted = [q for q in rows if not RP_BY_NAME[q.category].criteria_free]
    free = [q for q in rows if q.category == "map_only"]
    per_category: dict[str, dict[str, float]] = {}
    for q in weighted:
        per_category.setdefault(q.category, {})
    for name in per_category:
        per_category[name] = _repetition([q for q in weighted if q.category == name])
    stations = Counter(q.route_vertex_numbers[0] for q in free)
    transfers = [q.transfer_vertex_numbers[0] for q in free]
    return {
        "rp_queries": len(rows),
        "od_pairs": len(free),
        "split_shares": _shares(q.split for q in free),
        "query_difficulty_shares": _shares(q.query_difficulty for q in free),
        "repetition": _repetition(weighted),
        "repetition_by_category": per_category,
        "gold_route_stations_p50": _quantile(stations, 0.5),
        "gold_route_stations_p90": _quantile(stations, 0.9),
        "gold_route_stations_max": max(stations, default=math.nan),
        "gold_transfers_mean": _mean(transfers),
        "gold_transfers_zero_share": _share(sum(t == 0 for t in transfers), len(transfers)),
        "gold_tied_share": _share(sum(_distinct_routes(q.routes) > 1 for q in free), len(free)),
    }


def _repetition(rows: Sequence[Any]) -> dict[str, float]:
    counts = Counter(q.repetition for q in rows)
    return {k: _share(counts.get(k, 0), len(rows)) for k in ("FR", "PR", "NR")}


def baseline_figures(
    dataset: Any, rows: Sequence[Any], seed: int = 0
) -> dict[str, dict[str, float]]:
    """Paper EMA (SPEC 13) of the ``shortest`` and ``random`` baselines on ``rows``, per
    category and over the criteria-free and the weighted categories, with the very
    answers ``maptab run --model shortest|random --seed SEED`` gives."""
    from maptab.core.schema import RP_BY_NAME
    from maptab.run.baselines import RandomProvider, ShortestProvider
    from maptab.score.paper import ema

    providers = {"shortest": ShortestProvider(seed), "random": RandomProvider(seed)}
    out: dict[str, dict[str, float]] = {}
    cache: dict[tuple[str, str, str], str] = {}
    for name, provider in providers.items():
        hits: dict[str, list[int]] = defaultdict(list)
        for q in rows:
            net = dataset.network(q.map_id)
            s, t = net.resolve(q.source), net.resolve(q.target)
            if name == "shortest":
                key = (q.map_id, s, t)
                if key not in cache:
                    cache[key] = provider.rp_path(net, s, t, q.id).format()
                answer = cache[key]
            else:
                answer = provider.rp_path(net, s, t, q.id).format()
            hit = ema(answer, q.routes)
            free = RP_BY_NAME[q.category].criteria_free
            for group in (q.category, "criteria_free" if free else "weighted"):
                hits[group].append(hit)
        out[name] = {k: _mean(v) for k, v in sorted(hits.items())}
    return out


def describe_dataset(
    root: Any,
    *,
    baselines: bool = False,
    split: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """All figures of a dataset folder, per scenario: networks, gold labels, attributes, map
    difficulty shares and (``baselines``) the shortest/random EMA. ``split`` restricts the
    query figures (not the network ones) to ``train`` or ``test`` maps."""
    from maptab.io.dataset import Dataset

    ds = root if hasattr(root, "manifest") else Dataset(root)
    track = or_silent(progress)
    rows = [q for q in ds.rp() if split is None or q.split == split]
    out: dict[str, Any] = {"dataset": str(ds.root), "split": split or "all", "scenarios": {}}
    for scenario in ("metromap", "travelmap"):
        entries = [m for m in ds.maps.values() if m.scenario == scenario]
        if not entries:
            continue
        nets = [ds.network(m.id) for m in entries]
        figs = [network_figures(n) for n in track(nets, f"{scenario} maps", len(nets))]
        mine = [q for q in rows if q.scenario == scenario]
        section: dict[str, Any] = {
            "networks": summarize_networks(figs),
            "map_difficulty_shares": _shares(m.difficulty for m in entries),
            "map_split_shares": _shares(m.split for m in entries),
            "attributes": _attribute_figures(nets),
        }
        if mine:
            section["gold"] = gold_figures(mine)
            if baselines:
                section["baselines"] = baseline_figures(ds, mine)
        out["scenarios"][scenario] = section
    return out


def describe_networks(nets: Sequence[Network]) -> dict[str, Any]:
    """Network figures of loose networks (e.g. real ReasonMap topologies), per scenario."""
    out: dict[str, Any] = {"scenarios": {}}
    for scenario in ("metromap", "travelmap"):
        group = [network_figures(n) for n in nets if n.scenario == scenario]
        if group:
            out["scenarios"][scenario] = {"networks": summarize_networks(group)}
    return out


# ============================================================================ reference
def load_reference(path: Any = None) -> dict[str, Any]:
    """Reference figures (``maptab/data/reference_stats.json`` unless ``path`` is given):
    ``{scenario: {figure path: {"value": v, "source": "..."}}}``."""
    if path is None:
        text = resources.files("maptab").joinpath("data", "reference_stats.json").read_text("utf-8")
    else:
        from pathlib import Path

        text = Path(path).read_text(encoding="utf-8")
    where = path or "maptab/data/reference_stats.json"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MaptabError(f"{where}: not valid JSON ({exc.msg})") from None
    ok = isinstance(data, dict) and all(
        isinstance(section, dict)
        and all(isinstance(e, dict) and "value" in e for e in section.values())
        for section in data.values()
    )
    if not ok:
        raise MaptabError(
            f'{where}: expected {{scenario: {{figure: {{"value": …, "source": …}}}}}}'
        )
    return data


def flatten(figures: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested figures as ``{"a.b.c": value}`` (the keys the reference file uses)."""
    out: dict[str, Any] = {}
    for key, value in figures.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


#: MapTab paper, Table 4, "Average" rows: EMA and PMA on the FR, PR and NR queries and on
#: all of them (Qwen3-VL-8B-Instruct). All = Σ share·part, so the shares follow.
PAPER_TABLE4 = {
    "metromap": {"ema": (25.96, 0.73, 2.74, 19.58), "pma": (46.26, 15.08, 24.59, 39.73)},
    "travelmap": {"ema": (40.32, 13.91, 11.25, 34.76), "pma": (59.23, 38.27, 35.57, 54.79)},
}
_TABLE4 = "MapTab paper Table 4 (Average row): FR/PR/NR shares solved from EMA and PMA"
_REASONMAP = "25 ReasonMap metro topologies in ../shared/data/reasonmap-stations"
_AUDIT = "audit of MapTab's released scenic tables (not in ../shared/data)"


def implied_shares(ema: Sequence[float], pma: Sequence[float]) -> tuple[float, float, float]:
    """FR, PR, NR shares that make both ``All`` columns the share-weighted means of the parts."""
    a = np.array([[1.0, 1.0, 1.0], list(ema[:3]), list(pma[:3])])
    b = np.array([1.0, ema[3], pma[3]])
    fr, pr, nr = np.linalg.solve(a, b)
    return float(fr), float(pr), float(nr)


def reference_figures(real_metro: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """The shipped reference: ``real_metro`` (:func:`summarize_networks` of real metro
    networks) with the figures of the MapTab paper and of an audit of its released tables
    that are not recomputable here, each ``{"value": v, "source": "..."}`` under the keys of :func:`flatten`."""
    out: dict[str, dict[str, dict[str, Any]]] = {"metromap": {}, "travelmap": {}}
    for key, value in flatten(real_metro).items():
        out["metromap"][f"networks.{key}"] = {"value": value, "source": _REASONMAP}
    for scenario, cols in PAPER_TABLE4.items():
        shares = implied_shares(cols["ema"], cols["pma"])
        for label, share in zip(("FR", "PR", "NR"), shares, strict=True):
            out[scenario][f"gold.repetition.{label}"] = {
                "value": round(share, 4),
                "source": _TABLE4,
            }
    out["metromap"]["baselines.shortest.weighted"] = {
        "value": 0.70,
        "source": "estimate from the Table 4 shares (FR + part of PR)",
    }
    for key, value in (
        ("networks.dead_end_share", 0.038),
        ("networks.one_path_share", 0.034),
        ("networks.simple_paths_median", 10),
    ):
        out["travelmap"][key] = {"value": value, "source": _AUDIT}
    return out
