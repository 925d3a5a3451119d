"""``maptab report`` as a user runs it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from maptab.cli import app
from test_report_fixture import make_runs


@pytest.mark.slow
def test_report_verb_writes_tables_figures_and_page(tmp_path):
    _, runs = make_runs(tmp_path)
    out = tmp_path / "out"
    args = ["report", *map(str, runs), "--out", str(out), "--overlays", "1", "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Leaderboard" in result.output and "oracle" in result.output
    for key in ("leaderboard", "rp_metromap", "rp_travelmap", "qa_metromap", "paired"):
        for suffix in (".md", ".csv", ".tex"):
            assert (out / "tables" / f"{key}{suffix}").is_file()
    assert sorted(p.name for p in (out / "plots").iterdir()) == [
        "capability_profile.png", "difficulty_heatmap.png", "error_types.png", "optimality_gap.png",
    ]  # fmt: skip
    assert (out / "index.html").is_file() and any((out / "images").iterdir())


def test_report_verb_one_line_error(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert "no scores.jsonl" in result.output and "Traceback" not in result.output
