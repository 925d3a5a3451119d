"""The ``agent-oracle`` baseline on QA: on a mini build it answers every QA type that shows a
table through ``lookup`` alone, its answers follow what the tool returns, and its route
planning reads nothing of the prompt's tables."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from maptab.api import score_run
from maptab.core.qa_types import QA_TYPES
from maptab.generate.pipeline import build_benchmark
from maptab.run import make_provider, run
from maptab.run.provider import Completion
from maptab.run.requests import ChatRequest, RequestBuilder
from maptab.run.tools import Conversation, Toolbox, ToolBudget

TABLE_PARTS = {"edges", "vertices", "mix"}
WITH_TABLE = {t.number for t in QA_TYPES if TABLE_PARTS & set(t.inputs)}
MAP_ONLY = {t.number for t in QA_TYPES} - WITH_TABLE
ALL_QA = [f"qa:{t.number}" for t in QA_TYPES]


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agent-oracle") / "mini"
    build_benchmark(root, preset="mini", seed=5)
    return root


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _qa_run(mini: Path, out: Path, types: list[str]) -> dict[str, tuple[dict, dict]]:
    """Run the agent on QA ``types``, score it: ``id -> (prediction row, score row)``."""
    s = run(mini, make_provider("agent-oracle"), out, categories=types, tools=("lookup", "check"))
    assert s.errors == 0
    score_run(out)
    preds = {r["id"]: r for r in _jsonl(out / "predictions.jsonl")}
    return {r["id"]: (preds[r["id"]], r) for r in _jsonl(out / "scores.jsonl")}


def test_every_qa_type_with_a_table_is_answered_exactly_through_lookup(mini, tmp_path):
    rows = _qa_run(mini, tmp_path / "qa", ALL_QA)
    by_type: dict[int, list[bool]] = {}
    for pred, score in rows.values():
        by_type.setdefault(score["type"], []).append(bool(score["correct"]))
        if score["type"] in WITH_TABLE:
            assert pred["stop"] == "answer" and pred["tools_used"].get("lookup"), pred["id"]
        else:  # the map alone: nothing to look up, nothing looked up
            assert pred["tool_calls"] == 0 and pred["turns"] == 1, pred["id"]
    assert set(by_type) == {t.number for t in QA_TYPES}
    for qtype in sorted(WITH_TABLE):
        assert all(by_type[qtype]), (qtype, by_type[qtype])
    assert not all(ok for qtype in MAP_ONLY for ok in by_type[qtype])


def test_the_answers_follow_what_lookup_returns(mini, tmp_path, monkeypatch):
    """Type 20 (lowest Price among four spots): a lookup that says spot ``a`` costs 0.01
    makes 0.01 the answer, right or wrong."""
    samples = [r for r in _jsonl(mini / "qa.jsonl") if r["type"] == 20]
    assert samples and all(r["answer"] != 0.01 for r in samples)
    cheap = {r["params"]["a"] for r in samples}
    real = Toolbox.lookup

    def lookup(self: Toolbox, request: ChatRequest, name: str) -> str:
        text = real(self, request, name)
        if name not in cheap:
            return text
        head, rows = text.split("Vertex_tab (CSV):\n")
        cols, *cells = rows.split("\n")
        at = cols.split(",").index("Price")
        cells = [
            ",".join(c if i != at else "0.01" for i, c in enumerate(r.split(","))) for r in cells
        ]
        return "\n".join([head + "Vertex_tab (CSV):", cols, *cells])

    monkeypatch.setattr(Toolbox, "lookup", lookup)
    rows = _qa_run(mini, tmp_path / "patched", ["qa:20"])
    assert len(rows) == len(samples)
    for pred, score in rows.values():
        assert pred["tools_used"]["lookup"] >= 4
        assert score["pred"] == 0.01 and not score["correct"]


def _converse(
    provider: Any, box: Toolbox, request: ChatRequest
) -> tuple[Completion, list[dict[str, Any]]]:
    conv = Conversation(request, box, ToolBudget(*provider.tool_budget))
    while (req := conv.next_request()) is not None:
        conv.receive(provider.complete_sync(req))
    return conv.completion(), conv.transcript[1:]


def test_route_planning_reads_no_table_of_the_prompt(mini):
    """The RP answers and every tool call are the same with the prompt's tables and without."""
    full = RequestBuilder(mini, images=False)
    bare = RequestBuilder(mini, images=False, messages=False)
    box = Toolbox(full, ("lookup", "check"))
    agent = make_provider("agent-oracle")
    picked: dict[str, Any] = {}
    for sample in full.dataset.samples():
        cat = sample.row.get("category")
        if sample.kind == "rp" and cat not in picked and cat != "map_only":
            picked[cat] = sample
    assert len(picked) >= 10
    for sample in picked.values():
        with_tables = full.request(sample)
        without = bare.request(sample)
        assert len(with_tables.messages[0]["content"]) > len(without.messages[0]["content"])
        got, talk = _converse(agent, box, with_tables)
        again, talk_again = _converse(agent, box, without)
        assert re.search(r"<route_begin>.+<route_end>", got.text), sample.id
        assert (got.text, talk) == (again.text, talk_again), sample.id


def test_reasonmap_is_left_unanswered(mini):
    builder = RequestBuilder(mini, images=False)
    box = Toolbox(builder, ("zoom", "lookup", "check"))
    sample = next(s for s in builder.dataset.samples() if s.kind == "reasonmap")
    request = builder.request(sample)
    assert box.offered(request) == ()
    got, talk = _converse(make_provider("agent-oracle"), box, request)
    assert got.text == "" and talk == [{"role": "assistant", "content": ""}]
