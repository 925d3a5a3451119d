"""A Python callable as the model (SPEC 16): ``make_provider(fn)`` or :func:`callable_provider`.

``fn(request)`` receives the :class:`~maptab.run.requests.ChatRequest` (``messages`` in the
OpenAI chat format, ``meta`` with the dataset row) and returns the reply: a string, whose
reasoning blocks are split off as for any model (:func:`maptab._reasoning.split_reasoning`),
a :class:`~maptab.run.provider.Completion`, or a dict (below). A plain function is called in
the runner's thread, one sample at a time (no event loop per sample); an ``async def``
function runs under the runner's concurrency. An exception raised by ``fn`` is recorded as
that sample's ``error`` (``TypeName: message``); the run goes on.

In tool-use mode (``run_model(..., tools=...)``, :mod:`maptab.run.tools`) ``request.tools``
lists the tools offered (OpenAI function schemas) and ``request.messages`` the conversation
so far, tool results included. A function asks for tools by returning
``{"text": "...", "tool_calls": [{"name": "lookup", "arguments": {"name": "Beta"}}]}``
(``text`` optional; ``arguments`` an object or its JSON text; an ``id`` optional, made up as
:func:`call_id` otherwise) or a ``Completion`` whose ``tool_calls`` are
:class:`~maptab.run.provider.ToolCall`; a reply without tool calls is its answer. A dict
with other keys, or a call without a string ``name``, is that sample's ``error``.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from maptab._reasoning import split_reasoning
from maptab.run.provider import Completion, ProviderError, ToolCall

if TYPE_CHECKING:
    from maptab.run.requests import ChatRequest

__all__ = [
    "AsyncCallableProvider",
    "CallableProvider",
    "call_id",
    "callable_provider",
    "tool_call",
    "turn_of",
]

_REPLY_KEYS = frozenset({"text", "tool_calls"})
_CALL_KEYS = frozenset({"id", "name", "arguments"})


def call_id(turn: int, index: int) -> str:
    """The id given to tool call ``index`` of model turn ``turn`` when the model names none:
    ``c`` and eight digits (nine letters and digits, which every chat template accepts)."""
    return f"c{turn:04d}{index:04d}"


def turn_of(request: ChatRequest) -> int:
    """The model turn ``request`` asks for: the assistant messages already in it."""
    return sum(1 for m in request.messages if m.get("role") == "assistant")


def tool_call(obj: Any, default_id: str) -> ToolCall:
    """A :class:`ToolCall` from ``{"name": str, "arguments": object or JSON text}``
    (``parameters`` accepted for ``arguments``, absent meaning ``{}``; ``id`` optional,
    else ``default_id``; other keys ignored); raises ``ValueError`` for anything else."""
    if isinstance(obj, ToolCall):
        return obj
    if not isinstance(obj, Mapping) or not isinstance(obj.get("name"), str):
        raise ValueError("a tool call must be an object with a string 'name'")
    args = obj.get("arguments", obj.get("parameters"))
    if not isinstance(args, str):
        args = json.dumps({} if args is None else args, ensure_ascii=False)
    ident = obj.get("id")
    return ToolCall(ident if isinstance(ident, str) and ident else default_id, obj["name"], args)


def _completion(reply: Any, request: ChatRequest | None = None) -> Completion:
    if isinstance(reply, Completion):
        return reply
    calls: list[ToolCall] = []
    if isinstance(reply, Mapping):
        extra = sorted(set(reply) - _REPLY_KEYS)
        if extra:
            raise ProviderError(
                f"the model function returned a dict with key {extra[0]!r}; "
                "expected 'text' and 'tool_calls'"
            )
        raw = reply.get("tool_calls") or []
        if not isinstance(raw, list | tuple):
            raise ProviderError("the model function's 'tool_calls' is not a list")
        turn = turn_of(request) if request is not None else 0
        try:
            for i, c in enumerate(raw):
                extra = sorted(set(c) - _CALL_KEYS) if isinstance(c, Mapping) else []
                if extra:
                    raise ValueError(f"unknown key {extra[0]!r}")
                calls.append(tool_call(c, call_id(turn, i)))
        except ValueError as exc:
            raise ProviderError(f"the model function returned a bad tool call ({exc})") from None
        reply = reply.get("text") or ""
    if not isinstance(reply, str):
        raise ProviderError(f"the model function returned {type(reply).__name__}, not str")
    text, reasoning = split_reasoning(reply)
    return Completion(text, reasoning, tool_calls=calls)


class _FunctionProvider:
    """What a function-backed provider records: its name, model name, settings and whether
    its requests carry images; it holds nothing to close."""

    def __init__(
        self,
        fn: Callable[[ChatRequest], Any],
        *,
        name: str = "callable",
        model: str | None = None,
        uses_images: bool = True,
        settings: dict[str, Any] | None = None,
    ) -> None:
        self.fn = fn
        self.name = name
        self.model = model or getattr(fn, "__name__", type(fn).__name__)
        self.uses_images = uses_images
        self.settings: dict[str, Any] = dict(settings or {})

    async def aclose(self) -> None:
        return None


class CallableProvider(_FunctionProvider):
    """A synchronous ``fn(request) -> str`` (or ``Completion``, or dict) as a provider (see
    the module docstring)."""

    def complete_sync(self, request: ChatRequest) -> Completion:
        return _completion(self.fn(request), request)

    async def complete(self, request: ChatRequest) -> Completion:
        return self.complete_sync(request)


class AsyncCallableProvider(_FunctionProvider):
    """An ``async def fn(request) -> str`` as a provider (runs under the run's concurrency)."""

    fn: Callable[[ChatRequest], Awaitable[Any]]

    async def complete(self, request: ChatRequest) -> Completion:
        return _completion(await self.fn(request), request)


def callable_provider(
    fn: Callable[[ChatRequest], Any],
    *,
    name: str = "callable",
    model: str | None = None,
    uses_images: bool = True,
    settings: dict[str, Any] | None = None,
) -> CallableProvider | AsyncCallableProvider:
    """The provider for ``fn``: :class:`AsyncCallableProvider` for a coroutine function
    (or an object whose ``__call__`` is one), else :class:`CallableProvider`."""
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - a callable object's own method
    )
    cls = AsyncCallableProvider if is_async else CallableProvider
    return cls(fn, name=name, model=model, uses_images=uses_images, settings=settings)
