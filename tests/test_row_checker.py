"""``maptab.schema.row_checker``: the fast check of RP and QA rows that ``Dataset.select``
runs before the full one. Where it accepts a line, the full check (``json.loads`` and the
kind's ``decode``) must accept it too, with the same ``id``, ``split`` and ``category``
(differential tests over mutated rows); it must accept the rows the builder writes."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maptab.schema import (
    TOTAL_FIELDS,
    QAQuery,
    RecordError,
    RPQuery,
    decoded_row_checker,
    row_checker,
    strict_row_decoder,
)
from maptab.tasks.base import get as get_kind

RP_ROW: dict[str, Any] = {
    "id": "m/rp-0001-time",
    "map_id": "m",
    "scenario": "metromap",
    "split": "train",
    "category": "time",
    "style": "direct_optimization",
    "question": "From A to C?",
    "source": "A",
    "target": "C",
    "routes": ["A-B-C"],
    "route_vertex_numbers": [3],
    "transfer_vertex_numbers": [0],
    "map_difficulty": "easy",
    "query_difficulty": "easy",
    "weights": [0.25, 0.25, 0.25, 0.25],
    "repetition": "NR",
    "report_totals": False,
    "cost_model": "additive",
    "tables": {"edges": [1, 0], "vertices": [2, 0, 1]},
    "Total_Time": 3.5,
    "Total_Price": 2,
    "Average_Comfort Level": None,
    "Average_Reliability": 0.9,
}
QA_ROW: dict[str, Any] = {
    "id": "m/qa-01",
    "map_id": "m",
    "scenario": "metromap",
    "split": "test",
    "type": 3,
    "capabilities": ["VP"],
    "style": "direct",
    "question": "How many?",
    "answer": 2.0,
    "inputs": ["map"],
    "tables": {},
    "drop_line_column": False,
    "params": {"line": "L1"},
}
CASES = [(RPQuery, "rp", RP_ROW), (QAQuery, "qa", QA_ROW)]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.sampled_from(["", "time", "map_mix", "qa", "NR", "train", "test"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


def full(kind: str, line: bytes) -> tuple[str, Any]:
    """What the full path gives a line: ``("ok", (id, split, category))`` or ``("error", …)``."""
    try:
        row = json.loads(line)
        record = get_kind(kind).decode(row)
    except (ValueError, RecordError, RecursionError) as exc:
        return "error", str(exc)
    return "ok", (record.id, record.split, getattr(record, "category", None))


def _attempt(call: Any, shown: Any) -> tuple[str, Any]:
    """``("ok", shown(call()))``, or ``("error", message)`` when ``call`` refuses."""
    try:
        value = call()
    except (msgspec.DecodeError, ValueError, RecursionError) as exc:
        return "error", str(exc)
    return "ok", shown(value)


def _selected(s: Any) -> tuple[Any, ...]:
    return (s.id, s.split, getattr(s, "category", None))


def fast(cls: type, line: bytes) -> tuple[str, Any]:
    check = row_checker(cls)
    assert check is not None
    return _attempt(lambda: check(line), _selected)


def decoded(cls: type, line: bytes) -> tuple[str, Any]:
    """What the check of a row msgspec already decoded gives (the scorer's fast path)."""
    check = decoded_row_checker(cls)
    assert check is not None
    return _attempt(lambda: check(msgspec.json.decode(line)), _selected)


def strict(cls: type, line: bytes) -> tuple[str, Any]:
    """What decoding straight into the record gives: ``("ok", repr(record))`` or an error."""
    decode = strict_row_decoder(cls)
    assert decode is not None
    return _attempt(lambda: decode(line), repr)


def full_record(kind: str, line: bytes) -> tuple[str, Any]:
    """The full path's record, by ``repr`` (an int stays an int; NaN totals compare)."""
    try:
        return "ok", repr(get_kind(kind).decode(json.loads(line)))
    except (ValueError, RecordError, RecursionError) as exc:
        return "error", str(exc)


def agree(cls: type, kind: str, line: bytes) -> None:
    for got in (fast(cls, line), decoded(cls, line)):
        if got[0] == "ok":  # accepted fast: the full check accepts it, with the same values
            assert full(kind, line) == got, line
    got = strict(cls, line)
    if got[0] == "ok":  # accepted: the same record as the full path's, to the type
        assert full_record(kind, line) == got, line
    _decoded_both_ways(kind, line)


@pytest.mark.parametrize(("cls", "kind", "row"), CASES)
def test_well_formed_rows_are_accepted(cls, kind, row):
    line = (json.dumps(row, ensure_ascii=False) + "\n").encode()
    assert fast(cls, line)[0] == "ok" and full(kind, line) == fast(cls, line)
    assert decoded(cls, line) == fast(cls, line)
    assert strict(cls, line) == full_record(kind, line) and strict(cls, line)[0] == "ok"
    optional = {k: v for k, v in row.items() if k not in ("tables", "weights", "params")}
    line = json.dumps(optional).encode()
    assert fast(cls, line)[0] == "ok" and full(kind, line) == fast(cls, line)
    assert strict(cls, line) == full_record(kind, line) and strict(cls, line)[0] == "ok"
    # a key the record does not read: the row goes the other ways
    assert strict(cls, json.dumps({**row, "extra": 1}).encode())[0] == "error"


def test_only_the_built_in_record_classes_have_a_fast_check():
    assert row_checker(dict) is None
    assert strict_row_decoder(dict) is None


def test_numbers_keep_their_json_type():
    line = json.dumps({**RP_ROW, "weights": [1, 0, 0.0, -0], "Total_Time": 3, "Total_Price": 2.0})
    got = strict_row_decoder(RPQuery)(line.encode())
    assert repr(got.weights) == "[1, 0, 0.0, 0]"
    assert repr(got.totals) == repr(
        {"Total_Time": 3, "Total_Price": 2.0, "Average_Reliability": 0.9}
    )
    assert strict(RPQuery, line.encode()) == full_record("rp", line.encode())


@settings(max_examples=400, deadline=None)
@given(
    case=st.sampled_from(CASES),
    data=st.data(),
    value=json_values,
    drop=st.booleans(),
    duplicate=st.booleans(),
)
def test_a_mutated_field_is_accepted_only_if_the_full_check_accepts_it(
    case, data, value, drop, duplicate
):
    cls, kind, row = case
    keys = [*row, "totals", "release_rank", "route_count", "truncated", "extra"]
    key = data.draw(st.sampled_from(keys))
    mutated = dict(row)
    if drop:
        mutated.pop(key, None)
    else:
        mutated[key] = value
    text = json.dumps(mutated, ensure_ascii=False)
    if duplicate and key in row and not drop:  # the key twice: json.loads keeps the last
        first = json.dumps({key: row[key]}, ensure_ascii=False)[1:-1]
        text = "{" + first + ", " + text[1:]
    agree(cls, kind, text.encode("utf-8", "surrogatepass"))


@settings(max_examples=200, deadline=None)
@given(case=st.sampled_from(CASES), raw=st.binary(max_size=40), at=st.integers(0, 400))
def test_damaged_bytes_are_accepted_only_if_the_full_check_accepts_them(case, raw, at):
    cls, kind, row = case
    line = json.dumps(row).encode()
    at = min(at, len(line))
    agree(cls, kind, line[:at] + raw + line[at:])


@pytest.mark.parametrize(
    "change",
    [
        {"id": ""},
        {"map_id": ""},
        {"category": "nope"},
        {"routes": []},
        {"weights": [0.5, 0.5]},
        {"Total_Time": "3"},
        {"Average_Comfort Level": True},
        {"route_vertex_numbers": [True]},
        {"route_vertex_numbers": [1.0]},
        {"report_totals": 0},
        {"totals": {"Total_Time": "x"}},
        {"release_rank": 1.5},
    ],
)
def test_rp_rows_the_full_check_refuses_are_refused(change):
    line = json.dumps({**RP_ROW, **change}).encode()
    assert fast(RPQuery, line)[0] == "error" and full("rp", line)[0] == "error"
    assert decoded(RPQuery, line)[0] == "error"


@pytest.mark.parametrize("change", [{"type": 0}, {"type": 25}, {"type": 2.0}, {"answer": "1"}])
def test_qa_rows_the_full_check_refuses_are_refused(change):
    line = json.dumps({**QA_ROW, **change}).encode()
    assert fast(QAQuery, line)[0] == "error" and full("qa", line)[0] == "error"
    assert decoded(QAQuery, line)[0] == "error"


def test_what_msgspec_refuses_goes_the_full_way():
    for name in TOTAL_FIELDS:  # NaN and 1e400 are numbers to json.loads
        for text in ("NaN", "1e400"):
            line = json.dumps(RP_ROW).replace(f'"{name}": ', f'"{name}": {text}, "x": ', 1)
            assert fast(RPQuery, line.encode())[0] == "error"
            assert full("rp", line.encode())[0] == "ok"


def test_bytes_that_are_not_utf8_go_the_full_way_even_in_an_unknown_key():
    line = json.dumps(RP_ROW).encode().replace(b'"tables"', b'"\x80x": 1, "tables"')
    assert fast(RPQuery, line)[0] == "error"
    with pytest.raises(UnicodeDecodeError):
        line.decode("utf-8")


def _keyword_form(cls: type, d: dict[str, Any]) -> Any:
    """``from_dict`` as it was written before the positional form (the reference)."""
    from dataclasses import fields

    kw = {f.name: d[f.name] for f in fields(cls) if f.name in d}
    if cls is RPQuery:
        totals = {k: d[k] for k in TOTAL_FIELDS if d.get(k) is not None}
        kw["totals"] = totals or None
    return cls(**kw)


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(CASES), data=st.data())
def test_from_dict_builds_the_keyword_forms_record(case, data):
    cls, _, row = case
    keys = [*row, "totals", "release_rank", "truncated", "extra"]
    drop = data.draw(st.lists(st.sampled_from(keys), unique=True))
    extra = data.draw(st.dictionaries(st.sampled_from(keys), json_values, max_size=3))
    d = {k: v for k, v in {**row, **extra}.items() if k not in drop}
    try:
        want = _keyword_form(cls, d)
    except TypeError as exc:  # a required field missing: the same error
        with pytest.raises(TypeError, match="missing"):
            cls.from_dict(d)
        assert "missing" in str(exc)
        return
    got = cls.from_dict(d)
    assert got == want
    if "tables" not in d:  # a fresh default container per record
        assert got.tables is not cls.from_dict(d).tables


def _decoded_both_ways(kind: str, line: bytes) -> None:
    """``maptab.dataset.record_decoder`` (the scorer's row reader) against the full path:
    the same record (compared by ``repr``: NaN totals) or the same one-line error."""
    from maptab.dataset import DatasetError, record_decoder

    want: Any = full_record(kind, line)
    if want[0] == "error":
        want = ("error",)
    try:
        got: Any = ("ok", repr(record_decoder(get_kind(kind))(line, "rows.jsonl:3")))
    except DatasetError as exc:
        assert str(exc).startswith("rows.jsonl:3: ") and "\n" not in str(exc)
        got = ("error",)
    assert got == want, line
