"""Nothing outlives a command killed with SIGKILL (its workers, multiprocessing's resource
tracker), and two builds of one dataset folder never run at once (the build lock)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakeserver import write_dataset
from gated_model import write_plugin
from maptab.core.network import Network
from maptab.io.dataset import BuildLock, DatasetError, DatasetWriter, MapEntry
from maptab.run import make_provider, run
from procs import none_left, session_processes, stop_session

linux_proc = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="needs Linux /proc to see processes"
)
CLI = "from maptab.cli import main; main()"
WORKER = "multiprocessing.spawn"


def _workers(sid: int, n: int) -> list[int]:
    """The pids of ``n`` worker processes of session ``sid``, once they exist."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pids = [pid for pid, cmd in session_processes(sid).items() if WORKER in cmd]
        if len(pids) >= n:
            return pids
        time.sleep(0.01)
    raise AssertionError(f"fewer than {n} workers started: {session_processes(sid)}")


def _kill_once_workers_run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    """Start ``cmd`` in its own session, SIGKILL it once it has 2 workers, and check that
    no process of the session is left."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    try:
        _workers(proc.pid, 2)
        assert proc.poll() is None, proc.communicate()[1].decode()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        assert none_left(proc.pid), f"left running: {session_processes(proc.pid)}"
    finally:
        stop_session(proc)


@linux_proc
@pytest.mark.slow
def test_a_killed_run_with_workers_leaves_no_process(tmp_path: Path) -> None:
    """Workers held in a task (the ``gated`` model never answers until its gate opens)."""
    ds = write_dataset(tmp_path / "ds", n_rp=40, n_qa=0, n_reasonmap=0, image=None)
    gate = tmp_path / "gate"
    gate.mkdir()
    (gate / "hold_from").write_text("0")
    site = write_plugin(tmp_path / "site")
    path = os.pathsep.join([str(site), str(Path(__file__).parent)])
    cmd = [sys.executable, "-c", CLI, "run", str(ds), "--model", f"gated:{gate}"]
    cmd += ["--out", str(tmp_path / "run"), "--jobs", "2", "--no-progress"]
    _kill_once_workers_run(cmd, {**os.environ, "PYTHONPATH": path})


@linux_proc
@pytest.mark.slow
def test_a_killed_score_with_workers_leaves_no_process(tmp_path: Path) -> None:
    ds = write_dataset(tmp_path / "ds", n_rp=3000, n_qa=0, n_reasonmap=0, image=None)
    out = tmp_path / "run"
    run(ds, make_provider("oracle"), out)
    _kill_once_workers_run([sys.executable, "-c", CLI, "score", str(out), "--jobs", "2"])


_BUSY = """
import os, sys
from pathlib import Path
from maptab.executors import local_executor

def busy(flags):
    Path(flags, str(os.getpid())).touch()
    return sum(range(10**15))  # native code holding the GIL for hours

if __name__ == "__main__":
    pool = local_executor(2)
    futures = [pool.submit(busy, sys.argv[1]) for _ in range(2)]
    futures[0].result()
"""


def _cpu_ticks(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[11])  # utime


@linux_proc
@pytest.mark.slow
def test_workers_in_native_code_end_with_their_killed_parent(tmp_path: Path) -> None:
    """A worker whose task holds the GIL cannot run its lifeline thread; the kernel ends it."""
    script, flags = tmp_path / "busy.py", tmp_path / "flags"
    script.write_text(_BUSY)
    flags.mkdir()
    proc = subprocess.Popen(
        [sys.executable, str(script), str(flags)],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    try:
        deadline = time.monotonic() + 120
        while len(list(flags.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        pids = [int(p.name) for p in flags.iterdir()]
        assert len(pids) == 2, "the workers never both started their task"
        start = {pid: _cpu_ticks(pid) for pid in pids}
        while time.monotonic() < deadline and any(_cpu_ticks(p) < start[p] + 20 for p in pids):
            time.sleep(0.01)  # both well inside sum()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        assert none_left(proc.pid), f"left running: {session_processes(proc.pid)}"
    finally:
        stop_session(proc)


# --------------------------------------------------------------------------- build lock
def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _cli_build(out: Path, seed: int, preset: str = "mini") -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", CLI, "build", "--preset", preset, "--no-render"]
    cmd += ["--seed", str(seed), "--out", str(out)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_a_second_build_into_a_folder_being_built_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    assert _cli_build(out, 1).returncode == 0
    before = _files(out)
    with BuildLock(out):  # a build of ``out`` in progress
        done = _cli_build(out, 2)
        assert done.returncode != 0
        assert done.stderr == (
            f"error: {out} is being built by another maptab build (pid {os.getpid()}); "
            "wait for it or choose another --out\n"
        )
        assert _files(out) == before
        assert sorted(p.name for p in tmp_path.iterdir()) == [".ds.lock", "ds"]
        # refused at once, before any work (which would find the preset unknown)
        assert "being built by another maptab build" in _cli_build(out, 2, "nosuch").stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]
    assert _cli_build(out, 2).returncode == 0
    assert _files(out) != before


_FIRST_BUILD = """
import sys, time
from pathlib import Path
from maptab.core.network import Network
from maptab.io.dataset import DatasetWriter, MapEntry

out, gate = sys.argv[1], Path(sys.argv[2])
w = DatasetWriter(out, 7)
w.add_map(Network.from_lines({"L": ["A", "B", "C"]}, map_id="first"),
          MapEntry("first", "metromap", "easy", "test"))
(gate / "writing").touch()
while not (gate / "go").exists():
    time.sleep(0.01)
w.finish()
"""


@pytest.mark.slow
def test_a_build_in_progress_is_kept_when_a_second_one_is_refused(tmp_path: Path) -> None:
    out, gate, script = tmp_path / "out" / "ds", tmp_path / "gate", tmp_path / "first.py"
    gate.mkdir()
    script.write_text(_FIRST_BUILD)
    first = subprocess.Popen([sys.executable, str(script), str(out), str(gate)])
    try:
        deadline = time.monotonic() + 120
        while not (gate / "writing").exists() and time.monotonic() < deadline:
            assert first.poll() is None
            time.sleep(0.01)
        with pytest.raises(DatasetError, match=rf"pid {first.pid}\); wait for it"):
            DatasetWriter(out, 0)
        (gate / "go").touch()
        assert first.wait(timeout=120) == 0
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert sorted(p.name for p in out.parent.iterdir()) == ["ds"]
    assert (out / "maps" / "first" / "edges.csv").is_file()


_HOLDER = """
import sys
from maptab.io.dataset import BuildLock
lock = BuildLock(sys.argv[1])
print("held", flush=True)
sys.stdin.read()
"""


@pytest.mark.slow
def test_a_killed_build_never_blocks_the_next(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(DatasetError, match="is being built by another maptab build"):
            BuildLock(out)
    finally:
        holder.kill()
        holder.wait()
    writer = DatasetWriter(out, 0)  # the lock went with its process; its file is reused
    net = Network.from_lines({"L": ["A", "B"]}, map_id="m")
    writer.add_map(net, MapEntry("m", "metromap", "easy", "test"))
    writer.finish()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def test_a_lock_left_unreleased_in_this_process_is_taken_over(tmp_path: Path) -> None:
    """An abandoned build (a failure not cleaned up) does not block this process's next."""
    out = tmp_path / "ds"
    abandoned = BuildLock(out)
    with BuildLock(out):
        abandoned.release()  # no longer its lock: the file stays
        assert (tmp_path / ".ds.lock").read_text() == f"{os.getpid()}\n"
    assert list(tmp_path.iterdir()) == []
