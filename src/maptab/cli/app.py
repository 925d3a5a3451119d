"""The ``maptab`` command-line application object; each verb lives in its own module."""

from __future__ import annotations

import os
import sys
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

app = typer.Typer(
    name="maptab",
    help="Build, run, score and report multi-criteria route-planning benchmarks over maps.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()

VerifyOption = Annotated[
    bool,
    typer.Option(
        "--verify/--no-verify",
        help="Check each dataset file read against the manifest's SHA-256 "
        "(--no-verify: read a dataset edited on purpose).",
    ),
]
"""The ``--verify/--no-verify`` flag of the verbs that read a dataset (docs/limits.md)."""
err_console = Console(stderr=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a one-line error (no traceback) and exit with ``code``."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


_TEARDOWN = {"skip": False}


def skip_teardown() -> None:
    """Ask the console script (:func:`maptab.cli.main`) to end the process, once the
    command has succeeded, without the interpreter's teardown: after ``maptab score`` of
    100,000 answers on the paper dataset, freeing every object it built (match index,
    answers, score rows, per-map caches; the cyclic collector is off while scoring) took 4
    of 30 s. Called by a command whose files are all written and closed and whose worker
    processes have stopped; nothing else is left to do but exit. Commands run in process
    (typer's test runner, the Python API) are unaffected: only ``main`` acts on it."""
    _TEARDOWN["skip"] = True


def exit_skipping_teardown(code: int | str | None) -> None:
    """End the process at once with ``code`` (0) when the command asked for it
    (:func:`skip_teardown`) and succeeded; the standard streams are flushed first. Returns
    otherwise, and when a stream cannot be flushed (a closed pipe: the ordinary exit
    handles that as it always did)."""
    if _TEARDOWN["skip"] and code in (None, 0):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            return
        os._exit(0)
