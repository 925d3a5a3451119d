"""Route text: how a route is written in answers and gold labels, and read back (SPEC 4, 11, 12).

A route is its stations' names joined by :data:`SEPARATOR`, each station where the line
changes followed by :data:`TRANSFER_MARK` (``A-B(transfer)-C``); an answer wraps it in
:data:`ROUTE_BEGIN` … :data:`ROUTE_END`. :func:`format_route` writes it (gold labels, the
built-in baselines' answers, the prompts' example); :func:`read_route` reads a route back
from a line given the map's station names, whole names first, and is what
:mod:`maptab.score.parse` tries before any clean-up of a free-form answer.

:func:`check_station_names` refuses the names for which that round trip could fail (the
rules are in its docstring and in ``docs/reference/tables.md``); builders call it on every
map (:func:`check_network_names`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from maptab._reasoning import REASONING_TAGS
from maptab.errors import MaptabError

__all__ = [
    "ROUTE_BEGIN",
    "ROUTE_END",
    "SEPARATOR",
    "SEPARATORS",
    "SEPARATOR_AT",
    "SEPARATOR_CUT",
    "SEPARATOR_PATTERN",
    "TRANSFER_MARK",
    "TRANSFER_PATTERN",
    "NameIndex",
    "StationNameError",
    "check_network_names",
    "check_station_names",
    "format_route",
    "format_route_of",
    "name_problem",
    "normalise_name",
    "read_route",
    "route_block",
]

SEPARATOR = "-"
TRANSFER_MARK = "(transfer)"
ROUTE_BEGIN = "<route_begin>"
ROUTE_END = "<route_end>"

#: separators a route may be written with (SPEC 12), each a regex alternative; a longer one
#: before any it starts with
SEPARATORS = ("->", "=>", "→", "⟶", "➔", "➝", "⇒", "——", "—", "–", "−", "－", "-", "、", "，")
SEPARATOR_PATTERN = "|".join(map(re.escape, SEPARATORS))
#: one separator with the whitespace around it
SEPARATOR_AT = rf"\s*(?:{SEPARATOR_PATTERN})\s*"
#: :data:`SEPARATOR_AT` for searching (the lookahead lets the engine skip where none starts)
SEPARATOR_CUT = (
    "(?=[\\s" + re.escape("".join(dict.fromkeys(s[0] for s in SEPARATORS))) + "])" + SEPARATOR_AT
)
#: a transfer mark as an answer may write it: any case and spacing, ASCII or full-width
#: brackets, ``xfer``/``换乘``, an optional ``station`` (use with ``re.IGNORECASE``)
TRANSFER_PATTERN = r"\s*[(\[（【]\s*(?:transfer|xfer|换乘)(?:\s*station)?\s*[)\]）】]"

_SEP_FIND = re.compile(SEPARATOR_CUT)
_MARK_END = re.compile(rf"(?:{TRANSFER_PATTERN})\s*$", re.IGNORECASE)
_MARK_CLOSE = ")]）】"
_TAGS = (ROUTE_BEGIN, ROUTE_END, *(t for pair in REASONING_TAGS for t in pair))
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_BAD_CATEGORIES = frozenset(("Cc", "Cs", "Zl", "Zp"))  # control, surrogate, line breaks


class StationNameError(MaptabError):
    """A station name that route text cannot carry (one line, naming the station)."""


@lru_cache(maxsize=1 << 16)
def normalise_name(name: str) -> str:
    """Comparison key of a station name: NFKD without diacritics, case-folded, ``-`` as
    ``_``, runs of whitespace collapsed. Used for vocabulary matching, never fuzzily.
    (Memoised: scoring looks up the same names again and again.)"""
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(stripped.casefold().replace("-", "_").split())


# ----------------------------------------------------------------------------- writing
def route_block(route: str) -> str:
    """``route`` wrapped in the route tags, as answers give it (SPEC 11)."""
    return f"{ROUTE_BEGIN}{route}{ROUTE_END}"


def format_route(names: Sequence[str], transfers: Collection[int] = ()) -> str:
    """The route text of ``names`` with the stations at positions ``transfers`` marked
    (SPEC 4): ``A-B(transfer)-C``. A name the text cannot carry raises
    :class:`StationNameError`."""
    for name in names:
        problem = _key_problem(name)
        if problem is not None:
            raise StationNameError(f"station {name!r} {problem}")
    if not transfers:
        return SEPARATOR.join(names)
    return SEPARATOR.join(n + TRANSFER_MARK if i in transfers else n for i, n in enumerate(names))


def format_route_of(route: Any) -> str:
    """:func:`format_route` of a solver route (:class:`maptab.core.solver.Route`: its
    ``stations`` and the names of its ``transfers``)."""
    marked = set(route.transfers)
    return format_route(route.stations, {i for i, s in enumerate(route.stations) if s in marked})


# ----------------------------------------------------------------------------- names
def name_problem(name: object, *, key: bool = True) -> str | None:
    """Why ``name`` cannot be a station name in route text, or ``None``.

    Refused: an empty name, whitespace at either end, a control character or line break,
    a route or reasoning tag (any ASCII case), a name ending in a transfer mark, and for a
    station key (``key``; what routes are written with) the separator ``-`` (table keys
    write it ``_``; display labels may keep it).
    """
    if not isinstance(name, str) or not name.strip():
        return "is empty"
    if name != name.strip():
        return "has whitespace at its start or end"
    for c in name:
        if unicodedata.category(c) in _BAD_CATEGORIES:
            return f"contains the control character or line break U+{ord(c):04X}"
    low = name.translate(_ASCII_LOWER)
    for tag in _TAGS:
        if tag in low:
            return f"contains the tag {tag}"
    if _MARK_END.search(name):
        return "ends with a transfer mark"
    if key and SEPARATOR in name:
        return f"contains {SEPARATOR!r}, which separates stations in a route (keys write it '_')"
    return None


@lru_cache(maxsize=1 << 16)
def _key_problem(name: str) -> str | None:
    return name_problem(name, key=True)


def _fold(name: str) -> str:
    """What two names must not share: equal up to case, whitespace runs, compatibility
    forms (NFKC) and ``-`` against ``_``."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().replace("-", "_").split())


def check_station_names(
    keys: Iterable[str], labels: Mapping[str, str] | None = None, *, where: str = ""
) -> None:
    """Refuse station names that route text cannot carry (SPEC 1, 4, 12): raise a one-line
    :class:`StationNameError` naming the station (``where``, e.g. the map, first).

    ``keys`` are the station keys (the names routes are written with), ``labels`` their
    display names. Refused: any name :func:`name_problem` refuses; two stations whose names
    are equal up to case, whitespace, compatibility forms and ``-``/``_`` (ambiguous once
    an answer is normalised; names that differ in a diacritic are kept apart); and a name
    that reads as a route of other stations' names (``A-B`` beside ``A`` and ``B``).
    With these rules :func:`read_route` reads :func:`format_route` of any route of the keys
    back to the same keys and marks.
    """
    labels = labels or {}
    prefix = f"{where}: " if where else ""
    owner: dict[str, tuple[str, str]] = {}  # folded name -> (station key, name)
    names: set[str] = set()
    for key in keys:
        label = labels.get(key, key)
        for name, is_key in ((key, True), (label, False)):
            problem = name_problem(name, key=is_key)
            if problem is not None:
                raise StationNameError(f"{prefix}station {name!r} {problem}")
            folded = _fold(name)
            other = owner.setdefault(folded, (key, name))
            if other[0] != key:
                raise StationNameError(
                    f"{prefix}stations {other[1]!r} and {name!r} differ only in case, spacing "
                    "or '-'/'_'; rename one"
                )
            names.add(name)
    index = NameIndex(names)
    for name in sorted(n for n in names if SEPARATOR in n):
        route = _read_canonical(name, index, whole=False)
        if route is not None:
            others = ", ".join(map(repr, route[0]))
            raise StationNameError(
                f"{prefix}station {name!r} reads as a route of the stations {others}; rename it"
            )


def check_network_names(*networks: Any) -> None:
    """:func:`check_station_names` of each :class:`~maptab.core.network.Network` (its keys
    and display labels), its map id named in the error."""
    for network in networks:
        where = f"map {network.map_id!r}" if getattr(network, "map_id", "") else ""
        check_station_names(network.vertices, network.labels, where=where)


# ----------------------------------------------------------------------------- reading
class NameIndex:
    """The exact station names (keys and labels) of one map, for :func:`read_route`;
    names no route could hold (empty, padded, with a line break or NUL) are left out."""

    __slots__ = ("first", "max_parts", "max_spaced", "names")

    def __init__(self, names: Iterable[object]) -> None:
        ok = {
            n
            for n in names
            if isinstance(n, str) and n == n.strip() and "\x00" not in n and n.splitlines() == [n]
        }
        self.names = frozenset(ok)
        self.max_parts = max((n.count(SEPARATOR) + 1 for n in ok), default=1)
        # pieces a name spans when cut at separators (one more for one at either end)
        self.max_spaced = max((len(_SEP_FIND.findall(n)) + 2 for n in ok), default=1)
        self.first = frozenset(n[0] for n in ok)


Decoded = tuple[list[str], set[int]]


def read_route(text: str, index: NameIndex) -> Decoded | None:
    """``(stations, marked positions)`` when ``text`` (stripped) is exactly a route of
    names of ``index``, else ``None``; fewer than two stations is no route.

    First the text as :func:`format_route` writes it: split at every ``-``, a run of pieces
    joined by ``-`` being a name, optionally followed by ``(transfer)``. Failing that, any
    separator of :data:`SEPARATORS` with any spacing and any transfer mark of
    :data:`TRANSFER_PATTERN`. Either way a name is an exact whole name of ``index``, and of
    the readings the one with the fewest stations wins (ties: the longer name first).
    """
    text = text.strip()
    if not text or text[0] not in index.first:
        return None
    got = _read_canonical(text, index) or _read_spaced(text, index)
    if got is None or len(got[0]) < 2:
        return None
    return got


def _group(text: str, names: frozenset[str]) -> tuple[str, bool] | None:
    if text in names:
        return text, False
    if text.endswith(TRANSFER_MARK) and text[: -len(TRANSFER_MARK)] in names:
        return text[: -len(TRANSFER_MARK)], True
    return None


def _read_canonical(text: str, index: NameIndex, *, whole: bool = True) -> Decoded | None:
    """The canonical reading (:func:`read_route`); ``whole=False`` leaves out the reading of
    all of ``text`` as one name (so a name that reads as a route of others is found)."""
    pieces = text.split(SEPARATOR)
    n = len(pieces)
    names = index.names
    if index.max_parts == 1:  # no name holds '-': each piece is a station
        out = [_group(p, names) for p in pieces]
        if None in out or n < 2:
            return None
        return [g[0] for g in out], {i for i, g in enumerate(out) if g[1]}  # type: ignore[index]
    # best[i]: (stations, end, name, marked) of the best reading of pieces[i:]
    best: list[tuple[int, int, str, bool] | None] = [None] * (n + 1)
    best[n] = (0, n, "", False)
    for i in range(n - 1, -1, -1):
        joined = ""
        for j in range(i + 1, min(n, i + index.max_parts) + 1):
            joined = pieces[i] if j == i + 1 else f"{joined}{SEPARATOR}{pieces[j - 1]}"
            if not whole and i == 0 and j == n:
                continue
            rest = best[j]
            if rest is None:
                continue
            g = _group(joined, names)
            if g is not None and (best[i] is None or rest[0] + 1 <= best[i][0]):  # type: ignore[index]
                best[i] = (rest[0] + 1, j, g[0], g[1])
    return None if best[0] is None else _walk(best, n)


def _walk(best: Any, end: int) -> Decoded:
    """The reading that ``best`` (per position: stations to the end, next position, name,
    marked) gives from position 0 to ``end``."""
    stations: list[str] = []
    marks: set[int] = set()
    i = 0
    while i != end:
        _, nxt, name, marked = best[i]
        if marked:
            marks.add(len(stations))
        stations.append(name)
        i = nxt
    return stations, marks


def _read_spaced(text: str, index: NameIndex) -> Decoded | None:
    """The reading with any separator and mark (:func:`read_route`): ``text`` cut at every
    separator, a run of pieces being a name as written between them (a name may hold
    separators), the fewest-stations reading found from the end."""
    cuts = [(m.start(), m.end()) for m in _SEP_FIND.finditer(text)]
    if not cuts:
        return None
    starts = [0, *(e for _, e in cuts)]
    stops = [*(b for b, _ in cuts), len(text)]
    n = len(starts)
    names = index.names
    best: list[tuple[int, int, str, bool] | None] = [None] * (n + 1)
    best[n] = (0, n, "", False)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, min(n, i + index.max_spaced) + 1):
            rest = best[j]
            if rest is None:
                continue
            g = _spaced_group(text[starts[i] : stops[j - 1]], names)
            if g is not None and (best[i] is None or rest[0] + 1 <= best[i][0]):  # type: ignore[index]
                best[i] = (rest[0] + 1, j, g[0], g[1])
    return None if best[0] is None else _walk(best, n)


def _spaced_group(text: str, names: frozenset[str]) -> tuple[str, bool] | None:
    if text in names:
        return text, False
    if text[-1:] in _MARK_CLOSE:
        mark = _MARK_END.search(text)
        if mark is not None and text[: mark.start()] in names:
            return text[: mark.start()], True
    return None
