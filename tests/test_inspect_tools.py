"""Tool-use mode in the inspect_ai tasks (docs/guides/evaluate-with-tools.md), offline: a
scripted mock model calls maptab's tools through a real inspect ``eval``; the results are
maptab's Toolbox's, a map-only sample is not offered ``lookup``, bad calls come back as error
results, the final answer is scored as in the plain task, and the budgets stop a model that
keeps calling tools. Needs the extra maptab[inspect]; skipped with that reason without it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

inspect_ai = pytest.importorskip(
    "inspect_ai", reason="inspect_ai is not installed (pip install 'maptab[inspect]')"
)

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessageAssistant,
    ChatMessageTool,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall  # noqa: E402

from fakeserver import write_dataset  # noqa: E402
from maptab.integrations.inspect_tasks import InspectTaskError, maptab_task  # noqa: E402
from maptab.run.requests import RequestBuilder  # noqa: E402
from maptab.run.tools import Toolbox  # noqa: E402

pytestmark = [pytest.mark.inspect]

# rp-00000 map_only, rp-00001 edge_only, rp-00002 time, rp-00003 map_mix; qa-00000 shows the
# map only, qa-00001 the vertex table (tests/fakeserver.py)
TIME_GOLD = "Alpha-Beta(transfer)-Eta-Delta"
RED = "Alpha-Beta-Gamma-Delta"

Turn = Callable[[], ModelOutput]
Script = Callable[[str, int], ModelOutput]


@pytest.fixture(scope="module")
def ds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inspect-tools") / "ds"
    return write_dataset(root, n_rp=4, n_qa=2, n_reasonmap=0, image=(800, 200))


@pytest.fixture(scope="module")
def toolbox(ds: Path) -> tuple[Toolbox, dict[str, Any]]:
    """maptab's own Toolbox and requests: what the inspect tools must give back."""
    builder = RequestBuilder(ds)
    box = Toolbox(builder, ("zoom", "lookup", "check"))
    return box, {s.id: builder.request(s) for s in builder.dataset.samples()}


def call(tool: str, content: str = "", /, **arguments: Any) -> ModelOutput:
    """A turn that calls ``tool`` with ``arguments`` (``content``: its text)."""
    return ModelOutput.for_tool_call("mockllm/model", tool, arguments, content=content)


def answer(text: str) -> ModelOutput:
    return ModelOutput.from_content("mockllm/model", text)


def _first_text(messages: Any) -> str:
    return "\n".join(c.text for c in messages[0].content if c.type == "text")


def _eval(
    ds: Path, kind: str, script: Script, offered: dict[str, list[str]] | None = None, **params: Any
) -> Any:
    """Evaluate the task with mockllm answering ``script(sample id, turn)`` (turns from 0);
    ``offered`` collects, per sample id, the tool names the model was given. The log."""
    task = maptab_task(kind, str(ds), **params)
    by_text = {_first_text(s.input): str(s.id) for s in task.dataset}

    def respond(messages, tools, tool_choice, config):  # noqa: ANN001, ANN202
        sid = by_text[_first_text(messages)]
        turn = sum(isinstance(m, ChatMessageAssistant) for m in messages)
        if offered is not None:
            offered[sid] = [t.name for t in tools]
        out = script(sid, turn)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    model = get_model("mockllm/model", custom_outputs=respond)
    [log] = inspect_eval(task, model=model, log_dir=str(ds.parent / "logs"), display="none")
    assert log.status == "success", log.error
    return log


def _sample(log: Any, sid: str) -> Any:
    [found] = [s for s in log.samples if s.id == sid]
    return found


def _tool_messages(sample: Any) -> list[ChatMessageTool]:
    return [m for m in sample.messages if isinstance(m, ChatMessageTool)]


def _score(sample: Any) -> Any:
    [score] = sample.scores.values()
    return score


def test_tools_run_maptab_toolbox(ds: Path, toolbox: tuple[Toolbox, dict[str, Any]]) -> None:
    """lookup, check and zoom on one route-planning sample: each result is the Toolbox's."""
    box, requests = toolbox
    turns = [
        call("lookup", name="beta"),
        call("check", route=TIME_GOLD),
        call("zoom", x0=0.0, y0=0.0, x1=0.5, y1=0.5),
        answer(TIME_GOLD),
    ]
    log = _eval(ds, "rp", lambda sid, turn: turns[turn], categories="time", tools="all")
    sample = _sample(log, "rp-00002")
    lookup, check, zoom = _tool_messages(sample)
    request = requests["rp-00002"]
    assert (lookup.function, lookup.error) == ("lookup", None)
    assert lookup.text == box.lookup(request, "beta")
    assert lookup.text.startswith("Station: Beta") and "Transfer Time" in lookup.text
    assert check.text == box.check(request, TIME_GOLD) and check.text.startswith("valid:")
    assert "J = " in check.text
    assert zoom.function == "zoom" and zoom.error is None
    images = [c for c in zoom.content if c.type == "image"]
    assert len(images) == 1
    url = images[0].image  # the log keeps images as attachments
    url = sample.attachments.get(url.removeprefix("attachment://"), url)
    zoomed = box.zoom(request, 0.0, 0.0, 0.5, 0.5)
    assert url.startswith("data:image/png;base64,") and url == zoomed.image
    assert zoom.text == zoomed.text
    score = _score(sample)
    assert score.value["strict"] == 1.0 and score.answer == TIME_GOLD
    meta = score.metadata
    assert (meta["tool_calls"], meta["turns"], meta["stop"]) == (3, 4, "answer")
    assert meta["tools_used"] == {"check": 1, "lookup": 1, "zoom": 1}
    assert meta["tools_offered"] == ["zoom", "lookup", "check"]


def test_tools_offered_per_sample(ds: Path) -> None:
    """A map-only sample is not offered lookup, a table-only one not zoom, QA never check;
    a call of a tool not offered is an error result and the sample goes on."""
    offered: dict[str, list[str]] = {}

    def script(sid: str, turn: int) -> ModelOutput:
        return call("lookup", name="Beta") if turn == 0 else answer(RED)

    log = _eval(ds, "rp", script, offered, tools="zoom,lookup,check")
    assert offered == {
        "rp-00000": ["zoom", "check"],
        "rp-00001": ["lookup", "check"],
        "rp-00002": ["zoom", "lookup", "check"],
        "rp-00003": ["zoom", "lookup", "check"],
    }
    [refused] = _tool_messages(_sample(log, "rp-00000"))
    assert refused.error is not None and "lookup" in refused.error.message
    assert _score(_sample(log, "rp-00000")).metadata["tool_calls"] == 0
    [ran] = _tool_messages(_sample(log, "rp-00001"))
    assert ran.error is None and ran.text.startswith("Station: Beta")
    qa: dict[str, list[str]] = {}
    _eval(ds, "qa", lambda sid, turn: answer("2"), qa, tools="all")
    assert qa == {"qa-00000": ["zoom"], "qa-00001": ["lookup"]}


def test_bad_arguments_are_error_results(ds: Path) -> None:
    """Malformed or refused calls come back as one-line error results; the eval completes
    and the answer after them is scored."""
    turns = [
        call("zoom", x0=0.6, y0=0.0, x1=0.2, y1=1.0),  # refused by maptab's zoom
        call("lookup", name="Nowhere Street"),  # no such station
        call("zoom", x0=5, y0=0, x1=1, y1=1),  # outside the schema
        call("check", route=RED, colour="red"),  # an argument the tool does not take
        call("grep", pattern="Alpha"),  # no such tool
        answer(TIME_GOLD),
    ]
    log = _eval(ds, "rp", lambda sid, turn: turns[turn], categories="time", tools="all")
    sample = _sample(log, "rp-00002")
    results = _tool_messages(sample)
    assert len(results) == 5
    assert all(msg.error is not None and msg.error.message.strip() for msg in results)
    # maptab's own refusals are its one-line messages; inspect's argument checks are its own
    assert results[0].error.message == "zoom needs x0 < x1 and y0 < y1"
    assert results[1].error.message == "no station matches 'Nowhere Street'"
    assert "maximum" in results[2].error.message and "colour" in results[3].error.message
    assert "grep" in results[4].error.message
    score = _score(sample)
    assert score.value["strict"] == 1.0 and score.metadata["stop"] == "answer"
    assert score.metadata["tool_calls"] == 2  # the two calls that reached maptab's tools


@pytest.mark.parametrize("kind", ["rp", "qa"])
def test_final_answer_scored_as_in_the_plain_task(ds: Path, kind: str) -> None:
    """After tool calls, the same final answers get the same scores as without tools."""
    final = {"rp-00000": RED, "rp-00001": TIME_GOLD, "rp-00002": "Alpha-Delta", "rp-00003": ""}
    final |= {"qa-00000": "2", "qa-00001": "The answer is 3"}

    def with_tools(sid: str, turn: int) -> ModelOutput:
        if turn == 0 and sid in ("rp-00001", "rp-00003", "qa-00001"):
            return call("lookup", "let me look", name="Alpha")
        if turn == 0 and sid in ("rp-00000", "qa-00000"):
            return call("zoom", x0=0.1, y0=0.1, x1=0.9, y1=0.9)
        return answer(final[sid])

    tools = _eval(ds, kind, with_tools, tools="all")
    plain = _eval(ds, kind, lambda sid, turn: answer(final[sid]))
    assert len(tools.samples) == len(plain.samples) >= 2
    for mine in tools.samples:
        theirs = _score(_sample(plain, str(mine.id)))
        score = _score(mine)
        assert score.value == theirs.value and score.answer == theirs.answer, mine.id
        extra = set(score.metadata) - set(theirs.metadata)
        assert extra == {"tools_offered", "tool_calls", "turns", "tools_used", "stop"}
        assert {k: score.metadata[k] for k in theirs.metadata} == theirs.metadata
        assert "tool_calls" not in theirs.metadata


def test_max_turns_stops_a_model_that_keeps_calling(ds: Path) -> None:
    log = _eval(
        ds,
        "rp",
        lambda sid, turn: call("check", RED if turn == 0 else "", route=RED),
        categories="time",
        tools="check",
        max_turns=3,
    )
    sample = _sample(log, "rp-00002")
    meta = _score(sample).metadata
    assert (meta["turns"], meta["tool_calls"], meta["stop"]) == (3, 3, "max_turns")
    assert sum(isinstance(m, ChatMessageAssistant) for m in sample.messages) == 3
    assert sample.output.completion == RED  # the last non-empty text is the answer
    assert _score(sample).answer == RED


def test_max_tool_calls_stops_a_model_that_keeps_calling(ds: Path) -> None:
    """Three calls in one turn with two left: the third is refused; asked again for tools
    with none left, the conversation ends."""

    def script(sid: str, turn: int) -> ModelOutput:
        out = call("check", route=RED)
        extra = [
            ToolCall(id=f"c{turn}-{i}", function="check", arguments={"route": RED}) for i in (1, 2)
        ]
        out.message.tool_calls = [*(out.message.tool_calls or []), *extra]
        return out

    log = _eval(ds, "rp", script, categories="time", tools="check", max_tool_calls=2)
    sample = _sample(log, "rp-00002")
    meta = _score(sample).metadata
    assert (meta["turns"], meta["tool_calls"], meta["stop"]) == (2, 2, "max_tool_calls")
    results = _tool_messages(sample)
    assert [m.error is None for m in results] == [True, True, False]
    assert "budget spent" in results[2].error.message
    assert _score(sample).value["strict"] == 0.0  # never answered with a route


def test_tool_settings_errors_are_one_line(ds: Path) -> None:
    with pytest.raises(InspectTaskError, match="^tools: unknown tool 'grep'") as info:
        maptab_task("rp", str(ds), tools="zoom,grep")
    assert "\n" not in str(info.value)
    with pytest.raises(InspectTaskError, match="^max_turns must be at least 1$"):
        maptab_task("rp", str(ds), tools="all", max_turns=0)
    with pytest.raises(InspectTaskError, match="^max_tool_calls must be at least 0$"):
        maptab_task("rp", str(ds), tools="all", max_tool_calls=-1)
    with pytest.raises(InspectTaskError, match="^max_turns must be a whole number, not 'x'$"):
        maptab_task("rp", str(ds), tools="all", max_turns="x")  # type: ignore[arg-type]


def test_registered_tasks_take_the_tool_parameters(ds: Path) -> None:
    """`inspect eval maptab/maptab_rp -T tools=all` builds the tool-use solver; no tools is
    the plain generate()."""
    from inspect_ai._util.registry import registry_info, registry_lookup

    for name in ("maptab_rp", "maptab_qa"):
        factory = registry_lookup("task", f"maptab/{name}")
        task = factory(dataset=str(ds), tools="all", max_turns=4, max_tool_calls=5)
        [solver] = task.solver if isinstance(task.solver, list) else [task.solver]
        assert registry_info(solver).name.endswith("maptab_tools"), name
        plain = factory(dataset=str(ds))
        [solver] = plain.solver if isinstance(plain.solver, list) else [plain.solver]
        assert registry_info(solver).name.endswith("generate"), name
