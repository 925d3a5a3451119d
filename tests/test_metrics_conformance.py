"""Conformance: the released MapTab labels score as correct under every metric.

Each released Cleveland query (12 categories) becomes an :class:`RPQuery`; its own gold
route — written the way a model might, with the display hyphens MapTab rewrote as ``_`` —
must be recovered by the parser, match under EMA, and verify as valid, optimal and with
the right transfer marks against the released tables; the released totals must be read
back as correct.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maptab.core.schema import RPQuery
from maptab.core.tables import derive_mix, read_network
from maptab.score.answers import totals_correct
from maptab.score.paper import paper_scores, reference_tokens
from maptab.score.parse import parse_route, parse_totals
from maptab.score.verified import station_index, verify_route

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "maptab-sample"

CATEGORY = {
    "only_map": "map_only",
    "only_tab": "edge_only",
    "map_and_tab": "map_edge",
    "map_and_tab_with_constraint_1": "time",
    "map_and_tab_with_constraint_2": "price",
    "map_and_tab_with_constraint_3": "comfort",
    "map_and_tab_with_constraint_4": "reliability",
    "map_and_tab_with_constraint_1_2_4": "time_price_reliability",
    "map_and_tab_with_constraint_1_3_4": "time_comfort_reliability",
    "map_and_tab_with_constraint_2_3_4": "price_comfort_reliability",
    "map_and_tab_with_constraint_1_2_3_4": "all_criteria",
    "map_and_tab_with_constraint_1_2_3_4_only_vertex2": "map_mix",
}
TOTALS = ("Total_Time", "Total_Price", "Average_Comfort Level", "Average_Reliability")


def released() -> list[tuple[str, dict]]:
    out = []
    for path in sorted((SAMPLE / "metromap" / "data" / "test_set").glob("*.json")):
        stem = path.name.removeprefix("metromap_shortest_path_query_").removesuffix(
            "_test_set.json"
        )
        out.extend((CATEGORY[stem], s) for s in json.loads(path.read_text(encoding="utf-8")))
    return out


@pytest.mark.conformance
def test_released_labels_score_correct() -> None:
    if not SAMPLE.is_dir():
        pytest.skip(f"released MapTab sample not found at {SAMPLE}")
    samples = released()
    assert len(samples) == 12
    first = samples[0][1]
    net = read_network(SAMPLE / first["edge_tab"], SAMPLE / first["vertex_tab"], map_id="cleveland")
    mix = net.with_attributes(vertices=derive_mix(net))
    vocab = station_index(net).vocabulary
    for category, s in samples:
        totals = {k: s[k] for k in TOTALS if k in s}
        q = RPQuery(
            id=category,
            map_id="cleveland",
            scenario="metromap",
            split="test",
            category=category,
            style="direct_optimization",
            question=s["question"],
            source=s["station_1"],
            target=s["station_2"],
            routes=s["routes"],
            route_vertex_numbers=s["route_vertex_numbers"],
            transfer_vertex_numbers=s["transfer_vertex_numbers"],
            map_difficulty=s["Map_Difficulty"],
            query_difficulty=s["Query_Difficulty"],
            weights=s.get("weights"),
            totals=totals or None,
            report_totals=bool(totals),
        )
        gold = s["routes"][0]
        # the model writes display names (hyphens) and arrows; the totals after the route
        response = " → ".join(t.replace("_", "-") for t in gold.split("-"))
        response += "".join(f"\n{k}: {v}" for k, v in totals.items())
        parsed = parse_route(response, vocab)
        assert parsed is not None and parsed.route_string() == gold, category
        assert paper_scores(parsed.tokens(), [reference_tokens(r) for r in s["routes"]]) == (1, 1.0)
        ok = totals_correct(parse_totals(response), totals)
        assert all(ok.values()) and len(ok) == len(totals), category
        v = verify_route(net, parsed, q, mix_network=mix, totals_ok=all(ok.values()))
        assert v.correct and v.gap == 0.0 and v.error_type is None, category
        # a detour-free wrong variant: a transfer mark where there is none
        stations = gold.split("-")
        marked = "-".join([stations[0], stations[1] + "(transfer)", *stations[2:]])
        bad = verify_route(net, parse_route(marked, vocab), q, mix_network=mix)
        assert bad.optimal and not bad.transfers_ok
        assert bad.error_type == "Transfer Indeterminate", category
