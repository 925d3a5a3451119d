"""Scoring a run: per-sample scores and a summary with confidence intervals (SPEC 12-14).

Data flow: dataset + predictions → :func:`score_predictions` (pure: one score row per
answered sample, then :func:`summarise`) → :func:`score_run` writes
``RUN_DIR/scores.jsonl`` and ``RUN_DIR/summary.json``.

* Prediction rows with ``error`` set are API failures: they get no score row and are counted
  apart (``counts.api_errors``); an unparseable answer is a wrong answer counted as a format
  error. Dataset samples with no prediction are counted as ``counts.missing``.
* Every headline rate carries a 95% percentile-bootstrap interval clustered by ``map_id``
  (:mod:`maptab.score.stats`), written ``{"mean", "lo", "hi", "n"}``; DS is a total
  (``{"total", "lo", "hi", "n"}``).
* RP breakdowns are per scenario: overall, by category, map difficulty, query difficulty,
  map × query difficulty, repetition class (FR/PR/NR), reported-totals accuracy (T/P/C/R)
  and error types. QA: per scenario, by type and by capability (mean of the accuracies of
  the types attached to the capability, paper Table 3). ReasonMap: per mode, accuracy
  (lenient and strict) and map score, plain and difficulty-weighted.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from json.decoder import scanstring
from pathlib import Path
from typing import Any

import numpy as np

from maptab.dataset import QUERY_FILES, Dataset, DatasetError
from maptab.errors import MaptabError
from maptab.limits import MAX_RESULTS_BYTES, loads_json, open_regular, read_bytes, read_json
from maptab.network import Network, table_name
from maptab.schema import (
    Prediction,
    QAQuery,
    ReasonMapQuestion,
    Record,
    RecordError,
    RPQuery,
    parse_prediction,
    parse_record,
    read_jsonl,
    read_jsonl_lines,
    write_jsonl,
)
from maptab.score.errors import ERROR_TYPES
from maptab.score.paper import (
    difficulty_score,
    matching_references,
    paper_scores,
    reference_tokens,
)
from maptab.score.parse import parse_answer, parse_reasonmap, parse_route, parse_totals
from maptab.score.qa import capability_weights, qa_correct, totals_correct
from maptab.score.reasonmap import score_reasonmap
from maptab.score.stats import bootstrap_ci, paired_difference
from maptab.score.verified import gold_routes, station_index, verify_route
from maptab.tables import derive_mix

__all__ = [
    "ScoreError",
    "compare_runs",
    "load_scores",
    "load_external_results",
    "load_predictions",
    "score_predictions",
    "score_run",
    "summarise",
]

SCORES = "scores.jsonl"
_RM_MODES = ("short", "long")
SUMMARY = "summary.json"
LEVEL = 0.95
N_BOOT = 2000


class ScoreError(MaptabError):
    """Inputs that cannot be scored (unknown sample id, unreadable run); names the file."""


# --------------------------------------------------------------------------- per sample
class _Maps:
    """Networks of a dataset, and their Mix_tab variants, loaded once each."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._mix: dict[str, Network] = {}

    def network(self, map_id: str) -> Network:
        return self.dataset.network(map_id)

    def mix(self, map_id: str) -> Network:
        if map_id not in self._mix:
            net = self.network(map_id)
            self._mix[map_id] = net.with_attributes(vertices=derive_mix(net))
        return self._mix[map_id]


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def score_rp(maps: _Maps, query: RPQuery, response: str) -> dict[str, Any]:
    """Score row of one route-planning answer (paper and strict metrics, error type)."""
    net = maps.network(query.map_id)
    index = station_index(net)
    parsed = parse_route(response, index.vocabulary)
    tokens = parsed.tokens() if parsed else None
    refs = [reference_tokens(r) for r in query.routes]
    ema, pma = paper_scores(tokens, refs)
    totals = None
    if query.report_totals and query.totals:
        totals = totals_correct(parse_totals(response), query.totals)
    totals_ok = None if totals is None else all(totals.values())
    mix = maps.mix(query.map_id) if query.category == "map_mix" else None
    v = verify_route(net, parsed, query, mix_network=mix, totals_ok=totals_ok)
    # the 0.5 rule accepted a wrong station: EMA 1, yet no reference that the prediction
    # matches has the same stations as the resolved prediction
    gold = gold_routes(index, query.routes)
    false_accept = bool(ema) and not any(
        list(gold[i][0]) == v.stations for i in matching_references(tokens, refs)
    )
    return {
        "id": query.id,
        "kind": "rp",
        "map_id": query.map_id,
        "scenario": query.scenario,
        "category": query.category,
        "map_difficulty": query.map_difficulty,
        "query_difficulty": query.query_difficulty,
        "repetition": query.repetition,
        "parsed": parsed is not None,
        "route": parsed.route_string() if parsed else None,
        "ema": ema,
        "pma": pma,
        "ds": difficulty_score(ema, query.map_difficulty, query.query_difficulty),
        "valid": v.valid,
        "endpoints_ok": v.endpoints_ok,
        "simple": v.simple,
        "adjacent": v.adjacent,
        "transfers_ok": v.transfers_ok,
        "optimal": v.optimal,
        "strict": v.correct,
        "gap": _finite(v.gap),
        "unresolved": v.unresolved_names,
        "lenient_false_accept": false_accept,
        "totals": totals,
        "error_type": v.error_type,
    }


def score_qa(query: QAQuery, response: str) -> dict[str, Any]:
    """Score row of one QA answer."""
    pred = parse_answer(response)
    return {
        "id": query.id,
        "kind": "qa",
        "map_id": query.map_id,
        "scenario": query.scenario,
        "type": query.type,
        "capabilities": list(query.capabilities),
        "parsed": pred is not None,
        "pred": pred,
        "answer": query.answer,
        "correct": qa_correct(pred, query.answer),
        "error_type": None if pred is not None else ERROR_TYPES[0],
    }


def score_rm(maps: _Maps, question: ReasonMapQuestion, mode: str, response: str) -> dict[str, Any]:
    """Score row of one ReasonMap answer (``mode`` short or long)."""
    segments = parse_reasonmap(response, mode)
    s = score_reasonmap(maps.network(question.map_id), question, segments, mode)
    return {
        "id": f"{question.id}/{mode}",
        "kind": "reasonmap",
        "question_id": question.id,
        "mode": mode,
        "map_id": question.map_id,
        "question_difficulty": question.question_difficulty,
        "map_difficulty": question.map_difficulty,
        "long_template": question.long_template,
        "parsed": s.parsed,
        "correct": s.correct,
        "correct_strict": s.correct_strict,
        "map_score": s.map_score,
        "max_score": s.max_score,
        "weight": s.weight,
        "error_type": None if s.parsed else ERROR_TYPES[0],
    }


# --------------------------------------------------------------------------- summary
class _Columns:
    """Score rows of one kind as numeric columns (``None`` → NaN) plus map cluster codes,
    so that every group's interval is a few numpy operations."""

    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        self.rows = rows
        index: dict[str, int] = {}
        self.cluster = np.fromiter(
            (index.setdefault(r["map_id"], len(index)) for r in rows),
            dtype=np.intp,
            count=len(rows),
        )
        self._cols: dict[str, np.ndarray] = {}

    def __getitem__(self, key: str) -> np.ndarray:
        col = self._cols.get(key)
        if col is None:
            col = self._cols[key] = np.fromiter(
                (math.nan if r[key] is None else float(r[key]) for r in self.rows),
                dtype=float,
                count=len(self.rows),
            )
        return col

    def groups(
        self, idx: np.ndarray, key: Callable[[dict[str, Any]], Any]
    ) -> dict[str, np.ndarray]:
        """Row indices of ``idx`` grouped by ``key`` (rows whose key is ``None`` left out)."""
        out: dict[str, list[int]] = defaultdict(list)
        for i in idx.tolist():
            k = key(self.rows[i])
            if k is not None:
                out[str(k)].append(i)
        return {k: np.asarray(v, dtype=np.intp) for k, v in sorted(out.items())}

    def ci(self, idx: np.ndarray, values: np.ndarray, weights: np.ndarray | None = None) -> dict:
        """Mean of ``values[idx]`` (weighted) with its bootstrap interval clustered by map."""
        mean, lo, hi = bootstrap_ci(
            values[idx],
            clusters=self.cluster[idx],
            weights=None if weights is None else weights[idx],
            n_boot=N_BOOT,
            level=LEVEL,
        )
        return {"mean": mean, "lo": lo, "hi": hi, "n": int(idx.size)}


def _rp_block(c: _Columns, idx: np.ndarray) -> dict[str, Any]:
    n = int(idx.size)
    ds = c.ci(idx, c["ds"])
    valid = idx[(c["valid"][idx] == 1) & ~np.isnan(c["gap"][idx])]
    accepted = int(c["ema"][idx].sum())
    false_accepts = int(c["lenient_false_accept"][idx].sum())
    return {
        "n": n,
        "ema": c.ci(idx, c["ema"]),
        "pma": c.ci(idx, c["pma"]),
        "ds": {"total": ds["mean"] * n, "lo": ds["lo"] * n, "hi": ds["hi"] * n, "n": n},
        "strict": c.ci(idx, c["strict"]),
        "valid": c.ci(idx, c["valid"]),
        "optimal": c.ci(idx, c["optimal"]),
        "transfers_ok": c.ci(idx, c["transfers_ok"]),
        "gap": c.ci(valid, c["gap"]) if valid.size else None,
        "format_errors": int(n - c["parsed"][idx].sum()),
        "lenient_false_accept": {
            "count": false_accepts,
            "share_of_ema": false_accepts / accepted if accepted else 0.0,
        },
    }


def _rp_scenario(c: _Columns, idx: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {"overall": _rp_block(c, idx)}
    for name, key in (
        ("by_category", lambda r: r["category"]),
        ("by_map_difficulty", lambda r: r["map_difficulty"]),
        ("by_query_difficulty", lambda r: r["query_difficulty"]),
        ("by_difficulty", lambda r: f"{r['map_difficulty']}/{r['query_difficulty']}"),
        ("by_repetition", lambda r: r["repetition"]),
    ):
        out[name] = {k: _rp_block(c, g) for k, g in c.groups(idx, key).items()}
    asked = np.asarray([i for i in idx.tolist() if c.rows[i]["totals"] is not None], dtype=np.intp)
    out["totals"] = {}
    for letter in "TPCR":
        if any(letter in c.rows[i]["totals"] for i in asked.tolist()):
            ok = np.zeros(len(c.rows))
            for i in asked.tolist():
                ok[i] = float(c.rows[i]["totals"].get(letter, False))
            out["totals"][letter] = c.ci(asked, ok)
    wrong = [c.rows[i]["error_type"] for i in idx.tolist() if c.rows[i]["error_type"]]
    out["errors"] = {
        t: {"count": wrong.count(t), "share": wrong.count(t) / idx.size}
        for t in ERROR_TYPES
        if t in wrong
    }
    return out


def _qa_scenario(c: _Columns, idx: np.ndarray) -> dict[str, Any]:
    per_type = c.groups(idx, lambda r: r["type"])
    caps: dict[str, list[int]] = defaultdict(list)
    for i in idx.tolist():
        for cap in c.rows[i]["capabilities"]:
            caps[cap].append(i)
    by_cap = {}
    for cap, members in sorted(caps.items()):
        cidx = np.asarray(members, dtype=np.intp)
        w = np.zeros(len(c.rows))
        w[cidx] = capability_weights([c.rows[i]["type"] for i in members])
        by_cap[cap] = c.ci(cidx, c["correct"], w)
    return {
        "overall": c.ci(idx, c["correct"]),
        "format_errors": int(idx.size - c["parsed"][idx].sum()),
        "by_type": {
            k: c.ci(g, c["correct"]) for k, g in sorted(per_type.items(), key=lambda kv: int(kv[0]))
        },
        "by_capability": by_cap,
    }


def _rm_mode(c: _Columns, idx: np.ndarray) -> dict[str, Any]:
    w = c["weight"]
    return {
        "accuracy": c.ci(idx, c["correct"]),
        "accuracy_strict": c.ci(idx, c["correct_strict"]),
        "map_score": c.ci(idx, c["map_score"]),
        "weighted_accuracy": c.ci(idx, c["correct"], w),
        "weighted_accuracy_strict": c.ci(idx, c["correct_strict"], w),
        "weighted_map_score": c.ci(idx, c["map_score"], w),
        "max_score": c.rows[int(idx[0])]["max_score"],
        "format_errors": int(idx.size - c["parsed"][idx].sum()),
    }


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The summary of score rows (module docstring); pure, deterministic."""
    out: dict[str, Any] = {"settings": {"ci_level": LEVEL, "n_boot": N_BOOT, "cluster": "map_id"}}
    for kind in ("rp", "qa", "reasonmap"):
        kind_rows = [r for r in rows if r["kind"] == kind]
        if not kind_rows:
            continue
        c = _Columns(kind_rows)
        every = np.arange(len(kind_rows), dtype=np.intp)
        if kind == "rp":
            scen = c.groups(every, lambda r: r["scenario"])
            out["rp"] = {
                "overall": _rp_block(c, every),
                "by_scenario": {k: _rp_scenario(c, g) for k, g in scen.items()},
            }
        elif kind == "qa":
            scen = c.groups(every, lambda r: r["scenario"])
            out["qa"] = {
                "overall": c.ci(every, c["correct"]),
                "by_scenario": {k: _qa_scenario(c, g) for k, g in scen.items()},
            }
        else:
            modes = c.groups(every, lambda r: r["mode"])
            out["reasonmap"] = {k: _rm_mode(c, g) for k, g in modes.items()}
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
def _string_field(line: str, key: str) -> str | None:
    """The value of the top-level string field ``key`` of a dataset JSONL row as the builder
    writes it (``"key": "value"``), or ``None`` when the row is written otherwise.

    A JSON string cannot hold a bare ``"``, so ``"key": "`` only occurs as a key; the value
    is decoded by the standard library's JSON string scanner (escapes included). Our query
    rows have no nested object with the keys read here.
    """
    pattern = f'"{key}": "'
    at = line.find(pattern)
    if at == -1:
        return None
    try:
        return scanstring(line, at + len(pattern))[0]
    except ValueError:
        return None


def _row_fields(line: str, keys: Sequence[str], where: str) -> dict[str, Any]:
    """The fields ``keys`` of one row, read with :func:`_string_field` (the fast path), or
    by decoding the whole row when one is not written as a plain string."""
    out: dict[str, Any] = {}
    for key in keys:
        value = _string_field(line, key)
        if value is None:
            row = loads_json(line, where, error=DatasetError)
            if not isinstance(row, dict):
                raise DatasetError(f"{where}: expected a JSON object, found {type(row).__name__}")
            return {k: row.get(k) for k in keys}
        out[key] = value
    return out


def _scan(ds: Dataset, kind: str) -> Iterator[tuple[int, str, str]]:
    """``(line number, line, where)`` of each non-blank line of the ``kind`` query file of
    ``ds`` (checked against the manifest like every dataset read)."""
    name = QUERY_FILES[kind]
    if not ds.has(name):
        return
    path = ds.file(name)
    shown = ds.root / name
    n = 0
    with open_regular(path, error=DatasetError) as fh:
        try:
            for n, line in enumerate(fh, 1):  # noqa: B007 (n names the line of a decode error)
                if line.strip():
                    yield n, line, f"{shown}:{n}"
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{shown}:{n + 1}: not UTF-8 text ({exc.reason})") from None


def _row_id(line: str, where: str) -> str | None:
    """The ``id`` of one row (fast path: the builder writes it first)."""
    if line.startswith('{"id": "'):
        try:
            return scanstring(line, 8)[0]
        except ValueError:
            pass
    sid = _row_fields(line, ("id",), where)["id"]
    return sid if isinstance(sid, str) else None


class _Queries:
    """The dataset rows a set of predictions needs, by id (one pass over each query file).

    Only rows whose ``id`` is wanted are decoded and checked against their schema (an error
    names file and line); the others are only counted, so scoring a subset of a large
    dataset does not pay for the rest. A later row with the same id replaces an earlier one.
    """

    def __init__(self, ds: Dataset, rp_qa_ids: set[str], rm_ids: set[str]) -> None:
        self.rows: dict[str, dict[str, Record]] = {"rp": {}, "qa": {}, "reasonmap": {}}
        self.counts = {"rp": 0, "qa": 0, "reasonmap": 0}  # distinct ids of each file
        for kind, wanted in (("rp", rp_qa_ids), ("qa", rp_qa_ids), ("reasonmap", rm_ids)):
            found = self.rows[kind]
            every: set[str | None] = set()
            for _, line, where in _scan(ds, kind):
                sid = _row_id(line, where)
                every.add(sid)
                if sid not in wanted:
                    continue
                row = loads_json(line, where, error=DatasetError)
                try:
                    record = parse_record(kind, row)
                except RecordError as exc:
                    raise DatasetError(f"{where}: {exc}") from None
                if isinstance(record, RPQuery | QAQuery):
                    # scoring never reads the prompt or the table row orders, which are
                    # most of a row's size; a paper-size run keeps ~200,000 records
                    record = replace(record, question="", tables={})
                found[record.id] = record
            self.counts[kind] = len(every)


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
    progress: bool = False,
    selection: dict[str, Any] | None = None,
    verify: bool = True,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score ``predictions`` against the dataset at ``dataset_dir``.

    Returns one score row per answered sample (dataset order of the prediction list) and the
    summary. ``selection`` (``split``, ``categories``, ``limit`` as a run recorded them) says
    which samples the run was asked to answer, so ``counts.missing`` counts only those; without
    it every sample of the dataset is expected. Raises :class:`ScoreError` for a prediction id
    that is not in the dataset; with ``verify`` every dataset file read is first checked
    against the manifest's hash (:class:`~maptab.dataset.Dataset`).
    """
    rows: list[dict[str, Any]] = []
    summary = _score_stream(
        dataset_dir, predictions, rows.append, progress=progress, selection=selection, verify=verify
    )
    return rows, summary


def _score_stream(
    dataset_dir: str | Path,
    predictions: Iterable[Prediction],
    emit: Callable[[dict[str, Any]], None],
    *,
    progress: bool,
    selection: dict[str, Any] | None,
    verify: bool,
) -> dict[str, Any]:
    """:func:`score_predictions`, handing each score row to ``emit`` as soon as it is
    computed; returns the summary. Only the dataset rows the predictions name are decoded
    (:class:`_Queries`)."""
    ds = _open_dataset(dataset_dir, verify)
    preds = list(predictions)
    ids = {p.id for p in preds}
    rm_ids = {base for base, _, mode in (i.rpartition("/") for i in ids) if mode in _RM_MODES}
    try:
        queries = _Queries(ds, ids, rm_ids)
    except DatasetError as exc:
        raise ScoreError(str(exc)) from None
    rp, qa, rm = queries.rows["rp"], queries.rows["qa"], queries.rows["reasonmap"]
    maps = _Maps(ds)
    kept: list[dict[str, Any]] = []
    api_errors: dict[str, int] = defaultdict(int)
    seen: set[str] = set()
    same: dict[tuple[str, str | None], dict[str, Any]] = {}
    items: Iterable[Prediction] = preds
    if progress:
        from rich.console import Console
        from rich.progress import track

        items = track(preds, description="scoring", console=Console(stderr=True), transient=True)
    for p in items:
        base, _, mode = p.id.rpartition("/")
        if p.id in rp:
            kind = "rp"
        elif p.id in qa:
            kind = "qa"
        elif base in rm and mode in _RM_MODES:
            kind = "reasonmap"
        else:
            raise ScoreError(f"prediction {p.id!r} is not a sample of dataset {dataset_dir}")
        seen.add(p.id)
        if p.error:
            api_errors[kind] += 1
            continue
        try:
            if kind == "rp":
                # the same answer to the same query is parsed and verified once
                hit = same.get((p.id, p.response))
                if hit is None:
                    row = score_rp(maps, rp[p.id], p.response or "")  # type: ignore[arg-type]
                    same[(p.id, p.response)] = row
                else:
                    row = dict(hit)
            elif kind == "qa":
                row = score_qa(qa[p.id], p.response or "")  # type: ignore[arg-type]
            else:
                row = score_rm(maps, rm[base], mode, p.response or "")  # type: ignore[arg-type]
        except (DatasetError, ValueError) as exc:
            raise ScoreError(f"{dataset_dir}: sample {p.id!r}: {exc}") from None
        kept.append(row)
        emit(row)
    if selection and any(selection.get(k) for k in ("split", "categories", "limit")):
        from maptab.run.requests import iter_samples

        expected = sum(
            1
            for _ in iter_samples(
                dataset_dir,
                split=selection.get("split"),
                categories=selection.get("categories") or None,
                limit=selection.get("limit"),
                verify=verify,
            )
        )
    else:
        counts = queries.counts
        expected = counts["rp"] + counts["qa"] + 2 * counts["reasonmap"]
    summary = summarise(kept)
    summary["counts"] = {
        "predictions": len(preds),
        "scored": {k: sum(r["kind"] == k for r in kept) for k in ("rp", "qa", "reasonmap")},
        "api_errors": dict(api_errors),
        "format_errors": sum(not r["parsed"] for r in kept),
        "missing": expected - len(seen),
    }
    return summary


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


def _write_summary(out: Path, summary: dict[str, Any]) -> None:
    (out / SUMMARY).write_text(
        json.dumps(summary, ensure_ascii=False, indent=1, allow_nan=False) + "\n",
        encoding="utf-8",
        newline="\n",
    )


def _clean(obj: Any) -> Any:
    """Replace NaN/inf (empty groups) by ``None`` so the JSON is standard."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def score_run(
    run_dir: str | Path,
    *,
    dataset_dir: str | Path | None = None,
    predictions: list[Prediction] | None = None,
    progress: bool = True,
    verify: bool = True,
) -> dict[str, Any]:
    """Score a run directory; writes ``scores.jsonl`` and ``summary.json``; returns the summary.

    The dataset is ``dataset_dir`` or the ``dataset`` recorded in ``RUN_DIR/run.json``;
    predictions are ``predictions`` or ``RUN_DIR/predictions.jsonl``.
    """
    run = Path(run_dir)
    info: dict[str, Any] = {}
    if dataset_dir is None:
        info = _run_info(run)
        dataset_dir = _dataset_path(run, info["dataset"])
    elif (run / "run.json").is_file():
        info = _run_info(run)
    if predictions is not None:
        _adopt(run, Path(dataset_dir), predictions, info)
    preds = predictions if predictions is not None else load_predictions(run)
    run.mkdir(parents=True, exist_ok=True)
    tmp = run / (SCORES + ".tmp")
    # each score row is written as it is computed (the file is renamed into place at the end)
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:

            def emit(row: dict[str, Any]) -> None:
                try:  # the common case: nothing to clean
                    text = json.dumps(row, ensure_ascii=False, allow_nan=False)
                except ValueError:
                    text = json.dumps(_clean(row), ensure_ascii=False)
                fh.write(text + "\n")

            summary = _score_stream(
                dataset_dir, preds, emit, progress=progress, selection=info, verify=verify
            )
        os.replace(tmp, run / SCORES)
    finally:
        tmp.unlink(missing_ok=True)
    summary = _clean({"model": info.get("model"), "dataset": str(dataset_dir), **summary})
    _write_summary(run, summary)
    return summary


def _adopt(run: Path, dataset_dir: Path, preds: list[Prediction], info: dict[str, Any]) -> None:
    """Make ``run`` a run folder for predictions scored from elsewhere (reports read it):
    writes ``predictions.jsonl`` and ``run.json`` where they are missing."""
    run.mkdir(parents=True, exist_ok=True)
    if not (run / "predictions.jsonl").exists():
        write_jsonl(run / "predictions.jsonl", [p.to_dict() for p in preds])
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
    ``response`` and either an ``id`` of the dataset, or ``station_1``/``station_2`` (plus
    optionally ``city``, ``category``, ``question``) identifying one route-planning query, or
    a ``question`` identical to one QA query's. A sample matching no query or several is an
    error naming its position.
    """
    p = Path(path)
    ds = _open_dataset(dataset_dir, verify)
    try:
        kinds, by_question, by_pair = _match_index(ds)
    except DatasetError as exc:
        raise ScoreError(str(exc)) from None
    out: list[Prediction] = []
    for n, sample in enumerate(_results_samples(p)):
        where = f"{p}: sample {n}"
        if not isinstance(sample, dict):
            raise ScoreError(f"{where}: not a JSON object")
        response = sample.get("response")
        if not isinstance(response, str):
            raise ScoreError(f"{where}: field 'response' (a string) is missing")
        sid = _match_sample(sample, kinds, by_question, by_pair, where)
        model = str(sample.get("model", ""))
        out.append(Prediction(id=sid, kind=kinds[sid], response=response, model=model))
    return out


def _results_samples(path: Path) -> Iterator[Any]:
    """The samples of a results file, decoded one at a time from a top-level JSON list (a
    results file holds long questions: decoding it whole costs several times its size in
    memory); a ``{"results": [...]}`` object is decoded whole."""
    data = read_bytes(path, MAX_RESULTS_BYTES, error=ScoreError)
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


@dataclass(frozen=True, slots=True)
class _RPKey:
    """What matching a results sample needs of one RP query (:func:`_match_sample`)."""

    id: str
    map_id: str
    category: str
    question: bytes  # :func:`_digest` of the question


def _match_index(
    ds: Dataset,
) -> tuple[dict[str, str], dict[bytes, list[str]], dict[tuple[str, str], list[_RPKey]]]:
    """``(kind by sample id, ids by question digest, RP queries by (source, target) table
    names)`` from one pass over the query files, reading only those fields of each row."""
    kinds: dict[str, str] = {}
    by_question: dict[bytes, list[str]] = defaultdict(list)
    by_pair: dict[tuple[str, str], list[_RPKey]] = defaultdict(list)
    rp_keys = ("id", "map_id", "category", "question", "source", "target")
    for kind, keys in (("rp", rp_keys), ("qa", ("id", "question")), ("reasonmap", ("id",))):
        for _, line, where in _scan(ds, kind):
            f = _row_fields(line, keys, where)
            if any(not isinstance(f[k], str) for k in keys):
                row = loads_json(line, where, error=DatasetError)
                try:
                    parse_record(kind, row)  # names the bad field
                except RecordError as exc:
                    raise DatasetError(f"{where}: {exc}") from None
                raise DatasetError(f"{where}: a field of {', '.join(keys)} is not a string")
            sid = f["id"]
            if kind == "reasonmap":
                for mode in _RM_MODES:
                    kinds[f"{sid}/{mode}"] = kind
                continue
            kinds[sid] = kind
            question = _digest(f["question"])
            by_question[question].append(sid)
            if kind == "rp":
                pair = (table_name(f["source"]), table_name(f["target"]))
                by_pair[pair].append(_RPKey(sid, f["map_id"], f["category"], question))
    return kinds, by_question, by_pair


def _match_sample(
    sample: dict[str, Any],
    known: dict[str, str],
    by_question: dict[bytes, list[str]],
    by_pair: dict[tuple[str, str], list[_RPKey]],
    where: str,
) -> str:
    sid = sample.get("id")
    if isinstance(sid, str) and sid in known:
        return sid
    question = str(sample.get("question", "")).strip()
    if "station_1" in sample and "station_2" in sample:
        cands = by_pair.get(
            (table_name(str(sample["station_1"])), table_name(str(sample["station_2"]))), []
        )
        city = str(sample.get("city", "")).strip().lower()
        if city:
            cands = [q for q in cands if city in q.map_id.lower()] or cands
        if "category" in sample:
            cands = [q for q in cands if q.category == sample["category"]]
        if question and len(cands) > 1:
            digest = _digest(question)
            cands = [q for q in cands if q.question == digest] or cands
        if len(cands) == 1:
            return cands[0].id
        raise ScoreError(
            f"{where}: {len(cands)} route-planning queries match "
            f"{sample['station_1']!r} → {sample['station_2']!r}; add an 'id' or 'category' field"
        )
    ids = by_question.get(_digest(question), [])
    if len(ids) == 1:
        return ids[0]
    raise ScoreError(f"{where}: matches {len(ids)} dataset queries; add an 'id' field")
