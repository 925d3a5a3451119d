"""Line names as printed on a map (SPEC 14): ``15``, ``15号线`` or ``M15`` for ``Line 15``.

:func:`line_key` is the comparison key of a line name:

1. NFKD (full-width to ASCII), diacritics dropped, case-folded; ``-``, ``_``, ``·`` and
   runs of whitespace read as one space.
2. A mode word at the start is dropped: ``Metro``, ``Metrorail``, ``Subway``, ``地铁``,
   ``地鐵``.
3. A generic word for "line" is dropped once at the start (``Line``, ``Linie``, ``Ligne``,
   ``Línea``, ``Linea``, ``Linha``, ``Lijn``, ``Linje``, ``Linia``, before a space or a
   digit) and once at the end (the same words after a space or a digit; ``号线``, ``號線``,
   ``號綫``, ``线``, ``線``, ``綫``, ``호선``, ``선`` directly).
4. What is left, if it is a number, is written in digits without leading zeros: Chinese
   numerals (``十五`` → ``15``) and a single leading ``L`` or ``M`` (``M1``, ``L 1`` →
   ``1``) are read as that number. A letter before anything but a number stays (``S1``,
   ``U1``, ``T1``, ``MA`` keep theirs), as do suffixes (``1A`` is not ``1``).
5. Spaces are removed.

A step that would leave nothing is skipped. :func:`line_aliases` maps the keys of a map's
lines to the lines; a key shared by two different lines is dropped, so an alias always
names the one line of the map it can mean. Exact names are matched before aliases by the
scorer (:mod:`maptab.score.map_score`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable

__all__ = ["chinese_number", "line_aliases", "line_key"]

_MODE = re.compile(r"^(?:metrorail|metro|subway)(?:\s+|(?=\d))|^(?:地铁|地鐵)\s*")
_LATIN = "line|linie|ligne|linea|linha|lijn|linje|linia"
_PREFIX = re.compile(rf"^(?:{_LATIN})(?:\s+|(?=\d))")
_SUFFIX = re.compile(rf"(?:(?<=\d)|\s+)(?:{_LATIN})$|\s*(?:号线|號線|號綫|线|線|綫|호선|선)$")
_LETTER_NUMBER = re.compile(r"^[lm]\s*([0-9]+)$")
_SEPARATORS = re.compile(r"[\s\-_·・]+")
_DIGITS = dict(zip("〇零一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_CHINESE = re.compile(
    r"^(?:([一二两三四五六七八九])?十([一二三四五六七八九])?|[〇零一二两三四五六七八九])$"
)


def chinese_number(text: str) -> int | None:
    """``text`` as a number when it is a Chinese numeral from 0 to 99, else ``None``."""
    m = _CHINESE.match(text)
    if m is None:
        return None
    if "十" not in text:
        return _DIGITS[text]
    tens, units = m.groups()
    return 10 * (_DIGITS[tens] if tens else 1) + (_DIGITS[units] if units else 0)


def _strip(pattern: re.Pattern[str], text: str) -> str:
    rest = pattern.sub("", text, count=1).strip()
    return rest or text


def line_key(name: str) -> str:
    """The comparison key of a line name (module docstring, steps 1-5)."""
    text = unicodedata.normalize("NFKD", name)
    text = unicodedata.normalize("NFC", "".join(c for c in text if not unicodedata.combining(c)))
    text = _SEPARATORS.sub(" ", text.casefold()).strip()
    text = _strip(_MODE, text)
    text = _strip(_PREFIX, text)
    text = _strip(_SUFFIX, text)
    m = _LETTER_NUMBER.match(text)
    if m is not None:
        text = m.group(1)
    number = chinese_number(text)
    if number is not None:
        text = str(number)
    elif text.isdecimal():
        text = str(int(text))
    return text.replace(" ", "")


def line_aliases(line_names: Iterable[str], key: Callable[[str], str] = line_key) -> dict[str, str]:
    """``{key: line}`` for every key that exactly one of ``line_names`` has (module docstring).

    >>> line_aliases(["Line 1", "M1", "Line 15", "房山线"])
    {'15': 'Line 15', '房山': '房山线'}
    """
    owners: dict[str, set[str]] = {}
    for line in line_names:
        owners.setdefault(key(line), set()).add(line)
    return {k: next(iter(lines)) for k, lines in owners.items() if len(lines) == 1}
