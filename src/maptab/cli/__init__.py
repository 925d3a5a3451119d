"""``maptab`` CLI: one verb per job (solve, validate, build, render, run, score, report, stats, demo)."""

from __future__ import annotations

from maptab.cli import build, demo, export, render, report, run, score, solve, stats, validate  # noqa: F401  (registers verbs)
from maptab.cli.app import app


def main() -> None:
    """Entry point of the ``maptab`` console script."""
    app()
