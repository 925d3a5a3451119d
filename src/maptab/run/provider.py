"""The provider interface (SPEC 16): what a model must offer to be run on a dataset.

This module is the bottom of the run stage's provider layer: concrete providers
(:mod:`maptab.run.openai_provider`, :mod:`maptab.run.vllm_provider`,
:mod:`maptab.run.baselines`, third-party ones) import it, and it imports none of them.

A provider is any object with ``name``, ``model``, ``settings``, ``uses_images`` and the
coroutines ``complete(request) -> Completion`` and ``aclose()``. It may set
``uses_messages = False`` when it never reads ``request.messages`` (it answers from
``request.meta``, as the baselines do): the runner then builds no table text and no image
for it (:func:`uses_messages`; absent means true). One that answers in
process without waiting on anything (the baselines, a Python callable) may also offer
``complete_sync(request) -> Completion``: the runner then calls it directly, with no
per-sample event-loop overhead (:class:`SyncProvider`). One that answers through a server may
offer the coroutine ``probe()``, which the runner awaits before any sample (:func:`probe`): it
raises :class:`EndpointUnreachable` when the server cannot be reached, as ``complete`` does
once the server is gone for good (SPEC 16: the run stops, its rows kept).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from maptab.errors import MaptabError

if TYPE_CHECKING:
    from maptab.run.requests import ChatRequest

__all__ = [
    "Completion",
    "EndpointUnreachable",
    "InProcessProvider",
    "Provider",
    "ProviderConfigError",
    "ProviderError",
    "RateLimiter",
    "SyncProvider",
    "ToolCall",
    "probe",
    "uses_messages",
]


class ProviderError(MaptabError):
    """A request that failed for good (after its retries); recorded as the row's ``error``."""


class ProviderConfigError(MaptabError):
    """A provider that cannot be set up (bad spec, missing key, missing extra)."""


class EndpointUnreachable(MaptabError):
    """The model's server cannot be reached (refused, unknown host, TLS, connect timeout): the
    run stops with this one-line message instead of recording an error per sample (SPEC 16)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a model asks for: the call's ``id``, the tool's ``name`` and its
    ``arguments`` (the JSON text the model wrote; :mod:`maptab.run.tools`)."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class Completion:
    """A model's answer, with any reasoning kept apart from it, and the tool calls it asks
    for (empty unless the request offered tools)."""

    text: str
    reasoning: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: list[ToolCall] = field(default_factory=list)


@runtime_checkable
class Provider(Protocol):
    """What :func:`maptab.run.runner.run` needs from a model.

    ``name`` is the provider kind (``openai``, ``vllm``, ``oracle``…), ``model`` the model
    name, ``settings`` the generation settings recorded with every prediction (never a
    key), ``uses_images`` whether requests need their image parts.
    """

    name: str
    model: str
    settings: dict[str, Any]
    uses_images: bool

    async def complete(self, request: ChatRequest) -> Completion: ...

    async def aclose(self) -> None: ...


def uses_messages(provider: object) -> bool:
    """Whether ``provider`` reads the requests' messages (its optional ``uses_messages``
    flag; a provider without the flag does)."""
    return bool(getattr(provider, "uses_messages", True))


async def probe(provider: object) -> None:
    """Await ``provider``'s optional ``probe()`` (absent: nothing to check); it raises
    :class:`EndpointUnreachable` for a server that cannot be reached (SPEC 16)."""
    check = getattr(provider, "probe", None)
    result = check() if callable(check) else None
    if inspect.isawaitable(result):
        await result


@runtime_checkable
class SyncProvider(Provider, Protocol):
    """A provider that answers in process: ``complete_sync`` gives the same completion as
    ``complete`` without an event loop (the runner's fast path)."""

    def complete_sync(self, request: ChatRequest) -> Completion: ...


class RateLimiter:
    """At most ``rpm`` request starts per minute, evenly spaced (``None``: unlimited)."""

    def __init__(self, rpm: float | None) -> None:
        if rpm is not None and rpm <= 0:
            raise ProviderConfigError("--rpm must be positive")
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


class InProcessProvider:
    """A base for providers that compute each answer in process from the request:
    subclasses define ``answer(request) -> str``; ``complete`` and ``complete_sync`` wrap it
    (no reasoning, no token counts), so the runner takes its synchronous fast path."""

    name = ""
    model = ""
    uses_images = False
    uses_messages = True
    settings: dict[str, Any]

    def answer(self, request: ChatRequest) -> str:
        raise NotImplementedError

    def complete_sync(self, request: ChatRequest) -> Completion:
        return Completion(self.answer(request))

    async def complete(self, request: ChatRequest) -> Completion:
        return self.complete_sync(request)

    async def aclose(self) -> None:
        return None
