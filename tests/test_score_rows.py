"""Packed score rows (maptab.score.rows): a column read by position equals the rows read as
mappings, whatever mix of rows it is given."""

from __future__ import annotations

from operator import itemgetter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.score.rows import RowPacker, ScoreRow, field_reader

FIELDS = ("id", "kind", "ema", "totals", "error_type")
_value = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=4)
)
_row = st.fixed_dictionaries({k: _value for k in FIELDS})


@settings(max_examples=examples(200), deadline=None)
@given(
    rows=st.lists(_row, max_size=12),
    packing=st.lists(st.sampled_from(["pack", "index", "dict", "reordered"]), max_size=12),
)
def test_field_reader_reads_what_the_mappings_hold(rows, packing) -> None:
    packer = RowPacker()
    mixed: list = []
    for i, row in enumerate(rows):
        how = packing[i] if i < len(packing) else "pack"
        if how == "dict":
            mixed.append(dict(row))
        elif how == "reordered":  # same fields, another order: another field index
            mixed.append(packer.pack(dict(reversed(list(row.items())))))
        else:
            mixed.append(getattr(packer, how)(row))
    read = field_reader(mixed)
    for key in FIELDS:
        assert read(key) == list(map(itemgetter(key), rows))
    if mixed:
        with pytest.raises(KeyError):
            read("missing")


def test_field_reader_takes_the_positional_path_for_shared_indexes() -> None:
    packer = RowPacker()
    rows = [packer.pack({"id": str(i), "ema": i / 2}) for i in range(5)]
    assert all(isinstance(r, ScoreRow) for r in rows)
    read = field_reader(rows)
    assert read("ema") == [0.0, 0.5, 1.0, 1.5, 2.0] and read("id") == ["0", "1", "2", "3", "4"]
    with pytest.raises(KeyError):
        read("gap")
    assert field_reader([])("anything") == []
