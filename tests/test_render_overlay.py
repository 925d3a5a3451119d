"""Route overlay: highlighted path, numbered stops, transfers, invalid hops."""

from __future__ import annotations

import pytest

from maptab.core.network import Network
from maptab.render import draw_route, render_map
from maptab.render.overlay import ROUTE_COLORS, TRANSFER, WARNING, route_hops


def rgb(hexcolor: str) -> tuple[int, int, int]:
    return tuple(int(hexcolor[i : i + 2], 16) for i in (1, 3, 5))


@pytest.fixture(scope="module")
def metro():
    net = Network.from_lines(
        {"Red": ["A", "B", "C", "D"], "Blue": ["E", "C", "F"]},
        positions={"A": (0, 0), "B": (2, 0), "C": (4, 0), "D": (6, 0), "E": (4, 2), "F": (4, -2)},
    )
    return net, render_map(net)


def test_hops_know_adjacency(metro):
    net, _ = metro
    assert route_hops(net, ["A", "B", "Nowhere", "D"]) == [("A", "B", True), ("B", "D", False)]


@pytest.mark.parametrize("kind", ["gold", "pred"])
def test_route_is_drawn_in_its_colour_with_numbers(metro, kind):
    net, base = metro
    img = draw_route(net, base, ["A", "B", "C", "F"], transfers=["C"], kind=kind)
    assert img.size == base.image.size
    placed = base.placed
    # the middle of hop A–B is painted in the route colour
    (ax, ay), (bx, _) = placed.stations["A"].center, placed.stations["B"].center
    assert img.getpixel((round((ax + bx) / 2), round(ay))) == rgb(ROUTE_COLORS[kind][0])
    colors = {c for _, c in img.getcolors(1 << 20)}
    assert rgb(TRANSFER) in colors
    assert rgb(WARNING) not in colors


def test_invalid_hop_is_drawn_in_warning_colour(metro):
    net, base = metro
    img = draw_route(net, base, ["A", "E"], kind="pred")
    (ax, ay), (ex, ey) = base.placed.stations["A"].center, base.placed.stations["E"].center
    samples = [
        img.getpixel((round(ax + (ex - ax) * t), round(ay + (ey - ay) * t)))
        for t in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65)
    ]
    assert rgb(WARNING) in samples
    assert rgb(TRANSFER) not in {c for _, c in img.getcolors(1 << 20)}


def test_base_map_is_not_modified_and_kind_is_checked(metro):
    net, base = metro
    before = base.image.tobytes()
    draw_route(net, base, ["A", "B"])
    assert base.image.tobytes() == before
    with pytest.raises(ValueError, match="route kind"):
        draw_route(net, base, ["A", "B"], kind="silver")
