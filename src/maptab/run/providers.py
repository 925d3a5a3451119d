"""The provider interface: anything that turns a :class:`ChatRequest` into a completion.

Providers are HTTP endpoints (:class:`~maptab.run.openai_provider.OpenAIProvider`), a local
vLLM engine (:class:`~maptab.run.vllm_provider.VLLMProvider`) or built-in baselines
(:mod:`maptab.run.baselines`). :func:`make_provider` builds one from a ``--model`` spec.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from maptab.errors import MaptabError
from maptab.run.requests import ChatRequest


class ProviderError(MaptabError, RuntimeError):
    """A request that failed for good (after its retries); recorded as the row's ``error``."""


class ProviderConfigError(MaptabError):
    """A provider that cannot be set up (bad spec, missing key, missing extra)."""


@dataclass(slots=True)
class Completion:
    """A model's answer, with any reasoning kept apart from it."""

    text: str
    reasoning: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


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


_THINK = re.compile(r"<(think|thinking|reasoning)>(.*?)(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)
_CLOSE_ONLY = re.compile(r"^(.*?)</(think|thinking|reasoning)>", re.DOTALL | re.IGNORECASE)


def split_reasoning(text: str) -> tuple[str, str]:
    """``(answer, reasoning)``: ``<think>…</think>`` blocks moved out of the answer.

    An unclosed block runs to the end (a reply cut off while thinking has no answer). A
    closing tag with no opening one (chat templates that open the block in the prompt)
    makes everything before it reasoning.
    """
    reasoning: list[str] = []
    m = _CLOSE_ONLY.match(text)
    if m and f"<{m.group(2).lower()}>" not in m.group(1).lower():
        reasoning.append(m.group(1).strip())
        text = text[m.end() :]

    def _take(mt: re.Match[str]) -> str:
        reasoning.append(mt.group(2).strip())
        return ""

    answer = _THINK.sub(_take, text)
    return answer.strip(), "\n\n".join(r for r in reasoning if r)


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


BASELINES = ("oracle", "shortest", "random", "blank")


def make_provider(spec: str, **opts: Any) -> Provider:
    """A provider from a ``--model`` spec.

    ``openai:NAME`` (an OpenAI-compatible endpoint; ``base_url``, ``api_key_env``,
    ``concurrency``, ``timeout``, ``max_retries``, ``rpm``, ``temperature``, ``max_tokens``,
    ``thinking_budget``, ``extra_body`` go to :class:`OpenAIProvider`), ``vllm:PATH`` (a
    local engine, optional extra), or a baseline: ``oracle``, ``shortest``, ``random``
    (``seed``), ``blank``. Options a provider does not take are ignored. Raises
    :class:`ProviderConfigError` on an unknown spec.
    """
    kind, _, arg = spec.partition(":")
    if kind == "openai" and arg:
        from maptab.run.openai_provider import OpenAIProvider

        return OpenAIProvider(model=arg, **_accepted(OpenAIProvider, opts))
    if kind == "vllm" and arg:
        from maptab.run.vllm_provider import VLLMProvider

        return VLLMProvider(path=arg, **_accepted(VLLMProvider, opts))
    if kind in BASELINES and not arg:
        from maptab.run import baselines

        cls = baselines.BASELINE_CLASSES[kind]
        return cls(**_accepted(cls, opts))
    raise ProviderConfigError(
        f"unknown model spec {spec!r}; expected openai:NAME, vllm:PATH, or one of {', '.join(BASELINES)}"
    )


def _accepted(cls: type, opts: dict[str, Any]) -> dict[str, Any]:
    import inspect

    params = inspect.signature(cls.__init__).parameters
    return {k: v for k, v in opts.items() if k in params and v is not None}
