"""The one cache policy for derived tables (cost tables, solvers, station indexes, ...).

Work derived from a map (a :class:`~maptab.core.solver.Solver`, a cost table, a station index) is
reused while the *same object* is asked again, so per-route calls on one map do not rebuild
it. Every such memo in maptab is one of the two classes here, with one rule:

* bounded: at most ``maxsize`` entries; when full, the least recently used entry is dropped;
* identity-keyed (:class:`IdentityCache`): keyed by ``id(obj)`` plus an optional extra key,
  and the entry holds ``obj`` itself, so the id cannot be reused by another object while the
  entry lives and a hit is checked with ``is``. A mutated object is *not* noticed: callers put
  whatever they derive from (sizes, inner ids) into the extra key.

Caching never changes a result, only how often it is computed. Not thread-safe (maptab
scores and builds in one thread per process).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["IdentityCache", "KeyedCache"]

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
