"""Wall time, peak memory and output size of ``maptab export --format verl|trl``, with the
maps named by reference (the default) beside ``--inline-maps`` (docs/guides/train-with-rewards.md).

A preset is built once without images (``--dataset DIR`` uses an existing dataset instead),
then each export runs as its own ``maptab export … --no-images`` process; its peak resident
memory is that process's own (``os.wait4``). Prints, per mode, the wall time, peak RSS, the
bytes written (shards and map files), the number of shards and the ratios inline/by-reference.

Usage: ``python benchmarks/bench_export.py [--preset mini|paper] [--seed 1]
[--format verl|trl] [--dataset DIR]``. The paper preset takes a few minutes to build, and
``--inline-maps`` on it several more.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAPTAB = [sys.executable, "-c", "from maptab.cli import app; app()"]


def _timed(cmd: list[str]) -> tuple[float, float]:
    """Run ``cmd``; its wall seconds and peak RSS in MB. A failure stops the benchmark."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.strip()[-500:]}")
    return wall, usage.ru_maxrss / 1024


def _size(out: Path) -> tuple[int, int]:
    files = [p for p in out.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files), sum(p.suffix == ".parquet" for p in files)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="mini", choices=["mini", "paper"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", dest="fmt", default="verl", choices=["verl", "trl"])
    ap.add_argument("--dataset", type=Path, default=None, help="an existing dataset folder")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ds = args.dataset
        if ds is None:
            ds = root / args.preset
            build = [*MAPTAB, "build", "--preset", args.preset, "--seed", str(args.seed)]
            wall, _ = _timed([*build, "--no-render", "--out", str(ds)])
            print(f"built {args.preset} seed {args.seed} in {wall:.1f} s")
        rows = {}
        for mode, extra in (("by reference", []), ("inline maps", ["--inline-maps"])):
            out = root / mode.replace(" ", "-")
            cmd = [*MAPTAB, "export", str(ds), "--format", args.fmt, "--out", str(out)]
            wall, peak = _timed([*cmd, "--no-images", *extra])
            size, shards = _size(out)
            rows[mode] = (wall, peak, size)
            print(
                f"{mode:13s} wall {wall:8.1f} s  peak RSS {peak:8.0f} MB  "
                f"output {size / 1e6:9.1f} MB  shards {shards}"
            )
        (w1, p1, s1), (w2, p2, s2) = rows["by reference"], rows["inline maps"]
        print(
            f"inline / by reference: wall {w2 / w1:.2f}x  peak {p2 / p1:.2f}x  size {s2 / s1:.2f}x"
        )


if __name__ == "__main__":
    main()
