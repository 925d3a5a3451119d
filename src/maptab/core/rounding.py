"""Half-up decimal rounding, the one rule for every rounded number in maptab (SPEC 3, 5, 7).

Table values, route totals, QA answers and QA scoring all round the *decimal spelling* of a
number half-up (``2.675 → 2.68``, ``0.745 → 0.75``), unlike :func:`round`, which rounds the
binary float (``round(2.675, 2) == 2.67``). A float is read through its shortest ``repr``; an
exact :class:`~fractions.Fraction` through a 28-digit decimal division.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction

__all__ = ["as_decimal", "half_up", "round_half_up"]


def as_decimal(value: float | int | Fraction | Decimal) -> Decimal:
    """``value`` as a :class:`Decimal`: floats by their shortest decimal spelling."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, Fraction):
        return Decimal(value.numerator) / Decimal(value.denominator)
    return Decimal(repr(float(value)))


def half_up(value: float | int | Fraction | Decimal, digits: int = 2) -> Decimal:
    """``value`` rounded half-up to ``digits`` decimals, as a :class:`Decimal`.

    A value too large to carry ``digits`` decimals in 28 significant digits is already
    coarser than that step and is returned unrounded.
    """
    d = as_decimal(value)
    try:
        return d.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return d


def round_half_up(value: float | int | Fraction | Decimal, digits: int = 2) -> float:
    """``value`` rounded half-up to ``digits`` decimals, as a float (``2.675 → 2.68``)."""
    return float(half_up(value, digits))
