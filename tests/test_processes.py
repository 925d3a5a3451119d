"""The one way maptab starts and stops worker processes (maptab.executors): workers end when
a stage fails or is interrupted, even mid-task, and when their parent dies."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path

import pytest

from maptab.executors import local_executor, stop_executor, worker_processes
from procs import session_processes

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="needs Linux /proc to see processes"
)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _gone(pids: list[int], seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def _pid_and_wait(started: str, seconds: float) -> int:
    """A task that says it started (creates ``started``), then runs ``seconds``."""
    Path(f"{started}.{os.getpid()}").touch()
    time.sleep(seconds)
    return os.getpid()


def _remember(into: str) -> None:
    Path(into, str(os.getpid())).touch()


def _pids(folder: Path, n: int) -> list[int]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pids = [int(p.name) for p in folder.iterdir()]
        if len(pids) >= n:
            return pids
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} workers started")


def test_results_and_a_normal_stop(tmp_path: Path) -> None:
    with worker_processes(2, _remember, (str(tmp_path),)) as pool:
        futures = [pool.submit(pow, i, 2) for i in range(20)]
        assert [f.result() for f in futures] == [i * i for i in range(20)]
    pids = _pids(tmp_path, 2)
    assert len(pids) == 2 and _gone(pids)
    assert multiprocessing.active_children() == []


def test_an_error_ends_workers_in_the_middle_of_a_task(tmp_path: Path) -> None:
    """Tasks that would run ten minutes do not hold up a stage that failed. The stage fails
    once both workers are in a task (each has started, whatever the machine's load)."""
    workers, started = tmp_path / "workers", tmp_path / "started"
    workers.mkdir()
    with (
        pytest.raises(RuntimeError, match="stage failed"),
        worker_processes(2, _remember, (str(workers),)) as pool,
    ):
        futures = [pool.submit(_pid_and_wait, str(started), 600) for _ in range(4)]
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob("started.*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        raise RuntimeError("stage failed")
    assert len(list(tmp_path.glob("started.*"))) == 2, "the workers never both started a task"
    assert all(f.cancelled() or f.exception() is not None for f in futures)
    assert _gone(_pids(workers, 2))
    assert multiprocessing.active_children() == []


def test_a_stop_now_of_an_executor_without_terminate_waits_for_its_tasks() -> None:
    started = threading.Event()

    def task() -> str:
        started.set()
        time.sleep(0.2)
        return "done"

    pool: Executor = ThreadPoolExecutor(1)
    running = pool.submit(task)
    queued = pool.submit(time.sleep, 600)
    assert started.wait(60)
    stop_executor(pool, now=True)
    assert running.result() == "done" and queued.cancelled()


_ORPHAN = """
import os, sys, time
from maptab.executors import local_executor

if __name__ == "__main__":
    pool = local_executor(2)
    pids = [pool.submit(os.getpid).result() for _ in range(8)]
    futures = [pool.submit(time.sleep, 600) for _ in range(2)]
    print(" ".join(map(str, sorted(set(pids)))), flush=True)
    time.sleep(600)
"""


def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    """A parent ended by SIGKILL runs no clean-up: its workers end on their own."""
    script = tmp_path / "orphan.py"
    script.write_text(_ORPHAN)
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, start_new_session=True
    )
    try:
        assert proc.stdout is not None
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert pids and all(_alive(p) for p in pids)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        assert _gone(pids), "a worker outlived its parent"
        assert _gone(list(session_processes(proc.pid))), "a process outlived the parent"
    finally:
        for pid in session_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_workers_ignore_ctrl_c() -> None:
    """Ctrl-C reaches the whole process group; the parent, not each worker, handles it."""
    pool = local_executor(1)
    try:
        pid = pool.submit(os.getpid).result()
        os.kill(pid, signal.SIGINT)
        assert pool.submit(pow, 3, 2).result() == 9  # the worker is still there
    finally:
        stop_executor(pool)
