"""Paper-compatible route metrics EMA, PMA and DS (SPEC 13), as MapTab's released scorer
(``src/evaluate_planning.py``) computes them on an extracted route.

The released rules, on station tokens (a route string split at every ``-``, nothing
stripped; a transfer station is written ``Name(transfer)``):

* **fuzzy match** of a reference token ``g`` and a predicted token ``p`` —
  ``difflib.SequenceMatcher(None, g', p').ratio() >= 0.5`` where ``'`` is strip + lower-case.
  The reference is the first sequence (``ratio`` is not symmetric). A ``(transfer)`` mark is
  just characters here.
* **EMA** (exact match accuracy) — 1 if some reference has the prediction's length and every
  position matches: a position where either raw token contains the literal ``(transfer)``
  (case-sensitive) needs the raw tokens to be identical (no strip, no lower-case); any other
  position needs the fuzzy match.
* **PMA** (partial match accuracy) — for a reference of length ``n``, the number ``k`` of
  leading positions that fuzzy-match (marks ignored as marks), as ``k / n``; the best over
  the references, rounded to 4 decimals as the released scorer stores it.
* **DS** (difficulty-aware score) — per sample, ``level(map) + level(query)`` with Easy=1,
  Medium=2, Hard=3 when EMA is 1, else 0; a run's DS is the sum over its samples.

An unparseable prediction scores EMA 0, PMA 0, DS 0. docs/reference/metrics.md lists where maptab's
``paper`` numbers can still differ from the released script (answer extraction).

The fuzzy rule itself is :func:`maptab.core.matching.station_match` (memoised, with exact early
rejections), shared with the renderer's label variants.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from maptab.core.matching import MATCH_CACHE, station_match

__all__ = [
    "DIFFICULTY_LEVEL",
    "difficulty_score",
    "ema",
    "exact_token_match",
    "matching_references",
    "paper_scores",
    "pma",
    "reference_tokens",
    "station_match",
]

DIFFICULTY_LEVEL = {"easy": 1, "medium": 2, "middle": 2, "hard": 3}
PMA_DIGITS = 4
_MARK = "(transfer)"


def exact_token_match(ref: str, pred: str) -> bool:
    """EMA's rule for one position: raw identity when either token carries ``(transfer)``,
    else the fuzzy rule."""
    if ref == pred:
        return True
    if _MARK in ref or _MARK in pred:
        return False
    return station_match(ref, pred)


def reference_tokens(route: str) -> list[str]:
    """Tokens of a route string as the released scorer splits it (``A-B(transfer)-C`` → three
    tokens; every ``-`` splits, nothing is stripped)."""
    return route.split("-")


def _prefix(ref: Sequence[str], pred: Sequence[str]) -> int:
    """Number of leading positions where ``ref`` and ``pred`` fuzzy-match (the hot loop)."""
    cache = MATCH_CACHE
    k = 0
    for a, b in zip(ref, pred, strict=False):
        if a != b:  # identical strings always match (ratio 1)
            hit = cache.get((a, b))
            if hit is None:
                hit = station_match(a, b)
            if not hit:
                break
        k += 1
    return k


def _exact(ref: Sequence[str], pred: Sequence[str], k: int) -> bool:
    """EMA for one reference, given ``k`` leading fuzzy matches: same length, all positions
    fuzzy-matched, and no position where a mark demands identity but the tokens differ."""
    if not (k == len(ref) == len(pred)):
        return False
    return all(
        a == b or (_MARK not in a and _MARK not in b) for a, b in zip(ref, pred, strict=True)
    )


def paper_scores(pred: Sequence[str] | None, refs: Sequence[Sequence[str]]) -> tuple[int, float]:
    """``(EMA, PMA)`` of predicted tokens against tokenised references in one pass."""
    if not pred or not refs:
        return 0, 0.0
    best = 0.0
    for ref in refs:
        m = len(ref)
        if not m:
            continue
        k = _prefix(ref, pred)
        if _exact(ref, pred, k):
            return 1, 1.0  # EMA 1 implies every position fuzzy-matches: PMA 1
        best = max(best, k / m)
    return 0, round(best, PMA_DIGITS)


def matching_references(pred: Sequence[str] | None, refs: Sequence[Sequence[str]]) -> Iterator[int]:
    """Indices of the tokenised references that ``pred`` matches exactly (EMA 1 for each),
    in order, each found when asked for."""
    if not pred:
        return
    for i, ref in enumerate(refs):
        if _exact(ref, pred, _prefix(ref, pred)):
            yield i


def _tokens(pred: str | Sequence[str] | None) -> Sequence[str] | None:
    return reference_tokens(pred) if isinstance(pred, str) else pred


def ema(pred: str | Sequence[str] | None, refs: Sequence[str]) -> int:
    """EMA of a prediction (route string or tokens) against gold route strings ``refs``."""
    return paper_scores(_tokens(pred), [reference_tokens(r) for r in refs])[0]


def pma(pred: str | Sequence[str] | None, refs: Sequence[str]) -> float:
    """PMA of a prediction (route string or tokens) against gold route strings ``refs``."""
    return paper_scores(_tokens(pred), [reference_tokens(r) for r in refs])[1]


def difficulty_score(ema_value: int, map_difficulty: str, query_difficulty: str) -> int:
    """DS contribution of one sample: ``level(map) + level(query)`` if EMA is 1, else 0.

    Raises ``ValueError`` on a difficulty label other than easy/medium (middle)/hard.
    """
    if not ema_value:
        return 0
    try:
        return DIFFICULTY_LEVEL[map_difficulty.lower()] + DIFFICULTY_LEVEL[query_difficulty.lower()]
    except (KeyError, AttributeError):
        raise ValueError(
            f"unknown difficulty {map_difficulty!r}/{query_difficulty!r}; expected Easy, Medium or Hard"
        ) from None
