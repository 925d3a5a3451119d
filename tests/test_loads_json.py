"""``maptab._limits.loads_json`` decodes with msgspec and falls back to ``json.loads``: the
value, or the error, must be the one ``json.loads`` gives (differential tests)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab._limits import LimitError, loads_json


def reference(text: str | bytes) -> tuple[str, str]:
    """``("ok", repr(value))`` or ``("error", message)`` as the json module gives them."""
    try:
        return "ok", repr(json.loads(text))
    except RecursionError:
        return "error", "nested"
    except (ValueError, UnicodeDecodeError):
        return "error", ""


def ours(text: str | bytes) -> tuple[str, str]:
    try:
        return "ok", repr(loads_json(text, "x"))
    except LimitError as exc:
        return "error", "nested" if "nested" in str(exc) else ""


def same(text: str | bytes) -> None:
    want, got = reference(text), ours(text)
    assert got[0] == want[0], (text, want, got)
    if want[0] == "ok":  # repr tells 1 from 1.0 and keeps key order
        assert got[1] == want[1], text
    else:
        assert got[1] == want[1], text


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**60), max_value=10**60)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=examples(400), deadline=None)
@given(values, st.booleans())
def test_documents_decode_as_json_does(value, ascii_only) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    same(text)
    same(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=examples(400), deadline=None)
@given(values, st.integers(min_value=0), st.sampled_from('{}[]",:0e.-+ \t\\u/\x00\x7fé\ud800'))
def test_broken_documents_fail_or_decode_as_json_does(value, at, char) -> None:
    text = json.dumps(value)
    i = at % (len(text) + 1)
    for broken in (text[:i] + char + text[i:], text[:i] + text[i + 1 :]):
        same(broken)
        same(broken.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize(
    "text",
    [
        "NaN",
        "[Infinity, -Infinity]",
        "1e400",
        "-1e400",
        "1" + "0" * 400 + ".0",
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "1" * 4301,
        '"\\ud800"',
        '{"a": 1, "a": 2}',
        "0.1000000000000000055511151231257827021181583404541015625",
        "5e-324",
        "2.4703282292062328e-324",
        "-0.0",
        "\ufeff[1]",
        '"a\tb"',
        "[1,]",
        "[1] x",
        "",
    ],
)
def test_edge_cases(text: str) -> None:
    same(text)
    same(text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize(
    "raw", [b"\xef\xbb\xbf[1]", '["a"]'.encode("utf-16"), b'"\xed\xa0\x80"', b'"\xff"']
)
def test_bytes_json_accepts_or_refuses(raw: bytes) -> None:
    same(raw)


def test_deep_nesting_is_an_error() -> None:
    with pytest.raises(LimitError, match="nested too deeply"):
        loads_json("[" * 100_000 + "]" * 100_000, "deep.json")
