"""The processes of a session, read from Linux ``/proc`` (tests that check what a command
leaves running start it with ``start_new_session=True``, so its session id is its pid)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path


def session_processes(sid: int) -> dict[int, str]:
    """Live processes of session ``sid``: pid → command line (zombies, dead but not yet
    reaped, are left out; nothing is found where ``/proc`` does not exist)."""
    out = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            out[int(entry.name)] = cmd
    return out


def none_left(sid: int) -> bool:
    """Whether session ``sid`` has no process left, waiting up to a minute for the last
    ones to end (a hang guard, not a timing check)."""
    deadline = time.monotonic() + 60
    while session_processes(sid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not session_processes(sid)


def stop_session(proc: subprocess.Popen) -> None:
    """End what is left of ``proc``'s session (a failed test leaves nothing behind)."""
    for pid in session_processes(proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
