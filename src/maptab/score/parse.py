"""Reading answers out of free-form model responses (SPEC 12).

Every function here is total: any string (empty, huge, binary-looking, any script) gives a
result or ``None``, never an exception. ``None`` means *Output Format error*: the sample is
scored wrong and counted apart. A response longer than
:data:`~maptab._limits.MAX_RESPONSE_CHARS` is not parsed at all: it is a format error.

Pipeline for every answer kind:

1. :func:`strip_reasoning` drops reasoning blocks by the one rule of :mod:`maptab._reasoning`
   (``<think>``, ``<thinking>``, ``<reasoning>``, ``<reason>``,
   ``<|begin_of_thought|>…<|end_of_thought|>``, ``◁think▷…◁/think▷``; unterminated and
   left-over tags as described there), the same rule the run stage records with.
2. If the rest holds a tagged answer (``<route_begin>…<route_end>``,
   ``<answer_begin>…<answer_end>``; the last one wins) only its content is read.
3. Otherwise the *last line that parses* is used.

Routes (:func:`parse_route`): with a vocabulary, a line is first read as exact whole
station names (:func:`maptab.core.route_text.read_route`, the inverse of the route text
the gold labels and baselines write), as written, else with the fewest layers of
Markdown, bullet, ``Label:`` prefix or final full stop taken off its ends, so no clean-up
eats a character of a real name (``ג'``, ``Terminal:``, ``Foo__``). Otherwise the line is
cleaned and split: separators ``-``, ``–``, ``—``, ``——``, ``−``, ``－``, ``->``, ``→``,
``⟶``, ``=>``, ``⇒``, ``、``, ``，`` with or without spaces, Markdown decoration (bold,
italics, inline code, code fences, bullets, numbered items, quotes, headings), a
``Label:`` prefix, and transfer marks written ``(transfer)`` in any case and spacing, with
ASCII or full-width brackets. Station names that contain hyphens (``Porta
Furba-Quadraro``, table key ``Porta Furba_Quadraro``) are recovered from the map
vocabulary by a dynamic programme over the hyphen-split pieces.
"""

from __future__ import annotations

import math
import operator
import re
import string
from collections.abc import Collection
from dataclasses import dataclass, field

from maptab._cache import IdentityCache
from maptab._limits import MAX_RESPONSE_CHARS
from maptab._reasoning import REASONING_TAGS as _REASONING_TAGS  # noqa: F401 (tests read it)
from maptab._reasoning import strip_reasoning as _strip_blocks
from maptab.core.route_text import (
    ROUTE_BEGIN,
    ROUTE_END,
    SEPARATOR_AT,
    SEPARATOR_CUT,
    TRANSFER_PATTERN,
    NameIndex,
    normalise_name,
    read_route,
)

__all__ = [
    "ParsedRoute",
    "Segment",
    "normalise_name",
    "parse_answer",
    "parse_reasonmap",
    "parse_route",
    "parse_totals",
    "strip_reasoning",
    "tagged",
]

# ----------------------------------------------------------------------------- reasoning
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _usable(text: object) -> bool:
    """Whether ``text`` is a response to parse: a string of at most
    :data:`~maptab._limits.MAX_RESPONSE_CHARS` characters (a longer one is a format error)."""
    return isinstance(text, str) and len(text) <= MAX_RESPONSE_CHARS


def _ascii_lower(text: str) -> str:
    """``text`` with A-Z lower-cased and nothing else changed: unlike ``str.lower`` it keeps
    every index (``"İ".lower()`` is two characters), so offsets found in it apply to
    ``text``. The tags searched for are ASCII."""
    return text.translate(_ASCII_LOWER)


def strip_reasoning(text: str) -> str:
    """``text`` without its reasoning blocks, by the one rule of :mod:`maptab._reasoning`
    (shared with the run stage); a response too long to parse gives ``""``."""
    if not _usable(text):
        return ""
    return _strip_blocks(text)


def tagged(text: str, begin: str, end: str) -> str | None:
    """Content of the last ``begin…end`` block (case-insensitive), else ``None``.

    A ``begin`` tag with no ``end`` after it yields the text up to the end of the string.
    """
    low = _ascii_lower(text)
    b = low.rfind(_ascii_lower(begin))
    if b == -1:
        return None
    start = b + len(begin)
    e = low.find(_ascii_lower(end), start)
    return text[start:] if e == -1 else text[start:e]


# ----------------------------------------------------------------------------- clean-up
_FENCE = re.compile(r"^\s*(```|~~~)")
_BULLET = re.compile(r"^\s*(?:[#>]+\s*|[*+•·]\s+|-\s+(?=\S)|\d{1,3}[.)]\s+)")
_DECOR = re.compile(r"\*\*|__|`|~~|\*")
_TRANSFER = re.compile(TRANSFER_PATTERN, re.IGNORECASE)
_TRANSFER_TOKEN = "\x00T"  # transfer marks are swapped for this before splitting
_UNMARKED = operator.methodcaller("replace", _TRANSFER_TOKEN, "")


def _clean_line(line: str) -> str:
    line = _DECOR.sub("", line.replace("\x00", ""))
    prev = None
    while prev != line:  # nested bullets / quotes
        prev = line
        line = _BULLET.sub("", line, count=1)
    return line.strip().strip("\"'“”‘’「」").strip()


def _lines(text: str) -> list[str]:
    """Candidate route lines as written (code fences and blank lines dropped):
    :func:`_route_from_line` reads exact names before it cleans a line."""
    return [raw for raw in text.splitlines() if raw.strip() and not _FENCE.match(raw)]


def _clean_lines(text: str) -> list[str]:
    """Candidate answer lines, cleaned of Markdown, code fences dropped, empty ones skipped."""
    out = []
    for raw in text.splitlines():
        if _FENCE.match(raw):
            continue
        line = _clean_line(raw)
        if line:
            out.append(line)
    return out


# ----------------------------------------------------------------------------- routes
@dataclass(slots=True)
class ParsedRoute:
    """A route read from a response.

    ``stations`` are the names as written (hyphens kept, transfer marks removed);
    ``transfers`` the indices into ``stations`` that carried a ``(transfer)`` mark; ``raw``
    the answer line the route was read from.
    """

    stations: list[str]
    transfers: set[int] = field(default_factory=set)
    raw: str = ""

    def tokens(self) -> list[str]:
        """MapTab-style tokens for the paper metrics: table spelling (``-`` → ``_``) with
        ``(transfer)`` appended to marked stations."""
        return [
            s.replace("-", "_") + ("(transfer)" if i in self.transfers else "")
            for i, s in enumerate(self.stations)
        ]

    def route_string(self) -> str:
        """The route in MapTab notation ``A-B(transfer)-C``."""
        return "-".join(self.tokens())


# separators: arrows are always separators; dashes too, but a bare '-' between two
# non-space characters may also be part of a name (resolved against the vocabulary)
_SEP = re.compile(SEPARATOR_AT)
_SEP_SPLIT = re.compile(f"({SEPARATOR_CUT})")
_LABEL = re.compile(r"^[^\n:：]{0,40}[:：]\s*")
# a colon after one of these is not a label's: the route came first (commas do not count)
_LABEL_SEP = re.compile(r"->|=>|→|⟶|➔|➝|⇒|—|–|−|－|-")
_MAX_PIECE = 200


@dataclass(slots=True)
class _Vocab:
    keys: frozenset[str]
    max_parts: int
    #: every beginning of a key that ends just before one of its ``_`` (and a space there):
    #: the comparison key of a piece that starts a merged name is one of them (_segment)
    heads: frozenset[str] = frozenset()
    #: the names as written, for the exact reading (maptab.core.route_text.read_route)
    exact: NameIndex = field(default_factory=lambda: NameIndex(()))


# one vocabulary per map: more than a paper-size dataset's maps (maptab._cache policy)
_VOCAB_CACHE: IdentityCache[Collection[str], _Vocab] = IdentityCache(1024)


def _vocab(vocabulary: Collection[str] | None) -> _Vocab | None:
    if vocabulary is None:
        return None
    return _VOCAB_CACHE.get(vocabulary, lambda: _make_vocab(vocabulary))


def _make_vocab(vocabulary: Collection[str]) -> _Vocab:
    keys = frozenset(normalise_name(v) for v in vocabulary if isinstance(v, str))
    max_parts = max((k.count("_") + 1 for k in keys), default=1)
    heads = set()
    for k in keys:
        for m, c in enumerate(k):
            if c == "_":
                heads.add(k[:m])
                if m and k[m - 1] == " ":
                    heads.add(k[: m - 1])
    return _Vocab(keys, max_parts, frozenset(heads), NameIndex(vocabulary))


def _split_general(line: str) -> tuple[str, list[str], list[str]]:
    """``(body, pieces, separators)``: transfer marks swapped for :data:`_TRANSFER_TOKEN`,
    then the body split at every separator (:data:`_SEP`)."""
    # a mark opens with one of ( [ （ 【: without any, there is nothing to substitute
    marked = "(" in line or "[" in line or "（" in line or "【" in line
    body = _TRANSFER.sub(_TRANSFER_TOKEN, line) if marked else line
    parts = _SEP_SPLIT.split(body)  # piece, separator, piece, ..., piece
    return body, parts[0::2], parts[1::2]


# the separators and opening brackets of marks (_SEP, _TRANSFER) that are not ASCII
_WIDE_MARKS = re.compile("[→⟶➔➝⇒—–−－、，（【]")


def _split_plain(line: str) -> tuple[str, list[str], list[str]] | None:
    """:func:`_split_general` without regular expressions, for the common line (printable,
    ``-`` between stations with no space beside it, marks written ``(transfer)`` with no
    space before them); ``None`` for any other line. In printable text the only space is
    ``" "`` (``str.isprintable`` refuses every other whitespace character); without the
    characters of :data:`_WIDE_MARKS` and ``>``, the only separator is ``-`` (``->`` and
    ``=>`` hold ``>``) and the only opening brackets ``(`` and ``[``; a ``(`` that does
    not open ``(transfer)`` (another case, an inner space, ``station``) leaves the work to
    the general path."""
    if not line.isprintable() or ">" in line:
        return None
    if not line.isascii() and _WIDE_MARKS.search(line):
        return None
    if " -" in line or "- " in line:
        return None
    body = line
    if "(" in line or "[" in line:
        if "[" in line or " (" in line or line.count("(") != line.count("(transfer)"):
            return None
        body = line.replace("(transfer)", _TRANSFER_TOKEN)
    pieces = body.split("-")
    return body, pieces, ["-"] * (len(pieces) - 1)


def _split_pieces(line: str, vocab: _Vocab | None = None) -> tuple[list[str], list[str]] | None:
    """Split a cleaned line at separators: ``(pieces, separators between them)``.

    A trailing full stop is punctuation unless the last piece, stop included, is a station
    of ``vocab`` (``Rädelstr.``)."""
    body, pieces, seps = _split_plain(line) or _split_general(line)
    last = pieces[-1].rstrip(" ;；")
    if last[-1:] in ".。":
        keep = vocab is not None and normalise_name(last.replace(_TRANSFER_TOKEN, "")) in vocab.keys
        if not keep:
            last = last.rstrip(" .。;；")
    pieces[-1] = last
    if _TRANSFER_TOKEN in body:
        if not all(map(str.strip, map(_UNMARKED, pieces))):
            return None
    elif not all(map(str.strip, pieces)):
        return None
    return pieces, seps


def _segment(pieces: list[str], seps: list[str], vocab: _Vocab | None) -> list[str]:
    """Group pieces into station names.

    Pieces ``i..j`` may merge (joined by ``-``) only across bare hyphens with no spaces and
    when the merged name is in the vocabulary. Among all groupings, the DP maximises the
    number of pieces covered by vocabulary names, then minimises the number of stations.

    The comparison key of pieces ``i..j`` joined by ``-`` starts with the key of piece
    ``i`` followed by ``_`` (or `` _`` when the piece ends in a space): ``-`` becomes ``_``
    and the steps of :func:`normalise_name` act on either side of it apart. So a merged
    name can start only at a piece whose key is in ``vocab.heads``; with none, every piece
    is its own station, as the DP would find.
    """
    n = len(pieces)
    if vocab is None or vocab.max_parts == 1:  # no name spans two pieces: nothing to merge
        return pieces
    heads = vocab.heads
    starts = [_TRANSFER_TOKEN not in p and normalise_name(p) in heads for p in pieces[:-1]]
    if not any(starts):
        return pieces
    mergeable = [s == "-" for s in seps]

    def name_key(i: int, j: int) -> str:
        return normalise_name("-".join(p.replace(_TRANSFER_TOKEN, "") for p in pieces[i : j + 1]))

    best: list[tuple[int, int]] = [(0, 0)] * (n + 1)  # (covered, -stations) up to i
    back = [0] * (n + 1)
    for j in range(1, n + 1):
        cand: tuple[int, int] | None = None
        for i in range(j - 1, max(-1, j - 1 - vocab.max_parts), -1):
            if i < j - 1 and not mergeable[i]:
                break
            # a transfer mark may sit only on the last piece of a merged name
            if i < j - 1 and _TRANSFER_TOKEN in pieces[i]:
                break
            if i < j - 1 and not starts[i]:
                continue  # no vocabulary name starts with piece i (docstring)
            hit = name_key(i, j - 1) in vocab.keys
            if i < j - 1 and not hit:
                continue
            score = (best[i][0] + (j - i if hit else 0), best[i][1] - 1)
            if cand is None or score > cand:
                cand, back[j] = score, i
        best[j] = cand  # type: ignore[assignment]  # the single piece is always a candidate
    groups: list[str] = []
    j = n
    while j > 0:
        i = back[j]
        groups.append("-".join(pieces[i:j]))
        j = i
    return groups[::-1]


def _trim_to_vocab(name: str, vocab: _Vocab, *, from_start: bool) -> str:
    """Drop words of prose before the first (``from_start``) or after the last station:
    ``So the route is Alpha`` → ``Alpha`` when only the latter is a vocabulary name."""
    if normalise_name(name) in vocab.keys:
        return name
    words = name.split()
    for k in range(1, len(words)):
        cand = " ".join(words[k:] if from_start else words[: len(words) - k])
        if normalise_name(cand) in vocab.keys:
            return cand
    return name


def _names(groups: list[str]) -> list[str]:
    """``[" ".join(g.replace(_TRANSFER_TOKEN, " ").split()) for g in groups]``: each group
    with its marks dropped and its whitespace runs collapsed and stripped. Done on the
    groups joined by ``\x01`` (not whitespace) when none holds it: collapsing the whole
    leaves at most one space on either side of each ``\x01``, which is then dropped."""
    joined = "\x01".join(groups)
    if joined.count("\x01") != len(groups) - 1:
        return [" ".join(g.replace(_TRANSFER_TOKEN, " ").split()) for g in groups]
    whole = " ".join(joined.replace(_TRANSFER_TOKEN, " ").split())
    return whole.replace(" \x01", "\x01").replace("\x01 ", "\x01").split("\x01")


# trailing punctuation, wrappers and lone marks that _peels takes off a line's ends
_STOPS = ".。;；"
_WRAPS = (
    ("**", "**"), ("__", "__"), ("~~", "~~"), ("`", "`"), ("*", "*"), ('"', '"'), ("'", "'"),
    ("“", "”"), ("‘", "’"), ("「", "」"),
)  # fmt: skip
_MAX_PEELED = 32  # texts tried per line (each a layer or more off the line's ends)


def _peels(line: str) -> list[str]:
    """``line`` (stripped, not empty) with one layer taken off its ends, each way that
    applies: a final full stop or semicolon, a bullet or number, a ``Label:`` prefix, a
    wrapping pair (bold, code, quotes), a lone mark at either end."""
    out = []
    if line[-1] in _STOPS:
        out.append(line[:-1])
    bullet = _BULLET.match(line)
    if bullet:
        out.append(line[bullet.end() :])
    if ":" in line or "：" in line:
        label = _LABEL.match(line)
        if label and not _LABEL_SEP.search(label.group(0)):
            out.append(line[label.end() :])
    for a, b in _WRAPS:
        if len(line) > len(a) + len(b) and line.startswith(a) and line.endswith(b):
            out.append(line[len(a) : -len(b)])
    for a in _ENDS:
        if line.startswith(a):
            out.append(line[len(a) :])
        if line.endswith(a):
            out.append(line[: -len(a)])
    return [t.strip() for t in out]


def _exact_route(line: str, vocab: _Vocab) -> ParsedRoute | None:
    """The route ``line`` states in exact station names (:func:`read_route`): read as
    written, else after the fewest layers taken off its ends (:func:`_peels`)."""
    todo = [line.strip()]
    seen = set(todo)
    for text in todo:  # breadth first: the least taken off wins
        if not text:
            continue
        got = read_route(text, vocab.exact)
        if got is not None:
            return ParsedRoute(got[0], got[1], text)
        for peeled in _peels(text):
            if peeled not in seen and len(seen) < _MAX_PEELED:
                seen.add(peeled)
                todo.append(peeled)
    return None


def _route_from_line(
    line: str, vocab: _Vocab | None, count_hits: bool = True
) -> tuple[ParsedRoute, int] | None:
    """``(route, vocabulary hits)`` for one line as written, or ``None`` if it is no route
    (hits counted 0 unless ``count_hits``: a lone line is the answer whatever its hits).
    With a vocabulary, exact names first (:func:`_exact_route`); then the line cleaned."""
    if vocab is not None:
        exact = _exact_route(line, vocab)
        if exact is not None:
            return exact, len(exact.stations) if count_hits else 0
    line = _clean_line(line).strip()
    if not line:
        return None
    label = _LABEL.match(line) if ":" in line or "：" in line else None  # it needs one
    if label and not _LABEL_SEP.search(label.group(0)):
        line = line[label.end() :]
    split = _split_pieces(line, vocab)
    if split is None:
        return None
    pieces, seps = split
    if len(pieces) < 2 or max(map(len, pieces)) > _MAX_PIECE:
        return None
    groups = _segment(pieces, seps, vocab)
    stations = _names(groups)
    if not all(stations):
        return None
    transfers = {i for i, g in enumerate(groups) if _TRANSFER_TOKEN in g}
    if len(stations) < 2:
        return None
    if vocab is not None:
        stations[0] = _trim_to_vocab(stations[0], vocab, from_start=True)
        stations[-1] = _trim_to_vocab(stations[-1], vocab, from_start=False)
    hits = 0
    if vocab is not None and count_hits:
        hits = sum(map(vocab.keys.__contains__, map(normalise_name, stations)))
    return ParsedRoute(stations, transfers, line), hits


# characters and pairs after which a text may not be a bare line (tags, line breaks of
# str.splitlines, what _clean_line removes); see _plain_line
_NOT_PLAIN = re.compile("[<◁*`\x00\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]|__|~~")
_QUOTES = "\"'“”‘’「」"
_BULLET_START = "#>+•·-" + _QUOTES
_ENDS = ("**", "__", "~~", "`", "*", *_QUOTES)


def _plain_line(text: str) -> bool:
    """A sufficient test for :func:`_bare_line` without its regular expressions: no tag
    character, line break or Markdown mark anywhere, and nothing :func:`_clean_line` would
    strip at either end (space, quote, or a bullet/number start). ``False`` means "ask the
    full test"."""
    if not text:
        return False
    if text.isprintable():  # the same test without the regex: what the class holds beside
        # '<', '◁', '*' and '`' is control characters and line breaks, which are not printable
        if "<" in text or "◁" in text or "*" in text or "`" in text or "__" in text or "~~" in text:
            return False
    elif _NOT_PLAIN.search(text):
        return False
    first, last = text[0], text[-1]
    if first.isspace() or first.isdigit() or first in _BULLET_START:
        return False
    return not (last.isspace() or last in _QUOTES)


def _bare_line(text: str) -> bool:
    """Whether ``text`` is one clean line without tags (a bare route such as ``A-B-C``):
    then :func:`strip_reasoning` and :func:`tagged` leave it as it is (every tag starts with
    ``<`` or ``◁``) and :func:`_lines` gives exactly ``[text]``."""
    if _plain_line(text):
        return True
    return (
        "<" not in text
        and "◁" not in text
        and text.splitlines() == [text]
        and not _FENCE.match(text)
        and _clean_line(text) == text
    )


_ROUTE_BEGIN, _ROUTE_END = ROUTE_BEGIN, ROUTE_END


def _route_tag_content(text: str) -> str | None:
    """The content of the route tags when they are the text's only tags: exactly two ``<``
    (those of ``<route_begin>…<route_end>``, written so, in that order) and no ``◁``.
    Every reasoning tag holds one of those characters, so :func:`strip_reasoning` leaves
    such a text as it is, :func:`tagged` gives this content, and the content holds no tag:
    :func:`parse_route` of the text is ``parse_route`` of the content (the answer format
    the prompts ask for); ``None`` otherwise."""
    if text.count("<") != 2 or "◁" in text:
        return None
    b = text.find(_ROUTE_BEGIN)
    e = text.find(_ROUTE_END)
    if b == -1 or e < b + len(_ROUTE_BEGIN):
        return None
    return text[b + len(_ROUTE_BEGIN) : e]


def parse_route(text: str, vocabulary: Collection[str] | None = None) -> ParsedRoute | None:
    """The route a response states, or ``None`` (Output Format error).

    ``vocabulary`` (station keys and display labels of the map) enables recovery of
    hyphenated names and the choice of the answer line: without a tagged answer, the last
    line in which at least half of the stations are vocabulary names wins; failing that (or
    without a vocabulary) the last line with two or more stations.
    """
    if not _usable(text):
        return None
    vocab = _vocab(vocabulary)
    if _bare_line(text):  # the fast path: what the steps below would reduce the text to
        got = _route_from_line(text, vocab, count_hits=False)
        return got[0] if got else None
    inner = _route_tag_content(text)
    if inner is not None:  # what the steps below would reduce the text to
        return parse_route(inner, vocabulary)
    body = strip_reasoning(text)
    inner = tagged(body, _ROUTE_BEGIN, _ROUTE_END)
    if inner is not None:
        body = inner
    fallback: ParsedRoute | None = None
    for line in reversed(_lines(body)):
        got = _route_from_line(line, vocab)
        if got is None:
            continue
        route, hits = got
        if vocab is None or 2 * hits >= len(route.stations):
            return route
        if fallback is None:
            fallback = route
    return fallback


# ----------------------------------------------------------------------------- QA answers
_NUMBER = re.compile(r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+−]?\.\d+")
_YES = re.compile(r"\b(?:yes|true|correct)\b|是", re.IGNORECASE)
_NO = re.compile(r"\b(?:no|false|incorrect)\b|否", re.IGNORECASE)


def _to_float(tok: str) -> float | None:
    try:
        v = float(tok.replace(",", "").replace("−", "-"))
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _value(text: str) -> float | None:
    """The value a short answer text states: a lone number, else yes/no, else its last
    number."""
    t = _clean_line(text.replace("\n", " "))
    whole = _to_float(t.rstrip(".")) if t else None
    if whole is not None:
        return whole
    nums = _NUMBER.findall(t)
    yes, no = bool(_YES.search(t)), bool(_NO.search(t))
    if not nums and yes != no:
        return 1.0 if yes else 0.0
    return _to_float(nums[-1]) if nums else None


def parse_answer(text: str) -> float | None:
    """A QA answer as a number (yes/true → 1, no/false → 0), or ``None``.

    The tagged ``<answer_begin>…<answer_end>`` content is read whole; without tags, the last
    line that states a value. Within the text read: a lone number; else a yes/no word when
    no number is present; else the last number (thousands separators allowed).
    """
    if not _usable(text):
        return None
    body = strip_reasoning(text)
    inner = tagged(body, "<answer_begin>", "<answer_end>")
    if inner is not None:
        return _value(inner)
    for line in reversed(_clean_lines(body)):
        v = _value(line)
        if v is not None:
            return v
    return None


_TOTAL_PATTERNS: dict[str, re.Pattern[str]] = {
    name: re.compile(
        r"(?:" + pattern + r")\s*\**\s*[:=：]\s*\**\s*\$?\s*(" + _NUMBER.pattern + ")",
        re.IGNORECASE,
    )
    for name, pattern in (
        ("Total_Time", r"total[_\s]*time"),
        ("Total_Price", r"total[_\s]*price"),
        ("Average_Comfort Level", r"average[_\s]*comfort(?:[_\s]*level)?"),
        ("Average_Reliability", r"average[_\s]*reliability"),
    )
}


def parse_totals(text: str) -> dict[str, float]:
    """Reported totals (``Total_Time: 14.12`` …, any case, ``_`` or spaces) found in the
    answer part of a response; the last statement of each wins."""
    if not _usable(text):
        return {}
    body = strip_reasoning(text)
    out: dict[str, float] = {}
    for name, pat in _TOTAL_PATTERNS.items():
        found = pat.findall(body)
        if found:
            v = _to_float(found[-1])
            if v is not None:
                out[name] = v
    return out


# ----------------------------------------------------------------------------- ReasonMap
@dataclass(slots=True)
class Segment:
    """One parsed ReasonMap answer segment; ``num_via_stops``/``via_stops`` are ``None``
    when the answer did not state them."""

    route_name: str
    departure_stop: str
    arrival_stop: str
    num_via_stops: int | None = None
    via_stops: list[str] | None = None


_RM_FIELDS = {
    "route name": "route_name",
    "departure stop": "departure_stop",
    "arrival stop": "arrival_stop",
    "number of via stops": "num_via_stops",
    "via stops": "via_stops",
}
_RM_KEY = re.compile(
    r"(route\s*name|departure\s*stop|arrival\s*stop|number\s*of\s*via\s*stops|via\s*stops)"
    r"\s*\**\s*[:：]",
    re.IGNORECASE,
)
_LIST_SEP = re.compile(r"\s*(?:[,;，；、]|\n)\s*")


def _rm_value(raw: str) -> str:
    """A single-line field value: its first non-empty line, cleaned."""
    first = next((ln for ln in raw.splitlines() if ln.strip()), "")
    return _clean_line(first).strip(" ,;|")


def parse_reasonmap(text: str, mode: str = "short") -> list[Segment] | None:
    """ReasonMap segments from a response, or ``None`` when no complete segment is found.

    Fields are ``Route Name:``, ``Departure Stop:``, ``Arrival Stop:`` and (long questions)
    ``Number of Via Stops:`` or ``Via Stops:`` (a list split at commas, semicolons, ``、``
    or line breaks). A new segment starts at each ``Route Name:``; ``--`` between segments
    is optional. Each segment needs the three stop/route fields; in ``mode="long"`` a
    missing via field is left ``None`` (scored 0 for that part, not a format error).
    """
    if not isinstance(text, str) or mode not in ("short", "long"):
        return None
    body = strip_reasoning(text)
    inner = tagged(body, "<answer_begin>", "<answer_end>")
    if inner is not None:
        body = inner
    matches = list(_RM_KEY.finditer(body))
    if not matches:
        return None
    records: list[dict[str, str]] = []
    for k, m in enumerate(matches):
        key = _RM_FIELDS[" ".join(m.group(1).lower().split())]
        end = matches[k + 1].start() if k + 1 < len(matches) else len(body)
        value = body[m.end() : end]
        value = value.split("--", 1)[0]
        if key == "route_name" or not records or key in records[-1]:
            records.append({})
        records[-1][key] = value
    segments: list[Segment] = []
    for rec in records:
        fields3 = [
            _rm_value(rec.get(k, "")) for k in ("route_name", "departure_stop", "arrival_stop")
        ]
        if not all(fields3):
            continue
        seg = Segment(*fields3)
        if "num_via_stops" in rec:
            nums = _NUMBER.findall(rec["num_via_stops"])
            v = _to_float(nums[0]) if nums else None
            seg.num_via_stops = int(v) if v is not None and v.is_integer() and v >= 0 else None
        if "via_stops" in rec:
            seg.via_stops = _via_list(rec["via_stops"])
        segments.append(seg)
    return segments or None


def _via_list(raw: str) -> list[str]:
    text = _clean_line(raw.replace("\n", ", "))
    if text.lower().strip(" .") in ("", "none", "n/a", "无", "[]"):
        return []
    items = (_clean_line(x).strip(" .[]") for x in _LIST_SEP.split(text.strip("[] ")))
    return [x for x in items if x and x.lower() != "none"]
