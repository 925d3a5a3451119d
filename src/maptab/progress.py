"""The progress hook: how long-running work reports progress without knowing who shows it.

Library code (building, describing, scoring) takes an optional ``progress`` argument that
follows :class:`Progress`: it wraps an iterable, yields the same items in the same order, and
may show ``label`` with a done/total count while they are consumed. The command line passes
its rich bar (:func:`maptab.cli.progress.track`); library callers pass nothing and get
:func:`no_progress`. No module below the CLI imports a progress bar.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

__all__ = ["Progress", "no_progress", "or_silent"]

T = TypeVar("T")


class Progress(Protocol):
    """Wraps ``items``: yields each of them unchanged, showing ``label`` and ``total``."""

    def __call__(self, items: Iterable[T], label: str, total: int | None = None) -> Iterable[T]:
        """Yield ``items`` unchanged while reporting progress."""
        ...


def no_progress(items: Iterable[T], label: str, total: int | None = None) -> Iterable[T]:
    """The silent :class:`Progress`: ``items`` themselves."""
    return items


def or_silent(progress: Progress | None) -> Progress:
    """``progress``, or :func:`no_progress` when it is ``None`` (or ``False``)."""
    return progress if progress else no_progress
