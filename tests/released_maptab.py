"""Test-only reference: the behaviour of MapTab's released route scorer, written out.

Re-implemented (not copied) from a reading of the public MapTab repository's
``src/evaluate_planning.py`` and its successor ``src/maptab_infer/evaluate.py``, which agree
on these rules:

* the route text comes from ``<route_begin>…<route_end>`` when present (the successor's
  ``route_from_response``; the first pair of tags, case-insensitive, contents stripped);
* both gold routes and the answer are cut at every ``-``; tokens are not stripped;
* ``same(g, p)`` — the ratio of difflib's SequenceMatcher on the stripped, lower-cased gold
  token ``g`` (first) and answer token ``p`` is at least 0.5;
* all_acc per gold: equal lengths, and at each position either token containing the
  substring ``(transfer)`` requires ``g == p`` as written, otherwise ``same(g, p)``;
* part_acc per gold: positions counted from the start while ``same`` holds, over the gold
  length; the item's part_acc is the best over golds rounded to 4 decimals; all_acc is 1 when
  any gold gives 1.

Nothing here is shared with ``maptab.score.paper`` on purpose: it is the yardstick.
"""

from __future__ import annotations

import difflib
import re

_TAGGED = re.compile(r"<route_begin>\s*(.*?)\s*<route_end>", re.IGNORECASE | re.DOTALL)


def released_route_text(response: str) -> str:
    """The route text the released pipeline scores (the tagged route, else the whole text)."""
    text = response.strip()
    found = _TAGGED.search(text)
    return found.group(1).strip() if found else text


def _same(gold: str, answer: str) -> bool:
    ratio = difflib.SequenceMatcher(None, gold.strip().lower(), answer.strip().lower()).ratio()
    return ratio >= 0.5


def _all_acc(gold: list[str], answer: list[str]) -> int:
    if len(gold) != len(answer):
        return 0
    for g, p in zip(gold, answer, strict=True):
        marked = "(transfer)" in g or "(transfer)" in p
        if (marked and g != p) or (not marked and not _same(g, p)):
            return 0
    return 1


def _part_acc(gold: list[str], answer: list[str]) -> float:
    n = 0
    while n < min(len(gold), len(answer)) and _same(gold[n], answer[n]):
        n += 1
    return n / len(gold)


def released_scores(route_text: str, routes: list[str]) -> tuple[int, float]:
    """``(all_acc, part_acc)`` of one answer's route text against the gold ``routes``."""
    answer = route_text.split("-")
    golds = [r.split("-") for r in routes]
    all_acc = max((_all_acc(g, answer) for g in golds), default=0)
    part = max((_part_acc(g, answer) for g in golds), default=0.0)
    return all_acc, round(part, 4)
