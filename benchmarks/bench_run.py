"""Throughput of ``maptab run`` against a loopback OpenAI-compatible server (issue 5).

The server (``tests/fakeserver.py``, its own process so it does not share the client's
core) answers every request after 20 ms. We run N requests (default 5,000; ``--quick``
1,000) at concurrency 64 through the full pipeline (request building with tables and image,
the ``openai`` client, retries wrapper, JSONL store), then the same pipeline at concurrency 1
on the first ``--sequential`` requests (default 300), whose rate is extrapolated: a
sequential loop runs at a steady rate, so a subset measures it. Targets: >= 300 req/s and
a ratio >= 8x. The client's CPU time per request is printed too: on a shared machine the
wall-clock rate depends on how much of a core the client gets, the CPU cost does not.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from fakeserver import write_dataset  # noqa: E402
from maptab.run import make_provider, run  # noqa: E402


def _server(delay: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, str(HERE.parent / "tests" / "fakeserver.py"), "--delay", str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT "):
        proc.kill()
        raise SystemExit(f"fake server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/v1"


def _timed(
    ds: Path, out: Path, base_url: str, concurrency: int, limit: int
) -> tuple[int, float, float]:
    """(requests answered, wall seconds, client CPU seconds) of one run."""
    provider = make_provider("openai:bench", base_url=base_url, concurrency=concurrency)
    t0, c0 = time.perf_counter(), time.process_time()
    summary = run(ds, provider, out, concurrency=concurrency, limit=limit, progress=False)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if summary.errors:
        raise SystemExit(f"{summary.errors} requests failed")
    return summary.completed, elapsed, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 requests, 100 sequential")
    ap.add_argument("--requests", type=int, default=None)
    ap.add_argument("--sequential", type=int, default=None)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--delay", type=float, default=0.02)
    args = ap.parse_args()
    n = args.requests or (1000 if args.quick else 5000)
    n_seq = args.sequential or (100 if args.quick else 300)

    proc, base_url = _server(args.delay)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            ds = write_dataset(root / "ds", n_rp=n, n_qa=0, n_reasonmap=0, image=(640, 480))
            done, conc_s, conc_cpu = _timed(ds, root / "conc", base_url, args.concurrency, n)
            seq_done, seq_s, _ = _timed(ds, root / "seq", base_url, 1, n_seq)
    finally:
        proc.kill()
        proc.wait()

    conc_rate, seq_rate = done / conc_s, seq_done / seq_s
    ratio = conc_rate / seq_rate
    print(f"server delay {args.delay * 1000:.0f} ms per answer (loopback, separate process)")
    print(
        f"concurrent  : {done} requests at concurrency {args.concurrency} in {conc_s:.2f} s = {conc_rate:.0f} req/s"
    )
    print(
        f"sequential  : {seq_done} requests one at a time in {seq_s:.2f} s = {seq_rate:.1f} req/s "
        f"(extrapolated to {n}: {n / seq_rate:.1f} s)"
    )
    print(
        f"client CPU  : {conc_cpu / done * 1000:.2f} ms per request "
        f"(= {done / conc_cpu:.0f} req/s per fully available core)"
    )
    print(f"ratio       : {ratio:.1f}x")
    print(
        f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
    )
    print(
        f"targets     : >= 300 req/s {'PASS' if conc_rate >= 300 else 'MISS'}; "
        f">= 8x {'PASS' if ratio >= 8 else 'MISS'}"
    )


if __name__ == "__main__":
    main()
