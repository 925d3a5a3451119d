"""Shaped text: measuring and drawing labels in any script (SPEC 15).

Text is laid out by Pillow's libraqm engine (HarfBuzz shaping + FriBiDi reordering), so
Arabic letters join and run right to left and Thai marks sit on their base letters. Pillow's
wheels bundle libraqm and HarfBuzz and load FriBiDi (Debian ``libfribidi0``, installed by
``scripts/system-deps.sh``) at run time. Without it, text in a complex script raises
:class:`TextEngineError` instead of being drawn wrongly; other scripts still render.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from PIL import ImageDraw, ImageFont, features

from maptab.errors import MaptabError
from maptab.render.fonts import FontFace, char_script, font_runs, is_rtl, needs_shaping


class TextEngineError(MaptabError, RuntimeError):
    """Complex-script text cannot be shaped (Pillow lacks libraqm/FriBiDi)."""


def has_shaper() -> bool:
    """True when Pillow can shape text (libraqm with FriBiDi)."""
    return bool(features.check("raqm"))


@lru_cache(maxsize=256)
def pil_font(face: FontFace, size: int) -> ImageFont.FreeTypeFont:
    """A cached Pillow font for ``face`` at ``size`` pixels, using the shaping engine."""
    layout = ImageFont.Layout.RAQM if has_shaper() else ImageFont.Layout.BASIC
    return ImageFont.truetype(face.path, size, index=face.index, layout_engine=layout)


@dataclass(frozen=True, slots=True)
class TextRun:
    """A run of one face, ``dx`` pixels right of the block's left edge."""

    text: str
    face: FontFace
    dx: float


@dataclass(frozen=True, slots=True)
class TextBlock:
    """A measured one-line label: ink box ``width`` × ``ascent + descent`` about a baseline.

    ``angle`` (degrees anticlockwise: 0, 90, 45 or -45) and ``vertical`` (CJK glyphs set one
    under another) say how the label is drawn; ``width``/``height`` stay those of the
    horizontal line and :func:`footprint` gives the drawn extent.
    """

    text: str
    size: int
    runs: tuple[TextRun, ...]
    width: float
    ascent: float
    descent: float
    rtl: bool
    angle: int = 0
    vertical: bool = False

    @property
    def height(self) -> float:
        return self.ascent + self.descent


def _direction(text: str) -> str | None:
    if not has_shaper():
        return None
    return "rtl" if is_rtl(text) else "ltr"


@lru_cache(maxsize=8192)
def measure(text: str, size: int, lang: str | None = None) -> TextBlock:
    """Shape and measure ``text`` at ``size`` px (font fallback per run, SPEC 15).

    Raises :class:`~maptab.render.fonts.MissingGlyphError` for a character no font has and
    :class:`TextEngineError` for complex-script text without a shaper.
    """
    if needs_shaping(text) and not has_shaper():
        raise TextEngineError(
            f"cannot shape {text!r}: Pillow has no libraqm/FriBiDi "
            "(install Debian libfribidi0: scripts/system-deps.sh)"
        )
    runs = font_runs(text, lang)
    rtl = is_rtl(text)
    direction = _direction(text)
    ordered = list(reversed(runs)) if rtl else runs
    placed: list[TextRun] = []
    x = 0.0
    top, bottom = 0.0, 0.0
    for run_text, face in ordered:
        font = pil_font(face, size)
        _, y0, _, y1 = font.getbbox(run_text, anchor="ls", direction=direction)
        top, bottom = min(top, y0), max(bottom, y1)
        placed.append(TextRun(run_text, face, x))
        x += font.getlength(run_text, direction=direction)
    # a label always reserves at least the face's cap height, so short labels stay tall enough
    ascent = max(-top, size * 0.72)
    return TextBlock(text, size, tuple(placed), x, ascent, max(bottom, size * 0.05), rtl)


def draw_block(
    draw: ImageDraw.ImageDraw,
    block: TextBlock,
    left: float,
    top: float,
    *,
    fill: str | tuple[int, ...] = "#111111",
    halo: str | tuple[int, ...] | None = None,
    halo_width: int = 0,
) -> None:
    """Draw ``block`` with its ink box's top-left corner at ``(left, top)``."""
    direction = _direction(block.text)
    baseline = top + block.ascent
    for run in block.runs:
        draw.text(
            (left + run.dx, baseline),
            run.text,
            font=pil_font(run.face, block.size),
            fill=fill,
            anchor="ls",
            direction=direction,
            stroke_width=halo_width if halo is not None else 0,
            stroke_fill=halo,
        )


# ------------------------------------------------------------------ turned and vertical labels
#: scripts whose labels may be set vertically (one glyph under another)
STACKABLE = frozenset({"han", "kana", "hangul", "cjk"})
#: glyphs in a vertical label, at most
MAX_STACK = 8


def can_stack(text: str) -> bool:
    """True when ``text`` is 2–8 CJK characters (no spaces, Latin or digits): a label that real
    Asian maps often set vertically."""
    return 2 <= len(text) <= MAX_STACK and all(char_script(c) in STACKABLE for c in text)


def oriented(block: TextBlock, *, angle: int = 0, vertical: bool = False) -> TextBlock:
    """``block`` to be drawn turned by ``angle`` degrees anticlockwise, or stacked vertically."""
    if vertical and not can_stack(block.text):
        raise ValueError(f"cannot set {block.text!r} vertically")
    return replace(block, angle=angle, vertical=vertical)


@dataclass(frozen=True, slots=True)
class Cell:
    """One glyph of a vertical label: its block and its ink box's offset in the column."""

    block: TextBlock
    dx: float
    dy: float


@lru_cache(maxsize=4096)
def column(block: TextBlock) -> tuple[tuple[Cell, ...], float, float]:
    """The glyphs of a vertical label, each centred in the column on a common per-cell
    baseline, and the column's width and height."""
    glyphs: list[TextBlock] = []
    for run in block.runs:
        font = pil_font(run.face, block.size)
        for ch in run.text:
            _, y0, _, y1 = font.getbbox(ch, anchor="ls")
            adv = font.getlength(ch)
            asc, desc = max(-y0, block.size * 0.72), max(y1, block.size * 0.05)
            glyphs.append(
                TextBlock(ch, block.size, (TextRun(ch, run.face, 0.0),), adv, asc, desc, False)
            )
    up = max(g.ascent for g in glyphs)
    down = max(g.descent for g in glyphs)
    gap = block.size * 0.08
    pitch = up + down + gap
    width = max(g.width for g in glyphs)
    cells = tuple(
        Cell(g, (width - g.width) / 2, i * pitch + up - g.ascent) for i, g in enumerate(glyphs)
    )
    return cells, width, len(glyphs) * pitch - gap


def footprint(block: TextBlock) -> tuple[float, float]:
    """Width and height of the box that holds the label as drawn (turned, stacked or level)."""
    if block.vertical:
        _, w, h = column(block)
        return w, h
    if block.angle in (90, -90):
        return block.height, block.width
    if block.angle:
        a = math.radians(block.angle)
        c, s = abs(math.cos(a)), abs(math.sin(a))
        return block.width * c + block.height * s, block.width * s + block.height * c
    return block.width, block.height
