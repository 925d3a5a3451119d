"""maptab._scorecore (the scorer's C loops) against the Python code it stands in for.

``utf8_valid`` must say what ``bytes.decode("utf-8")`` says, and ``score_line`` must give
``json.dumps(row, ensure_ascii=False, allow_nan=False)`` to the character, or ``None``
where it leaves a row to json (NaN, infinities, other types, lone surrogates); the scorer's
own functions must give the same with the module and without it.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maptab import native
from maptab.score import scorer as scorer_module
from maptab.score import workers

core = native.scorecore
pytestmark = pytest.mark.skipif(
    core is None,
    reason="maptab._scorecore is not built (no C compiler at install): the Python code runs",
)
PROPS = settings(max_examples=300, deadline=None)


def decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@PROPS
@given(st.binary(max_size=64))
def test_utf8_valid_is_the_decoders_verdict_on_any_bytes(data):
    assert core.utf8_valid(data) is decodes(data)


@PROPS
@given(
    text=st.text(max_size=40),
    cut=st.integers(0, 200),
    junk=st.binary(min_size=0, max_size=3),
    at=st.integers(0, 200),
)
def test_utf8_valid_on_text_cut_or_spliced(text, cut, junk, at):
    """Valid text, then cut inside a character or with bytes spliced in (truncated and
    stray sequences, overlong and surrogate forms appear among the spliced bytes)."""
    data = text.encode("utf-8")
    assert core.utf8_valid(data)
    for variant in (data[: cut % (len(data) + 1)], data[:at] + junk + data[at:]):
        assert core.utf8_valid(variant) is decodes(variant)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"plain ascii, longer than eight bytes",
        "Zürich 東京 🚇".encode(),
        b"\xc0\xaf",  # overlong '/'
        b"\xe0\x80\xaf",  # overlong, three bytes
        b"\xf0\x80\x80\xaf",  # overlong, four bytes
        b"\xed\xa0\x80",  # a surrogate, U+D800
        b"\xed\x9f\xbf",  # U+D7FF, the last before them
        b"\xf4\x8f\xbf\xbf",  # U+10FFFF
        b"\xf4\x90\x80\x80",  # past U+10FFFF
        b"\xf5\x80\x80\x80",
        b"abc\xe6\x9d",  # cut inside a character
        b"\x80",
        b"12345678\xff",
    ],
)
def test_utf8_valid_edge_cases(data):
    assert core.utf8_valid(data) is decodes(data)
    assert core.utf8_valid(bytearray(data)) is decodes(data)
    assert core.utf8_valid(memoryview(data)) is decodes(data)


keys = st.text(max_size=8)
leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e20, max_value=1e20),
    st.text(max_size=20),
    st.text(alphabet=st.characters(max_codepoint=0x40), max_size=10),  # controls, quotes
    st.sampled_from(["\ud800", "a\udfffb", '"\\', "\x00\x1f\x7f", "\u2028", "🚇"]),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
    ),
    max_leaves=12,
)


def json_line(row):
    """What json writes for the row, or None where it refuses it (NaN and infinities)."""
    try:
        return json.dumps(row, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return None


@PROPS
@given(st.dictionaries(keys, values, max_size=8))
def test_score_line_is_json_dumps(row):
    got = core.score_line(row)
    if got is None:  # left to json: a NaN or infinity, or a lone surrogate
        text = json.dumps(row, ensure_ascii=False)
        assert json_line(row) is None or any(0xD800 <= ord(c) <= 0xDFFF for c in text)
    else:
        assert got == json_line(row)


def test_score_line_leaves_other_types_to_json():
    class Sub(str):
        pass

    for row in (
        {"a": Sub("x")},
        {"a": 1.5, 2: "int key"},
        {"a": {1, 2}},
        {"a": math.nan},
        {"a": [math.inf]},
        {"a": True, "b": 10**5000},  # past the int digit limit: json raises there
    ):
        assert core.score_line(row) is None
    assert core.score_line([1, 2]) is None
    deep: list = []
    for _ in range(40):
        deep = [deep]
    assert core.score_line({"d": deep}) is None


def test_row_text_and_is_utf8_are_the_same_without_the_module(monkeypatch):
    """The scorer's functions give the same with the module and with it removed (an install
    without a C compiler)."""
    rows = [
        {"id": "m/rp-1", "ema": 1, "pma": 0.8333, "gap": None, "route": "A-B(transfer)-C"},
        {"id": "t/qa-2", "route": "Zürich-東京", "totals": {"T": True}, "x": [1.0, -0.0]},
        {"id": "nan", "gap": math.nan, "u": ["\x01"]},
    ]
    blobs = [b"[]", '["Zürich"]'.encode(), b'["\xff"]', b"\xed\xa0\x80"]
    fast = [workers.row_text(r) for r in rows], [scorer_module._is_utf8(b) for b in blobs]
    monkeypatch.setattr(workers, "_scorecore", None)
    monkeypatch.setattr(scorer_module, "_scorecore", None)
    slow = [workers.row_text(r) for r in rows], [scorer_module._is_utf8(b) for b in blobs]
    assert fast == slow
    assert fast[0][2] == '{"id": "nan", "gap": null, "u": ["\\u0001"]}'
