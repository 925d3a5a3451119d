"""The run directory: append-only predictions with crash-safe resume (SPEC 16).

``RUN_DIR/predictions.jsonl`` gets one :class:`~maptab.schema.Prediction` row per finished
request, written in one ``write`` and flushed, so a killed process loses at most the line it
was writing. Opening the store:

* a last line without its newline, or one that is not valid JSON (the kill case), is cut
  off and the file truncated to the last complete row; a bad line anywhere else is an
  error naming the line (the file was edited or shared);
* rows are read with *last row wins* per id, so a retried error's new row supersedes the
  old one even before compaction;
* :meth:`PredictionStore.compact` rewrites the file with exactly one row per id (temp file,
  ``fsync``, ``os.replace``: atomic).

An exclusive ``flock`` on ``RUN_DIR/.lock`` keeps two runs from writing the same directory.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import fields
from pathlib import Path
from typing import IO, Any

from maptab.errors import MaptabError
from maptab.limits import open_regular
from maptab.schema import Prediction, check_fields

PREDICTIONS = "predictions.jsonl"
_FIELDS = fields(Prediction)


class StoreError(MaptabError):
    """A run directory that cannot be used (locked, corrupt); the message names the file."""


class PredictionStore:
    """Predictions of one run directory (use as a context manager)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.dir = Path(run_dir)
        self.path = self.dir / PREDICTIONS
        self.rows: dict[str, dict[str, Any]] = {}
        self.lines = 0  # rows in the file, duplicates included
        self.repaired = 0  # bytes cut from a truncated tail on open
        self._fh: IO[str] | None = None
        self._lock: IO[str] | None = None

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
        self._load()
        self._fh = self.path.open("a", encoding="utf-8", newline="\n")

    def close(self) -> None:
        if self._fh:
            self._fh.close()
            self._fh = None
        if self._lock:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def _load(self) -> None:
        if not self.path.exists():
            return
        with open_regular(self.path, binary=True, error=StoreError) as fh:
            data = fh.read()
        good = 0  # byte offset just past the last complete, valid row
        lines = data.split(b"\n")
        for n, raw in enumerate(lines, 1):
            last = n == len(lines)
            if last:  # text after the final newline: an unfinished write
                break
            if raw.strip():
                try:
                    row = json.loads(raw)
                except (ValueError, RecursionError) as exc:
                    if n == len(lines) - 1 and not lines[-1]:
                        break  # the final line is garbage: cut it like a partial write
                    why = "JSON nested too deeply" if isinstance(exc, RecursionError) else exc
                    raise StoreError(f"{self.path}:{n}: corrupt row ({why})") from None
                problem = check_fields(Prediction, row)
                if problem:
                    raise StoreError(f"{self.path}:{n}: not a prediction row ({problem})")
                self.rows[row["id"]] = row
                self.lines += 1
            good += len(raw) + 1
        if good < len(data):
            self.repaired = len(data) - good
            with self.path.open("r+b") as fh:
                fh.truncate(good)

    # ------------------------------------------------------------------ queries
    def done_ids(self, *, include_errors: bool) -> set[str]:
        """Ids with a row; errored rows count as done unless ``include_errors`` is false."""
        return {i for i, r in self.rows.items() if include_errors or r.get("error") is None}

    @property
    def errors(self) -> int:
        return sum(1 for r in self.rows.values() if r.get("error") is not None)

    # ------------------------------------------------------------------ writes
    def append(self, pred: Prediction) -> None:
        """Append one row and flush it to the OS (survives a kill of this process)."""
        if self._fh is None:
            raise StoreError(f"{self.path}: store is not open")
        row = {f.name: getattr(pred, f.name) for f in _FIELDS}  # shallow: asdict deep-copies
        self._fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._fh.flush()
        self.rows[pred.id] = row
        self.lines += 1

    def compact(self) -> bool:
        """Rewrite the file with one row per id (first-seen order) if it has duplicates."""
        if self.lines == len(self.rows) or self._fh is None:
            return False
        self._fh.close()
        tmp = self.path.with_name(PREDICTIONS + ".tmp")
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:
            for row in self.rows.values():
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        self.lines = len(self.rows)
        self._fh = self.path.open("a", encoding="utf-8", newline="\n")
        return True
