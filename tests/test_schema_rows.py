"""The records of ``maptab.core.schema`` read from JSONL rows: a line decoded by msgspec straight
into its record (``line_decoder``) gives the record, or the one-line error, that checking
the row's ``json.loads`` value gives (``row_decoder``); rows the builder writes read back
to themselves (differential tests over mutated and damaged rows)."""

from __future__ import annotations

import json
import pickle
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab._limits import LimitError
from maptab.core.schema import (
    QAQuery,
    ReasonMapQuestion,
    RecordError,
    RPQuery,
    line_decoder,
    parse_prediction,
    row_decoder,
)
from maptab.io.dataset import DatasetError, MapEntry, record_decoder
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
    "release_rank": None,
    "route_count": 1,
    "truncated": False,
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
SEGMENT = {
    "route_name": "L1",
    "departure_stop": "A",
    "arrival_stop": "C",
    "via_stops": ["B"],
    "num_via_stops": 1,
}
RM_ROW: dict[str, Any] = {
    "id": "rm-1",
    "map_id": "m",
    "split": "test",
    "station_1": "A",
    "station_2": "C",
    "question_short": "A to C?",
    "question_long": "A to C, via?",
    "long_template": "num_via",
    "question_difficulty": "easy",
    "map_difficulty": "easy",
    "routes": [[SEGMENT]],
}
CASES = [(RPQuery, "rp", RP_ROW), (QAQuery, "qa", QA_ROW), (ReasonMapQuestion, "reasonmap", RM_ROW)]

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


def _outcome(call: Any) -> tuple[str, str]:
    """``("ok", repr(record))`` (NaN compares, an int stays an int) or ``("error", message)``."""
    try:
        return "ok", repr(call())
    except (RecordError, LimitError) as exc:
        message = str(exc)
        assert "\n" not in message
        return "error", message.removeprefix("rows.jsonl:3: ")


def by_line(cls: type, line: bytes) -> tuple[str, str]:
    return _outcome(lambda: line_decoder(cls)(line, "rows.jsonl:3"))


def by_value(cls: type, line: bytes) -> tuple[str, str]:
    """What ``json.loads`` and the record's check of the value give."""
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        return "error", "not JSON"
    return _outcome(lambda: row_decoder(cls)(row))


def agree(cls: type, kind: str, line: bytes) -> None:
    want = by_value(cls, line)
    got = by_line(cls, line)
    if want[1] == "not JSON":
        assert got[0] == "error"
    else:
        assert got == want, line
    try:  # the dataset's reader of single rows: the same, its errors naming the row
        decoded: tuple[str, str] = (
            "ok",
            repr(record_decoder(get_kind(kind))(line, "rows.jsonl:3")),
        )
    except DatasetError as exc:
        assert str(exc).startswith("rows.jsonl:3: ") and "\n" not in str(exc)
        decoded = ("error", str(exc).removeprefix("rows.jsonl:3: "))
    if got[0] == "ok" or want[1] != "not JSON":
        assert decoded == got, line
    else:
        assert decoded[0] == "error"


@pytest.mark.parametrize(("cls", "kind", "row"), CASES)
def test_a_written_row_reads_back_to_itself(cls, kind, row):
    line = json.dumps(row, ensure_ascii=False).encode()
    record = line_decoder(cls)(line, "x")
    assert record == row_decoder(cls)(row) == get_kind(kind).samples.decode(row)
    assert json.dumps(record.to_dict(), ensure_ascii=False).encode() == line
    assert pickle.loads(pickle.dumps(record)) == record
    assert cls.from_dict(record.to_dict()) == record


def test_rp_totals_are_the_four_row_keys():
    record = row_decoder(RPQuery)(RP_ROW)
    assert record.totals == {"Total_Time": 3.5, "Total_Price": 2, "Average_Reliability": 0.9}
    no_totals = {
        **RP_ROW,
        **dict.fromkeys(["Total_Time", "Total_Price"]),
        "Average_Reliability": None,
    }
    assert row_decoder(RPQuery)(no_totals).totals is None
    made = RPQuery(**{k: RP_ROW[k] for k in list(RP_ROW)[:22]}, totals=record.totals)
    assert made == record and made.to_dict() == RP_ROW
    assert msgspec.structs.replace(record, question="") == msgspec.structs.replace(
        made, question=""
    )


def test_numbers_keep_their_json_type():
    line = json.dumps({**RP_ROW, "weights": [1, 0, 0.0, -0], "Total_Time": 3, "Total_Price": 2.0})
    got = line_decoder(RPQuery)(line.encode(), "x")
    assert repr(got.weights) == "[1, 0, 0.0, 0]"
    assert repr(got.totals) == repr(
        {"Total_Time": 3, "Total_Price": 2.0, "Average_Reliability": 0.9}
    )
    big = json.dumps({**QA_ROW, "answer": 2**70}).encode()
    assert line_decoder(QAQuery)(big, "x").answer == 2**70


def test_optional_fields_take_their_defaults_and_fresh_containers():
    row = {k: v for k, v in RP_ROW.items() if k not in ("tables", "weights", "route_count")}
    one, two = (line_decoder(RPQuery)(json.dumps(row).encode(), "x") for _ in range(2))
    assert one.weights is None and one.route_count is None and one.tables == {}
    assert one.tables is not two.tables


def test_unknown_keys_are_ignored_but_their_bytes_must_be_utf8():
    line = json.dumps({**QA_ROW, "future": {"x": [1, "é"]}}, ensure_ascii=False).encode()
    assert line_decoder(QAQuery)(line, "x") == row_decoder(QAQuery)(QA_ROW)
    bad = json.dumps(QA_ROW).encode().replace(b'"tables"', b'"\x80x": 1, "tables"')
    with pytest.raises(RecordError, match=r"^qa\.jsonl:2: not UTF-8 text"):
        line_decoder(QAQuery)(bad, "qa.jsonl:2")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": ""}, "field 'id' is empty"),
        ({"map_id": ""}, "field 'map_id' is empty"),
        ({"category": "nope"}, "field 'category': unknown RP category 'nope'"),
        ({"category": 7}, "field 'category': expected str, found int"),
        ({"routes": []}, "field 'routes': no gold route"),
        ({"routes": 5}, "field 'routes': expected list[str], found int"),
        ({"weights": [0.5, 0.5]}, "field 'weights': expected 4 numbers, found 2"),
        ({"weights": [0.5, "x", 0, 0]}, "field 'weights[1]': expected float, found str"),
        ({"Total_Time": "3"}, "field 'Total_Time': expected a number, found str"),
        ({"Average_Comfort Level": True}, "field 'Average_Comfort Level': expected a number"),
        ({"route_vertex_numbers": [True]}, "field 'route_vertex_numbers[0]': expected int"),
        ({"route_vertex_numbers": [1.0]}, "field 'route_vertex_numbers[0]': expected int"),
        ({"report_totals": 0}, "field 'report_totals': expected bool, found int"),
        ({"tables": {"edges": [1, "x"]}}, "field 'tables.edges[1]': expected int, found str"),
        ({"release_rank": 1.5}, "field 'release_rank': expected int | None, found float"),
        ({"source": None}, "field 'source': expected str, found NoneType"),
    ],
)
def test_rp_rows_are_refused_naming_the_field(change, message):
    line = json.dumps({**RP_ROW, **change}).encode()
    got = by_line(RPQuery, line)
    assert got[0] == "error" and got[1].startswith(message), got
    agree(RPQuery, "rp", line)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"type": 0}, "field 'type': 0 is not a QA type (1-24)"),
        ({"type": 25}, "field 'type': 25 is not a QA type (1-24)"),
        ({"type": 2.0}, "field 'type': expected int, found float"),
        ({"answer": "1"}, "field 'answer': expected float, found str"),
    ],
)
def test_qa_rows_are_refused_naming_the_field(change, message):
    line = json.dumps({**QA_ROW, **change}).encode()
    assert by_line(QAQuery, line) == ("error", message)
    agree(QAQuery, "qa", line)


@pytest.mark.parametrize(
    ("routes", "message"),
    [
        ([[{"route_name": 1}]], "routes[0][0]: field 'route_name': expected str, found int"),
        ([[SEGMENT, {**SEGMENT, "arrival_stop": None}]], "routes[0][1]: field 'arrival_stop'"),
        (
            [[{k: v for k, v in SEGMENT.items() if k != "via_stops"}]],
            "field 'via_stops' is missing",
        ),
        ([[3]], "field 'routes[0][0]': expected dict[str, Any], found int"),
    ],
)
def test_reasonmap_segments_are_checked(routes, message):
    line = json.dumps({**RM_ROW, "routes": routes}).encode()
    assert message in by_line(ReasonMapQuestion, line)[1]
    agree(ReasonMapQuestion, "reasonmap", line)


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_numbers_json_reads_but_that_are_not_finite_are_refused(text):
    for cls, kind, row, key in [
        (RPQuery, "rp", RP_ROW, "Total_Time"),
        (QAQuery, "qa", QA_ROW, "answer"),
    ]:
        line = json.dumps(row).replace(f'"{key}": ', f'"{key}": {text}, "x": ', 1).encode()
        got = by_line(cls, line)
        assert got[0] == "error" and got[1].startswith(f"field '{key}': expected a finite number")
        agree(cls, kind, line)


def test_a_row_that_is_not_an_object_and_a_missing_field():
    assert by_line(QAQuery, b"[1]") == ("error", "expected a JSON object, found list")
    row = {k: v for k, v in QA_ROW.items() if k != "question"}
    assert by_line(QAQuery, json.dumps(row).encode()) == ("error", "field 'question' is missing")
    assert line_decoder(QAQuery)(b" \n", "x") is None
    with pytest.raises(LimitError, match=r"^q\.jsonl:4: not valid JSON"):
        line_decoder(QAQuery)(b'{"id": 1', "q.jsonl:4", LimitError)


def test_predictions_and_manifest_entries_are_checked_the_same_way():
    with pytest.raises(RecordError, match="^field 'response': expected str, found int$"):
        parse_prediction({"id": "a", "kind": "rp", "response": 1})
    assert parse_prediction({"id": "a", "kind": "rp", "response": "", "extra": 1}).latency_s == 0
    with pytest.raises(RecordError, match="^field 'difficulty_score': expected float"):
        MapEntry.from_dict({"id": "m", "scenario": "s", "difficulty": "d", "split": "t",
                            "difficulty_score": "x"})  # fmt: skip


@settings(max_examples=examples(400), deadline=None)
@given(
    case=st.sampled_from(CASES),
    data=st.data(),
    value=json_values,
    drop=st.booleans(),
    duplicate=st.booleans(),
)
def test_a_mutated_row_reads_as_its_json_value_checks(case, data, value, drop, duplicate):
    cls, kind, row = case
    keys = [*row, "totals", "extra"]
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


@settings(max_examples=examples(200), deadline=None)
@given(case=st.sampled_from(CASES), raw=st.binary(max_size=40), at=st.integers(0, 400))
def test_damaged_bytes_read_as_their_json_value_checks(case, raw, at):
    cls, kind, row = case
    line = json.dumps(row).encode()
    at = min(at, len(line))
    agree(cls, kind, line[:at] + raw + line[at:])
