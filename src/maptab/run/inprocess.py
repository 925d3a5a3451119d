"""Answering with an in-process provider, here or in worker processes (SPEC 16).

A provider that answers in process (``complete_sync``: the baselines, a Python function)
needs no event loop: :func:`answer_sync` turns one sample into its
:class:`~maptab.core.schema.Prediction`. Such answers cost CPU, not waiting, so ``maptab run
--jobs N`` spreads them over ``N`` worker processes (:class:`AnswerPool`):

* the parent chooses the samples and keeps the store; each worker reads its samples' rows
  back itself (:meth:`~maptab.io.dataset.Dataset.load`, with the parent's ``verify``), builds
  the requests, answers them and encodes each row's ``predictions.jsonl`` line, so the
  parent only writes lines;
* the samples go out in chunks in dataset order and their lines come back in that order,
  at most :data:`AHEAD` chunks per worker ahead of the writer; the file is the one a single
  process writes, but for each row's ``latency_s``. A chunk is sized to take about
  :data:`CHUNK_SECONDS` by the last one's pace (from :data:`FIRST_CHUNK` samples, at most
  :data:`CHUNK`), so a slow model (seconds a sample) is not sent hundreds at once: progress
  moves and Ctrl-C waits for no more than about that, or one sample;
* the provider travels to the workers pickled, unused, before the first sample: one that
  cannot be pickled (a lambda as the model) is a one-line error naming it;
* a malformed dataset stops the run as in one process (the worker's error is raised here);
  a worker that dies, or cannot start (a model it cannot unpickle), stops it with one
  line; what was written stays, and a rerun resumes.

The workers are an executor from :mod:`maptab.executors` (by default
:func:`~maptab.executors.local_executor`: ``spawn``; Ctrl-C is the parent's, which stops
them).
"""

from __future__ import annotations

import asyncio
import pickle
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from maptab.core.schema import Prediction, PredictionLines
from maptab.errors import MaptabError
from maptab.executors import ExecutorFactory, local_executor, stop_executor
from maptab.io.dataset import DatasetError, SampleRef
from maptab.run.provider import Completion, Provider, ProviderConfigError, ProviderError
from maptab.run.requests import ChatRequest, ImageSpec, RequestBuilder, Sample
from maptab.run.store import StoreError

__all__ = [
    "AHEAD",
    "CHUNK",
    "CHUNK_SECONDS",
    "FIRST_CHUNK",
    "AnswerPool",
    "BuilderSettings",
    "RunWorkerError",
    "answer_sync",
    "base_row",
    "prediction_row",
]

CHUNK = 256
"""Samples a worker is sent at a time, at most."""
FIRST_CHUNK = 1
"""Samples in the first chunks, before the model's pace is known."""
CHUNK_SECONDS = 0.2
"""What a chunk should take a worker, by the pace of the last chunk answered."""
AHEAD = 4
"""Chunks per worker sent ahead of the one being written."""


class RunWorkerError(MaptabError):
    """A worker process of ``maptab run --jobs`` stopped or cannot be started."""


def base_row(sample: Sample, provider: Provider, settings: dict[str, Any]) -> dict[str, Any]:
    """The fields of a sample's prediction row that do not depend on the answer."""
    return {
        "id": sample.id,
        "kind": sample.kind,
        "provider": provider.name,
        "model": provider.model,
        "settings": settings,
    }


def prediction_row(
    base: dict[str, Any], t0: float, c: Completion | None, exc: Exception | None
) -> Prediction:
    """The row of one sample: its completion, or the failure that replaced it."""
    if exc is not None:
        err = str(exc) if isinstance(exc, ProviderError) else f"{type(exc).__name__}: {exc}"
        return Prediction(response="", latency_s=_since(t0), error=err, **base)
    assert c is not None
    return Prediction(
        response=c.text,
        reasoning=c.reasoning,
        latency_s=_since(t0),
        prompt_tokens=c.prompt_tokens,
        completion_tokens=c.completion_tokens,
        **base,
    )


def answer_sync(
    sample: Sample,
    builder: RequestBuilder,
    provider: Provider,
    complete: Callable[[ChatRequest], Completion],
    settings: dict[str, Any],
) -> Prediction:
    """One sample's row from a provider that answers in process (``complete``, its
    ``complete_sync``): a malformed dataset raises; any other failure is the row's error."""
    base = base_row(sample, provider, settings)
    request = builder.request(sample)  # a malformed dataset raises here and stops the run
    t0 = time.perf_counter()
    try:
        c = complete(request)
    except (DatasetError, StoreError):
        raise
    except Exception as exc:  # one sample's failure is recorded, not fatal (runner docstring)
        return prediction_row(base, t0, None, exc)
    return prediction_row(base, t0, c, None)


def _since(t0: float) -> float:
    return round(time.perf_counter() - t0, 4)


@dataclass(frozen=True, slots=True)
class BuilderSettings:
    """What a worker needs to build the parent's requests (:class:`RequestBuilder`'s
    arguments)."""

    dataset_dir: str
    table_format: Literal["csv", "json"]
    image: ImageSpec
    images: bool
    cache_dir: str | None
    verify: bool
    messages: bool

    def builder(self) -> RequestBuilder:
        return RequestBuilder(
            self.dataset_dir,
            table_format=self.table_format,
            image=self.image,
            images=self.images,
            cache_dir=Path(self.cache_dir) if self.cache_dir is not None else None,
            verify=self.verify,
            messages=self.messages,
        )


# --------------------------------------------------------------------------- worker side
@dataclass(slots=True)
class _Worker:
    builder: RequestBuilder
    provider: Any
    complete: Callable[[ChatRequest], Completion]
    settings: dict[str, Any]
    lines: PredictionLines


_WORKER: _Worker | None = None
_FAILED: Exception | None = None  # why this worker could not start


def _start(how: BuilderSettings, provider: bytes, settings: dict[str, Any]) -> None:
    global _WORKER, _FAILED
    try:
        p = pickle.loads(provider)
        _WORKER = _Worker(how.builder(), p, p.complete_sync, settings, PredictionLines())
    except Exception as exc:  # told by the first chunk: one line in the parent, no log
        _FAILED = exc


def _answer_chunk(refs: list[SampleRef]) -> tuple[list[tuple[str, str | None, str]], float]:
    """``(id, error, predictions.jsonl line)`` of each sample at ``refs``, in order, and the
    seconds they took."""
    t0 = time.perf_counter()
    w = _WORKER
    if w is None:
        if isinstance(_FAILED, MaptabError):
            raise _FAILED
        raise RunWorkerError(
            f"a run worker process could not start ({type(_FAILED).__name__}: {_FAILED})"
        )
    out = []
    for sample in w.builder.dataset.load(refs):
        pred = answer_sync(sample, w.builder, w.provider, w.complete, w.settings)
        out.append((pred.id, pred.error, w.lines.line(pred)))
    return out, time.perf_counter() - t0


# --------------------------------------------------------------------------- parent side
class AnswerPool:
    """``workers`` workers answering with copies of ``provider`` (module docstring), in an
    executor made by ``executors`` (default: local processes)."""

    def __init__(
        self,
        how: BuilderSettings,
        provider: Provider,
        settings: dict[str, Any],
        workers: int,
        *,
        executors: ExecutorFactory = local_executor,
    ) -> None:
        try:
            blob = pickle.dumps(provider)
        except Exception as exc:  # e.g. a lambda or a local function as the model
            raise ProviderConfigError(
                f"model {provider.name!r} cannot be sent to worker processes "
                f"({type(exc).__name__}: {exc}); run it with jobs=1"
            ) from None
        self.workers = workers
        self._pool = executors(workers, _start, (how, blob, settings))

    async def answer(self, refs: Iterable[SampleRef]) -> AsyncIterator[tuple[str, str | None, str]]:
        """``(id, error, line)`` of every sample at ``refs``, in their order; the event loop
        runs while a chunk is awaited (a cancelled run stops here at once)."""
        it = iter(refs)
        pending: deque[Future[tuple[list[tuple[str, str | None, str]], float]]] = deque()
        size = min(FIRST_CHUNK, CHUNK)

        def send() -> bool:
            chunk = [r for _, r in zip(range(size), it, strict=False)]
            if chunk:
                pending.append(self._pool.submit(_answer_chunk, chunk))
            return bool(chunk)

        try:
            while len(pending) < AHEAD * self.workers and send():
                pass
            while pending:
                rows, seconds = await asyncio.wrap_future(pending.popleft())
                pace = seconds / len(rows)  # seconds a sample
                size = max(1, min(CHUNK, int(CHUNK_SECONDS / pace) if pace > 0 else CHUNK))
                send()
                for row in rows:
                    yield row
        except BrokenProcessPool as exc:  # a worker was killed, ran out of memory, ...
            raise RunWorkerError(
                f"a run worker process stopped ({exc}); rerun the same command to resume"
            ) from None

    def close(self, *, now: bool = False) -> None:
        """Stop the workers: after the chunks sent (``now=False``), or at once (``now=True``:
        an error or an interruption; :func:`~maptab.executors.stop_executor`)."""
        stop_executor(self._pool, now=now)
