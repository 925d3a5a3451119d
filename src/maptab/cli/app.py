"""The ``maptab`` command-line application object; each verb lives in its own module."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
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


def _version(value: bool) -> None:
    if value:
        from maptab._version import __version__

        console.print(f"maptab {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Build, run, score and report multi-criteria route-planning benchmarks over maps."""


VerifyOption = Annotated[
    bool,
    typer.Option(
        "--verify/--no-verify",
        help="Check each dataset file read against the manifest's SHA-256 "
        "(--no-verify: read a dataset edited on purpose).",
    ),
]
"""The ``--verify/--no-verify`` flag of the verbs that read a dataset (docs/reference/limits.md)."""
BranchSplitsOption = Annotated[
    Path | None,
    typer.Option(
        help="With --from-reasonmap: JSON {'<map>/<line>': '<first branch station>'}; "
        "adds to or overrides the shipped and derived branch splits."
    ),
]
StationAliasesOption = Annotated[
    Path | None,
    typer.Option(
        help="With --from-reasonmap: folder of <map>.json station alias files "
        "(merge/split same-name stations); they replace the shipped ones."
    ),
]
"""The ReasonMap import options of ``maptab build`` and ``maptab stats`` (build-from-reasonmap.md)."""
err_console = Console(stderr=True)


def warn(message: str) -> None:
    """Print one warning line on stderr (markup in station names is printed as is)."""
    err_console.print(f"[yellow]warning:[/] {escape(message)}", highlight=False, soft_wrap=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a one-line error (no traceback) and exit with ``code``."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def interruptible() -> Iterator[None]:
    """Ctrl-C and SIGTERM raise ``KeyboardInterrupt`` in the command, also where it was
    started with SIGINT ignored (``maptab run … &`` from a script), so its worker processes
    are ended and its files left whole on the way out (:mod:`maptab.executors`); the
    previous handlers are put back after."""
    if threading.current_thread() is not threading.main_thread():  # handlers live there only
        yield
        return
    previous = {
        signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler),
        signal.SIGTERM: signal.signal(signal.SIGTERM, _terminated),
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            if handler is not None:  # None: a handler not set from Python, left as it is
                signal.signal(sig, handler)
