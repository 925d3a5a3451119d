"""The ``maptab`` command-line application object; each verb lives in its own module."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console

app = typer.Typer(
    name="maptab",
    help="Build, run, score and report multi-criteria route-planning benchmarks over maps.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a one-line error (no traceback) and exit with ``code``."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _excepthook(exc_type, exc, tb):  # pragma: no cover - last-resort guard
    sys.__excepthook__(exc_type, exc, tb)
