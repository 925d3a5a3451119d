"""Backends: paint a :class:`~maptab.render.geometry.PlacedGeometry` as PNG (Pillow) or SVG.

Both draw the same record in the same order: background texture and scenery shapes (styles
other than clean), strokes (casing, then colour), station marks, labels (with a halo in the
background colour), second-language labels, scenery texts, annotation boxes, legend, title.
Station marks are anti-aliased sprites (drawn 4× larger and reduced): dots, rings, double
rings and pills; ticks are short strokes. Strokes are drawn with round joints. A
:class:`~maptab.render.furniture.Styled` label is drawn in its colour, bold with a stroke of
its own colour, on its filled box or roundel when it has one (line badges).
"""

from __future__ import annotations

import math
from functools import lru_cache
from html import escape

from PIL import Image, ImageDraw

from maptab.render.fonts import FontFace
from maptab.render.furniture import PillMark, Styled, TickMark
from maptab.render.geometry import LabelBox, PlacedGeometry, Point, Shape, StationMark, Stroke
from maptab.render.text import column, draw_block

SUPERSAMPLE = 4


def dash_polyline(points: list[Point], on: float, off: float) -> list[list[Point]]:
    """Split a polyline into dash pieces ``on`` px long with ``off`` px gaps."""
    pieces: list[list[Point]] = []
    cur: list[Point] = []
    drawing, left = True, on
    for a, b in zip(points, points[1:], strict=False):
        seg = math.dist(a, b)
        pos = 0.0
        while seg - pos > 1e-9:
            step = min(left, seg - pos)
            t0, t1 = pos / seg, (pos + step) / seg
            p0 = (a[0] + (b[0] - a[0]) * t0, a[1] + (b[1] - a[1]) * t0)
            p1 = (a[0] + (b[0] - a[0]) * t1, a[1] + (b[1] - a[1]) * t1)
            if drawing:
                if not cur:
                    cur.append(p0)
                cur.append(p1)
            pos += step
            left -= step
            if left <= 1e-9:
                if drawing and cur:
                    pieces.append(cur)
                    cur = []
                drawing = not drawing
                left = on if drawing else off
    if cur:
        pieces.append(cur)
    return pieces


def _draw_stroke(draw: ImageDraw.ImageDraw, s: Stroke) -> None:
    pieces = dash_polyline(s.points, *s.dash) if s.dash else [s.points]
    for color, width in ((s.casing, s.width * 1.6), (s.color, s.width)):
        if color is None:
            continue
        w = max(1, round(width))
        for pts in pieces:
            draw.line(pts, fill=color, width=w, joint="curve")
            if s.dash is None:  # round caps at the two ends
                for x, y in (pts[0], pts[-1]):
                    r = width / 2
                    draw.ellipse((x - r, y - r, x + r, y + r), fill=color)


@lru_cache(maxsize=512)
def _mark_sprite(style: str, radius: float, color: str, outline: float) -> Image.Image:
    """An anti-aliased RGBA image of a station mark, centred."""
    r = radius + outline / 2
    size = math.ceil(2 * r) + 2
    big = Image.new("RGBA", (size * SUPERSAMPLE, size * SUPERSAMPLE), (0, 0, 0, 0))
    d = ImageDraw.Draw(big)
    c = size * SUPERSAMPLE / 2
    R, ow = r * SUPERSAMPLE, max(1, round(outline * SUPERSAMPLE))
    fill = color if style == "spot" else "#FFFFFF"
    edge = "#FFFFFF" if style == "spot" else color
    d.ellipse((c - R, c - R, c + R, c + R), fill=fill, outline=edge, width=ow)
    if style == "double":  # a second, inner ring
        q = (radius - outline) * 0.55 * SUPERSAMPLE
        d.ellipse((c - q, c - q, c + q, c + q), outline=color, width=ow)
    return big.resize((size, size), Image.Resampling.LANCZOS)


@lru_cache(maxsize=512)
def _pill_sprite(
    radius: float, half: float, axis: tuple[float, float], outline: float
) -> Image.Image:
    """An anti-aliased white capsule with a dark outline, its long side along ``axis``."""
    r = radius + outline / 2
    w = math.ceil(2 * (abs(axis[0]) * half + r)) + 2
    h = math.ceil(2 * (abs(axis[1]) * half + r)) + 2
    big = Image.new("RGBA", (w * SUPERSAMPLE, h * SUPERSAMPLE), (0, 0, 0, 0))
    d = ImageDraw.Draw(big)
    cx, cy = w * SUPERSAMPLE / 2, h * SUPERSAMPLE / 2
    ends = [
        (cx - axis[0] * half * SUPERSAMPLE, cy - axis[1] * half * SUPERSAMPLE),
        (cx + axis[0] * half * SUPERSAMPLE, cy + axis[1] * half * SUPERSAMPLE),
    ]
    for color, rr in (("#111111", r), ("#FFFFFF", radius - outline / 2)):
        rr *= SUPERSAMPLE
        d.line(ends, fill=color, width=max(1, round(2 * rr)))
        for x, y in ends:
            d.ellipse((x - rr, y - rr, x + rr, y + rr), fill=color)
    return big.resize((w, h), Image.Resampling.LANCZOS)


def _paste_mark(img: Image.Image, m: StationMark) -> None:
    if isinstance(m, TickMark):
        (x, y), (nx, ny) = m.center, m.normal
        end = (x + nx * m.radius, y + ny * m.radius)
        ImageDraw.Draw(img).line([m.center, end], fill=m.color, width=max(1, round(m.outline)))
        return
    if isinstance(m, PillMark):
        axis = (round(m.axis[0], 4), round(m.axis[1], 4))
        sprite = _pill_sprite(round(m.radius, 1), round(m.half, 1), axis, round(m.outline, 1))
    else:
        sprite = _mark_sprite(m.style, round(m.radius, 1), m.color, round(m.outline, 1))
    x = round(m.center[0] - sprite.width / 2)
    y = round(m.center[1] - sprite.height / 2)
    img.paste(sprite, (x, y), sprite)


def _draw_turned(img: Image.Image, lab: LabelBox, background: str) -> None:
    """A label turned ``lab.angle`` degrees anticlockwise, with its halo, pasted centred in its
    box (a quarter turn exactly, other angles resampled bicubically)."""
    b = lab.block
    halo = max(2, round(b.size / 7)) if lab.halo else 0
    m = halo + 2
    tile = Image.new("LA", (round(b.width) + 2 * m, round(b.height) + 2 * m), (0, 0))
    if halo:
        ink = ImageDraw.Draw(tile)
        draw_block(ink, b, m, m, fill=(255, 255), halo=(0, 255), halo_width=halo)
    else:
        draw_block(ImageDraw.Draw(tile), b, m, m, fill=(255, 255))
    if lab.angle == 90:
        tile = tile.transpose(Image.Transpose.ROTATE_90)
        at = (round(lab.box.x0) - m, round(lab.box.y0) - m)
    else:
        tile = tile.rotate(lab.angle, resample=Image.Resampling.BICUBIC, expand=True)
        cx, cy = lab.box.center
        at = (round(cx - tile.width / 2), round(cy - tile.height / 2))
    lum, alpha = tile.split()
    colour = Image.new("RGB", tile.size, "#111111")
    colour.paste(Image.new("RGB", tile.size, background), mask=Image.eval(lum, lambda v: 255 - v))
    img.paste(colour, at, alpha)


def _draw_column(draw: ImageDraw.ImageDraw, lab: LabelBox, background: str) -> None:
    """A vertical label: its glyphs one under another, centred in the column (SPEC 15)."""
    cells, _, _ = column(lab.block)
    halo = max(2, round(lab.block.size / 7)) if lab.halo else 0
    for c in cells:
        draw_block(
            draw,
            c.block,
            lab.box.x0 + c.dx,
            lab.box.y0 + c.dy,
            halo=background if halo else None,
            halo_width=halo,
        )


def _draw_styled(draw: ImageDraw.ImageDraw, lab: Styled, background: str) -> None:
    """A :class:`Styled` label: its filled box or roundel, then its text, centred in a
    filled box, bold with a stroke of its own colour, over a halo where it crosses a line."""
    b, block = lab.box, lab.block
    x, y = b.x0, b.y0
    if lab.fill is not None:
        h = b.y1 - b.y0
        r = h / 2 if lab.round else h * 0.22
        draw.rounded_rectangle((b.x0, b.y0, b.x1, b.y1), radius=r, fill=lab.fill)
        x, y = (b.x0 + b.x1 - block.width) / 2, (b.y0 + b.y1 - block.height) / 2
    sw = round(lab.bold)
    if lab.halo:
        halo = max(2, round(block.size / 7)) + sw
        draw_block(draw, block, x, y, fill=lab.color, halo=background, halo_width=halo)
    draw_block(draw, block, x, y, fill=lab.color, halo=lab.color if sw else None, halo_width=sw)


def _draw_label(draw: ImageDraw.ImageDraw, lab: LabelBox, background: str) -> None:
    if isinstance(lab, Styled):
        _draw_styled(draw, lab, background)
        return
    if lab.frame is not None:
        pad = lab.block.size * 0.3
        draw.rounded_rectangle(
            (lab.box.x0 - pad, lab.box.y0 - pad, lab.box.x1 + pad, lab.box.y1 + pad),
            radius=pad,
            fill="#FFFFFF",
            outline=lab.frame,
            width=max(1, round(lab.block.size / 10)),
        )
        draw_block(draw, lab.block, lab.box.x0, lab.box.y0)
        return
    if not lab.halo:
        draw_block(draw, lab.block, lab.box.x0, lab.box.y0)
        return
    halo = max(2, round(lab.block.size / 7))
    draw_block(draw, lab.block, lab.box.x0, lab.box.y0, halo=background, halo_width=halo)


def _scaled(s: Stroke, f: int) -> Stroke:
    dash = (s.dash[0] * f, s.dash[1] * f) if s.dash else None
    pts = [(x * f, y * f) for x, y in s.points]
    return Stroke(s.key, pts, s.color, s.width * f, dash, s.casing)


SCENERY_TEXT = "#8C8C8C"


def _texture(img: Image.Image, seed: int) -> Image.Image:
    """Paper grain and soft blotches over a flat background (scenic posters)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    w, h = img.size
    coarse = rng.normal(0.0, 1.0, (max(2, h // 160), max(2, w // 160))).astype("float32")
    low = Image.fromarray(((coarse * 7) + 128).clip(0, 255).astype("uint8"), "L")
    low = np.asarray(low.resize((w, h), Image.Resampling.BICUBIC), dtype="float32") - 128
    low += rng.normal(0.0, 4.0, (h, w)).astype("float32")  # + grain
    # base + (low + grain) * tint, band by band in place (the same float32 operations as
    # one broadcast expression, without its three full-size temporaries)
    out = np.array(img, dtype="float32")
    for band, tint in enumerate(np.array([1.0, 0.93, 0.75], dtype="float32")):
        out[:, :, band] += low * tint
    np.clip(out, 0, 255, out=out)
    return Image.fromarray(out.astype("uint8"), "RGB")


def _draw_shape(draw: ImageDraw.ImageDraw, sh: Shape) -> None:
    w = max(1, round(sh.width))
    if sh.kind == "polyline":
        pieces = dash_polyline(sh.points, *sh.dash) if sh.dash else [sh.points]
        for pts in pieces:
            draw.line(pts, fill=sh.outline, width=w, joint="curve")
    elif sh.kind == "polygon":
        draw.polygon(sh.points, fill=sh.fill, outline=sh.outline, width=w)
    elif sh.kind == "ellipse":
        draw.ellipse([*sh.points[0], *sh.points[1]], fill=sh.fill, outline=sh.outline, width=w)
    else:
        draw.rectangle([*sh.points[0], *sh.points[1]], fill=sh.fill, outline=sh.outline, width=w)


def to_image(placed: PlacedGeometry) -> Image.Image:
    """Paint ``placed`` on a new RGB image.

    Scenic paths run at any angle, so their strokes are drawn at twice the size and reduced
    (anti-aliasing); metro strokes are octilinear and drawn directly, which keeps a
    4,000-pixel map fast.
    """
    f = 2 if placed.scenario == "travelmap" else 1
    img = Image.new("RGB", (placed.width * f, placed.height * f), placed.background)
    if placed.texture is not None:
        img = _texture(img, placed.texture)
    draw = ImageDraw.Draw(img)
    for sh in placed.scenery:
        _draw_shape(draw, _scaled_shape(sh, f) if f > 1 else sh)
    for s in placed.strokes:
        _draw_stroke(draw, _scaled(s, f) if f > 1 else s)
    if f > 1:
        img = img.reduce(f)
        draw = ImageDraw.Draw(img)
    for m in placed.stations.values():
        _paste_mark(img, m)
    for lab in [*placed.labels.values(), *placed.secondary.values()]:
        if lab.vertical:
            _draw_column(draw, lab, placed.background)
        elif lab.angle:
            _draw_turned(img, lab, placed.background)
        else:
            _draw_label(draw, lab, placed.background)
    for lab in placed.scenery_labels:
        if isinstance(lab, Styled):
            _draw_styled(draw, lab, placed.background)
        else:
            draw_block(draw, lab.block, lab.box.x0, lab.box.y0, fill=SCENERY_TEXT)
    for lab in placed.annotations.values():
        _draw_label(draw, lab, placed.background)
    for entry in placed.legend:
        _draw_stroke(draw, entry.swatch)
        _draw_label(draw, entry.label, placed.background)
    if placed.title is not None:
        _draw_label(draw, placed.title, placed.background)
    return img


def _scaled_shape(sh: Shape, f: int) -> Shape:
    dash = (sh.dash[0] * f, sh.dash[1] * f) if sh.dash else None
    pts = [(x * f, y * f) for x, y in sh.points]
    return Shape(sh.kind, pts, sh.fill, sh.outline, sh.width * f, dash)


# ------------------------------------------------------------------- SVG
def _svg_points(points: list[Point]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)


def _svg_stroke(s: Stroke) -> list[str]:
    out = []
    dash = f' stroke-dasharray="{s.dash[0]:.1f} {s.dash[1]:.1f}"' if s.dash else ""
    for color, width in ((s.casing, s.width * 1.6), (s.color, s.width)):
        if color is not None:
            out.append(
                f'<polyline points="{_svg_points(s.points)}" fill="none" stroke="{color}" '
                f'stroke-width="{width:.1f}" stroke-linejoin="round" stroke-linecap="round"{dash}/>'
            )
    return out


def _svg_shape(sh: Shape) -> str:
    fill = f'fill="{sh.fill}"' if sh.fill else 'fill="none"'
    stroke = f' stroke="{sh.outline}" stroke-width="{sh.width:.1f}"' if sh.outline else ""
    dash = f' stroke-dasharray="{sh.dash[0]:.1f} {sh.dash[1]:.1f}"' if sh.dash else ""
    if sh.kind in ("polyline", "polygon"):
        return f'<{sh.kind} points="{_svg_points(sh.points)}" {fill}{stroke}{dash}/>'
    (x0, y0), (x1, y1) = sh.points[0], sh.points[1]
    if sh.kind == "ellipse":
        return (
            f'<ellipse cx="{(x0 + x1) / 2:.1f}" cy="{(y0 + y1) / 2:.1f}" rx="{(x1 - x0) / 2:.1f}" '
            f'ry="{(y1 - y0) / 2:.1f}" {fill}{stroke}/>'
        )
    return f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" {fill}{stroke}/>'


def _svg_mark(m: StationMark) -> list[str]:
    (x, y), r = m.center, m.radius
    if isinstance(m, TickMark):
        end = (x + m.normal[0] * r, y + m.normal[1] * r)
        return [
            f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{end[0]:.1f}" y2="{end[1]:.1f}" '
            f'stroke="{m.color}" stroke-width="{m.outline:.1f}"/>'
        ]
    if isinstance(m, PillMark):
        a, b = m.axis, m.half
        ends = f'x1="{x - a[0] * b:.1f}" y1="{y - a[1] * b:.1f}" x2="{x + a[0] * b:.1f}" y2="{y + a[1] * b:.1f}"'
        return [
            f'<line {ends} stroke="#111111" stroke-width="{2 * r + m.outline:.1f}" '
            'stroke-linecap="round"/>',
            f'<line {ends} stroke="#FFFFFF" stroke-width="{2 * r - m.outline:.1f}" '
            'stroke-linecap="round"/>',
        ]
    fill = m.color if m.style == "spot" else "#FFFFFF"
    edge = "#FFFFFF" if m.style == "spot" else m.color
    out = [
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" '
        f'fill="{fill}" stroke="{edge}" stroke-width="{m.outline:.1f}"/>'
    ]
    if m.style == "double":
        out.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{(r - m.outline) * 0.55:.1f}" fill="none" '
            f'stroke="{edge}" stroke-width="{m.outline:.1f}"/>'
        )
    return out


def _svg_families(faces: list[FontFace]) -> str:
    names = list(dict.fromkeys(f.family for f in faces)) + ["sans-serif"]
    return escape(", ".join(f"'{n}'" if " " in n else n for n in names))


def _svg_label(lab: LabelBox) -> list[str]:
    out = []
    paint = ""
    if isinstance(lab, Styled):
        b = lab.box
        if lab.fill is not None:
            r = (b.y1 - b.y0) / 2 if lab.round else (b.y1 - b.y0) * 0.22
            out.append(
                f'<rect x="{b.x0:.1f}" y="{b.y0:.1f}" width="{b.x1 - b.x0:.1f}" '
                f'height="{b.y1 - b.y0:.1f}" rx="{r:.1f}" fill="{lab.fill}"/>'
            )
        paint = f' fill="{lab.color}"' + (' font-weight="bold"' if lab.bold else "")
    if lab.frame is not None:
        pad = lab.block.size * 0.3
        out.append(
            f'<rect x="{lab.box.x0 - pad:.1f}" y="{lab.box.y0 - pad:.1f}" '
            f'width="{lab.box.x1 - lab.box.x0 + 2 * pad:.1f}" '
            f'height="{lab.box.y1 - lab.box.y0 + 2 * pad:.1f}" rx="{pad:.1f}" fill="#FFFFFF" '
            f'stroke="{lab.frame}"/>'
        )
    cx = (lab.box.x0 + lab.box.x1) / 2
    baseline = lab.box.y0 + lab.block.ascent
    turn = ""
    if lab.angle:  # turned anticlockwise about the box centre
        cy = (lab.box.y0 + lab.box.y1) / 2
        baseline = cy - lab.block.height / 2 + lab.block.ascent
        turn = f' transform="rotate({-lab.angle} {cx:.1f} {cy:.1f})"'

    family = _svg_families([r.face for r in lab.block.runs])
    halo = ' class="halo"' if lab.halo else ""
    direction = ' direction="rtl"' if lab.block.rtl else ""
    if lab.vertical:  # one <text> per glyph, as the PNG draws them
        cells, width, _ = column(lab.block)
        for c in cells:
            out.append(
                f'<text x="{lab.box.x0 + width / 2:.1f}" '
                f'y="{lab.box.y0 + c.dy + c.block.ascent:.1f}" font-size="{lab.block.size}" '
                f'font-family="{family}" text-anchor="middle"{halo}>{escape(c.block.text)}</text>'
            )
        return out
    out.append(
        f'<text x="{cx:.1f}" y="{baseline:.1f}" font-size="{lab.block.size}" '
        f'font-family="{family}" text-anchor="middle"{direction}{halo}{turn}{paint}>'
        f"{escape(lab.block.text)}</text>"
    )
    return out


def to_svg(placed: PlacedGeometry) -> str:
    """The same drawing as :func:`to_image`, as an SVG document."""
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{placed.width}" '
        f'height="{placed.height}" viewBox="0 0 {placed.width} {placed.height}">',
        f"<style>.halo {{ paint-order: stroke; stroke: {placed.background}; "
        "stroke-width: 4px; stroke-linejoin: round; }</style>",
        f'<rect width="100%" height="100%" fill="{placed.background}"/>',
    ]
    for sh in placed.scenery:
        parts.append(_svg_shape(sh))
    for s in placed.strokes:
        parts += _svg_stroke(s)
    for m in placed.stations.values():
        parts += _svg_mark(m)
    for lab in [*placed.labels.values(), *placed.secondary.values()]:
        parts += _svg_label(lab)
    for lab in placed.scenery_labels:
        if not isinstance(lab, Styled):
            lab = Styled(lab.owner, lab.block, lab.box, lab.kind, color=SCENERY_TEXT)
        parts += _svg_label(lab)
    for lab in placed.annotations.values():
        parts += _svg_label(lab)
    for entry in placed.legend:
        parts += _svg_stroke(entry.swatch)
        parts += _svg_label(entry.label)
    if placed.title is not None:
        parts += _svg_label(placed.title)
    parts.append("</svg>")
    return "\n".join(parts)
