"""The one cache policy for derived tables (cost tables, solvers, station indexes, ...).

Work derived from a map (a :class:`~maptab.solver.Solver`, a cost table, a station index) is
reused while the *same object* is asked again, so per-route calls on one map do not rebuild
it. Every such memo in maptab is one of the two classes here, with one rule:

* bounded: at most ``maxsize`` entries; when full, the least recently used entry is dropped;
* identity-keyed (:class:`IdentityCache`): keyed by ``id(obj)`` plus an optional extra key,
  and the entry holds ``obj`` itself, so the id cannot be reused by another object while the
  entry lives and a hit is checked with ``is``. A mutated object is *not* noticed: callers put
  whatever they derive from (sizes, inner ids) into the extra key.

Caching never changes a result, only how often it is computed. Not thread-safe (maptab
scores and builds in one thread per process).

:func:`fewer_collections` is the other half of that policy: the long loops that fill these
memos (a run) raise the cyclic garbage collector's thresholds while they work; scoring, which
forms no reference cycles, turns the collector off (:func:`no_collections`).
"""

from __future__ import annotations

import gc
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

__all__ = [
    "FEWER_COLLECTIONS",
    "IdentityCache",
    "KeyedCache",
    "fewer_collections",
    "no_collections",
]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
O = TypeVar("O")  # noqa: E741


_MISSING = object()


class KeyedCache(Generic[K, V]):
    """A bounded least-recently-used memo of ``key -> value``."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: K, build: Callable[[], V]) -> V:
        """The value under ``key``, computed by ``build()`` (and kept) on a miss."""
        data = self._data
        hit = data.get(key, _MISSING)
        if hit is not _MISSING:
            data.move_to_end(key)
            return hit  # type: ignore[return-value]
        value = build()
        data[key] = value
        if len(data) > self.maxsize:
            data.popitem(last=False)
        return value

    def clear(self) -> None:
        self._data.clear()


class IdentityCache(Generic[O, V]):
    """A bounded memo of values derived from an object, keyed by the object's identity."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self._data: OrderedDict[Hashable, tuple[O, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def get(self, obj: O, build: Callable[[], V], *extra: Hashable) -> V:
        """The value derived from ``obj`` (and ``extra``), computed by ``build()`` on a miss."""
        key = (id(obj), *extra) if extra else id(obj)
        data = self._data
        hit = data.get(key)
        if hit is not None and hit[0] is obj:  # the entry holds obj: its id is not reused
            data.move_to_end(key)
            return hit[1]
        value = build()
        data[key] = (obj, value)
        data.move_to_end(key)
        if len(data) > self.maxsize:
            data.popitem(last=False)
        return value

    def clear(self) -> None:
        self._data.clear()


# A run allocates many small containers that live until its end (prediction references,
# the memos above) and forms few reference cycles; with the default thresholds the cyclic
# collector keeps re-walking all of them (0.58 s of an oracle run over 48,000 distinct
# queries, 0.07 s with these). Collections stay on, just far apart.
FEWER_COLLECTIONS = (50_000, 20, 100)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the block with the cyclic garbage collector's thresholds raised (to at least
    :data:`FEWER_COLLECTIONS`), then restore them."""
    before = gc.get_threshold()
    gc.set_threshold(*(max(a, b) for a, b in zip(before, FEWER_COLLECTIONS, strict=True)))
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextmanager
def no_collections() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off (as it was after).

    For scoring only, whose answers form no reference cycles (a test scores twelve times the
    answers of every kind, right, wrong and malformed, in this process and in worker
    processes, and finds no more cyclic objects than once: a call's own few; after the whole
    ``maptab score`` of 100,000 answers a full collection finds 1,028, from imports and a
    few ``json.dumps`` calls with ``indent``).
    Its collections at :data:`FEWER_COLLECTIONS` still cost 2.5-3.6 s of 21-29 s of scoring
    100,000 answers: each walked the score rows, predictions and memos alive at the time
    (about 1 µs an object), and one collection at a million young objects took 1.1 s.
    Without cycles there is nothing for them to free. (A run keeps its collections: a failed
    HTTP request's traceback is a cycle that can hold a request's image.)"""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if not gc.get_freeze_count():  # (unfreeze would release a caller's frozen objects)
                # what the block made and kept goes to the oldest generation unwalked: the
                # first collection after it would otherwise walk it all (1.1 s after 100,000)
                gc.freeze()
                gc.unfreeze()
            gc.enable()
