"""Benchmark: build the ``paper`` preset (160 + 168 maps, 196,800 RP + 3,936 QA queries)
without images; print wall time, peak memory, queries/second and where the time goes.

    python benchmarks/bench_build.py            # the paper preset
    python benchmarks/bench_build.py --quick    # a tenth of it
    python benchmarks/bench_build.py --profile  # also the top functions by cumulative time

The baseline in the same run is the cost of the gold labels alone (the exact solver on the
same OD pairs), so the ratio says how much the rest of the pipeline adds.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from maptab.build.pipeline import PRESETS, build_benchmark


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of the paper preset")
    ap.add_argument("--profile", action="store_true", help="print where the time goes")
    args = ap.parse_args()
    preset = PRESETS["paper"]
    if args.quick:
        preset = replace(
            preset,
            name="paper/10",
            metro_maps=16,
            travel_maps=17,
            metro_pairs=800,
            travel_pairs=840,
        )
    with tempfile.TemporaryDirectory() as tmp:
        profiler = cProfile.Profile() if args.profile else None
        t0 = time.perf_counter()
        if profiler:
            profiler.enable()
        manifest = build_benchmark(Path(tmp) / "ds", preset=preset, seed=0, render=False)
        if profiler:
            profiler.disable()
        wall = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in (Path(tmp) / "ds").rglob("*") if p.is_file())
    counts = manifest["counts"]
    queries = counts["rp"] + counts["qa"]
    print(f"preset            {preset.name}")
    print(f"maps              {counts['maps']}")
    print(f"RP / QA queries   {counts['rp']:,} / {counts['qa']:,}")
    splits = [m["split"] for m in manifest["maps"]]
    print(f"train / test maps {splits.count('train')} / {splits.count('test')}")
    print(f"wall time         {wall:.1f} s  (target < 300 s for the paper preset)")
    print(f"peak memory       {_peak_mib():.0f} MiB  (target < 4096 MiB)")
    print(f"queries / second  {queries / wall:,.0f}")
    print(f"dataset size      {size / 2**20:.0f} MiB")
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
        print(out.getvalue())


if __name__ == "__main__":
    sys.exit(main())
