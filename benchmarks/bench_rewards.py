"""Latency of one RL reward call on metro route-planning samples (target ≤ 50 µs),
beside maptab's full per-sample scorer measured in the same run (docs/guides/train-with-rewards.md).

For each seed a preset is built (no images), and every metro RP sample gets three answers:
the ``oracle`` (right), ``shortest`` and ``random`` (seeded) baselines — a mix of strictly
right, suboptimal, wrongly marked and invalid routes, in the tagged answer format the
prompts ask for. The reference of each sample is encoded as ``maptab export`` writes it.

Timed, per call (``time.perf_counter_ns``), in this order:

1. ``decode``: the first :func:`maptab.rewards.reward` call of each sample, which decodes
   its reference (once per sample and process; reported apart);
2. ``reward``: :func:`maptab.rewards.reward` on every answer, each a *new* string object
   for the reference (as a trainer's batch gives), every route scored for the first time —
   the figure the 50 µs target is about;
3. ``repeat``: the same calls again (a completion already scored for that sample, as
   identical completions in a GRPO group are; answered from the reward's memo);
4. ``scorer``: :func:`maptab.kinds.rp.score`, maptab's full per-sample scorer
   (paper and strict metrics), on the same answers against the dataset's own networks
   (its caches are separate from the reward's: other network objects).

Each is timed in wall time and in CPU time of this process (``time.process_time_ns``: time
the scheduler gave to neighbours is not counted, so it is the figure that stays stable on a
shared machine). Prints p50 / p99 / max in µs per seed and over all seeds, and the ratio of
the medians. Max includes garbage-collector pauses (and, in wall time, preemption).

Usage: ``python benchmarks/bench_rewards.py [--preset mini|paper] [--seeds 9 1 2]
[--limit N]`` (``--limit``: samples per seed, default all; use it with ``paper``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from maptab.core.schema import RPQuery
from maptab.generate.pipeline import build_benchmark
from maptab.io.dataset import Dataset, Maps
from maptab.kinds.rp import score as score_rp_row
from maptab.rewards import encode_reference, reward
from maptab.run.baselines import BASELINE_CLASSES
from maptab.run.requests import build_requests


def _stats(ns: list[int]) -> str:
    v = sorted(ns)
    p = lambda q: v[min(len(v) - 1, int(q * len(v)))] / 1e3  # noqa: E731
    return f"n={len(v):6d}  p50 {p(0.5):8.1f}  p99 {p(0.99):8.1f}  max {v[-1] / 1e3:9.1f} µs"


def _fresh(text: str) -> str:
    """An equal string that is a new object (its hash is not cached), as a batch gives."""
    return "".join((text[:1], text[1:]))


def _timed(out: dict[str, list[int]], key: str, fn, *args) -> None:  # noqa: ANN001
    """Call ``fn(*args)``; append its wall time to ``out[key]`` and its CPU time (this
    process only: robust to neighbours on a shared machine) to ``out[key + " cpu"]``."""
    c0, t0 = time.process_time_ns(), time.perf_counter_ns()
    fn(*args)
    t1, c1 = time.perf_counter_ns(), time.process_time_ns()
    out[key].append(t1 - t0)
    out[key + " cpu"].append(c1 - c0)


KEYS = (
    "decode",
    "decode cpu",
    "reward",
    "reward cpu",
    "repeat",
    "repeat cpu",
    "scorer",
    "scorer cpu",
)


def run_seed(root: Path, preset: str, seed: int, limit: int | None) -> dict[str, list[int]]:
    ds_dir = root / f"{preset}-{seed}"
    build_benchmark(ds_dir, preset=preset, seed=seed, report_totals=True)
    ds = Dataset(ds_dir)
    metro = {m for m, e in ds.maps.items() if e.scenario == "metromap"}
    requests = [
        r
        for r in build_requests(ds_dir, images=False, categories=["rp"])
        if r.meta["map_id"] in metro
    ][:limit]
    providers = [BASELINE_CLASSES[n](seed=seed) for n in ("oracle", "shortest", "random")]
    items = []
    for r in requests:
        query = RPQuery.from_dict(r.meta["sample"])
        ref = encode_reference("rp", query, ds.network(query.map_id))
        items.append((query, ref, [p.answer(r) for p in providers]))
    out: dict[str, list[int]] = {k: [] for k in KEYS}
    for _, ref, _ in items:
        _timed(out, "decode", reward, "", _fresh(ref))
    for _, ref, answers in items:
        for a in answers:
            _timed(out, "reward", reward, a, _fresh(ref))
    for _, ref, answers in items:
        for a in answers:
            _timed(out, "repeat", reward, _fresh(a), _fresh(ref))
    maps = Maps(Dataset(ds_dir))
    for query, _, answers in items:
        for a in answers:
            _timed(out, "scorer", score_rp_row, maps, query, "", a)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="mini", choices=["mini", "paper"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[9, 1, 2])
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    total: dict[str, list[int]] = {k: [] for k in KEYS}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            got = run_seed(Path(tmp), args.preset, seed, args.limit)
            print(f"seed {seed}:")
            for k, v in got.items():
                print(f"  {k:10s} {_stats(v)}")
                total[k] += v
    print(f"all seeds ({args.preset}, metro RP, 3 answers per sample):")
    for k, v in total.items():
        print(f"  {k:10s} {_stats(v)}")
    med = {k: sorted(v)[len(v) // 2] for k, v in total.items()}
    print(
        f"scorer / reward (p50): wall {med['scorer'] / med['reward']:.2f}x, cpu {med['scorer cpu'] / med['reward cpu']:.2f}x"
    )
    for k in ("reward", "reward cpu"):
        print(f"target {k} p50 <= 50 µs: {'met' if med[k] <= 50_000 else 'NOT met'}")


if __name__ == "__main__":
    main()
