"""Shaped text: measuring and drawing labels in any script (SPEC 15).

Text is laid out by Pillow's libraqm engine (HarfBuzz shaping + FriBiDi reordering), so
Arabic letters join and run right to left and Thai marks sit on their base letters. Pillow's
wheels bundle libraqm and HarfBuzz and load FriBiDi (Debian ``libfribidi0``, installed by
``scripts/system-deps.sh``) at run time. Without it, text in a complex script raises
:class:`TextEngineError` instead of being drawn wrongly; other scripts still render.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from PIL import ImageDraw, ImageFont, features

from maptab.errors import MaptabError
from maptab.render.fonts import FontFace, font_runs, is_rtl, needs_shaping


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
    """A measured one-line label: ink box ``width`` × ``ascent + descent`` about a baseline."""

    text: str
    size: int
    runs: tuple[TextRun, ...]
    width: float
    ascent: float
    descent: float
    rtl: bool

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
