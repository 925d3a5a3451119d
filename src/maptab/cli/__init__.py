"""``maptab`` CLI: one verb per job (solve, validate, build, merge, render, legibility, run, score, report, stats, demo)."""

from __future__ import annotations

from maptab.cli import (  # noqa: F401  (registers verbs)
    build,
    demo,
    export,
    legibility,
    merge,
    render,
    report,
    run,
    score,
    solve,
    stats,
    validate,
)
from maptab.cli.app import app


def main() -> None:
    """Entry point of the ``maptab`` console script."""
    app()
