"""``maptab`` CLI: one verb per job (solve, validate, build, render, legibility, run, score, report, stats, demo)."""

from __future__ import annotations

from maptab.cli import (  # noqa: F401  (registers verbs)
    build,
    demo,
    export,
    legibility,
    render,
    report,
    run,
    score,
    solve,
    stats,
    validate,
)
from maptab.cli.app import app, exit_skipping_teardown


def main() -> None:
    """Entry point of the ``maptab`` console script (a command that asked for it ends
    without the interpreter's teardown: :func:`maptab.cli.app.skip_teardown`)."""
    try:
        app()
    except SystemExit as exc:
        exit_skipping_teardown(exc.code)
        raise
