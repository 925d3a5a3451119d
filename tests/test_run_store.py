"""The prediction store: append, repair after a kill, last row wins, atomic compaction."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import fields

from _examples import examples
from maptab.core.schema import Prediction, PredictionLines
from maptab.run.store import PredictionStore, StoreError


def _pred(i: int, error: str | None = None, response: str = "ok") -> Prediction:
    return Prediction(
        id=f"s{i}", kind="rp", response="" if error else response, error=error, provider="p"
    )


def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_append_is_flushed_and_reloaded(tmp_path):
    with PredictionStore(tmp_path) as st:
        st.append(_pred(1))
        assert len(_lines(st.path)) == 1  # visible on disk before close
        st.append(_pred(2, error="HTTP 500"))
    with PredictionStore(tmp_path) as st:
        assert st.done_ids(include_errors=True) == {"s1", "s2"}
        assert st.done_ids(include_errors=False) == {"s1"}
        assert st.errors == 1


@pytest.mark.parametrize("tail", ['{"id": "s3", "kind": "r', '{"id": "s3"', "garbage"])
def test_truncated_last_line_is_repaired(tmp_path, tail):
    with PredictionStore(tmp_path) as st:
        st.append(_pred(1))
        st.append(_pred(2))
    path = tmp_path / "predictions.jsonl"
    good = path.read_bytes()
    path.write_bytes(good + tail.encode())
    with PredictionStore(tmp_path) as st:
        assert st.repaired == len(tail)
        assert st.ids() == ["s1", "s2"]
        st.append(_pred(3))
    assert [r["id"] for r in _lines(path)] == ["s1", "s2", "s3"]


def test_corrupt_middle_line_is_an_error(tmp_path):
    path = tmp_path / "predictions.jsonl"
    row = json.dumps(_pred(1).to_dict())
    path.write_text(row + "\nnot json\n" + row + "\n")
    with pytest.raises(StoreError, match=r"predictions\.jsonl:2: corrupt row"):
        PredictionStore(tmp_path).open()


def test_last_row_wins_and_compaction_keeps_one_row_per_id(tmp_path):
    with PredictionStore(tmp_path) as st:
        st.append(_pred(1, error="timeout"))
        st.append(_pred(2))
        st.append(_pred(1, response="fixed"))
        assert st.row("s1")["response"] == "fixed" and st.row("s2")["response"] == "ok"
        assert st.compact() is True
        assert st.compact() is False
        st.append(_pred(3))
    rows = _lines(tmp_path / "predictions.jsonl")
    assert [r["id"] for r in rows] == ["s1", "s2", "s3"]
    assert rows[0]["response"] == "fixed" and rows[0]["error"] is None
    assert not (tmp_path / "predictions.jsonl.tmp").exists()


def test_two_runs_cannot_share_a_directory(tmp_path):
    with PredictionStore(tmp_path), pytest.raises(StoreError, match="another run"):
        PredictionStore(tmp_path).open()
    with PredictionStore(tmp_path):  # released on close
        pass


text_values = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=8)


@settings(max_examples=examples(300), deadline=None)
@given(
    strings=st.lists(text_values, min_size=7, max_size=7),
    latency=st.one_of(st.floats(allow_nan=True), st.integers(0, 9), st.none()),
    tokens=st.one_of(st.integers(-(2**70), 2**70), st.booleans(), st.none()),
    settings_=st.dictionaries(text_values, st.one_of(text_values, st.integers(), st.floats())),
    error=st.one_of(st.none(), text_values, st.integers()),
)
def test_row_text_is_json_dumps(tmp_path_factory, strings, latency, tokens, settings_, error):
    """Rows are written as ``json.dumps(row, ensure_ascii=False)`` writes them, whatever the
    values (the usual types take a direct path, others json.dumps): the run's store and a
    scored results file (``score._adopt``) both write with :class:`PredictionLines`."""
    sid, kind, response, reasoning, provider, model, _ = strings
    pred = Prediction(
        id=sid,
        kind=kind,
        response=response,
        reasoning=reasoning,
        latency_s=latency,  # type: ignore[arg-type]
        prompt_tokens=tokens,  # type: ignore[arg-type]
        completion_tokens=3,
        provider=provider,
        model=model,
        settings=settings_,
        error=error,  # type: ignore[arg-type]
    )
    lines = PredictionLines()
    store = PredictionStore(tmp_path_factory.mktemp("run"))  # writes with its own
    want = json.dumps(
        {f.name: getattr(pred, f.name) for f in fields(Prediction)}, ensure_ascii=False
    )
    assert lines.line(pred) == want
    assert lines.line(pred) == want  # the settings' cached text
    assert store._line(pred) == want
    settings_["changed"] = 1  # the same object, changed: encoded again
    want = json.dumps(
        {f.name: getattr(pred, f.name) for f in fields(Prediction)}, ensure_ascii=False
    )
    assert lines.line(pred) == want


def test_row_text_with_empty_and_shared_settings_in_turn():
    """An empty ``settings`` (each row of a results file has its own) is written ``{}``
    without touching the cached text of a run's shared settings object."""
    shared = {"temperature": 0.0, "seed": 3}
    rows = [
        Prediction("a", "rp", "A-B", settings=shared),
        Prediction("b", "rp", "A-B"),
        Prediction("c", "rp", "A-B", settings=shared),
        Prediction("d", "rp", "A-B", settings={"temperature": 0}),  # equal, other JSON
        Prediction("e", "rp", "A-B"),
    ]
    lines = PredictionLines()
    for pred in rows:
        want = json.dumps(
            {f.name: getattr(pred, f.name) for f in fields(Prediction)}, ensure_ascii=False
        )
        assert lines.line(pred) == want
