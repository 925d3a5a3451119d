"""Worst-case view of the exact solver: gold-label times on the ``paper`` preset, the
queries that needed the best-first simple-path search, tie counts, and k×k grids.

Part 1, gold labels: for each seed, synthesise the ``paper`` preset's maps exactly as
``maptab build`` does and build every map's route-planning queries
(:func:`maptab.generate.pipeline.rp_queries_for_map`), timing each solver call of the gold
labels (``solve_routes``: one per criteria query, one per OD pair for the two criteria-free
categories). Prints p50 / p99 / max per seed, the queries answered by the best-first search
(``best-first``) or by counting (``counted``), the slowest queries and the largest tie count
(the default ``MAX_ROUTES`` cap must never bind here). By default a sample of
``--pairs-per-map`` OD pairs per map (a few minutes on 2 cores); ``--full`` uses every map's
real quota (the whole build's RP work: 196,800 queries per seed).

Part 2, equal-cost grids, corner to corner: a k×k travelmap (all spots and edges alike, weights
``1,0,0,0``) and a k×k metromap of one line per row and per column without weights, whose
optimal routes are the C(2k−2, k−1) monotone staircases. Prints the exact count (checked),
CPU seconds and peak Python memory (tracemalloc, measured in a second run). Targets: max
gold label ≤ 50 ms; grids up to k = 30 in ≤ 1 s and ≤ 200 MB.

Run ``python benchmarks/bench_gold.py`` (``--seeds 1 2 3``, ``--full``, ``--no-grids``).
"""

from __future__ import annotations

import argparse
import gc
import math
import time
import tracemalloc
from collections import Counter

import numpy as np

from maptab.core.costs import Weights
from maptab.core.network import Edge, Network, Vertex
from maptab.core.solver import MAX_ROUTES, Solver
from maptab.generate import pipeline, queries

EVEN = Weights(1, 0, 0, 0)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


class Recorder:
    """Wraps ``queries.solve_routes``: time, method and count of every gold-label solve.

    Python's cyclic garbage collector runs when allocations pile up and then scans the whole
    heap (hundreds of maps here), wherever it happens to be; its pauses are measured with
    ``gc.callbacks`` and reported apart, so a solve's time is the solver's own work."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, str, int, str]] = []
        self.inner = queries.solve_routes
        self.map_id = ""
        self.gc_time = 0.0
        self.gc_max = 0.0
        self._gc_start = 0.0

    def on_gc(self, phase: str, _info: dict) -> None:
        if phase == "start":
            self._gc_start = time.process_time()
        else:
            pause = time.process_time() - self._gc_start
            self.gc_time += pause
            self.gc_max = max(self.gc_max, pause)

    def __call__(self, network, source, target, weights=None, **kw):
        gc_before = self.gc_time
        t0 = time.process_time()
        solution = self.inner(network, source, target, weights, **kw)
        dt = time.process_time() - t0 - (self.gc_time - gc_before)
        w = "fewest" if weights is None else ",".join(f"{x:g}" for x in weights.as_list())
        items = kw.get("items", "edge_vertex")
        query = (
            f"{self.map_id} {source!r} -> {target!r} [{w}{'; mix' if items == 'vertex' else ''}]"
        )
        self.rows.append((dt, solution.method, solution.count, query))
        return solution


def bench_seed(seed: int, per_map: int | None) -> tuple[float, float, Recorder]:
    spec = pipeline.PRESETS["paper"]
    t0, c0 = time.perf_counter(), time.process_time()
    nets = pipeline.synthesize_maps(spec, seed)
    entries = pipeline.classify_maps(nets, seed)
    quotas = pipeline.pair_quotas(nets, entries, spec)
    rec = Recorder()
    queries.solve_routes = rec  # type: ignore[assignment]
    gc.callbacks.append(rec.on_gc)
    try:
        seeds = pipeline._seeds(seed + 1, len(nets))
        for net, entry, child in zip(nets, entries, seeds, strict=True):
            rec.map_id = entry.id
            quota = quotas[entry.id] if per_map is None else min(per_map, quotas[entry.id])
            pipeline.rp_queries_for_map(net, entry, quota, child)
    finally:
        queries.solve_routes = rec.inner  # type: ignore[assignment]
        gc.callbacks.remove(rec.on_gc)
    return time.perf_counter() - t0, time.process_time() - c0, rec


def report_seed(seed: int, wall: float, cpu: float, rec: Recorder) -> None:
    times = [r[0] for r in rec.rows]
    methods = Counter(r[1] for r in rec.rows)
    print(
        f"seed {seed}: {len(times):,} solves in {wall:.0f} s wall, {cpu:.0f} s CPU (maps and "
        f"queries), {sum(times):.0f} s of it in the solver; per solve "
        f"p50 {percentile(times, 50) * 1e3:.2f} ms, p99 {percentile(times, 99) * 1e3:.2f} ms, "
        f"max {max(times) * 1e3:.1f} ms; methods {dict(methods)}"
    )
    biggest = max(rec.rows, key=lambda r: r[2])
    print(f"  largest tie count {biggest[2]} (cap {MAX_ROUTES}): {biggest[3]}")
    over = sum(1 for r in rec.rows if r[0] > 0.050)
    print(
        f"  solves over 50 ms: {over}; garbage-collector pauses (excluded above): "
        f"{rec.gc_time:.1f} s in all, longest {rec.gc_max * 1e3:.0f} ms"
    )
    for dt, method, count, query in sorted(rec.rows, reverse=True)[:3]:
        print(f"  slow: {dt * 1e3:7.1f} ms {method:<10} count {count:<4} {query}")
    for dt, method, count, query in rec.rows:
        if method == "best-first":
            print(f"  best-first: {dt * 1e3:7.2f} ms count {count:<4} {query}")


# --------------------------------------------------------------------------- grids
def grid(k: int, scenario: str) -> Network:
    """k×k grid; a metromap has one line per row (R…) and per column (C…)."""

    def name(i: int, j: int) -> str:
        return f"G{i}_{j}"

    if scenario == "metromap":
        lines = {f"R{i}": [name(i, j) for j in range(k)] for i in range(k)}
        lines |= {f"C{j}": [name(i, j) for i in range(k)] for j in range(k)}
        return Network.from_lines(lines)
    spots = {
        name(i, j): Vertex(name(i, j), (), 20.0, 10.0, 3.0, 0.5) for i in range(k) for j in range(k)
    }
    links = [
        Edge(name(i, j), name(i + di, j + dj), None, 10.0, 10.0, 3.0, 0.5)
        for i in range(k)
        for j in range(k)
        for di, dj in ((0, 1), (1, 0))
        if i + di < k and j + dj < k
    ]
    return Network("travelmap", spots, links)


def bench_grids(sizes: list[int]) -> bool:
    print(f"{'grid':<10}{'k':>4}{'count':>22}{'exact':>7}{'cpu s':>8}{'peak MB':>9}")
    ok = True
    for scenario, weights in (("travelmap", EVEN), ("metromap", None)):
        for k in sizes:
            net = grid(k, scenario)
            end = f"G{k - 1}_{k - 1}"
            t0 = time.process_time()
            got = Solver(net).solve("G0_0", end, weights)
            cpu = time.process_time() - t0
            tracemalloc.start()
            Solver(net).solve("G0_0", end, weights)
            peak = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            exact = got.count == math.comb(2 * k - 2, k - 1)
            ok &= exact
            print(f"{scenario:<10}{k:>4}{got.count:>22}{exact!s:>7}{cpu:>8.3f}{peak:>9.1f}")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--pairs-per-map", type=int, default=3, help="sample size (not --full)")
    ap.add_argument("--full", action="store_true", help="every map's real OD-pair quota")
    ap.add_argument("--no-grids", action="store_true")
    args = ap.parse_args(argv)
    per_map = None if args.full else args.pairs_per_map
    print(
        "paper preset, gold-label solves "
        + ("(full quotas)" if per_map is None else f"(up to {per_map} OD pairs per map)")
        + "; times are process CPU seconds"
    )
    for seed in args.seeds:
        wall, cpu, rec = bench_seed(seed, per_map)
        report_seed(seed, wall, cpu, rec)
    ok = True
    if not args.no_grids:
        ok = bench_grids([5, 10, 15, 20, 25, 30])
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
