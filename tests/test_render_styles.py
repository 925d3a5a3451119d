"""Map styles: clean draws the plain map; realistic and hard add label variants,
bilingual labels, scenery and a canvas sized to the system while every legibility check
still holds."""

from __future__ import annotations

import hashlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageChops

from _examples import examples
from maptab.core.matching import station_match
from maptab.core.network import Network
from maptab.generate.synth import METRO_LANGUAGE_WEIGHTS
from maptab.render import check_legibility, place_map, render_map
from maptab.render.draw import to_image
from maptab.render.geometry import Box, LabelBox, PlacedGeometry
from maptab.render.labels import ink_boxes
from maptab.render.style import (
    LOOKS,
    MIN_SIDE_PX,
    STATION_CANVAS_PX,
    STYLES,
    TARGET_SIZE,
    StyleError,
    bilingual,
    delta_e,
    get_style,
    indistinct_pairs,
    label_variant,
    line_looks,
    romanise,
    station_texts,
    target_size,
)
from maptab.render.text import can_stack, column, footprint, measure, oriented
from samplenets import LANGS, sample_metro, sample_scenic


def digest(net: Network, style: str | None) -> str:
    return hashlib.sha256(render_map(net, style=style).image.tobytes()).hexdigest()


def test_clean_is_the_default_and_adds_nothing():
    net = sample_metro(30, lang="en", seed=3)
    assert digest(net, None) == digest(net, "clean")
    placed = place_map(net)
    assert placed.style == "clean"
    assert not placed.scenery and not placed.scenery_labels and not placed.secondary
    assert all(placed.labels[s].block.text == net.label(s) for s in net.vertices)


def test_unknown_style_is_a_clear_error():
    with pytest.raises(StyleError, match="unknown map style 'fancy'"):
        get_style("fancy")


@pytest.mark.parametrize("style", ["realistic", "hard"])
@pytest.mark.parametrize("lang", ["en", "zh", "ja", "ar", "ru", "th"])
def test_styled_metro_maps_stay_legible_and_deterministic(style, lang):
    net = sample_metro(60, lang=lang, seed=2)
    result = render_map(net, style=style)
    assert check_legibility(result.placed, net) == []
    assert result.placed.scenery and result.placed.style == style
    again = render_map(net, style=style)
    assert again.image.tobytes() == result.image.tobytes()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_styled_scenic_maps_are_textured_and_legible(lang):
    net = sample_scenic(15, lang=lang, seed=4)
    placed = place_map(net, style="realistic")
    assert check_legibility(placed, net) == []
    assert placed.texture is not None
    assert place_map(net).texture is None


def test_scenic_maps_are_paper_sized():
    tw, th = TARGET_SIZE["travelmap"]
    for seed in range(3):
        placed = place_map(sample_scenic(20, seed=seed), style="realistic")
        assert abs(placed.width / tw - 1) <= 0.15, (seed, placed.width)
        assert abs(placed.height / th - 1) <= 0.15, (seed, placed.height)


@pytest.mark.parametrize("style", ["realistic", "hard"])
def test_metro_canvas_follows_the_station_count(style):
    areas = []
    for n in (20, 80, 200):
        net = sample_metro(n, seed=1)
        tw, th = target_size(net)
        per_station = tw * th / n
        assert min(tw, th) >= MIN_SIDE_PX - 1e-6
        if min(tw, th) > MIN_SIDE_PX + 1:  # the floor did not lift it
            assert 0.85 * STATION_CANVAS_PX <= per_station <= 1.2 * STATION_CANVAS_PX
        placed = place_map(net, style=style)
        # the canvas is the target, or the drawing where that came out at most 10% larger
        assert tw - 1 <= placed.width <= 1.1 * tw + 1 and th - 1 <= placed.height <= 1.1 * th + 1
        areas.append(placed.width * placed.height)
    assert areas[0] < areas[1] < areas[2]
    assert areas[0] < 0.4 * 4100 * 3700  # a small system no longer gets a paper-size canvas
    # clean keeps the laid-out size
    net = sample_metro(20, seed=1)
    assert place_map(net).width * place_map(net).height != areas[0]


@pytest.mark.parametrize("lang", LANGS)
def test_label_variants_share_similarity_and_mapping_back(lang):
    net = sample_metro(80, lang=lang, seed=5)
    for style in ("realistic", "hard"):
        placed = place_map(net, style=style)
        texts = station_texts(net, STYLES[style])
        changed = [s for s in net.vertices if placed.labels[s].block.text != net.label(s)]
        share = len(changed) / len(net.vertices)
        assert 0.2 - 1 / len(net.vertices) <= share <= 0.4 + 1 / len(net.vertices), (lang, share)
        for s in net.vertices:
            lab = placed.labels[s]
            assert lab.owner == s  # a drawn label maps back to its station
            assert lab.block.text == texts[s]
            assert station_match(s, lab.block.text)


@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1))
@settings(max_examples=examples(200), deadline=None)
def test_a_variant_is_never_too_far_from_its_name(name):
    v = label_variant(name, "en")
    assert v is None or (v != name and station_match(name, v))


def test_variants_look_like_map_labels():
    assert label_variant("West 25th Street", "en") == "W. 25th St"
    assert label_variant("西直门站", "zh") == "西直门"
    assert label_variant("Площадь Революции", "ru") == "пл. Революции"


def test_bilingual_maps_share_and_second_lines():
    # share over a language mix drawn like the builder's metro maps
    langs = list(METRO_LANGUAGE_WEIGHTS)
    weights = list(METRO_LANGUAGE_WEIGHTS.values())
    import random

    rng = random.Random(0)
    maps = []
    for i in range(300):
        lang = rng.choices(langs, weights)[0]
        net = Network.from_lines({"L": ["A", "B"]}, map_id=f"m{i}")
        net.meta["language"] = lang
        maps.append(net)
    share = sum(bilingual(n, STYLES["realistic"]) for n in maps) / len(maps)
    assert share >= 0.3, share
    assert not any(bilingual(n, STYLES["clean"]) for n in maps)
    # a bilingual map gets a romanised second line under most labels, all legible
    net = next(
        n
        for n in (sample_metro(40, lang="zh", seed=s) for s in range(20))
        if bilingual(n, STYLES["realistic"])
    )
    placed = place_map(net, style="realistic")
    assert len(placed.secondary) >= 0.7 * len(net.vertices)
    for s, lab in placed.secondary.items():
        assert lab.block.text == romanise(net.label(s), "zh") and lab.block.text.isascii()
    assert check_legibility(placed, net) == []


def test_romanisers():
    assert romanise("西直门站", "zh") == "Xizhimen"
    assert romanise("강남역", "ko") == "Gangnam"
    assert romanise("Арбат", "ru") == "Arbat"
    assert romanise("Paris", "fr") is None


@given(st.lists(st.tuples(*[st.integers(0, 255)] * 3), min_size=2, max_size=14))
@settings(max_examples=examples(100), deadline=None)
def test_line_looks_keep_close_colours_apart(rgbs):
    colors = {f"L{i}": "#{:02X}{:02X}{:02X}".format(*c) for i, c in enumerate(rgbs)}
    looks = line_looks(colors)
    # brute force: every close pair differs in look, as long as there are looks left
    close = {a: sum(delta_e(colors[a], colors[b]) < 15 for b in colors if b != a) for a in colors}
    if max(close.values()) < len(LOOKS):
        assert indistinct_pairs(colors, looks) == []


def test_many_line_maps_have_no_indistinct_lines():
    net = sample_metro(200, lang="en", seed=1)
    lines = net.line_names
    # twelve shades of red and blue: ΔE below 15 between neighbours
    shades = [f"#{200 - 6 * i:02X}{20 + 3 * i:02X}{30 + 4 * i:02X}" for i in range(len(lines))]
    net.meta["line_colors"] = dict(zip(lines, shades, strict=True))
    placed = place_map(net, style="realistic")
    by_line = {}
    for s in placed.strokes:
        by_line.setdefault(s.key, (s.color, s.dash, round(s.width, 3)))
    pairs = [
        (a, b)
        for i, a in enumerate(lines)
        for b in lines[i + 1 :]
        if delta_e(by_line[a][0], by_line[b][0]) < 15 and by_line[a][1:] == by_line[b][1:]
    ]
    assert len(lines) >= 2 and pairs == []


def test_legibility_check_sees_second_lines_and_scenery_texts():
    net = next(
        n
        for n in (sample_metro(40, lang="zh", seed=s) for s in range(20))
        if bilingual(n, STYLES["realistic"])
    )
    placed = place_map(net, style="realistic")
    assert check_legibility(placed, net) == []
    s, second = next(iter(placed.secondary.items()))
    other = next(t for t in net.vertices if t != s)
    second.box = placed.labels[other].box  # a second line on another station's label
    assert any("secondary label" in p and "overlaps" in p for p in check_legibility(placed, net))
    street = placed.scenery_labels[0]
    street.box = street.box.__class__(-50, -50, street.box.x1 - street.box.x0 - 50, 0)
    assert any("scenery label" in p and "runs off" in p for p in check_legibility(placed, net))


@pytest.mark.slow
def test_build_passes_the_style_to_the_renderer(tmp_path):
    import json

    from PIL import Image

    from maptab.generate.pipeline import PRESETS, Preset, build_benchmark

    assert PRESETS["paper"].map_style == "realistic" and PRESETS["mini"].map_style == "clean"
    tiny = Preset("tiny", 1, 1, 4, 4, q_min=2, sizes=("small",))
    from maptab.render.images import DatasetImager

    manifest = build_benchmark(
        tmp_path / "ds", preset=tiny, seed=3, map_style="hard", renderer=DatasetImager()
    )
    assert manifest["options"]["map_style"] == "hard"
    for folder in sorted((tmp_path / "ds" / "maps").iterdir()):
        net = Network.from_dict(json.loads((folder / "network.json").read_text("utf-8")))
        assert net.meta["render_style"] == "hard"
        placed = place_map(net)  # the recorded style: the geometry the image was painted from
        assert placed.style == "hard"
        assert Image.open(folder / "image.png").size == (placed.width, placed.height)
    with pytest.raises(StyleError):
        build_benchmark(
            tmp_path / "bad", preset=tiny, seed=3, map_style="fancy", renderer=DatasetImager()
        )


def test_turned_labels_stand_on_level_track_and_are_drawn_turned():
    from maptab.generate.synth import MetroSpec, synth_metro

    net = synth_metro(MetroSpec(8, 90, language="en"), 7, "look-en")
    result = render_map(net, style="realistic", fmt="svg")
    turned = [lab for lab in result.placed.labels.values() if lab.angle == 90]
    assert turned and check_legibility(result.placed, net) == []
    for lab in turned:
        b = lab.box
        assert b.y1 - b.y0 > b.x1 - b.x0  # a tall box: the text runs upwards
        ink = result.image.crop((round(b.x0), round(b.y0), round(b.x1), round(b.y1))).convert("L")
        assert ink.getextrema()[0] < 100  # dark text is drawn inside the turned box
        assert lab.owner not in result.placed.secondary
    assert result.svg.count("rotate(-90") == len(turned)
    assert not any(lab.angle for lab in place_map(net).labels.values())  # clean: none
    # hard metro maps turn labels ±45° at most, never a quarter turn
    assert not any(abs(lab.angle) == 90 for lab in place_map(net, style="hard").labels.values())


def _ink_box(lab: LabelBox, background: str = "#FFFFFF") -> tuple[int, int, int, int] | None:
    """The bounding box of the pixels painted for ``lab`` alone (in map coordinates)."""
    m = 40
    x0, y0 = math.floor(lab.box.x0) - m, math.floor(lab.box.y0) - m
    moved = LabelBox(
        lab.owner,
        lab.block,
        Box(lab.box.x0 - x0, lab.box.y0 - y0, lab.box.x1 - x0, lab.box.y1 - y0),
        lab.kind,
        halo=lab.halo,
    )
    w = math.ceil(lab.box.x1 - lab.box.x0) + 2 * m
    h = math.ceil(lab.box.y1 - lab.box.y0) + 2 * m
    alone = PlacedGeometry(w, h, "metromap", background, 9.0, labels={lab.owner: moved})
    img = to_image(alone)
    bbox = ImageChops.difference(img, Image.new("RGB", img.size, background)).getbbox()
    return None if bbox is None else (bbox[0] + x0, bbox[1] + y0, bbox[2] + x0, bbox[3] + y0)


def _oriented(placed: PlacedGeometry) -> list[LabelBox]:
    return [lab for lab in placed.labels.values() if lab.angle or lab.vertical]


@pytest.mark.parametrize(
    ("lang", "scenario"), [("zh", "metro"), ("ja", "metro"), ("en", "metro"), ("zh", "scenic")]
)
def test_vertical_and_diagonal_labels_cover_their_ink_and_stay_attached(lang, scenario):
    net = (
        sample_metro(90, lang=lang, seed=6)
        if scenario == "metro"
        else sample_scenic(25, lang=lang, seed=6)
    )
    placed = place_map(net, style="hard")
    assert check_legibility(placed, net) == []
    labels = _oriented(placed)
    kinds = {("vertical" if lab.vertical else lab.angle) for lab in labels}
    assert {45, -45} <= kinds or scenario == "scenic"
    assert ("vertical" in kinds) == (lang in ("zh", "ja"))  # only CJK text is stacked
    assert labels
    for lab in labels:
        ink = _ink_box(lab)
        assert ink is not None  # something is drawn
        b = lab.box
        # the placer's box holds every painted pixel (2 px for anti-aliasing and whole-pixel pasting)
        assert b.x0 - 2 <= ink[0] and b.y0 - 2 <= ink[1], (lab.block.text, b, ink)
        assert ink[2] <= b.x1 + 2 and ink[3] <= b.y1 + 2, (lab.block.text, b, ink)
        # attached: the ink starts within three font sizes of its own station's mark
        mark = placed.stations[lab.owner]
        near = min(_distance(mark.center, c) for c in ink_boxes(b, lab.block))
        assert near <= mark.radius + mark.outline + 3 * lab.block.size, (lab.block.text, near)
        # clear of the lines: no stroke crosses the ink of a turned or stacked label
        for s in placed.strokes:
            for p, q in zip(s.points, s.points[1:], strict=False):
                assert not any(
                    c.inflate(s.width / 2).hits_segment(p, q) for c in ink_boxes(b, lab.block)
                )
        if lab.vertical:
            assert can_stack(lab.block.text) and b.y1 - b.y0 > b.x1 - b.x0
            assert lab.owner not in placed.secondary


def _distance(p: tuple[float, float], b: Box) -> float:
    dx = max(b.x0 - p[0], 0.0, p[0] - b.x1)
    dy = max(b.y0 - p[1], 0.0, p[1] - b.y1)
    return math.hypot(dx, dy)


def test_orientation_shares_follow_the_style():
    net = sample_metro(200, lang="zh", seed=8)
    counts = {}
    for style in ("clean", "realistic", "hard"):
        placed = place_map(net, style=style)
        counts[style] = sum(lab.vertical for lab in placed.labels.values())
        angles = [lab.angle for lab in placed.labels.values() if lab.angle]
        assert (style == "clean") == (not angles and counts[style] == 0)
    assert 0 < counts["realistic"] < counts["hard"]
    assert counts["hard"] <= 0.3 * len(net.vertices) + 3 * math.sqrt(len(net.vertices))


def test_oriented_labels_render_deterministically_in_png_and_svg():
    net = sample_metro(60, lang="zh", seed=9)
    a = render_map(net, style="hard", fmt="svg")
    b = render_map(net, style="hard", fmt="svg")
    assert a.image.tobytes() == b.image.tobytes() and a.svg == b.svg
    vertical = [lab for lab in a.placed.labels.values() if lab.vertical]
    diagonal = [lab for lab in a.placed.labels.values() if lab.angle in (45, -45)]
    assert vertical and diagonal
    assert a.svg.count("rotate(-45 ") + a.svg.count("rotate(45 ") == len(diagonal)


def test_text_footprints():
    block = measure("Market Street", 20, "en")
    assert footprint(block) == (block.width, block.height)
    assert footprint(oriented(block, angle=90)) == (block.height, block.width)
    w, h = footprint(oriented(block, angle=45))
    assert w == pytest.approx((block.width + block.height) / math.sqrt(2)) and w == pytest.approx(h)
    assert can_stack("西直门站") and not can_stack("西直门 A") and not can_stack("站")
    assert not can_stack("Arbat") and not can_stack("一" * 9)
    col = oriented(measure("西直门站", 20, "zh"), vertical=True)
    cells, width, height = column(col)
    assert [c.block.text for c in cells] == list("西直门站")
    assert footprint(col) == (width, height) and height > 4 * 20 * 0.9 and width < 1.3 * 20
    assert all(b.dy > a.dy for a, b in zip(cells, cells[1:], strict=False))
    with pytest.raises(ValueError):
        oriented(block, vertical=True)
