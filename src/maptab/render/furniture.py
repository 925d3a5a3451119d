"""What makes a real metro map hard to read, for the ``hard`` style (SPEC 15).

Real maps are not hard because of random type sizes: they are dense. Their lines are thick and
run as bundles on shared track, with round corners; each line carries a badge (its name in a
coloured box or roundel) at every terminus; a title and a legend listing each line with its
termini sit beside the network; stations are ticks, pills across a bundle, rings or double
rings; icons (airport, rail, parking) stand next to some station names; and other lines that
are not part of the metro (regional rail, lines under construction) cross the map with their
own station names. The type follows one hierarchy: title > line badges > interchange labels >
station labels, bold where it matters.

This module holds the pieces the renderer places (:mod:`maptab.render.metro`) and paints
(:mod:`maptab.render.draw`):

* :class:`Styled` labels (a weight, a colour, an optional filled box or roundel);
* :class:`TickMark` and :class:`PillMark` station marks (``double`` rings are a plain
  :class:`~maptab.render.geometry.StationMark` style);
* :func:`rounded` corners, :func:`badge_code` and :func:`place_badges` for line badges,
  :func:`termini` and the language's furniture texts (:func:`words`);
* :func:`distractor_names`: names for stations of lines that are not in the tables, none of
  which matches a table station's name under the papers' rule
  (:func:`maptab.core.matching.station_match`) or reads like one to the OCR meter.

Every choice is drawn from generators seeded by the map id, so a map always comes out the same.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from maptab.core.matching import station_match
from maptab.core.network import Network
from maptab.render.fonts import primary_script
from maptab.render.geometry import Box, LabelBox, PlacedGeometry, Point, Shape, StationMark
from maptab.render.labels import Placer
from maptab.render.ocr import normalise, ratio_at_least
from maptab.render.style import rng_for
from maptab.render.text import TextBlock, TextRun, measure

#: line width of a ``hard`` map, as a multiple of the clean line width
LINE_FACTOR = 1.45
#: gap between the centres of two lines of a bundle, as a multiple of the line width
BUNDLE_SPACING = 1.08
#: how much longer than on a clean map an edge may grow to make room for crowded labels
LONGEST_EDGE = 1.8
#: corner radius of a line bend, as a multiple of the line width (less where segments are short)
CORNER = 3.0
#: type sizes as multiples of the station label size (the hierarchy of the module docstring)
TITLE_SIZE, BADGE_SIZE, INTERCHANGE_SIZE, LEGEND_SIZE = 3.0, 1.3, 1.2, 1.1
SUBTITLE_SIZE, TERMINI_SIZE, OTHER_STATION_SIZE = 1.15, 0.95, 0.9
#: made-up names :func:`distractor_names` tries per name wanted, at most; batches of the
#: generator's station names for a language without a town-name recipe
NAME_TRIES, NAME_BATCHES = 30, 8
#: fill of the legend's panel (the shapes before it in ``placed.scenery`` lie under it)
PANEL = "#FEFEFE"
#: text colours
INK, OTHER_INK, PLANNED_INK = "#111111", "#3A3A3A", "#5A5A5A"


@dataclass(slots=True)
class Styled(LabelBox):
    """A label with a weight and colours: ``bold`` px of faux-bold stroke (the block already
    reserves it, :func:`embolden`), text ``color``, and for a badge a ``fill`` drawn as its
    whole box, rounded (a roundel or capsule when ``round``), the text centred in it."""

    bold: float = 0.0
    color: str = INK
    fill: str | None = None
    round: bool = False


@dataclass(slots=True)
class TickMark(StationMark):
    """A one-line station: a tick of the line's colour, ``outline`` px wide, from the line's
    centre ``radius`` px along ``normal`` (a unit vector, towards the station's label)."""

    normal: Point = (0.0, -1.0)


@dataclass(slots=True)
class PillMark(StationMark):
    """An interchange on a bundle of parallel lines: a white capsule ``2 × radius`` thick
    across the bundle, its end centres ``half`` px from the centre along ``axis``."""

    axis: Point = (1.0, 0.0)
    half: float = 0.0

    @property
    def box(self) -> Box:
        r = self.radius + self.outline / 2
        dx, dy = abs(self.axis[0]) * self.half, abs(self.axis[1]) * self.half
        x, y = self.center
        return Box(x - dx - r, y - dy - r, x + dx + r, y + dy + r)


def embolden(block: TextBlock, px: float) -> TextBlock:
    """``block`` with room for a ``px``-wide faux-bold stroke on every side (runs shifted)."""
    if px <= 0:
        return block
    runs = tuple(TextRun(r.text, r.face, r.dx + px) for r in block.runs)
    return replace(
        block,
        runs=runs,
        width=block.width + 2 * px,
        ascent=block.ascent + px,
        descent=block.descent + px,
    )


def bold_px(size: int) -> float:
    """The faux-bold stroke width for a ``size``-px label."""
    return float(max(1, round(size / 30)))


def bold_block(text: str, size: int, lang: str | None) -> TextBlock:
    """``text`` measured at ``size`` px with room for its bold stroke."""
    return embolden(measure(text, size, lang), bold_px(size))


# ------------------------------------------------------------------------------ geometry


def rounded(points: Sequence[Point], radius: float, steps: int = 6) -> list[Point]:
    """The polyline with each inner corner replaced by a circular arc of ``radius`` px (less
    where a neighbouring segment is short); ends stay where they are."""
    pts = list(points)
    if len(pts) < 3 or radius <= 0:
        return pts
    out: list[Point] = [pts[0]]
    for i in range(1, len(pts) - 1):
        a, b, c = pts[i - 1], pts[i], pts[i + 1]
        ux, uy = a[0] - b[0], a[1] - b[1]
        vx, vy = c[0] - b[0], c[1] - b[1]
        la, lc = math.hypot(ux, uy), math.hypot(vx, vy)
        if la < 1e-9 or lc < 1e-9:
            out.append(b)
            continue
        ux, uy, vx, vy = ux / la, uy / la, vx / lc, vy / lc
        turn = math.pi - math.acos(max(-1.0, min(1.0, ux * vx + uy * vy)))
        if turn < 1e-3:
            out.append(b)
            continue
        tan_half = math.tan(turn / 2)
        cut = min(radius * tan_half, la / 2, lc / 2)
        r = cut / tan_half
        p0 = (b[0] + ux * cut, b[1] + uy * cut)
        p1 = (b[0] + vx * cut, b[1] + vy * cut)
        bx, by = ux + vx, uy + vy
        norm = math.hypot(bx, by) or 1.0
        d = math.hypot(r, cut)
        cx, cy = b[0] + bx / norm * d, b[1] + by / norm * d
        t0 = math.atan2(p0[1] - cy, p0[0] - cx)
        t1 = math.atan2(p1[1] - cy, p1[0] - cx)
        sweep = (t1 - t0 + math.pi) % (2 * math.pi) - math.pi
        out.append(p0)
        for k in range(1, steps):
            t = t0 + sweep * k / steps
            out.append((cx + r * math.cos(t), cy + r * math.sin(t)))
        out.append(p1)
    out.append(pts[-1])
    return out


def unit(dx: float, dy: float) -> Point:
    n = math.hypot(dx, dy)
    return (dx / n, dy / n) if n > 1e-9 else (0.0, 0.0)


def leaving(path: Sequence[Point], at_start: bool) -> Point:
    """Unit direction in which ``path`` leaves its first (else last) point."""
    a, b = (path[0], path[1]) if at_start else (path[-1], path[-2])
    return unit(b[0] - a[0], b[1] - a[1])


def axis_key(d: Point) -> int:
    """The direction ``d`` as one of four track axes (0°, 45°, 90°, 135°)."""
    return round(math.degrees(math.atan2(d[1], d[0])) / 45.0) % 4


# ------------------------------------------------------------------------------ words

#: per language: title, subtitle, and the legend key's words
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Metro System Map",
        "subtitle": "Rapid transit network · not to scale",
        "interchange": "Interchange",
        "station": "Station",
        "regional": "Regional rail",
        "planned": "Under construction",
        "legend": "Lines",
    },
    "de": {
        "title": "Schnellbahnnetz",
        "subtitle": "U-Bahn und S-Bahn · nicht maßstäblich",
        "interchange": "Umsteigebahnhof",
        "station": "Bahnhof",
        "regional": "Regionalbahn",
        "planned": "In Bau",
        "legend": "Linien",
    },
    "fr": {
        "title": "Plan du réseau métro",
        "subtitle": "Réseau de transport · plan schématique",
        "interchange": "Correspondance",
        "station": "Station",
        "regional": "Train régional",
        "planned": "En construction",
        "legend": "Lignes",
    },
    "es": {
        "title": "Plano de la red de metro",
        "subtitle": "Red de transporte · esquema sin escala",
        "interchange": "Correspondencia",
        "station": "Estación",
        "regional": "Cercanías",
        "planned": "En construcción",
        "legend": "Líneas",
    },
    "it": {
        "title": "Mappa della metropolitana",
        "subtitle": "Rete di trasporto · schema non in scala",
        "interchange": "Interscambio",
        "station": "Stazione",
        "regional": "Treno regionale",
        "planned": "In costruzione",
        "legend": "Linee",
    },
    "pt": {
        "title": "Mapa da rede de metro",
        "subtitle": "Rede de transportes · esquema sem escala",
        "interchange": "Correspondência",
        "station": "Estação",
        "regional": "Comboio regional",
        "planned": "Em construção",
        "legend": "Linhas",
    },
    "nl": {
        "title": "Metronetkaart",
        "subtitle": "Openbaar vervoer · niet op schaal",
        "interchange": "Overstapstation",
        "station": "Station",
        "regional": "Regionale trein",
        "planned": "In aanbouw",
        "legend": "Lijnen",
    },
    "zh": {
        "title": "轨道交通线网图",
        "subtitle": "Rail Transit Network Map",
        "interchange": "换乘站",
        "station": "车站",
        "regional": "市域铁路",
        "planned": "在建线路",
        "legend": "线路",
    },
    "zh-tw": {
        "title": "捷運路網圖",
        "subtitle": "Metro Network Map",
        "interchange": "轉乘站",
        "station": "車站",
        "regional": "區域鐵路",
        "planned": "興建中",
        "legend": "路線",
    },
    "ja": {
        "title": "地下鉄路線図",
        "subtitle": "Subway Route Map",
        "interchange": "乗換駅",
        "station": "駅",
        "regional": "JR線",
        "planned": "建設中",
        "legend": "路線",
    },
    "ko": {
        "title": "지하철 노선도",
        "subtitle": "Subway Route Map",
        "interchange": "환승역",
        "station": "역",
        "regional": "광역철도",
        "planned": "공사 중",
        "legend": "노선",
    },
    "ru": {
        "title": "Схема линий метро",
        "subtitle": "Metro map",
        "interchange": "Пересадка",
        "station": "Станция",
        "regional": "Пригородные поезда",
        "planned": "Строится",
        "legend": "Линии",
    },
}


#: the language a map's furniture is written in, by the main script of its station names
SCRIPT_LANGUAGES = {
    "zh": "zh", "zh-tw": "zh-tw", "ja": "ja", "ko": "ko", "cyrillic": "ru", "greek": "el",
    "arabic": "ar", "hebrew": "he", "thai": "th", "devanagari": "hi",
}  # fmt: skip


def language(network: Network) -> str:
    """``meta["language"]``, else the language of the script most station names are written
    in (Han → ``zh``, kana → ``ja``, Hangul → ``ko``, Cyrillic → ``ru``, …; Latin → ``en``)."""
    lang = network.meta.get("language")
    if lang:
        return str(lang)
    counts: dict[str, int] = {}
    for s in network.vertices:
        script = primary_script(network.label(s))
        counts[script] = counts.get(script, 0) + 1
    top = max(counts, key=lambda k: (counts[k], k), default="latin")
    return SCRIPT_LANGUAGES.get(top, "en")


def words(lang: str | None) -> dict[str, str]:
    """The furniture texts of the map's language (English where there are none)."""
    return WORDS.get(lang or "en", WORDS["en"])


_NUMBER = re.compile(r"\d+[A-Za-z]?")


def badge_code(line: str) -> str:
    """What a line badge shows: the line's number (``Line 3`` → ``3``, ``3号线`` → ``3``),
    else the initials of its words (``Red Line`` → ``RL``), else its first two letters
    (``Azul`` → ``AZ``)."""
    m = _NUMBER.search(line)
    if m:
        return m.group(0)
    initials = "".join(w[0] for w in line.split() if w[:1].isalnum())
    return initials.upper()[:3] if len(initials) >= 2 else line.strip()[:2].upper()


def badge_codes(lines: Iterable[str]) -> dict[str, str]:
    """A distinct badge text per line (:func:`badge_code`, the full name where two clash)."""
    lines = list(lines)
    codes = {line: badge_code(line) for line in lines}
    seen: dict[str, int] = {}
    for c in codes.values():
        seen[c] = seen.get(c, 0) + 1
    return {line: (c if seen[c] == 1 else line) for line, c in codes.items()}


def termini(network: Network, line: str) -> list[str]:
    """The stations where ``line`` ends (one neighbour on the line), in line order; none for
    a loop."""
    degree: dict[str, int] = {}
    for e in network.line_edges(line):
        for s in (e.u, e.v):
            degree[s] = degree.get(s, 0) + 1
    return [s for s in degree if degree[s] == 1]


# ------------------------------------------------------------------------------ badges


def badge(code: str, color: str, size: int, lang: str | None, center: Point, owner: str) -> Styled:
    """A line badge: ``code`` in bold white on ``color``, a roundel for up to two characters,
    else a rounded box, centred on ``center``."""
    block = bold_block(code, size, lang)
    inset = size * 0.28
    w, h = block.width + 2 * inset, block.height + 2 * inset
    roundel = len(code) <= 2
    if roundel:
        w = h = max(w, h)
    box = Box(center[0] - w / 2, center[1] - h / 2, center[0] + w / 2, center[1] + h / 2)
    return Styled(
        owner,
        block,
        box,
        "badge",
        bold=bold_px(size),
        color="#FFFFFF",
        fill=color,
        round=roundel,
    )


def place_badges(
    placed: PlacedGeometry,
    placer: Placer,
    network: Network,
    colors: dict[str, str],
    size: int,
    lang: str | None,
) -> int:
    """A badge at each terminus of each line (:func:`badge`), beyond the line's end where that
    is free, else beside the terminus; a terminus with no free place gets none. Returns how
    many were placed (each joins ``placed.annotations`` and the placer)."""
    codes = badge_codes(network.line_names)
    n = 0
    for line in network.line_names:
        for s in termini(network, line):
            mark = placed.stations[s]
            path = _end_path(placed, network, line, s)
            if path is None:
                continue
            back = leaving(path, at_start=True)  # towards the line's inside
            out = (-back[0], -back[1])
            side = (-out[1], out[0])
            probe = badge(codes[line], colors[line], size, lang, (0.0, 0.0), "")
            half = max(probe.box.x1 - probe.box.x0, probe.box.y1 - probe.box.y0) / 2
            reach = max(mark.box.x1 - mark.center[0], mark.box.y1 - mark.center[1])
            options = []
            for d in (out, _mix(out, side), _mix(out, (-side[0], -side[1])), side):
                for f in (1.0, 1.6):
                    gap = reach + half * f + placer.pad * 2
                    options.append((mark.center[0] + d[0] * gap, mark.center[1] + d[1] * gap))
            for center in options:
                b = badge(codes[line], colors[line], size, lang, center, f"badge:{line}:{s}")
                if placer.is_free(b.box) and placer.line_hits(b.box) == 0:
                    placer.block(b.box.inflate(placer.pad), ("badge", b.owner))
                    placed.annotations[b.owner] = b
                    n += 1
                    break
    return n


def _mix(a: Point, b: Point) -> Point:
    return unit(a[0] + b[0], a[1] + b[1])


def _end_path(placed: PlacedGeometry, network: Network, line: str, s: str) -> list[Point] | None:
    """The centre path of ``line``'s one edge at terminus ``s``, starting at ``s``."""
    for e in network.line_edges(line):
        if s in (e.u, e.v):
            other = e.v if e.u == s else e.u
            key = (s, other) if s <= other else (other, s)
            path = placed.edge_paths.get(key)
            if path is None or len(path) < 2:
                return None
            return list(path) if key[0] == s else list(path)[::-1]
    return None


# ------------------------------------------------------------------------------ names


#: syllables and endings of made-up town names, per language (regional stops are towns)
_LATIN_ONSETS = ("b", "br", "d", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "r", "s", "st",
                 "t", "tr", "v", "w", "z")  # fmt: skip
_LATIN_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o")
TOWN_ENDINGS: dict[str, tuple[str, ...]] = {
    "en": ("ton", "ford", "field", "bury", "ham", "wick", "ley", "worth", "stead", "mouth"),
    "de": ("dorf", "hausen", "heim", "feld", "bach", "berg", "stadt", "au", "ingen", "rode"),
    "fr": ("ville", "court", "bourg", "mont", "ac", "ières", "val", "champ", "ois", "euil"),
    "es": ("illa", "ejo", "ares", "ón", "uela", "al", "edo", "ena", "ique", "ato"),
    "it": ("ano", "ello", "ina", "ate", "one", "ago", "asco", "engo", "ola", "ino"),
    "pt": ("inha", "ela", "ães", "ais", "eira", "oso", "ada", "elo", "im", "ão"),
    "nl": ("dam", "dijk", "veen", "hoven", "burg", "rode", "wijk", "zande", "loo", "horst"),
    "pl": ("ów", "ice", "owo", "no", "sk", "ki", "in", "ec", "awa", "iny"),
    "cs": ("ov", "ice", "any", "ín", "ec", "ná", "ovo", "ky", "ště", "ník"),
    "hu": ("falva", "háza", "egyháza", "telek", "szeg", "vár", "halom", "kút", "hely", "lak"),
    "id": ("jaya", "sari", "rejo", "mulya", "harjo", "wangi", "agung", "asih", "makmur", "indah"),
}
_CYR_ONSETS = ("б", "в", "г", "д", "ж", "з", "к", "л", "м", "н", "п", "р", "с", "т", "ч")
_CYR_VOWELS = ("а", "е", "и", "о", "у", "я")
_CYR_ENDINGS = ("ово", "ево", "ино", "ск", "овка", "ное", "цы", "ище", "градск", "ичи")
_HAN = "东西南北新老桥湖山河塘庄口湾港坪岭溪洲泉田营屯寨坝林石沙城关镇头堡岗埠渡集铺"
_KANJI = "東西南北新大小川山田島原野沢谷崎浜宮森岡橋本井坂松石浦戸"
_HANGUL = "가나다마바사아자하동산천포원곡리성평양주남북서문"


def town_name(lang: str, rng: random.Random) -> str | None:
    """A made-up town name in ``lang`` (two syllables and a local ending, or two to three
    Han characters, kanji or Hangul syllables); ``None`` for a language without a recipe."""
    if lang in TOWN_ENDINGS:
        return _town(_LATIN_ONSETS, _LATIN_VOWELS, TOWN_ENDINGS[lang], rng)
    if lang in ("ru", "uk"):
        return _town(_CYR_ONSETS, _CYR_VOWELS, _CYR_ENDINGS, rng)
    chars = {"zh": _HAN, "zh-tw": _HAN, "ja": _KANJI, "ko": _HANGUL}.get(lang)
    if chars is None:
        return None
    return "".join(rng.choice(chars) for _ in range(rng.choice((2, 2, 3))))


def _town(
    onsets: Sequence[str], vowels: Sequence[str], endings: Sequence[str], rng: random.Random
) -> str:
    """Two syllables and an ending (the stem's last vowel dropped before a vowel)."""
    stem = "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(2))
    ending = rng.choice(endings)
    if ending[0] in "aeiouyäöüéèàáíóúãâêôõåæøаеёиоуыэюя":
        stem = stem[:-1]
    return (stem + ending).capitalize()


def distractor_names(
    network: Network, count: int, purpose: str, texts: Iterable[str] = ()
) -> list[str]:
    """``count`` (or fewer) station names in the map's language for lines that are not in the
    tables: made-up town names (:func:`town_name`; the generator's station names for a language
    without a recipe), each differing from every table name, display name and drawn text under
    the papers' rule (either way round), reading under 0.6 like any of them to the OCR meter,
    and containing none of them (:func:`is_distinct`)."""
    if count <= 0:
        return []
    lang = language(network)
    taken = [*network.vertices, *(network.label(s) for s in network.vertices), *texts]
    taken = list(dict.fromkeys(t for t in taken if t))
    flat = [normalise(t) for t in taken]
    rng = rng_for(network, f"names-{purpose}")
    out: list[str] = []
    seen: set[str] = set()
    for name in _candidates(network, lang, count, rng, taken):
        if normalise(name) not in seen and is_distinct(name, taken, flat):
            out.append(name)
            seen.add(normalise(name))
            if len(out) == count:
                break
    return out


def _candidates(
    network: Network, lang: str, count: int, rng: random.Random, taken: list[str]
) -> Iterable[str]:
    """Candidate names for :func:`distractor_names`: up to ``NAME_TRIES × count`` of them."""
    if town_name(lang, random.Random(0)) is not None:
        for _ in range(NAME_TRIES * max(count, 4)):
            name = town_name(lang, rng)
            if name:
                yield name
        return
    from maptab.generate.names import LANGUAGES, station_names

    lang = lang if lang in LANGUAGES else "en"
    seen = set(taken)
    for _ in range(NAME_BATCHES):
        try:
            pool = station_names(
                max(20, 2 * count), lang, np.random.default_rng(rng.getrandbits(32)), taken=seen
            )
        except ValueError:
            return
        seen.update(pool)
        yield from pool


def is_distinct(name: str, taken: Sequence[str], flat: Sequence[str]) -> bool:
    """True when ``name`` matches none of ``taken`` under the papers' rule (either way
    round) and reads under 0.6 like each of ``flat`` (their normalised forms) to the meter."""
    n = normalise(name)
    if not n:
        return False
    size = len(name.strip())
    for t, f in zip(taken, flat, strict=True):
        if len(f) >= 3 and (f in n or n in f):
            return False
        if ratio_at_least(n, f, 0.6):
            return False
        # the rule needs 4 × the shorter length >= the two lengths together: skip the rest
        other = len(t.strip())
        if 4 * min(size, other) < size + other:
            continue
        if station_match(t, name) or station_match(name, t):
            return False
    return True


# ------------------------------------------------------------------------------ other lines

#: regional rail: a dark line with white dashes in it; under-construction lines: dashed
RAIL, RAIL_DASH = "#6B6B6B", "#FFFFFF"


def rail_shapes(points: Sequence[Point], lw: float) -> list[Shape]:
    """A regional-rail line along ``points``: dark, with white dashes inside."""
    pts = list(points)
    return [
        Shape("polyline", pts, None, RAIL, lw * 0.62),
        Shape("polyline", pts, None, RAIL_DASH, lw * 0.22, (lw * 1.6, lw * 1.6)),
    ]


def planned_shapes(points: Sequence[Point], color: str, lw: float) -> list[Shape]:
    """A line under construction along ``points``: dashed in ``color``."""
    return [Shape("polyline", list(points), None, color, lw * 0.7, (lw * 1.8, lw * 1.1))]
