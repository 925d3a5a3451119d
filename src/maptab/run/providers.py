"""The provider registry: a ``--model`` spec (or a Python callable) to a provider (SPEC 16).

A spec is ``PREFIX`` or ``PREFIX:ARG``. Built-in prefixes are a table of dotted paths,
imported only when used: ``openai:NAME`` (:class:`~maptab.run.openai_provider.OpenAIProvider`),
``vllm:PATH`` (:class:`~maptab.run.vllm_provider.VLLMProvider`) and the baselines
``oracle``, ``shortest``, ``random``, ``blank`` and, for tool-use mode, ``agent-oracle``
(:mod:`maptab.run.baselines`). Other
distributions add prefixes through the entry-point group ``maptab.providers``: the entry
point's name is the prefix, its object a factory called as ``factory(ARG, **options)``
(``ARG`` is ``""`` when the spec has no colon) that returns a provider. Built-in prefixes
cannot be overridden. Each factory gets only the options its signature names (all of them
if it takes ``**kwargs``); options left ``None`` are not passed.

The base types (:class:`Completion`, :class:`Provider`, the errors, :class:`RateLimiter`)
live in :mod:`maptab.run.provider`; they are re-exported here for existing imports.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from maptab._reasoning import split_reasoning
from maptab.run.provider import (
    Completion,
    Provider,
    ProviderConfigError,
    ProviderError,
    RateLimiter,
    SyncProvider,
)

__all__ = [
    "BASELINES",
    "ENTRY_POINT_GROUP",
    "Completion",
    "Provider",
    "ProviderConfigError",
    "ProviderError",
    "RateLimiter",
    "SyncProvider",
    "available_providers",
    "make_provider",
    "split_reasoning",
]

ENTRY_POINT_GROUP = "maptab.providers"
BASELINES = ("oracle", "shortest", "random", "blank", "agent-oracle")

# prefix -> (dotted path "module:attribute", keyword the ARG goes to; None: no ARG allowed)
_BUILTIN: dict[str, tuple[str, str | None]] = {
    "openai": ("maptab.run.openai_provider:OpenAIProvider", "model"),
    "vllm": ("maptab.run.vllm_provider:VLLMProvider", "path"),
    "oracle": ("maptab.run.baselines:OracleProvider", None),
    "shortest": ("maptab.run.baselines:ShortestProvider", None),
    "random": ("maptab.run.baselines:RandomProvider", None),
    "blank": ("maptab.run.baselines:BlankProvider", None),
    "agent-oracle": ("maptab.run.baselines:AgentOracleProvider", None),
}
_USAGE = {"openai": "openai:NAME", "vllm": "vllm:PATH"}


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def _plugins() -> dict[str, Any]:
    """Entry points of the ``maptab.providers`` group by name (built-in names excluded)."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in _BUILTIN}


def available_providers() -> list[str]:
    """The spec forms ``make_provider`` accepts here: built-ins, then installed plugins."""
    return [_USAGE.get(k, k) for k in _BUILTIN] + [f"{k}[:ARG]" for k in sorted(_plugins())]


def make_provider(spec: str | Callable[..., Any] | Provider, **opts: Any) -> Provider:
    """A provider from a ``--model`` spec, a Python callable, or a provider (returned as is).

    Built-in options: ``openai:NAME`` takes ``base_url``, ``api_key_env``, ``concurrency``,
    ``timeout``, ``max_retries``, ``rpm``, ``temperature``, ``max_tokens``,
    ``thinking_budget``, ``extra_body``; ``random`` takes ``seed``. A callable ``fn(request)``
    returning the reply text (sync or ``async``) becomes a
    :class:`~maptab.run.callable_provider.CallableProvider` (options ``name``, ``model``,
    ``uses_images``, ``settings``). Options a provider does not take are ignored. Raises
    :class:`ProviderConfigError` on an unknown spec or a plugin that fails to load.
    """
    if not isinstance(spec, str):
        if isinstance(spec, Provider):
            return spec
        if callable(spec):
            from maptab.run.callable_provider import callable_provider

            return _call(callable_provider, (spec,), opts)
        raise ProviderConfigError(f"a model is a spec string or a callable, not {spec!r}")
    kind, colon, arg = spec.partition(":")
    if kind in _BUILTIN:
        path, arg_name = _BUILTIN[kind]
        if (arg_name is None) == bool(colon or arg) or (arg_name and not arg):
            raise _unknown(spec)
        factory = _load(path)
        return _call(factory, (), {**opts, arg_name: arg} if arg_name else opts)
    ep = _plugins().get(kind)
    if ep is None:
        raise _unknown(spec)
    try:
        factory = ep.load()
    except Exception as exc:  # a broken plugin is a setup error, named, not a traceback
        raise ProviderConfigError(
            f"provider plugin {kind!r} ({ep.value}) failed to load: {type(exc).__name__}: {exc}"
        ) from None
    provider = _call(factory, (arg,), opts)
    missing = [
        a
        for a in ("name", "model", "settings", "uses_images", "complete", "aclose")
        if not hasattr(provider, a)
    ]
    if missing:
        raise ProviderConfigError(
            f"provider plugin {kind!r} returned {type(provider).__name__}, which lacks "
            f"{', '.join(missing)}"
        )
    return provider


def _unknown(spec: str) -> ProviderConfigError:
    return ProviderConfigError(
        f"unknown model spec {spec!r}; expected one of: {', '.join(available_providers())}"
    )


def _call(factory: Callable[..., Any], args: tuple[Any, ...], opts: dict[str, Any]) -> Any:
    """``factory(*args, **accepted)`` with the options its signature accepts (not ``None``)."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # no signature (a builtin): pass nothing optional
        params = {}
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kept = {k: v for k, v in opts.items() if v is not None and (takes_all or k in params)}
    return factory(*args, **kept)
