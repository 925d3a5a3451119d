"""Runs end to end: loopback server, errors and --retry-errors, resume, settings, baselines."""

from __future__ import annotations

import json

import pytest

from fakeserver import FakeServer, Reply, write_dataset
from maptab.io.dataset import DatasetError
from maptab.run import make_provider, run
from maptab.run.store import StoreError

SECRET = "sk-live-DO-NOT-LEAK-0123456789"


def _rows(out):
    return [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]


def _openai(srv, **kw):
    return make_provider("openai:test-model", base_url=srv.base_url, backoff=0.01, **kw)


@pytest.fixture()
def ds(tmp_path):
    return write_dataset(tmp_path / "ds", n_rp=12, n_qa=4, n_reasonmap=2)


def test_run_records_every_sample_and_no_key(ds, tmp_path, monkeypatch):
    monkeypatch.setenv("MAPTAB_SECRET", SECRET)
    out = tmp_path / "run"
    with FakeServer(lambda body, seen: Reply(text="<think>hmm</think>A-B", reasoning="r")) as srv:
        p = _openai(srv, api_key_env="MAPTAB_SECRET", concurrency=8)
        s = run(ds, p, out, concurrency=8, progress=False, spec="openai:test-model")
    assert srv.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"
    assert (s.total, s.skipped, s.completed, s.errors) == (20, 0, 20, 0)
    rows = _rows(out)
    assert len(rows) == 20 and len({r["id"] for r in rows}) == 20
    r = rows[0]
    assert r["response"] == "A-B" and r["reasoning"] == "r\n\nhmm"
    assert r["provider"] == "openai" and r["model"] == "test-model"
    assert r["settings"]["max_tokens"] == 2048 and r["settings"]["table_format"] == "csv"
    assert r["prompt_tokens"] == 11 and r["latency_s"] > 0
    meta = json.loads((out / "run.json").read_text())
    assert meta["model"] == "openai:test-model" and meta["summary"]["completed"] == 20
    assert meta["settings"]["api_key_env"] == "MAPTAB_SECRET"
    for f in out.rglob("*"):  # the key is in no file written
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


def test_errors_are_recorded_and_retry_errors_replaces_them(ds, tmp_path):
    out = tmp_path / "run"

    def flaky(body, seen):  # every map_mix sample and one QA sample fail
        text = body["messages"][0]["content"][0]["text"]
        bad = text.endswith("(map_mix)") or text == "QA question 1"
        return Reply("status", status=500) if bad else Reply()

    with FakeServer(flaky) as srv:
        s1 = run(ds, _openai(srv, max_retries=1), out, progress=False)
    failed = {r["id"] for r in _rows(out) if r["error"]}
    assert failed == {"rp-00003", "rp-00007", "rp-00011", "qa-00001"}
    assert s1.errors == 4 and all(r["response"] == "" for r in _rows(out) if r["error"])
    assert s1.top_error == "(4×) HTTP 500: scripted 500 after 2 attempts"
    assert all("HTTP 500" in r["error"] for r in _rows(out) if r["error"])

    with FakeServer() as srv:  # without --retry-errors nothing is redone
        s2 = run(ds, _openai(srv), out, progress=False)
        assert srv.requests == [] and (s2.skipped, s2.completed, s2.errors) == (20, 0, 4)
    with FakeServer() as srv:
        s3 = run(ds, _openai(srv), out, progress=False, retry_errors=True)
        assert len(srv.requests) == 4
    assert (s3.completed, s3.errors, s3.compacted, s3.top_error) == (4, 0, True, None)
    rows = _rows(out)
    assert len(rows) == 20 and len({r["id"] for r in rows}) == 20
    assert not any(r["error"] for r in rows)


def test_resume_skips_done_and_completes_the_rest(ds, tmp_path):
    out = tmp_path / "run"
    with FakeServer() as srv:
        run(ds, _openai(srv), out, progress=False, limit=7)
        s = run(ds, _openai(srv), out, progress=False)
        assert len(srv.requests) == 20
    assert (s.skipped, s.completed) == (7, 13)
    assert sorted(r["id"] for r in _rows(out)) == sorted({r["id"] for r in _rows(out)})


def test_rerun_with_other_settings_is_refused(ds, tmp_path):
    out = tmp_path / "run"
    with FakeServer() as srv:
        run(ds, _openai(srv), out, progress=False, limit=2)
        with pytest.raises(StoreError, match="started with table_format = 'csv'"):
            run(ds, _openai(srv), out, progress=False, table_format="json")
        with pytest.raises(StoreError, match="max_tokens"):
            run(ds, _openai(srv, max_tokens=10), out, progress=False)


def test_oracle_answers_every_rp_and_qa_sample_with_its_gold(ds, tmp_path):
    out = tmp_path / "oracle"
    s = run(ds, make_provider("oracle"), out, progress=False)
    assert s.errors == 0
    gold = {}
    for name in ("rp", "qa", "reasonmap"):
        for line in (ds / f"{name}.jsonl").read_text().splitlines():
            row = json.loads(line)
            gold[row["id"]] = row
    for r in _rows(out):
        if r["kind"] == "rp":
            route = r["response"].removeprefix("<route_begin>").removesuffix("<route_end>")
            assert route in gold[r["id"]]["routes"], (r["id"], route)
        elif r["kind"] == "qa":
            assert r["response"] == "<answer_begin>2<answer_end>"
        else:
            sid, variant = r["id"].split("/")
            assert r["response"].splitlines()[:3] == [
                "Route Name: Red",
                "Departure Stop: Alpha",
                "Arrival Stop: Gamma",
            ]
            assert ("Number of Via Stops: 1" in r["response"]) == (variant == "long")


def test_other_baselines(ds, tmp_path):
    fewest = {"Alpha-Beta-Gamma-Delta", "Alpha-Beta(transfer)-Eta-Delta"}
    run(ds, make_provider("shortest"), tmp_path / "s", progress=False)
    for r in _rows(tmp_path / "s"):
        if r["kind"] == "rp":
            assert r["response"][len("<route_begin>") : -len("<route_end>")] in fewest
    run(ds, make_provider("blank"), tmp_path / "b", progress=False)
    assert {r["response"] for r in _rows(tmp_path / "b")} == {""}
    run(ds, make_provider("random", seed=3), tmp_path / "r1", progress=False, concurrency=1)
    run(ds, make_provider("random", seed=3), tmp_path / "r2", progress=False, concurrency=9)
    a = {r["id"]: r["response"] for r in _rows(tmp_path / "r1")}
    assert a == {r["id"]: r["response"] for r in _rows(tmp_path / "r2")}  # seeded per sample
    for rid, resp in a.items():
        if rid.startswith("rp"):
            stations = resp[len("<route_begin>") : -len("<route_end>")].replace("(transfer)", "")
            path = stations.split("-")
            assert path[0] == "Alpha" and path[-1] == "Delta" and len(set(path)) == len(path)


def test_an_empty_selection_is_an_error_not_an_empty_run(ds, tmp_path):
    with pytest.raises(DatasetError, match="no sample matches split 'tset'$"):
        run(ds, make_provider("blank"), tmp_path / "a", split="tset", progress=False)
    only_rp = write_dataset(tmp_path / "rp", n_rp=2, n_qa=0, n_reasonmap=0)
    with pytest.raises(
        DatasetError, match=r"no sample matches split 'test' and categories \['qa'\]"
    ):
        run(only_rp, make_provider("blank"), tmp_path / "b", split="test", categories=["qa"])
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
