"""Score rows held compactly (SPEC 12): read-only mappings that share their
field index, short strings and floats with the other rows of a run.

The scorer keeps a run's rows for its summary and the report loads them for its tables; at
paper size (200,000 rows of ~25 fields) plain dicts cost about 830 bytes per row before
their values. :class:`RowPacker` turns a row into a :class:`ScoreRow` that reads exactly as
the dict did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import attrgetter, itemgetter
from typing import Any

__all__ = ["RowPacker", "ScoreRow", "field_reader"]

_SHARED_MAX = 64  # string values up to this length are shared between rows (RowPacker)


class ScoreRow(Mapping[str, Any]):
    """One score row, read-only: a mapping of field names to values like the JSON object it
    was read from (``row["ema"]``, ``row.get("gap")``, ``row.items()``, equal to that
    object).

    A paper-size run has 200,000 rows of ~25 fields; as dicts they would take 830 bytes each
    before their values. Here the rows that share one list of fields (all rows of a kind)
    share one field index, and a row keeps only its values, in a tuple (~290 bytes)."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: tuple[Any, ...]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, key: str) -> Any:
        return self._values[self._index[key]]

    def get(self, key: str, default: Any = None) -> Any:
        i = self._index.get(key)
        return default if i is None else self._values[i]

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ScoreRow) and other._index is self._index:
            return self._values == other._values
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    __hash__ = None  # type: ignore[assignment]  # a mapping, like dict

    def __repr__(self) -> str:
        return f"ScoreRow({dict(self.items())!r})"


class RowPacker:
    """Packs rows into :class:`ScoreRow` records: rows with the same fields in the same
    order share one field index, and short string values (not ``id``) and floats are shared
    between rows (equal values, one object; a float is shared only with one of the same
    bits, so ``-0.0`` stays ``-0.0``). Nothing else changes: a packed row reads as the dict
    it was made from."""

    def __init__(self) -> None:
        self._indexes: dict[tuple[str, ...], dict[str, int]] = {}
        self._shared: dict[Any, Any] = {}

    def _index_of(self, row: Mapping[str, Any] | tuple[str, ...]) -> dict[str, int]:
        """The field index shared by the rows with ``row``'s fields in its order (``row``:
        a row, or its field names)."""
        names = row if isinstance(row, tuple) else tuple(row)
        index = self._indexes.get(names)
        if index is None:
            share = self._shared.setdefault
            index = self._indexes[names] = {share(k, k): i for i, k in enumerate(names)}
        return index

    def index(self, row: Mapping[str, Any]) -> ScoreRow:
        """The :class:`ScoreRow` of ``row`` sharing only the field index (about 2 µs a row;
        :meth:`pack`, which also shares values, about 4.5 µs; both measured without
        garbage-collection pauses): for rows whose values already are shared objects, as
        the scorer's rows are (map ids, categories and the like come from the dataset
        record the row was scored against)."""
        return ScoreRow(self._index_of(row), tuple(row.values()))

    def of_values(self, names: tuple[str, ...], values: tuple[Any, ...]) -> ScoreRow:
        """:meth:`index` of the row with fields ``names`` and ``values`` (as a worker
        process sends a row), without building it as a dict first."""
        return ScoreRow(self._index_of(names), values)

    def pack(self, row: Mapping[str, Any]) -> ScoreRow:
        """The :class:`ScoreRow` of ``row`` (its keys and values in order)."""
        share = self._shared.setdefault
        values = []
        for k, v in row.items():
            t = type(v)
            if t is str and len(v) <= _SHARED_MAX and k != "id":
                v = share(v, v)
            elif t is float:
                v = share((v.hex(),), v)
            values.append(v)
        return ScoreRow(self._index_of(row), tuple(values))


_VALUES = attrgetter("_values")


def field_reader(rows: Sequence[Mapping[str, Any]]) -> Callable[[str], list[Any]]:
    """A function ``key -> [row[key] for row in rows]`` (``KeyError`` for a missing field).

    Rows packed with one shared field index (a kind's rows as the scorer and the report keep
    them) are read from their value tuples by position in one pass in C, about a fifth of
    the time of calling each row's ``__getitem__``; any other rows are read as mappings."""
    index = rows[0]._index if rows and type(rows[0]) is ScoreRow else None
    if index is None or not all(type(r) is ScoreRow and r._index is index for r in rows):
        return lambda key: list(map(itemgetter(key), rows))
    values = list(map(_VALUES, rows))
    return lambda key: list(map(itemgetter(index[key]), values))
