"""A loopback OpenAI-compatible server for tests and ``benchmarks/bench_run.py``.

:class:`FakeServer` is a small HTTP/1.1 server on asyncio streams (keep-alive, many
concurrent connections) serving ``POST /v1/chat/completions``. A *responder* decides each
reply from the request body and how many times that request (same messages) was seen:
a :class:`Reply` answers normally (optionally with scripted tool calls), with an HTTP error
(429, 500…), after a delay, by dropping the connection, or with a body that is not JSON.
:func:`conversation` scripts a tool-using model: one reply per turn of the conversation. Every request is recorded
(``server.requests``: path, headers, parsed body).

It runs in a background thread (``with FakeServer(...) as srv: srv.base_url``) so that a
synchronous test, an in-process run or a CLI subprocess can all talk to it. Run it on its
own with ``python tests/fakeserver.py --delay 0.02`` (prints ``PORT <n>``), as the benchmark
does to keep the server off the client's core.

This module also writes tiny datasets in the documented layout (:func:`write_dataset`).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import gzip
import hashlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Reply:
    """One scripted reply. ``kind``: ``ok``, ``status`` (HTTP ``status`` with a JSON error
    whose message is ``message``, default ``scripted <status>``), ``drop`` (close the
    connection without answering) or ``malformed`` (200, not JSON). ``gzip``: send the body
    gzip-compressed (``Content-Encoding: gzip``). ``hold_until_in_flight``: before its
    ``delay``, wait until the server has had that many requests in flight at once (at most
    :data:`HOLD_AT_MOST` seconds), so a test of a client's concurrency sees it reached
    whatever the machine's load. ``tool_calls``: the tool calls the reply asks for, each
    ``{"name": …, "arguments": dict or JSON text}`` (an ``id`` is made up when absent);
    ``text`` is then the message content (``None`` for none)."""

    kind: str = "ok"
    text: str = "<answer_begin>1<answer_end>"
    reasoning: str | None = None
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    message: str | None = None
    gzip: bool = False
    hold_until_in_flight: int = 0
    tool_calls: list[dict[str, Any]] | None = None


HOLD_AT_MOST = 60.0
"""Seconds a reply waits for :attr:`Reply.hold_until_in_flight` requests at most."""

Responder = Callable[[dict[str, Any], int], Reply]


def conversation(*turns: Reply) -> Responder:
    """A responder that answers turn ``n`` of each conversation (``n`` = the assistant
    messages already in the request) with ``turns[n]``, the last one past the end."""

    def respond(body: dict[str, Any], seen: int) -> Reply:
        n = sum(1 for m in body.get("messages", ()) if m.get("role") == "assistant")
        return turns[min(n, len(turns) - 1)]

    return respond


def _key(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages"), sort_keys=True)[:4000]


class FakeServer:
    """The loopback server (see the module docstring)."""

    def __init__(
        self, responder: Responder | None = None, *, delay: float = 0.0, port: int = 0
    ) -> None:
        self.responder = responder or (lambda body, seen: Reply())
        self.delay = delay
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self.seen: dict[str, int] = {}
        self.max_in_flight = 0
        self._in_flight = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> FakeServer:
        self._thread = threading.Thread(target=self._run_thread, daemon=True)
        self._thread.start()
        if not self._ready.wait(60):
            raise RuntimeError("fake server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop and self._stop:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread:
            self._thread.join(10)

    def _run_thread(self) -> None:
        asyncio.run(self.serve())

    async def serve(self, on_ready: Callable[[int], None] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        if on_ready:
            on_ready(self.port)
        async with server:
            await self._stop.wait()

    # ------------------------------------------------------------------ HTTP
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if not await self._respond(method, path, headers, body, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:  # server shutting down mid-reply
            pass
        finally:
            writer.close()

    async def _respond(self, method, path, headers, raw, writer) -> bool:
        if method != "POST" or not path.endswith("/chat/completions"):
            await _send(writer, 404, {"error": {"message": f"no route {method} {path}"}})
            return True
        body = json.loads(raw or b"{}")
        key = _key(body)
        seen = self.seen.get(key, 0)
        self.seen[key] = seen + 1
        self.requests.append({"path": path, "headers": headers, "body": body})
        self._in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            reply = self.responder(body, seen)
            if reply.hold_until_in_flight:
                deadline = time.monotonic() + HOLD_AT_MOST
                while self.max_in_flight < reply.hold_until_in_flight:
                    if time.monotonic() >= deadline:
                        break
                    await asyncio.sleep(0.002)
            if self.delay or reply.delay:
                await asyncio.sleep(self.delay + reply.delay)
        finally:
            self._in_flight -= 1
        if reply.kind == "drop":
            return False
        if reply.kind == "malformed":
            await _send(writer, 200, b'{"id": "x", "choices": [', reply.headers)
            return True
        if reply.kind == "status":
            message = reply.message or f"scripted {reply.status}"
            err = {"error": {"message": message, "type": "fake"}}
            await _send(writer, reply.status, err, reply.headers)
            return True
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        finish = "stop"
        if reply.tool_calls:
            finish = "tool_calls"
            message["tool_calls"] = [
                {
                    "id": call.get("id", f"call_{len(self.requests)}_{i}"),
                    "type": "function",
                    "function": {
                        "name": call["name"],
                        "arguments": call["arguments"]
                        if isinstance(call["arguments"], str)
                        else json.dumps(call["arguments"]),
                    },
                }
                for i, call in enumerate(reply.tool_calls)
            ]
        payload = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }
        headers = {**reply.headers, "Content-Encoding": "gzip"} if reply.gzip else reply.headers
        await _send(writer, 200, payload, headers)
        return True


async def _send(writer, status: int, payload, headers: dict[str, str] | None = None) -> None:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    if (headers or {}).get("Content-Encoding") == "gzip":
        data = gzip.compress(data)
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    head = (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n{extra}Connection: keep-alive\r\n\r\n"
    )
    writer.write(head.encode() + data)
    await writer.drain()


# ---------------------------------------------------------------------- tiny datasets
METRO_LINES = {
    "Red": ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"],
    "Blue": ["Zeta", "Beta", "Eta", "Delta", "Theta"],
}


def write_dataset(
    root: Path,
    *,
    n_rp: int = 4,
    n_qa: int = 2,
    n_reasonmap: int = 1,
    image: tuple[int, int] | None = (400, 300),
    map_id: str = "m1",
) -> Path:
    """Write a small dataset in the documented layout (one metromap, ``Network.from_lines``).

    Attributes are set by hand. From Alpha to Delta two routes have the fewest stations:
    Alpha-Beta-Gamma-Delta (Red, no transfer) and Alpha-Beta(transfer)-Eta-Delta. By Time
    (weights 1,0,0,0) the first costs 2.1 + 6 + 6 edge minutes + 3 stations × 1 = 17.1, the
    second 3 × 2.1 + 3 × 1 + 5 (transfer at Beta) = 14.3: the transfer route is optimal. On
    the Mix_tab (vertex items, all vertices alike) the transfer only adds cost, so the Red
    route is optimal. RP rows cycle through the ``map_only``, ``edge_only``,
    ``time`` and ``map_mix`` categories; QA rows are type 1 (lines: 2) and type 7
    (transfer stations: 2).
    """
    from maptab.core.network import Edge, Network, Vertex
    from maptab.core.schema import SCHEMA_VERSION

    base = Network.from_lines(METRO_LINES, map_id=map_id)
    slow = {frozenset(("Beta", "Gamma")): 6.0, frozenset(("Gamma", "Delta")): 6.0}
    edges = [
        Edge(e.u, e.v, e.line, slow.get(frozenset((e.u, e.v)), 2.1), 0.5, 0.5, 0.0)
        for e in base.edges
    ]
    vertices = {
        k: Vertex(k, v.lines, 1.0, 0.0, 0.5, 0.8, 5.0 if v.is_transfer else 0.0)
        for k, v in base.vertices.items()
    }
    net = base.with_attributes(vertices=vertices, edges=edges)
    mdir = root / "maps" / map_id
    mdir.mkdir(parents=True, exist_ok=True)
    (mdir / "network.json").write_text(json.dumps(net.to_dict()), encoding="utf-8")
    _write_csv(
        mdir / "edges.csv",
        ["Edge", "Line", "Time", "Price", "Comfort Level", "Reliability"],
        [[e.name, e.line, e.time, e.price, e.comfort, e.reliability] for e in net.edges],
    )
    vcols = ["Vertex", "Line", "Time", "Price", "Comfort Level", "Reliability", "Transfer Time"]
    vrows = [
        [v.name, ";".join(v.lines), v.time, v.price, v.comfort, v.reliability, v.transfer_time]
        for v in net.vertices.values()
    ]
    _write_csv(mdir / "vertices.csv", vcols, vrows)
    _write_csv(mdir / "mix.csv", vcols, [[*r[:3], 0.5, *r[4:]] for r in vrows])
    if image:
        from PIL import Image

        Image.new("RGB", image, (200, 220, 240)).save(mdir / "image.png")
    entry = {"id": map_id, "scenario": "metromap", "difficulty": "Easy", "split": "test"}
    manifest = {"schema_version": SCHEMA_VERSION, "name": root.name, "maps": [entry]}
    nv, ne = len(net.vertices), len(net.edges)
    cats = ["map_only", "edge_only", "time", "map_mix"]
    rp = []
    for i in range(n_rp):
        cat = cats[i % len(cats)]
        crit = cat in ("time", "map_mix")
        fewest = ["Alpha-Beta-Gamma-Delta", "Alpha-Beta(transfer)-Eta-Delta"]
        gold = {"time": [fewest[1]], "map_mix": [fewest[0]]}.get(cat, fewest)
        rp.append(
            {
                "id": f"rp-{i:05d}",
                "map_id": map_id,
                "scenario": "metromap",
                "split": "test" if i % 2 == 0 else "train",
                "category": cat,
                "style": "direct_optimization",
                "question": f"RP question {i}: route from Alpha to Delta ({cat})",
                "source": "Alpha",
                "target": "Delta",
                "weights": [1.0, 0.0, 0.0, 0.0] if cat == "time" else [0.25] * 4 if crit else None,
                "routes": gold,
                "route_vertex_numbers": [4] * len(gold),
                "transfer_vertex_numbers": [r.count("(transfer)") for r in gold],
                "map_difficulty": "Easy",
                "query_difficulty": "Easy",
                "tables": {
                    "edges": list(reversed(range(ne))),
                    "vertices": list(range(nv)),
                    "mix": list(range(nv)),
                },
            }
        )
    qa = [
        {
            "id": f"qa-{i:05d}",
            "map_id": map_id,
            "scenario": "metromap",
            "split": "test",
            "type": 1 if i % 2 == 0 else 7,
            "capabilities": ["counting"],
            "style": "direct",
            "question": f"QA question {i}",
            "answer": 2.0,
            "inputs": ["map"] if i % 2 == 0 else ["vertices"],
            "tables": {} if i % 2 == 0 else {"vertices": list(range(nv))},
            "drop_line_column": False,
        }
        for i in range(n_qa)
    ]
    seg = {
        "route_name": "Red",
        "departure_stop": "Alpha",
        "arrival_stop": "Gamma",
        "via_stops": ["Beta"],
        "num_via_stops": 1,
    }
    rm = [
        {
            "id": f"rm-{i:05d}",
            "map_id": map_id,
            "split": "test",
            "station_1": "Alpha",
            "station_2": "Gamma",
            "question_short": f"short question {i}",
            "question_long": f"long question {i}",
            "long_template": "num_via",
            "question_difficulty": "easy",
            "map_difficulty": "easy",
            "routes": [[seg]],
        }
        for i in range(n_reasonmap)
    ]
    for name, rows in (("rp", rp), ("qa", qa), ("reasonmap", rm)):
        with (root / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row) + "\n")
    (root / "manifest.json").write_text(json.dumps(manifest))
    return rehash(root)


def rehash(root: Path) -> Path:
    """Set the manifest's ``files`` to the SHA-256 of every file now in ``root`` (after a test
    edited the dataset on purpose)."""
    path = root / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["files"] = {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p != path
    }
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return root


def _write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> None:
    with path.open("w", encoding="utf-8-sig", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def spawn(script: str | Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Run ``script`` (this file, or one serving a subclass the same way) in a process of its
    own; ``(process, base URL)`` once it has printed ``PORT <n>``."""
    proc = subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT "):
        proc.kill()
        raise SystemExit(f"fake server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/v1"


def main() -> None:
    ap = argparse.ArgumentParser(description="Loopback OpenAI-compatible server.")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    args = ap.parse_args()
    srv = FakeServer(delay=args.delay, port=args.port)
    asyncio.run(srv.serve(lambda port: print(f"PORT {port}", flush=True)))


if __name__ == "__main__":
    main()
