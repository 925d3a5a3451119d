"""A local vLLM engine (optional extra ``maptab[vllm]``; imported only when used).

Requests arriving together are gathered into batches of up to ``batch_size`` (waiting at
most ``batch_wait`` seconds for a batch to fill) and handed to ``LLM.chat`` in a worker
thread, one batch at a time, so the engine sees large batches while the run loop stays
responsive. Images travel as the same data URLs as for HTTP providers.

**Tool calls** (``--tools``, :mod:`maptab.run.tools`). A request that offers tools goes to
``LLM.chat(..., tools=request.tools)``, so that the model's chat template shows them (a
batch is split into groups offering the same tools, one ``chat`` call each). ``LLM.chat``
returns text: once any reasoning block is split off, the text is read for tool calls with
the rule below, which covers the JSON forms of common chat templates. A *call object* is a
JSON object with a string ``name`` and ``arguments`` (or ``parameters``; absent: ``{}``).

1. Hermes style (Qwen, Hermes, …): ``<tool_call>`` … ``</tool_call>`` blocks, each holding
   one call object (a last block left unclosed counts too). The text outside the blocks is
   the message's text. If any block does not hold a call object, there is no call and the
   whole text is the answer, as vLLM's own ``hermes`` parser does.
2. Otherwise, the whole text being a call object or a non-empty list of them, possibly
   after a ``[TOOL_CALLS]`` (Mistral) or ``<|python_tag|>`` (Llama) marker and possibly
   inside one Markdown code fence: these calls, no text.
3. Anything else is an answer.

Calls get ids :func:`~maptab.run.callable_provider.call_id` (turn and index; nine letters
and digits, as Mistral's tokenizer requires). Arguments that are not an object's JSON text
are sent back to the template JSON-encoded (``LLM.chat`` decodes every earlier call's
arguments), and the tool answers that its arguments must be an object. A request without
tools is sent and read as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from dataclasses import replace
from typing import Any

from maptab._reasoning import split_reasoning
from maptab.run.callable_provider import call_id, tool_call, turn_of
from maptab.run.provider import Completion, ProviderConfigError, ProviderError, ToolCall
from maptab.run.requests import ChatRequest

__all__ = ["VLLMProvider", "parse_tool_calls"]

_Item = tuple[ChatRequest, "asyncio.Future[Completion]"]
_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_MARKERS = ("[TOOL_CALLS]", "<|python_tag|>")
_FENCE = re.compile(r"```[A-Za-z]*\s*(.*?)\s*```", re.DOTALL)


class VLLMProvider:
    """Offline generation with ``vllm.LLM`` from a local model folder ``path``.

    Greedy decoding by default (``temperature=0``), at most ``max_tokens`` new tokens (2,048,
    as the papers). ``engine_args`` go to ``vllm.LLM`` (e.g. ``tensor_parallel_size``,
    ``max_model_len``, ``limit_mm_per_prompt``). ``engine`` injects an already built object
    with vLLM's ``chat(conversations, sampling_params, tools=None)`` API (used by tests;
    ``tools`` is passed only for requests that offer tools).
    """

    name = "vllm"
    uses_images = True

    def __init__(
        self,
        path: str,
        *,
        temperature: float = 0.0,
        max_tokens: int = 2048,
        batch_size: int = 64,
        batch_wait: float = 0.05,
        engine_args: dict[str, Any] | None = None,
        engine: Any = None,
    ) -> None:
        self.model = path
        self.batch_size = batch_size
        self.batch_wait = batch_wait
        self.settings: dict[str, Any] = {
            "temperature": temperature,
            "max_tokens": max_tokens,
            "engine_args": engine_args or None,
        }
        if engine is None:
            try:
                import vllm
            except ImportError:
                raise ProviderConfigError(
                    "the vllm provider needs the optional extra: pip install 'maptab[vllm]'"
                ) from None
            engine = vllm.LLM(model=path, **(engine_args or {}))
            self._params: Any = vllm.SamplingParams(temperature=temperature, max_tokens=max_tokens)
        else:
            self._params = {"temperature": temperature, "max_tokens": max_tokens}
        self._engine = engine
        self._queue: asyncio.Queue[_Item] | None = None
        self._task: asyncio.Task[None] | None = None

    async def complete(self, request: ChatRequest) -> Completion:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._task = asyncio.create_task(self._batches())
        fut: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        await self._queue.put((request, fut))
        return await fut

    async def _batches(self) -> None:
        assert self._queue is not None
        while True:
            batch = [await self._queue.get()]
            deadline = asyncio.get_running_loop().time() + self.batch_wait
            while len(batch) < self.batch_size:
                timeout = deadline - asyncio.get_running_loop().time()
                try:
                    batch.append(await asyncio.wait_for(self._queue.get(), max(0.0, timeout)))
                except TimeoutError:
                    break
            groups: dict[str, list[_Item]] = {}
            for item in batch:  # LLM.chat takes one tools list for all its conversations
                key = json.dumps(item[0].tools, sort_keys=True) if item[0].tools else ""
                groups.setdefault(key, []).append(item)
            for group in groups.values():
                await self._generate(group)

    async def _generate(self, group: list[_Item]) -> None:
        """One ``LLM.chat`` call for requests offering the same tools; settles their futures."""
        convs = [req.messages for req, _ in group]
        tools = group[0][0].tools
        try:
            kw = {"tools": tools} if tools else {}
            outputs = list(await asyncio.to_thread(self._engine.chat, convs, self._params, **kw))
            if len(outputs) != len(group):
                raise ValueError(f"{len(outputs)} outputs for {len(group)} conversations")
        except Exception as exc:  # the engine's failure fails this group, not the run
            for _, fut in group:
                if not fut.done():
                    fut.set_exception(ProviderError(f"vllm: {type(exc).__name__}: {exc}"))
            return
        for (req, fut), out in zip(group, outputs, strict=True):
            if fut.done():
                continue
            try:
                fut.set_result(_completion(out, req))
            except Exception as exc:  # a malformed output fails its request, not the loop
                fut.set_exception(ProviderError(f"vllm: malformed output ({exc})"))

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


def _completion(out: Any, request: ChatRequest | None = None) -> Completion:
    """A :class:`Completion` from a vLLM ``RequestOutput``; tool calls are read only for a
    request that offers tools (module docstring)."""
    gen = out.outputs[0]
    text, reasoning = split_reasoning(gen.text)
    calls: list[ToolCall] = []
    if request is not None and request.tools:
        text, calls = parse_tool_calls(text, turn_of(request))
    return Completion(
        text,
        reasoning,
        len(out.prompt_token_ids or ()),
        len(getattr(gen, "token_ids", ()) or ()),
        calls,
    )


def parse_tool_calls(text: str, turn: int = 0) -> tuple[str, list[ToolCall]]:
    """``(text, tool calls)`` read from a model's generated ``text`` (reasoning already split
    off) by the module docstring's rule; ``turn`` numbers the calls' ids."""
    if "<tool_call>" in text:
        objs = []
        for body in _BLOCK.findall(text):
            obj = _json(body)
            if not _is_call(obj):
                return text, []
            objs.append(obj)
        return _BLOCK.sub("", text).strip(), _calls(objs, turn)
    body = text.strip()
    for marker in _MARKERS:
        body = body.removeprefix(marker).lstrip()
    fenced = _FENCE.fullmatch(body)
    obj = _json(fenced.group(1) if fenced else body)
    objs = obj if isinstance(obj, list) else [obj]
    if objs and all(_is_call(o) for o in objs):
        return "", _calls(objs, turn)
    return text, []


def _json(text: str) -> Any:
    """``text`` decoded as JSON, or ``None``."""
    text = text.strip()
    if not text.startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _is_call(obj: Any) -> bool:
    """Whether ``obj`` is a call object (module docstring)."""
    return isinstance(obj, dict) and isinstance(obj.get("name"), str) and bool(obj["name"])


def _calls(objs: list[dict[str, Any]], turn: int) -> list[ToolCall]:
    """The :class:`ToolCall` of each call object; arguments that are not an object's JSON
    text are JSON-encoded (the chat template decodes them on the next turn)."""
    out = []
    for i, obj in enumerate(objs):
        call = tool_call(obj, call_id(turn, i))
        if not isinstance(_json(call.arguments), dict):
            call = replace(call, arguments=json.dumps(call.arguments, ensure_ascii=False))
        out.append(call)
    return out
