"""Cost of verifying dataset files against the manifest (issue 10), next to the work of
``maptab run`` and ``maptab score`` on the paper preset.

Every file a verb reads from a dataset is hashed (SHA-256) once per process before use. This
benchmark measures, in one process and on the same dataset:

* ``run``: the oracle baseline over every sample (``verify=True``), with the seconds spent
  hashing counted by wrapping the hash function; then the same run with ``verify=False``;
* ``score``: scoring that run, hashes counted the same way (the per-process cache is
  emptied first, as a fresh ``maptab score`` process would start); then ``verify=False``.

It prints the hashing seconds as a share of each verb's time (target < 5%), and the
end-to-end difference verified − unverified (noisier: two whole runs on a shared machine).

Usage: ``python benchmarks/bench_verify.py [--dataset DIR] [--preset paper|mini]``; without
``--dataset`` the preset is built (no images: the oracle does not look at pixels; with a
model that does, each image is hashed once, a few milliseconds beside its encoding).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import maptab.dataset as dataset_module
from maptab.build.pipeline import build_benchmark
from maptab.run import make_provider, run
from maptab.score.scorer import score_run


class _HashClock:
    """Wraps ``maptab.dataset._sha256``: seconds spent and files hashed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.files = 0
        self.bytes = 0
        self._real = dataset_module._sha256

    def __enter__(self) -> _HashClock:
        def timed(path: Path) -> str:
            t0 = time.perf_counter()
            cached = len(dataset_module._DIGESTS)
            digest = self._real(path)
            self.seconds += time.perf_counter() - t0
            if len(dataset_module._DIGESTS) > cached:
                self.files += 1
                self.bytes += path.stat().st_size
            return digest

        dataset_module._DIGESTS.clear()
        dataset_module._sha256 = timed  # type: ignore[assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        dataset_module._sha256 = self._real  # type: ignore[assignment]


def _timed_run(ds: Path, out: Path, verify: bool) -> float:
    t0 = time.perf_counter()
    run(ds, make_provider("oracle"), out, progress=False, verify=verify)
    return time.perf_counter() - t0


def _timed_score(run_dir: Path, verify: bool) -> float:
    t0 = time.perf_counter()
    score_run(run_dir, progress=False, verify=verify)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", type=Path, help="an existing dataset (default: build one)")
    ap.add_argument("--preset", default="paper")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ds = args.dataset
        if ds is None:
            ds = Path(tmp) / "ds"
            t0 = time.perf_counter()
            build_benchmark(ds, preset=args.preset, seed=0, render=False)
            print(f"built {args.preset} preset in {time.perf_counter() - t0:.0f} s")
        size = sum(p.stat().st_size for p in ds.rglob("*") if p.is_file())
        print(f"dataset {ds}: {size / 1e6:.0f} MB")
        rows = []
        for verb in ("run", "score"):
            with _HashClock() as clock:
                if verb == "run":
                    total = _timed_run(ds, Path(tmp) / "run", True)
                else:
                    total = _timed_score(Path(tmp) / "run", True)
            plain = (
                _timed_run(ds, Path(tmp) / "run-plain", False)
                if verb == "run"
                else _timed_score(Path(tmp) / "run-plain", False)
            )
            rows.append((verb, total, clock, plain))
            print(f"{verb}: {total:.1f} s verified, {plain:.1f} s not", flush=True)
        print(
            f"{'verb':6} {'total s':>9} {'hashing s':>10} {'files':>6} {'MB':>7} "
            f"{'share':>7} {'unverified s':>13} {'difference':>11}"
        )
        for verb, total, clock, plain in rows:
            print(
                f"{verb:6} {total:9.1f} {clock.seconds:10.2f} {clock.files:6d} "
                f"{clock.bytes / 1e6:7.0f} {100 * clock.seconds / total:6.2f}% "
                f"{plain:13.1f} {100 * (total - plain) / plain:+10.1f}%"
            )
        worst = max(c.seconds / t for _, t, c, _ in rows)
        print(f"largest hashing share {100 * worst:.2f}% (target < 5%)")


if __name__ == "__main__":
    main()
