"""OpenAI-compatible chat completions (hosted APIs, vLLM / SGLang servers), SPEC 16.

Requests go through the client's generic ``post`` (the documented way to call an endpoint
with a raw body) rather than ``chat.completions.create``: the body is already in the wire
format, and ``create`` re-walks every message part (table text, base64 image) through its
type transformer, which cost more CPU than everything else per request. Responses are
parsed into the client's ``ChatCompletion`` model as usual.

Retries are ours, not the client's (the client is built with ``max_retries=0``), so that
the policy is explicit and testable: 429, 408, 409, 5xx, timeouts, dropped connections and
malformed response bodies are retried with exponential backoff and jitter (the wait before
retry ``n`` is ``min(max_backoff, backoff · 2^n · U[0.5, 1.5])``, or a server's
``Retry-After`` if longer); any other 4xx fails at once. The API key is read from the
environment variable ``api_key_env``; it is never stored in ``settings``, and an error
message or answer that repeats it (a server echoing the request) has it masked.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Callable
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from maptab.run.providers import (
    Completion,
    ProviderConfigError,
    ProviderError,
    RateLimiter,
    split_reasoning,
)
from maptab.run.requests import ChatRequest

_RETRY_STATUS = {408, 409, 425, 429}


class OpenAIProvider:
    """Chat completions through the official ``openai`` ``AsyncOpenAI`` client.

    ``concurrency`` bounds requests in flight (an asyncio semaphore); ``timeout`` is per
    attempt, in seconds; ``rpm`` optionally limits request starts per minute. Defaults follow
    the papers: temperature 0, at most 2,048 new tokens. ``thinking_budget`` (the papers use
    4,096 for thinking models) is sent as ``{"thinking": {"type": "enabled",
    "budget_tokens": N}}`` only when set; ``extra_body`` passes anything else a server wants
    (e.g. vLLM's ``{"chat_template_kwargs": {"enable_thinking": true}}``).

    Without the key variable set, a ``base_url`` (a local server) gets a placeholder key;
    the hosted default endpoint raises :class:`ProviderConfigError`.
    """

    name = "openai"
    uses_images = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 16,
        timeout: float = 120.0,
        max_retries: int = 6,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        rpm: float | None = None,
        temperature: float = 0.0,
        max_tokens: int = 2048,
        thinking_budget: int | None = None,
        extra_body: dict[str, Any] | None = None,
        seed: int | None = None,
    ) -> None:
        if concurrency < 1:
            raise ProviderConfigError("--concurrency must be at least 1")
        if timeout <= 0:
            raise ProviderConfigError("--timeout must be positive")
        key = os.environ.get(api_key_env)
        # masked in anything recorded; a short placeholder ("x", "EMPTY") could be a word of
        # an answer, and is no secret
        self._secret = key if key and len(key) >= 8 else None
        if not key:
            if base_url is None:
                raise ProviderConfigError(
                    f"set the API key in the environment variable {api_key_env}"
                )
            key = "EMPTY"
        self.model = model
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._client = openai.AsyncOpenAI(
            api_key=key, base_url=base_url, timeout=timeout, max_retries=0
        )
        self._sem = asyncio.Semaphore(concurrency)
        self._limiter = RateLimiter(rpm)
        self._rng = random.Random(seed)
        self._params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
        if thinking_budget:
            self._params["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
        self._params.update(extra_body or {})
        self.settings: dict[str, Any] = {
            "base_url": base_url,
            "api_key_env": api_key_env,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "thinking_budget": thinking_budget,
            "extra_body": extra_body or None,
            "timeout": timeout,
            "max_retries": max_retries,
            "rpm": rpm,
        }
        self.attempts = 0  # HTTP attempts made, retries included (for tests and reports)

    async def complete(self, request: ChatRequest) -> Completion:
        """Send one request, retrying transient failures; raises :class:`ProviderError`."""
        async with self._sem:
            for attempt in range(self.max_retries + 1):
                await self._limiter.wait()
                self.attempts += 1
                try:
                    resp = await self._client.post(
                        "/chat/completions",
                        cast_to=ChatCompletion,
                        body={"model": self.model, "messages": request.messages, **self._params},
                    )
                    c = _completion(resp)
                    c.text, c.reasoning = self._mask(c.text), self._mask(c.reasoning)
                    return c
                except Exception as exc:  # classified below; unknown errors are not retried
                    retry, floor, why = _classify(exc, self._mask)
                    if not retry or attempt == self.max_retries:
                        tries = f" after {attempt + 1} attempts" if attempt else ""
                        raise ProviderError(f"{why}{tries}") from None
                await asyncio.sleep(self.retry_delay(attempt, floor))
        raise AssertionError("unreachable")  # pragma: no cover

    def retry_delay(self, attempt: int, floor: float = 0.0) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based):
        ``min(max_backoff, backoff · 2^attempt · U[0.5, 1.5])``, at least ``floor`` (a
        server's ``Retry-After``)."""
        jittered = self.backoff * 2.0 ** min(attempt, 60) * self._rng.uniform(0.5, 1.5)
        return max(floor, min(self.max_backoff, jittered))

    def _mask(self, text: str) -> str:
        """``text`` with the API key from the environment (8 characters or more) masked."""
        return text.replace(self._secret, "***") if self._secret and text else text

    async def aclose(self) -> None:
        await self._client.close()


def _completion(resp: Any) -> Completion:
    """A :class:`Completion` from a chat-completion object; malformed bodies raise ``ValueError``."""
    choices = getattr(resp, "choices", None)
    if not choices:
        raise ValueError("response has no choices")
    msg = choices[0].message
    content = msg.content or ""
    extra = getattr(msg, "model_extra", None) or {}
    native = extra.get("reasoning_content") or extra.get("reasoning") or ""
    text, think = split_reasoning(content)
    reasoning = "\n\n".join(r for r in (str(native).strip(), think) if r)
    usage = getattr(resp, "usage", None)
    return Completion(
        text,
        reasoning,
        int(getattr(usage, "prompt_tokens", 0) or 0),
        int(getattr(usage, "completion_tokens", 0) or 0),
    )


def _classify(exc: Exception, mask: Callable[[str], str]) -> tuple[bool, float, str]:
    """``(retryable, minimum wait in s, one-line description)`` of a failed attempt; ``mask``
    is applied to the server's or library's message before it is shortened."""

    def said(text: str) -> str:
        return _short(mask(text))

    if isinstance(exc, openai.APITimeoutError):
        return True, 0.0, "timeout"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        detail = said(str(cause))
        return (
            True,
            0.0,
            f"connection error ({type(cause).__name__}{': ' if detail else ''}{detail})",
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        floor = _retry_after(exc.response.headers.get("retry-after"))
        retry = status in _RETRY_STATUS or status >= 500
        message = exc.message.removeprefix(f"Error code: {status} - ")
        return retry, floor, f"HTTP {status}: {said(message)}"
    if isinstance(exc, openai.APIResponseValidationError | ValueError | AttributeError | TypeError):
        return True, 0.0, f"malformed response ({said(str(exc))})"
    return False, 0.0, f"{type(exc).__name__}: {said(str(exc))}"


def _retry_after(value: str | None) -> float:
    try:
        return min(60.0, max(0.0, float(value))) if value else 0.0
    except ValueError:
        return 0.0


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
