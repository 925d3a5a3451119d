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
from gated_model import write_plugin
from maptab.api import run_model
from maptab.executors import POOL_MIN, local_executor, workers_for
from maptab.generate.pipeline import build_benchmark
from maptab.io.dataset import DatasetError
from maptab.run import inprocess, make_provider, run
from maptab.run.inprocess import RunWorkerError
from maptab.run.provider import ProviderConfigError
from maptab.run.store import PredictionStore
from procs import none_left, stop_session

DIES_ON = "rp-00013"

# ``maptab`` started with SIGINT ignored, as a background job of a non-interactive shell
# starts every process: the command installs its own handler, so Ctrl-C still stops it
CLI = (
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "from maptab.cli import main; main()"
)


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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


def _gated_cli(args: list[str], site: Path) -> subprocess.Popen:
    """``maptab run`` with the ``gated`` model of ``tests/gated_model.py`` installed."""
    cmd = [sys.executable, "-c", CLI, "run", *args]
    path = os.pathsep.join([str(site), str(Path(__file__).parent)])
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": path},
    )


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_an_in_process_run_at_once_and_a_rerun_resumes(tmp_path, jobs):
    """Ctrl-C reaches the whole process group, as from a terminal, while an in-process model
    is answering: the run stops within a few samples (not after its last one), with one line
    and no worker left, keeps the rows answered, and a rerun resumes.

    The ``gated`` model answers the first ``hold`` samples at once and holds the rest until
    the test opens its gate, which it does only after sending the signal: the run cannot end
    first. ``hold`` is a worker chunk more than the store's batch of deferred rows, so a
    batch reaches the file before the signal whatever the chunk sizes and the clock say."""
    hold = PredictionStore.BATCH_ROWS + inprocess.CHUNK
    n = hold + 200  # a held sample takes gated_model.PACE once the gate is open
    ds = write_dataset(tmp_path / "ds", n_rp=n, n_qa=0, n_reasonmap=0, image=None)
    gate = tmp_path / "gate"
    gate.mkdir()
    (gate / "hold_from").write_text(str(hold))
    site = write_plugin(tmp_path / "site")
    out = tmp_path / "run"
    preds = out / "predictions.jsonl"
    args = [str(ds), "--model", f"gated:{gate}", "--out", str(out), "--no-progress"]
    args += ["--jobs", jobs]
    proc = _gated_cli(args, site)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if preds.exists() and preds.stat().st_size > 0:
                break
            time.sleep(0.01)
        assert proc.poll() is None, proc.communicate()[1].decode()
        os.killpg(proc.pid, signal.SIGINT)
        (gate / "open").touch()  # held samples go on: the run must stop on its own
        _, stderr = proc.communicate(timeout=300)
        text = stderr.decode()
        assert proc.returncode == 130, text
        assert text == "error: interrupted; rerun the same command to resume\n"  # no traceback
        assert none_left(proc.pid), "a worker outlived the run"
        done = len(preds.read_text().splitlines())
        assert 0 < done < n  # stopped early, not after the last sample
        proc = _gated_cli(args, site)
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr.decode()
        assert f"{done} already done" in stdout.decode()
    finally:
        stop_session(proc)
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


@pytest.mark.slow
def test_a_worker_that_cannot_start_is_a_one_line_error(tmp_path, capfd):
    ds = write_dataset(tmp_path / "ds", n_rp=9, n_qa=0, n_reasonmap=0, image=(16, 12))
    with pytest.raises(RunWorkerError) as err:
        run_model(ds, RebuiltNowhere(), tmp_path / "run", jobs=2)
    assert str(err.value) == (
        "a run worker process could not start (RuntimeError: this model cannot be rebuilt here)"
    )
    assert "Traceback" not in capfd.readouterr().err  # no worker logged one
    assert multiprocessing.active_children() == []


_SLOW_RUN = """
import signal
import sys
from maptab.api import run_model
from gated_model import SlowModel

if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal runs it (CLI)
    try:
        run_model(
            sys.argv[1],
            SlowModel(sys.argv[4], int(sys.argv[5])),
            sys.argv[2],
            jobs=int(sys.argv[3]),
            uses_images=False,
        )
    except KeyboardInterrupt:
        sys.exit(130)
"""


def _begun(calls: Path, index: int) -> bool:
    """Whether the model's log ``calls`` shows sample ``index`` or a later one begun."""
    if not calls.exists():
        return False
    begun = [x.split() for x in calls.read_text().splitlines()]
    return any(
        int(b[0].rsplit("-", 1)[1]) >= index for b in begun if b[1:] in (["before"], ["after"])
    )


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_a_slow_in_process_model_after_the_samples_in_hand(tmp_path, jobs):
    """A model that takes a while a sample is not held to a count of samples before Ctrl-C
    is seen: one process begins no further sample after the signal (the loop returns to the
    event loop between samples; one sample may be starting as the signal comes), and
    workers begin at most the chunks already sent, which the model's pace sizes to one
    sample each (``AHEAD`` per worker). The rows answered before the signal are kept.

    The model logs each sample it begins, and whether the signal had been sent; samples
    from ``hold`` on wait for the signal, so the run is still going when it comes. The test
    signals once sample ``hold`` has begun: in one process, rows ``0 .. hold - 1`` are then
    in; with workers, sample ``hold`` is sent only after chunk ``hold - AHEAD · workers``
    (at least row 1) is in, and its rows are written before the run next waits, which is
    where Ctrl-C stops it."""
    n, hold = 200, inprocess.AHEAD * int(jobs) + 1
    ds = write_dataset(tmp_path / "ds", n_rp=n, n_qa=0, n_reasonmap=0, image=None)
    out = tmp_path / "run"
    preds = out / "predictions.jsonl"
    log = tmp_path / "log"
    log.mkdir()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_RUN, str(ds), str(out), jobs, str(log), str(hold)],
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if _begun(log / "calls", hold):
                break
            time.sleep(0.01)
        assert proc.poll() is None, proc.communicate()[1].decode()
        os.killpg(proc.pid, signal.SIGINT)
        (log / "signalled").touch()
        _, stderr = proc.communicate(timeout=300)
    finally:
        stop_session(proc)
    assert proc.returncode == 130, stderr.decode()
    assert "Traceback" not in stderr.decode()
    calls = (log / "calls").read_text().splitlines()
    after = [c for c in calls if c.endswith(" after")]
    assert len(after) <= (1 if jobs == "1" else inprocess.AHEAD * int(jobs) + 1), calls
    rows = len(preds.read_bytes().splitlines())
    assert 2 <= rows <= len(calls) < n
