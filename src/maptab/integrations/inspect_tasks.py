"""inspect_ai tasks over the task registry (``docs/guides/evaluation-harnesses.md``; extra ``maptab[inspect]``).

One adapter, :func:`maptab_task`, turns any registered task kind into an inspect ``Task``:

* **dataset** — one ``Sample`` per request ``maptab run`` sends (a ReasonMap row gives a
  ``short`` and a ``long`` sample), its input the same user message
  (:class:`maptab.run.requests.RequestBuilder`: the question, then each table shown, then
  the map image), its ``target`` the reference (oracle) answer, its metadata the kind,
  category, map and variant;
* **solver** — ``generate()``;
* **scorer** — the kind's own ``score`` (the row ``maptab score`` writes): the score value is
  a dict of the kind's plain mean metrics (RP: EMA, PMA, strict, valid, optimal, transfers;
  QA: accuracy; ReasonMap: accuracy, strict accuracy, map score), the score's ``answer`` the
  answer as maptab read it (SPEC 12; ``None`` when it did not parse), the score row (with
  ``error_type``) its metadata; each value is reported with its mean, its standard error
  clustered by map (queries of one map move together, as in maptab's own intervals, SPEC 13)
  and its mean per category (RP category, ``qa:N``, ReasonMap mode).

With ``tools`` (``-T tools=all``) the solver is maptab's tool-use mode
(``docs/guides/evaluate-with-tools.md``) on inspect's tool API: each sample is offered the
tools :meth:`~maptab.run.tools.Toolbox.offered` gives it, as inspect tools wrapping that
:class:`~maptab.run.tools.Toolbox` (a refused call is a ``ToolError`` result), and a small
loop asks the model, runs its calls with inspect's ``execute_tools`` and stops when it answers
without a tool call, asks for tools with ``max_tool_calls`` spent, or after ``max_turns``
turns; the answer is its last non-empty text, and ``tool_calls``, ``turns``, ``tools_used``
and ``stop`` join the score's metadata.

The map image is the data URL ``maptab run`` sends. inspect inlines image file paths into
its log as well, so a log sample holds its image once either way (``--no-log-images`` drops
it). A maptab error while the task is built (a missing dataset, a sample without a
reference) is inspect's ``PrerequisiteError`` too, which its CLI prints as one line.

``maptab_rp``, ``maptab_qa`` and ``reasonmap`` are the built-in kinds; ``maptab`` takes the
kind as a parameter (``-T kind=…``, a third party's too). The package's ``inspect_ai`` entry
point imports this module, so ``inspect eval maptab/maptab_rp --model …`` finds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, execute_tools
from inspect_ai.scorer import Score, Target, grouped, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from inspect_ai.tool import Tool, ToolDef, ToolError, ToolParams

from maptab.errors import MaptabError
from maptab.integrations.common import clean, resolve_dataset, sample_values
from maptab.io.dataset import Dataset, DatasetError, Maps
from maptab.run.baselines import BASELINE_CLASSES, number_text
from maptab.run.requests import ChatRequest, RequestBuilder, iter_samples
from maptab.run.tools import (
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_MAX_TURNS,
    SCHEMAS,
    Toolbox,
    ToolBudget,
    parse_tools,
)
from maptab.score.parse import Segment, parse_reasonmap
from maptab.tasks.base import TaskKind
from maptab.tasks.base import get as get_kind

try:  # inspect's CLI prints this error's message alone, without a traceback
    from inspect_ai._util.error import PrerequisiteError
except ImportError:  # pragma: no cover - a version that moved it: a plain error instead

    class PrerequisiteError(Exception):  # type: ignore[no-redef]
        """Stand-in where inspect does not have its ``PrerequisiteError`` there."""


__all__ = [
    "InspectDatasetError",
    "InspectTaskError",
    "maptab",
    "maptab_qa",
    "maptab_rp",
    "maptab_samples",
    "maptab_task",
    "reasonmap",
]


class InspectDatasetError(DatasetError, PrerequisiteError):
    """A :class:`DatasetError` that inspect's CLI prints as its one-line message (SPEC 16)."""

    def __init__(self, message: str) -> None:
        DatasetError.__init__(self, message)
        self.message = message


class InspectTaskError(MaptabError, PrerequisiteError):
    """Any other :class:`MaptabError` of building a task, printed as one line (SPEC 16)."""

    def __init__(self, message: str) -> None:
        MaptabError.__init__(self, message)
        self.message = message


def _categories(categories: str | Sequence[str] | None) -> list[str] | None:
    if categories is None or categories == "":
        return None
    if isinstance(categories, str):
        return [c.strip() for c in categories.split(",") if c.strip()]
    return list(categories)


def _message(request: ChatRequest) -> ChatMessageUser:
    """The request's user message as inspect content parts, in the same order."""
    content: list[ContentText | ContentImage] = []
    for part in request.messages[0]["content"]:
        if part.get("type") == "text":
            content.append(ContentText(text=part["text"]))
        elif part.get("type") == "image_url":
            content.append(ContentImage(image=part["image_url"]["url"]))
    return ChatMessageUser(content=content)


def maptab_samples(
    kind: TaskKind,
    dataset_dir: str | Path,
    *,
    split: str | None = None,
    categories: str | Sequence[str] | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
) -> tuple[list[Sample], dict[str, tuple[Any, str]]]:
    """The inspect samples of one kind (module docstring), and per sample id its record and
    variant (what the scorer needs). Without ``images`` no image part is attached and the
    samples that show nothing but the map are left out."""
    builder = RequestBuilder(dataset_dir, table_format=table_format, images=images)  # type: ignore[arg-type]
    oracle = BASELINE_CLASSES["oracle"](seed=0)
    wanted = [c for c in _categories(categories) or [] if kind.samples.select(c) is not None]
    if _categories(categories) and not wanted:
        return [], {}  # every category named belongs to other kinds
    samples, records = [], {}
    for s in iter_samples(dataset_dir, split=split, categories=wanted or None):
        if s.kind != kind.name:
            continue
        if not images and all(i == "map" for i in kind.prompt(s.record, s.variant).inputs):
            continue
        request = builder.request(s)
        samples.append(
            Sample(
                id=s.id,
                input=[_message(request)],
                target=_reference(kind, oracle, request, dataset_dir),
                metadata={
                    "kind": kind.name,
                    "category": kind.category_of(s.record, s.variant),
                    "map_id": s.map_id,
                    "variant": s.variant,
                },
            )
        )
        records[s.id] = (s.record, s.variant)
        if limit is not None and len(samples) >= limit:
            break
    return samples, records


def _reference(kind: TaskKind, oracle: Any, request: ChatRequest, dataset_dir: str | Path) -> str:
    """The reference (oracle) answer of ``request``; a sample that has none (a station not on
    its map, a map cut in two) is a one-line :class:`DatasetError` naming file and sample
    (SPEC 16)."""
    try:
        return kind.answer(oracle, request)
    except MaptabError:
        raise
    except ValueError as exc:
        text = str(exc).removeprefix(f"{request.id}: ")
        raise DatasetError(
            f"{Path(dataset_dir) / kind.samples.file}: sample {request.id!r}: no reference "
            f"answer ({text}); `maptab validate {dataset_dir}` lists the dataset's problems"
        ) from None


def _segment_text(seg: Segment) -> str:
    via = ""
    if seg.via_stops is not None:
        via = f" via {', '.join(seg.via_stops) or 'none'}"
    elif seg.num_via_stops is not None:
        via = f" ({seg.num_via_stops} via stops)"
    return f"{seg.route_name}: {seg.departure_stop} -> {seg.arrival_stop}{via}"


def _answer(row: dict[str, Any], completion: str, variant: str) -> str | None:
    """The answer as maptab read it (SPEC 12), from the score row's fields: ``route`` (RP),
    ``pred`` (QA), else, for a row with ``long_template`` (ReasonMap, whose row keeps no
    segments), the segments read again, ``--`` between them; ``None`` when nothing parsed."""
    if not row.get("parsed"):
        return None
    if row.get("route") is not None:
        return str(row["route"])
    if row.get("pred") is not None:
        return number_text(row["pred"])
    if "long_template" in row:
        segments = parse_reasonmap(completion, variant)
        if segments:
            return " -- ".join(_segment_text(seg) for seg in segments)
    return None


def _scorer(kind: TaskKind, dataset_dir: Path, records: dict[str, tuple[Any, str]]) -> Any:
    names = list(sample_values(kind, {}))

    per_category = grouped(mean(), "category", all=False, name_template="{group_name}")
    metrics = {name: [mean(), stderr(cluster="map_id"), per_category] for name in names}

    @scorer(metrics=metrics, name=f"maptab_{kind.name}")
    def maptab_scorer() -> Any:
        maps = Maps(Dataset(dataset_dir))

        async def score(state: TaskState, target: Target) -> Score:
            record, variant = records[str(state.sample_id)]
            completion = state.output.completion
            row = kind.scoring.score(maps, record, variant, completion)
            metadata = clean(row)
            spent = state.store.get(_TOOL_STATS)
            if isinstance(spent, dict):  # tool-use mode: what the conversation spent
                metadata.update(spent)
            return Score(
                value=sample_values(kind, row),
                answer=_answer(row, completion, variant),
                explanation=row.get("error_type") or None,
                metadata=metadata,
            )

        return score

    return maptab_scorer()


# ----------------------------------------------------------------------------- tool-use mode
_TOOL_STATS = "maptab_tools"
"""The sample store's key for what a tool-use conversation spent (read by the scorer)."""
_BUDGET_SPENT = "tool-call budget spent; answer without tools"


@dataclass(slots=True)
class _Spent:
    """Tool calls one sample's conversation has run, in all and per tool."""

    calls: int = 0
    by_tool: dict[str, int] = field(default_factory=dict)


def _tool(
    toolbox: Toolbox, request: ChatRequest, name: str, budget: ToolBudget, spent: _Spent
) -> Tool:
    """Tool ``name`` of ``request``'s sample as an inspect tool: maptab's schema, the call run
    by :meth:`Toolbox.call`; its ``error: …`` line, a call past the budget or any failure is
    a ``ToolError`` (a tool result marked as an error; the sample goes on)."""
    function = SCHEMAS[name]["function"]
    params = function["parameters"]

    async def run(**kwargs: Any) -> Any:
        if spent.calls >= budget.max_tool_calls:
            raise ToolError(_BUDGET_SPENT)
        spent.calls += 1
        spent.by_tool[name] = spent.by_tool.get(name, 0) + 1
        try:
            result = toolbox.call(request, name, kwargs)
        except Exception as exc:  # a failure of the tool itself: reported, never fatal
            raise ToolError(
                " ".join(f"{name} failed ({type(exc).__name__}: {exc})".split())
            ) from None
        if result.text.startswith("error: "):
            raise ToolError(result.text.removeprefix("error: "))
        if result.image is not None:
            return [ContentText(text=result.text), ContentImage(image=result.image)]
        return result.text

    return ToolDef(
        run,
        name=name,
        description=function["description"],
        parameters=ToolParams(properties=params["properties"], required=list(params["required"])),
    ).as_tool()


def _tool_solver(toolbox: Toolbox, requests: dict[str, ChatRequest], budget: ToolBudget) -> Solver:
    """The tool-use solver (module docstring) over ``requests`` (per sample id)."""

    @solver(name="maptab_tools")
    def maptab_tools(tools: list[str], max_turns: int, max_tool_calls: int) -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            request = requests[str(state.sample_id)]
            offered = toolbox.offered(request)
            spent = _Spent()
            state.tools = [_tool(toolbox, request, n, budget, spent) for n in offered]
            turns, stop, answer = 0, "answer", ""
            while not state.completed:
                state = await generate(state, tool_calls="none")
                turns += 1
                if state.output.completion.strip():
                    answer = state.output.completion
                if not state.output.message.tool_calls:
                    stop = "answer"
                    break
                if spent.calls >= budget.max_tool_calls:
                    stop = "max_tool_calls"
                    break
                done = await execute_tools(state.messages, state.tools)
                state.messages.extend(done.messages)
                if turns >= budget.max_turns:
                    stop = "max_turns"
                    break
            state.output.completion = answer  # the last non-empty text, as maptab run reads it
            state.store.set(
                _TOOL_STATS,
                {
                    "tools_offered": list(offered),
                    "tool_calls": spent.calls,
                    "turns": turns,
                    "tools_used": dict(sorted(spent.by_tool.items())),
                    "stop": stop,
                },
            )
            return state

        return solve

    return maptab_tools(list(toolbox.names), budget.max_turns, budget.max_tool_calls)


_FLAGS = {"--tools": "tools", "--max-turns": "max_turns", "--max-tool-calls": "max_tool_calls"}


def _tool_settings(
    tools: str | Sequence[str] | None, max_turns: int, max_tool_calls: int
) -> tuple[tuple[str, ...], ToolBudget]:
    """The tool names and budget, checked as ``maptab run`` checks them; an error names the
    task parameter rather than the command-line option."""
    for param, value in (("max_turns", max_turns), ("max_tool_calls", max_tool_calls)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise MaptabError(f"{param} must be a whole number, not {value!r}")
    try:
        return parse_tools(tools), ToolBudget(max_turns, max_tool_calls)
    except MaptabError as exc:
        text = str(exc)
        for flag, param in _FLAGS.items():
            text = text.replace(flag, param)
        raise MaptabError(text) from None


def maptab_task(
    kind: str,
    dataset: str = "mini",
    split: str | None = None,
    categories: str | Sequence[str] | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
    seed: int = 0,
    tools: str | Sequence[str] | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
) -> Task:
    """The inspect ``Task`` of task kind ``kind`` on ``dataset`` (a dataset folder or a
    preset name, built once: :func:`~maptab.integrations.common.resolve_dataset`), filtered
    as ``maptab run`` filters (``split``, ``categories`` as a list or comma-separated,
    ``limit``), tables as ``csv`` or ``json``. ``tools`` (``zoom,lookup,check`` or ``all``)
    turns on tool-use mode within ``max_turns`` model turns and ``max_tool_calls`` tool
    calls per sample (module docstring). Errors are :class:`InspectDatasetError` (a
    :class:`DatasetError`) or :class:`InspectTaskError`: one line, in inspect's CLI too."""
    try:
        names, budget = _tool_settings(tools, max_turns, max_tool_calls)
        task_kind = get_kind(kind)
        root = resolve_dataset(dataset, seed=seed, images=images)
        samples, records = maptab_samples(
            task_kind,
            root,
            split=split,
            categories=categories,
            limit=limit,
            table_format=table_format,
            images=images,
        )
        if not samples:
            why = " (images=False leaves out the samples that show only the map)"
            raise DatasetError(
                f"{root}: no {kind} sample matches the selection{why if not images else ''}"
            )
        solve: Solver = generate()
        if names:
            builder = RequestBuilder(root, table_format=table_format, images=images)  # type: ignore[arg-type]
            toolbox = Toolbox(builder, names)
            requests = {
                str(s.id): ChatRequest(
                    id=str(s.id),
                    kind=kind,
                    messages=[],
                    meta={"map_id": (s.metadata or {})["map_id"], "record": records[str(s.id)][0]},
                )
                for s in samples
            }
            solve = _tool_solver(toolbox, requests, budget)
        return Task(
            dataset=MemoryDataset(samples, name=f"maptab-{kind}", location=str(root)),
            solver=solve,
            scorer=_scorer(task_kind, root, records),
            name=kind,
        )
    except DatasetError as exc:
        raise InspectDatasetError(str(exc)) from None
    except MaptabError as exc:
        raise InspectTaskError(str(exc)) from None


@task
def maptab(
    kind: str,
    dataset: str = "mini",
    split: str | None = None,
    categories: str | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
    seed: int = 0,
    tools: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
) -> Task:
    """Any registered maptab task kind (``-T kind=<name>``)."""
    return maptab_task(**locals())  # the parameters above, as they are


@task
def maptab_rp(
    dataset: str = "mini",
    split: str | None = None,
    categories: str | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
    seed: int = 0,
    tools: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
) -> Task:
    """MapTab route planning (SPEC 11-13)."""
    return maptab_task("rp", **locals())  # the parameters above, as they are


@task
def maptab_qa(
    dataset: str = "mini",
    split: str | None = None,
    categories: str | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
    seed: int = 0,
    tools: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
) -> Task:
    """MapTab map question answering (SPEC 10-13)."""
    return maptab_task("qa", **locals())  # the parameters above, as they are


@task
def reasonmap(
    dataset: str = "mini",
    split: str | None = None,
    categories: str | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
    seed: int = 0,
    tools: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
) -> Task:
    """ReasonMap questions, short and long (SPEC 14)."""
    return maptab_task("reasonmap", **locals())  # the parameters above, as they are
