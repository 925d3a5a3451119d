"""Throughput of the built-in baselines on a real dataset, beside a minimal loop.

    python benchmarks/bench_baselines.py                      # the mini preset (built here)
    python benchmarks/bench_baselines.py --dataset DIR --split test --models oracle,random

Each repetition runs every model twice through ``maptab.run.run`` (the whole run: dataset
checks, selection, requests, answers, the JSONL store), on the first tenth of the selected
samples and on all of them, in fresh run folders; the rate *after start-up* is the marginal
one, ``(N - N/10) / (t_N - t_N/10)``. The anchor, in the same repetition, is a minimal loop
over the same query files: ``json.loads`` each row, keep the selected split, write one JSON
line per sample. Figures are p50 / p99 / max over the repetitions (``--repeat``, default 5)
of the per-repetition rates; the target is >= 10,000 samples/s after start-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from maptab.run import make_provider, run


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def _timed(ds: Path, out: Path, model: str, split: str | None, limit: int | None) -> float:
    provider = make_provider(model)
    t0 = time.perf_counter()
    summary = run(ds, provider, out, split=split, limit=limit, progress=False)
    elapsed = time.perf_counter() - t0
    if model != "blank" and summary.errors:
        raise SystemExit(f"{model}: {summary.errors} samples failed: {summary.top_error}")
    return elapsed


def _minimal_loop(ds: Path, out: Path, split: str | None) -> tuple[int, float]:
    """(samples, seconds) of reading every query row and writing one line per sample."""
    t0 = time.perf_counter()
    n = 0
    with out.open("w") as dst:
        for name in ("rp.jsonl", "qa.jsonl", "reasonmap.jsonl"):
            path = ds / name
            if not path.exists():
                continue
            with path.open(encoding="utf-8") as src:
                for line in src:
                    row = json.loads(line)
                    if split is not None and row["split"] != split:
                        continue
                    for suffix in ("/short", "/long") if name == "reasonmap.jsonl" else ("",):
                        dst.write(json.dumps({"id": row["id"] + suffix, "response": ""}) + "\n")
                        n += 1
    return n, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, default=None, help="default: build the mini preset")
    ap.add_argument("--split", default=None)
    ap.add_argument("--models", default="oracle,shortest,random,blank")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ds = args.dataset
        if ds is None:
            from maptab.generate.pipeline import build_benchmark

            ds = root / "mini"
            build_benchmark(ds, preset="mini", seed=0)
        total, _ = _minimal_loop(ds, root / "probe.jsonl", args.split)
        small = max(1, total // 10)
        rates: dict[str, list[float]] = {m: [] for m in args.models.split(",")}
        loops: list[float] = []
        for rep in range(args.repeat):
            for model in rates:
                t_small = _timed(ds, root / f"{model}-s{rep}", model, args.split, small)
                t_all = _timed(ds, root / f"{model}-a{rep}", model, args.split, None)
                rates[model].append((total - small) / max(1e-9, t_all - t_small))
            n, secs = _minimal_loop(ds, root / f"loop{rep}.jsonl", args.split)
            loops.append(n / secs)
            line = ", ".join(f"{m} {r[-1]:,.0f}/s" for m, r in rates.items())
            print(f"rep {rep}: {line}; minimal loop {loops[-1]:,.0f}/s", flush=True)
    print(f"dataset      : {args.dataset or 'mini preset'} ({total:,} samples, split {args.split})")
    loop = statistics.median(loops)
    for model, r in rates.items():
        p50 = statistics.median(r)
        print(
            f"{model:<12} : p50 {p50:,.0f}  p99 {_pct(r, 0.99):,.0f}  max {max(r):,.0f} "
            f"samples/s after start-up; minimal loop {loop / p50:.1f}x faster "
            f"({'PASS' if p50 >= 10_000 else 'MISS'} >= 10,000)"
        )
    print(f"minimal loop : p50 {loop:,.0f}  max {max(loops):,.0f} samples/s")
    load1 = os.getloadavg()
    print(f"load average : {load0[0]:.1f} before, {load1[0]:.1f} after, on {os.cpu_count()} cores")


if __name__ == "__main__":
    sys.exit(main())
