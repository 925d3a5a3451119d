"""The README's TRL and verl sections: the export commands run as
written from a clone (after the tour's mini build), and the files, module and function the
training snippets name exist. The trainers themselves need a model: `make test-rl` runs
TRL's GRPOTrainer (tests/test_rewards_rl.py)."""

from __future__ import annotations

import importlib
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maptab.cli import app
from maptab.generate.pipeline import build_benchmark
from maptab.render.images import DatasetImager

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"### {title}" in text, f"README has no '### {title}' section"
    return text.split(f"### {title}", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("readme")
    build_benchmark(root / "out" / "mini", preset="mini", seed=0, renderer=DatasetImager())
    return root


@pytest.mark.slow
@pytest.mark.parametrize("title", ["TRL", "verl"])
def test_rl_sections_run_as_written(
    clone: Path, title: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(clone)
    text = section(title)
    commands = re.findall(r"^(maptab export .*)$", text, re.MULTILINE)
    assert commands, f"no maptab export command in the README's {title} section"
    for command in commands:
        res = runner.invoke(app, shlex.split(command)[1:], catch_exceptions=False)
        assert res.exit_code == 0, (command, res.output)
    named = re.findall(r"(out/[\w./-]+\.parquet)", text)
    assert named, "the section names no exported file"
    for path in named:
        assert (clone / path).is_file(), path
    for module, name in re.findall(r"from (maptab\.[\w.]+) import (\w+)", text):
        assert callable(getattr(importlib.import_module(module), name)), (module, name)
    if title == "TRL":
        from maptab.rewards.trl import maptab_reward

        assert "reward_funcs=maptab_reward" in text and callable(maptab_reward)
    else:
        inner = re.search(r"\$\((python -c '[^']*')\)", text)
        assert inner, "no custom_reward_function.path command"
        cmd = inner.group(1).replace("python", shlex.quote(sys.executable), 1)
        out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=True)
        assert Path(out.stdout.strip()).name == "verl.py"
        assert "custom_reward_function.name=compute_score" in text
