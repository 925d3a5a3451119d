"""The route-text codec (SPEC 4, 11, 12): every station name set is either refused with one
line naming a station, or the route text written by ``format_route`` reads back to exactly
the same stations and marks; the real scorer gives the oracle full marks on such maps."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.network import Network, table_name
from maptab.core.route_text import (
    SEPARATORS,
    NameIndex,
    StationNameError,
    check_network_names,
    check_station_names,
    format_route,
    format_route_of,
    read_route,
    route_block,
)
from maptab.core.schema import RP_BY_NAME, RPQuery
from maptab.core.tables import derive_mix
from maptab.generate.attributes import synthesize_attributes
from maptab.generate.pipeline import Preset, write_benchmark
from maptab.generate.prompts import output_contract, route_example
from maptab.generate.queries import category_weights, eligible_pairs, gold_label
from maptab.kinds import rp
from maptab.rewards import rp_reward
from maptab.run.baselines import OracleProvider
from maptab.score.parse import parse_route
from maptab.score.verified import station_index

# letters of several scripts (RTL included), and the fragments that clean-up and splitting
# act on: quotes, colons, Markdown, bullets, brackets, separators, whitespace variants,
# transfer marks, tags, control characters, combining and direction marks
_LETTERS = list("abcXYZéßİı") + list("אבגדשת") + list("ابتجحّ") + list("東京駅新宿") + list("МЖя")
_FRAGMENTS = [
    "'", "’", '"', "“", "”", "「", "」", ":", "：", ";", ".", "。", ",", "，", "、", "(", ")",
    "[", "]", "（", "）", "【", "】", "<", ">", "*", "**", "_", "__", "~~", "`", "#", "> ",
    "1. ", "- ", "-", "–", "—", "——", "－", "−", "→", "->", "=>", " ", "  ", "\u00a0",
    "\u3000", "\t", "\n", "(transfer)", " (Transfer)", "[xfer]", "（换乘）", "<route_end>",
    "<ROUTE_BEGIN>", "<think>", "◁/think▷", "\u200f", "\u0301", "\x00", "Total_Time: 3",
]  # fmt: skip
_piece = st.one_of(
    st.text(st.sampled_from(_LETTERS), min_size=1, max_size=4),
    st.text(st.sampled_from(_LETTERS), min_size=1, max_size=4),
    st.sampled_from(_FRAGMENTS),
)
NAME = st.lists(_piece, min_size=1, max_size=5).map("".join)
# what an answer may hold around the route block
_AROUND = [
    "{r}",
    "{r}\nTotal_Time: 14.12\nTotal_Price: 2.39",
    "<think>Alpha-Bravo-Delta? no.</think>\n{r}",
    "Let me plan.\n\nThe route is:\n{r}",
]


def _refusal_ok(exc: StationNameError, names: list[str]) -> None:
    message = str(exc)
    assert "\n" not in message and message.strip() == message
    assert any(repr(n) in message for n in names), message


def _route(data: st.DataObject, keys: list[str]) -> tuple[list[str], set[int]]:
    route = data.draw(st.permutations(keys))[: data.draw(st.integers(2, len(keys)))]
    marks = data.draw(st.sets(st.integers(0, len(route) - 1)))
    return route, marks


def _changed(data: st.DataObject, route: list[str], keys: list[str]) -> list[str]:
    i = data.draw(st.integers(0, len(route) - 1))
    other = data.draw(st.sampled_from([k for k in keys if k != route[i]]))
    return [*route[:i], other, *route[i + 1 :]]


@settings(max_examples=examples(600))
@given(keys=st.lists(NAME, min_size=2, max_size=8, unique=True), data=st.data())
def test_route_text_reads_back_or_the_names_are_refused(keys: list[str], data: Any) -> None:
    try:
        check_station_names(keys)
    except StationNameError as exc:
        event("refused")
        _refusal_ok(exc, keys)
        return
    route, marks = _route(data, keys)
    text = format_route(route, marks)
    assert read_route(text, NameIndex(keys)) == (route, marks)
    answer = data.draw(st.sampled_from(_AROUND)).format(r=route_block(text))
    got = parse_route(answer, keys)
    assert got is not None, answer
    assert (got.stations, got.transfers) == (route, marks), answer
    changed = _changed(data, route, keys)
    got = parse_route(route_block(format_route(changed, marks)), keys)
    assert got is not None and got.stations == changed != route


@settings(max_examples=examples(400))
@given(raw=st.lists(NAME, min_size=3, max_size=8, unique_by=table_name), data=st.data())
def test_maps_built_from_names_round_trip_on_their_vocabulary(raw: list[str], data: Any) -> None:
    """Names as a builder gets them (keys ``-`` → ``_``, the original kept as a label): the
    check refuses the map, or every route over its keys reads back through the scorer's
    vocabulary (keys and labels) to the same keys and marks."""
    net = Network.from_lines({"L": raw}, map_id="m")
    names = [*net.vertices, *net.labels.values()]
    try:
        check_network_names(net)
    except StationNameError as exc:
        event("refused")
        _refusal_ok(exc, names)
        assert str(exc).startswith("map 'm': station")
        return
    keys = list(net.vertices)
    if len(keys) < 2:
        return
    index = station_index(net)
    route, marks = _route(data, keys)
    got = parse_route(route_block(format_route(route, marks)), index.vocabulary)
    assert got is not None and (got.stations, got.transfers) == (route, marks)
    assert index.resolve_all(got.stations) == route
    changed = _changed(data, route, keys)
    got = parse_route(route_block(format_route(changed, marks)), index.vocabulary)
    assert got is not None and index.resolve_all(got.stations) == changed


_SEPARATOR_CHARS = set("".join(SEPARATORS))
_SPELLINGS = ["-", " - ", "->", " → ", "–", " — ", "——", "－", "、", " ， ", "=>", "⇒"]
_MARKS = ["(transfer)", " (Transfer)", "( TRANSFER )", "（transfer）", "[transfer]", "【换乘】"]
_WRITTEN = ["{r}", "<route_begin>{r}<route_end>", "Route: {r}", "The route is:\n{r}\n"]


@settings(max_examples=examples(300))
@given(
    keys=st.lists(
        NAME.filter(lambda n: not _SEPARATOR_CHARS & set(n)),
        min_size=2,
        max_size=6,
        unique=True,
    ),
    data=st.data(),
)
def test_routes_written_with_any_separator_read_back(keys: list[str], data: Any) -> None:
    """Accepted names holding no character of a separator: a route written with any separator, spacing and
    transfer mark (as models write them) reads back to the same stations and marks."""
    try:
        check_station_names(keys)
    except StationNameError:
        event("refused")
        return
    route, marks = _route(data, keys)
    text = route[0] + (data.draw(st.sampled_from(_MARKS)) if 0 in marks else "")
    for i, name in enumerate(route[1:], 1):
        text += data.draw(st.sampled_from(_SPELLINGS)) + name
        text += data.draw(st.sampled_from(_MARKS)) if i in marks else ""
    answer = data.draw(st.sampled_from(_WRITTEN)).format(r=text)
    got = parse_route(answer, keys)
    assert got is not None and (got.stations, got.transfers) == (route, marks), answer


@pytest.mark.parametrize(
    ("names", "why"),
    [
        (["A<route_end>", "B"], "contains the tag <route_end>"),
        (["A", "B<Route_Begin>"], "contains the tag <route_begin>"),
        (["</THINK>x", "B"], "contains the tag </think>"),
        (['A "\n" B', "C"], "line break U+000A"),
        (["A\tB", "C"], "control character or line break U+0009"),
        (["Old Town", "Old  Town"], "differ only in case, spacing"),
        (["Café", "CAFÉ"], "differ only in case, spacing"),
        (["Ａ1", "A1"], "differ only in case, spacing"),
        (["Hub (Transfer)", "B"], "ends with a transfer mark"),
        ([" Pad", "B"], "whitespace at its start or end"),
        (["", "B"], "is empty"),
        (["A-B", "C"], "contains '-'"),
    ],
)
def test_names_the_route_text_cannot_carry_are_refused(names: list[str], why: str) -> None:
    with pytest.raises(StationNameError, match=re.escape(why)) as got:
        check_station_names(names)
    _refusal_ok(got.value, names)


def test_a_label_that_reads_as_a_route_of_other_stations_is_refused() -> None:
    net = Network.from_lines({"L": ["Porta Furba", "Quadraro", "Porta Furba-Quadraro"]})
    with pytest.raises(StationNameError, match="'Porta Furba-Quadraro' reads as a route"):
        check_network_names(net)
    # a hyphenated name beside one of its parts only is fine (Rome's Porta Furba)
    check_network_names(Network.from_lines({"L": ["Porta Furba", "Porta Furba-Quadraro"]}))
    with pytest.raises(StationNameError, match="'A-B' reads as a route of the stations 'A', 'B'"):
        check_station_names(["A", "B", "A_B"], {"A_B": "A-B"})
    # names that differ in a diacritic are different names (the paper preset has such pairs)
    check_station_names(["Roman", "Román", "ريان", "ريّان"])


def test_builders_refuse_such_maps_before_writing(tmp_path: Path) -> None:
    net = Network.from_lines({"L": ["Alpha", "B<route_end>", "Charlie"]}, map_id="m")
    with pytest.raises(StationNameError, match="^map 'm': station 'B<route_end>' contains"):
        write_benchmark(tmp_path / "ds", [net], Preset("t", 1, 0, 2, 0, q_min=1), 0, {})
    assert not (tmp_path / "ds").exists()


def test_format_route_is_the_solver_route_string_for_ordinary_names() -> None:
    assert format_route(["A", "B", "C"], {1}) == "A-B(transfer)-C"
    assert format_route(["A", "B"]) == "A-B"
    assert route_block("A-B") == "<route_begin>A-B<route_end>"
    with pytest.raises(StationNameError, match="'A-B' contains '-'"):
        format_route(["A-B", "C"])


def test_prompts_state_the_codec_route_text() -> None:
    assert route_example("metromap") == "A-B(transfer)-C"
    assert route_example("travelmap") == "A-B-C"
    for scenario in ("metromap", "travelmap"):
        text = output_contract(scenario)
        assert route_example(scenario) in text and "<route_begin>route<route_end>" in text


# --------------------------------------------------------------------------- real scorer
# a metro map whose station names hold what clean-up used to eat: a trailing apostrophe
# (Hebrew geresh), a trailing colon, a trailing '__', '(transfer)' inside a name, Markdown
# and bullet starts, separators inside names, quotes and brackets, a final full stop
HOSTILE_LINES = {
    "Red": ["ג'", "Terminal:", "Gare (transfer) Nord", "Dock__", "1. Mai"],
    "Blue": ["「駅」", "Gare (transfer) Nord", "Up→Down", "*Star*", "צ'"],
    "Green": ["Str.", "Terminal:", "Up→Down", "東京，新宿", "Heathrow T2 – T3"],
}
_CATEGORIES = ("map_only", "time", "price", "all_criteria", "map_mix")


class _Maps:
    def __init__(self, net: Network) -> None:
        self.net = net
        self.mix_net = net.with_attributes(vertices=derive_mix(net))

    def network(self, map_id: str) -> Network:
        return self.net

    def mix(self, map_id: str) -> Network:
        return self.mix_net


def _queries(maps: _Maps) -> list[RPQuery]:
    net = maps.net
    out = []
    for n, (s, t) in enumerate(eligible_pairs(net)):
        for name in _CATEGORIES:
            cat = RP_BY_NAME[name]
            weights = None
            if not cat.criteria_free:
                weights = category_weights(cat, [0.2, 0.3, 0.5], [0.1, 0.2, 0.3, 0.4])
            gold = gold_label(net, maps.mix_net, cat, s, t, weights)
            label = gold.label()
            out.append(
                RPQuery(
                    id=f"q{n}-{name}",
                    map_id="hostile",
                    scenario="metromap",
                    split="test",
                    category=name,
                    style="direct_optimization",
                    question="",
                    source=s,
                    target=t,
                    routes=label["routes"],  # type: ignore[arg-type]
                    route_vertex_numbers=label["route_vertex_numbers"],  # type: ignore[arg-type]
                    transfer_vertex_numbers=label["transfer_vertex_numbers"],  # type: ignore[arg-type]
                    map_difficulty="Easy",
                    query_difficulty="Easy",
                    weights=weights,
                    totals=gold.totals,
                )
            )
    return out


def test_oracle_answers_on_hostile_names_score_full_marks() -> None:
    net = synthesize_attributes(Network.from_lines(HOSTILE_LINES, map_id="hostile"), 3)
    check_network_names(net)
    maps = _Maps(net)
    oracle = OracleProvider()
    queries = _queries(maps)
    assert len(queries) > 100
    changed_scored = 0
    for q in queries:
        cost_net = maps.mix_net if RP_BY_NAME[q.category].items == "vertex" else net
        route = oracle.rp(cost_net, q, q.source, q.target)
        answer = route_block(format_route_of(route))
        row = rp.score(maps, q, "", answer)
        assert row["strict"] and row["ema"] == 1 and row["pma"] == 1.0, (answer, row)
        assert rp_reward(answer, q, net, maps.mix_net).reward == 1.0, answer
        # one station changed: another station of the map in its place
        stations = list(route.stations)
        i = len(stations) // 2
        stations[i] = next(k for k in net.vertices if k not in route.stations)
        wrong = route_block(format_route(stations))
        assert not rp.score(maps, q, "", wrong)["strict"], wrong
        assert rp_reward(wrong, q, net, maps.mix_net).reward < 1.0
        changed_scored += 1
    assert changed_scored == len(queries)
