"""A faithful re-implementation of MapTab's released route-planning scorer, as a command.

The released ``src/evaluate_planning.py`` (MapTab repository) reads a JSON list of answered
samples, scores every sample and writes the list back with three fields added. This module
does the same work in the same way, for ``benchmarks/bench_commands.py`` when the released
file itself is not at hand (pass ``--released PATH`` there to time the original instead):

* the whole input is loaded with ``json.load``;
* ``response`` and each gold route are split at every ``-``; two stations match when
  ``difflib.SequenceMatcher`` on the stripped, lower-cased names gives a ratio ≥ 0.5,
  except that a token carrying ``(transfer)`` on either side must be equal verbatim
  (exact-match accuracy only; the partial score matches prefixes with the ratio alone);
* ``all_acc`` is 1 when some reference matches in full, ``part_acc`` is the best matched
  prefix share rounded to 4 places, ``Difficulty_score`` is 1-9 from
  (map difficulty, query difficulty), added to the total only for exact matches;
* the annotated list is written with ``json.dump(indent=4, ensure_ascii=False)`` and the
  three headline figures are printed.

Usage: ``python benchmarks/released_planning.py --input_file RESULTS.json --out OUT.json``.
"""

from __future__ import annotations

import argparse
import difflib
import json

import numpy as np

LEVELS = ("easy", "medium", "hard")
POINTS = {(m, q): 3 * i + j + 1 for i, m in enumerate(LEVELS) for j, q in enumerate(LEVELS)}


def same_station(a: str, b: str) -> bool:
    return difflib.SequenceMatcher(None, a.strip().lower(), b.strip().lower()).ratio() >= 0.5


def prefix_share(gold: list[str], answer: list[str]) -> float:
    k = 0
    for g, a in zip(gold, answer, strict=False):
        if not same_station(g, a):
            break
        k += 1
    return k / len(gold)


def exact(gold: list[str], answer: list[str]) -> int:
    if len(gold) != len(answer):
        return 0
    for g, a in zip(gold, answer, strict=True):
        marked = "(transfer)" in g or "(transfer)" in a
        if (g != a) if marked else not same_station(g, a):
            return 0
    return 1


def score_item(item: dict) -> tuple[int, float]:
    answer = item["response"].split("-")
    ema, best = 0, 0.0
    for route in item["routes"]:
        gold = route.split("-")
        ema = 1 if exact(gold, answer) else ema
        best = max(best, prefix_share(gold, answer))
    return ema, round(best, 4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input_file", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.input_file, encoding="utf-8") as fh:
        items = json.load(fh)
    emas, pmas, total = [], [], 0
    for item in items:
        ema, pma = score_item(item)
        points = POINTS.get((item["Map_Difficulty"].lower(), item["Query_Difficulty"].lower()), 0)
        total += points if ema else 0
        emas.append(ema)
        pmas.append(pma)
        item["all_acc"] = ema
        item["part_acc"] = float(f"{pma:.4f}")
        item["Difficulty_score"] = points
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(items, fh, ensure_ascii=False, indent=4)
    print(f"Average all_acc = {np.mean(emas):.4f}")
    print(f"Average part_acc = {np.mean(pmas):.4f}")
    print(f"Difficulty_score_total = {total}")


if __name__ == "__main__":
    main()
