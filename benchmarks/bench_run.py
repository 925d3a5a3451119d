"""Throughput of ``maptab run``: the HTTP client against a loopback server, and the oracle.

**Client.** The server (``tests/fakeserver.py``, its own process so it does not share the
client's core) answers every request after 20 ms. Each repetition runs N requests
(default 3,000; ``--quick`` 1,000) at concurrency 64 through the full pipeline (request
building with tables and a 640x480 image, the OpenAI-compatible provider with its retry
loop over ``httpx``, the JSONL store), then the same pipeline at concurrency 1 on the first
``--sequential`` requests (default 200), whose rate is extrapolated (a sequential loop runs at
a steady rate). The ratio of the two is taken within each repetition. The client's CPU time
per request is printed too: on a shared machine the wall-clock rate depends on how much of a
core the client gets, the CPU cost does not.

**Oracle.** The ``oracle`` baseline over the RP samples of a one-map dataset, beside a
minimal loop that reads the same rows and writes one JSON line each. The rate *after
start-up* is the marginal one: (N - N/10) / (time of N - time of N/10).

Targets: >= 200 req/s at concurrency 64, >= 10x sequential, oracle >= 10,000 samples/s
after start-up (the client CPU per request is printed without a target). Figures are p50
and max over ``--repeat`` repetitions (default 3); request latencies as p50/p99/max over all
requests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from fakeserver import spawn, write_dataset  # noqa: E402
from maptab.run import make_provider, run  # noqa: E402


def _server(delay: float) -> tuple[subprocess.Popen, str]:
    return spawn(HERE.parent / "tests" / "fakeserver.py", "--delay", str(delay))


def _timed(ds: Path, out: Path, spec: str, limit: int, **kw) -> tuple[int, float, float]:
    """(requests answered, wall seconds, process CPU seconds) of one run."""
    concurrency = kw.pop("concurrency", 1)
    provider = make_provider(spec, concurrency=concurrency, **kw)
    t0, c0 = time.perf_counter(), time.process_time()
    summary = run(ds, provider, out, concurrency=concurrency, limit=limit, progress=False)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    if summary.errors:
        raise SystemExit(f"{summary.errors} requests failed: {summary.top_error}")
    return summary.completed, elapsed, cpu


def _latencies(out: Path) -> list[float]:
    with (out / "predictions.jsonl").open() as fh:
        return [json.loads(line)["latency_s"] for line in fh]


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def _minimal_loop(ds: Path, out: Path, limit: int) -> float:
    """Seconds to read ``limit`` RP rows and write one JSON line per row (the anchor)."""
    t0 = time.perf_counter()
    with (ds / "rp.jsonl").open() as src, (out).open("w") as dst:
        for n, line in enumerate(src):
            if n >= limit:
                break
            row = json.loads(line)
            dst.write(json.dumps({"id": row["id"], "response": row["source"]}) + "\n")
            dst.flush()
    return time.perf_counter() - t0


class _Skip(Exception):
    """``--oracle-only``: leave the client part out."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 requests, 100 sequential")
    ap.add_argument("--requests", type=int, default=None)
    ap.add_argument("--sequential", type=int, default=None)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--delay", type=float, default=0.02)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--oracle", type=int, default=20000, help="oracle samples (0: skip)")
    ap.add_argument("--oracle-only", action="store_true", help="skip the HTTP client part")
    args = ap.parse_args()
    n = args.requests or (1000 if args.quick else 3000)
    n_seq = args.sequential or (100 if args.quick else 200)
    load0 = os.getloadavg()

    rates, ratios, cpus, lat = [], [], [], []
    proc, base_url = _server(args.delay)
    try:
        if args.oracle_only:
            raise _Skip
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            ds = write_dataset(root / "ds", n_rp=n, n_qa=0, n_reasonmap=0, image=(640, 480))
            for rep in range(args.repeat):
                kw = {"base_url": base_url}
                done, conc_s, conc_cpu = _timed(
                    ds, root / f"c{rep}", "openai:bench", n, concurrency=args.concurrency, **kw
                )
                lat += _latencies(root / f"c{rep}")
                seq_done, seq_s, _ = _timed(ds, root / f"s{rep}", "openai:bench", n_seq, **kw)
                rates.append(done / conc_s)
                ratios.append((done / conc_s) / (seq_done / seq_s))
                cpus.append(conc_cpu / done * 1000)
                print(
                    f"rep {rep}: {done / conc_s:.0f} req/s at concurrency {args.concurrency}, "
                    f"sequential {seq_done / seq_s:.1f} req/s, ratio {ratios[-1]:.1f}x, "
                    f"client CPU {cpus[-1]:.3f} ms/request"
                )
    except _Skip:
        pass
    finally:
        proc.kill()
        proc.wait()

    oracle_rate = loop_rate = None
    marginal: list[float] = []
    if args.oracle:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            ds = write_dataset(root / "ds", n_rp=args.oracle, n_qa=0, n_reasonmap=0, image=None)
            loops: list[float] = []
            for rep in range(args.repeat):
                small = args.oracle // 10
                _, t_small, _ = _timed(ds, root / f"os{rep}", "oracle", small)
                _, t_all, _ = _timed(ds, root / f"oa{rep}", "oracle", args.oracle)
                marginal.append((args.oracle - small) / max(1e-9, t_all - t_small))
                loops.append(args.oracle / _minimal_loop(ds, root / f"loop{rep}", args.oracle))
                print(
                    f"rep {rep}: oracle {args.oracle} samples in {t_all:.2f} s "
                    f"(start-up {t_small - small / marginal[-1]:.2f} s), "
                    f"{marginal[-1]:.0f} samples/s after start-up; minimal loop {loops[-1]:.0f}/s"
                )
            oracle_rate, loop_rate = statistics.median(marginal), statistics.median(loops)

    if rates:
        print(f"server delay {args.delay * 1000:.0f} ms per answer (loopback, separate process)")
        print(f"concurrent  : p50 {statistics.median(rates):.0f} req/s, max {max(rates):.0f}")
        print(f"ratio       : p50 {statistics.median(ratios):.1f}x, max {max(ratios):.1f}x")
        print(f"client CPU  : p50 {statistics.median(cpus):.3f} ms/request, max {max(cpus):.3f}")
        print(
            f"latency     : p50 {_pct(lat, 0.5) * 1000:.1f} ms, "
            f"p99 {_pct(lat, 0.99) * 1000:.1f} ms, max {max(lat) * 1000:.1f} ms "
            f"({len(lat)} requests)"
        )
    if oracle_rate is not None and loop_rate is not None:
        print(
            f"oracle      : p50 {oracle_rate:.0f}, p99 {_pct(marginal, 0.99):.0f}, max "
            f"{max(marginal):.0f} samples/s after start-up; minimal "
            f"read-and-write loop {loop_rate:.0f}/s ({loop_rate / oracle_rate:.1f}x the oracle)"
        )
    load1 = os.getloadavg()
    print(f"load average: {load0[0]:.1f} before, {load1[0]:.1f} after, on {os.cpu_count()} cores")
    checks = []
    if rates:
        rate, ratio = statistics.median(rates), statistics.median(ratios)
        checks += [(">= 200 req/s", rate >= 200), (">= 10x", ratio >= 10)]
    if oracle_rate is not None:
        checks.append((">= 10000 oracle samples/s", oracle_rate >= 10000))
    print("targets     : " + "; ".join(f"{k} {'PASS' if ok else 'MISS'}" for k, ok in checks))


if __name__ == "__main__":
    main()
