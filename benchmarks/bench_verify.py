"""Cost of verifying dataset files against the manifest, next to the work of
``maptab run`` and ``maptab score`` on the paper preset.

Every file a verb reads from a dataset is hashed (SHA-256) once per process before use. This
benchmark measures, in one process and on the same dataset:

* ``run``: a baseline over every sample (``verify=True``), with the seconds spent hashing
  counted by wrapping the hash function; then the same run with ``verify=False``. The
  default ``--model blank`` does the least work per sample (no solving, no network), so its
  hashing share is the largest any run has: an upper bound;
* ``score``: scoring that run, hashes counted the same way (the per-process cache is
  emptied first, as a fresh ``maptab score`` process would start); then ``verify=False``.

It prints the hashing time as a share of each verb's time, in CPU seconds of the process
(robust on a shared machine) and in wall seconds (target < 5%), and the end-to-end
difference verified − unverified in CPU and wall seconds (noisier: two whole runs, and on
a shared machine the wall difference mostly measures the neighbours).

Usage: ``python benchmarks/bench_verify.py [--dataset DIR] [--preset paper|mini]
[--model blank|oracle|shortest]``; without ``--dataset`` the preset is built (no images:
the baselines do not look at pixels; with a model that does, each image is hashed once, a
few milliseconds beside its encoding).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import maptab.io.dataset as dataset_module
from maptab.generate.pipeline import build_benchmark
from maptab.run import make_provider, run
from maptab.score.scorer import score_run


class _HashClock:
    """Wraps ``maptab.io.dataset._sha256``: wall and CPU seconds spent, files and bytes hashed."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0
        self.files = 0
        self.bytes = 0
        self._real = dataset_module._sha256

    def __enter__(self) -> _HashClock:
        def timed(path: Path) -> str:
            t0, c0 = time.perf_counter(), time.process_time()
            cached = len(dataset_module._DIGESTS)
            digest = self._real(path)
            self.wall += time.perf_counter() - t0
            self.cpu += time.process_time() - c0
            if len(dataset_module._DIGESTS) > cached:
                self.files += 1
                self.bytes += path.stat().st_size
            return digest

        dataset_module._DIGESTS.clear()
        dataset_module._sha256 = timed  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        dataset_module._sha256 = self._real  # type: ignore[assignment]


def _timed(verb: str, ds: Path, run_dir: Path, model: str, verify: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one verb."""
    t0, c0 = time.perf_counter(), time.process_time()
    if verb == "run":
        run(ds, make_provider(model), run_dir, verify=verify)
    else:
        score_run(run_dir, verify=verify)
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", type=Path, help="an existing dataset (default: build one)")
    ap.add_argument("--preset", default="paper")
    ap.add_argument("--model", default="blank", help="a baseline: blank, oracle, shortest")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ds = args.dataset
        if ds is None:
            ds = Path(tmp) / "ds"
            t0 = time.perf_counter()
            build_benchmark(ds, preset=args.preset, seed=0)
            print(f"built {args.preset} preset in {time.perf_counter() - t0:.0f} s")
        size = sum(p.stat().st_size for p in ds.rglob("*") if p.is_file())
        print(f"dataset {ds}: {size / 1e6:.0f} MB; model {args.model}", flush=True)
        rows = []
        for verb in ("run", "score"):
            with _HashClock() as clock:
                wall, cpu = _timed(verb, ds, Path(tmp) / "run", args.model, True)
            plain, plain_cpu = _timed(verb, ds, Path(tmp) / "run-plain", args.model, False)
            rows.append((verb, wall, cpu, clock, plain, plain_cpu))
            print(f"{verb}: {wall:.1f} s verified, {plain:.1f} s not", flush=True)
        print(
            f"{'verb':6} {'wall s':>8} {'cpu s':>8} {'hash wall':>10} {'hash cpu':>9} "
            f"{'files':>6} {'MB':>6} {'share cpu':>10} {'share wall':>11} "
            f"{'cpu, no verify':>15} {'e2e cpu':>8} {'e2e wall':>9}"
        )
        for verb, wall, cpu, clock, plain, plain_cpu in rows:
            print(
                f"{verb:6} {wall:8.1f} {cpu:8.1f} {clock.wall:10.2f} {clock.cpu:9.2f} "
                f"{clock.files:6d} {clock.bytes / 1e6:6.0f} {100 * clock.cpu / cpu:9.2f}% "
                f"{100 * clock.wall / wall:10.2f}% {plain_cpu:15.1f} "
                f"{100 * (cpu - plain_cpu) / plain_cpu:+7.1f}% {100 * (wall - plain) / plain:+8.1f}%"
            )
        worst = max(max(c.cpu / cpu, c.wall / wall) for _, wall, cpu, c, _, _ in rows)
        print(f"largest hashing share {100 * worst:.2f}% (target < 5%)")


if __name__ == "__main__":
    main()
