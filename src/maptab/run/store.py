"""The run directory: append-only predictions with crash-safe resume (SPEC 16).

``RUN_DIR/predictions.jsonl`` gets one :class:`~maptab.core.schema.Prediction` row per finished
request, each written to the OS in one ``write`` as soon as it is appended, so a killed
process loses at most the line it was writing. Only the runner's in-process fast path
(baselines, Python functions: answers that cost nothing to redo) appends with
``defer=True``, which groups rows into one ``write`` per 256 rows or 0.2 s; a kill then
loses at most those rows, and a rerun answers them again. Opening the store:

* a last line without its newline, or one that is not valid JSON (the kill case), is cut
  off and the file truncated to the last complete row; a bad line anywhere else is an
  error naming the line (the file was edited or shared);
* rows are read with *last row wins* per id, so a retried error's new row supersedes the
  old one even before compaction;
* :meth:`PredictionStore.compact` rewrites the file with exactly one row per id (temp file,
  ``fsync``, ``os.replace``: atomic).

The store keeps per id only where its last row starts in the file and, for rows with an
error, the error text, so memory grows with the number of ids, not with the answers
(:meth:`PredictionStore.row` reads a row back). An exclusive ``flock`` on ``RUN_DIR/.lock``
keeps two runs from writing the same directory.

The rows belong to one dataset: :func:`dataset_digest` identifies it (the SHA-256 of its
``manifest.json``, which lists the SHA-256 of every other file) and :func:`check_dataset`
refuses to add rows answered on another one.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from pathlib import Path
from typing import IO, Any

from maptab._limits import MAX_JSON_BYTES, open_regular, read_bytes
from maptab.core.schema import Prediction, PredictionLines, RecordError, parse_prediction
from maptab.errors import MaptabError

PREDICTIONS = "predictions.jsonl"
MANIFEST = "manifest.json"


class StoreError(MaptabError):
    """A run directory that cannot be used (locked, corrupt); the message names the file."""


def dataset_digest(dataset_dir: str | Path) -> str:
    """``"sha256:<hex>"`` of the dataset's ``manifest.json`` bytes: the identity of the whole
    dataset, since the manifest lists the SHA-256 of every other file (SPEC 16)."""
    data = read_bytes(Path(dataset_dir) / MANIFEST, MAX_JSON_BYTES, error=StoreError)
    return "sha256:" + hashlib.sha256(data).hexdigest()


def check_dataset(
    run_dir: str | Path, dataset_dir: str | Path, recorded: object, digest: str
) -> None:
    """Refuse to resume ``run_dir``, whose rows were answered on the dataset of digest
    ``recorded``, on ``dataset_dir`` of digest ``digest`` (SPEC 16). No rows yet (no
    ``predictions.jsonl``, or an empty one) or no ``recorded`` digest (a run folder written
    before runs recorded one) resumes as is."""
    if not isinstance(recorded, str) or recorded == digest:
        return
    rows = Path(run_dir) / PREDICTIONS
    if not rows.is_file() or rows.stat().st_size == 0:
        return
    raise StoreError(
        f"{run_dir} was answered on another dataset than {dataset_dir} (manifest sha256 "
        f"{short_digest(recorded)} ≠ {short_digest(digest)}); use a new --out, or delete "
        f"{rows} to start over"
    )


def short_digest(digest: str) -> str:
    """The first 12 hex digits of a :func:`dataset_digest`, for messages."""
    return digest.partition(":")[2][:12] + "…"


class PredictionStore:
    """Predictions of one run directory (use as a context manager)."""

    BATCH_ROWS = 256
    BATCH_SECONDS = 0.2

    def __init__(self, run_dir: str | Path) -> None:
        self.dir = Path(run_dir)
        self.path = self.dir / PREDICTIONS
        self.lines = 0  # rows in the file, duplicates included
        self.repaired = 0  # bytes cut from a truncated tail on open
        self._offsets: dict[str, int] = {}  # id -> start of its last row (first-seen order)
        self._failed: dict[str, str] = {}  # id -> error of its last row, when it has one
        self._size = 0  # bytes in the file, deferred rows included
        self._pending: list[bytes] = []
        self._pending_since = 0.0
        self._fh: IO[bytes] | None = None
        self._lock: IO[str] | None = None
        self._line = PredictionLines().line  # the row's text (json.dumps's)

    def __enter__(self) -> PredictionStore:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._lock = (self.dir / ".lock").open("w")
        except OSError as exc:
            raise StoreError(
                f"{self.dir}: cannot be used as a run folder ({exc.strerror})"
            ) from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            self._lock = None
            raise StoreError(f"{self.dir}: another run is writing this directory") from None
        try:
            self._load()
            self._fh = self.path.open("ab", buffering=0)
        except BaseException:  # a refused file releases the folder at once
            self.close()
            raise

    def close(self) -> None:
        if self._fh:
            try:
                self.flush()
            finally:
                self._fh.close()
                self._fh = None
        if self._lock:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def _load(self) -> None:
        if not self.path.exists():
            return
        good = 0  # byte offset just past the last complete, valid row
        with open_regular(self.path, binary=True, error=StoreError) as fh:
            for n, raw in enumerate(fh, 1):
                if not raw.endswith(b"\n"):  # text after the final newline: an unfinished write
                    break
                if raw.strip():
                    try:
                        row = json.loads(raw)
                    except (ValueError, RecursionError) as exc:
                        if not fh.read(1):
                            break  # the final line is garbage: cut it like a partial write
                        why = "JSON nested too deeply" if isinstance(exc, RecursionError) else exc
                        raise StoreError(f"{self.path}:{n}: corrupt row ({why})") from None
                    try:
                        pred = parse_prediction(row)
                    except RecordError as exc:
                        raise StoreError(f"{self.path}:{n}: not a prediction row ({exc})") from None
                    self._index(pred.id, good, pred.error)
                    self.lines += 1
                good += len(raw)
            end = fh.seek(0, os.SEEK_END)
        if good < end:
            self.repaired = end - good
            with self.path.open("r+b") as fh:
                fh.truncate(good)
        self._size = good

    def _index(self, sid: str, offset: int, error: str | None) -> None:
        self._offsets[sid] = offset
        if error is None:
            self._failed.pop(sid, None)
        else:
            self._failed[sid] = error

    # ------------------------------------------------------------------ queries
    def __contains__(self, sid: object) -> bool:
        return sid in self._offsets

    def __len__(self) -> int:
        return len(self._offsets)

    def ids(self) -> list[str]:
        """Ids with a row, in the order they first appeared."""
        return list(self._offsets)

    def done_ids(self, *, include_errors: bool) -> set[str]:
        """Ids with a row; errored rows count as done unless ``include_errors`` is false."""
        if include_errors:
            return set(self._offsets)
        return {i for i in self._offsets if i not in self._failed}

    @property
    def failed(self) -> dict[str, str]:
        """``{id: error}`` of the ids whose last row has an error."""
        return self._failed

    @property
    def errors(self) -> int:
        return len(self._failed)

    def row(self, sid: str) -> dict[str, Any]:
        """The last row of ``sid``, read back from the file (``KeyError`` if none)."""
        offset = self._offsets[sid]
        self.flush()
        with self.path.open("rb") as fh:
            fh.seek(offset)
            return json.loads(fh.readline())

    # ------------------------------------------------------------------ writes
    def append(self, pred: Prediction, *, defer: bool = False) -> None:
        """Append one row. It reaches the OS now (it survives a kill of this process), or with
        ``defer`` at the latest after :attr:`BATCH_ROWS` rows or :attr:`BATCH_SECONDS`."""
        self.append_line(pred.id, pred.error, self._line(pred), defer=defer)

    def append_line(self, sid: str, error: str | None, line: str, *, defer: bool = False) -> None:
        """:meth:`append` of a row already encoded (``line``, no newline) for the id ``sid``
        with the error ``error`` (the row's own fields: a worker process encodes its rows)."""
        if self._fh is None:
            raise StoreError(f"{self.path}: store is not open")
        data = (line + "\n").encode()
        self._index(sid, self._size, error)
        self._size += len(data)
        self.lines += 1
        if not self._pending:
            self._pending_since = time.monotonic()
        self._pending.append(data)
        if (
            not defer
            or len(self._pending) >= self.BATCH_ROWS
            or time.monotonic() - self._pending_since >= self.BATCH_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        """Write the deferred rows to the OS, in one ``write``."""
        if self._pending and self._fh is not None:
            data = b"".join(self._pending)
            self._pending.clear()
            view = memoryview(data)
            while view:  # a raw file may write less than asked
                view = view[self._fh.write(view) :]

    def compact(self) -> bool:
        """Rewrite the file with one row per id (first-seen order) if it has duplicates."""
        if self.lines == len(self._offsets) or self._fh is None:
            return False
        self.flush()
        self._fh.close()
        tmp = self.path.with_name(PREDICTIONS + ".tmp")
        offsets: dict[str, int] = {}
        pos = 0
        with self.path.open("rb") as src, tmp.open("wb") as fh:
            for sid, offset in self._offsets.items():
                src.seek(offset)
                line = src.readline()
                fh.write(line)
                offsets[sid] = pos
                pos += len(line)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        self._offsets, self._size = offsets, pos
        self.lines = len(offsets)
        self._fh = self.path.open("ab", buffering=0)
        return True
