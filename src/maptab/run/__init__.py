"""Run stage: chat requests from dataset samples, providers (OpenAI-compatible endpoints,
local vLLM, built-in baselines), and resumable concurrent runs into a run directory."""

from maptab.run.baselines import BlankProvider, OracleProvider, RandomProvider, ShortestProvider
from maptab.run.openai_provider import OpenAIProvider
from maptab.run.providers import (
    Completion,
    Provider,
    ProviderConfigError,
    ProviderError,
    make_provider,
    split_reasoning,
)
from maptab.run.requests import ChatRequest, ImageSpec, Sample, build_requests, iter_samples
from maptab.run.runner import RunSummary, arun, run
from maptab.run.store import PredictionStore, StoreError
from maptab.run.vllm_provider import VLLMProvider

__all__ = [
    "BlankProvider",
    "ChatRequest",
    "Completion",
    "ImageSpec",
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
    "VLLMProvider",
    "arun",
    "build_requests",
    "iter_samples",
    "make_provider",
    "run",
    "split_reasoning",
]
