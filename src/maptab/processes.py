"""How many worker processes a CPU-bound stage uses by default (``--jobs 0``; issue 16).

``maptab score`` and ``maptab run`` (in-process models) can spread their work over worker
processes; both choose the count the same way: one per CPU this process may use, at most 8,
and only for :data:`POOL_MIN` items or more (below that, starting the workers costs about
as much as they save). :func:`worker_pool` starts the workers of both.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

__all__ = ["POOL_MIN", "default_workers", "worker_pool", "workers_for"]

POOL_MIN = 20_000
"""Items (predictions to score, samples to answer) from which ``--jobs 0`` starts workers."""


def default_workers() -> int:
    """Worker processes for a large job: the CPUs this process may use, at most 8."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(8, cpus))


def workers_for(jobs: int | None, items: int) -> int:
    """The processes to use for ``items`` items: ``jobs`` when given, else (``None``)
    :func:`default_workers` from :data:`POOL_MIN` items, 1 below."""
    if jobs is not None:
        return jobs
    return default_workers() if items >= POOL_MIN else 1


def _started() -> None:
    return None


def _initialize(initializer: Callable[..., None], initargs: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's (worker_pool)
    initializer(*initargs)


def worker_pool(
    workers: int, initializer: Callable[..., None], initargs: tuple[Any, ...]
) -> ProcessPoolExecutor:
    """``workers`` processes, started now with ``spawn`` (alike on every platform, never
    forking a threaded parent), each running ``initializer(*initargs)`` first.

    Workers leave Ctrl-C to the parent, which stops them (a terminal sends it to the whole
    process group), so an interrupted command prints its one line, not a traceback per
    worker: they are started with SIGINT blocked (a signal mask is inherited), and ignore it
    from their first step on. A Ctrl-C to the parent meanwhile waits and is delivered after."""
    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_initialize,
        initargs=(initializer, initargs),
    )
    mask = getattr(signal, "pthread_sigmask", None)
    before = mask(signal.SIG_BLOCK, {signal.SIGINT}) if mask else None
    try:
        for _ in range(workers):  # a burst of tasks starts every worker now
            pool.submit(_started)
    finally:
        if mask:
            mask(signal.SIG_SETMASK, before)
    return pool
