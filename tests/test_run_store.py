"""The prediction store: append, repair after a kill, last row wins, atomic compaction."""

from __future__ import annotations

import json

import pytest

from maptab.run.store import PredictionStore, StoreError
from maptab.schema import Prediction


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
