"""Benchmark: build the ``paper`` preset (160 + 168 maps, 196,800 RP + 3,936 QA queries)
without images; print wall time, peak memory, queries/second and where the time goes.

    python benchmarks/bench_build.py            # the paper preset
    python benchmarks/bench_build.py --quick    # a tenth of it
    python benchmarks/bench_build.py --slow-map 90   # peak memory, with and without a slow map

``--slow-map S`` runs ``maptab build --preset paper --no-render`` twice under
``/usr/bin/time -v``, once as is and once with its first map held back ``S`` seconds
(``MAPTAB_SLOW_MAPS=metro-000=S``, :data:`maptab.generate.pipeline.SLOW_MAPS`), and prints
the peak resident memory of each: workers write each map's rows as parts that the parent
concatenates in map order, so a slow map must not raise the peak.

Baseline in the same run: a tenth of the preset built with one worker process and with the
default worker count, so the parallel speed-up is a ratio measured here.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from maptab.generate.pipeline import PRESETS, Preset, build_benchmark

TENTH = replace(
    PRESETS["paper"],
    name="paper/10",
    metro_maps=16,
    travel_maps=17,
    metro_pairs=800,
    travel_pairs=840,
)


def _peak_mib() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, workers) / 1024


def _build(preset: Preset, workers: int | None) -> tuple[float, dict, dict[str, float]]:
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        manifest = build_benchmark(
            Path(tmp) / "ds", preset=preset, seed=0, workers=workers, timings=timings
        )
        return time.perf_counter() - t0, manifest, timings


def _timed_build(out: Path, slow: float) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB from /usr/bin/time -v) of one ``maptab build``."""
    env = dict(os.environ)
    env.pop("MAPTAB_SLOW_MAPS", None)
    if slow:
        env["MAPTAB_SLOW_MAPS"] = f"metro-000={slow}"
    main = "import sys; from maptab.cli import main; sys.argv[0] = 'maptab'; sys.exit(main())"
    cmd = ["/usr/bin/time", "-v", sys.executable, "-c", main]
    cmd += ["build", "--preset", "paper", "--seed", "1", "--no-render", "--out", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    return wall, int(peak.group(1)) / 1024 if peak else float("nan")


def _slow_map(seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for slow in (0.0, seconds):
            wall, peak = _timed_build(Path(tmp) / f"ds-{slow}", slow)
            what = f"first map held back {slow:.0f} s" if slow else "as is"
            print(f"paper build, {what:<28} wall {wall:6.1f} s   peak RSS {peak:6.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the tenth-size comparison")
    ap.add_argument("--slow-map", type=float, default=0.0, metavar="S")
    args = ap.parse_args()
    if args.slow_map:
        return _slow_map(args.slow_map)

    one, _, _ = _build(TENTH, 1)
    many, _, _ = _build(TENTH, 2)
    print(
        f"tenth of paper   1 worker {one:6.1f} s   2 workers {many:6.1f} s   ratio {one / many:.2f}x"
    )
    if args.quick:
        return
    wall, manifest, timings = _build(PRESETS["paper"], None)
    counts = manifest["counts"]
    queries = counts["rp"] + counts["qa"]
    splits = [m["split"] for m in manifest["maps"]]
    print(
        f"paper preset     {counts['maps']} maps ({splits.count('train')} train / "
        f"{splits.count('test')} test), {counts['rp']:,} RP + {counts['qa']:,} QA queries"
    )
    print(f"wall time        {wall:.1f} s  (target < 300 s)")
    print(f"peak memory      {_peak_mib():.0f} MiB per process  (target < 4096 MiB)")
    print(f"queries / second {queries / wall:,.0f}")
    print("where the time goes:")
    for stage, seconds in timings.items():
        print(f"  {stage:<28} {seconds:7.1f} s  {100 * seconds / wall:5.1f}%")


if __name__ == "__main__":
    sys.exit(main())
