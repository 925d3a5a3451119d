"""Tool-use mode beyond the OpenAI-compatible provider: tool calls read from a local vLLM
engine's text, and a Python function model that calls tools through ``maptab.run_model``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import maptab
from fakeserver import write_dataset
from maptab.core.schema import RPQuery
from maptab.errors import MaptabError
from maptab.generate.pipeline import build_benchmark
from maptab.run.provider import Completion, ToolCall
from maptab.run.requests import ChatRequest
from maptab.run.vllm_provider import VLLMProvider, parse_tool_calls

LOOKUP = '{"name": "lookup", "arguments": {"name": "Beta"}}'
CHECK = '{"name": "check", "arguments": {"route": "A-B"}}'


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]


def _calls(text: str, turn: int = 0) -> tuple[str, list[tuple[str, str, str]]]:
    rest, calls = parse_tool_calls(text, turn)
    return rest, [(c.id, c.name, c.arguments) for c in calls]


# ----------------------------------------------------------------------------- the rule
@pytest.mark.parametrize(
    ("text", "rest", "names"),
    [
        (f"<tool_call>{LOOKUP}</tool_call>", "", ["lookup"]),
        (
            f"I look.\n<tool_call>\n{LOOKUP}\n</tool_call>\n<tool_call>{CHECK}</tool_call>",
            "I look.",
            ["lookup", "check"],
        ),
        (f"<tool_call>{LOOKUP}", "", ["lookup"]),  # the last block left unclosed
        (LOOKUP, "", ["lookup"]),
        (f"  [{LOOKUP}, {CHECK}]  ", "", ["lookup", "check"]),
        (f"[TOOL_CALLS][{CHECK}]", "", ["check"]),
        ('<|python_tag|>{"name": "lookup", "parameters": {"name": "Beta"}}', "", ["lookup"]),
        (f"```json\n{LOOKUP}\n```", "", ["lookup"]),
    ],
)
def test_tool_calls_are_read_from_the_common_json_forms(text, rest, names):
    got_rest, calls = _calls(text)
    assert got_rest == rest
    assert [name for _, name, _ in calls] == names
    assert all(json.loads(args) in ({"name": "Beta"}, {"route": "A-B"}) for _, _, args in calls)


@pytest.mark.parametrize(
    "text",
    [
        "<route_begin>Alpha-Beta<route_end>",
        '{"answer": 3}',  # JSON, but no call object
        "[]",
        f"{LOOKUP} and then more text",  # not the whole text
        f"<tool_call>{LOOKUP}</tool_call><tool_call>{{broken</tool_call>",  # one bad block
        '<tool_call>{"arguments": {}}</tool_call>',  # no name
    ],
)
def test_anything_else_is_an_answer_kept_whole(text):
    assert _calls(text) == (text, [])


def test_call_ids_and_arguments_the_template_can_read_back():
    text = (
        '<tool_call>{"name": "lookup", "arguments": "{\\"name\\": \\"Beta\\"}"}</tool_call>'
        '<tool_call>{"name": "lookup", "arguments": "{broken"}</tool_call>'
        '<tool_call>{"name": "zoom"}</tool_call>'
    )
    _, calls = _calls(text, turn=3)
    assert [c[0] for c in calls] == ["c00030000", "c00030001", "c00030002"]
    assert all(len(i) == 9 and i.isalnum() for i, _, _ in calls)
    args = [a for _, _, a in calls]
    assert args[0] == '{"name": "Beta"}'  # a string holding an object's JSON is kept
    assert json.loads(args[1]) == "{broken"  # anything else is sent back as a JSON string
    assert args[2] == "{}"


# ----------------------------------------------------------------------------- vLLM
class _Gen:
    def __init__(self, text: str) -> None:
        self.text, self.token_ids = text, [1, 2]


class _Out:
    def __init__(self, text: str) -> None:
        self.outputs, self.prompt_token_ids = [_Gen(text)], [0] * 4


class ScriptedEngine:
    """vLLM's ``chat`` API: looks Beta up (Hermes style, after thinking), checks a route
    (bare JSON), then answers; records what it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[list[dict[str, Any]], list[str] | None]] = []

    def chat(self, convs, params, tools=None):
        out = []
        for conv in convs:
            names = [t["function"]["name"] for t in tools] if tools else None
            self.seen.append((conv, names))
            turn = sum(1 for m in conv if m["role"] == "assistant")
            if turn == 0:
                out.append(
                    _Out(f"<think>need Beta</think>Looking.\n<tool_call>{LOOKUP}</tool_call>")
                )
            elif turn == 1:
                route = '{"route": "Alpha-Beta(transfer)-Eta-Delta"}'
                out.append(_Out(f'[{{"name": "check", "arguments": {route}}}]'))
            else:
                out.append(_Out("<route_begin>Alpha-Beta(transfer)-Eta-Delta<route_end>"))
        return out


def test_a_vllm_run_with_tools_converses_and_stores_the_transcript(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=0, n_reasonmap=0, image=(200, 100))
    engine = ScriptedEngine()
    provider = VLLMProvider("local", engine=engine, batch_size=8, batch_wait=0.01)
    out = tmp_path / "run"
    s = maptab.run_model(ds, provider, out, categories=["time"], tools="lookup,check")
    assert (s.completed, s.errors) == (1, 0)
    assert [names for _, names in engine.seen] == [["lookup", "check"]] * 3
    second = engine.seen[1][0]
    assert [m["role"] for m in second] == ["user", "assistant", "tool"]
    assert second[1]["content"] == "Looking."
    assert second[1]["tool_calls"][0]["id"] == "c00000000"
    assert second[2]["tool_call_id"] == "c00000000"
    assert second[2]["content"].startswith("Station: Beta")
    third = engine.seen[2][0]
    assert third[-1]["content"].startswith("valid: 4 stations")
    (row,) = _rows(out)
    assert row["response"] == "<route_begin>Alpha-Beta(transfer)-Eta-Delta<route_end>"
    assert row["reasoning"] == "need Beta"
    assert (row["turns"], row["tool_calls"], row["stop"]) == (3, 2, "answer")
    assert row["tools_used"] == {"check": 1, "lookup": 1}
    assert [m["role"] for m in row["transcript"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert row["completion_tokens"] == 6  # 2 per turn, summed


def test_a_vllm_run_without_tools_sends_no_tools_and_reads_no_calls(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=0, n_reasonmap=0, image=(200, 100))
    engine = ScriptedEngine()
    provider = VLLMProvider("local", engine=engine, batch_size=8, batch_wait=0.01)
    maptab.run_model(ds, provider, tmp_path / "run", categories=["time"])
    assert [names for _, names in engine.seen] == [None]
    (row,) = _rows(tmp_path / "run")
    assert row["response"].endswith(f"<tool_call>{LOOKUP}</tool_call>")
    assert "transcript" not in row


# ----------------------------------------------------------------------------- functions
@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fn") / "mini"
    build_benchmark(root, preset="mini", seed=3)
    return root


def looks_up_then_answers(request: ChatRequest) -> dict[str, Any] | str:
    """Turn 0: look the source up; turn 1: answer from the endpoints of the lookup."""
    q = request.meta["record"]
    assert isinstance(q, RPQuery)
    if not any(m["role"] == "tool" for m in request.messages):
        assert [t["function"]["name"] for t in request.tools or ()] == ["lookup", "check"]
        return {
            "text": "<think>who is it</think>",
            "tool_calls": [{"name": "lookup", "arguments": {"name": q.source}}],
        }
    result = request.messages[-1]["content"]
    assert result.startswith(f"Station: {q.source}")
    return f"<route_begin>{q.source}-{q.target}<route_end>"


def test_a_function_looks_up_then_answers_and_its_transcript_is_stored(mini, tmp_path):
    out = tmp_path / "fn"
    s = maptab.run_model(
        mini,
        looks_up_then_answers,
        out,
        categories=["edge_only"],
        limit=5,
        tools="all",
        max_turns=8,
        max_tool_calls=16,
    )
    assert (s.total, s.errors) == (5, 0)
    rows = _rows(out)
    for row in rows:
        assert row["error"] is None
        assert (row["turns"], row["tool_calls"], row["stop"]) == (2, 1, "answer")
        assert row["tools_used"] == {"lookup": 1}
        assert row["reasoning"] == "who is it"
        roles = [m["role"] for m in row["transcript"]]
        assert roles == ["user", "assistant", "tool", "assistant"]
        asked, answered = row["transcript"][1], row["transcript"][2]
        assert asked["tool_calls"][0]["id"] == answered["tool_call_id"] == "c00000000"
        assert answered["name"] == "lookup" and answered["content"].startswith("Station: ")
        assert row["response"].startswith("<route_begin>")
    record = json.loads((out / "run.json").read_text())
    assert record["tools"] == {
        "tools": ["zoom", "lookup", "check"],
        "max_turns": 8,
        "max_tool_calls": 16,
    }
    assert record["summary"]["tool_stats"]["tool_calls"] == 5


def test_an_async_function_may_return_a_completion_with_tool_calls(mini, tmp_path):
    async def checker(request: ChatRequest) -> Completion:
        q = request.meta["record"]
        if request.messages[-1]["role"] != "tool":
            route = json.dumps({"route": f"{q.source}-{q.target}"})
            return Completion("", tool_calls=[ToolCall("mine", "check", route)])
        return Completion(request.messages[-1]["content"])

    out = tmp_path / "async"
    maptab.run_model(
        mini, checker, out, categories=["time"], limit=2, tools="check", uses_images=False
    )
    for row in _rows(out):
        assert row["transcript"][2]["tool_call_id"] == "mine"
        assert row["response"].startswith("invalid: ")  # source-target is never adjacent here
        assert row["tools_used"] == {"check": 1}


def test_a_bad_reply_is_the_samples_error_and_budgets_need_tools(mini, tmp_path):
    def typo(request: ChatRequest) -> dict[str, Any]:
        return {"text": "", "tool_calls": [{"name": "lookup", "argument": {"name": "x"}}]}

    out = tmp_path / "typo"
    s = maptab.run_model(mini, typo, out, categories=["edge_only"], limit=1, tools="all")
    (row,) = _rows(out)
    assert s.errors == 1 and "unknown key 'argument'" in row["error"]
    assert row["transcript"][0]["role"] == "user"  # the conversation so far is kept
    with pytest.raises(MaptabError, match="need tools"):
        maptab.run_model(mini, typo, tmp_path / "none", max_turns=3)
    with pytest.raises(MaptabError, match="unknown tool 'grep'"):
        maptab.run_model(mini, typo, tmp_path / "grep", tools="grep")
