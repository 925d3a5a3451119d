"""Metrics declared once (SPEC 13): what a metric reads, how it aggregates and prints.

A :class:`Metric` names the per-sample field of a score row it reads, how a group of rows
aggregates it (``mean`` with a map-clustered bootstrap interval, ``total`` (a mean times
the count, the papers' DS), ``count_false`` (rows where the field is false, e.g. format
errors: ``parsed``), ``count`` (rows where it is true)), which rows count (``where``: a
field that must be true and the metric's field not ``None``, e.g. the gap over valid
routes), an optional weight field, its print format (``pct``: a share printed ×100,
``num``: 2 decimals, ``int``), the groupings it is broken down by and whether higher is
better. Each task kind lists its metrics on its :class:`~maptab.tasks.base.TaskKind`;
``summary.json`` (:func:`aggregate`), the report tables (:func:`interval` via the
kind's sections) and the ``maptab score`` printout read these declarations.

Aggregation exists once: :class:`Columns` turns score rows into numeric columns and
:meth:`Columns.ci` is the one interval computation (95% percentile bootstrap, 2000
replicates, clustered by ``map_id``: :func:`maptab.score.bootstrap.bootstrap_ci`). The report
recomputes its cells from the same rows through :func:`interval`, so a cell and its
``summary.json`` entry agree.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from maptab.score.bootstrap import bootstrap_ci
from maptab.score.rows import field_reader

__all__ = [
    "LEVEL",
    "N_BOOT",
    "Columns",
    "Metric",
    "aggregate",
    "interval",
    "metric_text",
    "summarise_metrics",
]

LEVEL = 0.95
N_BOOT = 2000


@dataclass(frozen=True, slots=True)
class Metric:
    """One metric (module docstring). ``name`` is its key in ``summary.json`` blocks,
    ``label`` its column header (``name`` when empty)."""

    name: str
    field: str
    aggregate: str = "mean"
    fmt: str = "pct"
    group_by: tuple[str, ...] = ()
    higher_is_better: bool = True
    interval: str = "bootstrap-map"
    label: str = ""
    weight: str | None = None
    where: str | None = None

    def __post_init__(self) -> None:
        if self.aggregate not in ("mean", "total", "count_false", "count"):
            raise ValueError(f"metric {self.name!r}: unknown aggregate {self.aggregate!r}")
        if self.fmt not in ("pct", "num", "int"):
            raise ValueError(f"metric {self.name!r}: unknown format {self.fmt!r}")

    @property
    def header(self) -> str:
        return self.label or self.name


def _factorize(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """``(codes, distinct)``: the distinct ``values`` in order of first appearance and the
    index into them of each value (hashable values; the loops run in C)."""
    distinct = list(dict.fromkeys(values))
    code_of = {v: i for i, v in enumerate(distinct)}
    codes = np.array(list(map(code_of.__getitem__, values)), dtype=np.intp)
    return codes.reshape(len(values)), distinct


class Columns:
    """Score rows as numeric columns (``None`` → NaN) plus map cluster codes, so that
    every group's interval is a few numpy operations."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.rows = rows
        self._read = field_reader(rows)
        self.cluster = _factorize(self._read("map_id"))[0]
        self._cols: dict[str, np.ndarray] = {}
        self._codes: dict[str, tuple[np.ndarray, list[Any]]] = {}
        self._values: dict[str, list[Any]] = {}

    @property
    def every(self) -> np.ndarray:
        return np.arange(len(self.rows), dtype=np.intp)

    def __getitem__(self, key: str) -> np.ndarray:
        col = self._cols.get(key)
        if col is None:
            values = self._values.get(key)
            if values is None:  # read, not kept: the float column is
                values = self._read(key)
            if None in values:
                nan = math.nan
                values = [nan if v is None else v for v in values]
            col = self._cols[key] = np.array(values, dtype=float)
        return col

    def values(self, field: str) -> list[Any]:
        """Every row's value of ``field``, as it is (read once per field; do not modify)."""
        got = self._values.get(field)
        if got is None:
            got = self._values[field] = self._read(field)
        return got

    def codes(self, field: str) -> tuple[np.ndarray, list[Any]]:
        """``(codes, values)``: the distinct values of ``field`` in order of first
        appearance and, per row, the index of its value (computed once per field)."""
        got = self._codes.get(field)
        if got is None:
            got = self._codes[field] = _factorize(self.values(field))
        return got

    def groups(
        self, idx: np.ndarray, key: str | tuple[str, ...] | Callable[[dict[str, Any]], Any]
    ) -> dict[str, np.ndarray]:
        """Row indices of ``idx`` grouped by the value of ``key`` written as text, each group
        in the order of ``idx``, groups sorted by name. ``key`` is a field (rows where it
        is ``None`` are left out), a tuple of fields (the name joins their values with
        ``/``) or a function of a row (rows where it returns ``None`` are left out)."""
        if callable(key):
            codes, values = _factorize(list(map(key, map(self.rows.__getitem__, idx.tolist()))))
        else:
            fields = (key,) if isinstance(key, str) else key
            codes, values = self.codes(fields[0])
            codes = codes[idx]
            if len(fields) > 1:
                combined: list[tuple[Any, ...]] = [(v,) for v in values]
                for f in fields[1:]:
                    more, more_values = self.codes(f)
                    codes = codes * len(more_values) + more[idx]
                    combined = [(*v, w) for v in combined for w in more_values]
                values = ["/".join(map(str, v)) for v in combined]
        names = [None if v is None else str(v) for v in values]
        by_name: dict[str, list[int]] = defaultdict(list)
        for code, name in enumerate(names):
            if name is not None:
                by_name[name].append(code)
        if not by_name:
            return {}
        order = np.argsort(codes, kind="stable")
        bounds = np.cumsum(np.bincount(codes, minlength=len(names)))
        parts = np.split(idx[order].astype(np.intp, copy=False), bounds[:-1])
        out: dict[str, np.ndarray] = {}
        for name in sorted(by_name):
            members = by_name[name]
            part = parts[members[0]]
            if len(members) > 1:  # several values spelt alike (1 and "1"): merged, idx order
                pos = np.concatenate(
                    [order[bounds[c] - len(parts[c]) : bounds[c]] for c in members]
                )
                part = idx[np.sort(pos)].astype(np.intp, copy=False)
            if part.size:
                out[name] = part
        return out

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


def _kept(c: Columns, idx: np.ndarray, metric: Metric) -> np.ndarray:
    if metric.where is None:
        return idx
    return idx[(c[metric.where][idx] == 1) & ~np.isnan(c[metric.field][idx])]


def aggregate(metric: Metric, c: Columns, idx: np.ndarray) -> Any:
    """The ``summary.json`` value of ``metric`` over the rows ``idx`` of ``c``:
    ``{"mean", "lo", "hi", "n"}`` (``mean``; ``None`` when ``where`` keeps no row),
    ``{"total", "lo", "hi", "n"}`` (``total``) or an integer count."""
    if metric.aggregate == "count_false":
        return int(idx.size - c[metric.field][idx].sum())
    if metric.aggregate == "count":
        return int(c[metric.field][idx].sum())
    kept = _kept(c, idx, metric)
    if metric.where is not None and not kept.size:
        return None
    w = None if metric.weight is None else c[metric.weight]
    out = c.ci(kept, c[metric.field], w)
    if metric.aggregate == "total":
        n = int(kept.size)
        return {"total": out["mean"] * n, "lo": out["lo"] * n, "hi": out["hi"] * n, "n": n}
    return out


def summarise_metrics(
    metrics: Sequence[Metric], rows: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Each of ``metrics`` aggregated over all ``rows``, by name: the ``summary.json`` block
    of a task kind that declares no ``summarise`` of its own."""
    c = Columns(rows)
    return {m.name: aggregate(m, c, c.every) for m in metrics}


def interval(metric: Metric, rows: Sequence[Mapping[str, Any]]) -> tuple[float | None, ...]:
    """``(value, lo, hi)`` of ``metric`` over ``rows`` for a report cell (``value`` is
    ``None`` when no row counts); counts have no interval."""
    c = Columns(rows)
    value = aggregate(metric, c, c.every)
    if value is None:
        return (None, None, None)
    if isinstance(value, int):
        return (value, None, None)
    mean = value["total"] if metric.aggregate == "total" else value["mean"]
    if mean is None or math.isnan(mean):
        return (None, None, None)
    return (mean, value["lo"], value["hi"])


def metric_text(metric: Metric, value: Any, *, interval: bool = True) -> str:
    """A ``summary.json`` value of ``metric`` as the ``maptab score`` table prints it:
    a share in percent (``mean±h``, ``h`` the larger distance to a bound, with
    ``interval``), a number to 3 decimals, a total or count as an integer; ``–`` for none."""
    if value is None:
        return "–"
    if isinstance(value, int):
        return str(value)
    if metric.aggregate == "total":
        return f"{value['total']:.0f}"
    m = value.get("mean")
    if m is None:
        return "–"
    if metric.fmt == "num":
        return f"{m:.3f}"
    lo, hi = value.get("lo"), value.get("hi")
    if not interval or lo is None or hi is None:
        return f"{100 * m:.1f}"
    return f"{100 * m:.1f}±{100 * max(m - lo, hi - m):.1f}"
