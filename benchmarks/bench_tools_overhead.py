"""Client overhead of tool-use mode: ``maptab run --tools all`` against a loopback server.

**Server.** ``tests/fakeserver.py``'s :class:`FakeServer` (imported by path, as
``bench_run.py`` does), run by this script in a process of its own (``--serve``) so that it
does not share the client's core. A subclass adds what the benchmark needs and nothing
else: it times each chat request from the moment its body is read to the moment its answer
is written (the server's *busy time*: the fixed ``--latency``, default 50 ms through
``asyncio.sleep``, plus its own parsing and writing), per sample, and answers
``GET /v1/bench/stats`` with those times (then forgets them and the requests it recorded).
Sample ``k`` (``RP question k`` in its prompt) makes 3–6 tool calls (``3 + crc32(k) % 4``),
one per turn, cycling through the tools offered to it (``zoom``, ``lookup``, ``check``,
whichever apply: boxes, stations and routes vary with ``k``), then answers.

**Client.** ``maptab.run_model(dataset, "openai:bench", out, tools="all",
concurrency=C)`` over ``--samples`` route-planning samples (default 1,000) of a one-map
dataset with a 640x480 image: the whole pipeline (requests with tables and image, the
conversation loop, the tools themselves, the HTTP provider, the JSONL store), timed from
the call to its return (start-up and the final compaction included).

**Bounds.** No client can beat the server's busy time: ``sum / C`` is the total busy time
spread evenly over ``C`` slots; the *scheduled* bound also keeps each conversation on one
slot, taken in dataset order by the first free slot as the runner's workers take them, with
zero client time (its excess over ``sum / C`` is the end of the run, when fewer than ``C``
conversations are left). Client overhead = wall time / bound - 1; the target (< 5%) is
about the scheduled bound. Figures are p50 and max over ``--repeat`` runs (default 3).

The client's CPU time is printed too, per request and as a share of the scheduled bound:
it is stable on a shared machine, unlike wall time, which there measures the machine's load
as much as the client (the load average is printed). A share near or above 100% means the
client needs a whole core to keep pace with the server: overhead is then bound to be large
whatever the machine.

Usage: ``python benchmarks/bench_tools_overhead.py [--samples 1000] [--concurrency 16 64]
[--latency 0.05] [--repeat 3] [--tools all]`` (``--tools lookup,check``: without ``zoom``,
whose crops are most of the tools' CPU time).
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from fakeserver import FakeServer, Reply, _send, spawn, write_dataset  # noqa: E402
from maptab.api import run_model  # noqa: E402

STATIONS = ("Alpha", "Beta", "Gamma", "Delta", "Eta", "Zeta", "Theta")
ROUTES = ("Alpha-Beta-Gamma-Delta", "Alpha-Beta(transfer)-Eta-Delta", "Alpha-Gamma-Delta")
ANSWER = "<route_begin>Alpha-Beta(transfer)-Eta-Delta<route_end>"
_SAMPLE = re.compile(r"RP question (\d+)")


def tool_calls_of(k: int) -> int:
    """The tool calls sample ``k`` makes (3 to 6)."""
    return 3 + zlib.crc32(str(k).encode()) % 4


def _arguments(tool: str, k: int, turn: int) -> dict[str, Any]:
    if tool == "zoom":
        x, y = 0.1 * ((k + turn) % 5), 0.1 * (turn % 5)
        return {"x0": x, "y0": y, "x1": x + 0.5, "y1": y + 0.5}
    if tool == "lookup":
        return {"name": STATIONS[(k + turn) % len(STATIONS)]}
    return {"route": ROUTES[(k + turn) % len(ROUTES)]}


def _sample_of(body: dict[str, Any]) -> int:
    first = body["messages"][0]["content"]
    text = first if isinstance(first, str) else first[0]["text"]
    found = _SAMPLE.search(text)
    if found is None:
        raise ValueError("no sample number in the prompt")
    return int(found.group(1))


def respond(body: dict[str, Any], seen: int) -> Reply:
    """Turn ``n`` of sample ``k``: a tool call while ``n < tool_calls_of(k)``, then the answer."""
    k = _sample_of(body)
    turn = sum(1 for m in body["messages"] if m.get("role") == "assistant")
    offered = [t["function"]["name"] for t in body.get("tools") or ()]
    if not offered or turn >= tool_calls_of(k):
        return Reply(text=ANSWER)
    tool = offered[turn % len(offered)]
    return Reply(text=None, tool_calls=[{"name": tool, "arguments": _arguments(tool, k, turn)}])


class TimedServer(FakeServer):
    """:class:`FakeServer` that keeps each sample's busy time and serves it (module doc)."""

    def __init__(self, latency: float) -> None:
        super().__init__(respond, delay=latency)
        self.busy: dict[int, float] = {}
        self.count = 0

    async def _respond(self, method, path, headers, raw, writer) -> bool:
        if method == "GET" and path.endswith("/bench/stats"):
            stats = {"requests": self.count, "busy": self.busy}
            self.busy, self.count = {}, 0
            self.requests.clear()
            self.seen.clear()
            await _send(writer, 200, stats)
            return True
        t0 = time.perf_counter()
        try:
            return await super()._respond(method, path, headers, raw, writer)
        finally:
            spent = time.perf_counter() - t0
            if method == "POST":
                k = _sample_of(json.loads(raw))
                self.busy[k] = self.busy.get(k, 0.0) + spent
                self.count += 1


def serve(latency: float) -> None:
    import asyncio

    srv = TimedServer(latency)
    asyncio.run(srv.serve(lambda port: print(f"PORT {port}", flush=True)))


def _server(latency: float) -> tuple[subprocess.Popen[str], str]:
    return spawn(__file__, "--serve", "--latency", str(latency))


def _stats(base_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(base_url + "/bench/stats", timeout=30) as resp:
        data = json.loads(resp.read())
    data["busy"] = {int(k): v for k, v in data["busy"].items()}
    return data


def scheduled(busy: list[float], slots: int) -> float:
    """Wall time of conversations taking ``busy`` seconds each, in order, each on the first
    free of ``slots`` slots, with no time between them."""
    free = [0.0] * slots
    for b in busy:
        heapq.heappush(free, heapq.heappop(free) + b)
    return max(free)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--latency", type=float, default=0.05, help="server seconds per request")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tools", default="all", help="the tools offered (default all)")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.latency)
        return
    load0 = os.getloadavg()
    calls = [tool_calls_of(k) for k in range(args.samples)]
    print(
        f"{args.samples} samples, {statistics.mean(calls):.2f} tool calls per sample "
        f"(3-6), tools {args.tools}, {args.latency * 1000:.0f} ms per request (loopback, "
        "separate process)"
    )
    results: dict[int, list[tuple[float, float, float, float]]] = {}
    proc, base_url = _server(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            n = args.samples
            ds = write_dataset(root / "ds", n_rp=n, n_qa=0, n_reasonmap=0, image=(640, 480))
            _stats(base_url)
            for c in args.concurrency:
                for rep in range(args.repeat):
                    out = root / f"c{c}-{rep}"
                    t0, cpu0 = time.perf_counter(), time.process_time()
                    s = run_model(
                        ds, "openai:bench", out, concurrency=c, tools=args.tools, base_url=base_url
                    )
                    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
                    st = _stats(base_url)
                    if s.errors or s.completed != n or len(st["busy"]) != n:
                        raise SystemExit(f"run failed: {s.errors} errors ({s.top_error})")
                    busy = [st["busy"][k] for k in range(n)]
                    even, sched = sum(busy) / c, scheduled(busy, c)
                    results.setdefault(c, []).append(
                        (wall, even, sched, cpu / st["requests"] * 1000, cpu / sched * 100)
                    )
                    print(
                        f"C={c} rep {rep}: {st['requests']} requests, wall {wall:.2f} s, "
                        f"sum/C {even:.2f} s, scheduled {sched:.2f} s, overhead "
                        f"{(wall / sched - 1) * 100:.1f}% (vs sum/C {(wall / even - 1) * 100:.1f}%), "
                        f"client CPU {cpu:.2f} s = {cpu / st['requests'] * 1000:.2f} ms/request "
                        f"= {cpu / sched * 100:.0f}% of the bound"
                    )
    finally:
        proc.kill()
        proc.wait()

    print("summary (p50 / max over repeats):")
    checks = []
    for c, rows in results.items():
        walls = [r[0] for r in rows]
        over = [(r[0] / r[2] - 1) * 100 for r in rows]
        over_even = [(r[0] / r[1] - 1) * 100 for r in rows]
        cpus = [r[3] for r in rows]
        share = [r[4] for r in rows]
        print(
            f"C={c:<3} wall {statistics.median(walls):.2f} / {max(walls):.2f} s; "
            f"scheduled bound {statistics.median(r[2] for r in rows):.2f} s, "
            f"sum/C {statistics.median(r[1] for r in rows):.2f} s; "
            f"overhead {statistics.median(over):.1f}% / {max(over):.1f}% "
            f"(vs sum/C {statistics.median(over_even):.1f}% / {max(over_even):.1f}%); "
            f"client CPU {statistics.median(cpus):.2f} / {max(cpus):.2f} ms/request, "
            f"{statistics.median(share):.0f}% / {max(share):.0f}% of the bound"
        )
        checks.append((f"C={c} overhead < 5%", statistics.median(over) < 5))
    load1 = os.getloadavg()
    print(f"load average: {load0[0]:.1f} before, {load1[0]:.1f} after, on {os.cpu_count()} cores")
    print("targets: " + "; ".join(f"{k} {'PASS' if ok else 'MISS'}" for k, ok in checks))


if __name__ == "__main__":
    main()
