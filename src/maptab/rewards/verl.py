"""verl's custom reward entry point (``custom_reward_function.name=compute_score``).

verl's reward managers call ``compute_score(data_source, solution_str, ground_truth,
extra_info)`` with the decoded response and the row's ``reward_model.ground_truth``;
``maptab export --format verl`` writes the maptab reference there (``docs/guides/train-with-rewards.md``).
Point verl at this file::

    custom_reward_function.path=$(python -c 'import maptab.rewards.verl as m; print(m.__file__)')
    custom_reward_function.name=compute_score
"""

from __future__ import annotations

from typing import Any

from maptab.rewards import reward, score_completion

__all__ = ["data_sources", "compute_score", "compute_score_details"]


def data_sources() -> tuple[str, ...]:
    """The ``data_source`` values maptab writes: ``maptab/<kind>`` per rewarded kind."""
    from maptab.rewards.export import data_source
    from maptab.rewards.reference import all_rewarded

    return tuple(data_source(k.name) for k in all_rewarded())


def compute_score(
    data_source: str | None,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    **kwargs: Any,
) -> float:
    """The reward in [0, 1] of ``solution_str`` against the maptab reference
    ``ground_truth``; ``data_source`` and ``extra_info`` are not needed (the reference
    says everything) and accepted for verl's call."""
    return reward(solution_str, ground_truth)


def compute_score_details(
    data_source: str | None,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """Like :func:`compute_score`, as the dict verl logs (``score`` is the reward; the other
    keys, the same for every kind, are logged as reward extra info)."""
    b = score_completion(solution_str, ground_truth)
    return {
        "score": b.reward,
        "parsed": float(b.parsed),
        "correct": float(b.correct),
        "valid": float(b.valid),
        "prefix": b.prefix,
    }
