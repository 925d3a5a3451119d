"""The reading-difficulty meter: matching rules on hand-made detections, then the
real OCR engine on a rendered map, the CLI, and MapTab's real Cleveland image."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as hs
from PIL import Image
from typer.testing import CliRunner

from maptab.cli import app
from maptab.core.network import Network
from maptab.render import render_map
from maptab.render.ocr import (
    JOIN_OVERLAP,
    Detection,
    StationLabel,
    joins,
    measure,
    name_variants,
    normalise,
    ocr_available,
    printed_name,
    read_image,
    similarity,
    station_labels,
    tiles,
)

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
needs_ocr = pytest.mark.skipif(
    not ocr_available(), reason="no OCR engine (pip install 'maptab[ocr]')"
)


def st(name: str, *more: str, pos: tuple[float, float] | None = None) -> StationLabel:
    return StationLabel(name, tuple(v for n in (name, *more) for v in name_variants(n)), pos)


def test_normalise_and_variants():
    assert normalise("W. 25th - Ohio City") == "w25thohiocity"
    assert normalise("ＡＢＣ　站") == "abc站"
    assert name_variants("Palmetto Station") == ("Palmetto Station", "Palmetto")
    assert name_variants("大连北站") == ("大连北站", "大连北")
    assert name_variants("站") == ("站",)  # a bare suffix is not dropped to nothing
    assert similarity("Hopkins Airport", "hopkins-airport") == 1.0


def test_recall_counts_exact_variant_split_and_contained_labels():
    dets = [
        Detection("Palmetto", (0, 0, 80, 20)),  # variant without "Station"
        Detection("West Boulevard-", (200, 0, 320, 20)),  # a label split over two lines
        Detection("Cudell", (230, 22, 290, 42)),
        Detection("Tri-C Campus District", (400, 0, 560, 20)),  # two labels read as one
        Detection("Lake Erie", (600, 0, 680, 20)),  # map text that is no station
        Detection("x", (700, 0, 705, 20)),  # one character: not counted as a false detection
    ]
    stations = [
        st("Palmetto Station"),
        st("West Boulevard-Cudell"),
        st("Campus District"),
        st("Hopkins Airport"),
    ]
    r = measure(dets, stations)
    assert (r.stations, r.found, r.recall) == (4, 3, 0.75)
    assert r.missing == ["Hopkins Airport"]
    assert r.detections == 6 and r.false_detections == 1
    assert r.location_error() is None  # no positions known


def test_two_line_label_joins_when_its_boxes_overlap_a_few_pixels():
    top = (100, 100, 220, 124)  # line height 24: up to 0.3 · 24 = 7.2 px of overlap joins
    assert joins(top, (110, 120, 200, 144))  # 4 px overlap, columns overlap
    assert joins(top, (110, 124, 200, 148))  # touching
    assert joins(top, (110, 140, 200, 164))  # a 16-px gap (≤ 0.8 · 24)
    assert not joins(top, (110, 116, 200, 140))  # 8 px overlap: more than 0.3 · 24
    assert not joins(top, (110, 170, 200, 194))  # far below
    assert not joins(top, (230, 120, 300, 144))  # below but in other columns
    assert not joins(top, (400, 100, 520, 124))  # side by side, far apart on the line
    assert not joins(top, (180, 100, 300, 124))  # side by side, overlapping columns
    assert not joins((110, 120, 200, 144), top)  # the upper line never continues the lower
    dets = [Detection("Kuala", (100, 100, 160, 124)), Detection("Lumpur", (95, 121, 170, 145))]
    r = measure(dets, [st("Kuala Lumpur")])
    assert r.found == 1 and r.stray_detections == 0


def _joins_brute(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    """The join rule, stated on the pixel rows and columns of integer boxes."""
    rows_a, rows_b = range(a[1], a[3]), range(b[1], b[3])
    h, s = max(len(rows_a), len(rows_b)), min(len(rows_a), len(rows_b))
    mid_a, mid_b = sum(rows_a) / len(rows_a), sum(rows_b) / len(rows_b)
    if abs(mid_a - mid_b) < h / 2 and b[0] >= a[2] and len(range(a[2], b[0])) <= h:
        return True  # on a's line, starting at most h columns right of it
    shared_cols = set(range(a[0], a[2])) & set(range(b[0], b[2]))
    rows_above = len(range(b[1], a[3]))  # b's rows above a's bottom edge
    rows_between = len(range(a[3], b[1]))  # empty rows between a and b
    return bool(shared_cols) and rows_above <= JOIN_OVERLAP * s and rows_between <= 0.8 * h


_coord = hs.integers(0, 60)
_size = hs.integers(1, 30)


@given(_coord, _coord, _size, _size, _coord, _coord, _size, _size)
def test_join_rule_matches_its_pixel_statement(ax, ay, aw, ah, bx, by, bw, bh):
    a, b = (ax, ay, ax + aw, ay + ah), (bx, by, bx + bw, by + bh)
    assert joins(a, b) == _joins_brute(a, b), (a, b)


def test_disambiguated_names_match_their_printed_form_when_unambiguous():
    assert printed_name("125 St Station (4/5/6)") == "125 St Station"
    assert printed_name("Main (2)") == "Main"
    assert printed_name("四方河（省中医院）站") == "四方河（省中医院）站"  # bracket not trailing
    assert printed_name("(2)") == "(2)"
    net = Network.from_lines(
        {
            "L": ["125 St Station (4/5/6)", "Main St (north line)", "Main St (south line)"],
            "M": ["Park (line M)", "Park", "Zoo"],
        }
    )
    names = {lab.station: lab.names for lab in station_labels(net)}
    assert names["125 St Station (4/5/6)"] == ("125 St Station (4/5/6)", "125 St Station", "125 St")
    assert names["Main St (north line)"] == ("Main St (north line)",)  # "Main St" names two
    assert names["Park (line M)"] == ("Park (line M)",)  # and "Park" is another station
    dets = [Detection("125 St", (0, 0, 60, 20)), Detection("Main St", (0, 100, 60, 120))]
    r = measure(dets, station_labels(net))
    assert r.found == 1 and r.missing[:2] == ["Main St (north line)", "Main St (south line)"]
    assert r.stray_detections == 1  # "Main St" is credited to neither homonym


def test_stray_share_counts_detections_in_no_matching_text():
    dets = [
        Detection("Palmetto", (0, 0, 80, 20)),
        Detection("Okee-", (200, 0, 260, 20)),  # joined with the next line: not stray
        Detection("chobee", (200, 18, 270, 38)),
        Detection("Lake Erie", (600, 0, 680, 20)),  # stray
        Detection("x", (700, 0, 705, 20)),  # stray (but not a false detection: one character)
        Detection("Palmeto", (900, 900, 970, 920)),  # a second reading: matches, not stray
    ]
    r = measure(dets, [st("Palmetto Station"), st("Okeechobee"), st("Hialeah")])
    assert (r.found, r.detections, r.stray_detections) == (2, 6, 2)
    assert r.stray_share == pytest.approx(2 / 6)
    assert r.to_dict()["stray_share"] == pytest.approx(0.3333)
    assert measure([], [st("A")]).stray_share == 0.0


def test_threshold_is_the_fuzzy_boundary():
    # "abcdefghij" vs "abcdefghxy": ratio 0.8 exactly -> found; one more change -> not
    assert similarity("abcdefghij", "abcdefghxy") == pytest.approx(0.8)
    assert measure([Detection("abcdefghxy", (0, 0, 9, 9))], [st("abcdefghij")]).found == 1
    assert measure([Detection("abcdefgwxy", (0, 0, 9, 9))], [st("abcdefghij")]).found == 0
    assert measure([Detection("abcdefgwxy", (0, 0, 9, 9))], [st("abcdefghij")], threshold=0.7).found


def test_location_error_uses_the_nearest_matching_text():
    dets = [Detection("Alpha", (100, 100, 150, 120)), Detection("Alpha", (900, 900, 950, 920))]
    r = measure(dets, [st("Alpha", pos=(90.0, 110.0))])
    assert r.location_errors == [10.0]
    assert r.false_detections == 1  # the far copy matched nothing it was used for


def test_readable_share_counts_latin_and_chinese_names():
    from maptab.render.ocr import readable_share

    net = Network.from_lines({"L": ["Main St", "西直门", "Арбат", "新宿駅", "しんじゅく"]})
    assert readable_share(net) == pytest.approx(3 / 5)  # kana and Cyrillic are not read


def test_tiles_overlap_and_their_cores_partition_the_image():
    for w, h in ((4000, 1000), (1670, 1921), (500, 400), (1601, 3203)):
        ts = tiles(w, h, tile=1600, overlap=320)
        for (x0, y0, x1, y1), (c0, d0, c1, d1) in ts:
            assert 0 <= x0 <= c0 < c1 <= x1 <= w and 0 <= y0 <= d0 < d1 <= y1 <= h
        area = sum((c1 - c0) * (d1 - d0) for _, (c0, d0, c1, d1) in ts)
        assert area == pytest.approx(w * h)  # cores cover the image exactly once
        xs = sorted({t[0] for t, _ in ts})
        assert all(b - a <= 1600 - 320 for a, b in zip(xs, xs[1:], strict=False))
    assert [t for t, _ in tiles(500, 400)] == [(0, 0, 500, 400)]


def test_text_in_an_overlap_is_read_once():
    calls = []
    lefts = [0, 70]  # the two tiles of a 1670-px-wide image start at x = 0 and x = 70

    def engine(arr, use_cls=False):  # a fake engine: one word at x = 900 of the full image
        x = 900 - lefts[len(calls)]
        calls.append(arr.shape)
        return [[[[x, 50], [x + 60, 50], [x + 60, 70], [x, 70]], "Word", 0.9]], None

    dets = read_image(Image.new("RGB", (1670, 600), "white"), engine=engine)
    assert len(calls) == 2 and [d.text for d in dets] == ["Word"]
    assert dets[0].box == (900, 50, 960, 70)


def _small_map() -> Network:
    names = ["Harbour Gate", "Mill Road", "Queen Square", "Oakfield", "Station Park", "Riverside"]
    cross = ["Northgate", "Queen Square", "Bellmont", "Kingsbury"]
    pos = {n: (i * 2.0, 0.0) for i, n in enumerate(names)}
    pos.update({"Northgate": (4.0, 2.0), "Bellmont": (4.0, -2.0), "Kingsbury": (4.0, -4.0)})
    return Network.from_lines({"Red": names, "Blue": cross}, map_id="small", positions=pos)


@pytest.mark.slow
@needs_ocr
def test_ocr_reads_a_clean_rendered_map():
    net = _small_map()
    result = render_map(net)
    r = measure(read_image(result.image), station_labels(net, result.placed))
    assert r.recall >= 0.9, r.missing
    assert r.location_error(0.9) is not None and r.location_error(0.9) < 40
    blank = Image.new("RGB", result.image.size, "white")
    assert measure(read_image(blank), station_labels(net, result.placed)).found == 0


@pytest.mark.slow
@needs_ocr
def test_cli_reports_recall_for_a_map_folder(tmp_path):
    net = _small_map()
    folder = tmp_path / "small"
    folder.mkdir()
    (folder / "network.json").write_text(json.dumps(net.to_dict()), encoding="utf-8")
    render_map(net).image.save(folder / "image.png")
    res = CliRunner().invoke(app, ["legibility", str(folder), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)  # the progress bar goes to stderr
    assert data["stations"] == 9 and data["recall"] >= 0.9
    assert data["location_error_p50_px"] is not None  # geometry re-placed: positions known


def test_cli_rejects_bad_input_in_one_line(tmp_path):
    bad = tmp_path / "x.png"
    bad.write_text("not an image")
    meta = tmp_path / "m.json"
    meta.write_text(json.dumps({"L": ["A", "B"]}), encoding="utf-8")
    for args in (["legibility", str(bad)], ["legibility", str(bad), str(meta)]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 1
        assert "error:" in res.output and "Traceback" not in res.output
        assert len(res.output.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.conformance
@needs_ocr
def test_real_cleveland_image_is_read_partly():
    base = SHARED / "maptab-sample" / "metromap"
    if not base.is_dir():
        pytest.skip("../shared/data/maptab-sample is absent")
    from maptab.core.tables import read_network

    tab = base / "tabulars" / "america"
    net = read_network(tab / "cleveland_edge.csv", tab / "cleveland_vertex.csv")
    r = measure(
        read_image(Image.open(base / "images" / "america" / "cleveland.png")),
        station_labels(net),
    )
    # the map writes "W.25th - Ohio City" for the table's "West 25th_Ohio City" and so on:
    # most labels are read, the renamed ones are not
    assert r.stations == len(net.vertices)
    assert 0.5 <= r.recall < 0.9, r.to_dict()
    assert "Hopkins Airport" in r.missing  # "Cleveland Hopkins International Airport" on the map


@pytest.mark.slow
@needs_ocr
def test_realistic_style_reads_harder_than_clean():
    from maptab.generate.synth import MetroSpec, synth_metro

    net = synth_metro(MetroSpec(4, 36, language="en"), 11, "ocr-style")
    recall = {}
    for style in ("clean", "realistic"):
        result = render_map(net, style=style)
        dets = read_image(result.image)
        recall[style] = measure(dets, station_labels(net, result.placed)).recall
        # the drawn variants are what the map shows: given them, the reader finds the labels
        drawn = measure(dets, station_labels(net, result.placed, drawn_text=True))
        assert drawn.recall >= 0.85, (style, drawn.missing)
    assert recall["clean"] >= 0.9
    assert 0.5 <= recall["realistic"] < recall["clean"], recall


def _one_label(text: str, lang: str, *, angle: int = 0, vertical: bool = False) -> Image.Image:
    """A white image with one station label drawn as the renderer draws it."""
    from maptab.render.draw import to_image
    from maptab.render.geometry import Box, LabelBox, PlacedGeometry
    from maptab.render.text import footprint, measure, oriented

    block = oriented(measure(text, 30, lang), angle=angle, vertical=vertical)
    w, h = footprint(block)
    lab = LabelBox(text, block, Box(60, 60, 60 + w, 60 + h))
    placed = PlacedGeometry(round(w) + 120, round(h) + 120, "metromap", "#FFFFFF", 9.0)
    placed.labels[text] = lab
    return to_image(placed)


@needs_ocr
@pytest.mark.parametrize(
    ("text", "lang", "angle", "vertical", "cls"),
    [
        ("西直门站", "zh", 0, True, False),  # stacked CJK: the reader turns tall lines itself
        ("Queen Square", "en", 45, False, False),  # the detector's boxes follow the slant
        ("Mill Road", "en", -45, False, False),
        ("Market Street", "en", 90, False, True),  # a quarter turn needs the angle classifier
    ],
)
def test_reader_reads_turned_diagonal_and_vertical_labels(text, lang, angle, vertical, cls):
    img = _one_label(text, lang, angle=angle, vertical=vertical)
    dets = read_image(img, angle_classifier=cls)
    assert measure(dets, [st(text)]).found == 1, [d.text for d in dets]


@pytest.mark.parametrize("flag", [[], ["--no-progress"]])
def test_cli_shows_progress_while_reading_unless_told_not_to(tmp_path, monkeypatch, flag):
    """OCR reads a big map tile by tile for minutes: a bar on stderr counts the tiles (and
    leaves the JSON on stdout alone); ``--no-progress`` silences it."""
    from maptab.render import ocr

    tiles_read = []

    def engine(tile, **options):
        tiles_read.append(tile.shape)
        return [], 0.0

    monkeypatch.setattr(ocr, "rapid_engine", lambda: engine)
    image = tmp_path / "map.png"
    Image.new("RGB", (2000, 900), "white").save(image)  # two tiles
    meta = tmp_path / "m.json"
    meta.write_text(json.dumps({"L": ["A", "B"]}), encoding="utf-8")
    res = CliRunner().invoke(app, ["legibility", str(image), str(meta), "--json", *flag])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["stations"] == 2 and data["stray_share"] == 0.0
    assert len(tiles_read) == 2
    if flag:
        assert res.stderr == ""
    else:
        assert "reading the map" in res.stderr and "3/3" in res.stderr  # loading + 2 tiles
