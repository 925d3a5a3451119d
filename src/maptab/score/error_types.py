"""Automatic error taxonomy of route-planning answers (SPEC 13; MapTab Table 5).

Each wrong answer gets exactly one type: the *first* rule below that holds, in this order
(earlier stages of the pipeline take the blame, as an error there makes later checks
meaningless):

1. **Output Format** — no route could be parsed from the response.
2. **Perception** — a station name is not on the map (no exact, case/diacritics-insensitive
   match with a station key or label), or the route does not start at the asked origin or
   end at the asked destination (the paper's example: source and destination confused).
3. **Topology Extraction** — two consecutive stations are not adjacent on the map.
4. **Transfer Indeterminate** — the station sequence is an optimal route but the
   ``(transfer)`` marks differ from those of every reference marking.
5. **Path Search** — every hop exists but the route is not optimal (or visits a station
   twice).
6. **Table Lookup** — the route is right but reported totals (asked for by the query) are
   missing or disagree with the totals of the optimal route answered.

A fully correct answer has no error type (``None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["ERROR_TYPES", "error_type"]

ERROR_TYPES = (
    "Output Format",
    "Perception",
    "Topology Extraction",
    "Transfer Indeterminate",
    "Path Search",
    "Table Lookup",
)


class Verification(Protocol):
    """What the taxonomy reads of a :class:`maptab.score.verified.Verification` (a protocol,
    so this module does not import the one that imports it)."""

    @property
    def unresolved_names(self) -> Sequence[str]: ...
    @property
    def endpoints_ok(self) -> bool: ...
    @property
    def adjacent(self) -> bool: ...
    @property
    def optimal(self) -> bool: ...
    @property
    def transfers_ok(self) -> bool: ...


def error_type(v: Verification | None, totals_ok: bool | None = None) -> str | None:
    """The error type of one answer (module docstring); ``v`` is ``None`` when unparsed.

    ``totals_ok`` is ``None`` when the query did not ask for totals.
    """
    if v is None:
        return ERROR_TYPES[0]
    if v.unresolved_names or not v.endpoints_ok:
        return ERROR_TYPES[1]
    if not v.adjacent:
        return ERROR_TYPES[2]
    if v.optimal and not v.transfers_ok:
        return ERROR_TYPES[3]
    if not v.optimal:
        return ERROR_TYPES[4]
    if totals_ok is False:
        return ERROR_TYPES[5]
    return None
