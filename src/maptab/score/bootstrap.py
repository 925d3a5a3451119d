"""Confidence intervals for headline numbers and paired comparisons of runs (SPEC 13).

Every interval is a percentile bootstrap. Samples that share a map are not independent (one
map's difficulty moves all its queries together), so when ``clusters`` (the ``map_id`` of
each sample) is given the bootstrap resamples *maps* with replacement and recomputes the
ratio estimator ``Σ w·x / Σ w`` over the samples of the drawn maps (the cluster bootstrap).
Without ``clusters`` every sample is its own cluster. Results are deterministic for a given
``seed``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np

__all__ = ["bootstrap_ci", "paired_difference"]

_CHUNK_CELLS = 4_000_000  # bound on one (replicates × clusters) draw matrix
_ROUNDING = 1e-9  # relative tolerance below which a replicate equals the estimate


def _cluster_sums(
    values: np.ndarray, weights: np.ndarray, clusters: Sequence[object] | None
) -> tuple[np.ndarray, np.ndarray]:
    if clusters is None:
        return values * weights, weights
    if len(clusters) != len(values):
        raise ValueError(f"clusters has {len(clusters)} entries for {len(values)} values")
    if isinstance(clusters, np.ndarray) and clusters.dtype.kind in "iu" and clusters.size:
        if clusters.min() >= 0:  # the clusters present, in ascending order (as np.unique)
            present = np.bincount(clusters) > 0
            return (
                np.bincount(clusters, weights=values * weights)[present],
                np.bincount(clusters, weights=weights)[present],
            )
        _, codes = np.unique(clusters, return_inverse=True)
    else:
        index: dict[object, int] = {}
        codes = np.fromiter(
            (index.setdefault(c, len(index)) for c in clusters), dtype=np.intp, count=len(clusters)
        )
    return (
        np.bincount(codes, weights=values * weights),
        np.bincount(codes, weights=weights),
    )


_DRAWS_KEPT = 16  # draw matrices remembered (a summary asks for a few cluster counts)
_DRAWS: dict[tuple[int, int, int], list[tuple[int, np.ndarray]]] = {}


def _kept_draws(n_boot: int, c: int) -> bool:
    """Whether the ``n_boot × c`` draw matrix is small enough to keep."""
    return n_boot * c <= _CHUNK_CELLS // 4


def _draws(seed: int, n_boot: int, c: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(first replicate, cluster draws)`` chunks of the ``n_boot × c`` resampling matrix
    of ``seed``: the same numbers for the same arguments, so the matrices of small cluster
    counts (a summary computes hundreds of intervals over a few counts) are drawn once."""
    key = (seed, n_boot, c)
    kept = _DRAWS.get(key)
    if kept is not None:
        yield from kept
        return
    rng = np.random.default_rng(seed)
    step = max(1, _CHUNK_CELLS // c)
    keep = _kept_draws(n_boot, c)
    chunks = []
    for start in range(0, n_boot, step):
        idx = rng.integers(0, c, size=(min(step, n_boot - start), c))
        if keep:
            chunks.append((start, idx))
        yield start, idx
    if keep:
        if len(_DRAWS) >= _DRAWS_KEPT:
            _DRAWS.pop(next(iter(_DRAWS)))
        _DRAWS[key] = chunks


_DENS_KEPT = 256  # replicate denominators remembered (one per distinct weight-per-map vector)
_DENS: dict[tuple[int, int, bytes], np.ndarray] = {}


def _denominators(seed: int, n_boot: int, counts: np.ndarray) -> np.ndarray:
    """``Σ w`` of each replicate of :func:`bootstrap_ci` for the per-cluster weight sums
    ``counts``: the same sums for the same draws, so they are computed once for every
    metric of a summary over the same rows (one group's shares all divide by the sizes of
    its maps), in the same order as before (the same floats). Only for draw matrices that
    :func:`_draws` keeps (small ones: a summary's map counts), so none is drawn twice."""
    key = (seed, n_boot, counts.tobytes())
    dens = _DENS.get(key)
    if dens is None:
        dens = np.empty(n_boot)
        for start, idx in _draws(seed, n_boot, counts.size):
            dens[start : start + idx.shape[0]] = counts[idx].sum(axis=1)
        if len(_DENS) >= _DENS_KEPT:
            _DENS.pop(next(iter(_DENS)))
        _DENS[key] = dens
    return dens


def bootstrap_ci(
    values: Sequence[float],
    *,
    clusters: Sequence[object] | None = None,
    weights: Sequence[float] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """``(mean, lo, hi)``: the (weighted) mean of ``values`` and its percentile bootstrap
    interval at ``level``, resampling clusters when ``clusters`` is given.

    ``weights`` (non-negative, default 1) give the weighted mean ``Σ w·x / Σ w`` used for
    difficulty-weighted scores. Empty input gives ``(nan, nan, nan)``; a single cluster gives
    a zero-width interval. Raises ``ValueError`` on mismatched lengths or a bad ``level``.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    x = np.asarray(values, dtype=float)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != x.shape:
        raise ValueError(f"weights has {w.size} entries for {x.size} values")
    if x.size == 0 or w.sum() <= 0:
        return (math.nan, math.nan, math.nan)
    mean = float((x * w).sum() / w.sum())
    sums, counts = _cluster_sums(x, w, clusters)
    c = sums.size
    if c == 1:
        return (mean, mean, mean)
    stats = np.empty(n_boot)
    dens = _denominators(seed, n_boot, counts) if _kept_draws(n_boot, c) else None
    for start, idx in _draws(seed, n_boot, c):
        m = idx.shape[0]
        num = sums[idx].sum(axis=1)
        den = counts[idx].sum(axis=1) if dens is None else dens[start : start + m]
        with np.errstate(invalid="ignore", divide="ignore"):
            stats[start : start + m] = num / den
    stats = stats[np.isfinite(stats)]
    # A replicate sums the cluster totals in another order than the point estimate does, so
    # one that equals the estimate in exact arithmetic (e.g. every replicate, when all
    # clusters share one rate) can land a rounding error to either side of it; without
    # this, a degenerate interval could exclude its own estimate ([0.5, 0.5] around
    # 0.5000000000000001). Snap such replicates onto the estimate.
    tol = _ROUNDING * max(1.0, float(np.abs(x).max()))
    stats[np.abs(stats - mean) <= tol] = mean
    alpha = (1 - level) / 2
    lo, hi = np.quantile(stats, [alpha, 1 - alpha])
    return (mean, float(lo), float(hi))


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    clusters: Sequence[object] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """``(diff, lo, hi)``: mean of ``a − b`` over the same samples (two runs scored on one
    sample list, aligned by position) with its bootstrap interval, resampling the *pairs*
    (by cluster when given). An interval excluding 0 is a gain beyond resampling noise.
    """
    if len(a) != len(b):
        raise ValueError(f"paired runs differ in length: {len(a)} vs {len(b)}")
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return bootstrap_ci(d, clusters=clusters, n_boot=n_boot, seed=seed, level=level)
