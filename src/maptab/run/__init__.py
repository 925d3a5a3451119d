"""Run stage: chat requests from dataset samples, providers (OpenAI-compatible endpoints,
local vLLM, built-in baselines), and resumable concurrent runs into a run directory.

The package gives what ``docs/reference/api.md`` names: :func:`run` / :func:`arun` (the runner),
:func:`make_provider` and :func:`available_providers` (the provider registry),
:func:`callable_provider` (a Python function as the model) and :class:`ImageSpec`. The rest is
in its module: :mod:`~maptab.run.provider` (``Completion``, the ``Provider`` protocol,
``ProviderError``), :mod:`~maptab.run.requests`, :mod:`~maptab.run.store`, the providers.
"""

from maptab.run.callable_provider import callable_provider
from maptab.run.providers import available_providers, make_provider
from maptab.run.requests import ImageSpec
from maptab.run.runner import RunSummary, arun, run

__all__ = [
    "ImageSpec",
    "RunSummary",
    "arun",
    "available_providers",
    "callable_provider",
    "make_provider",
    "run",
]
