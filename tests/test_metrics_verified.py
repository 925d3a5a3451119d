"""Strict / verified RP metrics, error taxonomy and QA accuracy on a hand-worked network.

Network (metromap)::

    Red:  Alpha - Bravo - Porta Furba-Quadraro - Delta
    Blue: Bravo - Porta Furba - Delta

Times (other attributes 0): Red edges 2, 2, 2; Blue edges Bravo-Porta Furba 2, Porta
Furba-Delta 2.5. Vertex times Alpha 1, Bravo 1, Porta Furba-Quadraro 1, Porta Furba 0.5,
Delta 1; Transfer Time 5 at Bravo and Delta.

Time-only query Alpha → Delta (metromap: source counted, destination not; Time ÷ 3):
  Red route:  edges 6 + vertices 3                     = 9   → J = 3
  Blue route: edges 6.5 + vertices 2.5 + transfer 5    = 14  → J = 14/3, gap 14/9 − 1 = 5/9
Criteria-free: both routes have 4 stations (gold = both).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.network import Network
from maptab.core.schema import RPQuery
from maptab.score.answers import qa_correct, totals_correct
from maptab.score.error_types import ERROR_TYPES, error_type
from maptab.score.parse import parse_route
from maptab.score.verified import station_index, verify_route
from networks import PFQ
from networks import hyphen_metro as metro


def query(category: str = "time", routes: list[str] | None = None) -> RPQuery:
    weights = [1.0, 0.0, 0.0, 0.0] if category == "time" else None
    return RPQuery(
        id="q1",
        map_id="m1",
        scenario="metromap",
        split="test",
        category=category,
        style="direct_optimization",
        question="?",
        source="Alpha",
        target="Delta",
        routes=routes or [f"Alpha-Bravo-{PFQ}-Delta"],
        route_vertex_numbers=[4],
        transfer_vertex_numbers=[0],
        map_difficulty="Easy",
        query_difficulty="Medium",
        weights=weights,
    )


def check(text: str, q: RPQuery | None = None):
    net = metro()
    parsed = parse_route(text, station_index(net).vocabulary)
    return verify_route(net, parsed, q or query())


def test_optimal_route_is_strictly_correct() -> None:
    v = check("<route_begin>Alpha-Bravo-Porta Furba-Quadraro-Delta<route_end>")
    assert v.valid and v.optimal and v.transfers_ok and v.correct
    assert v.gap == 0.0 and v.error_type is None
    assert v.stations == ["Alpha", "Bravo", PFQ, "Delta"]


def test_case_and_diacritics_insensitive_resolution_but_no_fuzz() -> None:
    v = check("ALPHA - bravo - porta furba_quadraro - Délta")
    assert v.correct
    v = check("Alpha - Bravo - Porta Furba Quadrar - Delta")
    assert not v.valid and v.unresolved_names == ["Porta Furba Quadrar"]
    assert v.error_type == "Perception"


def test_suboptimal_route_gap_and_path_search() -> None:
    v = check("Alpha-Bravo(transfer)-Porta Furba-Delta")
    assert v.valid and not v.optimal and v.transfers_ok
    assert v.gap == pytest.approx(5 / 9, rel=1e-12)
    assert v.error_type == "Path Search"


def test_transfer_marks() -> None:
    v = check("Alpha-Bravo(transfer)-Porta Furba-Quadraro-Delta")
    assert v.valid and v.optimal and not v.transfers_ok and not v.correct
    assert v.error_type == "Transfer Indeterminate"
    # the Blue route needs its mark at Bravo
    v = check("Alpha-Bravo-Porta Furba-Delta")
    assert v.valid and not v.transfers_ok


def test_topology_perception_format_errors() -> None:
    v = check("Alpha-Porta Furba-Quadraro-Delta")  # Alpha and PFQ are not adjacent
    assert not v.adjacent and v.error_type == "Topology Extraction"
    v = check("Bravo-Porta Furba-Quadraro-Delta")  # wrong origin
    assert not v.endpoints_ok and v.error_type == "Perception"
    v = check("Alpha-Bravo-Alpha-Bravo-Porta Furba-Quadraro-Delta")  # repeats a station
    assert v.adjacent and not v.simple and not v.valid and v.error_type == "Path Search"
    assert check("I am not sure.").error_type == "Output Format"
    assert error_type(None) == "Output Format"


def test_criteria_free_min_hops_and_min_transfer_marks() -> None:
    q = query("map_only", [f"Alpha-Bravo-{PFQ}-Delta", "Alpha-Bravo(transfer)-Porta Furba-Delta"])
    v = check("Alpha-Bravo(transfer)-Porta Furba-Delta", q)
    assert v.correct and v.gap == 0.0
    v = check("Alpha-Bravo-Porta Furba-Delta", q)
    assert v.optimal and not v.transfers_ok


def test_totals_feed_table_lookup() -> None:
    net = metro()
    q = query()
    parsed = parse_route(f"Alpha-Bravo-{PFQ}-Delta", station_index(net).vocabulary)
    v = verify_route(net, parsed, q, totals_ok=False)
    assert v.correct and v.error_type == "Table Lookup"


def test_map_mix_needs_mix_network() -> None:
    net = metro()
    q = query()
    q.category = "map_mix"
    q.weights = [1.0, 0.0, 0.0, 0.0]
    parsed = parse_route(f"Alpha-Bravo-{PFQ}-Delta", station_index(net).vocabulary)
    with pytest.raises(ValueError, match="Mix_tab"):
        verify_route(net, parsed, q)
    # vertex items only: Red 3/3 = 1, Blue (1 + 1 + 0.5 + 5)/3 = 2.5 → gap 1.5
    blue = parse_route("Alpha-Bravo(transfer)-Porta Furba-Delta", station_index(net).vocabulary)
    v = verify_route(net, blue, q, mix_network=net)
    assert v.valid and not v.optimal and v.gap == pytest.approx(1.5)


def test_travelmap_routes_carry_no_marks() -> None:
    net = Network.from_edges([("Lake", "Tower"), ("Tower", "Gate"), ("Lake", "Gate")], map_id="t")
    q = query("map_only", ["Lake-Gate"])
    q.scenario, q.source, q.target, q.map_id = "travelmap", "Lake", "Gate", "t"
    vocab = station_index(net).vocabulary
    assert verify_route(net, parse_route("Lake-Gate", vocab), q).correct
    v = verify_route(net, parse_route("Lake-Tower-Gate", vocab), q)
    assert v.valid and not v.optimal and v.gap == pytest.approx(1.0)
    v = verify_route(net, parse_route("Lake(transfer)-Gate", vocab), q)
    assert v.optimal and not v.transfers_ok


def test_qa_rounding_and_totals() -> None:
    assert qa_correct(3.0, 3)
    assert qa_correct(2.675, 2.68)  # half-up on the decimal spelling
    assert qa_correct(0.994, 0.99) and not qa_correct(0.996, 0.99)
    assert not qa_correct(None, 1.0)
    assert not qa_correct(float("nan"), 1.0)
    assert qa_correct(1e300, 1e300)
    gold = {
        "Total_Time": 14.12,
        "Total_Price": 2.39,
        "Average_Comfort Level": 0.5575,
        "Average_Reliability": 0.755,
    }
    assert totals_correct(
        {"Total_Time": 14.12, "Total_Price": 2.4, "Average_Comfort Level": 0.56}, gold
    ) == {
        "T": True,
        "P": False,
        "C": True,
        "R": False,
    }


_PIECES = ["Alpha", "Bravo", "Porta Furba", "Quadraro", "Delta", "(transfer)", "-", " → ", "X", "é"]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14), st.sampled_from(["time", "map_only"]))
def test_verify_never_raises_on_any_answer(pieces: list[str], category: str) -> None:
    routes = [f"Alpha-Bravo-{PFQ}-Delta", "Alpha-Bravo(transfer)-Porta Furba-Delta"]
    v = check("".join(pieces), query(category, routes))
    assert v.error_type in (None, *ERROR_TYPES)
    assert v.correct == (v.error_type is None)
    if v.valid:
        assert v.gap is not None and v.gap >= 0
