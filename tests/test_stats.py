"""Bootstrap intervals and paired differences (SPEC 13)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.score.bootstrap import bootstrap_ci, paired_difference


def test_mean_and_determinism() -> None:
    vals = [1, 0, 1, 1, 0, 1, 0, 1]
    m, lo, hi = bootstrap_ci(vals)
    assert m == pytest.approx(5 / 8)
    assert lo <= m <= hi and lo >= 0 and hi <= 1
    assert bootstrap_ci(vals) == (m, lo, hi)
    cont = np.random.default_rng(1).random(50)
    assert bootstrap_ci(cont, seed=1) != bootstrap_ci(cont, seed=2)


def test_edge_cases() -> None:
    assert all(math.isnan(x) for x in bootstrap_ci([]))
    assert bootstrap_ci([0.3]) == (0.3, 0.3, 0.3)
    assert bootstrap_ci([1, 0, 1], clusters=["m", "m", "m"]) == pytest.approx((2 / 3,) * 3)
    with pytest.raises(ValueError):
        bootstrap_ci([1, 2], clusters=["a"])
    with pytest.raises(ValueError):
        bootstrap_ci([1, 2], level=1.5)
    with pytest.raises(ValueError):
        paired_difference([1], [1, 2])


def test_interval_matches_normal_approximation() -> None:
    rng = np.random.default_rng(3)
    vals = rng.random(4000) < 0.3
    m, lo, hi = bootstrap_ci(vals.astype(float))
    se = math.sqrt(m * (1 - m) / vals.size)
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_clustered_interval_is_wider_for_correlated_samples() -> None:
    # 20 maps; every query of a map has that map's outcome (perfectly correlated)
    vals, clusters = [], []
    for m in range(20):
        outcome = float(m % 3 == 0)
        vals += [outcome] * 30
        clusters += [f"map{m}"] * 30
    _, lo_c, hi_c = bootstrap_ci(vals, clusters=clusters)
    _, lo_i, hi_i = bootstrap_ci(vals)
    assert hi_c - lo_c > 3 * (hi_i - lo_i)


def test_weights_give_weighted_mean() -> None:
    vals = [1, 0, 0, 1]
    w = [3, 1, 1, 1]
    m, lo, hi = bootstrap_ci(vals, weights=w, clusters=["a", "a", "b", "c"])
    assert m == pytest.approx(4 / 6)
    assert lo <= m <= hi


def test_paired_difference_detects_real_gain_not_noise() -> None:
    rng = np.random.default_rng(0)
    base = (rng.random(600) < 0.5).astype(float)
    better = base.copy()
    flip = np.flatnonzero(base == 0)[:60]  # 60 of 600 samples fixed, nothing broken
    better[flip] = 1
    clusters = [f"m{i % 30}" for i in range(600)]
    d, lo, hi = paired_difference(better, base, clusters=clusters)
    assert d == pytest.approx(0.1) and lo > 0
    # same accuracy, shuffled outcomes: the interval contains 0
    noise = rng.permutation(base)
    d, lo, hi = paired_difference(noise, base, clusters=clusters)
    assert lo < 0 < hi


def test_interval_contains_estimate_when_every_map_has_the_same_rate() -> None:
    # every map has rate 2.7, so every replicate is 2.7; the weighted point estimate sums
    # in another order (naively 2.7000000000000006, outside [2.7, 2.7])
    m, lo, hi = bootstrap_ci([2.7, 2.7, 2.7], clusters=[0, 4, 4], weights=[1 / 3, 1, 1])
    assert lo <= m <= hi
    assert lo == m == hi
    # capability accuracy (paper Table 3): weights 1/n(type), every map at 1/2
    vals = [1, 0, 1, 0, 0, 1, 1, 0]
    types = [1, 1, 2, 2, 3, 3, 3, 3]
    w = [1 / types.count(t) for t in types]
    m, lo, hi = bootstrap_ci(vals, clusters=[0, 0, 1, 1, 2, 2, 3, 3], weights=w)
    assert lo <= m <= hi


@settings(max_examples=examples(300), deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 7),
            st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 0.1, 2.7, -0.2]),
            st.sampled_from([1.0, 1 / 3, 1 / 7, 2.5, 0.1]),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_interval_always_contains_its_estimate(rows: list[tuple[int, float, float]]) -> None:
    clusters, vals, w = (list(c) for c in zip(*rows, strict=True))
    m, lo, hi = bootstrap_ci(vals, clusters=clusters, weights=w, n_boot=200)
    assert lo <= m <= hi
    d, lo, hi = paired_difference(vals, w, clusters=clusters, n_boot=200)
    assert lo <= d <= hi
