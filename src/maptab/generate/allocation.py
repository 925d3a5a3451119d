"""How many route-planning OD pairs each map gets (SPEC 8; MapTab appendix B.4, Algorithm 1).

:func:`allocate_queries` runs Algorithm 1 ("Balanced City Query Distribution Strategy")
step by step:

Phase 1
    ``base = ⌊Q/3⌋``; the medium and hard groups get ``T = base``, the easy group
    ``T = Q - 2·base``.
Phase 2
    Per difficulty ``d``: ``target_train = ⌊0.8·T_d⌋`` and ``target_test = T_d -
    target_train``. Within each (difficulty, split) group, in input order, every map but the
    last gets ``max(round(n^α / W · target), Q_min)`` with ``n`` its station count and ``W =
    Σ n^α`` over the group (``round`` is Python's, halves to even); the last map takes what is
    left, so the group sums to its target exactly.
Phase 3 (the 4:1 ratio)
    The test excess ``E = Σ test - (Q - ⌊0.8·Q⌋)`` (``0.2·Q`` when ``Q`` is a multiple of 5;
    ``E`` is 0, 1 or 2) is taken from the last easy-test map and given back to the last
    medium-train and hard-train maps, ``⌈E/2⌉`` and ``⌊E/2⌋`` (the paper's ``E/2`` each, kept
    whole), the penultimate map standing in for a last one below ``Q_min``.

So the totals are exact: ``Σ q = Q``, ``Σ test = Q - ⌊0.8·Q⌋``, which is 1:4 of the train
total whenever ``Q`` is a multiple of 5 (``Q = 8000``: 6400 train / 1600 test).

Where the paper is silent, and only then, this module adds:

* **Minimum threshold** (the paper's step 7 promises no map below ``Q_min``): a map left
  below ``Q_min`` (a group's last map can even go negative after rounding) is topped up from
  the other maps of its group, the largest first, never taking one below ``Q_min``.
* **Capacity** (optional): a map that cannot hold its quota (too few eligible OD pairs) keeps
  its capacity and the excess goes to the other maps of its group, in proportion to ``n^α``.
* **Empty groups**: a (difficulty, split) group with no map hands its target to the non-empty
  groups of the same split, evenly (remainder to the easiest). If a split has no map at all,
  the other split takes all ``Q`` (no ratio is possible).

A group that cannot give each map ``Q_min`` (or fit within the capacities) raises
:class:`AllocationError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import floor

from maptab.errors import MaptabError
from maptab.generate.difficulty import LEVELS, SPLITS


class AllocationError(MaptabError):
    """The quotas cannot satisfy the constraints (too few queries for ``Q_min``, capacities…)."""


def _group_targets(
    Q: int, train_share: Fraction, present: dict[tuple[str, str], bool]
) -> dict[tuple[str, str], int]:
    """Phase 1 and the per-split targets of Phase 2, with empty groups folded in."""
    base = Q // 3
    totals = {"easy": Q - 2 * base, "medium": base, "hard": base}
    targets: dict[tuple[str, str], int] = {}
    for d in LEVELS:
        train = floor(totals[d] * train_share)
        targets[d, "train"] = train
        targets[d, "test"] = totals[d] - train
    for s in SPLITS:
        full = [d for d in LEVELS if present[d, s]]
        if len(full) == len(LEVELS):
            continue
        orphan = sum(targets[d, s] for d in LEVELS if not present[d, s])
        for d in LEVELS:
            if not present[d, s]:
                targets[d, s] = 0
        if not full:  # no map in this split: the other split takes everything
            other = SPLITS[1 - SPLITS.index(s)]
            ds = [d for d in LEVELS if present[d, other]]
            share, rest = divmod(orphan, len(ds))
            for k, d in enumerate(ds):
                targets[d, other] += share + (k < rest)
            continue
        share, rest = divmod(orphan, len(full))
        for k, d in enumerate(full):
            targets[d, s] += share + (k < rest)
    return targets


def _weighted_group(
    members: list[int], weights: Sequence[float], target: int, q_min: int, q: list[int]
) -> None:
    """Phase 2 inside one group: proportional shares, ``Q_min`` floor, last map takes the rest."""
    total = sum(weights[i] for i in members)
    assigned = 0
    for i in members[:-1]:
        q[i] = max(round(weights[i] / total * target), q_min)
        assigned += q[i]
    q[members[-1]] = target - assigned


def _top_up(members: list[int], q: list[int], q_min: int, label: str) -> None:
    """Raise maps below ``Q_min`` by taking from the group's largest quotas (paper step 7)."""
    for i in members:
        while q[i] < q_min:
            donor = max(members, key=lambda j: (q[j], -j))
            if donor == i or q[donor] <= q_min:
                raise AllocationError(
                    f"{label}: {sum(q[j] for j in members)} queries cannot give each of its "
                    f"{len(members)} maps at least q_min={q_min}"
                )
            move = min(q_min - q[i], q[donor] - q_min)
            q[donor] -= move
            q[i] += move


def _fit_capacity(
    members: list[int],
    weights: Sequence[float],
    capacity: Sequence[int],
    q: list[int],
    label: str,
) -> None:
    """Move quota above a map's capacity to the group's maps with room, in proportion to weight."""
    excess = 0
    for i in members:
        if q[i] > capacity[i]:
            excess += q[i] - capacity[i]
            q[i] = capacity[i]
    while excess:
        open_ = [i for i in members if q[i] < capacity[i]]
        if not open_:
            raise AllocationError(
                f"{label}: {excess} queries do not fit within the maps' capacities"
            )
        total = sum(weights[i] for i in open_)
        shares = {i: floor(excess * weights[i] / total) for i in open_}
        left = excess - sum(shares.values())
        for i in sorted(open_, key=lambda j: -weights[j])[:left]:
            shares[i] += 1
        for i in open_:
            add = min(shares[i], capacity[i] - q[i])
            q[i] += add
            excess -= add


def allocate_queries(
    sizes: Sequence[int],
    Q: int,
    alpha: float = 1.5,
    q_min: int = 5,
    *,
    levels: Sequence[str],
    splits: Sequence[str],
    capacity: Sequence[int] | None = None,
    train_share: float = 0.8,
) -> list[int]:
    """Query (OD pair) count per map, in input order, by Algorithm 1 (see module docstring).

    Parameters
    ----------
    sizes
        ``Vertex Numbers`` (station count) of each map; the weight is ``size ** alpha``.
    Q
        Total queries for the scenario (paper: 8000 metromap, 8400 travelmap).
    alpha, q_min
        Weighting exponent (1.5) and minimum per map (5).
    levels, splits
        Map difficulty (``easy``/``medium``/``hard``) and split (``train``/``test``) per map;
        "the last map" of a group is the last in input order.
    capacity
        Optional upper bound per map (e.g. its number of eligible OD pairs).
    train_share
        ``0.8`` gives the paper's 4:1 train:test query ratio.

    Returns a list of non-negative ints summing to ``Q``. Raises :class:`AllocationError`
    when the lists disagree in length, hold unknown labels or a size that is not positive, or
    the constraints cannot be met.

    >>> allocate_queries([10, 20, 30], 30, q_min=1, levels=["easy", "medium", "hard"],
    ...                  splits=["train", "train", "test"])
    [12, 12, 6]
    """
    n = len(sizes)
    if len(levels) != n or len(splits) != n or (capacity is not None and len(capacity) != n):
        raise AllocationError("sizes, levels, splits (and capacity) must have one entry per map")
    for what, values, allowed in (("level", levels, LEVELS), ("split", splits, SPLITS)):
        bad = sorted(set(values) - set(allowed))
        if bad:
            raise AllocationError(f"unknown {what} {bad[0]!r}; expected one of {allowed}")
    if Q < 0 or n == 0:
        raise AllocationError(f"cannot allocate Q={Q} queries over {n} maps")
    for i, size in enumerate(sizes):
        if not size > 0:
            raise AllocationError(f"map {i}: size {size!r} must be a positive station count")
    share = Fraction(str(train_share))
    weights = [float(s) ** alpha for s in sizes]
    groups = {
        (d, s): [i for i in range(n) if levels[i] == d and splits[i] == s]
        for d in LEVELS
        for s in SPLITS
    }
    targets = _group_targets(Q, share, {k: bool(v) for k, v in groups.items()})
    q = [0] * n
    for key, members in groups.items():
        if members:
            _weighted_group(members, weights, targets[key], q_min, q)

    # Phase 3: strict ratio — move the test excess from easy-test to medium/hard-train.
    givers = [d for d in ("easy", "medium", "hard") if groups[d, "test"]]
    takers = [d for d in ("medium", "hard", "easy") if groups[d, "train"]]
    excess = sum(q[i] for i in range(n) if splits[i] == "test") - (Q - floor(Q * share))
    if givers and takers and excess > 0:
        q[groups[givers[0], "test"][-1]] -= excess
        for k, amount in enumerate(((excess + 1) // 2, excess // 2)):
            members = groups[takers[k % len(takers)], "train"]
            v = members[-1]
            if q[v] + amount < q_min and len(members) > 1:
                v = members[-2]
            q[v] += amount

    for (d, s), members in groups.items():
        if not members:
            continue
        label = f"{d}/{s} group"
        _top_up(members, q, q_min, label)
        if capacity is not None:
            _fit_capacity(members, weights, capacity, q, label)
    return q
