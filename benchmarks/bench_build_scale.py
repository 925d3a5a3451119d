"""Benchmark: how ``maptab build`` scales out; prints ratios measured in this run.

    python benchmarks/bench_build_scale.py                 # memory, then speed-up
    python benchmarks/bench_build_scale.py --memory-only   # parent memory, 200 vs 2,000 maps
    python benchmarks/bench_build_scale.py --speed-only --maps 100   # 200 maps, images

Parent memory: a build of a tiny spec (small maps, 2 OD pairs each, no images) with 2
worker processes, at 200 and at 2,000 maps, each in a fresh process that reports its own
peak resident memory (``ru_maxrss`` of itself, not of its workers) and the peak of what
Python allocated after the imports (``tracemalloc``). The parent holds one small summary
per map and the manifest, never a network or a row: the RSS ratio should stay under 1.2.

Speed: the paper preset scaled to ``--maps`` maps per scenario, with realistic images,
built with ``--jobs 1``, ``--jobs 2`` and (when Ray is installed) ``--executor ray --jobs
2``; prints wall times, the speed-ups and the machine's load average meanwhile.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, resource, sys, time, tracemalloc
from maptab.generate.pipeline import Preset, build_benchmark
maps, out, render, workers, executor = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
from maptab.executors import executor_factory
if render == "tiny":
    spec = Preset("tiny", int(maps), int(maps), 2 * int(maps), 2 * int(maps), q_min=1,
                  sizes=("small",))
    renderer = None
else:
    from maptab.generate.pipeline import PRESETS, scaled_preset
    from maptab.render.images import DatasetImager
    spec, renderer = scaled_preset(PRESETS["paper"], int(maps)), DatasetImager()
trace = sys.argv[6] == "trace"
if trace:
    tracemalloc.start()
t0 = time.perf_counter()
build_benchmark(out, preset=spec, seed=0, workers=int(workers), renderer=renderer,
                executors=executor_factory(executor))
wall = time.perf_counter() - t0
peak = tracemalloc.get_traced_memory()[1] if trace else 0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"wall": wall, "rss": rss, "traced": peak}))
"""


def _run(
    maps: int, kind: str, workers: int, executor: str = "local", trace: bool = False
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        args = [sys.executable, "-c", CHILD, str(maps), f"{tmp}/ds", kind, str(workers), executor]
        args.append("trace" if trace else "rss")
        done = subprocess.run(args, capture_output=True, text=True, check=False)
        if done.returncode:
            sys.exit(f"build failed: {done.stderr.strip().splitlines()[-1:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def memory(traced: bool) -> None:
    """Peak RSS of the parent (tracemalloc off, it costs memory per block), and with
    ``traced`` the peak Python allocations after the imports in two more builds."""
    mib = 1 << 20
    print("parent peak memory, no images, 2 workers:")
    rss = {n: _run(n, "tiny", 2) for n in (100, 1000)}  # per scenario: 200, 2,000 maps
    for n, r in rss.items():
        print(f"  {2 * n:5d} maps: RSS {r['rss'] / mib:7.1f} MiB ({r['wall']:.1f} s)")
    print(f"  ratio 2,000/200: RSS {rss[1000]['rss'] / rss[100]['rss']:.3f} (target <= 1.2)")
    if traced:
        t = {n: _run(n, "tiny", 2, trace=True)["traced"] for n in (100, 1000)}
        print(
            f"  traced: {t[100] / mib:.2f} MiB at 200 maps, {t[1000] / mib:.2f} MiB at 2,000 "
            f"({(t[1000] - t[100]) / 1800 / 1024:.1f} KiB a map: summaries, entries, manifest)"
        )


def speed(maps: int) -> None:
    load0 = os.getloadavg()
    one = _run(maps, "paper", 1)
    two = _run(maps, "paper", 2)
    line = (
        f"{2 * maps} maps, realistic images: --jobs 1 {one['wall']:.1f} s, "
        f"--jobs 2 {two['wall']:.1f} s, speed-up {one['wall'] / two['wall']:.2f}x"
    )
    if importlib.util.find_spec("ray") is not None:
        ray = _run(maps, "paper", 2, "ray")
        line += f"; --executor ray --jobs 2 {ray['wall']:.1f} s ({ray['wall'] / two['wall']:.2f}x of --jobs 2)"
    print(line)
    print(
        f"load average before {load0[0]:.2f}, after {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps", type=int, default=100, help="maps per scenario (speed)")
    parser.add_argument("--memory-only", action="store_true")
    parser.add_argument("--speed-only", action="store_true")
    parser.add_argument("--traced", action="store_true", help="also the tracemalloc peaks")
    args = parser.parse_args()
    t0 = time.perf_counter()
    if not args.speed_only:
        memory(args.traced)
    if not args.memory_only:
        speed(args.maps)
    print(f"({time.perf_counter() - t0:.0f} s in all)")


if __name__ == "__main__":
    main()
