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
replicates, clustered by ``map_id``: :func:`maptab.score.stats.bootstrap_ci`). The report
recomputes its cells from the same rows through :func:`interval`, so a cell and its
``summary.json`` entry agree.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from maptab.score.stats import bootstrap_ci

__all__ = ["LEVEL", "N_BOOT", "Columns", "Metric", "aggregate", "interval"]

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


class Columns:
    """Score rows as numeric columns (``None`` → NaN) plus map cluster codes, so that
    every group's interval is a few numpy operations."""

    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        self.rows = rows
        index: dict[str, int] = {}
        self.cluster = np.fromiter(
            (index.setdefault(r["map_id"], len(index)) for r in rows),
            dtype=np.intp,
            count=len(rows),
        )
        self._cols: dict[str, np.ndarray] = {}

    @property
    def every(self) -> np.ndarray:
        return np.arange(len(self.rows), dtype=np.intp)

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


def interval(metric: Metric, rows: Sequence[dict[str, Any]]) -> tuple[float | None, ...]:
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
