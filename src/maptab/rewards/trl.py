"""The reward function TRL's ``GRPOTrainer`` calls (``reward_funcs=maptab_reward``).

TRL calls each reward function as ``f(prompts=…, completions=…, **kwargs)`` where
``kwargs`` holds, per dataset column other than ``prompt``, the list of that column's
values for the batch (plus trainer extras such as ``completion_ids`` or
``trainer_state``, ignored here). ``maptab export --format trl`` writes the reference of
each sample into the column :data:`REFERENCE_COLUMN` (``docs/guides/train-with-rewards.md``). Completions are
strings (standard prompts) or lists of chat messages (conversational prompts).
"""

from __future__ import annotations

from typing import Any

from maptab.rewards import ReferenceError, reward

__all__ = ["REFERENCE_COLUMN", "maptab_reward"]

REFERENCE_COLUMN = "ground_truth"


def maptab_reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float]:
    """One reward in [0, 1] per completion, scored against the row's ``ground_truth``.

    Raises :class:`~maptab.rewards.ReferenceError` when the column is missing or its
    length differs from the completions' (a dataset not written by ``maptab export``).
    """
    refs = kwargs.get(REFERENCE_COLUMN)
    if refs is None:
        raise ReferenceError(
            f"maptab_reward: the dataset has no {REFERENCE_COLUMN!r} column "
            "(write it with `maptab export DATASET --format trl`)"
        )
    if len(refs) != len(completions):
        raise ReferenceError(
            f"maptab_reward: {len(completions)} completions but {len(refs)} references"
        )
    return [reward(c, r) for c, r in zip(completions, refs, strict=True)]
