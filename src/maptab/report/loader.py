"""Reading scored run folders for reports (SPEC 13).

A run folder holds ``run.json`` (settings, ``dataset``, ``model``), ``predictions.jsonl``
(:class:`~maptab.core.schema.Prediction` rows) and, after ``maptab score``, ``scores.jsonl`` (one
row per answered sample) and ``summary.json``. :func:`load_runs` reads them into
:class:`Run` records; nothing here recomputes a metric.

Derived, not stored by the scorer: the *outcome* of a sample (:func:`outcome`), which the
browser filters on, and the run's display name (``run.json`` ``model``, made unique across
the compared runs by appending the folder name). A tool-use run (``run.json`` ``tools``)
also gives each row's tool calls, turns and stop reason (:attr:`Run.tool_use`).
"""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from maptab._limits import loads_json, open_regular, read_json
from maptab.core.schema import Prediction, RecordError, line_decoder, read_jsonl_lines
from maptab.errors import MaptabError
from maptab.io.dataset import Dataset, DatasetError, folder_hint
from maptab.score.rows import RowPacker, ScoreRow
from maptab.tasks.base import TaskError, TaskKind, all_kinds
from maptab.tasks.base import get as get_kind

__all__ = [
    "OUTCOMES",
    "PredictionFile",
    "QueryRecords",
    "ReportError",
    "Run",
    "ScoreRow",
    "ToolUse",
    "load_run",
    "load_runs",
    "outcome",
]

OUTCOMES = ("correct", "wrong", "format error", "API error")
R = TypeVar("R")


class ReportError(MaptabError):
    """A run folder that cannot be reported on; the message names the file."""


class ToolUse(msgspec.Struct):
    """What a tool-use run's prediction row adds (:mod:`maptab.run.tools`): tool calls run,
    model turns, calls per tool and why the conversation ended, with the row's token counts
    (summed over the turns)."""

    id: str
    tool_calls: int | None = None
    turns: int = 0
    tools_used: dict[str, int] = msgspec.field(default_factory=dict)
    stop: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Run:
    """One scored run: its settings, summary, score rows and raw predictions."""

    path: Path
    name: str
    info: dict[str, Any]
    summary: dict[str, Any]
    scores: list[Mapping[str, Any]]
    predictions: Mapping[str, Prediction] = field(default_factory=dict)
    verify: bool = True

    @cached_property
    def by_id(self) -> dict[str, Mapping[str, Any]]:
        return {r["id"]: r for r in self.scores}

    def rows(self, kind: str) -> list[Mapping[str, Any]]:
        """Score rows of one task kind, in file order."""
        return [r for r in self.scores if r.get("kind") == kind]

    @property
    def tools(self) -> dict[str, Any] | None:
        """``run.json``'s ``tools`` record (tools offered, budgets) of a tool-use run, else
        ``None``."""
        got = self.info.get("tools")
        return got if isinstance(got, dict) else None

    @cached_property
    def tool_use(self) -> dict[str, ToolUse]:
        """The :class:`ToolUse` of each prediction row that reports tool calls, by id (one
        pass over ``predictions.jsonl``); empty for a run without tools."""
        if self.tools is None or not isinstance(self.predictions, PredictionFile):
            return {}
        return {u.id: u for u in self.predictions.decoded(ToolUse) if u.tool_calls is not None}

    @cached_property
    def dataset_dir(self) -> Path | None:
        """The dataset folder recorded in ``run.json`` (relative paths tried against the run)."""
        recorded = self.info.get("dataset") or self.summary.get("dataset")
        if not isinstance(recorded, str):
            return None
        path = Path(recorded)
        if not path.is_absolute() and not path.exists() and (self.path / path).exists():
            path = self.path / path
        return path if (path / "manifest.json").is_file() else None

    @cached_property
    def dataset(self) -> Dataset | None:
        """The run's dataset, or ``None`` when it is not found (the browser then omits
        prompts and gold routes)."""
        if self.dataset_dir is None:
            return None
        try:
            return Dataset(self.dataset_dir, verify=self.verify)
        except DatasetError:
            return None


class QueryRecords:
    """The dataset records of the samples a report shows, by id, shared by its parts (the
    route pictures and the browser): each query file of a dataset is read in one pass for
    every id asked for or announced (:meth:`expect`) before it, whichever runs share the
    dataset (:meth:`Dataset.records_of` reads only the ``id`` of the other rows, but a
    paper-size ``rp.jsonl`` is 450 MB). An id asked for later that was neither costs one
    more pass, for all such ids of that call."""

    def __init__(self) -> None:
        self._expected: dict[str, set[str]] = defaultdict(set)
        self._read: dict[str, set[str]] = defaultdict(set)  # ids already looked for
        self._records: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)

    @staticmethod
    def _key(run: Run) -> tuple[Dataset, str] | None:
        ds = run.dataset
        return None if ds is None else (ds, str(ds.root.resolve()))

    def expect(self, run: Run, ids: Iterable[str]) -> None:
        """Announce ids of ``run`` that will be asked for (read with the first ask)."""
        got = self._key(run)
        if got is not None:
            self._expected[got[1]].update(ids)

    def of(
        self, run: Run, ids: Collection[str], kinds: Sequence[TaskKind] | None = None
    ) -> dict[str, Any]:
        """The records of ``ids`` in ``run``'s dataset (none without one), of the task
        ``kinds`` (default: all): within a kind a later row with the same id wins, and a
        later kind in registry order wins over an earlier one."""
        got = self._key(run)
        if got is None:
            return {}
        ds, key = got
        read = self._read[key]
        if not read.issuperset(ids):
            todo = (set(ids) | self._expected.pop(key, set())) - read
            for kind in (k for k in all_kinds() if ds.has(k.samples.file)):
                found = self._records[(key, kind.name)]
                for rec in ds.records_of(kind.name, todo):
                    found[rec.id] = rec
            read |= todo
        out: dict[str, Any] = {}
        for kind in all_kinds() if kinds is None else kinds:
            found = self._records.get((key, kind.name), {})
            out.update({i: found[i] for i in ids if i in found})
        return out


_PREDICTION = line_decoder(Prediction)


class PredictionFile(Mapping[str, Prediction]):
    """The predictions of a ``predictions.jsonl`` by id, read from the file when asked for
    (a report shows a few thousand answers of a run; holding all 200,000 of a paper-size run
    would take hundreds of megabytes). Opening it reads every row once, checks it (an error names
    file and line) and keeps only where each id's last row is (the last row wins, as in
    the run store)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # id -> line number of its last row; the line's byte offset is _starts[line - 1]
        # (an int per id and 8 bytes per line: a (offset, line) tuple per id would take 110)
        self._line: dict[str, int] = {}
        self._starts = array("q")
        offset = 0
        with open_regular(path, binary=True, error=ReportError) as fh:
            for n, raw in enumerate(fh, 1):
                self._starts.append(offset)
                offset += len(raw)
                if raw.strip():
                    pred = self._decode(raw, n)
                    if pred is not None:
                        self._line[pred.id] = n

    def _decode(self, raw: bytes, n: int) -> Prediction | None:
        try:
            return _PREDICTION(raw, f"{self.path}:{n}", ReportError)
        except RecordError as exc:
            raise ReportError(f"{self.path}:{n}: not a prediction row ({exc})") from None

    def __getitem__(self, sample_id: str) -> Prediction:
        n = self._line[sample_id]
        with open_regular(self.path, binary=True, error=ReportError) as fh:
            fh.seek(self._starts[n - 1])
            pred = self._decode(fh.readline(), n)
        if pred is None or pred.id != sample_id:
            raise ReportError(f"{self.path}:{n}: changed while the report was written")
        return pred

    def __iter__(self) -> Iterator[str]:
        return iter(self._line)

    def __len__(self) -> int:
        return len(self._line)

    def raw(self, sample_id: str) -> dict[str, Any]:
        """The JSON object of ``sample_id``'s row, every field of it (a tool-use row's
        ``transcript`` among them, which :class:`Prediction` leaves out)."""
        n = self._line[sample_id]
        with open_regular(self.path, binary=True, error=ReportError) as fh:
            fh.seek(self._starts[n - 1])
            line = fh.readline()
        row = loads_json(line, f"{self.path}:{n}", error=ReportError)
        if not isinstance(row, dict) or row.get("id") != sample_id:
            raise ReportError(f"{self.path}:{n}: changed while the report was written")
        return row

    def decoded(self, cls: type[R]) -> Iterator[R]:
        """Each id's row (the last) decoded as ``cls`` (a record type of
        :func:`~maptab.core.schema.line_decoder`: the fields it names, the others skipped),
        in one pass over the file; a row it refuses raises :class:`ReportError` naming the
        line."""
        decode = line_decoder(cls)
        last = set(self._line.values())
        with open_regular(self.path, binary=True, error=ReportError) as fh:
            for n, raw in enumerate(fh, 1):
                if n not in last:
                    continue
                try:
                    rec = decode(raw, f"{self.path}:{n}", ReportError)
                except RecordError as exc:
                    raise ReportError(f"{self.path}:{n}: {exc}") from None
                if rec is not None:
                    yield rec

    def items(self) -> Iterator[tuple[str, Prediction]]:  # type: ignore[override]
        """Every ``(id, prediction)``, read in one pass over the file."""
        with open_regular(self.path, binary=True, error=ReportError) as fh:
            for sample_id, n in self._line.items():
                fh.seek(self._starts[n - 1])
                pred = self._decode(fh.readline(), n)
                if pred is not None:
                    yield sample_id, pred


def outcome(row: Mapping[str, Any]) -> str:
    """``correct``, ``wrong`` or ``format error`` for a score row.

    A row is judged by its task kind's ``scoring.success`` field (route planning: the strict,
    verified check ``strict``, SPEC 13; QA and ReasonMap: ``correct``, for ReasonMap the
    lenient correctness of the paper; a row of an unknown kind: ``correct``). Unparseable
    answers are ``format error`` whatever else holds.
    """
    if not row.get("parsed", True):
        return "format error"
    try:
        field_ = get_kind(str(row.get("kind"))).scoring.success
    except TaskError:
        field_ = "correct"
    ok = row.get(field_)
    return "correct" if ok else "wrong"


def _read_json(path: Path) -> dict[str, Any]:
    data = read_json(path, error=ReportError)
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a JSON object")
    return data


def _read_rows(path: Path, required: tuple[str, ...]) -> list[ScoreRow]:
    """The rows of a JSONL file, each a JSON object with the ``required`` fields, as
    :class:`~maptab.score.rows.ScoreRow` records (decoding each line gives every row its
    own copy of every key and of values such as map ids; :class:`RowPacker` shares them).
    Every row reads as the object on its line."""
    rows = []
    pack = RowPacker().pack
    try:
        for n, row in read_jsonl_lines(path):
            if not isinstance(row, dict):
                raise ReportError(f"{path}:{n}: expected a JSON object")
            for key in required:
                if key not in row:
                    raise ReportError(f"{path}:{n}: field {key!r} is missing")
            rows.append(pack(row))
    except ReportError:
        raise
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReportError(str(exc)) from None
    return rows


def load_run(run_dir: str | Path, *, verify: bool = True) -> Run:
    """Read one scored run folder; raises :class:`ReportError` naming the file at fault.

    ``scores.jsonl`` is required (run ``maptab score RUN_DIR`` first); ``run.json``,
    ``summary.json`` and ``predictions.jsonl`` are optional. ``verify`` checks the files
    read from the run's dataset against its manifest (:class:`~maptab.io.dataset.Dataset`).
    """
    path = Path(run_dir)
    if not path.is_dir():
        raise ReportError(f"{path}: not a run folder")
    scores_path = path / "scores.jsonl"
    if not scores_path.is_file():
        if (path / "manifest.json").is_file():
            raise ReportError(f"{path}: no scores.jsonl{folder_hint(path)}")
        raise ReportError(f"{path}: no scores.jsonl (run `maptab score {path}` first)")
    scores = _read_rows(scores_path, ("id", "kind", "map_id"))
    info = _read_json(path / "run.json") if (path / "run.json").is_file() else {}
    summary = _read_json(path / "summary.json") if (path / "summary.json").is_file() else {}
    preds: Mapping[str, Prediction] = {}
    pred_path = path / "predictions.jsonl"
    if pred_path.is_file():
        preds = PredictionFile(pred_path)
    name = info.get("model") or summary.get("model") or path.name
    return Run(path, str(name), info, summary, scores, preds, verify)


def load_runs(
    run_dirs: list[str | Path] | tuple[str | Path, ...], *, verify: bool = True
) -> list[Run]:
    """:func:`load_run` for each folder, in order, with display names made unique."""
    if not run_dirs:
        raise ReportError("no run folders given")
    runs = [load_run(d, verify=verify) for d in run_dirs]
    counts = Counter(r.name for r in runs)
    for r in runs:
        if counts[r.name] > 1:
            r.name = f"{r.name} ({r.path.resolve().name})"
    names = Counter(r.name for r in runs)
    for i, r in enumerate(runs, 1):
        if names[r.name] > 1:  # same model and same folder name: fall back to position
            r.name = f"{r.name} #{i}"
    return runs
