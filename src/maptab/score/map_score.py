"""ReasonMap scoring: correctness and map score (SPEC 14; ReasonMap section 4, appendix B).

Names. *Lenient* comparison (the paper's) uses :func:`lenient_key`: case, diacritics,
whitespace, ``-``/``_``, bracketed annotations such as ``(Transfer Station)`` and a trailing
``Station`` / ``站`` are ignored. *Strict* comparison resolves stops exactly against the map
(:class:`maptab.score.verified.StationIndex`: case, diacritics and whitespace only) and route
names against the map's line names the same way. No fuzzy ratio anywhere.

Line names as printed on the map. A route name that is no line's name (leniently) is read
through the map's line aliases (:mod:`maptab.core.line_names`: case, width, whitespace, a
mode word, a generic word for "line" such as ``Line``/``号线``/``Linha``, an ``L``/``M``
before a number and Chinese numerals ignored; a key two lines share is no alias): ``15``,
``15号线`` or ``M15`` name ``Line 15``, for both correctness variants and the map score.
Names that match a line keep matching exactly as before.

**Correctness** (lenient): the answer has at least one segment; its first departure and
last arrival are the asked stops; every route name is a line of the map; each segment's
departure and arrival stops are on that line; each segment's arrival is the next one's
departure. **Strict correctness** also requires exact names (a line alias is its line's exact
name), a departure different from the arrival, and the arrival reachable from the departure
along the line's own edges.

**Map score**, best over the reference routes (segments paired in order, ``zip``):

* short (max 20): if the first departure and last arrival are the asked stops, 1 point plus,
  per pair, 2 for the same route name, 1 for the same departure, 1 for the same arrival;
  capped at 10; +10 when correct. Otherwise 0.
* long (max 40): the short route part (capped at 10) plus a via part (capped at 10), the sum
  capped at 20, then +20 when correct. The via part, also only when the endpoints are right:
  ``num_via`` template — per pair 4 if the via-stop count equals the reference's, else
  ``max(0, 4 − 4·|error| / reference count)`` (0 when the reference count is 0 or the answer
  gives none), summed and capped at 10; ``via_list`` template — over the pairs whose route
  names match, ``(min(10, answer via stops found in the reference segment) + 10·IoU) / 2``
  where IoU compares the union of answer and of reference via stops of those pairs (1 when
  both are empty, 0 when no pair matches).

**Difficulty weights** (question × map difficulty): easy/medium/hard rows
1.0 1.5 2.0 / 1.5 2.0 2.5 / 2.0 2.5 3.0; weighted averages are ``Σ w·x / Σ w``.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from maptab._cache import IdentityCache
from maptab.core.line_names import line_aliases, line_key
from maptab.core.network import Network
from maptab.core.schema import ReasonMapQuestion
from maptab.score.parse import Segment, normalise_name
from maptab.score.verified import station_index

__all__ = [
    "DIFFICULTY_WEIGHTS",
    "RMScore",
    "canonical_route_names",
    "difficulty_weight",
    "lenient_key",
    "map_score",
    "score_reasonmap",
]

_LEVEL = {"easy": "easy", "medium": "medium", "middle": "medium", "hard": "hard"}
DIFFICULTY_WEIGHTS: dict[tuple[str, str], float] = {
    ("easy", "easy"): 1.0,
    ("medium", "easy"): 1.5,
    ("hard", "easy"): 2.0,
    ("easy", "medium"): 1.5,
    ("medium", "medium"): 2.0,
    ("hard", "medium"): 2.5,
    ("easy", "hard"): 2.0,
    ("medium", "hard"): 2.5,
    ("hard", "hard"): 3.0,
}
MAX_SCORE = {"short": 20.0, "long": 40.0}

_ANNOTATION = re.compile(r"\s*[(\[（【][^)\]）】]*[)\]）】]\s*")
_SUFFIX = re.compile(r"(?:\s+station|\s*站)$")


def lenient_key(name: str) -> str:
    """Lenient comparison key of a stop or route name (module docstring)."""
    base = _ANNOTATION.sub(" ", name)
    return _SUFFIX.sub("", normalise_name(base)).strip()


def difficulty_weight(question_difficulty: str, map_difficulty: str) -> float:
    """Weight of a (question, map) difficulty pair; raises ``ValueError`` on unknown labels."""
    try:
        return DIFFICULTY_WEIGHTS[
            (_LEVEL[question_difficulty.lower()], _LEVEL[map_difficulty.lower()])
        ]
    except (KeyError, AttributeError):
        raise ValueError(
            f"unknown difficulty {question_difficulty!r}/{map_difficulty!r}; expected easy, medium or hard"
        ) from None


class _Lines:
    """Line look-ups of one network: names (lenient, strict), stations and track per line."""

    def __init__(self, network: Network) -> None:
        self.index = station_index(network)
        self.strict: dict[str, str] = {}
        self.lenient: dict[str, str] = {}
        self.track: dict[str, dict[str, set[str]]] = {}
        for line in network.line_names:
            self.strict.setdefault(normalise_name(line), line)
            self.lenient.setdefault(lenient_key(line), line)
            adj: dict[str, set[str]] = {}
            for e in network.line_edges(line):
                adj.setdefault(e.u, set()).add(e.v)
                adj.setdefault(e.v, set()).add(e.u)
            self.track[line] = adj
        self.aliases = line_aliases(network.line_names, key=_alias_key)
        self.by_lenient: dict[str, set[str]] = {}
        for key in network.vertices:
            for name in (key, network.label(key)):
                self.by_lenient.setdefault(lenient_key(name), set()).add(key)

    def on_line_lenient(self, stop: str, line: str) -> bool:
        return bool(self.by_lenient.get(lenient_key(stop), set()) & self.track[line].keys())

    def reachable(self, line: str, a: str, b: str) -> bool:
        adj = self.track[line]
        if a not in adj or b not in adj:
            return False
        seen, queue = {a}, deque([a])
        while queue:
            s = queue.popleft()
            if s == b:
                return True
            for n in adj[s] - seen:
                seen.add(n)
                queue.append(n)
        return False


_LINES_CACHE: IdentityCache[Network, _Lines] = IdentityCache(256)


def _lines(network: Network) -> _Lines:
    return _LINES_CACHE.get(network, lambda: _Lines(network))


def _same(a: str, b: str) -> bool:
    return lenient_key(a) == lenient_key(b)


def _alias_key(name: str) -> str:
    return line_key(lenient_key(name))


def canonical_route_names(network: Network, segments: Sequence[Segment]) -> list[Segment]:
    """``segments`` with each route name that is a line alias of ``network`` (and no line's
    name) replaced by that line's name (module docstring); other segments unchanged."""
    lines = _lines(network)
    out = []
    for seg in segments:
        if lenient_key(seg.route_name) not in lines.lenient:
            line = lines.aliases.get(_alias_key(seg.route_name))
            if line is not None:
                seg = replace(seg, route_name=line)
        out.append(seg)
    return out


def correctness(
    network: Network, segments: Sequence[Segment], station_1: str, station_2: str
) -> tuple[bool, bool]:
    """``(lenient, strict)`` correctness of parsed segments (module docstring)."""
    if not segments:
        return False, False
    segments = canonical_route_names(network, segments)
    lines = _lines(network)
    lenient = _same(segments[0].departure_stop, station_1) and _same(
        segments[-1].arrival_stop, station_2
    )
    for k, seg in enumerate(segments):
        line = lines.lenient.get(lenient_key(seg.route_name))
        if line is None or not (
            lines.on_line_lenient(seg.departure_stop, line)
            and lines.on_line_lenient(seg.arrival_stop, line)
        ):
            lenient = False
        if k and not _same(segments[k - 1].arrival_stop, seg.departure_stop):
            lenient = False
    if not lenient:
        return False, False
    index = lines.index
    resolve = index.resolve
    if resolve(segments[0].departure_stop) != resolve(station_1) or resolve(
        segments[-1].arrival_stop
    ) != resolve(station_2):
        return True, False
    prev_arrival: str | None = None
    for seg in segments:
        line = lines.strict.get(normalise_name(seg.route_name))
        dep, arr = resolve(seg.departure_stop), resolve(seg.arrival_stop)
        if line is None or dep is None or arr is None or dep == arr:
            return True, False
        if not lines.reachable(line, dep, arr):
            return True, False
        if prev_arrival is not None and prev_arrival != dep:
            return True, False
        prev_arrival = arr
    return True, True


def _field(seg: dict[str, Any] | Any, name: str) -> Any:
    return seg[name] if isinstance(seg, dict) else getattr(seg, name)


def _num_via_part(answer: Sequence[Segment], reference: Sequence[Any]) -> float:
    total = 0.0
    for a, r in zip(answer, reference, strict=False):
        ref_n = int(_field(r, "num_via_stops"))
        if a.num_via_stops is None:
            continue
        if a.num_via_stops == ref_n:
            total += 4.0
        elif ref_n > 0:
            total += max(0.0, 4.0 - 4.0 * abs(a.num_via_stops - ref_n) / ref_n)
    return min(10.0, total)


def _via_list_part(answer: Sequence[Segment], reference: Sequence[Any]) -> float:
    found = 0
    ans_set: set[str] = set()
    ref_set: set[str] = set()
    matched = 0
    for a, r in zip(answer, reference, strict=False):
        if not _same(a.route_name, _field(r, "route_name")):
            continue
        matched += 1
        ref_keys = {lenient_key(s) for s in _field(r, "via_stops")}
        ans_keys = {lenient_key(s) for s in (a.via_stops or [])}
        found += len(ans_keys & ref_keys)
        ans_set |= ans_keys
        ref_set |= ref_keys
    if not matched:
        return 0.0
    union = ans_set | ref_set
    iou = len(ans_set & ref_set) / len(union) if union else 1.0
    return min(10.0, (min(10, found) + 10.0 * iou) / 2.0)


def map_score(
    segments: Sequence[Segment] | None,
    question: ReasonMapQuestion,
    mode: str,
    correct: bool,
) -> float:
    """The map score of an answer (module docstring), best over the reference routes.
    Route names are compared as given: pass the segments through
    :func:`canonical_route_names` first to read line aliases (:func:`score_reasonmap` does)."""
    if not segments:
        return 0.0
    if not (
        _same(segments[0].departure_stop, question.station_1)
        and _same(segments[-1].arrival_stop, question.station_2)
    ):
        return 0.0
    best = 0.0
    for ref in question.routes or [[]]:
        route = 1.0
        for a, r in zip(segments, ref, strict=False):
            route += 2.0 * _same(a.route_name, _field(r, "route_name"))
            route += _same(a.departure_stop, _field(r, "departure_stop"))
            route += _same(a.arrival_stop, _field(r, "arrival_stop"))
        route = min(10.0, route)
        if mode == "short":
            score = route + (10.0 if correct else 0.0)
        else:
            if question.long_template == "via_list":
                via = _via_list_part(segments, ref)
            else:
                via = _num_via_part(segments, ref)
            score = min(20.0, route + via) + (20.0 if correct else 0.0)
        best = max(best, score)
    return best


@dataclass(slots=True)
class RMScore:
    """Scores of one ReasonMap answer."""

    parsed: bool
    correct: bool
    correct_strict: bool
    map_score: float
    max_score: float
    weight: float


def score_reasonmap(
    network: Network, question: ReasonMapQuestion, segments: Sequence[Segment] | None, mode: str
) -> RMScore:
    """Correctness (lenient, strict), map score and difficulty weight of one answer."""
    if mode not in MAX_SCORE:
        raise ValueError(f"ReasonMap mode must be 'short' or 'long', got {mode!r}")
    weight = difficulty_weight(question.question_difficulty, question.map_difficulty)
    if not segments:
        return RMScore(False, False, False, 0.0, MAX_SCORE[mode], weight)
    segments = canonical_route_names(network, segments)
    lenient, strict = correctness(network, segments, question.station_1, question.station_2)
    return RMScore(
        True, lenient, strict, map_score(segments, question, mode, lenient), MAX_SCORE[mode], weight
    )
