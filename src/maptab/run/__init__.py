"""Run stage: chat requests from dataset samples, providers (OpenAI-compatible endpoints,
local vLLM, built-in baselines), and resumable concurrent runs into a run directory."""

from maptab.reasoning import split_reasoning
from maptab.run.base import (
    Completion,
    InProcessProvider,
    Provider,
    ProviderConfigError,
    ProviderError,
    SyncProvider,
)
from maptab.run.baselines import BlankProvider, OracleProvider, RandomProvider, ShortestProvider
from maptab.run.callable_provider import CallableProvider, callable_provider
from maptab.run.openai_provider import OpenAIProvider
from maptab.run.providers import available_providers, make_provider
from maptab.run.requests import ChatRequest, ImageSpec, Sample, build_requests, iter_samples
from maptab.run.runner import RunSummary, arun, run
from maptab.run.store import PredictionStore, StoreError
from maptab.run.vllm_provider import VLLMProvider

__all__ = [
    "BlankProvider",
    "CallableProvider",
    "ChatRequest",
    "Completion",
    "ImageSpec",
    "InProcessProvider",
    "OpenAIProvider",
    "OracleProvider",
    "PredictionStore",
    "Provider",
    "ProviderConfigError",
    "ProviderError",
    "RandomProvider",
    "RunSummary",
    "Sample",
    "ShortestProvider",
    "StoreError",
    "SyncProvider",
    "VLLMProvider",
    "arun",
    "available_providers",
    "build_requests",
    "callable_provider",
    "iter_samples",
    "make_provider",
    "run",
    "split_reasoning",
]
