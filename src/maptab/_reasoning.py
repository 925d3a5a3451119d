"""Reasoning blocks in model output: one rule for the run stage and the scorer (SPEC 12, 16).

A model's reply may carry its reasoning inline. These forms are recognised, in any ASCII
case: ``<think>…</think>``, ``<thinking>…</thinking>``, ``<reasoning>…</reasoning>``,
``<reason>…</reason>``, ``<|begin_of_thought|>…<|end_of_thought|>`` and ``◁think▷…◁/think▷``.

Scanning left to right, a block runs from an opening tag of any form to the first closing
tag of any form after it (models mismatch tags); text between blocks is the answer. An
opening tag with no closing tag after it makes the rest reasoning (a reply cut off while
thinking has no answer). A closing tag left over (chat templates that open the block in the
prompt, nested blocks) makes everything before it reasoning. The rule is applied again
until nothing changes, so an answer never holds a tag (removing a block cannot join two
halves of a tag into a new one that a second pass would treat differently).

:func:`split_reasoning` is what providers record (``response`` and ``reasoning``);
:func:`strip_reasoning` is what the scorer reads. Both follow the same rule, so scoring a
stored ``response`` gives the same answer as scoring the raw reply.
"""

from __future__ import annotations

import string

__all__ = ["REASONING_TAGS", "split_reasoning", "strip_reasoning"]

REASONING_TAGS: tuple[tuple[str, str], ...] = (
    ("<think>", "</think>"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
    ("<reason>", "</reason>"),
    ("<|begin_of_thought|>", "<|end_of_thought|>"),
    ("◁think▷", "◁/think▷"),
)
_OPEN = tuple(o for o, _ in REASONING_TAGS)
_CLOSE = tuple(c for _, c in REASONING_TAGS)
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# a cheap pre-check: every tag contains one of these (after ASCII lower-casing)
_MARKS = ("<", "◁")


def _lower(text: str) -> str:
    """A-Z lower-cased, nothing else: unlike ``str.lower`` every index is kept."""
    return text.translate(_ASCII_LOWER)


def _first(low: str, tags: tuple[str, ...], pos: int) -> tuple[int, int]:
    """``(index, length)`` of the earliest of ``tags`` in ``low`` from ``pos``; ``(-1, 0)``."""
    found = [(i, len(t)) for t in tags if (i := low.find(t, pos)) != -1]
    return min(found) if found else (-1, 0)


def _last_end(low: str, tags: tuple[str, ...]) -> int:
    """Index just past the last of ``tags`` in ``low``, or ``-1``."""
    ends = [i + len(t) for t in tags if (i := low.rfind(t)) != -1]
    return max(ends) if ends else -1


def _one_pass(text: str, reasoning: list[str]) -> str:
    """``text`` after one application of the rule; the removed reasoning goes to ``reasoning``."""
    low = _lower(text)
    pieces: list[str] = []
    pos = 0
    while (start := _first(low, _OPEN, pos))[0] != -1:
        pieces.append(text[pos : start[0]])
        body = start[0] + start[1]
        end = _first(low, _CLOSE, body)
        if end[0] == -1:  # unterminated: the rest is reasoning
            reasoning.append(text[body:])
            pos = len(text)
            break
        reasoning.append(text[body : end[0]])
        pos = end[0] + end[1]
    pieces.append(text[pos:])
    out = "".join(pieces)
    cut = _last_end(_lower(out), _CLOSE)
    if cut == -1:
        return out
    # a closing tag left over: what precedes it is reasoning (closing tags dropped)
    reasoning.append(_drop_tags(out[:cut]))
    return out[cut:]


def _drop_tags(text: str) -> str:
    low = _lower(text)
    out: list[str] = []
    pos = 0
    while (hit := _first(low, _CLOSE, pos))[0] != -1:
        out.append(text[pos : hit[0]])
        pos = hit[0] + hit[1]
    out.append(text[pos:])
    return "".join(out)


def _split(text: str) -> tuple[str, list[str]]:
    reasoning: list[str] = []
    while any(m in text for m in _MARKS):
        out = _one_pass(text, reasoning)
        if out == text:
            break
        text = out
    return text, reasoning


def strip_reasoning(text: str) -> str:
    """``text`` without its reasoning blocks (rule in the module docstring); whitespace around
    the answer is kept."""
    return _split(text)[0]


def split_reasoning(text: str) -> tuple[str, str]:
    """``(answer, reasoning)``: the answer as :func:`strip_reasoning` gives it, stripped of
    surrounding whitespace, and the removed blocks' text (each stripped, empty ones dropped,
    in reply order, joined by a blank line)."""
    answer, pieces = _split(text)
    return answer.strip(), "\n\n".join(p for s in pieces if (p := s.strip()))
