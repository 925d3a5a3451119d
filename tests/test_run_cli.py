"""``maptab run`` as a user runs it: killed mid-run and resumed, and one-line errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from fakeserver import FakeServer, Reply, write_dataset
from maptab.cli import app

N = 240


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    cmd = [sys.executable, "-c", "from maptab.cli import main; main()", "run", *args]
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})}
    )


def _ids(path):
    return [json.loads(x)["id"] for x in path.read_text().splitlines()]


@pytest.mark.slow
def test_killed_run_resumes_with_nothing_lost_or_duplicated(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=N, n_qa=0, n_reasonmap=0, image=(64, 48))
    out = tmp_path / "run"
    preds = out / "predictions.jsonl"
    args = [
        str(ds),
        "--model",
        "openai:m",
        "--out",
        str(out),
        "--concurrency",
        "4",
        "--no-progress",
    ]
    answered, held = 40, [True]

    def reply(body, seen):
        """The first ``answered`` requests are answered; later ones wait (an hour) until
        the run is killed, so the kill always lands mid-run."""
        if held[0] and len(srv.requests) > answered:
            return Reply(delay=3600)
        return Reply(delay=0.03)

    with FakeServer(reply) as srv:
        base = ["--base-url", srv.base_url]
        proc = _cli(*args, *base)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if preds.exists() and len(preds.read_bytes().splitlines()) >= 30:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        held[0] = False
        assert proc.returncode == -signal.SIGKILL
        done_before = _ids(preds)
        assert 30 <= len(done_before) <= answered
        with preds.open("a") as fh:  # a torn write, as a kill in mid-line leaves it
            fh.write('{"id": "rp-00000", "kind": "rp", "resp')
        proc = _cli(*args, *base)
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr.decode()
        served = len(srv.requests)
    ids = _ids(preds)
    assert sorted(ids) == [f"rp-{i:05d}" for i in range(N)]  # each id exactly once
    assert ids[: len(done_before)] == done_before  # earlier answers kept, not redone
    assert served <= N + 4  # at most the requests in flight at the kill were sent twice
    assert f"{len(done_before)} already done" in stdout.decode()


def test_cli_errors_are_one_line(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=2, n_qa=0, n_reasonmap=0)
    cases = [
        ([str(tmp_path / "nope"), "--model", "oracle"], "no manifest.json"),
        ([str(ds), "--model", "gpt"], "unknown model spec"),
        ([str(ds), "--model", "blank", "--categories", "time,fast"], "unknown category 'fast'"),
        ([str(ds), "--model", "blank", "--image-size", "big"], "--image-size must be"),
        ([str(ds), "--model", "openai:m", "--api-key-env", "MAPTAB_UNSET_KEY"], "MAPTAB_UNSET_KEY"),
    ]
    runner = CliRunner()
    for args, message in cases:
        res = runner.invoke(app, ["run", *args, "--out", str(tmp_path / "o")])
        text = res.stderr
        assert res.exit_code == 1, (args, text, res.exception)
        assert message in text and "Traceback" not in text, text
        assert len(text.strip().splitlines()) == 1, text


def test_help_lists_every_accepted_category():
    from maptab.core.schema import RP_CATEGORIES

    res = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "400"})
    assert res.exit_code == 0
    text = " ".join(res.stdout.split())
    for name in ["rp", "qa", "reasonmap", "qa:1", "qa:24", *(c.name for c in RP_CATEGORIES)]:
        assert name in text, name


def test_summary_names_the_most_frequent_error_and_bad_options_are_refused(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=3, n_qa=0, n_reasonmap=0)
    runner = CliRunner()
    with FakeServer(
        lambda body, seen: Reply("status", status=400, message="[/x] bad model")
    ) as srv:
        args = ["run", str(ds), "--model", "openai:m", "--base-url", srv.base_url]
        res = runner.invoke(app, [*args, "--out", str(tmp_path / "o"), "--no-progress"])
        assert res.exit_code == 1, res.output  # nothing succeeded: a failed run
        assert "3 errors" in res.stdout
        assert "most frequent error (3×) HTTP 400: [/x] bad model" in res.stdout
        assert "rerun with --retry-errors" in res.stdout
        assert "no sample succeeded: all 3 ended in error" in res.stderr
        assert "--retry-errors" in res.stderr and len(res.stderr.strip().splitlines()) == 1
        for bad in (["--max-tokens", "0"], ["--thinking-budget", "0"], ["--timeout", "0"]):
            res = runner.invoke(app, [*args, *bad, "--out", str(tmp_path / "p")])
            assert res.exit_code != 0 and "Traceback" not in res.output, (bad, res.output)
        assert len(srv.requests) == 3  # the refused runs sent nothing
    res = runner.invoke(app, ["run", str(ds), "--model", "blank", "--split", "tset"])
    assert res.exit_code == 1 and "no sample matches split 'tset'" in res.stderr


def test_an_unusable_run_folder_is_a_one_line_error(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    res = CliRunner().invoke(
        app, ["run", str(ds), "--model", "blank", "--out", str(ds / "manifest.json")]
    )
    assert res.exit_code == 1 and "Traceback" not in res.stderr, res.output
    assert (
        res.stderr.strip()
        == f"error: {ds / 'manifest.json'}: cannot be used as a run folder (File exists)"
    )


def test_a_run_with_some_answers_exits_zero_and_retrying_the_rest_succeeds(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=0, n_reasonmap=0)
    out = str(tmp_path / "o")
    runner = CliRunner()

    calls = []

    def flaky(body, seen):  # the first two requests fail, later ones succeed
        calls.append(1)
        return Reply("status", status=400, message="nope") if len(calls) <= 2 else Reply()

    with FakeServer(flaky) as srv:
        args = ["run", str(ds), "--model", "openai:m", "--base-url", srv.base_url, "--out", out]
        res = runner.invoke(app, [*args, "--no-progress", "--concurrency", "1"])
        assert res.exit_code == 0, res.output
        assert "2 errors" in res.stdout and "rerun with --retry-errors" in res.stdout
        res = runner.invoke(app, [*args, "--no-progress", "--retry-errors"])
        assert res.exit_code == 0, res.output
        assert "0 errors" in res.stdout
