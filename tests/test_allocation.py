"""Algorithm 1 of MapTab appendix B.4 (SPEC 8): hand-worked cases, paper scale, properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.generate.allocation import AllocationError, allocate_queries
from maptab.generate.difficulty import split_maps, tercile_levels

SIX_GROUPS = (
    ["easy", "easy", "medium", "medium", "hard", "hard"],
    ["train", "test", "train", "test", "train", "test"],
)


def test_phase3_moves_the_test_excess():
    # Q=100: base 33 → T = 34/33/33; train ⌊27.2⌋=27, ⌊26.4⌋=26, 26; test 7, 7, 7 → 21.
    # Goal 100 - ⌊80⌋ = 20 → E = 1: easy-test 7 → 6, medium-train 26 → 27 (⌈1/2⌉), hard +0.
    q = allocate_queries([10] * 6, 100, levels=SIX_GROUPS[0], splits=SIX_GROUPS[1])
    assert q == [27, 6, 27, 7, 26, 7]


def test_weighted_shares_round_and_last_takes_the_rest():
    # Q=300: every T = 100 → train 80, test 20 (test total 60 = goal, E = 0).
    # easy-train sizes 4, 9, 16 → weights 8, 27, 64 (W = 99):
    # 8/99·80 = 6.46 → 6; 27/99·80 = 21.8 → 22; last = 80 - 28 = 52.
    levels = ["easy"] * 4 + ["medium", "medium", "hard", "hard"]
    splits = ["train", "train", "train", "test", "train", "test", "train", "test"]
    q = allocate_queries([4, 9, 16, 1, 1, 1, 1, 1], 300, levels=levels, splits=splits)
    assert q == [6, 22, 52, 20, 80, 20, 80, 20]


def test_last_map_below_minimum_is_topped_up_from_the_largest():
    # easy-train target 80, sizes 100, 100, 1 → weights 1000, 1000, 1:
    # 1000/2001·80 = 39.98 → 40 twice; last = 0 < 5 → take 5 from the first largest (40 → 35).
    levels = ["easy"] * 3 + ["easy", "medium", "medium", "hard", "hard"]
    splits = ["train"] * 3 + ["test", "train", "test", "train", "test"]
    q = allocate_queries([100, 100, 1, 1, 1, 1, 1, 1], 300, levels=levels, splits=splits)
    assert q[:3] == [35, 40, 5]
    assert sum(q) == 300


def test_empty_groups_pass_their_target_within_the_split():
    # T = 10 each; train 8, test 2. Test maps only in hard: 2+2+2 = 6. Train maps in easy and
    # medium: 8 + 8 + the orphan 8 split evenly → 12, 12.
    q = allocate_queries(
        [10, 20, 30],
        30,
        q_min=1,
        levels=["easy", "medium", "hard"],
        splits=["train", "train", "test"],
    )
    assert q == [12, 12, 6]


def test_a_split_without_maps_takes_no_ratio():
    q = allocate_queries([5, 6, 7], 90, levels=["easy", "medium", "hard"], splits=["train"] * 3)
    assert q == [30, 30, 30]


def test_capacity_moves_excess_to_the_group():
    levels = ["easy", "easy", "easy", "easy", "medium", "medium", "hard", "hard"]
    splits = ["train", "train", "train", "test", "train", "test", "train", "test"]
    sizes = [4, 9, 16, 1, 1, 1, 1, 1]
    free = allocate_queries(sizes, 300, levels=levels, splits=splits)
    capped = allocate_queries(
        sizes, 300, levels=levels, splits=splits, capacity=[99, 99, 40] + [99] * 5
    )
    assert free[2] == 52 and capped[2] == 40
    assert capped[0] + capped[1] == free[0] + free[1] + 12
    assert sum(capped) == 300


def test_bad_input_gets_clear_errors():
    with pytest.raises(AllocationError, match="one entry per map"):
        allocate_queries([1, 2], 10, levels=["easy"], splits=["train", "test"])
    with pytest.raises(AllocationError, match="unknown level 'tough'"):
        allocate_queries([1], 10, levels=["tough"], splits=["train"])
    with pytest.raises(AllocationError, match="q_min=5"):
        allocate_queries([1] * 6, 20, levels=SIX_GROUPS[0], splits=SIX_GROUPS[1])
    with pytest.raises(AllocationError, match="map 1: size 0 must be a positive station count"):
        allocate_queries([3, 0], 10, q_min=1, levels=["easy"] * 2, splits=["train"] * 2)
    with pytest.raises(AllocationError, match="map 0: size -4 must be"):
        allocate_queries([-4, 9], 10, q_min=1, levels=["easy"] * 2, splits=["train"] * 2)
    with pytest.raises(AllocationError, match="capacities"):
        allocate_queries([1, 1], 30, levels=["easy"] * 2, splits=["train"] * 2, capacity=[5, 5])


@pytest.mark.parametrize(("n_maps", "Q", "lo", "hi"), [(160, 8000, 15, 450), (168, 8400, 10, 40)])
def test_paper_scale_totals_and_ratio(n_maps, Q, lo, hi):
    rng = np.random.default_rng(n_maps)
    sizes = [int(x) for x in rng.integers(lo, hi + 1, size=n_maps)]
    scores = [s + float(rng.random()) for s in sizes]
    levels, splits = tercile_levels(scores), split_maps(scores, seed=3)
    q = allocate_queries(sizes, Q, 1.5, 5, levels=levels, splits=splits)
    test = sum(x for x, s in zip(q, splits, strict=True) if s == "test")
    assert sum(q) == Q
    assert (Q - test) == 4 * test  # 6400:1600 and 6720:1680
    assert min(q) >= 5
    targets = (Q - 2 * (Q // 3), Q // 3, Q // 3)
    for level, target in zip(("easy", "medium", "hard"), targets, strict=True):
        got = sum(x for x, lv in zip(q, levels, strict=True) if lv == level)
        assert abs(got - target) <= 2  # only Phase 3 moves queries between difficulties


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(5, 400),
            st.sampled_from(["easy", "medium", "hard"]),
            st.sampled_from(["train", "test"]),
        ),
        min_size=2,
        max_size=30,
    ).filter(lambda rows: {r[2] for r in rows} == {"train", "test"}),
    st.integers(0, 40),
)
def test_properties(rows, extra):
    sizes, levels, splits = (list(x) for x in zip(*rows, strict=True))
    Q = 5 * (30 * len(rows) + extra)  # a multiple of 5, ample for q_min everywhere
    q = allocate_queries(sizes, Q, levels=levels, splits=splits)
    assert sum(q) == Q
    test = sum(x for x, s in zip(q, splits, strict=True) if s == "test")
    assert Q - test == 4 * test
    assert min(q) >= 5
    assert q == allocate_queries(sizes, Q, levels=levels, splits=splits)
