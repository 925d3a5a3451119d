"""``maptab build`` stopped by SIGTERM or SIGINT leaves no process behind (forkserver,
resource tracker, pool workers), as a user killing a long build expects."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="needs Linux /proc to list processes"
)


def _session(sid: int) -> dict[int, str]:
    """Processes of session ``sid`` (pid → command line)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == sid and fields[0] != "Z":  # session id; zombies are gone
            out[int(entry.name)] = cmd
    return out


@pytest.mark.timeout(400)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_interrupted_build_stops_every_process(tmp_path: Path, sig: signal.Signals) -> None:
    cmd = [sys.executable, "-c", "from maptab.cli import main; main()", "build"]
    args = ["--preset", "paper", "--no-render", "--out", str(tmp_path / "paper")]
    proc = subprocess.Popen(
        [*cmd, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 300
        workers: list[int] = []
        while time.monotonic() < deadline and proc.poll() is None:
            procs = _session(proc.pid)
            # pool workers are forked by the forkserver, so they share its command line
            workers = [p for p, c in procs.items() if "forkserver" in c]
            if len(workers) >= 3:  # the forkserver and at least two workers
                break
            time.sleep(0.2)
        assert proc.poll() is None and len(workers) >= 3, "the build never started its pool"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err.decode()
        assert "build interrupted" in err.decode() and "Traceback" not in err.decode()
        left: dict[int, str] = {}
        for _ in range(50):
            left = _session(proc.pid)
            if not left:
                break
            time.sleep(0.2)
        assert not left, f"processes left running: {left}"
    finally:
        for pid in _session(proc.pid):  # never leave a stray build on the test machine
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("told", [False, True])
def test_a_stopped_build_that_does_not_exit_is_ended(told: bool) -> None:
    """The grace timer a stop signal arms (``STOP_GRACE_S``) ends a build whose shutdown
    hangs, with status 130 and a one-line error; a process that exits sooner is not held."""
    script = (
        "import time\n"
        "from maptab.cli.build import _STOPPING, _end_after\n"
        f"_STOPPING.update(out='OUT', told={told})\n"
        "_end_after(0.5)\n"
        "time.sleep(120)\n"  # a shutdown that never ends
    )
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert proc.returncode == 130 and time.monotonic() - t0 < 30
    err = proc.stderr.decode()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    if told:
        assert err == "error: the build did not stop within 0.5 s; ended it\n"
    else:
        assert err == "error: build interrupted; OUT is incomplete (ended after 0.5 s)\n"
    quick = "from maptab.cli.build import _end_after\n_end_after(60)\n"
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-c", quick], capture_output=True, timeout=60)
    assert done.returncode == 0 and time.monotonic() - t0 < 30
