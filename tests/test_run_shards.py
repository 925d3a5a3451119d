"""One run over several servers (repeated --base-url); shards of a run (--shard I/N) merged
for scoring (maptab score R0 R1 --out MERGED), or one shard scored alone (maptab score R0).
Real loopback servers, no timing."""

from __future__ import annotations

import json
import shutil
import socket

import pytest
from typer.testing import CliRunner

from fakeserver import FakeServer, Reply, write_dataset
from maptab.cli import app
from maptab.io.dataset import shard_of
from maptab.run import make_provider, run

ANSWERS = ("<answer_begin>1<answer_end>", "<answer_begin>2<answer_end>", "Alpha-Beta-Gamma-Delta")


def _answer(body, seen):  # the same question always gets the same answer, varying by question
    text = body["messages"][0]["content"][0]["text"]
    return Reply(text=ANSWERS[sum(text.encode()) % len(ANSWERS)])


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture()
def ds(tmp_path):
    return write_dataset(tmp_path / "ds", n_rp=12, n_qa=4, n_reasonmap=2)


def _run_cli(ds, out, url, *more):
    res = _invoke("run", ds, "--model", "openai:m", "--base-url", url, "--out", out, *more)
    assert res.exit_code == 0, (res.output, res.exception)


def test_two_servers_share_the_run(ds, tmp_path):
    out = tmp_path / "run"
    with FakeServer(_answer) as a, FakeServer(_answer) as b:
        p = make_provider("openai:m", base_url=[a.base_url, b.base_url], concurrency=1)
        s = run(ds, p, out, concurrency=1, progress=False)
    assert (s.total, s.completed, s.errors) == (20, 20, 0)
    # one request at a time: every pick is a tie, so the servers take turns
    assert len(a.requests) == len(b.requests) == 10
    meta = json.loads((out / "run.json").read_text())
    assert meta["settings"]["base_url"] == [a.base_url, b.base_url]
    assert "shard" not in meta


def test_two_servers_from_the_cli_and_one_url_unchanged(ds, tmp_path):
    with FakeServer(_answer) as a, FakeServer(_answer) as b:
        _run_cli(ds, tmp_path / "two", a.base_url, "--base-url", b.base_url, "--concurrency", 4)
        assert a.requests and b.requests
        assert len(a.requests) + len(b.requests) == 20
        two = sorted(json.dumps(r["body"], sort_keys=True) for r in a.requests + b.requests)
        _run_cli(ds, tmp_path / "one", a.base_url)
        one = sorted(json.dumps(r["body"], sort_keys=True) for r in a.requests[-20:])
    assert one == two  # the same request bodies, whichever server
    meta = json.loads((tmp_path / "one" / "run.json").read_text())
    assert meta["settings"]["base_url"] == a.base_url  # one URL: recorded as a string
    assert "shard" not in meta


def test_a_dead_second_server_is_one_line_at_start(ds, tmp_path):
    out = tmp_path / "run"
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    with FakeServer(_answer) as a:
        res = _invoke(
            "run", ds, "--model", "openai:m", "--base-url", a.base_url, "--base-url", dead,
            "--out", out,
        )  # fmt: skip
        assert a.requests == []
    assert res.exit_code == 1
    assert res.stderr.strip() == (
        f"error: cannot reach {dead} (connection refused); is the server running? check --base-url"
    )
    assert not out.exists()


def test_shards_merged_score_as_the_whole_run(ds, tmp_path):
    whole, r0, r1, merged = (tmp_path / n for n in ("whole", "r0", "r1", "merged"))
    with FakeServer(_answer) as srv:
        _run_cli(ds, whole, srv.base_url)
        _run_cli(ds, r0, srv.base_url, "--shard", "0/2")
        _run_cli(ds, r1, srv.base_url, "--shard", "1/2")
    ids = [json.loads(x)["id"] for x in (whole / "predictions.jsonl").read_text().splitlines()]
    ids0 = [json.loads(x)["id"] for x in (r0 / "predictions.jsonl").read_text().splitlines()]
    assert len(ids0) == 10 and set(ids0) < set(ids)
    assert json.loads((r1 / "run.json").read_text())["shard"] == [1, 2]
    assert _invoke("score", whole).exit_code == 0
    res = _invoke("score", r0, r1, "--out", merged)
    assert res.exit_code == 0, (res.output, res.exception)
    a = json.loads((whole / "summary.json").read_text())
    b = json.loads((merged / "summary.json").read_text())
    assert a["counts"]["missing"] == b["counts"]["missing"] == 0
    assert "shard" not in a and "shard" not in b  # whole runs
    assert {k: v for k, v in a.items() if k != "dataset"} == {
        k: v for k, v in b.items() if k != "dataset"
    }
    rows = [json.loads(x)["id"] for x in (merged / "predictions.jsonl").read_text().splitlines()]
    assert sorted(rows) == sorted(ids) and len(rows) == 20
    meta = json.loads((merged / "run.json").read_text())
    assert [s["shard"] for s in meta["shards"]] == [[0, 2], [1, 2]] and "shard" not in meta
    # the shards are untouched; merging again replaces the merge
    assert len((r0 / "predictions.jsonl").read_text().splitlines()) == 10
    assert _invoke("score", r0, r1, "--out", merged).exit_code == 0


def _one_line_error(res, start: str) -> None:
    assert res.exit_code == 1, (res.output, res.exception)
    text = res.stderr.strip()
    assert len(text.splitlines()) == 1 and text.startswith(f"error: {start}"), text


def test_overlaps_gaps_and_other_settings_are_refused(ds, tmp_path):
    r0, r1, t0, t1, hot = (tmp_path / n for n in ("r0", "r1", "t0", "t1", "hot"))
    with FakeServer(_answer) as srv:
        _run_cli(ds, r0, srv.base_url, "--shard", "0/2")
        _run_cli(ds, t0, srv.base_url, "--shard", "0/3")
        _run_cli(ds, t1, srv.base_url, "--shard", "1/3")
        _run_cli(ds, hot, srv.base_url, "--shard", "1/2", "--temperature", "0.5")
    shutil.copytree(r0, r1)
    out = tmp_path / "merged"
    _one_line_error(_invoke("score", r0, r1, "--out", out), "10 samples answered in two")
    _one_line_error(
        _invoke("score", t0, t1, "--out", out), "6 samples of the selection answered in none"
    )
    _one_line_error(_invoke("score", r0, hot, "--out", out), f"{hot} was run with settings.temp")
    _one_line_error(_invoke("score", r0, t1), "several run folders are merged")
    _one_line_error(_invoke("score", r0, t1, "--out", r0), f"--out {r0} is one of the folders")
    assert not out.exists()  # nothing written by a refused merge


def test_bad_shard_is_one_line(ds, tmp_path):
    res = _invoke("run", ds, "--model", "blank", "--shard", "2/2", "--out", tmp_path / "r")
    _one_line_error(res, "--shard must be I/N")
    res = _invoke("run", ds, "--model", "blank", "--shard", "30/40", "--out", tmp_path / "r")
    _one_line_error(res, f"{ds}: shard 30/40 is empty")


def test_other_dataset_is_refused(ds, tmp_path):
    other = write_dataset(tmp_path / "other", n_rp=8, n_qa=4, n_reasonmap=2)
    r0, r1 = tmp_path / "r0", tmp_path / "r1"
    assert _invoke("run", ds, "--model", "blank", "--shard", "0/2", "--out", r0).exit_code == 0
    assert _invoke("run", other, "--model", "blank", "--shard", "1/2", "--out", r1).exit_code == 0
    _one_line_error(_invoke("score", r0, r1, "--out", tmp_path / "m"), f"{r1} answered another")


def _summary(run_dir):
    return json.loads((run_dir / "summary.json").read_text())


def test_shard_of_is_the_rule_of_run_and_score():
    assert shard_of(list("abcdefg"), (1, 3)) == ["b", "e"]
    assert shard_of(range(7), (0, 3)) == [0, 3, 6]
    assert shard_of(["a", "b"], None) == ["a", "b"]
    assert shard_of(["a", "b"], (2, 3)) == []


def test_one_shard_scored_alone_is_a_partial_run(ds, tmp_path):
    r0, r1 = tmp_path / "r0", tmp_path / "r1"
    assert _invoke("run", ds, "--model", "blank", "--shard", "0/3", "--out", r0).exit_code == 0
    assert _invoke("run", ds, "--model", "blank", "--shard", "1/3", "--out", r1).exit_code == 0
    res = _invoke("score", r0)
    assert res.exit_code == 0, (res.output, res.exception)
    summary = _summary(r0)
    assert summary["shard"] == [0, 3]
    counts = summary["counts"]
    assert counts["predictions"] == 7 and counts["missing"] == 0  # 20 samples: 0, 3, … 18
    assert "partial run: shard 0/3 only" in res.output
    assert "maptab score R0 … R2 --out MERGED" in res.output
    res = _invoke("score", r1)
    assert res.exit_code == 0 and "partial run: shard 1/3 only" in res.output
    assert _summary(r1)["counts"]["missing"] == 0 and _summary(r1)["shard"] == [1, 3]
    # a sample of the shard left unanswered is missing; the other shards' samples are not
    lines = (r1 / "predictions.jsonl").read_text().splitlines(keepends=True)
    (r1 / "predictions.jsonl").write_text("".join(lines[:-2]))
    assert _invoke("score", r1).exit_code == 0
    assert _summary(r1)["counts"]["missing"] == 2


def test_a_shard_of_a_narrowed_selection_expects_its_own_samples(ds, tmp_path):
    lim, cat = tmp_path / "lim", tmp_path / "cat"
    args = ("--model", "blank", "--shard", "1/3")
    assert _invoke("run", ds, *args, "--limit", 8, "--out", lim).exit_code == 0
    assert _invoke("run", ds, *args, "--categories", "qa", "--out", cat).exit_code == 0
    for folder, answered in ((lim, 3), (cat, 1)):  # positions 1, 4, 7 of 8; 1 of 4 QA
        res = _invoke("score", folder)
        assert res.exit_code == 0, (res.output, res.exception)
        counts = _summary(folder)["counts"]
        assert (counts["predictions"], counts["missing"]) == (answered, 0)


def test_whole_run_scores_without_a_shard_and_a_bad_shard_is_one_line(ds, tmp_path):
    whole, r0 = tmp_path / "whole", tmp_path / "r0"
    assert _invoke("run", ds, "--model", "blank", "--out", whole).exit_code == 0
    res = _invoke("score", whole)
    assert res.exit_code == 0 and "partial run" not in res.output
    assert "shard" not in _summary(whole) and _summary(whole)["counts"]["missing"] == 0
    assert _invoke("run", ds, "--model", "blank", "--shard", "0/2", "--out", r0).exit_code == 0
    meta = json.loads((r0 / "run.json").read_text())
    for bad in ([2, 2], [0], "0/2", [0.0, 2.0]):
        (r0 / "run.json").write_text(json.dumps({**meta, "shard": bad}))
        _one_line_error(_invoke("score", r0), f"{r0 / 'run.json'}: field 'shard' is")
