"""A Python callable as the model (SPEC 16): ``make_provider(fn)`` or :func:`callable_provider`.

``fn(request)`` receives the :class:`~maptab.run.requests.ChatRequest` (``messages`` in the
OpenAI chat format, ``meta`` with the dataset row) and returns the reply: a string, whose
reasoning blocks are split off as for any model (:func:`maptab._reasoning.split_reasoning`),
or a :class:`~maptab.run.provider.Completion`. A plain function is called in the runner's thread,
one sample at a time (no event loop per sample); an ``async def`` function runs under the
runner's concurrency. An exception raised by ``fn`` is recorded as that sample's ``error``
(``TypeName: message``); the run goes on.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from maptab._reasoning import split_reasoning
from maptab.run.provider import Completion, ProviderError

if TYPE_CHECKING:
    from maptab.run.requests import ChatRequest

__all__ = ["AsyncCallableProvider", "CallableProvider", "callable_provider"]


def _completion(reply: Any) -> Completion:
    if isinstance(reply, Completion):
        return reply
    if not isinstance(reply, str):
        raise ProviderError(f"the model function returned {type(reply).__name__}, not str")
    text, reasoning = split_reasoning(reply)
    return Completion(text, reasoning)


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
    """A synchronous ``fn(request) -> str`` as a provider (see the module docstring)."""

    def complete_sync(self, request: ChatRequest) -> Completion:
        return _completion(self.fn(request))

    async def complete(self, request: ChatRequest) -> Completion:
        return self.complete_sync(request)


class AsyncCallableProvider(_FunctionProvider):
    """An ``async def fn(request) -> str`` as a provider (runs under the run's concurrency)."""

    fn: Callable[[ChatRequest], Awaitable[Any]]

    async def complete(self, request: ChatRequest) -> Completion:
        return _completion(await self.fn(request))


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
