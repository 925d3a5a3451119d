"""Map styles: how close a render comes to a real, hard-to-read map.

``clean`` is the plain schematic, with none of the additions below. ``realistic``
(the ``paper`` preset) and ``hard`` add, deterministically from the map id:

* **label variants** — a share of the station labels (:attr:`Style.variant_share`, 20–40%) is
  drawn as a display variant of the table name (abbreviations such as ``Street`` → ``St``, a
  dropped or added station word, a dropped word, initials, changed punctuation or case), each
  at least :data:`MIN_VARIANT_SIMILARITY` similar to the table name under the paper's matching
  rule (:func:`maptab.core.matching.station_match`, the table name as reference). Prompts and gold answers keep the table names; a
  drawn label maps back to its station through its owner (``LabelBox.owner``);
* **bilingual labels** — on a share of the maps whose script can be romanised (Chinese by
  pinyin, Korean, Russian, Greek), a smaller second line under the station label;
* **size variation** — each station label's font size is scaled by a factor in
  :attr:`Style.size_jitter` (``hard`` metro maps use a fixed type hierarchy instead);
* **turned, diagonal and vertical labels** — a share of the labels is offered turned a
  quarter turn (level track), turned ±45°, or for CJK text set vertically, one glyph under
  another (:func:`label_orientations`); the placer falls back to a level label where the
  oriented one finds no free place clear of the lines (``hard`` metro maps turn none a
  quarter turn);
* **distractors** (:mod:`maptab.render.scenery`) — other lines in muted colours, water,
  parks, landmark pictograms, a street grid with street names, a compass and an inset map;
* **furniture** (``hard`` metro maps, :mod:`maptab.render.furniture`) — instead of the
  random sizes and the generic distractors: thick round-cornered lines in bundles, line
  badges at the termini, a title, a legend with each line's termini, ticks, pills and double
  rings, station icons, regional-rail and under-construction lines with their own stations;
* **distinguishable lines** — two line colours closer than ΔE 15 (CIE76) get different dash
  patterns or widths;
* **a canvas that grows with the system** — a metro map's canvas gives each station
  :data:`STATION_CANVAS_PX` square pixels (× a per-map draw of 0.85–1.2), shaped like the
  laid-out network, no side under :data:`MIN_SIDE_PX` and no more than
  :data:`MAX_CANVAS_PX` in all (:func:`target_size`); scenic maps are about 1,100 × 1,350 px
  (each side within ±10%), with textured backgrounds.
"""

from __future__ import annotations

import math
import random
import re
import zlib
from dataclasses import dataclass

from maptab.core.matching import MATCH_THRESHOLD, station_match
from maptab.core.network import Network
from maptab.errors import MaptabError
from maptab.render.text import TextBlock, can_stack, oriented

STYLE_NAMES = ("clean", "realistic", "hard")
MIN_VARIANT_SIMILARITY = MATCH_THRESHOLD
MIN_DELTA_E = 15.0

#: Paper averages (MapTab, section 3): metro ≈ 4,140 × 3,744 px; scenic ≈ 1,100 × 1,350 px.
#: Scenic maps keep this size; metro maps scale with their station count (:func:`target_size`).
TARGET_SIZE = {"metromap": (4100.0, 3700.0), "travelmap": (1100.0, 1350.0)}
#: canvas square pixels per station of a styled metro map (real maps: about 20,000–500,000;
#: 100 stations come out near 3,300 × 3,300 px)
STATION_CANVAS_PX = 110_000.0
#: the shorter side of a styled metro map, at least
MIN_SIDE_PX = 1_000.0
#: a styled metro map's canvas, at most (px²; under the renderer's 64 Mpx limit)
MAX_CANVAS_PX = 40_000_000.0


class StyleError(MaptabError):
    """An unknown map style name."""


@dataclass(frozen=True, slots=True)
class Style:
    """The knobs of one style (module docstring)."""

    name: str
    variant_share: tuple[float, float] = (0.0, 0.0)
    bilingual_share: float = 0.0
    size_jitter: tuple[float, float] = (1.0, 1.0)
    turned_share: float = 0.0  # labels on level track drawn a quarter turn (non-CJK labels)
    vertical_share: float = 0.0  # CJK labels set vertically, one glyph under another
    diagonal_share: float = 0.0  # labels turned ±45° (any script)
    scenery: float = 0.0  # 0 = none, 1 = realistic amount, >1 = more
    paper_size: bool = False
    texture: bool = False
    distinct_lines: bool = False
    furniture: bool = False  # metro maps: real-map furniture (maptab.render.furniture)

    @property
    def plain(self) -> bool:
        return self.name == "clean"


STYLES: dict[str, Style] = {
    "clean": Style("clean"),
    "realistic": Style(
        "realistic",
        variant_share=(0.2, 0.4),
        bilingual_share=0.8,
        size_jitter=(0.8, 1.2),
        turned_share=0.1,
        vertical_share=0.15,
        diagonal_share=0.08,
        scenery=1.0,
        paper_size=True,
        texture=True,
        distinct_lines=True,
    ),
    "hard": Style(
        "hard",
        variant_share=(0.35, 0.4),
        bilingual_share=1.0,
        size_jitter=(0.65, 1.25),
        turned_share=0.25,
        vertical_share=0.3,
        diagonal_share=0.15,
        scenery=2.0,
        paper_size=True,
        texture=True,
        distinct_lines=True,
        furniture=True,
    ),
}


CLEAN = STYLES["clean"]


def get_style(name: str | None) -> Style:
    """The :class:`Style` called ``name`` (``None`` → clean); unknown names are an error."""
    key = (name or "clean").strip().lower()
    if key not in STYLES:
        raise StyleError(f"unknown map style {name!r}; expected one of {', '.join(STYLE_NAMES)}")
    return STYLES[key]


def style_of(network: Network, name: str | None = None) -> Style:
    """``name`` when given, else ``network.meta["render_style"]``, else clean."""
    return get_style(name if name is not None else network.meta.get("render_style"))  # type: ignore[arg-type]


def rng_for(network: Network, purpose: str) -> random.Random:
    """A generator seeded by the map id, its first stations and ``purpose``: the same map
    draws the same way every time."""
    seed = zlib.crc32(f"{network.map_id}|{list(network.vertices)[:3]}|{purpose}".encode())
    return random.Random(seed)


def unit(network: Network, purpose: str) -> float:
    """A deterministic number in [0, 1) for this map and ``purpose``."""
    return float(rng_for(network, purpose).random())


# ------------------------------------------------------------------------- label variants


#: Word → its abbreviation on maps (either direction is a variant).
ABBREVIATIONS: dict[str, str] = {
    "street": "St",
    "avenue": "Ave",
    "road": "Rd",
    "boulevard": "Blvd",
    "square": "Sq",
    "saint": "St.",
    "north": "N.",
    "south": "S.",
    "east": "E.",
    "west": "W.",
    "mount": "Mt",
    "park": "Pk",
    "place": "Pl.",
    "international": "Int'l",
    "airport": "Apt",
    "center": "Ctr",
    "centre": "Ctr",
    "platz": "Pl.",
    "straße": "Str.",
    "strasse": "Str.",
    "allee": "Al.",
    "avenida": "Av.",
    "calle": "C/",
    "plaza": "Pza.",
    "rue": "R.",
    "boulevard,": "Bd",
    "улица": "ул.",
    "площадь": "пл.",
    "проспект": "пр-т",
    "переулок": "пер.",
    "шоссе": "ш.",
}
STATION_WORDS = {"zh": "站", "ja": "駅", "ko": "역", "ru": "станция", "th": "สถานี"}
_WORD = re.compile(r"\S+")


def _variants(name: str, lang: str | None) -> list[str]:
    """Candidate display variants of ``name``, most map-like first."""
    out: list[str] = []
    words = name.replace("_", " ").split()
    low = [w.casefold().strip(".,") for w in words]
    abbreviated = [ABBREVIATIONS.get(w) for w in low]
    if any(abbreviated):
        out.append(" ".join(a or w for a, w in zip(abbreviated, words, strict=True)))
    if "_" in name or "-" in name:
        out.append(re.sub(r"\s*[_-]\s*", " - ", name))
        out.append(re.sub(r"[_-]", " ", name))
    word = STATION_WORDS.get(lang or "")
    if word:
        if name.endswith(word) and len(name) > len(word) + 1:
            out.append(name[: -len(word)])
        elif lang in ("zh", "ja", "ko"):
            out.append(name + word)
        else:
            out.append(f"{word} {name}" if lang == "th" else f"{name} {word}")
    if len(words) >= 2:
        out.append(" ".join(words[:-1]))
        out.append(" ".join(words[1:]))
        out.append(words[0][0] + ". " + " ".join(words[1:]))
    if lang in ("zh", "ja") and len(name) >= 4:
        out.append(name[:-1])
    if name.upper() != name:
        out.append(name.upper())
    return out


def label_variant(name: str, lang: str | None) -> str | None:
    """The first variant of ``name`` that differs from it and stays ≥ 0.5 similar under the
    papers' rule; ``None`` when there is none."""
    for v in _variants(name, lang):
        v = re.sub(r"\s+", " ", v).strip()
        if v and v != name and station_match(name, v):
            return v
    return None


def station_texts(network: Network, style: Style) -> dict[str, str]:
    """The text drawn for each station: its display name, or for the chosen 20–40% of stations
    (by a per-map draw) a variant (:func:`label_variant`). Deterministic per map."""
    texts = {s: network.label(s) for s in network.vertices}
    lo, hi = style.variant_share
    if hi <= 0 or not texts:
        return texts
    lang = str(network.meta.get("language") or "") or None
    share = lo + (hi - lo) * unit(network, "variant-share")
    want = round(share * len(texts))
    order = rng_for(network, "variant-order").sample(range(len(texts)), len(texts))
    names = list(texts)
    done = 0
    for i in order:
        if done >= want:
            break
        s = names[i]
        v = label_variant(texts[s], lang)
        if v is not None and station_match(s, v):
            texts[s] = v
            done += 1
    return texts


def size_factors(network: Network, style: Style) -> dict[str, float]:
    """A font-size factor per station from :attr:`Style.size_jitter`: transfer stations get the
    top of the range, others one of four levels drawn per station (few distinct sizes, as on
    printed maps, which also keeps font loading cheap)."""
    lo, hi = style.size_jitter
    if lo == hi:
        return dict.fromkeys(network.vertices, lo)
    levels = [lo + (hi - lo) * i / 4 for i in range(4)]
    rng = rng_for(network, "size")
    return {
        s: hi if v.is_transfer else levels[rng.randrange(4)] for s, v in network.vertices.items()
    }


#: how a label may be drawn other than level (:func:`label_orientations`)
TURN, STACK, DIAG_UP, DIAG_DOWN = "turn", "stack", "diag+45", "diag-45"


def label_orientations(
    network: Network, style: Style, texts: dict[str, str] | None = None
) -> dict[str, str]:
    """Stations whose label is offered turned, stacked or diagonal (a per-station draw).

    A label of 2–8 CJK characters (:func:`maptab.render.text.can_stack`) is set vertically
    with probability :attr:`Style.vertical_share`; any other label is turned a quarter turn
    with :attr:`Style.turned_share` (the renderer uses it only on level track). Then any label
    is turned ±45° with :attr:`Style.diagonal_share`. The renderer falls back to a level
    label where the oriented one finds no free place.
    """
    if style.turned_share <= 0 and style.vertical_share <= 0 and style.diagonal_share <= 0:
        return {}
    texts = texts if texts is not None else {s: network.label(s) for s in network.vertices}
    rng = rng_for(network, "orientation")
    out: dict[str, str] = {}
    for s in network.vertices:
        r, up = rng.random(), rng.random() < 0.5
        stack = can_stack(texts[s])
        first = style.vertical_share if stack else style.turned_share
        if r < first:
            out[s] = STACK if stack else TURN
        elif r < first + style.diagonal_share:
            out[s] = DIAG_UP if up else DIAG_DOWN
    return out


def orient_block(block: TextBlock, orient: str | None, *, level: bool) -> TextBlock | None:
    """``block`` as ``orient`` draws it (a quarter turn only when ``level``), else ``None``."""
    if orient == STACK:
        return oriented(block, vertical=True)
    if orient == TURN and level:
        return oriented(block, angle=90)
    if orient in (DIAG_UP, DIAG_DOWN):
        return oriented(block, angle=45 if orient == DIAG_UP else -45)
    return None


# ------------------------------------------------------------------------- bilingual labels

_CYR_LETTERS = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
_CYR_LATIN = [
    "a",
    "b",
    "v",
    "g",
    "d",
    "e",
    "yo",
    "zh",
    "z",
    "i",
    "y",
    "k",
    "l",
    "m",
    "n",
    "o",
    "p",
    "r",
    "s",
    "t",
    "u",
    "f",
    "kh",
    "ts",
    "ch",
    "sh",
    "shch",
    "-",
    "y",
    "-",
    "e",
    "yu",
    "ya",
]
_CYR = {c: ("" if t == "-" else t) for c, t in zip(_CYR_LETTERS, _CYR_LATIN, strict=True)}
_CYR.update({"і": "i", "ї": "yi", "є": "ye", "ґ": "g"})  # Ukrainian letters
_GREEK = dict(
    zip(
        "αβγδεζηθικλμνξοπρσςτυφχψω",
        [
            "a",
            "b",
            "g",
            "d",
            "e",
            "z",
            "i",
            "th",
            "i",
            "k",
            "l",
            "m",
            "n",
            "x",
            "o",
            "p",
            "r",
            "s",
            "s",
            "t",
            "y",
            "f",
            "ch",
            "ps",
            "o",
        ],
        strict=True,
    )
)
_HANGUL_L = [
    "g",
    "kk",
    "n",
    "d",
    "tt",
    "r",
    "m",
    "b",
    "pp",
    "s",
    "ss",
    "-",
    "j",
    "jj",
    "ch",
    "k",
    "t",
    "p",
    "h",
]
_HANGUL_V = [
    "a",
    "ae",
    "ya",
    "yae",
    "eo",
    "e",
    "yeo",
    "ye",
    "o",
    "wa",
    "wae",
    "oe",
    "yo",
    "u",
    "wo",
    "we",
    "wi",
    "yu",
    "eu",
    "ui",
    "i",
]
_HANGUL_T = [
    "",
    "k",
    "k",
    "k",
    "n",
    "n",
    "n",
    "t",
    "l",
    "k",
    "m",
    "l",
    "l",
    "l",
    "p",
    "l",
    "m",
    "p",
    "p",
    "t",
    "t",
    "ng",
    "t",
    "t",
    "k",
    "t",
    "p",
    "t",
]


def _romanise_hangul(text: str) -> str:
    out = []
    for ch in text:
        cp = ord(ch) - 0xAC00
        if 0 <= cp < 11172:
            lead, vowel, tail = cp // 588, (cp % 588) // 28, cp % 28
            out.append(_HANGUL_L[lead].strip("-") + _HANGUL_V[vowel] + _HANGUL_T[tail])
        else:
            out.append(ch)
    return "".join(out)


def _table_translit(text: str, table: dict[str, str]) -> str:
    out = []
    for ch in text:
        low = ch.lower()
        if low in table:
            t = table[low]
            out.append(t.capitalize() if ch != low else t)
        else:
            out.append(ch)
    return "".join(out)


def romanise(text: str, lang: str | None) -> str | None:
    """A Latin second line for ``text`` (pinyin, Revised Romanisation, transliteration), or
    ``None`` when the language has no romaniser here."""
    if lang == "zh":
        from pypinyin import lazy_pinyin

        syllables = lazy_pinyin(text.removesuffix("站"))
        return "".join(syllables).capitalize() if syllables else None
    if lang == "ko":
        return _romanise_hangul(text.removesuffix("역")).capitalize()
    if lang in ("ru", "uk"):
        return _table_translit(text, _CYR)
    if lang == "el":
        return _table_translit(text, _GREEK)
    return None


#: Languages :func:`romanise` can give a second line for.
ROMANISED = ("zh", "ko", "ru", "uk", "el")


def bilingual(network: Network, style: Style) -> bool:
    """Whether this map gets second-language labels (a per-map draw among romanisable maps)."""
    lang = str(network.meta.get("language") or "") or None
    if style.bilingual_share <= 0 or lang not in ROMANISED:
        return False
    return unit(network, "bilingual") < style.bilingual_share


# ------------------------------------------------------------------------- line colours


def _lab(hex_color: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB ``#rrggbb`` colour."""
    rgb = [int(hex_color.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def delta_e(a: str, b: str) -> float:
    """CIE76 colour difference of two ``#rrggbb`` colours."""
    la, lb = _lab(a), _lab(b)
    return sum((p - q) ** 2 for p, q in zip(la, lb, strict=True)) ** 0.5


#: Stroke looks tried in order for a line whose colour is too close to an earlier line's:
#: (dash as multiples of the line width or None, width factor)
LOOKS: tuple[tuple[tuple[float, float] | None, float], ...] = (
    (None, 1.0),
    ((2.6, 1.3), 1.0),
    (None, 0.55),
    ((0.9, 0.9), 1.0),
    ((2.6, 1.3), 0.55),
    ((5.0, 1.2), 1.0),
)


def line_looks(colors: dict[str, str]) -> dict[str, tuple[tuple[float, float] | None, float]]:
    """A (dash, width factor) per line so that any two lines with ΔE < 15 differ in look."""
    out: dict[str, tuple[tuple[float, float] | None, float]] = {}
    for line, c in colors.items():
        close = {out[o] for o in out if delta_e(c, colors[o]) < MIN_DELTA_E}
        out[line] = next((look for look in LOOKS if look not in close), LOOKS[0])
    return out


def indistinct_pairs(
    colors: dict[str, str], looks: dict[str, tuple[tuple[float, float] | None, float]]
) -> list[tuple[str, str]]:
    """Line pairs with ΔE < 15 and the same look (what :func:`line_looks` must avoid)."""
    names = list(colors)
    return [
        (a, b)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if delta_e(colors[a], colors[b]) < MIN_DELTA_E and looks[a] == looks[b]
    ]


def target_size(network: Network) -> tuple[float, float]:
    """The image size of a styled map. Scenic maps: the papers' average, each side ±10%.
    Metro maps: ``stations × STATION_CANVAS_PX × f`` square pixels (``f`` a per-map draw in
    0.85–1.2), shaped like the network's positions (width / height clamped to 0.65–1.55),
    grown until the shorter side is ``MIN_SIDE_PX`` and shrunk to ``MAX_CANVAS_PX`` at most."""
    rng = rng_for(network, "size-target")
    if network.scenario != "metromap":
        w, h = TARGET_SIZE[network.scenario]
        return w * rng.uniform(0.9, 1.1), h * rng.uniform(0.9, 1.1)
    area = len(network.vertices) * STATION_CANVAS_PX * rng.uniform(0.85, 1.2)
    aspect = _aspect(network)
    w, h = math.sqrt(area * aspect), math.sqrt(area / aspect)
    grow = max(1.0, MIN_SIDE_PX / min(w, h))
    w, h = w * grow, h * grow
    shrink = min(1.0, math.sqrt(MAX_CANVAS_PX / (w * h)))
    return w * shrink, h * shrink


def _aspect(network: Network) -> float:
    """Width / height of the network's positions (1.1 without positions), within 0.65–1.55."""
    pos = network.positions or {}
    pts = [pos[s] for s in network.vertices if s in pos]
    if len(pts) < 2 or len(pts) < len(network.vertices):
        return 1.1
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
    w, h = max(max(xs) - min(xs), span * 0.1), max(max(ys) - min(ys), span * 0.1)
    return min(1.55, max(0.65, w / h))
