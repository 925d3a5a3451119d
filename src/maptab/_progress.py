"""The progress hook: how long-running work reports progress without knowing who shows it.

Library code (building, describing, running, scoring, reporting) takes an optional
``progress`` argument that follows :class:`Progress`: it wraps an iterable, yields the same
items in the same order, and may show ``label`` with a done/total count while they are
consumed. The command line passes its rich bar (:func:`maptab.cli.progress.track`); library
callers pass nothing and get :func:`no_progress`. No module below the CLI imports a
progress bar.

Two optional keywords carry what a long run also wants to show; an implementation may
accept them (the CLI's bar does) or not (plain ``(items, label, total)`` functions still
work: :func:`start` passes the keywords only to a callable that takes them):

* ``done``: items finished before this call (a resumed run), shown as already complete;
  ``total`` then counts them too;
* ``status``: a function returning a short text shown beside the count, read again each
  time the display refreshes (``"3 errors · 41.2 req/s"``).

Work that does not loop over its items itself (a pool of workers finishing in any order)
counts them with a :class:`Ticker`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

__all__ = ["Progress", "Ticker", "no_progress", "or_silent", "start"]

T = TypeVar("T")


class Progress(Protocol):
    """Wraps ``items``: yields each of them unchanged, showing ``label`` and ``total``."""

    def __call__(self, items: Iterable[T], label: str, total: int | None = None) -> Iterable[T]:
        """Yield ``items`` unchanged while reporting progress."""
        ...


def no_progress(items: Iterable[T], label: str, total: int | None = None, **_: Any) -> Iterable[T]:
    """The silent :class:`Progress`: ``items`` themselves."""
    return items


def or_silent(progress: Progress | None) -> Progress:
    """``progress``, or :func:`no_progress` when it is ``None`` (or ``False``)."""
    return progress if progress else no_progress


def _takes(progress: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(progress).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: positional only
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in params)


def start(
    progress: Progress | None,
    items: Iterable[T],
    label: str,
    total: int | None = None,
    *,
    done: int = 0,
    status: Callable[[], str] | None = None,
) -> Iterable[T]:
    """``progress(items, label, total)``, with ``done`` and ``status`` added where the
    callable accepts them (module docstring)."""
    show = or_silent(progress)
    extra: dict[str, Any] = {}
    if done and _takes(show, "done"):
        extra["done"] = done
    if status is not None and _takes(show, "status"):
        extra["status"] = status
    return show(items, label, total, **extra)


class Ticker:
    """Counts finished work through a :class:`Progress` when the work does not iterate its
    items itself: :meth:`tick` once per finished item, :meth:`close` at the end.

    It feeds ``total - done`` placeholders through ``progress`` and takes the next one per
    tick, so any :class:`Progress` (which counts an item once the consumer moves past it)
    shows the finished count."""

    def __init__(
        self,
        progress: Progress | None,
        label: str,
        total: int,
        *,
        done: int = 0,
        status: Callable[[], str] | None = None,
    ) -> None:
        self._items: Iterator[int] = iter(
            start(progress, range(total - done), label, total, done=done, status=status)
        )
        next(self._items, None)  # the first item is out; none is finished yet

    def tick(self) -> None:
        """One more item finished."""
        next(self._items, None)

    def close(self) -> None:
        """Stop showing progress (also when fewer items finished than announced)."""
        close = getattr(self._items, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> Ticker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
