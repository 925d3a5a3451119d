"""A local vLLM engine (optional extra ``maptab[vllm]``; imported only when used).

Requests arriving together are gathered into batches of up to ``batch_size`` (waiting at
most ``batch_wait`` seconds for a batch to fill) and handed to ``LLM.chat`` in a worker
thread, one batch at a time, so the engine sees large batches while the run loop stays
responsive. Images travel as the same data URLs as for HTTP providers.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from maptab._reasoning import split_reasoning
from maptab.run.provider import Completion, ProviderConfigError, ProviderError
from maptab.run.requests import ChatRequest


class VLLMProvider:
    """Offline generation with ``vllm.LLM`` from a local model folder ``path``.

    Greedy decoding by default (``temperature=0``), at most ``max_tokens`` new tokens (2,048,
    as the papers). ``engine_args`` go to ``vllm.LLM`` (e.g. ``tensor_parallel_size``,
    ``max_model_len``, ``limit_mm_per_prompt``). ``engine`` injects an already built object
    with vLLM's ``chat(conversations, sampling_params)`` API (used by tests).
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
        self._queue: asyncio.Queue[tuple[ChatRequest, asyncio.Future[Completion]]] | None = None
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
            convs = [req.messages for req, _ in batch]
            try:
                outputs = list(await asyncio.to_thread(self._engine.chat, convs, self._params))
                if len(outputs) != len(batch):
                    raise ValueError(f"{len(outputs)} outputs for {len(batch)} conversations")
            except Exception as exc:  # the engine's failure fails this batch, not the run
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(ProviderError(f"vllm: {type(exc).__name__}: {exc}"))
                continue
            for (_, fut), out in zip(batch, outputs, strict=True):
                if fut.done():
                    continue
                try:
                    fut.set_result(_completion(out))
                except Exception as exc:  # a malformed output fails its request, not the loop
                    fut.set_exception(ProviderError(f"vllm: malformed output ({exc})"))

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


def _completion(out: Any) -> Completion:
    """A :class:`Completion` from a vLLM ``RequestOutput``."""
    gen = out.outputs[0]
    text, reasoning = split_reasoning(gen.text)
    return Completion(
        text, reasoning, len(out.prompt_token_ids or ()), len(getattr(gen, "token_ids", ()) or ())
    )
