"""``maptab run --jobs``: in-process models answered in worker processes.

The rows must be those one process writes (``latency_s`` aside), in the same order, with
resume, per-sample errors, a malformed dataset, a dead worker and Ctrl-C handled as in one
process. The models below are module-level functions, so worker processes (``spawn``) can
import them by name.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakeserver import write_dataset
from maptab.api import run_model
from maptab.executors import POOL_MIN, local_executor, workers_for
from maptab.generate.pipeline import build_benchmark
from maptab.io.dataset import DatasetError
from maptab.run import inprocess, make_provider, run
from maptab.run.base import ProviderConfigError
from maptab.run.inprocess import RunWorkerError

DIES_ON = "rp-00013"


def echo_id(request):
    """A model answering with the sample's id and how many messages it was shown."""
    return f"{request.id} {len(request.messages)}"


def fails_on_some(request):
    if request.id.endswith(("0", "3", "6", "9")):
        raise ValueError(f"no answer for {request.id}")
    return request.id


def dies_on_one(request):
    if request.id == DIES_ON:
        os._exit(3)  # a worker killed mid-chunk (out of memory, a crash in native code)
    return request.id


def _rows(out: Path, *, timing: bool = False) -> list[dict]:
    rows = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    if not timing:
        for row in rows:
            row.pop("latency_s")
    return rows


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jobs") / "mini"
    build_benchmark(root, preset="mini", seed=3, report_totals=True)
    return root


@pytest.fixture()
def small_chunks(monkeypatch):
    """Chunks of at most 5 samples (the first of 1), 2 ahead per worker: many chunks of
    several sizes, the window refilled often."""
    monkeypatch.setattr(inprocess, "CHUNK", 5)
    monkeypatch.setattr(inprocess, "AHEAD", 2)


@pytest.mark.parametrize("model", ["oracle", "random", "shortest"])
def test_workers_write_the_rows_one_process_writes(mini, tmp_path, small_chunks, model):
    one, two = tmp_path / "one", tmp_path / "two"
    a = run(mini, make_provider(model), one)
    b = run(mini, make_provider(model), two, jobs=2)
    rows = _rows(one)
    assert {r["kind"] for r in rows} == {"rp", "qa", "reasonmap"}  # every kind
    assert len(rows) == a.completed == b.completed > 20
    assert _rows(two) == rows  # same rows, same order
    assert b.errors == a.errors == 0
    assert all(r["latency_s"] >= 0 for r in _rows(two, timing=True))


def test_a_run_resumed_with_workers_completes_what_one_process_began(mini, tmp_path):
    out = tmp_path / "run"
    run(mini, make_provider("oracle"), out, limit=17)
    first = _rows(out)
    s = run(mini, make_provider("oracle"), out, jobs=2)
    rows = _rows(out)
    assert s.skipped == 17 and s.completed == len(rows) - 17
    assert rows[:17] == first  # kept, not redone
    assert len({r["id"] for r in rows}) == len(rows)  # each id once
    whole = tmp_path / "whole"
    run(mini, make_provider("oracle"), whole)
    assert rows == _rows(whole)


def test_a_python_function_runs_in_workers_with_its_messages_and_errors(tmp_path, small_chunks):
    ds = write_dataset(tmp_path / "ds", n_rp=23, n_qa=4, n_reasonmap=2, image=(32, 24))
    for fn in (echo_id, fails_on_some):
        one, two = tmp_path / f"{fn.__name__}-1", tmp_path / f"{fn.__name__}-2"
        a = run_model(ds, fn, one)
        b = run_model(ds, fn, two, jobs=3)
        assert _rows(two) == _rows(one)
        assert a.errors == b.errors
        assert (a.errors > 0) is (fn is fails_on_some)
    rows = _rows(tmp_path / "echo_id-2")
    assert rows[0]["response"] == "rp-00000 1"  # the workers built the full request
    failed = [r for r in _rows(tmp_path / "fails_on_some-2") if r["error"]]
    assert failed and all(r["error"].startswith("ValueError: no answer for") for r in failed)
    assert (tmp_path / "echo_id-2" / ".cache" / "images").is_dir()  # images were encoded
    assert not list((tmp_path / "echo_id-2" / ".cache" / "images").glob("*.tmp"))


def test_a_model_workers_cannot_receive_is_a_one_line_error(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=3, n_qa=0, n_reasonmap=0)
    with pytest.raises(ProviderConfigError) as err:
        run_model(ds, lambda request: "x", tmp_path / "run", jobs=2)
    assert "cannot be sent to worker processes" in str(err.value)
    assert "\n" not in str(err.value)
    # the same lambda in one process is fine
    assert run_model(ds, lambda request: "x", tmp_path / "run").completed == 3


def test_jobs_is_refused_for_a_model_asked_over_the_network(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=3, n_qa=0, n_reasonmap=0)
    provider = make_provider("openai:m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ProviderConfigError, match="--jobs is for models answered in process"):
        run(ds, provider, tmp_path / "run", jobs=2)
    with pytest.raises(DatasetError, match="jobs must be at least 1"):
        run(ds, make_provider("oracle"), tmp_path / "run", jobs=0)


def test_workers_started_before_the_samples_are_chosen_are_stopped_on_an_error(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=3, n_qa=0, n_reasonmap=0)
    with pytest.raises(DatasetError, match="no sample matches categories"):
        run(ds, make_provider("oracle"), tmp_path / "run", categories=["qa"], jobs=2)
    assert multiprocessing.active_children() == []
    s = run(ds, make_provider("oracle"), tmp_path / "run", jobs=2)
    assert s.completed == 3
    s = run(ds, make_provider("oracle"), tmp_path / "run", jobs=2)  # nothing left to answer
    assert (s.skipped, s.completed) == (3, 0)
    assert multiprocessing.active_children() == []


def test_a_malformed_dataset_stops_the_run_with_the_message_one_process_gives(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=12, n_qa=0, n_reasonmap=0)
    rows = [json.loads(x) for x in (ds / "rp.jsonl").read_text().splitlines()]
    bad = [r for r in rows if r["category"] == "edge_only"][1]  # shows the Edge_tab
    bad["tables"]["edges"][0] = 999  # a row index outside the map's Edge_tab
    (ds / "rp.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    messages = []
    for jobs in (1, 2):
        with pytest.raises(DatasetError) as err:
            run(ds, make_provider("blank"), tmp_path / f"run{jobs}", jobs=jobs, verify=False)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert messages[0] == f"{bad['id']}: 'tables.edges' has a row index out of range"


def test_a_dead_worker_stops_the_run_in_one_line_and_a_rerun_resumes(tmp_path, small_chunks):
    ds = write_dataset(tmp_path / "ds", n_rp=40, n_qa=0, n_reasonmap=0, image=(16, 12))
    out = tmp_path / "run"
    with pytest.raises(RunWorkerError) as err:
        run_model(ds, dies_on_one, out, jobs=2)
    assert "worker process stopped" in str(err.value) and "\n" not in str(err.value)
    kept = _rows(out)
    ids = [r["id"] for r in kept]
    assert ids == [f"rp-{i:05d}" for i in range(len(ids))]  # in order, before the dead chunk
    assert len(ids) < 15
    s = run_model(ds, echo_id, out, model="dies_on_one")  # one process, same model name
    assert s.skipped == len(ids)
    assert [r["id"] for r in _rows(out)] == [f"rp-{i:05d}" for i in range(40)]


def test_the_workers_come_from_the_executor_factory_given(mini, tmp_path):
    made = []

    def executors(workers, initializer=None, initargs=()):
        made.append(workers)
        return local_executor(workers, initializer, initargs)

    one, two = tmp_path / "one", tmp_path / "two"
    run(mini, make_provider("oracle"), one)
    run(mini, make_provider("oracle"), two, jobs=2, executors=executors)
    assert made == [2]
    assert _rows(two) == _rows(one)


def test_workers_for_follows_the_scorers_rule(monkeypatch):
    monkeypatch.setattr("maptab.executors.default_workers", lambda: 6)
    assert workers_for(3, 10) == 3
    assert workers_for(None, POOL_MIN - 1) == 1
    assert workers_for(None, POOL_MIN) == 6


def _session(sid: int) -> list[int]:
    """Processes of session ``sid`` (Linux; none found elsewhere)."""
    out = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append(int(entry.name))
    return out


def _none_left(sid: int) -> bool:
    deadline = time.monotonic() + 60
    while _session(sid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _session(sid)


def _cli(args: list[str]) -> subprocess.Popen:
    cmd = [sys.executable, "-c", "from maptab.cli import main; main()", "run", *args]
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_an_in_process_run_at_once_and_a_rerun_resumes(tmp_path, jobs):
    """Ctrl-C reaches the whole process group, as from a terminal. Before, a run of an
    in-process model went on to its last sample (asyncio.run turns the first Ctrl-C into a
    cancellation, which waits for an ``await``)."""
    n = 40_000
    ds = write_dataset(tmp_path / "ds", n_rp=n, n_qa=0, n_reasonmap=0, image=None)
    out = tmp_path / "run"
    preds = out / "predictions.jsonl"
    args = [str(ds), "--model", "random", "--out", str(out), "--no-progress", "--jobs", jobs]
    proc = _cli(args)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if preds.exists() and preds.stat().st_size > 0:
            break
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    text = stderr.decode()
    assert proc.returncode == 130, text
    assert text == "error: interrupted; rerun the same command to resume\n"  # no traceback
    assert _none_left(proc.pid), "a worker outlived the run"
    done = len(preds.read_text().splitlines())
    assert 0 < done < n  # stopped early, not after the last sample
    proc = _cli(args)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr.decode()
    assert f"{done} already done" in stdout.decode()
    ids = [json.loads(x)["id"] for x in preds.read_text().splitlines()]
    assert sorted(ids) == [f"rp-{i:05d}" for i in range(n)]


def _cannot_rebuild() -> None:
    raise RuntimeError("this model cannot be rebuilt here")


class RebuiltNowhere:
    """A model that pickles in the parent but cannot be unpickled in a worker."""

    def __call__(self, request):
        return "x"

    def __reduce__(self):
        return (_cannot_rebuild, ())


def test_a_worker_that_cannot_start_is_a_one_line_error(tmp_path, capfd):
    ds = write_dataset(tmp_path / "ds", n_rp=9, n_qa=0, n_reasonmap=0, image=(16, 12))
    with pytest.raises(RunWorkerError) as err:
        run_model(ds, RebuiltNowhere(), tmp_path / "run", jobs=2)
    assert str(err.value) == (
        "a run worker process could not start (RuntimeError: this model cannot be rebuilt here)"
    )
    assert "Traceback" not in capfd.readouterr().err  # no worker logged one
    assert multiprocessing.active_children() == []


def slow_model(request):
    """A model that takes half a second a sample (a local model called in process)."""
    time.sleep(0.5)
    return request.id


_SLOW_RUN = """
import sys
from maptab.api import run_model
from test_run_jobs import slow_model

if __name__ == "__main__":
    try:
        run_model(sys.argv[1], slow_model, sys.argv[2], jobs=int(sys.argv[3]), uses_images=False)
    except KeyboardInterrupt:
        sys.exit(130)
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_a_slow_in_process_model_after_the_samples_in_hand(tmp_path, jobs):
    """A model that takes seconds a sample is not held to a count of samples before Ctrl-C
    is seen (the loop returns to the event loop every 50 ms; worker chunks are sized to
    about 0.2 s by the model's pace)."""
    n = 200
    ds = write_dataset(tmp_path / "ds", n_rp=n, n_qa=0, n_reasonmap=0, image=None)
    out = tmp_path / "run"
    preds = out / "predictions.jsonl"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_RUN, str(ds), str(out), jobs],
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if preds.exists() and len(preds.read_bytes().splitlines()) >= 2:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)
    t0 = time.monotonic()
    _, stderr = proc.communicate(timeout=120)
    waited = time.monotonic() - t0
    assert proc.returncode == 130, stderr.decode()
    assert waited < 20, waited  # a generous bound: 64 samples, as before, would be 32 s
    assert "Traceback" not in stderr.decode()
    assert 2 <= len(preds.read_bytes().splitlines()) < 40
