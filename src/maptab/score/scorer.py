"""Scoring a run: per-sample scores and a summary with confidence intervals (SPEC 12-14).

Data flow: dataset + predictions → :func:`score_predictions` (pure: one score row per
answered sample, then :func:`summarise`) → :func:`score_run` writes
``RUN_DIR/scores.jsonl`` and ``RUN_DIR/summary.json``.

* Prediction rows with ``error`` set are API failures: they get no score row and are counted
  apart (``counts.api_errors``); an unparseable answer is a wrong answer counted as a format
  error. Dataset samples with no prediction are counted as ``counts.missing``; of a shard's
  folder (``maptab run --shard I/N``) only the shard's samples are expected, and
  ``summary.json`` records ``"shard": [I, N]`` (a partial run).
* Every headline rate carries a 95% percentile-bootstrap interval clustered by ``map_id``
  (:mod:`maptab.score.bootstrap`), written ``{"mean", "lo", "hi", "n"}``; DS is a total
  (``{"total", "lo", "hi", "n"}``).
* RP breakdowns are per scenario: overall, by category, map difficulty, query difficulty,
  map × query difficulty, repetition class (FR/PR/NR), reported-totals accuracy (T/P/C/R)
  and error types. QA: per scenario, by type and by capability (mean of the accuracies of
  the types attached to the capability, paper Table 3). ReasonMap: per mode, accuracy
  (lenient and strict) and map score, plain and difficulty-weighted.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import json
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import compress
from json.decoder import scanstring
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from maptab._limits import (
    MAX_JSON_BYTES,
    MAX_RESULTS_BYTES,
    loads_json,
    open_regular,
    read_bytes,
    read_json,
)
from maptab._progress import Progress, or_silent
from maptab.core.network import table_name
from maptab.core.schema import (
    Prediction,
    PredictionLines,
    RecordError,
    jsonl_text_lines,
    parse_prediction,
    read_jsonl,
    read_jsonl_lines,
)
from maptab.executors import workers_for
from maptab.io.dataset import Dataset, DatasetError, json_object, shard_of, string_fields
from maptab.score.bootstrap import paired_difference
from maptab.score.metrics import LEVEL, N_BOOT, summarise_metrics
from maptab.score.rows import RowPacker, ScoreRow, field_reader
from maptab.score.workers import (
    InlineScorer,
    Job,
    ScoreError,
    ScorePool,
    clean_json,
)
from maptab.tasks.base import TaskKind, all_kinds

__all__ = [
    "ScoreError",
    "compare_runs",
    "load_scores",
    "load_external_results",
    "load_predictions",
    "response_text",
    "score_predictions",
    "score_run",
    "summarise",
]

SCORES = "scores.jsonl"
SUMMARY = "summary.json"


# --------------------------------------------------------------------------- summary
def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The summary of score rows (module docstring): one block per task kind that has rows,
    in registry order, each the kind's ``summarise``; pure, deterministic."""
    out: dict[str, Any] = {"settings": {"ci_level": LEVEL, "n_boot": N_BOOT, "cluster": "map_id"}}
    kinds = field_reader(rows)("kind")
    for kind in all_kinds():
        kind_rows = list(compress(rows, [k == kind.name for k in kinds]))
        if kind_rows:
            summarise = kind.scoring.summarise
            out[kind.name] = (
                summarise(kind_rows)
                if summarise is not None
                else summarise_metrics(kind.metrics, kind_rows)
            )
    return out


def compare_runs(
    rows_a: Sequence[dict[str, Any]],
    rows_b: Sequence[dict[str, Any]],
    metric: str,
    keep: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """Paired difference ``a − b`` of ``metric`` (``ema``, ``strict``, ``correct``,
    ``map_score`` …) over the samples both runs scored, clustered by map.

    ``keep`` restricts the comparison to rows it accepts (in both runs). Returns
    ``{"diff", "lo", "hi", "n", "mean_a", "mean_b"}``; ``n`` is the number of shared samples
    with the metric (samples only one run answered are left out, so API failures of one run
    do not bias the comparison); the means are over those same samples (``None`` when
    ``n`` is 0).
    """

    def usable(r: dict[str, Any]) -> bool:
        return r.get(metric) is not None and (keep is None or keep(r))

    b_by_id = {r["id"]: r for r in rows_b if usable(r)}
    pairs = [(r, b_by_id[r["id"]]) for r in rows_a if usable(r) and r["id"] in b_by_id]
    a = [float(x[metric]) for x, _ in pairs]
    b = [float(y[metric]) for _, y in pairs]
    diff, lo, hi = paired_difference(
        a, b, clusters=[x["map_id"] for x, _ in pairs], n_boot=N_BOOT, level=LEVEL
    )
    n = len(pairs)
    return {
        "diff": diff,
        "lo": lo,
        "hi": hi,
        "n": n,
        "mean_a": sum(a) / n if n else None,
        "mean_b": sum(b) / n if n else None,
    }


def load_scores(run_dir: str | Path) -> list[dict[str, Any]]:
    """The rows of ``RUN_DIR/scores.jsonl`` (written by :func:`score_run`)."""
    path = Path(run_dir) / SCORES
    if not path.is_file():
        raise ScoreError(f"{run_dir}: no {SCORES} (run `maptab score` first)")
    try:
        return list(read_jsonl(path))
    except ValueError as exc:
        raise ScoreError(str(exc)) from None


# --------------------------------------------------------------------------- dataset rows
def _row_id(line: str, where: str) -> str | None:
    """The ``id`` of one row, ``None`` when it is not a string (fast path: the builder
    writes it first; a row written otherwise is decoded)."""
    if line.startswith('{"id": "'):
        try:
            return scanstring(line, 8)[0]
        except ValueError:
            pass
    sid = json_object(line, where).get("id")
    return sid if isinstance(sid, str) else None


def _scan_offsets(ds: Dataset, name: str) -> Iterator[tuple[int, int, int, str]]:
    """``(byte offset, byte length, line number, line)`` of each non-blank line of the
    query file ``name`` of ``ds`` (checked against the manifest like every dataset read)."""
    if not ds.has(name):
        return
    for n, at, size, line in jsonl_text_lines(
        ds.file(name), error=DatasetError, shown=ds.root / name
    ):
        yield at, size, n, line


# where each row of a query file is (id -> (byte offset, byte length, line number)), for
# the file version read last: matching a results file reads every row of the file, and
# scoring the matched predictions then needs no second pass
_LOCATIONS: dict[str, tuple[tuple[str, int, int, int], dict[str, tuple[int, int, int]]]] = {}


def _file_version(path: Path) -> tuple[str, int, int, int]:
    st = os.stat(path)
    return (str(path), st.st_size, st.st_mtime_ns, st.st_ino)


def _known_locations(ds: Dataset, name: str) -> dict[str, tuple[int, int, int]] | None:
    """The remembered row locations of the query file ``name`` of ``ds``, or ``None`` when
    this version of the file was not read whole."""
    kept = _LOCATIONS.get(name)
    if kept is None or not ds.has(name):
        return None
    return kept[1] if kept[0] == _file_version(ds.file(name)) else None


class _Queries:
    """The dataset rows a set of predictions needs, by kind and id (one pass over each
    query file to find them, then each decoded when it is asked for).

    The pass reads only each row's ``id`` and remembers where the wanted rows are; a row is
    decoded and checked against its schema (an error names file and line) only when an
    answer to it is scored (:class:`~maptab.score.workers.RowScorer`), so neither the rows
    nobody answered nor, at any time, all the answered ones are held. A later row with the
    same id replaces an earlier one.
    """

    def __init__(self, ds: Dataset, ids: set[str]) -> None:
        self.ds = ds
        self.kinds = all_kinds()
        # record id -> (byte offset, byte length, line number) of its row
        self.at: dict[str, dict[str, tuple[int, int, int]]] = {k.name: {} for k in self.kinds}
        self.counts = {k.name: 0 for k in self.kinds}  # distinct ids of each file
        for kind in self.kinds:
            wanted = {s[0] for s in map(kind.split_id, ids) if s is not None}
            found = self.at[kind.name]
            known = _known_locations(ds, kind.samples.file)
            if known is not None:  # the file was just read to match a results file
                for sid in wanted:
                    at = known.get(sid)
                    if at is not None:
                        found[sid] = at
                self.counts[kind.name] = len(known)
                continue
            every: set[str | None] = set()
            shown = ds.root / kind.samples.file
            for at, size, n, line in _scan_offsets(ds, kind.samples.file):
                sid = _row_id(line, f"{shown}:{n}" if not line.startswith('{"id": "') else "")
                every.add(sid)
                if sid in wanted:
                    found[sid] = (at, size, n)
            self.counts[kind.name] = len(every)

    def locate(self, sample_id: str) -> tuple[TaskKind, str, str, tuple[int, int, int]] | None:
        """``(kind, record id, variant, row location)`` of a prediction id, or ``None`` when
        no kind has it."""
        for kind in self.kinds:
            split = kind.split_id(sample_id)
            if split is None:
                continue
            at = self.at[kind.name].get(split[0])
            if at is not None:
                return kind, split[0], split[1], at
        return None

    def expected(self) -> int:
        """How many samples the whole dataset asks for (a row per variant)."""
        return sum(self.counts[k.name] * len(k.samples.variants) for k in self.kinds)


# --------------------------------------------------------------------------- drivers
def _open_dataset(dataset_dir: str | Path, verify: bool = True) -> Dataset:
    try:
        return Dataset(dataset_dir, verify=verify)
    except DatasetError as exc:
        raise ScoreError(str(exc)) from None


def score_predictions(
    dataset_dir: str | Path,
    predictions: Iterable[Prediction],
    *,
    progress: Progress | None = None,
    selection: dict[str, Any] | None = None,
    verify: bool = True,
    workers: int | None = 1,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score ``predictions`` against the dataset at ``dataset_dir``.

    Returns one score row per answered sample (dataset order of the prediction list) and the
    summary. ``selection`` (``split``, ``categories``, ``limit`` and ``shard`` as a run
    recorded them) says which samples the run was asked to answer, so ``counts.missing``
    counts only those; without it every sample of the dataset is expected. Raises
    :class:`ScoreError` for a prediction id that is not in the dataset; with ``verify`` every
    dataset file read is first checked against the manifest's hash
    (:class:`~maptab.io.dataset.Dataset`).

    ``workers``: processes that score the answers. ``1`` (the default): this process;
    ``N > 1``: ``N`` worker processes; ``None``: :func:`~maptab.executors.default_workers`
    for :data:`~maptab.executors.POOL_MIN` predictions or more, else this process
    (``maptab score --jobs 0``).
    The result does not depend on it. Workers are started with ``spawn``, which imports the
    calling script again: a script that asks for them must guard its entry point with
    ``if __name__ == "__main__":``.
    """
    rows: list[dict[str, Any]] = []
    summary = _score_stream(
        dataset_dir,
        predictions,
        lambda row, _: rows.append(row),
        progress=progress,
        selection=selection,
        verify=verify,
        workers=workers,
        text=False,
    )
    return rows, summary


# jobs handed to the scorer at once (two windows in flight): several maps' worth, so that
# a run in dataset order (map after map) keeps every worker busy
_WINDOW = 8192


def _score_stream(
    dataset_dir: str | Path,
    predictions: Iterable[Prediction],
    emit: Callable[[dict[str, Any], str | None], None],
    *,
    progress: Progress | None,
    selection: dict[str, Any] | None,
    verify: bool,
    ids: Sequence[str] | None = None,
    workers: int | None = None,
    text: bool,
) -> dict[str, Any]:
    """:func:`score_predictions`, handing each score row (and, with ``text``, its
    ``scores.jsonl`` line) to ``emit`` in prediction order as it is computed; returns the
    summary. Only the dataset rows the predictions name are decoded (:class:`_Queries`).
    ``ids``, when given, are the ids of ``predictions`` in order (so that ``predictions``
    can be a one-pass stream, read as it is scored)."""
    _recorded_shard(selection)  # a malformed record stops before anything is scored
    ds = _open_dataset(dataset_dir, verify)
    items: Iterable[Prediction]
    if ids is None:
        preds = list(predictions)
        ids = [p.id for p in preds]
        items = preds
    else:
        items = predictions
    try:
        queries = _Queries(ds, set(ids))
    except DatasetError as exc:
        raise ScoreError(str(exc)) from None
    workers = workers_for(workers, len(ids))
    scorer: ScorePool | InlineScorer = (
        ScorePool(ds.root, workers, text=text) if workers > 1 else InlineScorer(ds, text=text)
    )
    with scorer:  # an error or an interruption stops the workers at once
        return _score_items(ds, dataset_dir, queries, items, ids, emit, progress, selection, scorer)


def _score_items(
    ds: Dataset,
    dataset_dir: str | Path,
    queries: _Queries,
    items: Iterable[Prediction],
    ids: Sequence[str],
    emit: Callable[[dict[str, Any], str | None], None],
    progress: Progress | None,
    selection: dict[str, Any] | None,
    scorer: ScorePool | InlineScorer,
) -> dict[str, Any]:
    """The scoring loop: each distinct answer becomes a job (:mod:`maptab.score.workers`),
    handed to ``scorer`` a window at a time while the next window is read; rows are emitted
    in prediction order."""
    # the rows the summary is computed from: read-only rows sharing one field index (about
    # a third of a dict's size) when the caller only writes them out (scorer.text:
    # score_run), else the rows it receives
    kept: list[Mapping[str, Any]] = []
    keep = RowPacker().index if scorer.text else None
    api_errors: dict[str, int] = defaultdict(int)
    seen: set[str] = set()
    # with score_once, the same answer to the same sample is scored once: its row (and line)
    # is remembered while the id has predictions left (only a results file repeats ids)
    same: dict[tuple[str, str | None], tuple[Mapping[str, Any], str | None] | None] = {}
    left = Counter(ids)
    # predictions left per record (a record serves every variant of its sample ids): the
    # job of its last one lets the scorer drop the decoded record
    record_left: Counter[tuple[str, str]] = Counter()
    located = {}
    for sid, n in left.items():
        found = located[sid] = queries.locate(sid)
        if found is None:
            raise ScoreError(f"prediction {sid!r} is not a sample of dataset {dataset_dir}")
        record_left[(found[0].name, found[1])] += n

    def flush(handle: Any, plan: list[tuple[int, tuple[str, str | None], bool]]) -> None:
        results = scorer.results(handle)
        for j, key, remember in plan:
            if j >= 0:
                row, line = results[j]
                if remember:
                    same[key] = (row, line)
            else:
                hit = same[key]
                assert hit is not None  # its job came earlier in prediction order
                # a read-only row is shared; a dict is copied (callers may change theirs)
                row = hit[0] if isinstance(hit[0], ScoreRow) else dict(hit[0])
                line = hit[1]
            kept.append(row if keep is None or isinstance(row, ScoreRow) else keep(row))
            emit(row, line)

    jobs: list[Job] = []
    plan: list[tuple[int, tuple[str, str | None], bool]] = []
    pending: tuple[Any, list[tuple[int, tuple[str, str | None], bool]]] | None = None
    for p in or_silent(progress)(items, "scoring", len(ids)):
        found = located.get(p.id)
        if found is None:  # ids and items disagree (a file changed while read)
            raise ScoreError(f"prediction {p.id!r} is not a sample of dataset {dataset_dir}")
        kind, record_id, variant, at = found
        seen.add(p.id)
        left[p.id] -= 1
        record_key = (kind.name, record_id)
        record_left[record_key] -= 1
        if p.error:
            api_errors[kind.name] += 1
            continue
        key = (p.id, p.response)
        if kind.scoring.once and key in same:
            plan.append((-1, key, False))
        else:
            remember = kind.scoring.once and left[p.id] > 0
            if remember:
                same[key] = None  # filled in when its row comes back
            plan.append((len(jobs), key, remember))
            last = record_left[record_key] <= 0
            jobs.append((p.id, kind.name, record_id, variant, p.response or "", at, last))
            if len(jobs) >= _WINDOW:
                handle = scorer.submit(jobs)
                if pending is not None:
                    flush(*pending)
                pending, jobs, plan = (handle, plan), [], []
    handle = scorer.submit(jobs)
    if pending is not None:
        flush(*pending)
    flush(handle, plan)
    if selection and any(selection.get(k) for k in ("split", "categories", "limit")):
        try:
            expected = sum(
                1
                for _ in ds.samples(
                    split=selection.get("split"),
                    categories=selection.get("categories") or None,
                    limit=selection.get("limit"),
                )
            )
        except DatasetError as exc:
            raise ScoreError(str(exc)) from None
    else:
        expected = queries.expected()
    shard = _recorded_shard(selection)
    if shard is not None:  # the samples maptab run --shard answered of the selection
        expected = len(shard_of(range(expected), shard))
    summary = summarise(kept)
    read = field_reader(kept)
    kinds = read("kind")
    summary["counts"] = {
        "predictions": len(ids),
        # the kinds the dataset has rows of: another registered kind adds no zero count
        "scored": {k.name: kinds.count(k.name) for k in queries.kinds if queries.counts[k.name]},
        "api_errors": dict(api_errors),
        "format_errors": sum(not parsed for parsed in read("parsed")),
        "missing": expected - len(seen),
    }
    return summary


def _prediction_lines(path: Path) -> tuple[list[str], list[tuple[int, int]]]:
    """``(ids, (byte offset, line number) of each)`` of a ``predictions.jsonl``, one entry
    per id in order of first appearance, pointing at the id's *last* row (the last row wins,
    as :func:`load_predictions` and the run store read them). Only ids are read here (the
    fast path of :func:`_row_id`; a row written otherwise is decoded and checked)."""
    where_of: dict[str, tuple[int, int]] = {}
    for n, at, _, line in jsonl_text_lines(path, error=ScoreError):
        sid = None
        if line.startswith('{"id": "'):
            with contextlib.suppress(ValueError):
                sid = scanstring(line, 8)[0]
        if sid is None:
            sid = _prediction(line, path, n).id
        where_of[sid] = (at, n)
    return list(where_of), list(where_of.values())


def _prediction(line: str | bytes, path: Path, n: int) -> Prediction:
    d = loads_json(line, f"{path}:{n}", error=ScoreError)
    try:
        return parse_prediction(d)
    except RecordError as exc:
        raise ScoreError(f"{path}:{n}: not a prediction row ({exc})") from None


def _stream_predictions(path: Path, lines: Sequence[tuple[int, int]]) -> Iterator[Prediction]:
    """The predictions at ``lines`` (:func:`_prediction_lines`), each decoded and checked
    as it is read."""
    with open_regular(path, binary=True, error=ScoreError) as fh:
        for at, n in lines:
            fh.seek(at)
            yield _prediction(fh.readline(), path, n)


def load_predictions(run_dir: str | Path) -> list[Prediction]:
    """Predictions of a run directory, last row winning per id (as the run store reads them)."""
    path = Path(run_dir) / "predictions.jsonl"
    if not path.is_file():
        raise ScoreError(f"{run_dir}: no predictions.jsonl")
    rows: dict[str, Prediction] = {}
    try:
        for n, d in read_jsonl_lines(path):
            try:
                pred = parse_prediction(d)
            except RecordError as exc:
                raise ScoreError(f"{path}:{n}: not a prediction row ({exc})") from None
            rows[pred.id] = pred
    except RecordError as exc:
        raise ScoreError(str(exc)) from None
    return list(rows.values())


def _run_info(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "run.json"
    if not path.is_file():
        raise ScoreError(f"{run_dir}: no run.json (pass --dataset to score external results)")
    info = read_json(path, error=ScoreError)
    if not isinstance(info, dict) or not isinstance(info.get("dataset"), str):
        raise ScoreError(f"{path}: field 'dataset' (path of the dataset folder) is missing")
    return info


def _dataset_path(run_dir: Path, recorded: str) -> Path:
    path = Path(recorded)
    if not path.is_absolute() and not path.exists() and (run_dir / path).exists():
        return run_dir / path
    return path


def _check_dataset(run_dir: Path, dataset_dir: Path, info: dict[str, Any]) -> None:
    """Refuse a dataset other than the one the run answered (SPEC 16): the SHA-256 of its
    ``manifest.json`` must be ``run.json``'s ``dataset_digest`` (none recorded: not checked;
    no manifest: opening the dataset says why)."""
    recorded = info.get("dataset_digest")
    manifest = dataset_dir / "manifest.json"
    if not isinstance(recorded, str) or not manifest.is_file():
        return
    data = read_bytes(manifest, MAX_JSON_BYTES, error=ScoreError)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != recorded:
        was, now = (d.partition(":")[2][:12] for d in (recorded, digest))
        raise ScoreError(
            f"{run_dir} was answered on another dataset than {dataset_dir} (manifest sha256 "
            f"{was}… ≠ {now}…, rebuilt since the run?); rerun the model into a new --out, "
            "or pass --dataset with the dataset it answered"
        )


def _write_summary(out: Path, summary: dict[str, Any]) -> None:
    (out / SUMMARY).write_text(
        json.dumps(summary, ensure_ascii=False, indent=1, allow_nan=False) + "\n",
        encoding="utf-8",
        newline="\n",
    )


def score_run(
    run_dir: str | Path,
    *,
    dataset_dir: str | Path | None = None,
    predictions: list[Prediction] | None = None,
    progress: Progress | None = None,
    verify: bool = True,
    workers: int | None = 1,
) -> dict[str, Any]:
    """Score a run directory; writes ``scores.jsonl`` and ``summary.json``; returns the summary.

    The dataset is ``dataset_dir`` or the ``dataset`` recorded in ``RUN_DIR/run.json``;
    predictions are ``predictions`` or ``RUN_DIR/predictions.jsonl``. ``progress``
    (:class:`maptab._progress.Progress`) shows the scoring loop; by default nothing is shown.
    ``workers``: processes that score answers (:func:`score_predictions`). The folder of one
    shard (``maptab run --shard I/N``) is scored as that shard alone: only its samples are
    expected, and the summary names it (``"shard": [I, N]``).
    """
    run = Path(run_dir)
    info: dict[str, Any] = {}
    if dataset_dir is None:
        info = _run_info(run)
        dataset_dir = _dataset_path(run, info["dataset"])
    elif (run / "run.json").is_file():
        info = _run_info(run)
    _check_dataset(run, Path(dataset_dir), info)
    shard = _recorded_shard(info, str(run / "run.json"))
    if predictions is not None:
        _adopt(run, Path(dataset_dir), predictions, info)
    ids: list[str] | None = None
    preds: Iterable[Prediction]
    if predictions is not None:
        preds = predictions
    else:  # read twice, ids first, so that the answers are not all held at once
        path = run / "predictions.jsonl"
        if not path.is_file():
            raise ScoreError(f"{run_dir}: no predictions.jsonl")
        ids, lines = _prediction_lines(path)
        preds = _stream_predictions(path, lines)
    run.mkdir(parents=True, exist_ok=True)
    tmp = run / (SCORES + ".tmp")
    # each score row is written as it is computed (the file is renamed into place at the end)
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:
            write = fh.write

            def emit(_: dict[str, Any], line: str | None) -> None:
                write(f"{line}\n")

            summary = _score_stream(
                dataset_dir,
                preds,
                emit,
                progress=progress,
                selection=info,
                verify=verify,
                ids=ids,
                workers=workers,
                text=True,
            )
        os.replace(tmp, run / SCORES)
    finally:
        tmp.unlink(missing_ok=True)
    head: dict[str, Any] = {"model": info.get("model"), "dataset": str(dataset_dir)}
    if shard is not None:
        head["shard"] = list(shard)
    summary = clean_json({**head, **summary})
    _write_summary(run, summary)
    return summary


def _recorded_shard(
    info: Mapping[str, Any] | None, where: str = "run.json"
) -> tuple[int, int] | None:
    """The shard ``(I, N)`` a run record names (``maptab run --shard I/N``), or ``None``
    for a whole run (no ``shard``, or a merge's ``shards``); :class:`ScoreError` naming
    ``where`` for a value that is not ``[I, N]`` with ``0 <= I < N``."""
    value = (info or {}).get("shard")
    if value is None:
        return None
    if (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(type(v) is int for v in value)
        and 0 <= value[0] < value[1]
    ):
        return value[0], value[1]
    raise ScoreError(
        f"{where}: field 'shard' is {value!r}, not [I, N] with 0 <= I < N as maptab run "
        "--shard I/N writes it; restore it, or run the shard again into a new --out"
    )


# run.json fields that shards of one run share (settings too, but for the operational ones)
_SHARED = ("model", "provider", "model_name", "table_format", "image", "tools")
_SELECTION = ("split", "categories", "limit")
_OPERATIONAL = ("base_url", "api_key_env", "timeout", "max_retries", "rpm")


def merge_runs(run_dirs: Sequence[str | Path], out: str | Path, *, verify: bool = True) -> Path:
    """Put the shards of one run (``maptab run --shard I/N``) together as the run folder ``out``.

    ``out/predictions.jsonl`` gets each folder's rows (the last row per id, byte for byte) in
    the order of the dataset selection; ``out/run.json`` is the first folder's record with
    ``shards`` (``[{"run": folder, "shard": [i, n] or null}]``) for ``shard`` and no
    ``summary``. Raises :class:`ScoreError` (one line) for folders of another dataset
    (``dataset_digest``) or other settings, a sample answered in two folders, samples of the
    selection answered in none, and an ``out`` that is one of the folders or another run's.
    """
    runs = [Path(r) for r in run_dirs]
    target = Path(out)
    if len(runs) < 2:
        raise ScoreError("merging needs two run folders or more")
    infos = [_run_info(r) for r in runs]
    first = infos[0]
    for run, info in zip(runs[1:], infos[1:], strict=True):
        if info.get("dataset_digest") != first.get("dataset_digest"):
            raise ScoreError(
                f"{run} answered another dataset than {runs[0]} (dataset_digest differs); "
                "merge the shards of one dataset"
            )
        differ = _differs(first, info)
        if differ:
            key, was, now = differ
            raise ScoreError(
                f"{run} was run with {key} = {now!r}, {runs[0]} with {was!r}; "
                "merge the shards of one run"
            )
    if target.resolve() in {r.resolve() for r in runs}:
        raise ScoreError(f"--out {target} is one of the folders merged; choose a new folder")
    if (target / "run.json").is_file():
        old = read_json(target / "run.json", error=ScoreError)
        if not isinstance(old, dict) or "shards" not in old:
            raise ScoreError(f"--out {target} holds a run that is not a merge; choose a new folder")
    dataset_dir = _dataset_path(runs[0], first["dataset"])
    _check_dataset(runs[0], dataset_dir, first)
    owner: dict[str, tuple[int, int]] = {}  # id -> (folder, byte offset of its last row)
    overlaps: list[tuple[str, int, int]] = []
    for k, run in enumerate(runs):
        path = run / "predictions.jsonl"
        if not path.is_file():
            raise ScoreError(f"{run}: no predictions.jsonl")
        ids, lines = _prediction_lines(path)
        for sid, (at, _) in zip(ids, lines, strict=True):
            if sid in owner:
                overlaps.append((sid, owner[sid][0], k))
            else:
                owner[sid] = (k, at)
    if overlaps:
        sid, a, b = overlaps[0]
        raise ScoreError(
            f"{len(overlaps)} samples answered in two run folders (first: {sid} in {runs[a]} "
            f"and {runs[b]}); merge each shard once"
        )
    ds = _open_dataset(dataset_dir, verify)
    try:
        sel = {k: first.get(k) or None for k in _SELECTION}
        order = [r.id for r in ds.select(**sel)]
    except DatasetError as exc:
        raise ScoreError(str(exc)) from None
    gaps = [sid for sid in order if sid not in owner]
    if gaps:
        raise ScoreError(
            f"{len(gaps)} samples of the selection answered in none of the run folders "
            f"(first: {gaps[0]}); run the missing shards, or finish them"
        )
    known = set(order)
    order += [sid for sid in owner if sid not in known]  # outside the selection: scoring says
    target.mkdir(parents=True, exist_ok=True)
    tmp = target / "predictions.jsonl.tmp"
    sources = [(r / "predictions.jsonl").open("rb") for r in runs]
    try:
        with tmp.open("wb") as fh:
            for sid in order:
                k, at = owner[sid]
                sources[k].seek(at)
                fh.write(sources[k].readline())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target / "predictions.jsonl")
    finally:
        for src in sources:
            src.close()
        tmp.unlink(missing_ok=True)
    record = {k: v for k, v in first.items() if k not in ("shard", "summary", "finished_at")}
    record["shards"] = [
        {"run": str(r.resolve()), "shard": i.get("shard")} for r, i in zip(runs, infos, strict=True)
    ]
    text = json.dumps(record, ensure_ascii=False, indent=2) + "\n"
    (target / "run.json.tmp").write_text(text, encoding="utf-8", newline="\n")
    os.replace(target / "run.json.tmp", target / "run.json")
    return target


def _differs(a: dict[str, Any], b: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """The first field (``settings.NAME`` for a setting) whose value differs between two run
    records, but for the operational settings and the shard; None when none does."""
    for key in (*_SHARED, *_SELECTION):
        if a.get(key) != b.get(key):
            return key, a.get(key), b.get(key)
    sa, sb = (
        {k: v for k, v in (r.get("settings") or {}).items() if k not in _OPERATIONAL}
        for r in (a, b)
    )
    for key in sorted(sa.keys() | sb.keys()):
        if sa.get(key) != sb.get(key):
            return f"settings.{key}", sa.get(key), sb.get(key)
    return None


def _adopt(run: Path, dataset_dir: Path, preds: list[Prediction], info: dict[str, Any]) -> None:
    """Make ``run`` a run folder for predictions scored from elsewhere (reports read it):
    writes ``predictions.jsonl`` and ``run.json`` where they are missing."""
    run.mkdir(parents=True, exist_ok=True)
    if not (run / "predictions.jsonl").exists():
        # as write_jsonl([p.to_dict() for p in preds]) writes them, without the list of dicts
        line = PredictionLines().line
        with (run / "predictions.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
            for p in preds:
                fh.write(line(p) + "\n")
    if not info:
        models = sorted({p.model for p in preds if p.model})
        info.update(
            dataset=str(dataset_dir.resolve()), model=models[0] if len(models) == 1 else "external"
        )
        (run / "run.json").write_text(
            json.dumps(info, ensure_ascii=False, indent=1) + "\n", encoding="utf-8", newline="\n"
        )


# --------------------------------------------------------------------------- external results
def load_external_results(
    path: str | Path, dataset_dir: str | Path, *, verify: bool = True
) -> list[Prediction]:
    """Predictions from another tool's results JSON, mapped to the dataset's sample ids.

    The file is a JSON list (or ``{"results": [...]}``) of MapTab-style samples, each with a
    ``response`` (a string, or an object holding it: :func:`response_text`) and either an
    ``id`` of the dataset, or ``station_1``/``station_2`` (plus optionally ``city``,
    ``category``, ``question``) identifying one route-planning query, or a ``question``
    identical to one QA query's. A sample matching no query or several, or whose
    ``response`` holds no text, is an error naming its position.
    """
    return _external_predictions(Path(path), _open_dataset(dataset_dir, verify))


def _external_predictions(p: Path, ds: Dataset) -> list[Prediction]:
    try:
        index = _MatchIndex(ds)
    except DatasetError as exc:
        raise ScoreError(str(exc)) from None
    out: list[Prediction] = []
    memo: dict[tuple[Any, ...], str] = {}
    kinds = index.kinds
    for n, sample in enumerate(_results_samples(p)):
        if not isinstance(sample, _ResultSample):
            raise ScoreError(f"{p}: sample {n}: not a JSON object")
        response = response_text(sample.response)
        if response is None:
            raise ScoreError(f"{p}: sample {n}: {_response_problem(sample.response)}")
        try:
            sid = _match_sample(sample, index, (p, n), memo)
        except DatasetError as exc:
            raise ScoreError(str(exc)) from None
        model = sample.model
        model = "" if model is UNSET else str(model)
        out.append(Prediction(id=sid, kind=kinds[sid], response=response, model=model))
    return out


UNSET = msgspec.UNSET  # a field the sample does not have

# where an object ``response`` holds the answer text, in order of precedence
_RESPONSE_PATHS: tuple[tuple[str | int, ...], ...] = (
    ("content",),
    ("text",),
    ("output_text",),
    ("choices", 0, "message", "content"),
    ("choices", 0, "text"),
)
_RESPONSE_FORMS = "content, text, output_text, choices[0].message.content or choices[0].text"


def response_text(response: Any) -> str | None:
    """The answer text of a results sample's ``response`` field (SPEC 13; the forms of
    docs/reference/file-formats.md): a string as it is; an object (as MapTab's vLLM path
    and OpenAI-like clients write it), the first of ``content``, ``text``, ``output_text``,
    ``choices[0].message.content``, ``choices[0].text`` that is a string; ``None`` for
    anything else."""
    if type(response) is str:
        return response
    if not isinstance(response, dict):
        return None
    for path in _RESPONSE_PATHS:
        node: Any = response
        for step in path:
            if type(step) is int:
                node = node[step] if isinstance(node, list) and len(node) > step else None
            else:
                node = node.get(step) if isinstance(node, dict) else None
        if isinstance(node, str):
            return node
    return None


def _response_problem(response: Any) -> str:
    """What is wrong with a ``response`` that :func:`response_text` reads no text from."""
    if response is UNSET:
        return "field 'response' is missing"
    if isinstance(response, dict):
        return f"field 'response' is an object with no string {_RESPONSE_FORMS}"
    return f"field 'response' is {_json_type(response)}, not a string or an object"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


class _ResultSample(msgspec.Struct, gc=False):
    """The fields of a results sample that matching reads (others are skipped unread);
    :data:`UNSET` where the sample has no such field. The question stays undecoded JSON
    until it is needed (:func:`_question`)."""

    id: Any = UNSET
    response: Any = UNSET
    station_1: Any = UNSET
    station_2: Any = UNSET
    city: Any = UNSET
    category: Any = UNSET
    question: msgspec.Raw = UNSET  # the json path (:meth:`of`) stores the decoded value
    model: Any = UNSET

    @classmethod
    def of(cls, sample: dict[str, Any]) -> _ResultSample:
        """The fields of a sample decoded as a dict."""
        return cls(**{k: sample[k] for k in cls.__struct_fields__ if k in sample})


_RESULTS_DECODER = msgspec.json.Decoder(list[_ResultSample])


def _results_samples(path: Path) -> Iterator[Any]:
    """The samples of a results file, each a :class:`_ResultSample` (or, when it is not a
    JSON object, its value). A top-level JSON list of objects is decoded at once (only the
    fields matching reads: 4-5x faster than decoding every field); anything else (a
    ``{"results": [...]}`` object, an element that is not an object, a syntax error, a
    BOM, ``NaN``) is read by :func:`_results_samples_json`, whose values and errors are
    json's."""
    data = read_bytes(path, MAX_RESULTS_BYTES, error=ScoreError)
    try:
        if not _is_utf8(data):  # msgspec does not check the fields it skips
            raise msgspec.DecodeError
        samples = _RESULTS_DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):
        for sample in _results_samples_json(path, data):
            yield _ResultSample.of(sample) if isinstance(sample, dict) else sample
        return
    del data  # the undecoded questions keep what they need of it
    yield from samples


def _is_utf8(data: bytes, chunk: int = 1 << 22) -> bool:
    """Whether ``data`` is UTF-8, decoded a few MB at a time (so no copy of it is held)."""
    if data.isascii():
        return True
    check = codecs.getincrementaldecoder("utf-8")().decode
    try:
        for i in range(0, len(data), chunk):
            check(data[i : i + chunk])
        check(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def _results_samples_json(path: Path, data: bytes) -> Iterator[Any]:
    """The samples of a results file (the bytes ``data``), decoded one at a time from a
    top-level JSON list (a results file holds long questions: decoding it whole costs
    several times its size in memory); a ``{"results": [...]}`` object is decoded whole."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScoreError(f"{path}: not UTF-8 text (byte offset {exc.start})") from None
    del data
    pos = _skip_space(text, 0)
    if not text.startswith("[", pos):
        whole = loads_json(text, path, error=ScoreError)
        if isinstance(whole, dict):
            whole = whole.get("results")
        if not isinstance(whole, list):
            raise ScoreError(f"{path}: expected a JSON list of samples (or {{'results': [...]}})")
        yield from whole
        return
    decoder = json.JSONDecoder()
    pos = _skip_space(text, pos + 1)
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            try:
                sample, pos = decoder.raw_decode(text, pos)
            except RecursionError:
                raise ScoreError(f"{path}: JSON nested too deeply") from None
            except ValueError as exc:
                raise ScoreError(f"{path}: not valid JSON ({exc})") from None
            yield sample
            pos = _skip_space(text, pos)
            if text.startswith(",", pos):
                pos = _skip_space(text, pos + 1)
            elif text.startswith("]", pos):
                pos += 1
                break
            else:
                raise ScoreError(f"{path}: not valid JSON (expected ',' or ']' at char {pos})")
    if _skip_space(text, pos) != len(text):
        raise ScoreError(f"{path}: not valid JSON (extra data at char {pos})")


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def _digest(question: str) -> bytes:
    """A 128-bit key of a stripped question (questions are long; the index keeps keys)."""
    return hashlib.blake2b(question.strip().encode("utf-8"), digest_size=16).digest()


class _RPKey(NamedTuple):
    """What matching a results sample needs of one RP query (:func:`_match_sample`)."""

    id: str
    map_id: str
    category: str
    map_lower: str  # map_id.lower(), what a results sample's city is looked for in


class _MatchIndex:
    """``kinds`` (kind by sample id) and ``by_pair`` (RP queries by (source, target) table
    names) from one pass over the query files, reading only those fields of each row;
    ``one_map`` holds the pairs whose queries all lie on one map (the usual case: a
    results sample's city then selects all of them or none, which keeps all of them).

    Question digests (:func:`_digest`) are needed only for a sample that names no station
    pair, or whose pair is ambiguous: they are read in a second pass, the first time one is
    asked for (most results files never ask)."""

    def __init__(self, ds: Dataset) -> None:
        self.ds = ds
        self.kinds: dict[str, str] = {}
        self.by_pair: dict[tuple[str, str], list[_RPKey]] = defaultdict(list)
        self._by_question: dict[bytes, list[str]] | None = None
        self._question_of: dict[str, bytes] = {}
        for kind in all_kinds():
            if not ds.has(kind.samples.file):
                continue
            keys: tuple[str, ...] = ("id",)
            if kind.scoring.match_pair:
                keys = ("id", "map_id", "category", *kind.scoring.match_pair)
            name, single = kind.name, kind.samples.variants == ("",)
            shown = ds.root / kind.samples.file
            path = ds.file(kind.samples.file)
            version = _file_version(path)
            locations: dict[str, tuple[int, int, int]] = {}
            for n, at, line, f in string_fields(kind, path, keys, shown):
                sid = f[0]
                locations[sid] = (at, len(line), n)
                if single:
                    self.kinds[sid] = name
                else:
                    for sample_id, _ in kind.sample_ids(sid):
                        self.kinds[sample_id] = name
                if kind.scoring.match_pair:
                    pair = (table_name(f[3]), table_name(f[4]))
                    self.by_pair[pair].append(_RPKey(sid, f[1], f[2], f[1].lower()))
            _LOCATIONS[kind.samples.file] = (version, locations)
        self.one_map: set[tuple[str, str]] = {
            pair for pair, keys in self.by_pair.items() if len({k.map_lower for k in keys}) == 1
        }

    def _questions(self) -> None:
        """The second pass: the digest of every question of the kinds matched by question."""
        by_question: dict[bytes, list[str]] = defaultdict(list)
        for kind in all_kinds():
            if not kind.scoring.match_question or not self.ds.has(kind.samples.file):
                continue
            shown = self.ds.root / kind.samples.file
            path = self.ds.file(kind.samples.file)
            for *_, (sid, text) in string_fields(kind, path, ("id", "question"), shown):
                question = _digest(text)
                by_question[question].append(sid)
                if kind.scoring.match_pair:
                    self._question_of[sid] = question
        self._by_question = by_question

    def by_question(self, digest: bytes) -> list[str]:
        """Ids of the queries whose question has ``digest``."""
        if self._by_question is None:
            self._questions()
        assert self._by_question is not None
        return self._by_question.get(digest, [])

    def question_of(self, key: _RPKey) -> bytes:
        """The question digest of one RP query."""
        if self._by_question is None:
            self._questions()
        return self._question_of[key.id]


def _question(sample: _ResultSample) -> str:
    """The stripped question text of a results sample (decoded here when it was kept as
    raw JSON by :func:`_results_samples`)."""
    q = sample.question
    if q is UNSET:
        return ""
    if isinstance(q, msgspec.Raw):
        q = loads_json(bytes(q), "question", error=ScoreError)
    return str(q).strip()


def _match_sample(
    sample: _ResultSample,
    index: _MatchIndex,
    at: tuple[Path, int],
    memo: dict[tuple[Any, ...], str] | None = None,
) -> str:
    """The dataset id the results sample number ``at[1]`` of file ``at[0]`` answers
    (:func:`load_external_results`). ``memo`` remembers the id of each (station pair, city,
    category), each a string or absent, that matched one query without reading the
    question (results files answer each query several times)."""
    sid = sample.id
    if type(sid) is str and sid in index.kinds:
        return sid
    s1, s2, city, category = sample.station_1, sample.station_2, sample.city, sample.category
    if s1 is not UNSET and s2 is not UNSET:
        key: tuple[Any, ...] | None = (s1, s2, city, category)
        if (
            memo is None
            or type(s1) is not str
            or type(s2) is not str
            or not (type(city) is str or city is UNSET)
            or not (type(category) is str or category is UNSET)
        ):
            key = None
        elif key in memo:
            return memo[key]
        pair = (table_name(str(s1)), table_name(str(s2)))
        cands = index.by_pair.get(pair, [])
        place = "" if city is UNSET else str(city).strip().lower()
        if place and pair not in index.one_map:  # on one map, the filter keeps them all
            cands = [q for q in cands if place in q.map_lower] or cands
        if category is not UNSET:
            cands = [q for q in cands if q.category == category]
        if len(cands) == 1:
            if key is not None:
                memo[key] = cands[0].id  # type: ignore[index]
            return cands[0].id
        question = _question(sample)
        if question and len(cands) > 1:
            digest = _digest(question)
            cands = [q for q in cands if index.question_of(q) == digest] or cands
        if len(cands) == 1:
            return cands[0].id
        raise ScoreError(
            f"{at[0]}: sample {at[1]}: {len(cands)} route-planning queries match "
            f"{s1!r} → {s2!r}; add an 'id' or 'category' field"
        )
    question = _question(sample)
    ids = index.by_question(_digest(question))
    if len(ids) == 1:
        return ids[0]
    raise ScoreError(
        f"{at[0]}: sample {at[1]}: matches {len(ids)} dataset queries; add an 'id' field"
    )
