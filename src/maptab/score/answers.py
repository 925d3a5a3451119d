"""QA accuracy and reported-totals accuracy (SPEC 10, 13).

* A QA answer is correct when the parsed value and the gold answer are equal after both are
  rounded half-up to 2 decimals (yes/no answers are 1/0, so they compare exactly).
* A capability's accuracy (paper Table 3) is the mean of the accuracies of the QA types
  attached to it: the weighted mean of its samples with weight ``1 / n(type)``
  (:func:`capability_weights`).
* A reported total (``Total_Time``, ``Total_Price``, ``Average_Comfort Level``,
  ``Average_Reliability``; paper Table 4 columns T/P/C/R) is correct when it is present and
  equals the gold value after both are rounded half-up to 2 decimals. Averages are stored
  with 6 decimals; a model that writes ``0.56`` for ``0.5575`` is therefore counted right,
  one that writes ``0.55`` wrong. The gold values are those of the optimal route answered,
  one of several tied routes too (:func:`maptab.score.verified.answered_totals`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from decimal import Decimal

from maptab.core.rounding import half_up
from maptab.core.schema import TOTAL_FIELDS

__all__ = ["TOTAL_LETTERS", "capability_weights", "qa_correct", "round2", "totals_correct"]

TOTAL_LETTERS = dict(zip(TOTAL_FIELDS, "TPCR", strict=True))
_CENT = Decimal("0.01")


def round2(x: float) -> Decimal:
    """``x`` rounded half-up to 2 decimals, from its shortest decimal representation."""
    return half_up(float(x), 2)


def qa_correct(pred: float | None, gold: float) -> bool:
    """Whether a parsed QA answer equals the gold one at 2 decimals (``None`` is wrong)."""
    if pred is None or not math.isfinite(pred):
        return False
    return round2(pred) == round2(gold)


def totals_correct(reported: dict[str, float], gold: dict[str, float]) -> dict[str, bool]:
    """Per letter (T/P/C/R) of the gold totals: was it reported and right at 2 decimals."""
    return {
        TOTAL_LETTERS[name]: qa_correct(reported.get(name), value)
        for name, value in gold.items()
        if name in TOTAL_LETTERS and value is not None
    }


def capability_weights(types: Sequence[Hashable]) -> list[float]:
    """Weights ``1 / n(type)`` of the samples of one capability (their QA ``types``), so that
    the weighted mean of correctness is the mean of the per-type accuracies."""
    n = Counter(types)
    return [1 / n[t] for t in types]
