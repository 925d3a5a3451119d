"""``maptab report`` as a user runs it."""

from __future__ import annotations

from types import SimpleNamespace

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


@pytest.mark.slow
def test_report_explains_itself_and_shows_progress_unless_told_not_to(tmp_path):
    _, runs = make_runs(tmp_path)
    base = ["report", *map(str, runs), "--overlays", "1"]
    quiet = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "q"), "--no-progress"])
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == ""
    loud = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "l")])
    assert loud.exit_code == 0, loud.output
    assert "writing the report to" in loud.stderr and "drawing routes" in loud.stderr
    # the leaderboard printout is followed by what its abbreviations mean
    assert "note: QA capabilities (paper Table 1): VP: Visual Perception" in loud.stdout
    qa = (tmp_path / "l" / "tables" / "qa_metromap.md").read_text(encoding="utf-8")
    assert "VP: Visual Perception" in qa and "Q1: number of lines" in qa
    page = (tmp_path / "l" / "index.html").read_text(encoding="utf-8")
    assert "Reading these numbers" in page


@pytest.mark.parametrize("flag", [[], ["--no-progress"]])
def test_demo_shows_progress_of_each_step_unless_told_not_to(tmp_path, monkeypatch, flag):
    """Every step of ``maptab demo`` gets the progress bar (the report's route pictures take
    a minute), or none under ``--no-progress``; the leaderboard is followed by its notes.
    The steps are stand-ins that use the progress they are given as the real ones do."""
    import maptab.generate.pipeline
    import maptab.report
    import maptab.run
    from maptab._progress import start
    from maptab.report.tables import Cell, Column, ReportTable

    given: dict[str, object] = {}

    def step(name, label):
        def fake(*args, progress=None, **kwargs):
            given[name] = progress
            list(start(progress, range(4), label, 4))
            if name == "build":
                return {"counts": {"maps": 1, "reasonmap": 2}}
            if name == "run":
                return SimpleNamespace(completed=4, errors=0)
            return SimpleNamespace(index=tmp_path / "demo" / "report" / "index.html")

        return fake

    monkeypatch.setattr(maptab.generate.pipeline, "build_benchmark", step("build", "maps"))
    monkeypatch.setattr(maptab.run, "run", step("run", "run"))
    monkeypatch.setattr(maptab.report, "write_report", step("report", "drawing routes"))
    monkeypatch.setattr("maptab.score.scorer.score_run", lambda *a, **k: {})
    board = ReportTable("leaderboard", "Leaderboard", [Column("Model"), Column("n", "ReasonMap")])
    board.rows.append([Cell("oracle"), Cell(48, kind="int")])
    monkeypatch.setattr(maptab.report, "leaderboard_rows", lambda dirs: board)
    res = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "demo"), *flag])
    assert res.exit_code == 0, res.output
    assert set(given) == {"build", "run", "report"}
    assert "n counts answers, not questions" in res.stdout
    if flag:
        assert all(p is None for p in given.values())
        assert res.stderr == ""
    else:
        assert all(p is not None for p in given.values())
        for label in ("maps", "run", "drawing routes"):
            assert label in res.stderr


def test_report_warns_when_a_run_is_given_twice(tmp_path):
    _, runs = make_runs(tmp_path)
    twice = [str(runs[0]), str(runs[1]), str(runs[0])]
    res = CliRunner().invoke(app, ["report", *twice, "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert f"warning: {runs[0]} is the same run as {runs[0]}; it is reported twice" in res.output
    once = CliRunner().invoke(
        app, ["report", *twice[:2], "--out", str(tmp_path / "p"), "--no-progress"]
    )
    assert "reported twice" not in once.output
