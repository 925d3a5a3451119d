"""Benchmark: paper-compatible RP scoring (EMA/PMA/DS) of 1,000,000 predictions.

Compares, in the same run and on the same token lists:

* ``maptab.score.paper.paper_scores`` — the shipped implementation (match decision memoised
  per name pair);
* a straightforward implementation of the released scorer's rules that calls
  ``difflib.SequenceMatcher`` for every station pair it compares (the baseline).

The baseline runs on a prefix of the predictions (``--baseline N``, default 50,000) and its
time is extrapolated linearly to the full count (per-prediction work is independent); on
that prefix the two must give identical (EMA, PMA) for every prediction. Parsing is not
timed: both sides receive the same parsed tokens.

Synthetic data: 60 maps of 40-160 stations with names of 1-3 random words; gold routes of
4-16 stations (1-3 references per query, transfer marks on some inner stations);
predictions are the gold route, or it with one station misread (each map label has two
fixed misreadings, as a model misreads a given label consistently), a wrong station of the
map, a dropped or added transfer mark, truncated or extended.

Usage: ``python benchmarks/bench_score.py [--quick] [--n N] [--baseline N]``.
"""

from __future__ import annotations

import argparse
import random
import time
from difflib import SequenceMatcher

from maptab.score.paper import DIFFICULTY_LEVEL, paper_scores

SYLLABLES = ["ka", "lo", "mi", "ter", "san", "po", "ri", "del", "an", "ve", "gu", "shi", "on", "ba"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))).capitalize()


def _typo(rng: random.Random, s: str) -> str:
    j = rng.randrange(len(s))
    return s[:j] + rng.choice("aeiouxyz") + s[j + 1 :]


def make_data(n: int, seed: int = 0) -> list[tuple[list[str], list[list[str]], int]]:
    """``n`` (prediction tokens, reference tokens, difficulty points) triples."""
    rng = random.Random(seed)
    maps = []
    for _ in range(60):
        names = sorted(
            {
                " ".join(_word(rng) for _ in range(rng.randint(1, 3)))
                for _ in range(rng.randint(40, 160))
            }
        )
        # misreadings are per map and per label (a model misreads a label the same way)
        typos = {s: [_typo(rng, s) for _ in range(2)] for s in names}
        maps.append((names, typos))
    out = []
    for _ in range(n):
        names, typos = rng.choice(maps)
        refs = []
        base = rng.sample(names, rng.randint(4, 16))
        for _ in range(rng.randint(1, 3)):
            r = list(base)
            if rng.random() < 0.5:  # an alternative reference differing in the middle
                r[rng.randrange(1, len(r) - 1)] = rng.choice(names)
            marks = {i for i in range(1, len(r) - 1) if rng.random() < 0.2}
            refs.append([s + "(transfer)" if i in marks else s for i, s in enumerate(r)])
        pred = list(rng.choice(refs))
        kind = rng.random()
        if kind < 0.3:
            pass
        elif kind < 0.5:  # misread station name
            i = rng.randrange(len(pred))
            name = pred[i].removesuffix("(transfer)")
            pred[i] = rng.choice(typos[name]) + pred[i][len(name) :]
        elif kind < 0.65:  # wrong station
            pred[rng.randrange(len(pred))] = rng.choice(names)
        elif kind < 0.8:  # transfer mark flipped
            i = rng.randrange(1, len(pred) - 1)
            pred[i] = (
                pred[i].removesuffix("(transfer)")
                if pred[i].endswith("(transfer)")
                else pred[i] + "(transfer)"
            )
        elif kind < 0.9:
            pred = pred[: rng.randint(1, len(pred))]
        else:
            pred = [*pred, rng.choice(names)]
        points = rng.randint(1, 3) + rng.randint(1, 3)
        out.append((pred, refs, points))
    return out


def _naive_fuzzy(gold: str, answer: str) -> bool:
    return SequenceMatcher(None, gold.strip().lower(), answer.strip().lower()).ratio() >= 0.5


def naive_scores(pred: list[str], refs: list[list[str]]) -> tuple[int, float]:
    """The released scorer's rules with one ``SequenceMatcher`` per compared pair."""
    ema, best = 0, 0.0
    for ref in refs:
        k = 0
        while k < min(len(pred), len(ref)) and _naive_fuzzy(ref[k], pred[k]):
            k += 1
        if len(ref) == len(pred) and all(
            (g == p) if ("(transfer)" in g or "(transfer)" in p) else _naive_fuzzy(g, p)
            for g, p in zip(ref, pred, strict=True)
        ):
            ema = 1
        best = max(best, k / len(ref))
    return ema, round(best, 4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="100,000 predictions, baseline on 10,000")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--baseline", type=int, default=50_000)
    args = ap.parse_args()
    n, nb = (100_000, 10_000) if args.quick else (args.n, min(args.baseline, args.n))
    assert DIFFICULTY_LEVEL["hard"] == 3
    t0 = time.perf_counter()
    data = make_data(n)
    print(f"generated {n:,} predictions in {time.perf_counter() - t0:.1f} s")

    t0 = time.perf_counter()
    fast = [paper_scores(p, r) for p, r, _ in data]
    fast_s = time.perf_counter() - t0
    ds = sum(pts for (e, _), (_, _, pts) in zip(fast, data, strict=True) if e)

    t0 = time.perf_counter()
    slow = [naive_scores(p, r) for p, r, _ in data[:nb]]
    slow_s = time.perf_counter() - t0
    slow_full = slow_s * n / nb

    same = slow == fast[:nb]
    ema = sum(e for e, _ in fast) / n
    pma = sum(p for _, p in fast) / n
    print(f"EMA {100 * ema:.2f}%  PMA {100 * pma:.2f}%  DS {ds:,}")
    print(f"maptab  : {fast_s:8.2f} s for {n:,}  ({n / fast_s:,.0f} predictions/s)")
    print(
        f"baseline: {slow_s:8.2f} s for {nb:,}  → {slow_full:,.1f} s extrapolated to {n:,}"
        f"  ({nb / slow_s:,.0f} predictions/s)"
    )
    print(f"identical (EMA, PMA) on the {nb:,} baseline predictions: {same}")
    print(f"speed ratio: {slow_full / fast_s:.1f}x (target ≥ 10x)")
    if not same:
        raise SystemExit("numbers differ")


if __name__ == "__main__":
    main()
