"""Scoring answers, in this process or spread over worker processes (SPEC 12).

The scorer (:mod:`maptab.score.scorer`) reads the predictions, decides which answers need
scoring (an answer repeated for one sample is scored once) and writes the rows in order; the
work of each distinct answer is a :data:`Job`, done by a :class:`RowScorer`:

* the sample's dataset row is read at its recorded location, decoded and checked by its
  task kind (an error names file and line), and kept until the job marked ``last`` for it;
* the answer is scored by the kind's ``score``; a broken dataset row or gold route is a
  :class:`ScoreError` naming the sample;
* with ``text``, the score row is also encoded as its ``scores.jsonl`` line
  (:func:`row_text`).

:class:`ScorePool` runs the same :class:`RowScorer` in workers, an executor from
:mod:`maptab.executors` (by default local processes: ``spawn``, Ctrl-C left to the parent).
Each window
of jobs is split by map (:func:`_map_key`), so every job of one record goes to one worker
(its ``last`` mark then drops the record there) and the workers' per-map caches do not
overlap; the rows come back in job order. Results do not depend on the number of workers:
every cache a worker fills only saves work (:mod:`maptab._cache`).
"""

from __future__ import annotations

import json
import math
import os
import zlib
from collections.abc import Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from maptab._limits import open_regular
from maptab.core.schema import Record
from maptab.errors import MaptabError
from maptab.executors import ExecutorFactory, local_executor, stop_executor
from maptab.io.dataset import Dataset, DatasetError, Maps, record_decoder
from maptab.score.rows import RowPacker
from maptab.tasks.base import get as get_kind

__all__ = [
    "Job",
    "RowScorer",
    "ScoreError",
    "ScorePool",
    "clean_json",
    "row_text",
]

#: ``(sample id, kind name, record id, variant, response, (byte offset, byte length, line
#: number) of the record's row, last job of this record)``
Job = tuple[str, str, str, str, str, tuple[int, int, int], bool]

# json.dumps(row, ensure_ascii=False, allow_nan=False), with the encoder built once; where
# CPython has its C encoder, that one is called directly, without the per-call set-up of
# JSONEncoder.encode (the same C call on the same arguments, so the same text: 16 -> 13 µs a
# row), and without the check for circular references (a score row holds none)
_ROW_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
_C_ENCODER = (
    None
    if c_make_encoder is None
    else c_make_encoder(
        None,  # no circular-reference markers
        _ROW_ENCODER.default,
        encode_basestring,  # what ensure_ascii=False selects
        None,  # indent
        _ROW_ENCODER.key_separator,
        _ROW_ENCODER.item_separator,
        False,  # sort_keys
        False,  # skipkeys
        False,  # allow_nan
    )
)
_RECORDS_KEPT = 1 << 16  # decoded records a scorer holds at most (cleared when full)


class ScoreError(MaptabError):
    """Inputs that cannot be scored (unknown sample id, unreadable run); names the file."""


def clean_json(obj: Any) -> Any:
    """Replace NaN/inf (empty groups) by ``None`` so the JSON is standard."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: clean_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [clean_json(v) for v in obj]
    return obj


def row_text(row: dict[str, Any]) -> str:
    """The ``scores.jsonl`` line of a score row (no newline); NaN and inf written ``null``."""
    try:  # the common case: nothing to clean
        if _C_ENCODER is not None:
            return "".join(_C_ENCODER(row, 0))
        return _ROW_ENCODER.encode(row)
    except ValueError:
        return json.dumps(clean_json(row), ensure_ascii=False)


class RowScorer:
    """Scores jobs against one dataset (module docstring); ``text`` adds each row's
    ``scores.jsonl`` line."""

    def __init__(self, dataset: Dataset, *, text: bool) -> None:
        self.dataset = dataset
        self.maps = Maps(dataset)
        self.text = text
        self._records: dict[tuple[str, str], Record] = {}
        self._files: dict[str, Any] = {}

    def score(self, jobs: Sequence[Job]) -> list[tuple[dict[str, Any], str | None]]:
        """``(score row, its line or None)`` of each job, in order."""
        out = []
        records = self._records
        for sample_id, kind_name, record_id, variant, response, at, last in jobs:
            kind = get_kind(kind_name)
            key = (kind_name, record_id)
            record = records.pop(key, None) if last else records.get(key)
            if record is None:
                record = self._decode(kind_name, record_id, at)
                if not last:
                    if len(records) >= _RECORDS_KEPT:
                        records.clear()
                    records[key] = record
            try:
                row = kind.scoring.score(self.maps, record, variant, response)
            except (DatasetError, ValueError) as exc:
                raise ScoreError(f"{self.dataset.root}: sample {sample_id!r}: {exc}") from None
            out.append((row, row_text(row) if self.text else None))
        return out

    def _decode(self, kind_name: str, record_id: str, at: tuple[int, int, int]) -> Record:
        kind = get_kind(kind_name)
        offset, size, n = at
        try:
            opened = self._files.get(kind_name)
            if opened is None:
                fh = open_regular(
                    self.dataset.file(kind.samples.file), binary=True, error=DatasetError
                )
                shown = str(self.dataset.root / kind.samples.file)  # error messages name it
                opened = self._files[kind_name] = (fh, record_decoder(kind), shown)
            fh, decode, shown = opened
            where = f"{shown}:{n}"
            # one positioned read of the row (a seek would drop the reader's buffer each time)
            record = decode(os.pread(fh.fileno(), size, offset), where)
        except DatasetError as exc:
            raise ScoreError(str(exc)) from None
        if record.id != record_id:  # the file changed since it was read
            raise ScoreError(f"{where}: id {record.id!r}, expected {record_id!r}")
        return kind.scoring.slim(record)

    def close(self) -> None:
        for fh, *_ in self._files.values():
            fh.close()
        self._files.clear()
        self._records.clear()


# --------------------------------------------------------------------------- worker side
_WORKER: RowScorer | None = None
_KEYS: dict[tuple[str, ...], tuple[str, ...]] = {}


def _start(dataset_dir: str, text: bool) -> None:
    global _WORKER
    # the parent checked the dataset against its manifest before starting the workers
    _WORKER = RowScorer(Dataset(dataset_dir, verify=False), text=text)


def _work(jobs: list[Job]) -> list[tuple[tuple[str, ...], tuple[Any, ...], str | None]]:
    """Score jobs in a worker: rows travel as (keys, values, line), the keys tuple shared by
    rows of one shape (pickled once per batch)."""
    assert _WORKER is not None
    out = []
    for row, text in _WORKER.score(jobs):
        keys = tuple(row)
        out.append((_KEYS.setdefault(keys, keys), tuple(row.values()), text))
    return out


# --------------------------------------------------------------------------- parent side
def _map_key(record_id: str) -> str:
    """What a job is sent to a worker by: the map part of a record id as the builder writes
    it (``metro-000/rp-0000-map_only`` → ``metro-000``), else the whole id. Every job of one
    record goes to one worker, and so, for builder ids, every job of one map: the per-map
    caches of the workers do not overlap."""
    return record_id.partition("/")[0]


class ScorePool:
    """``workers`` workers each running a :class:`RowScorer` on ``dataset_dir``, in an
    executor made by ``executors`` (default: local processes). As a context manager, it
    stops them on leaving (at once when the block raises)."""

    def __init__(
        self,
        dataset_dir: str | Path,
        workers: int,
        *,
        text: bool,
        executors: ExecutorFactory = local_executor,
    ) -> None:
        self.workers = workers
        self.text = text
        self._rows = RowPacker()
        self._pool = executors(workers, _start, (str(dataset_dir), text))

    def submit(self, jobs: Sequence[Job]) -> Any:
        """Start scoring ``jobs``; :meth:`results` waits for them."""
        parts: list[list[Job]] = [[] for _ in range(self.workers)]
        where: list[list[int]] = [[] for _ in range(self.workers)]
        for i, job in enumerate(jobs):
            w = zlib.crc32(_map_key(job[2]).encode("utf-8")) % self.workers
            parts[w].append(job)
            where[w].append(i)
        try:
            pending = [
                (self._pool.submit(_work, part), idx)
                for part, idx in zip(parts, where, strict=True)
                if part
            ]
        except BrokenProcessPool as exc:  # a worker died before these were sent
            raise ScoreError(f"a scoring worker process stopped ({exc})") from None
        return pending, len(jobs)

    def results(self, handle: Any) -> list[tuple[Mapping[str, Any], str | None]]:
        """The rows of a :meth:`submit`, in job order (a worker's error is raised here):
        dicts, or with ``text`` (the caller writes the lines and keeps the rows for the
        summary) read-only :class:`~maptab.score.rows.ScoreRow` records."""
        pending, n = handle
        out: list[Any] = [None] * n
        of_values = self._rows.of_values
        for future, idx in pending:
            try:
                rows = future.result()
            except BrokenProcessPool as exc:  # a worker died (killed, out of memory)
                raise ScoreError(f"a scoring worker process stopped ({exc})") from None
            for i, (keys, values, text) in zip(idx, rows, strict=True):
                if self.text:
                    out[i] = (of_values(keys, values), text)
                else:
                    out[i] = (dict(zip(keys, values, strict=True)), text)
        return out

    def close(self, *, now: bool = False) -> None:
        """Stop the workers: after the jobs submitted (``now=False``), or at once (``now=True``:
        an error or an interruption; :func:`~maptab.executors.stop_executor`)."""
        stop_executor(self._pool, now=now)

    def __enter__(self) -> ScorePool:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close(now=kind is not None)


class InlineScorer:
    """:class:`ScorePool`'s interface over a :class:`RowScorer` in this process."""

    def __init__(self, dataset: Dataset, *, text: bool) -> None:
        self.scorer = RowScorer(dataset, text=text)
        self.text = text

    def submit(self, jobs: Sequence[Job]) -> Any:
        return self.scorer.score(jobs)

    @staticmethod
    def results(handle: Any) -> list[tuple[dict[str, Any], str | None]]:
        return handle

    def close(self, *, now: bool = False) -> None:
        self.scorer.close()

    def __enter__(self) -> InlineScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
