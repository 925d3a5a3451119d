"""Fonts and shaping: real glyphs in every script, Arabic joined and RTL, Thai marks in place."""

from __future__ import annotations

import pytest
import uharfbuzz as hb
from PIL import Image, ImageChops, ImageDraw

from maptab.core.network import Network
from maptab.render import MissingGlyphError, check_legibility, render_map
from maptab.render.fonts import FontFace, coverage, font_runs, is_rtl, primary_script
from maptab.render.text import has_shaper, measure, pil_font

LABELS = {
    "en": "King's Cross St. Pancras",
    "zh": "西直门站（换乘站）",
    "ja": "新宿三丁目駅",
    "ko": "강남구청역",
    "fr": "Châtelet–Les Halles",
    "de": "Straßburger Platz",
    "es": "Plaza de España",
    "ru": "Площадь Революции",
    "ar": "باب السلام",
    "th": "สนามกีฬาแห่งชาติ",
}


def shape(text: str, face: FontFace, features: dict[str, bool] | None = None) -> hb.Buffer:
    font = hb.Font(hb.Face(hb.Blob.from_file_path(face.path), face.index))
    buf = hb.Buffer()
    buf.add_str(text)
    buf.guess_segment_properties()
    hb.shape(font, buf, features or {})
    return buf


def test_pillow_can_shape():
    assert has_shaper(), "Pillow lacks libraqm/FriBiDi: run scripts/system-deps.sh (libfribidi0)"


@pytest.mark.parametrize("lang", sorted(LABELS))
def test_label_in_every_script_has_real_glyphs(lang):
    text = LABELS[lang]
    runs = font_runs(text, lang)
    assert "".join(t for t, _ in runs) == text
    for run_text, face in runs:
        missing = [c for c in run_text if not c.isspace() and ord(c) not in coverage(face)]
        assert not missing, f"{lang}: {face.path} has no glyph for {missing}"
        buf = shape(run_text, face)
        assert all(g.codepoint != 0 for g in buf.glyph_infos), f"{lang}: tofu (glyph 0)"
    block = measure(text, 24, lang)
    img = Image.new("L", (int(block.width) + 20, int(block.height) + 20), 0)
    from maptab.render.text import draw_block

    draw_block(ImageDraw.Draw(img), block, 10, 10, fill=255)
    bbox = img.getbbox()
    assert bbox is not None and bbox[2] - bbox[0] > block.width * 0.8


@pytest.mark.parametrize(
    ("text", "lang", "family"),
    [
        ("西直门", "zh", "Noto Sans CJK SC"),
        ("新宿駅", None, "Noto Sans CJK SC"),
        ("新宿駅", "ja", "Noto Sans CJK JP"),
        ("しんじゅく", None, "Noto Sans CJK JP"),
        ("강남", None, "Noto Sans CJK KR"),
    ],
)
def test_cjk_face_follows_language(text, lang, family):
    assert font_runs(text, lang)[0][1].family == family


def test_arabic_is_joined_and_right_to_left():
    text = LABELS["ar"]
    assert primary_script(text) == "arabic" and is_rtl(text)
    ((run, face),) = font_runs(text)
    joined = shape(run, face)
    assert joined.direction == "rtl"
    # glyphs come out in visual order: clusters (logical positions) descend left to right
    clusters = [g.cluster for g in joined.glyph_infos]
    assert clusters == sorted(clusters, reverse=True)
    isolated = shape(run, face, {"init": False, "medi": False, "fina": False, "rlig": False})
    assert [g.codepoint for g in joined.glyph_infos] != [g.codepoint for g in isolated.glyph_infos]

    # the renderer's own drawing is the joined shaping, and its first word is on the right
    from maptab.render.text import draw_block

    def ours(label: str) -> tuple[Image.Image, float]:
        block = measure(label, 40)
        img = Image.new("L", (420, 80), 0)
        draw_block(ImageDraw.Draw(img), block, 10, 60 - block.ascent, fill=255)
        return img, block.width

    full, width = ours(text)
    font = pil_font(face, 40)
    pil = Image.new("L", (420, 80), 0)
    ImageDraw.Draw(pil).text((10, 60), text, font=font, fill=255, anchor="ls", direction="rtl")
    assert ImageChops.difference(full, pil).getbbox() is None
    unjoined = Image.new("L", (420, 80), 0)
    ImageDraw.Draw(unjoined).text(
        (10, 60), text, font=font, fill=255, anchor="ls", features=["-init", "-medi", "-fina"]
    )
    assert ImageChops.difference(full, unjoined).getbbox() is not None

    first, w1 = ours(text.split()[0])
    word = first.crop((10, 0, 10 + round(w1), 80))

    def mean_diff(x0: float) -> float:
        part = full.crop((round(x0), 0, round(x0) + word.width, 80))
        hist = ImageChops.difference(part, word).histogram()
        return sum(i * n for i, n in enumerate(hist)) / (word.width * 80)

    # the first word matches the right end (up to sub-pixel blur) far better than the left end
    assert mean_diff(10 + width - w1) * 5 < mean_diff(10)


def test_thai_marks_sit_on_their_base_letters():
    text = "กี่"  # base letter + vowel above + tone mark
    ((run, face),) = font_runs(text)
    buf = shape(run, face)
    advances = [p.x_advance for p in buf.glyph_positions]
    assert advances[0] > 0 and advances[1:] == [0, 0]
    font = pil_font(face, 40)
    assert font.getlength(text) == pytest.approx(font.getlength("ก"))


def test_character_no_font_has_raises():
    with pytest.raises(MissingGlyphError, match=r"U\+0378"):
        font_runs("abc\u0378")


def test_legibility_reports_tofu():
    net = Network.from_lines({"L": ["Alpha", "Beta"]}, positions={"Alpha": (0, 0), "Beta": (1, 0)})
    result = render_map(net)
    assert check_legibility(result.placed, net) == []
    lab = result.placed.labels["Alpha"]
    latin_only = font_runs("Alpha")[0][1]
    bad_block = measure("Alpha", 20)
    from dataclasses import replace

    run = replace(bad_block.runs[0], text="Alpha西", face=latin_only)
    lab.block = replace(bad_block, runs=(run,))
    assert any("no glyph for '西'" in p for p in check_legibility(result.placed, net))
