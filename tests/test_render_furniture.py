"""The ``hard`` metro style: real-map furniture (bundles, badges, title, legend, ticks, pills,
icons, other lines with their own stations) while every gold answer stays readable."""

from __future__ import annotations

import hashlib
import math

import pytest

from maptab.core.matching import station_match
from maptab.core.network import Network
from maptab.generate.synth import MetroSpec, synth_metro
from maptab.render import check_legibility, place_map, render_map
from maptab.render.furniture import (
    BADGE_SIZE,
    INTERCHANGE_SIZE,
    TITLE_SIZE,
    PillMark,
    Styled,
    TickMark,
    badge_code,
    badge_codes,
    distractor_names,
    is_distinct,
    rounded,
    termini,
)
from maptab.render.geometry import Box
from maptab.render.metro import FONT_PX
from maptab.render.ocr import normalise
from maptab.render.scenery import ICON_COLORS
from samplenets import sample_metro


def synth(lines: int, n: int, lang: str, seed: int) -> Network:
    spec = MetroSpec(lines, n, language=lang, shared_segments=min(3, lines - 1), branches=1)
    return synth_metro(spec, seed, f"hard-{lang}-{n}")


@pytest.fixture(scope="module")
def medium():
    net = synth(8, 100, "en", 2)
    return net, render_map(net, style="hard", fmt="svg")


def bundle_network(k: int, hub: str = "Delta") -> Network:
    """``k`` lines that all run Alpha–Bravo–Charlie–``hub``, then fan out to a terminus each."""
    lines = {f"Line {i + 1}": ["Alpha", "Bravo", "Charlie", hub, f"End {i + 1}"] for i in range(k)}
    positions = {"Alpha": (0.0, 0.0), "Bravo": (2.0, 0.0), "Charlie": (4.0, 0.0), hub: (6.0, 0.0)}
    for i in range(k):
        a = math.radians(-60 + 120 * i / max(1, k - 1))
        positions[f"End {i + 1}"] = (6.0 + 4 * math.cos(a), 4 * math.sin(a))
    net = Network.from_lines(lines, map_id=f"bundle-{k}", positions=positions)
    net.meta["language"] = "en"
    return net


@pytest.mark.parametrize(
    ("lines", "n", "lang"), [(3, 24, "en"), (6, 70, "zh"), (9, 140, "de"), (5, 60, "ru")]
)
def test_hard_maps_keep_every_gold_answer_readable(lines, n, lang):
    net = synth(lines, n, lang, 5)
    placed = place_map(net, style="hard")
    assert check_legibility(placed, net) == []
    assert set(placed.labels) == set(net.vertices) and set(placed.stations) == set(net.vertices)
    assert placed.lines_drawn() >= set(net.line_names)
    assert {e.name for e in placed.legend} == set(net.line_names)  # every line in the legend
    assert not placed.crowded


def test_many_lines_on_one_edge_are_one_bundle_with_pills():
    net = bundle_network(12)
    placed = place_map(net, style="hard")
    assert check_legibility(placed, net) == []
    for s in ("Bravo", "Charlie"):  # all twelve lines run straight through: a pill across them
        mark = placed.stations[s]
        assert isinstance(mark, PillMark)
        lw = placed.line_width
        ys = sorted(
            p[1] for st in placed.strokes for p in st.points if abs(p[0] - mark.center[0]) < 1
        )
        assert len({round(y) for y in ys}) >= 12  # twelve lines side by side
        assert mark.box.y0 <= min(ys) - lw / 2 and max(ys) + lw / 2 <= mark.box.y1


def test_the_type_follows_one_hierarchy(medium):
    net, result = medium
    placed = result.placed
    plain = [lab.block.size for s, lab in placed.labels.items() if not net.vertices[s].is_transfer]
    size = max(set(plain), key=plain.count)  # the station label size
    big = round(size * INTERCHANGE_SIZE)
    allowed = {size, big, max(9, round(size * 0.8)), max(9, round(big * 0.8))}
    sizes = {lab.block.size for lab in placed.labels.values()}
    assert sizes <= allowed, (sizes, allowed)  # no random per-label sizes
    interchange = [s for s, v in net.vertices.items() if v.is_transfer]
    badges = [b for k, b in placed.annotations.items() if k.startswith("badge:")]
    assert placed.title is not None and badges
    title = placed.title.block.size
    badge = max(b.block.size for b in badges)
    assert title > badge > max(placed.labels[s].block.size for s in interchange) > max(plain)
    assert title == pytest.approx(size * TITLE_SIZE, abs=1)
    assert badge == pytest.approx(size * BADGE_SIZE, abs=1)
    # interchange labels are bold, and no label is turned a quarter turn
    assert all(isinstance(placed.labels[s], Styled) and placed.labels[s].bold for s in interchange
               if not placed.labels[s].angle and not placed.labels[s].vertical)  # fmt: skip
    assert not any(abs(lab.angle) == 90 for lab in placed.labels.values())


def test_badges_sit_at_the_termini_and_show_the_line(medium):
    net, result = medium
    placed = result.placed
    codes = badge_codes(net.line_names)
    badges = {k: b for k, b in placed.annotations.items() if k.startswith("badge:")}
    assert len(badges) >= len(net.line_names)  # most termini carry one
    for key, b in badges.items():
        _, line, station = key.split(":", 2)
        assert station in termini(net, line)
        assert b.block.text == codes[line] and b.fill is not None
        mark = placed.stations[station]
        assert _distance(mark.center, b.box) <= 4 * placed.line_width + b.box.x1 - b.box.x0


def test_legend_lists_each_line_with_its_termini(medium):
    net, result = medium
    placed = result.placed
    notes = {k.split(":", 1)[1]: lab.block.text for k, lab in placed.annotations.items()
             if k.startswith("legend-note:")}  # fmt: skip
    for line in net.line_names:
        ends = termini(net, line)
        if ends:
            drawn = {s: placed.labels[s].block.text for s in ends}
            assert all(drawn[s] in notes[line] for s in ends[:3]), (line, notes.get(line))


def test_marks_of_several_kinds(medium):
    net, result = medium
    placed = result.placed
    kinds = {
        type(m).__name__ if type(m) is not type(None) else "" for m in placed.stations.values()
    }
    styles = {m.style for m in placed.stations.values()}
    assert styles & {"tick", "dot"} and styles & {"pill", "ring", "double"}, (kinds, styles)
    for s, m in placed.stations.items():
        if isinstance(m, TickMark):  # a tick points at its station's label
            lab = placed.labels[s]
            cx, cy = lab.box.center
            dot = (cx - m.center[0]) * m.normal[0] + (cy - m.center[1]) * m.normal[1]
            assert dot >= 0
            assert len(net.vertices[s].lines) == 1


def test_other_lines_never_name_a_table_station(medium):
    net, result = medium
    placed = result.placed
    others = [lab.block.text for lab in placed.scenery_labels if isinstance(lab, Styled)]
    assert len(others) >= 4  # regional rail and under-construction stations are drawn
    tables = [*net.vertices, *(net.label(s) for s in net.vertices)]
    tables += [lab.block.text for lab in placed.labels.values()]
    for name in others:
        for t in tables:
            assert not station_match(t, name) and not station_match(name, t), (name, t)


def test_other_lines_stops_and_icons_keep_clear_of_the_network(medium):
    net, result = medium
    placed = result.placed
    marks = [m.box for m in placed.stations.values()]
    stops = [sh for sh in placed.scenery if sh.kind == "ellipse" and sh.fill == "#FFFFFF"]
    icons = [sh for sh in placed.scenery if sh.kind == "rect" and sh.fill in ICON_COLORS.values()]
    assert stops and icons
    for sh in [*stops, *icons]:
        (x0, y0), (x1, y1) = sh.points[0], sh.points[1]
        box = Box(min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
        assert not any(box.overlaps(m) for m in marks)
        assert not any(box.overlaps(lab.box) for lab in placed.labels.values())


def test_an_airport_station_gets_an_airport_icon():
    net = bundle_network(3, hub="Delta Airport")
    placed = place_map(net, style="hard")
    lab = placed.labels["Delta Airport"]
    planes = [
        sh for sh in placed.scenery if sh.kind == "rect" and sh.fill == ICON_COLORS["airport"]
    ]
    assert planes
    (x0, y0), _ = planes[0].points
    assert abs(y0 - lab.box.y0) < lab.box.y1 - lab.box.y0  # beside the label, on its row
    assert min(abs(x0 - lab.box.x1), abs(x0 - lab.box.x0)) < 3 * (lab.box.y1 - lab.box.y0)


@pytest.mark.parametrize("lang", ["en", "zh", "de", "ja"])
def test_distractor_names_are_distinct_from_every_table_name(lang):
    net = synth(6, 80, lang, 3)
    names = distractor_names(net, 20, "test")
    assert len(names) >= 10 and len(set(names)) == len(names)
    for name in names:
        for s in net.vertices:
            assert not station_match(s, name) and not station_match(name, s)
            assert not station_match(net.label(s), name)


def test_is_distinct_rejects_near_names():
    taken = ["Union Square", "Kings Cross"]
    flat = [normalise(t) for t in taken]
    assert not is_distinct("Union Sq", taken, flat)
    assert not is_distinct("Union Square North", taken, flat)
    assert not is_distinct("King's Cross", taken, flat)
    assert is_distinct("Meadowbrook", taken, flat)


def test_same_map_same_bytes_and_different_maps_differ(medium):
    net, first = medium
    again = render_map(net, style="hard", fmt="svg")
    assert again.image.tobytes() == first.image.tobytes() and again.svg == first.svg
    other = synth(8, 100, "en", 3)
    assert render_map(other, style="hard").image.tobytes() != first.image.tobytes()


def test_svg_and_png_show_the_furniture(medium):
    net, result = medium
    svg = result.svg
    assert 'font-weight="bold"' in svg and "stroke-linecap" in svg
    assert svg.count("<rect") >= len(net.line_names)  # badges and legend badges
    digest = hashlib.sha256(result.image.tobytes()).hexdigest()
    assert digest == hashlib.sha256(render_map(net, style="hard").image.tobytes()).hexdigest()


def test_rounded_corners():
    path = [(0.0, 0.0), (100.0, 0.0), (100.0, 100.0)]
    out = rounded(path, 30.0)
    assert out[0] == path[0] and out[-1] == path[-1]
    assert (100.0, 0.0) not in out  # the corner is cut
    # every arc point lies 30 px from the arc's centre (70, 30)
    arc = [p for p in out[1:-1]]
    assert all(abs(math.dist(p, (70.0, 30.0)) - 30.0) < 1e-6 for p in arc)
    # a short segment limits the radius; a straight path is unchanged
    short = rounded([(0.0, 0.0), (10.0, 0.0), (10.0, 100.0)], 30.0)
    assert all(p[0] <= 10.0 + 1e-9 and p[0] >= 0 for p in short)
    assert rounded([(0.0, 0.0), (5.0, 0.0), (9.0, 0.0)], 30.0) == [
        (0.0, 0.0),
        (5.0, 0.0),
        (9.0, 0.0),
    ]


def test_badge_codes():
    assert badge_code("Line 3") == "3" and badge_code("3号线") == "3"
    assert badge_code("Linie 12") == "12" and badge_code("Red Line") == "RL"
    assert badge_code("Line 5A") == "5A" and badge_code("Azul") == "AZ"
    assert badge_codes(["Line 1", "Ring 1"]) == {"Line 1": "Line 1", "Ring 1": "Ring 1"}


def test_clean_and_realistic_get_no_furniture():
    net = sample_metro(40, lang="en", seed=4)
    for style in ("clean", "realistic"):
        placed = place_map(net, style=style)
        assert placed.title is None and not placed.annotations
        assert not any(isinstance(m, (TickMark, PillMark)) for m in placed.stations.values())
    hard = place_map(net, style="hard")
    assert hard.title is not None and hard.line_width > place_map(net).line_width * 1.3
    assert hard.labels[next(iter(net.vertices))].block.size >= FONT_PX * 0.8


def _distance(p, b) -> float:
    dx = max(b.x0 - p[0], 0.0, p[0] - b.x1)
    dy = max(b.y0 - p[1], 0.0, p[1] - b.y1)
    return math.hypot(dx, dy)
