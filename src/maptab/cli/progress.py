"""A rich progress bar usable as a plain iterator wrapper (long work shows progress)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from maptab.cli.app import err_console

T = TypeVar("T")


def track(items: Iterable[T], label: str, total: int | None = None) -> Iterator[T]:
    """Iterate ``items`` while showing ``label``, done/total, elapsed and remaining time."""
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err_console, transient=False) as bar:
        task = bar.add_task(label, total=total)
        for item in items:
            yield item
            bar.advance(task)
