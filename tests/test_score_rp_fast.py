"""The shortcuts of scoring one route-planning answer against the straightforward path.

``maptab.kinds.rp.score`` reads an answer text once per map, tokenises a query's references
once, scores EMA/PMA 1 without the fuzzy rule when the answer's tokens are a reference's,
and does not cost an answer that is the first gold route with one line per hop
(``_Costing.fixed_markings``); ``parse_route`` reads a text whose only tags are the route
tags as their content. Each is checked here against the path it shortcuts, on generated
maps (shared tracks, hyphenated names), queries (any gold, optimal or not) and answers.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.costs import CostTable, mean_assignments, optimal_assignments, within
from maptab.core.network import Edge, Network, Vertex
from maptab.core.schema import RPQuery
from maptab.core.tables import derive_mix
from maptab.kinds import rp
from maptab.score.answers import totals_correct
from maptab.score.error_types import error_type
from maptab.score.paper import difficulty_score, matching_references, paper_scores, reference_tokens
from maptab.score.parse import (
    _lines,
    _route_from_line,
    _vocab,
    parse_route,
    parse_totals,
    strip_reasoning,
    tagged,
)
from maptab.score.verified import RoutePlan, Verification, gold_routes, station_index
from test_costs import _shared_track_route

# Red and Blue share the track Bravo - Porta Furba-Quadraro - Delta; Green shares Delta-Echo
_LINES = {
    "Red": ["Alpha", "Bravo", "Porta Furba-Quadraro", "Delta", "Echo"],
    "Blue": ["Bravo", "Porta Furba-Quadraro", "Delta"],
    "Green": ["Alpha", "Porta Furba", "Delta", "Echo"],
}
_NAMES = ["Alpha", "Bravo", "Porta Furba-Quadraro", "Porta Furba", "Delta", "Echo"]
_CATEGORIES = ["time", "price", "all_criteria", "map_only", "map_edge", "map_mix"]


@st.composite
def _network(draw: Any) -> Network:
    base = Network.from_lines(_LINES, map_id="m1")
    number = st.integers(0, 6).map(float)
    edges = [
        Edge(e.u, e.v, e.line, time=draw(number), price=draw(number), comfort=0.5)
        for e in base.edges
    ]
    vertices = {
        k: Vertex(k, v.lines, time=draw(number), price=1.0, transfer_time=draw(number))
        for k, v in base.vertices.items()
    }
    return base.with_attributes(vertices, edges)


def _walk(draw: Any, net: Network) -> list[str]:
    """A walk over the map (simple or not), as station keys."""
    keys = list(net.vertices)
    out = [draw(st.sampled_from(keys))]
    for _ in range(draw(st.integers(1, 5))):
        nxt = sorted({e.v if e.u == out[-1] else e.u for e in net.edges if out[-1] in (e.u, e.v)})
        out.append(draw(st.sampled_from(nxt)))
    return out


def _route_text(draw: Any, net: Network, keys: list[str]) -> str:
    names = [draw(st.sampled_from([k, net.label(k)])) for k in keys]
    marks = [draw(st.booleans()) and 0 < i < len(names) - 1 for i in range(len(names))]
    return "-".join(n + ("(transfer)" if m else "") for n, m in zip(names, marks, strict=True))


@st.composite
def _case(draw: Any) -> tuple[Network, RPQuery, list[str]]:
    net = draw(_network())
    category = draw(st.sampled_from(_CATEGORIES))
    criteria = category not in ("map_only", "map_edge")
    weights = None
    if criteria:
        raw = draw(st.lists(st.integers(0, 3), min_size=4, max_size=4).filter(any))
        weights = [x / sum(raw) for x in raw]
    gold = [_walk(draw, net) for _ in range(draw(st.integers(1, 3)))]
    routes = [_route_text(draw, net, g) for g in gold]
    q = RPQuery(
        id="q1",
        map_id="m1",
        scenario="metromap",
        split="test",
        category=category,
        style="direct_optimization",
        question="",
        source=gold[0][0],
        target=gold[0][-1],
        routes=routes,
        route_vertex_numbers=[len(g) for g in gold],
        transfer_vertex_numbers=[0] * len(gold),
        map_difficulty="Easy",
        query_difficulty="Hard",
        weights=weights,
        totals={"Total_Time": 3.0} if criteria else None,
        report_totals=criteria and draw(st.booleans()),
        cost_model=draw(st.sampled_from(["additive", "mean"])) if criteria else "additive",
    )
    answers = list(routes)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["walk", "gold-edit", "pieces", "tagged"]))
        if kind == "walk":
            answers.append(_route_text(draw, net, _walk(draw, net)))
        elif kind == "gold-edit":
            toks = reference_tokens(draw(st.sampled_from(routes)))
            i = draw(st.integers(0, len(toks) - 1))
            toks[i] = draw(st.sampled_from([*_NAMES, "Bravoo", "Delt", toks[i].upper(), ""]))
            answers.append("-".join(toks))
        elif kind == "pieces":
            pieces = [*_NAMES, "(transfer)", "-", " -> ", " ", "X", "Total_Time: 3"]
            answers.append("".join(draw(st.lists(st.sampled_from(pieces), max_size=10))))
        else:
            answers.append(f"Reasoning.\nThe route is:\n<route_begin>{routes[0]}<route_end>")
    return net, q, answers


class _Maps:
    def __init__(self, net: Network) -> None:
        self.net = net
        self.mix_net = net.with_attributes(vertices=derive_mix(net))

    def network(self, map_id: str) -> Network:
        return self.net

    def mix(self, map_id: str) -> Network:
        return self.mix_net


def _verify_reference(plan: RoutePlan, parsed: Any, totals_ok: bool | None) -> Verification:
    """verify_planned without shortcuts: every valid route costed."""
    if parsed is None:
        return Verification(parsed=False, error_type=error_type(None))
    keys = [plan.index.resolve(s) for s in parsed.stations]
    v = Verification(parsed=True, stations=keys)
    v.unresolved_names = [s for s, k in zip(parsed.stations, keys, strict=True) if k is None]
    resolved = [k for k in keys if k is not None]
    v.endpoints_ok = bool(keys) and keys[0] == plan.source and keys[-1] == plan.target
    v.simple = len(set(resolved)) == len(resolved)
    v.adjacent = not v.unresolved_names and all(
        (a, b) in plan.index.adjacent for a, b in zip(resolved, resolved[1:], strict=False)
    )
    v.valid = not v.unresolved_names and v.endpoints_ok and v.simple and v.adjacent
    if v.valid:
        cost, markings = plan.cost(resolved)
        try:
            best = plan.cost(plan.gold[0][0])[0]
        except ValueError as exc:
            raise ValueError(
                f"query {plan.query.id}: gold route does not fit map {plan.network.map_id!r}: {exc}"
            ) from None
        marks = frozenset(parsed.transfers)
        v.transfers_ok = marks in markings
        v.optimal = within(cost, best)
        v.gap = 0.0 if v.optimal else (cost / best - 1.0 if best > 0 else math.inf)
    v.error_type = error_type(v, totals_ok)
    return v


def _score_reference(maps: _Maps, query: RPQuery, response: str) -> dict[str, Any]:
    """rp.score as the straightforward composition of the metrics."""
    net = maps.network(query.map_id)
    index = station_index(net)
    parsed = parse_route(response, index.vocabulary)
    tokens = parsed.tokens() if parsed else None
    refs = [reference_tokens(r) for r in query.routes]
    ema, pma = paper_scores(tokens, refs)
    totals = None
    if query.report_totals and query.totals:
        totals = totals_correct(parse_totals(response), query.totals)
    totals_ok = None if totals is None else all(totals.values())
    mix = maps.mix(query.map_id) if query.category == "map_mix" else None
    v = _verify_reference(RoutePlan.build(net, query, mix), parsed, totals_ok)
    false_accept = False
    if ema:
        gold = gold_routes(index, query.routes)
        false_accept = not any(
            list(gold[i][0]) == v.stations for i in matching_references(tokens, refs)
        )
    return {
        "id": query.id,
        "kind": "rp",
        "map_id": query.map_id,
        "scenario": query.scenario,
        "category": query.category,
        "map_difficulty": query.map_difficulty,
        "query_difficulty": query.query_difficulty,
        "repetition": query.repetition,
        "parsed": parsed is not None,
        "route": parsed.route_string() if parsed else None,
        "ema": ema,
        "pma": pma,
        "ds": difficulty_score(ema, query.map_difficulty, query.query_difficulty),
        "valid": v.valid,
        "endpoints_ok": v.endpoints_ok,
        "simple": v.simple,
        "adjacent": v.adjacent,
        "transfers_ok": v.transfers_ok,
        "optimal": v.optimal,
        "strict": v.correct,
        "gap": v.gap if v.gap is not None and math.isfinite(v.gap) else None,
        "unresolved": v.unresolved_names,
        "lenient_false_accept": false_accept,
        "totals": totals,
        "error_type": v.error_type,
    }


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_case())
def test_rp_score_equals_the_straightforward_path(case: Any) -> None:
    net, query, answers = case
    maps = _Maps(net)
    for text in answers + answers:  # the second round reads the memos
        try:
            want: Any = _score_reference(maps, query, text)
        except ValueError as exc:  # a gold route off the map: both raise the same
            with pytest.raises(ValueError) as got:
                rp.score(maps, query, "", text)
            assert (type(got.value), str(got.value)) == (type(exc), str(exc))
            continue
        row = rp.score(maps, query, "", text)
        # the fields the reference computes, in the same relative order (the output order);
        # fields added to the row later (a new metric's) are not this test's business
        assert [k for k in row if k in want] == list(want)
        mine = {k: row[k] for k in want}
        assert repr(mine) == repr(want)  # repr: 0.0 and -0.0, 1 and True told apart


@settings(max_examples=examples(300), deadline=None)
@given(case=_shared_track_route(), model=st.sampled_from(["additive", "mean"]))
def test_single_marks_is_the_only_marking_whatever_the_weights(case: Any, model: str) -> None:
    net, stations, weights = case
    table = CostTable(net)
    path = table.path_index(stations)
    marks = table.single_marks(path)
    one = all(len(table.hops[(a, b)]) == 1 for a, b in zip(path, path[1:], strict=False))
    assert (marks is not None) == one
    if marks is None:
        return
    if model == "mean" and weights is not None:
        _, markings = mean_assignments(table, weights, path)
    else:
        _, markings = optimal_assignments(table, table.weighted(weights), path)
    assert [m.transfers for m in markings] == [marks]


def test_unbounded_costs_are_costed() -> None:
    """A map whose costs could overflow is never given markings without its costs."""
    net = Network.from_lines({"Red": ["A", "B", "C"]}, map_id="m")
    huge = [Edge(e.u, e.v, e.line, time=1e308) for e in net.edges]
    assert CostTable(net).bounded
    assert not CostTable(net.with_attributes(edges=huge)).bounded


def test_invalid_weights_still_raise_on_the_first_gold_route() -> None:
    """Not costing the first gold route does not skip the check of the query's weights."""
    net = Network.from_lines({"Red": ["Alpha", "Bravo", "Delta"]}, map_id="m1")
    q = RPQuery(
        id="q1",
        map_id="m1",
        scenario="metromap",
        split="test",
        category="time",
        style="direct_optimization",
        question="",
        source="Alpha",
        target="Delta",
        routes=["Alpha-Bravo-Delta"],
        route_vertex_numbers=[3],
        transfer_vertex_numbers=[0],
        map_difficulty="Easy",
        query_difficulty="Easy",
        weights=[0.5, 0.5, 0.5, 0.5],
    )
    with pytest.raises(ValueError, match="sum to 1"):
        rp.score(_Maps(net), q, "", "Alpha-Bravo-Delta")


# --------------------------------------------------------------------------- parsing
def _parse_general(text: str, vocabulary: Any) -> Any:
    """parse_route without its shortcuts (the steps of its docstring)."""
    vocab = _vocab(vocabulary)
    body = strip_reasoning(text)
    inner = tagged(body, "<route_begin>", "<route_end>")
    if inner is not None:
        body = inner
    fallback = None
    for line in reversed(_lines(body)):
        got = _route_from_line(line, vocab)
        if got is None:
            continue
        route, hits = got
        if 2 * hits >= len(route.stations):
            return route
        if fallback is None:
            fallback = route
    return fallback


_TEXT_PIECES = [
    *_NAMES,
    "Porta Furba_Quadraro",
    "-",
    " - ",
    "->",
    "(transfer)",
    " ",
    "\n",
    "<route_begin>",
    "<route_end>",
    "<ROUTE_END>",
    "<think>",
    "</think>",
    "◁think▷",
    "<",
    "Route:",
    "**",
    ".",
]


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(st.sampled_from(_TEXT_PIECES), max_size=16))
def test_parse_route_shortcuts_equal_the_general_path(pieces: list[str]) -> None:
    net = Network.from_lines(_LINES, map_id="m1")
    vocabulary = station_index(net).vocabulary
    text = "".join(pieces)
    assert parse_route(text, vocabulary) == _parse_general(text, vocabulary)


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.sampled_from(_TEXT_PIECES[:-9]), min_size=1, max_size=10),
    st.sampled_from(["", "Let me think.\n", "<think>a-b</think>\n", "x\n\nThe route is:\n"]),
    st.sampled_from(["", "\n", ".", "\nTotal_Time: 3"]),
)
def test_route_tags_read_as_their_content(pieces: list[str], before: str, after: str) -> None:
    net = Network.from_lines(_LINES, map_id="m1")
    vocabulary = station_index(net).vocabulary
    text = f"{before}<route_begin>{''.join(pieces)}<route_end>{after}"
    assert parse_route(text, vocabulary) == _parse_general(text, vocabulary)
