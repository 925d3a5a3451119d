"""Reading-difficulty meter: how many station labels a machine reader finds on a map.

The same figure is measured on real maps (ReasonMap images, MapTab's Cleveland image) and on
maps this package renders, so a render style can be compared with what the papers collected.

* An OCR engine turns the image into :class:`Detection` s (text, box, confidence). The default
  engine is RapidOCR (``rapidocr-onnxruntime``, the ``maptab[ocr]`` extra; its wheel ships the
  PP-OCRv4 detection and recognition models, Chinese + Latin, so nothing is downloaded at run
  time). :func:`read_image` first shrinks an image to at most :data:`MAX_PIXELS` pixels, then
  reads it in overlapping :data:`TILE_PX` tiles so small labels keep their size; a detection is
  kept only by the tile whose core holds its centre, so overlaps do not count text twice.
* :func:`measure` matches detections to the map's stations. Texts are compared after
  :func:`normalise` (Unicode NFKC, case-folded, without spaces and punctuation) with difflib's
  ratio; a station is **found** when one of its names (:attr:`StationLabel.names`: the table
  name, the label drawn on the map, and the name without a station-word suffix) reaches
  ``threshold`` (0.8) against a detection, against two detections that read as one label
  (:func:`joins`: labels wrapped or split by the engine), or when the name (3+ characters
  after normalising) lies inside a longer detection. A name with a trailing disambiguation in
  brackets (``"125 St Station (4/5/6)"``, ``"Main (2)"``) is also looked for without it, as the
  map prints it, when no other station of the map reads the same (:func:`station_labels`).
* The engine's models read Latin and Chinese (Han) text only; kana, Hangul, Cyrillic, Greek,
  Arabic, Hebrew, Thai, Indic… are not read, so recall on such labels says nothing about the
  map. :func:`readable_share` tells how many of a map's names the engine can read at all.
* **Recall** = found / stations. **False detections** = detections of 2+ characters used by no
  match (other lines, landmarks, legend text, misreadings). **Stray share** = share of all
  detections that are part of no text (alone or joined) matching any station's name. **Location error** = distance in
  pixels from a found station's drawn position to the nearest point of its matched text box,
  when positions are known (rendered maps; real maps carry none).
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from PIL import Image

from maptab.core.network import Network
from maptab.errors import MaptabError
from maptab.render.geometry import PlacedGeometry

MAX_PIXELS = 8_000_000
TILE_PX = 1600
OVERLAP_PX = 320
THRESHOLD = 0.8
#: How far (share of the shorter box's height) two stacked text lines may overlap and still join.
JOIN_OVERLAP = 0.3

Box = tuple[float, float, float, float]

#: Words a map often leaves off a station's name (matched case-insensitively at the end).
STATION_SUFFIXES = ("station", "stn", "站", "駅", "역", "stop")

_PUNCT = re.compile(r"[\W_]+", re.UNICODE)
_DISAMBIGUATION = re.compile(r"\s*[(（][^()（）]*[)）]\s*$")


class OcrUnavailableError(MaptabError):
    """No OCR engine is installed (``pip install 'maptab[ocr]'``)."""


@dataclass(frozen=True, slots=True)
class Detection:
    """One text line the OCR engine read: its text, box ``(x0, y0, x1, y1)`` and confidence."""

    text: str
    box: Box
    score: float = 1.0


@dataclass(frozen=True, slots=True)
class StationLabel:
    """A station to look for: the names it may be written as, and where it is drawn (if known)."""

    station: str
    names: tuple[str, ...]
    position: tuple[float, float] | None = None


@dataclass
class LegibilityReport:
    """What the meter measured on one image (module docstring for each figure)."""

    stations: int
    found: int
    detections: int
    false_detections: int
    location_errors: list[float] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    stray_detections: int = 0

    @property
    def recall(self) -> float:
        return self.found / self.stations if self.stations else 0.0

    @property
    def false_share(self) -> float:
        """False detections per detection (0 when nothing was read)."""
        return self.false_detections / self.detections if self.detections else 0.0

    @property
    def stray_share(self) -> float:
        """Detections matching no station's name, per detection (0 when nothing was read)."""
        return self.stray_detections / self.detections if self.detections else 0.0

    def location_error(self, q: float = 0.5) -> float | None:
        """The ``q`` quantile of the location errors (``None`` without positions)."""
        errs = sorted(self.location_errors)
        if not errs:
            return None
        return errs[min(len(errs) - 1, int(q * len(errs)))]

    def to_dict(self) -> dict[str, object]:
        return {
            "stations": self.stations,
            "found": self.found,
            "recall": round(self.recall, 4),
            "detections": self.detections,
            "false_detections": self.false_detections,
            "stray_detections": self.stray_detections,
            "stray_share": round(self.stray_share, 4),
            "location_error_p50_px": self.location_error(0.5),
            "location_error_p90_px": self.location_error(0.9),
            "missing": self.missing,
        }


@lru_cache(maxsize=65536)
def normalise(text: str) -> str:
    """NFKC, case-folded, spaces and punctuation removed: ``"W. 25th - Ohio"`` → ``"w25thohio"``."""
    return _PUNCT.sub("", unicodedata.normalize("NFKC", text).casefold())


def name_variants(name: str) -> tuple[str, ...]:
    """``name`` and, when it ends in a station word (:data:`STATION_SUFFIXES`), the name without
    it: ``"Palmetto Station"`` → also ``"Palmetto"``; ``"大连北站"`` → also ``"大连北"``."""
    out = [name]
    low = name.casefold().rstrip()
    for suffix in STATION_SUFFIXES:
        if low.endswith(suffix) and len(low) > len(suffix) + 1:
            out.append(name.rstrip()[: -len(suffix)].rstrip(" -–·"))
    return tuple(dict.fromkeys(v for v in out if normalise(v)))


def similarity(a: str, b: str) -> float:
    """difflib ratio of the normalised texts."""
    na, nb = normalise(a), normalise(b)
    if not na or not nb:
        return 0.0
    m = difflib.SequenceMatcher(None, na, nb, autojunk=False)
    return m.ratio()


def ratio_at_least(na: str, nb: str, threshold: float) -> bool:
    if not na or not nb:
        return False
    if 2 * min(len(na), len(nb)) / (len(na) + len(nb)) < threshold:
        return False
    m = difflib.SequenceMatcher(None, na, nb, autojunk=False)
    return m.quick_ratio() >= threshold and m.ratio() >= threshold


@dataclass(frozen=True, slots=True)
class _Candidate:
    text: str
    box: Box
    parts: tuple[int, ...]


def _union(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def printed_name(name: str) -> str:
    """``name`` without a trailing disambiguation in brackets, which maps do not print:
    ``"125 St Station (4/5/6)"`` → ``"125 St Station"``; ``name`` itself when it has none."""
    bare = _DISAMBIGUATION.sub("", name)
    return bare if normalise(bare) else name


def joins(a: Box, b: Box) -> bool:
    """True when box ``b`` continues the label of box ``a`` (two lines read as one label).

    With ``h`` the taller box's height and ``s`` the shorter one's, either

    * same line: the vertical centres differ by less than ``h / 2`` and ``b`` starts
      0…``h`` right of ``a``'s right edge; or
    * next line: the columns overlap (> 0) and ``b``'s top lies at most
      ``JOIN_OVERLAP · s`` above ``a``'s bottom (tightly set lines whose boxes overlap a few
      pixels) and at most ``0.8 · h`` below it.
    """
    ha, hb = a[3] - a[1], b[3] - b[1]
    h = max(ha, hb, 1.0)
    same_row = abs((a[1] + a[3]) - (b[1] + b[3])) / 2 < 0.5 * h
    if same_row and 0 <= b[0] - a[2] <= h:
        return True
    cols = min(a[2], b[2]) - max(a[0], b[0]) > 0
    return cols and -JOIN_OVERLAP * min(ha, hb) <= b[1] - a[3] <= 0.8 * h


def _candidates(dets: Sequence[Detection]) -> list[_Candidate]:
    """Every detection, then every pair of detections that reads as one label."""
    out = [_Candidate(d.text, d.box, (i,)) for i, d in enumerate(dets)]
    cell = 200.0
    grid: dict[tuple[int, int], list[int]] = {}
    for i, d in enumerate(dets):
        grid.setdefault((int(d.box[0] // cell), int(d.box[1] // cell)), []).append(i)
    for i, a in enumerate(dets):
        cx, cy = int(a.box[2] // cell), int(a.box[3] // cell)
        near = {
            j
            for gx in range(int(a.box[0] // cell) - 1, cx + 2)
            for gy in range(int(a.box[1] // cell) - 1, cy + 2)
            for j in grid.get((gx, gy), ())
        }
        for j in sorted(near):
            if j != i and joins(a.box, dets[j].box):
                b = dets[j]
                out.append(_Candidate(a.text + " " + b.text, _union(a.box, b.box), (i, j)))
    return out


def _distance(p: tuple[float, float], box: Box) -> float:
    dx = max(box[0] - p[0], 0.0, p[0] - box[2])
    dy = max(box[1] - p[1], 0.0, p[1] - box[3])
    return math.hypot(dx, dy)


def _matches(name: str, cand: str, threshold: float) -> bool:
    nn, nc = normalise(name), normalise(cand)
    if ratio_at_least(nn, nc, threshold):
        return True
    return len(nn) >= 3 and len(nc) > len(nn) and nn in nc


def measure(
    detections: Sequence[Detection],
    stations: Iterable[StationLabel],
    *,
    threshold: float = THRESHOLD,
) -> LegibilityReport:
    """Match detections to stations: recall, false and stray detections, location error."""
    stations = list(stations)
    cands = _candidates(detections)
    used: set[int] = set()
    matched: set[int] = set()
    found = 0
    errors: list[float] = []
    missing: list[str] = []
    for st in stations:
        hits = [c for c in cands if any(_matches(n, c.text, threshold) for n in st.names)]
        if not hits:
            missing.append(st.station)
            continue
        found += 1
        matched.update(i for c in hits for i in c.parts)
        if st.position is not None:
            best = min(hits, key=lambda c: _distance(st.position, c.box))  # type: ignore[arg-type]
            errors.append(round(_distance(st.position, best.box), 1))
            used.update(best.parts)
        else:
            used.update(i for c in hits for i in c.parts)
    false = sum(
        1 for i, d in enumerate(detections) if i not in used and len(normalise(d.text)) >= 2
    )
    stray = len(detections) - len(matched)
    return LegibilityReport(
        len(stations), found, len(detections), false, errors, missing, stray_detections=stray
    )


# ----------------------------------------------------------------------------- OCR engine

Reader = Callable[[Image.Image], list[Detection]]


@lru_cache(maxsize=1)
def rapid_engine():  # pragma: no cover - exercised when the extra is installed
    """The RapidOCR engine :func:`read_image` uses by default, loaded once per process
    (:class:`OcrUnavailableError` without the ``ocr`` extra)."""
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError as exc:
        raise OcrUnavailableError(
            f"no OCR engine: install the ocr extra (pip install 'maptab[ocr]') ({exc})"
        ) from None
    return RapidOCR(max_side_len=TILE_PX + 64)


def ocr_available() -> bool:
    """True when the RapidOCR engine can be imported."""
    try:
        rapid_engine()
    except OcrUnavailableError:
        return False
    return True


def _starts(n: int, tile: int, step: int) -> list[int]:
    if n <= tile:
        return [0]
    return sorted({*range(0, n - tile, step), n - tile})


def _cores(starts: list[int], n: int, tile: int) -> list[tuple[float, float]]:
    """Each tile's own span along one axis: overlaps are split at their middle."""
    cuts = [(s + tile + nxt) / 2 for s, nxt in zip(starts, starts[1:], strict=False)]
    return list(zip([0.0, *cuts], [*cuts, float(n)], strict=True))


def tiles(
    width: int, height: int, tile: int = TILE_PX, overlap: int = OVERLAP_PX
) -> list[tuple[Box, Box]]:
    """Overlapping tiles covering ``width × height``, each with its *core*: the cores partition
    the image, and a detection belongs to the tile whose core holds its centre."""
    step = max(1, tile - overlap)
    xs, ys = _starts(width, tile, step), _starts(height, tile, step)
    cx, cy = _cores(xs, width, tile), _cores(ys, height, tile)
    return [
        (
            (x, y, min(x + tile, width), min(y + tile, height)),
            (cx[i][0], cy[j][0], cx[i][1], cy[j][1]),
        )
        for j, y in enumerate(ys)
        for i, x in enumerate(xs)
    ]


def shrunk(width: int, height: int, max_pixels: int = MAX_PIXELS) -> tuple[tuple[int, int], float]:
    """The size :func:`read_image` reads a ``width × height`` image at (at most
    ``max_pixels``, never enlarged) and the scale factor."""
    f = min(1.0, math.sqrt(max_pixels / (width * height)))
    if f < 1.0:
        return (max(1, round(width * f)), max(1, round(height * f))), f
    return (width, height), f


def tile_count(width: int, height: int) -> int:
    """How many tiles :func:`read_image` reads a ``width × height`` image in."""
    return len(tiles(*shrunk(width, height)[0]))


def read_image(
    image: Image.Image,
    *,
    max_pixels: int = MAX_PIXELS,
    tile: int = TILE_PX,
    overlap: int = OVERLAP_PX,
    engine: Callable[[object], object] | None = None,
    angle_classifier: bool = False,
) -> list[Detection]:
    """Read every text line of ``image`` with RapidOCR (module docstring); boxes are in the
    coordinates of the image as given. ``angle_classifier`` runs RapidOCR's 0°/180°
    classifier on each text line (it rights labels turned a quarter turn, which the reader
    otherwise gets upside down; about 1.5–2× slower; off for the published figures)."""
    import numpy as np

    run = engine or rapid_engine()
    img = image.convert("RGB")
    size, f = shrunk(img.width, img.height, max_pixels)
    if f < 1.0:
        img = img.resize(size)
    out: list[Detection] = []
    for t, core in tiles(img.width, img.height, tile, overlap):
        arr = np.asarray(img.crop(t))[:, :, ::-1]  # RapidOCR takes OpenCV's BGR order
        result, _ = run(arr, use_cls=angle_classifier)  # type: ignore[misc]
        for quad, text, score in result or []:
            xs = [p[0] + t[0] for p in quad]
            ys = [p[1] + t[1] for p in quad]
            cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
            if not (core[0] <= cx < core[2] and core[1] <= cy < core[3]):
                continue
            box = (min(xs) / f, min(ys) / f, max(xs) / f, max(ys) / f)
            out.append(Detection(str(text), box, float(score)))
    return out


#: Scripts (:func:`maptab.render.fonts.char_script`) that the bundled models read.
READABLE_SCRIPTS = frozenset({"latin", "common", "han", "cjk"})


def readable_share(network: Network) -> float:
    """Share of stations whose display name is written only in scripts the engine reads."""
    from maptab.render.fonts import char_script

    names = [network.label(s) for s in network.vertices]
    ok = sum(all(char_script(c) in READABLE_SCRIPTS for c in n) for n in names)
    return ok / len(names) if names else 1.0


def station_labels(
    network: Network, placed: PlacedGeometry | None = None, *, drawn_text: bool = False
) -> list[StationLabel]:
    """The stations of ``network`` to look for, by table and display name (and the name
    without a station word). With ``placed`` (the geometry the image was painted from) each
    station also gets its drawn position; ``drawn_text`` adds the label text actually drawn
    (a style's display variant). Off by default, so generated maps are measured like real
    ones, whose drawn texts nobody lists. Each name's :func:`printed_name` (and its variants) is
    added when no other station of the map has a name that reads the same once normalised."""
    out = []
    printed: list[list[str]] = []
    for s in network.vertices:
        names = [network.label(s), s]
        pos = None
        if placed is not None:
            lab = placed.labels.get(s)
            if drawn_text and lab is not None:
                names.insert(0, lab.block.text)
            mark = placed.stations.get(s)
            pos = mark.center if mark is not None else None
        variants = dict.fromkeys(v for n in names for v in name_variants(n))
        out.append(StationLabel(s, tuple(variants), pos))
        bare = {printed_name(v) for v in variants} - set(variants)
        printed.append([v for n in sorted(bare) for v in name_variants(n)])
    owners: dict[str, set[int]] = {}
    for k, (lab, extra) in enumerate(zip(out, printed, strict=True)):
        for v in (*lab.names, *extra):
            owners.setdefault(normalise(v), set()).add(k)
    for k, extra in enumerate(printed):
        keep = [v for v in extra if owners[normalise(v)] == {k}]
        if keep:
            lab = out[k]
            out[k] = StationLabel(
                lab.station, tuple(dict.fromkeys((*lab.names, *keep))), lab.position
            )
    return out
