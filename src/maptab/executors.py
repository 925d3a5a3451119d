"""Worker processes: how many a stage uses, and the one way to start and stop them.

Every stage that spreads work over processes (``maptab build``'s maps, ``maptab run
--jobs``, ``maptab score --jobs``) gets a :class:`concurrent.futures.Executor` from an
:class:`ExecutorFactory` (by default :func:`local_executor`: processes on this machine) and
ends it with :func:`stop_executor`, or both at once with :func:`worker_processes`
(:func:`ray_executor` runs the tasks on Ray instead: ``--executor ray``). Results
are collected in submission order, so they never depend on which worker finishes first.

The count follows one rule (:func:`workers_for`): one worker per CPU this process may use,
at most 8 (:func:`default_workers`), and only for :data:`POOL_MIN` items or more (below
that, starting the workers costs about as much as they save).

No worker outlives the process that started it, however that one ends (SIGKILL included):

* each worker watches a *lifeline* pipe only its parent writes to, and kills itself when
  the pipe closes (the parent's exit or death, or :meth:`LocalExecutor.terminate_workers`);
* on Linux each worker also asks the kernel to SIGKILL it when its parent ends
  (``prctl(PR_SET_PDEATHSIG)`` through :mod:`ctypes`), which works even while the worker
  runs native code that holds the GIL, where the lifeline's thread cannot run;
* ``spawn`` also starts multiprocessing's resource tracker, which removes the semaphores
  of the pool's queues if their owners die. It reads a pipe the parent and every worker
  hold open and exits, after that clean-up, once they are all gone; killing it with the
  parent instead would leak the semaphores (``fork``, which needs none, is unsafe in a
  process with threads).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager, suppress
from multiprocessing.connection import Connection
from typing import Any, Protocol

from maptab.errors import MaptabError

__all__ = [
    "POOL_MIN",
    "ExecutorFactory",
    "EXECUTORS",
    "LocalExecutor",
    "RayExecutor",
    "default_workers",
    "executor_factory",
    "local_executor",
    "ray_executor",
    "stop_executor",
    "worker_processes",
    "workers_for",
]

POOL_MIN = 20_000
"""Items (predictions to score, samples to answer) from which ``--jobs 0`` starts workers."""

Initializer = Callable[..., object]


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


class ExecutorFactory(Protocol):
    """Makes the executor of a stage: ``workers`` workers, each running
    ``initializer(*initargs)`` once before its first task (tasks rely on what it sets up).

    An executor that can end its running tasks at once offers ``terminate_workers()``
    (:func:`stop_executor` calls it when a stage fails or is interrupted)."""

    def __call__(
        self, workers: int, initializer: Initializer | None = None, initargs: tuple[Any, ...] = ()
    ) -> Executor: ...


class LocalExecutor(ProcessPoolExecutor):
    """A :class:`~concurrent.futures.ProcessPoolExecutor` whose workers end as soon as
    :meth:`terminate_workers` is called or this process ends, however it ends.

    Each worker watches a pipe that only this process can write to; when the pipe closes
    (:meth:`terminate_workers`, or the exit or death of this process) the worker kills
    itself, whatever task it is running."""

    def __init__(
        self, workers: int, initializer: Initializer | None = None, initargs: tuple[Any, ...] = ()
    ) -> None:
        context = multiprocessing.get_context("spawn")
        self._lifeline_reader, self._lifeline_writer = context.Pipe(duplex=False)
        super().__init__(
            workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(os.getpid(), self._lifeline_reader, initializer, initargs),
        )

    def terminate_workers(self) -> None:
        """End every worker now: queued tasks are cancelled, running ones are lost; returns
        once the workers have exited."""
        self._cut_lifeline()
        self.shutdown(wait=True, cancel_futures=True)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=wait, cancel_futures=cancel_futures)
        if wait:  # every worker has exited
            self._cut_lifeline()

    def _cut_lifeline(self) -> None:
        self._lifeline_writer.close()
        self._lifeline_reader.close()


def local_executor(
    workers: int, initializer: Initializer | None = None, initargs: tuple[Any, ...] = ()
) -> LocalExecutor:
    """``workers`` processes on this machine (:class:`LocalExecutor`), all started now with
    ``spawn`` (alike on every platform, never forking a threaded parent).

    Workers leave Ctrl-C to the parent, which stops them (a terminal sends it to the whole
    process group), so an interrupted command prints its one line, not a traceback per
    worker: they start with SIGINT blocked (a signal mask is inherited) and ignore it from
    their first step on.

    On Linux the workers also end when the thread that called this ends (the kernel's
    parent-death signal follows the starting thread): stop the executor before that thread
    returns, as :func:`worker_processes` does."""
    executor = LocalExecutor(workers, initializer, initargs)
    mask = getattr(signal, "pthread_sigmask", None)
    before = mask(signal.SIG_BLOCK, {signal.SIGINT}) if mask else None
    try:
        for _ in range(workers):  # a burst of tasks starts every worker now
            executor.submit(_started)
    except BaseException:
        executor.terminate_workers()
        raise
    finally:
        if mask:
            mask(signal.SIG_SETMASK, before)
    return executor


def stop_executor(executor: Executor, *, now: bool = False) -> None:
    """Stop ``executor``, returning when its workers are done.

    ``now=False`` (a stage that succeeded): the tasks submitted are finished first.
    ``now=True`` (an error, Ctrl-C, SIGTERM): queued tasks are cancelled and running ones
    ended where the executor offers ``terminate_workers()`` (:class:`LocalExecutor` does),
    else waited for."""
    if not now:
        executor.shutdown(wait=True)
        return
    terminate = getattr(executor, "terminate_workers", None)
    if callable(terminate):
        terminate()
    executor.shutdown(wait=True, cancel_futures=True)


@contextmanager
def worker_processes(
    workers: int,
    initializer: Initializer | None = None,
    initargs: tuple[Any, ...] = (),
    *,
    executors: ExecutorFactory = local_executor,
) -> Iterator[Executor]:
    """An executor of ``workers`` workers (made by ``executors``) for the ``with`` block,
    stopped after it: finishing its tasks when the block ends normally, at once when it
    raises (:func:`stop_executor`)."""
    executor = executors(workers, initializer, initargs)
    try:
        yield executor
    except BaseException:
        stop_executor(executor, now=True)
        raise
    stop_executor(executor)


class RayExecutor(Executor):
    """An :class:`~concurrent.futures.Executor` over Ray tasks (one CPU each): ``submit``
    runs the function as a Ray task and returns a :class:`~concurrent.futures.Future`.

    Joins the cluster of ``RAY_ADDRESS`` when that is set (``ray.init(address="auto")``),
    else starts a local Ray of ``workers`` CPUs, shut down with the executor. Each Ray worker
    process runs ``initializer(*initargs)`` before its first task. Functions and arguments
    travel by pickle, so the cluster's nodes need ``maptab`` installed, and files a task
    writes must land on a file system the caller reads (``maptab build --out``)."""

    def __init__(
        self, workers: int, initializer: Initializer | None = None, initargs: tuple[Any, ...] = ()
    ) -> None:
        try:
            import ray
        except ImportError:
            raise MaptabError("--executor ray needs Ray: pip install 'maptab[ray]'") from None
        self._ray = ray
        self._owned = not ray.is_initialized()
        if self._owned:
            import logging

            settings: dict[str, Any] = {
                "include_dashboard": False,
                "logging_level": logging.WARNING,
                "log_to_driver": False,
            }
            if os.environ.get("RAY_ADDRESS"):
                ray.init(address="auto", **settings)
            else:
                ray.init(num_cpus=workers, **settings)
        self._task = ray.remote(num_cpus=1, max_retries=0)(_ray_call)
        self._setup = (initializer, initargs)
        self._refs: dict[Any, None] = {}
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot submit to a stopped RayExecutor")
            ref = self._task.remote(self._setup, fn, args, kwargs)
            self._refs[ref] = None
        future = ref.future()
        future.add_done_callback(lambda _: self._refs.pop(ref, None))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            refs = list(self._refs)
        if cancel_futures:
            for ref in refs:
                with suppress(Exception):
                    self._ray.cancel(ref, force=True)
        elif wait and refs:
            self._ray.wait(refs, num_returns=len(refs))
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()
            self._owned = False

    def terminate_workers(self) -> None:
        """Cancel every task (running ones killed) and stop a Ray this executor started."""
        self.shutdown(wait=False, cancel_futures=True)


def ray_executor(
    workers: int, initializer: Initializer | None = None, initargs: tuple[Any, ...] = ()
) -> RayExecutor:
    """A :class:`RayExecutor`: ``workers`` Ray tasks at a time on a local Ray, or the
    cluster's CPUs where ``RAY_ADDRESS`` names one. Ray is imported only here."""
    return RayExecutor(workers, initializer, initargs)


EXECUTORS: dict[str, ExecutorFactory] = {"local": local_executor, "ray": ray_executor}
"""The executors ``--executor`` names: local processes (the default) and Ray tasks."""


def executor_factory(name: str) -> ExecutorFactory:
    """The :data:`EXECUTORS` entry ``name``; :class:`MaptabError` naming the choices."""
    try:
        return EXECUTORS[name.strip().lower()]
    except KeyError:
        raise MaptabError(
            f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}"
        ) from None


# --------------------------------------------------------------------------- worker side
_READY: set[int] = set()
"""The initializers this Ray worker process has run (keyed by name and arguments)."""


def _ray_call(
    setup: tuple[Initializer | None, tuple[Any, ...]],
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    initializer, initargs = setup
    key = hash((getattr(initializer, "__qualname__", None), repr(initargs)))
    if initializer is not None and key not in _READY:
        initializer(*initargs)
        _READY.add(key)
    return fn(*args, **kwargs)


def _started() -> None:
    return None


def _start_worker(
    parent: int,
    lifeline: Connection,
    initializer: Initializer | None,
    initargs: tuple[Any, ...],
) -> None:
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's (local_executor)
    threading.Thread(target=_end_with, args=(lifeline,), name="lifeline", daemon=True).start()
    if initializer is not None:
        initializer(*initargs)


def _end_with(lifeline: Connection) -> None:
    """Wait until the parent closes ``lifeline`` (or dies), then kill this process."""
    with suppress(EOFError, OSError):
        lifeline.recv_bytes()
    os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _die_with_parent(parent: int) -> None:
    """On Linux, have the kernel SIGKILL this process when its parent ``parent`` ends (then
    check it has not ended already); elsewhere, or where that fails, the lifeline alone."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        done = prctl(
            ctypes.c_int(_PR_SET_PDEATHSIG),
            ctypes.c_ulong(signal.SIGKILL),
            *[ctypes.c_ulong(0)] * 3,
        )
    except (ImportError, OSError, AttributeError):
        return
    if done == 0 and os.getppid() != parent:  # the parent died before the request
        os.kill(os.getpid(), signal.SIGKILL)
