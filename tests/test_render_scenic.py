"""Scenic maps: spots, walk/drive styles, annotations on their edges."""

from __future__ import annotations

import math

import pytest

from maptab.core.network import Network
from maptab.render import check_legibility, render_map
from maptab.render.scenic import STYLES, annotation_text
from samplenets import sample_scenic


def scenic() -> Network:
    net = Network.from_edges(
        [("Lake", "Old Mill"), ("Old Mill", "Tower"), ("Tower", "Lake"), ("Tower", "Sea-View")],
        map_id="park",
        positions={"Lake": (0, 0), "Old Mill": (3, 0), "Tower": (1.5, 2), "Sea-View": (4, 3)},
    )
    net.meta["modes"] = {"Lake-Old Mill": "walk", "Old Mill-Tower": "drive", "Tower-Lake": "walk"}
    net.meta["annotations"] = {
        "Lake-Old Mill": {"kind": "time", "value": 12},
        "Tower-Old Mill": {"kind": "distance", "value": 3.4},  # written v-u: still found
    }
    return net


@pytest.fixture(scope="module")
def park():
    net = scenic()
    return net, render_map(net)


def test_scenic_map_is_legible(park):
    net, result = park
    assert check_legibility(result.placed, net) == []
    assert result.placed.labels["Sea_View"].block.text == "Sea-View"


def test_walk_and_drive_are_styled_apart(park):
    _, result = park
    style = {s.key: s for s in result.placed.strokes}
    assert style["Lake-Old Mill"].dash is not None
    assert style["Lake-Old Mill"].color == STYLES["walk"][0]
    assert style["Old Mill-Tower"].dash is None
    assert style["Old Mill-Tower"].color == STYLES["drive"][0]
    assert style["Tower-Sea_View"].color == STYLES[None][0]
    assert {e.name for e in result.placed.legend} == {"walk", "drive", "path"}


def _distance_to_segment(p, a, b):
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    t = max(0.0, min(1.0, ((p[0] - ax) * dx + (p[1] - ay) * dy) / (dx * dx + dy * dy)))
    return math.dist(p, (ax + t * dx, ay + t * dy))


def test_annotations_sit_on_their_edges(park):
    _, result = park
    notes = result.placed.annotations
    assert {k: v.block.text for k, v in notes.items()} == {
        "Lake-Old Mill": "12 min",
        "Old Mill-Tower": "3.4 km",
    }
    for name, lab in notes.items():
        (stroke,) = [s for s in result.placed.strokes if s.key == name]
        assert _distance_to_segment(lab.box.center, *stroke.points) < 1.0


@pytest.mark.parametrize(
    ("note", "text"),
    [
        ({"kind": "time", "value": 7}, "7 min"),
        ({"kind": "distance", "value": 1.25}, "1.25 km"),
        ({"kind": "distance", "value": 800, "unit": "m"}, "800 m"),
        ({"kind": "time", "value": 1.5, "unit": "h"}, "1.5 h"),
        ({"kind": "time", "value": "about 5 min"}, "about 5 min"),
    ],
)
def test_annotation_text(note, text):
    assert annotation_text(note) == text


@pytest.mark.parametrize("lang", ["en", "ar", "th", "ja"])
def test_sample_scenic_maps_are_legible(lang):
    net = sample_scenic(14, lang=lang, seed=1)
    result = render_map(net)
    assert check_legibility(result.placed, net) == []
    assert result.placed.annotations  # the sample annotates about half its paths
