"""A rich progress bar usable as a plain iterator wrapper (long work shows progress).

:func:`track` is the command line's :class:`maptab._progress.Progress`, with its optional
``done`` and ``status`` keywords."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from maptab.cli.app import err_console

T = TypeVar("T")

EVERY = 0.1
"""Seconds between updates of the bar: an update costs more than a baseline's answer."""


def track(
    items: Iterable[T],
    label: str,
    total: int | None = None,
    *,
    done: int = 0,
    status: Callable[[], str] | None = None,
) -> Iterator[T]:
    """Iterate ``items`` while showing ``label``, done/total, ``status()`` (when given),
    elapsed and remaining time. ``done`` items count as finished from the start."""
    columns = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    ]
    if status is not None:
        columns.insert(3, TextColumn("{task.fields[status]}"))
    with Progress(*columns, console=err_console, transient=False) as bar:
        task = bar.add_task(label, total=total, completed=done, status=status() if status else "")
        pending = 0
        due = time.perf_counter() + EVERY
        try:
            for item in items:
                yield item
                pending += 1
                now = time.perf_counter()
                if now >= due:
                    _show(bar, task, pending, status)
                    pending, due = 0, now + EVERY
        finally:
            _show(bar, task, pending, status)


def _show(bar: Progress, task: TaskID, step: int, status: Callable[[], str] | None) -> None:
    if status is not None:
        bar.update(task, advance=step, status=status())
    else:
        bar.update(task, advance=step)
