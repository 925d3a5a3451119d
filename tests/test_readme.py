"""Every command of the README's tour runs as written, in order, from a clone's root.

Left out, by rule: the ``make`` targets (their own tests), the ``paper`` build (minutes of
CPU; the mini build exercises the same code) and the block that needs an API key or a
model server. Outputs go to a temporary folder that links the clone's ``src``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NEEDS_ENDPOINT = ("OPENAI_API_KEY", "--base-url", "runs/gpt4o")


def readme_commands() -> list[str]:
    """Shell commands of the README's ``bash`` blocks: continuation lines joined, comments
    and blank lines dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def runnable(command: str) -> bool:
    words = shlex.split(command, comments=True)
    if words[0] == "make" or any(w in command for w in NEEDS_ENDPOINT):
        return False
    return not ("--preset" in words and words[words.index("--preset") + 1] == "paper")


def test_readme_lists_the_tour() -> None:
    cmds = readme_commands()
    verbs = {shlex.split(c, comments=True)[0:2][-1] for c in cmds if c.startswith("maptab")}
    assert verbs >= {"build", "export", "validate", "solve", "render", "run", "score", "report"}
    assert not any("|" in c.split("#")[0] for c in cmds)  # no 'a|b' alternatives: one command each


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_readme_commands_run_as_written(tmp_path: Path) -> None:
    (tmp_path / "src").symlink_to(ROOT / "src")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran = []
    for command in filter(runnable, readme_commands()):
        res = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert res.returncode == 0, f"{command}\n{res.stdout}\n{res.stderr}"
        ran.append(command)
    assert len(ran) >= 13, ran
    solved = next(c for c in ran if c.startswith("maptab solve"))
    out = subprocess.run(
        ["bash", "-c", solved], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout)["routes"] == [
        "Airport-Harbour-Market-Central(transfer)-Stadium-Old Town_Quay"
    ]
    assert (tmp_path / "out" / "route.png").stat().st_size > 0
    assert (tmp_path / "out" / "report" / "index.html").is_file()
