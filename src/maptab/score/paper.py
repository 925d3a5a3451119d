"""Paper-compatible route metrics EMA, PMA and DS (SPEC 13; MapTab appendix C.1).

Definitions, on station tokens (a route string split at ``-``; a transfer station is written
``Name(transfer)``):

* **station match** — after lower-casing and stripping both names: when either carries
  ``(transfer)`` they must be identical; otherwise they match when
  ``difflib.SequenceMatcher(None, a, b).ratio() >= 0.5``.
* **EMA** (exact match accuracy) — 1 if the prediction has the same length as some reference
  and matches it station by station, else 0.
* **PMA** (partial match accuracy) — for a reference of length ``n``, the number ``k`` of
  leading stations matched before the first mismatch (or the end of either route), as
  ``k / n``; the best over the references.
* **DS** (difficulty-aware score) — per sample, ``level(map) + level(query)`` with Easy=1,
  Medium=2, Hard=3 when EMA is 1, else 0; a run's DS is the sum over its samples.

An unparseable prediction scores EMA 0, PMA 0, DS 0.

Speed: the match decision of every ``(a, b)`` name pair is memoised in a dict (a map's
vocabulary is small, so a million predictions touch a few thousand distinct pairs); the
numbers are identical to calling ``SequenceMatcher`` per pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

__all__ = [
    "DIFFICULTY_LEVEL",
    "difficulty_score",
    "ema",
    "matching_references",
    "paper_scores",
    "pma",
    "reference_tokens",
    "station_match",
]

DIFFICULTY_LEVEL = {"easy": 1, "medium": 2, "middle": 2, "hard": 3}
_MARK = "(transfer)"
_MATCH_CACHE: dict[tuple[str, str], bool] = {}
_CACHE_LIMIT = 2_000_000


def _match_uncached(a: str, b: str) -> bool:
    a, b = a.strip().lower(), b.strip().lower()
    if _MARK in a or _MARK in b:
        return a == b
    # ratio = 2M/T with M matched characters and T = len(a) + len(b), so ratio >= 0.5 iff
    # 4M >= T. M is at most the shorter length and at most the size of the multiset
    # intersection of the characters (difflib's quick_ratio bound): reject early on either.
    total = len(a) + len(b)
    if 4 * min(len(a), len(b)) < total:
        return False
    if 4 * sum(min(a.count(c), b.count(c)) for c in set(a)) < total:
        return False
    return SequenceMatcher(None, a, b).ratio() >= 0.5


def station_match(a: str, b: str) -> bool:
    """Whether two station tokens match under the paper's lenient rule (module docstring)."""
    key = (a, b)
    hit = _MATCH_CACHE.get(key)
    if hit is None:
        if len(_MATCH_CACHE) >= _CACHE_LIMIT:
            _MATCH_CACHE.clear()
        hit = _MATCH_CACHE[key] = _match_uncached(a, b)
    return hit


def reference_tokens(route: str) -> list[str]:
    """Tokens of a gold MapTab route string (``A-B(transfer)-C`` → three tokens)."""
    return [t.strip() for t in route.split("-")]


def _prefix(pred: Sequence[str], ref: Sequence[str]) -> int:
    """Number of leading positions where ``pred`` and ``ref`` match (the hot loop)."""
    cache = _MATCH_CACHE
    k = 0
    for a, b in zip(pred, ref, strict=False):
        if a != b:  # identical strings always match (ratio 1, or identical marks)
            hit = cache.get((a, b))
            if hit is None:
                hit = station_match(a, b)
            if not hit:
                break
        k += 1
    return k


def paper_scores(pred: Sequence[str] | None, refs: Sequence[Sequence[str]]) -> tuple[int, float]:
    """``(EMA, PMA)`` of predicted tokens against tokenised references in one pass."""
    if not pred or not refs:
        return 0, 0.0
    best = 0.0
    n = len(pred)
    for ref in refs:
        m = len(ref)
        if not m:
            continue
        if m == n and pred == ref:
            return 1, 1.0
        k = _prefix(pred, ref)
        if k == m == n:
            return 1, 1.0
        best = max(best, k / m)
    return 0, best


def matching_references(pred: Sequence[str] | None, refs: Sequence[Sequence[str]]) -> list[int]:
    """Indices of the tokenised references that ``pred`` matches exactly (EMA 1 for each)."""
    if not pred:
        return []
    return [i for i, ref in enumerate(refs) if len(ref) == len(pred) == _prefix(pred, ref)]


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
