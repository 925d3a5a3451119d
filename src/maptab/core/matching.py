"""The papers' fuzzy station-name rule (SPEC 13), shared by every stage that applies it.

MapTab's released scorer counts a predicted token ``p`` as the reference token ``g`` when
``difflib.SequenceMatcher(None, g', p').ratio() >= 0.5``, where ``'`` is strip + lower-case
and the reference is the first sequence (``ratio`` is not symmetric). The scorer's EMA/PMA
(:mod:`maptab.score.paper`) and the renderer's label variants (a map label must still match
its table name, :mod:`maptab.render.style`) both use :func:`station_match`.

Speed: decisions are memoised in :data:`MATCH_CACHE` (a map's vocabulary is small), and two
exact upper bounds of the ratio reject pairs before ``SequenceMatcher`` runs; the result is
identical to calling ``SequenceMatcher`` per pair.
"""

from __future__ import annotations

from difflib import SequenceMatcher

__all__ = ["MATCH_CACHE", "MATCH_THRESHOLD", "station_match"]

MATCH_THRESHOLD = 0.5
#: ``(reference, prediction) -> decision``; cleared when it reaches :data:`_CACHE_LIMIT`.
MATCH_CACHE: dict[tuple[str, str], bool] = {}
_CACHE_LIMIT = 2_000_000


def _match_uncached(ref: str, pred: str) -> bool:
    a, b = ref.strip().lower(), pred.strip().lower()
    # ratio = 2M/T with M matched characters and T = len(a) + len(b), so ratio >= 0.5 iff
    # 4M >= T. M is at most the shorter length and at most the size of the multiset
    # intersection of the characters (difflib's quick_ratio bound): reject early on either.
    total = len(a) + len(b)
    if 4 * min(len(a), len(b)) < total:
        return False
    if 4 * sum(min(a.count(c), b.count(c)) for c in set(a)) < total:
        return False
    return SequenceMatcher(None, a, b).ratio() >= MATCH_THRESHOLD


def station_match(ref: str, pred: str) -> bool:
    """Whether ``pred`` matches the reference ``ref`` under the released fuzzy rule."""
    key = (ref, pred)
    hit = MATCH_CACHE.get(key)
    if hit is None:
        if len(MATCH_CACHE) >= _CACHE_LIMIT:
            MATCH_CACHE.clear()
        hit = MATCH_CACHE[key] = _match_uncached(ref, pred)
    return hit
