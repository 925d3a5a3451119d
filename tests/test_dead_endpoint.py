"""A server that is not there fails the run at once; one that dies mid-run stops it with every
answer kept (SPEC 16). Real loopback servers; deadlines below only guard against hangs."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fakeserver import FakeServer, Reply, write_dataset
from maptab.cli import app
from maptab.run import run
from maptab.run.openai_provider import DOWN_AFTER, OpenAIProvider
from maptab.run.provider import EndpointUnreachable, ProviderError, probe
from maptab.run.requests import ChatRequest

TESTS = Path(__file__).parent
HANG_GUARD = 120  # seconds; never reached by a working run


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rows(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]


def _req(text: str) -> ChatRequest:
    return ChatRequest(text, "qa", [{"role": "user", "content": [{"type": "text", "text": text}]}])


def test_closed_port_stops_before_any_sample_in_one_line(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=2, n_reasonmap=1)
    out = tmp_path / "run"
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    res = CliRunner().invoke(
        app, ["run", str(ds), "--model", "openai:x", "--base-url", url, "--out", str(out)]
    )
    text = res.stderr
    assert res.exit_code == 1, (text, res.exception)
    assert text.strip() == (
        f"error: cannot reach {url} (connection refused); is the server running? check --base-url"
    )
    assert "Traceback" not in res.output
    assert not out.exists()  # nothing written, not even the run folder


@pytest.mark.slow
def test_closed_port_cli_process_exits_non_zero_without_traceback(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=2, n_qa=0, n_reasonmap=0)
    out = tmp_path / "run"
    url = f"http://localhost:{_closed_port()}/v1"
    cmd = [sys.executable, "-c", "from maptab.cli import main; main()", "run", str(ds)]
    cmd += ["--model", "openai:x", "--base-url", url, "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot reach {url} ("), proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not out.exists()


def test_probe_passes_on_any_http_answer_and_is_optional():
    with FakeServer() as srv:  # answers GET /v1/models with 404: the server is there
        p = OpenAIProvider("m", base_url=srv.base_url)

        async def main():
            try:
                await probe(p)
            finally:
                await p.aclose()

        asyncio.run(main())
        assert srv.requests == []  # no chat request was spent on it
    asyncio.run(probe(object()))  # a provider without a probe: nothing to check


def test_breaker_counts_failed_connections_across_requests():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    p = OpenAIProvider("m", base_url=url, backoff=0.001, max_retries=1, concurrency=1)
    n = DOWN_AFTER

    async def main():
        try:
            return [await _outcome(p.complete(_req(f"q{i}"))) for i in range(n)]
        finally:
            await p.aclose()

    outs = asyncio.run(main())
    # two attempts per request: each request fails on its own (an error row) until the
    # failed connections in a row reach DOWN_AFTER; from then on the run is stopped
    k = (DOWN_AFTER - 1) // 2
    assert [type(o) for o in outs] == [ProviderError] * k + [EndpointUnreachable] * (n - k)
    assert str(outs[k]) == (
        f"lost {url}: {DOWN_AFTER} connection attempts in a row failed (connection refused)"
    )
    assert p.attempts == DOWN_AFTER + (n - k - 1)


def test_any_http_answer_resets_the_breaker():
    with FakeServer(lambda body, seen: Reply("status", status=404)) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, max_retries=0)
        p._down = DOWN_AFTER - 1  # as after that many refused connections

        async def main():
            try:
                return await _outcome(p.complete(_req("q")))
            finally:
                await p.aclose()

        out = asyncio.run(main())
    assert isinstance(out, ProviderError) and str(out).startswith("HTTP 404")
    assert p._down == 0


async def _outcome(coro):
    try:
        return await coro
    except Exception as exc:
        return exc


def test_live_server_errors_are_retried_and_do_not_trip_the_breaker(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=6, n_qa=2, n_reasonmap=1)
    out = tmp_path / "run"

    seen: dict[str, int] = {}

    def flaky(body, _):  # every request: 503 more times than DOWN_AFTER, then answered
        key = json.dumps(body["messages"], sort_keys=True)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= DOWN_AFTER + 1:
            return Reply("status", status=503, headers={"Retry-After": "0"})
        return Reply()

    with FakeServer(flaky) as srv:
        p = OpenAIProvider("m", base_url=srv.base_url, backoff=0.001, max_retries=DOWN_AFTER + 1)
        s = run(ds, p, out, concurrency=3, progress=None)
    assert s.errors == 0 and s.completed == s.total
    rows = _rows(out)
    assert len(rows) == s.total and not any(r["error"] for r in rows)
    assert len(srv.requests) == s.total * (DOWN_AFTER + 2)


_SERVER = textwrap.dedent(
    """
    import asyncio, sys
    from fakeserver import FakeServer, Reply

    answered = int(sys.argv[1])
    srv = FakeServer()
    # the first `answered` requests are answered; later ones wait until the process dies
    srv.responder = lambda body, seen: Reply() if len(srv.requests) <= answered else Reply(
        delay=3600
    )
    asyncio.run(srv.serve(lambda port: print("PORT", port, flush=True)))
    """
)


@pytest.mark.slow
def test_server_dying_mid_run_stops_it_and_a_rerun_resumes(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=12, n_qa=2, n_reasonmap=1, image=(64, 48))
    out = tmp_path / "run"
    preds = out / "predictions.jsonl"
    answered = 5
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(answered)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=TESTS,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
    )
    try:
        port = int(server.stdout.readline().split()[1])
        url = f"http://127.0.0.1:{port}/v1"
        cmd = [sys.executable, "-c", "from maptab.cli import main; main()", "run", str(ds)]
        cmd += ["--model", "openai:x", "--base-url", url, "--out", str(out)]
        cmd += ["--concurrency", "3", "--no-progress"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + HANG_GUARD
        while time.monotonic() < deadline and proc.poll() is None:
            if preds.exists() and len(preds.read_bytes().splitlines()) >= answered:
                break
            time.sleep(0.01)
        server.send_signal(signal.SIGKILL)  # the server dies with requests in flight
        server.wait(HANG_GUARD)
        stdout, stderr = proc.communicate(timeout=HANG_GUARD)
    finally:
        server.kill()
        server.wait(HANG_GUARD)
        server.stdout.close()
    assert proc.returncode == 1, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr + stdout, stderr
    assert lines[0].startswith(f"error: lost {url}: {DOWN_AFTER} connection attempts in a row"), (
        lines
    )
    assert f"{answered} answers kept in {out}: rerun the same command to resume" in lines[0]
    rows = _rows(out)
    assert len(rows) == answered and not any(r["error"] for r in rows)
    with FakeServer(port=port) as srv:  # the server is back: the same command resumes
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_GUARD)
        served = len(srv.requests)
    assert again.returncode == 0, again.stderr
    assert f"{answered} already done" in again.stdout
    rows = _rows(out)
    total = 12 + 2 + 2  # ReasonMap rows come in two variants
    assert sorted(r["id"] for r in rows) == sorted({r["id"] for r in rows})
    assert len(rows) == total and served == total - answered
    assert not any(r["error"] for r in rows)
