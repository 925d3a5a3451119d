"""Columns (maptab.score.metrics): grouping and columns against a plain-Python reference,
and the bootstrap's remembered draws against fresh ones (SPEC 13)."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.score import bootstrap as stats
from maptab.score.metrics import Columns

_VALUES = st.one_of(st.none(), st.sampled_from(["a", "b", "1", "easy"]), st.integers(0, 2))
_ROWS = st.lists(
    st.fixed_dictionaries(
        {
            "map_id": st.sampled_from(["m0", "m1", "m2"]),
            "k": _VALUES,
            "j": _VALUES,
            "x": st.one_of(st.none(), st.booleans(), st.floats(-5, 5, allow_nan=False)),
        }
    ),
    max_size=40,
)


def _reference(rows, idx, key):
    out = defaultdict(list)
    for i in idx:
        k = key(rows[i])
        if k is not None:
            out[str(k)].append(i)
    return dict(sorted(out.items()))


@settings(max_examples=examples(300), deadline=None)
@given(rows=_ROWS, data=st.data())
def test_groups_match_the_plain_loop(rows, data) -> None:
    c = Columns(rows)
    idx = np.asarray(
        data.draw(st.lists(st.integers(0, max(0, len(rows) - 1)), unique=True, max_size=len(rows)))
        if rows
        else [],
        dtype=np.intp,
    )
    for key, ref_key in (
        ("k", lambda r: r["k"]),
        (("k", "j"), lambda r: f"{r['k']}/{r['j']}"),
        (lambda r: r["j"], lambda r: r["j"]),
    ):
        got = {name: g.tolist() for name, g in c.groups(idx, key).items()}
        assert got == _reference(rows, idx.tolist(), ref_key)
        assert list(got) == sorted(got)


@settings(max_examples=examples(200), deadline=None)
@given(rows=_ROWS)
def test_column_is_floats_with_nan_for_none(rows) -> None:
    col = Columns(rows)["x"]
    assert col.dtype == float and col.shape == (len(rows),)
    for v, r in zip(col.tolist(), rows, strict=True):
        assert (math.isnan(v) and r["x"] is None) or v == float(r["x"])


def test_remembered_draws_equal_fresh_draws() -> None:
    rng = np.random.default_rng(3)
    x = rng.random(500)
    clusters = rng.integers(0, 7, size=500)
    stats._DRAWS.clear()
    first = stats.bootstrap_ci(x, clusters=clusters, n_boot=500)
    assert (0, 500, 7) in stats._DRAWS
    again = stats.bootstrap_ci(x, clusters=clusters, n_boot=500)
    stats._DRAWS.clear()
    fresh = stats.bootstrap_ci(x, clusters=clusters, n_boot=500)
    assert first == again == fresh
    # sparse cluster numbers give the interval of the compacted ones
    assert stats.bootstrap_ci(x, clusters=clusters * 5 + 2, n_boot=500) == fresh


@settings(max_examples=examples(100), deadline=None)
@given(
    values=st.lists(st.floats(0, 1), min_size=2, max_size=60),
    seed=st.integers(0, 3),
    maps=st.integers(1, 6),
    weighted=st.booleans(),
)
def test_remembered_denominators_give_the_fresh_interval(values, seed, maps, weighted) -> None:
    """An interval whose replicate denominators were remembered (another metric over the
    same rows computed them) is the one computed with none remembered, to the bit."""
    x = np.asarray(values)
    clusters = np.arange(x.size) % maps
    w = (np.arange(x.size) % 3 + 1.0) if weighted else None
    stats._DENS.clear()
    fresh = stats.bootstrap_ci(x, clusters=clusters, weights=w, n_boot=300, seed=seed)
    assert stats._DENS or maps == 1 or len(set(clusters.tolist())) == 1
    other = stats.bootstrap_ci(1 - x, clusters=clusters, weights=w, n_boot=300, seed=seed)
    again = stats.bootstrap_ci(x, clusters=clusters, weights=w, n_boot=300, seed=seed)
    stats._DENS.clear()
    assert again == fresh
    assert other == stats.bootstrap_ci(1 - x, clusters=clusters, weights=w, n_boot=300, seed=seed)
    # the per-chunk path (draw matrices too large to keep) gives the same floats
    kept = stats._kept_draws
    stats._kept_draws = lambda n_boot, c: False  # type: ignore[assignment]
    try:
        assert stats.bootstrap_ci(x, clusters=clusters, weights=w, n_boot=300, seed=seed) == fresh
    finally:
        stats._kept_draws = kept  # type: ignore[assignment]
