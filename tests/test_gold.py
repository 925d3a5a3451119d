"""Gold labels carry the exact tie count; capped lists are marked."""

from __future__ import annotations

import math

from maptab.core.network import Network
from maptab.core.schema import RP_BY_NAME, RPQuery
from maptab.core.solver import Route, solve_routes
from maptab.core.tables import derive_mix
from maptab.generate import queries
from maptab.generate.queries import Gold, gold_label, repetition_class


def lines_grid(k: int) -> Network:
    rows = {f"R{i}": [f"G{i}_{j}" for j in range(k)] for i in range(k)}
    cols = {f"C{j}": [f"G{i}_{j}" for i in range(k)] for j in range(k)}
    return Network.from_lines({**rows, **cols})


def test_gold_label_counts_every_tie_and_marks_a_capped_list(monkeypatch):
    net = lines_grid(5)
    mix = net.with_attributes(vertices=derive_mix(net))
    gold = gold_label(net, mix, RP_BY_NAME["map_only"], "G0_0", "G4_4", None)
    label = gold.label()
    assert label["route_count"] == math.comb(8, 4) == len(label["routes"])
    assert label["truncated"] is False
    monkeypatch.setattr(
        queries, "solve_routes", lambda *a, **kw: solve_routes(*a, **kw, max_routes=7)
    )
    capped = gold_label(net, mix, RP_BY_NAME["map_only"], "G0_0", "G4_4", None).label()
    assert capped["route_count"] == 70 and capped["truncated"] is True
    assert capped["routes"] == label["routes"][:7]
    assert len(capped["route_vertex_numbers"]) == len(capped["transfer_vertex_numbers"]) == 7


def test_rp_query_round_trips_the_count():
    q = RPQuery(
        "m/rp-0",
        "m",
        "metromap",
        "test",
        "map_only",
        "direct_optimization",
        "?",
        "A",
        "B",
        ["A-B-C"],
        [3],
        [0],
        "easy",
        "easy",
        route_count=10**20,
        truncated=True,
    )
    again = RPQuery.from_dict(q.to_dict())
    assert again.route_count == 10**20 and again.truncated is True
    old = q.to_dict()
    del old["route_count"], old["truncated"]
    assert RPQuery.from_dict(old).route_count is None


def test_repetition_class_reads_station_counts_and_the_exact_count():
    a = Route(("A", "B", "C"), (), ("L",) * 2, 1.0)
    b = Route(("A", "D", "C"), (), ("L",) * 2, 1.0)
    long = Route(("A", "E", "F", "C"), (), ("L",) * 3, 0.5)
    assert repetition_class([a], [a]) == "FR"
    assert repetition_class([b], [a, b]) == "PR"
    # the min-hop list was capped at one route: the count says there are more
    assert repetition_class([a], [a], shortest_count=2) == "PR"
    # an optimal route with the fewest stations is a min-hop route, listed or not
    assert repetition_class([b], [a], shortest_count=5) == "PR"
    assert repetition_class([long], [a, b]) == "NR"
    assert Gold([a], None, 3).label()["truncated"] is True
