"""Rewards for reinforcement learning on maptab samples (``docs/guides/train-with-rewards.md``).

* :func:`score_completion` — the :class:`RewardBreakdown` of one completion against a
  reference written by :func:`encode_reference` (self-contained: sample + map tables);
* :func:`reward` — its scalar, in [0, 1];
* :mod:`maptab.rewards.trl` — the reward function TRL's ``GRPOTrainer`` calls;
* :mod:`maptab.rewards.verl` — verl's ``compute_score``.

The per-kind rewards (:func:`rp_reward`, :func:`qa_reward`, :func:`reasonmap_reward`) take
records and networks directly, for callers that hold a dataset.
"""

from __future__ import annotations

from typing import Any

from maptab.rewards.core import (
    RP_WEIGHTS,
    RewardBreakdown,
    combine_rp,
    qa_reward,
    reasonmap_reward,
    rp_reward,
)
from maptab.rewards.reference import (
    Reference,
    ReferenceError,
    decode_reference,
    encode_reference,
    reward_spec,
)

__all__ = [
    "RP_WEIGHTS",
    "Reference",
    "ReferenceError",
    "RewardBreakdown",
    "combine_rp",
    "completion_text",
    "decode_reference",
    "encode_reference",
    "qa_reward",
    "reasonmap_reward",
    "reward",
    "rp_reward",
    "score_completion",
]


def completion_text(completion: Any) -> str:
    """The text of a completion as trainers hand it over: a string, a chat message
    (``{"role": "assistant", "content": …}``) or a list of messages (the last assistant
    message wins), with ``content`` a string or a list of parts (their ``text`` joined).
    Anything else is read as an empty answer (a format error, reward 0)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return _content_text(completion.get("content"))
    if isinstance(completion, list | tuple):
        messages = [m for m in completion if isinstance(m, dict)]
        if not messages:
            return "".join(c for c in completion if isinstance(c, str))
        answers = [m for m in messages if m.get("role", "assistant") == "assistant"]
        return _content_text((answers or messages)[-1].get("content"))
    return ""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return ""


def score_completion(
    completion: Any, reference: str | bytes | dict[str, Any] | Reference
) -> RewardBreakdown:
    """The reward breakdown of one completion (any form :func:`completion_text` reads)
    against a reference (text from :func:`encode_reference`, or decoded). Raises
    :class:`ReferenceError` for a reference maptab did not write; never for an answer."""
    ref = reference if isinstance(reference, Reference) else decode_reference(reference)
    text = completion_text(completion)
    key = (id(ref), text)
    hit = _SEEN.get(key)
    if hit is not None and hit[0] is ref:
        return hit[1]  # frozen: safe to share
    spec = ref.spec
    if spec is None:  # a Reference built by hand: look its kind up
        spec = reward_spec(ref.kind)[1]
    out = spec.score(ref, text)
    if len(_SEEN) >= _SEEN_SIZE:
        _SEEN.clear()
    _SEEN[key] = (ref, out)
    return out


# the same completion to the same sample is scored once: a GRPO group often holds identical
# completions, and a prompt comes back every epoch
_SEEN: dict[tuple[int, str], tuple[Reference, RewardBreakdown]] = {}
_SEEN_SIZE = 1 << 16


def reward(completion: Any, reference: str | bytes | dict[str, Any] | Reference) -> float:
    """The scalar reward in [0, 1] of one completion (:func:`score_completion`)."""
    return score_completion(completion, reference).reward
