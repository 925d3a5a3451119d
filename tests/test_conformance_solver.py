"""Reproduce every released MapTab route-planning label from the released tables (SPEC 3-5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maptab.core.costs import Weights, route_totals
from maptab.core.solver import fewest_stations, optimal_routes
from maptab.core.tables import derive_mix, read_network

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "maptab-sample"
LABEL_FILES = sorted(SAMPLE.glob("*/data/test_set/*.json"))
TOTALS = ("Total_Time", "Total_Price", "Average_Comfort Level", "Average_Reliability")

pytestmark = pytest.mark.conformance


def labels() -> list[tuple[str, dict]]:
    if not SAMPLE.is_dir():
        return []
    return [
        (f"{path.name}#{i}", row)
        for path in LABEL_FILES
        for i, row in enumerate(json.loads(path.read_text(encoding="utf-8")))
    ]


def test_sample_present():
    if not SAMPLE.is_dir():
        pytest.skip(f"released MapTab sample not found at {SAMPLE}")
    assert len(labels()) >= 12  # twelve RP categories in the sample


@pytest.mark.parametrize(
    ("name", "label"),
    labels()
    or [
        pytest.param(
            "none",
            {},
            marks=pytest.mark.skip(reason=f"released MapTab sample not found at {SAMPLE}"),
        )
    ],
)
@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_released_label(name: str, label: dict, fmt: str) -> None:
    scenario = "metromap" if "metromap" in name else "travelmap"
    tabs = SAMPLE / scenario / "tabulars" / label["country"]
    city = label["city"]
    # the *_only_vertex2 (Mix_tab) label names a vertex2 table that is not released: derive it
    network = read_network(tabs / f"{city}_edge.{fmt}", tabs / f"{city}_vertex.{fmt}")
    items = "edge_vertex"
    if "vertex_tab" in label and "vertex2" in label["vertex_tab"]:
        network = network.with_attributes(vertices=derive_mix(network))
        items = "vertex"
    s, t = label["station_1"], label["station_2"]
    if "weights" in label:
        routes = optimal_routes(network, s, t, Weights(*label["weights"]), items=items)
    else:
        routes = fewest_stations(network, s, t)
    got = sorted((r.format(), r.vertex_count, r.transfer_count) for r in routes)
    want = sorted(
        zip(
            label["routes"],
            label["route_vertex_numbers"],
            label["transfer_vertex_numbers"],
            strict=True,
        )
    )
    assert got == want
    if "weights" in label:
        first = next(r for r in routes if r.format() == label["routes"][0])
        totals = route_totals(network, first.stations, first.lines, items=items).as_label()
        assert totals == {k: label[k] for k in TOTALS}
