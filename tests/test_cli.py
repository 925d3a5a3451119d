"""The CLI shell: every verb is registered, errors are one plain line."""

from __future__ import annotations

from typer.testing import CliRunner

from maptab.cli import app

VERBS = ("build", "demo", "export", "render", "report", "run", "score", "solve", "validate")


def test_every_verb_has_help() -> None:
    runner = CliRunner()
    top = runner.invoke(app, ["--help"])
    assert top.exit_code == 0
    for verb in VERBS:
        assert verb in top.output
        result = runner.invoke(app, [verb, "--help"])
        assert result.exit_code == 0, (verb, result.output)
        assert "Usage" in result.output


def test_error_text_is_printed_verbatim_not_as_markup(tmp_path) -> None:
    """A message holding rich markup characters (here from a user's --format value) must be
    shown as typed, on one line, without a traceback."""
    result = CliRunner().invoke(
        app, ["export", str(tmp_path), "--out", str(tmp_path / "o"), "--format", "[/x][bold]"]
    )
    assert result.exit_code == 1
    assert "unknown format '[/x][bold]'" in result.output
    assert "Traceback" not in result.output
