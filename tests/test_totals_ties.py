"""Reported totals on tied optimal routes (SPEC 3, 4, 13): an answer's totals are checked
against those of the optimal route it gives, in the scorer and in the RL reward alike.

Hand-made map ``ties`` (metromap, vertex items all 0 except Y's transfer time 1):

* route A ``S-X-T`` on L1: edges time 2 / 2, price 1 / 1, comfort 0.5 / 0.7, reliability
  0.9 / 0.9 → Total_Time 4, Total_Price 2, Average_Comfort 0.6, Average_Reliability 0.9;
* route B ``S-Y(transfer)-T``, L2 then L3: edges time 1 / 2, price 2 / 3, comfort 0.4 / 0.4,
  reliability 0.8 / 0.9, transfer at Y (1 min) → 4, 5, 0.4, 0.85;
* route C ``S-Z-T`` on L4: edges time 3 / 3 → Total_Time 6 (not optimal).

For the ``time`` category (weights 1, 0, 0, 0) A and B tie (J = 4 / 3) and are the gold, A
first. A property test checks the rule on random small maps against a brute-force reference
that enumerates every simple path and sums its totals directly.
"""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction
from typing import Any

import msgspec
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.network import Edge, Network, Vertex
from maptab.core.schema import RP_BY_NAME, TOTAL_FIELDS, RPQuery
from maptab.core.tables import derive_mix
from maptab.generate.queries import gold_label
from maptab.kinds import rp
from maptab.rewards import encode_reference, reward
from maptab.rewards.core import rp_reward

A_TOTALS = {
    "Total_Time": 4.0,
    "Total_Price": 2.0,
    "Average_Comfort Level": 0.6,
    "Average_Reliability": 0.9,
}
B_TOTALS = {
    "Total_Time": 4.0,
    "Total_Price": 5.0,
    "Average_Comfort Level": 0.4,
    "Average_Reliability": 0.85,
}
C_TOTALS = {
    "Total_Time": 6.0,
    "Total_Price": 0.0,
    "Average_Comfort Level": 0.0,
    "Average_Reliability": 0.0,
}
A, B, C = "S-X-T", "S-Y(transfer)-T", "S-Z-T"


def ties_network() -> Network:
    """The map of the module docstring."""
    edges = [
        Edge("S", "X", "L1", time=2, price=1, comfort=0.5, reliability=0.9),
        Edge("X", "T", "L1", time=2, price=1, comfort=0.7, reliability=0.9),
        Edge("S", "Y", "L2", time=1, price=2, comfort=0.4, reliability=0.8),
        Edge("Y", "T", "L3", time=2, price=3, comfort=0.4, reliability=0.9),
        Edge("S", "Z", "L4", time=3),
        Edge("Z", "T", "L4", time=3),
    ]
    return _metromap(edges, {"Y": 1.0}, "ties")


def _metromap(edges: list[Edge], transfer: dict[str, float], map_id: str) -> Network:
    """A metromap of ``edges``, with a row for every station of ``transfer`` too (its
    transfer times) and the lines through each station."""
    lines: dict[str, list[str]] = {s: [] for s in transfer}
    for e in edges:
        for s in (e.u, e.v):
            ls = lines.setdefault(s, [])
            if e.line not in ls:
                ls.append(e.line)  # type: ignore[arg-type]
    vertices = {
        s: Vertex(s, tuple(ls), transfer_time=transfer.get(s, 0.0)) for s, ls in lines.items()
    }
    return Network("metromap", vertices, edges, map_id=map_id)


class _Maps:
    """The scorer's view of one map (``network`` / ``mix`` by map id)."""

    def __init__(self, net: Network) -> None:
        self.net = net
        self.mix_net = net.with_attributes(vertices=derive_mix(net))

    def network(self, map_id: str) -> Network:
        return self.net

    def mix(self, map_id: str) -> Network:
        return self.mix_net


def _query(
    maps: _Maps,
    weights: list[float],
    *,
    category: str = "time",
    cost_model: str = "additive",
    keep: int | None = None,
) -> RPQuery:
    """The gold query S → T as the builder labels it; ``keep`` caps the listed routes."""
    gold = gold_label(
        maps.net,
        maps.mix_net,
        RP_BY_NAME[category],
        "S",
        "T",
        weights,
        cost_model=cost_model,
    )
    label = gold.label()
    n = len(label["routes"]) if keep is None else keep  # type: ignore[arg-type]
    return RPQuery(
        id="q",
        map_id=maps.net.map_id,
        scenario="metromap",
        split="test",
        category=category,
        style="direct_optimization",
        question="",
        source="S",
        target="T",
        routes=label["routes"][:n],  # type: ignore[index]
        route_vertex_numbers=label["route_vertex_numbers"][:n],  # type: ignore[index]
        transfer_vertex_numbers=label["transfer_vertex_numbers"][:n],  # type: ignore[index]
        map_difficulty="Easy",
        query_difficulty="Easy",
        weights=weights,
        totals=gold.totals,
        report_totals=True,
        cost_model=cost_model,
        route_count=gold.count,
        truncated=gold.count > n,
    )


def _answer(route: str, totals: dict[str, Any]) -> str:
    lines = "\n".join(f"{k}: {totals[k]}" for k in TOTAL_FIELDS)
    return f"<route_begin>{route}<route_end>\n{lines}"


def _both(maps: _Maps, q: RPQuery, text: str) -> tuple[dict[str, Any], Any]:
    """The scorer's row and the reward breakdown of one answer."""
    mix = maps.mix_net if q.category == "map_mix" else None
    return rp.score(maps, q, "", text), rp_reward(text, q, maps.net, mix)


# --------------------------------------------------------------------------- hand-made map
@pytest.fixture
def maps() -> _Maps:
    return _Maps(ties_network())


@pytest.mark.parametrize("cost_model", ["additive", "mean"])
def test_the_gold_lists_both_ties_with_routes_0_totals(maps: _Maps, cost_model: str) -> None:
    q = _query(maps, [1.0, 0.0, 0.0, 0.0], cost_model=cost_model)
    assert q.routes == [A, B] and q.route_count == 2
    assert q.totals == A_TOTALS


@pytest.mark.parametrize("cost_model", ["additive", "mean"])
@pytest.mark.parametrize("keep", [None, 1])  # the full list; a list capped to routes[0]
def test_each_tie_is_checked_against_its_own_totals(
    maps: _Maps, cost_model: str, keep: int | None
) -> None:
    q = _query(maps, [1.0, 0.0, 0.0, 0.0], cost_model=cost_model, keep=keep)
    assert q.truncated == (keep is not None)
    all_right = {"T": True, "P": True, "C": True, "R": True}
    for route, own in ((A, A_TOTALS), (B, B_TOTALS)):
        row, rw = _both(maps, q, _answer(route, own))
        assert row["totals"] == all_right, route
        assert row["strict"] and row["error_type"] is None
        assert rw.reward == 1.0 and rw.correct and rw.totals == 1.0
    # each tie with the other's totals: T agrees (the tie is in time), P, C, R do not
    for route, other in ((B, A_TOTALS), (A, B_TOTALS)):
        row, rw = _both(maps, q, _answer(route, other))
        assert row["totals"] == {"T": True, "P": False, "C": False, "R": False}, route
        assert row["strict"] and row["error_type"] == "Table Lookup"
        assert rw.reward < 1.0 and not rw.correct and rw.totals == 0.25
    b_own = _both(maps, q, _answer(B, B_TOTALS))[1].reward
    b_copied = _both(maps, q, _answer(B, A_TOTALS))[1].reward
    assert b_copied < b_own


def test_the_public_reward_pays_a_ties_own_totals(maps: _Maps) -> None:
    q = _query(maps, [1.0, 0.0, 0.0, 0.0])
    ref = encode_reference("rp", q, maps.net)
    assert reward(_answer(B, B_TOTALS), ref) == 1.0
    assert reward(_answer(B, A_TOTALS), ref) < 1.0


def test_paper_metrics_are_those_of_the_route_alone(maps: _Maps) -> None:
    q = _query(maps, [1.0, 0.0, 0.0, 0.0])
    for route in (A, B):
        rows = [_both(maps, q, _answer(route, t))[0] for t in (A_TOTALS, B_TOTALS)]
        assert {(r["ema"], r["pma"], r["ds"]) for r in rows} == {(1, 1.0, 2)}


def test_wrong_marks_check_the_totals_of_the_tie_with_those_stations(maps: _Maps) -> None:
    q = _query(maps, [1.0, 0.0, 0.0, 0.0])
    row, rw = _both(maps, q, _answer("S-Y-T", B_TOTALS))  # B without its transfer mark
    assert row["totals"] == {"T": True, "P": True, "C": True, "R": True}
    assert not row["strict"] and row["error_type"] == "Transfer Indeterminate"
    assert rw.reward < 1.0 and rw.totals == 1.0


def test_a_route_that_is_not_optimal_is_checked_against_the_gold_totals(maps: _Maps) -> None:
    q = _query(maps, [1.0, 0.0, 0.0, 0.0])
    row, rw = _both(maps, q, _answer(C, C_TOTALS))
    assert row["valid"] and not row["optimal"]
    assert row["totals"] == {"T": False, "P": False, "C": False, "R": False}
    row, _ = _both(maps, q, _answer(C, A_TOTALS))
    assert row["totals"] == {"T": True, "P": True, "C": True, "R": True}
    assert row["error_type"] == "Path Search"
    unparsed, _ = _both(maps, q, "no route here\n" + _answer("", A_TOTALS).split("\n", 1)[1])
    assert not unparsed["parsed"] and all(unparsed["totals"].values())


def test_only_the_stored_letters_are_checked(maps: _Maps) -> None:
    q = _query(maps, [1.0, 0.0, 0.0, 0.0])
    q = msgspec.structs.replace(q, totals={"Total_Price": 2.0})
    row, rw = _both(maps, q, _answer(B, B_TOTALS))
    assert row["totals"] == {"P": True} and rw.reward == 1.0
    row, rw = _both(maps, q, _answer(B, A_TOTALS))
    assert row["totals"] == {"P": False} and rw.reward < 1.0


# --------------------------------------------------------------------------- brute force
_STATIONS = ["S", "A", "B", "C", "T"]
# two routes S-A-T and S-B-T always, and any of the other pairs but S-T
_BASE = [("S", "A"), ("A", "T"), ("S", "B"), ("B", "T")]
_EXTRA = [p for p in itertools.combinations(_STATIONS, 2) if p not in (*_BASE, ("S", "T"))]


@st.composite
def _tied_map(draw: Any) -> tuple[Network, list[float]]:
    """A metromap on five stations, S and T joined through A and through B, one line per
    station pair (so each route has one line assignment), small integer times and prices
    (ties are frequent), and weights on time alone or price alone (so J is Total_Time / 3 or
    Total_Price / 1.5, SPEC 3)."""
    pairs = _BASE + draw(st.lists(st.sampled_from(_EXTRA), max_size=len(_EXTRA), unique=True))
    small = st.integers(0, 2).map(float)
    rate = st.sampled_from([0.0, 0.4, 0.5, 0.9])
    edges = [
        Edge(
            u,
            v,
            draw(st.sampled_from(["L1", "L2", "L3"])),
            time=draw(small),
            price=draw(small),
            comfort=draw(rate),
            reliability=draw(rate),
        )
        for u, v in pairs
    ]
    net = _metromap(edges, {s: draw(small) for s in _STATIONS}, "brute")
    vertices = {
        k: dataclasses.replace(v, time=draw(small), price=draw(small), comfort=draw(rate))
        for k, v in net.vertices.items()
    }
    weights = draw(st.sampled_from([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]))
    return net.with_attributes(vertices=vertices), weights


def _simple_paths(net: Network, s: str, t: str) -> list[list[str]]:
    out: list[list[str]] = []

    def walk(path: list[str]) -> None:
        if path[-1] == t:
            out.append(path)
            return
        for nxt in net.neighbours(path[-1]):
            if nxt not in path:
                walk([*path, nxt])

    walk([s])
    return out


def _brute_totals(net: Network, path: list[str]) -> tuple[dict[str, Fraction], tuple[int, ...]]:
    """Exact totals and transfer positions of a path (SPEC 3), summed from the tables."""
    hops = [net.edges_between(a, b)[0] for a, b in itertools.pairwise(path)]
    transfers = tuple(h for h in range(1, len(hops)) if hops[h - 1].line != hops[h].line)
    items = [net.vertices[s] for s in path[:-1]] + hops
    f = lambda x: Fraction(str(x))  # noqa: E731
    time = sum((f(i.time) for i in items), Fraction(0))
    time += sum((f(net.vertices[path[h]].transfer_time) for h in transfers), Fraction(0))

    def average(values: list[float]) -> Fraction:
        kept = [f(x) for x in values if x != 0]
        return sum(kept, Fraction(0)) / len(kept) if kept else Fraction(0)

    totals = {
        "Total_Time": time,
        "Total_Price": sum((f(i.price) for i in items), Fraction(0)),
        "Average_Comfort Level": average([i.comfort for i in items]),
        "Average_Reliability": average([i.reliability for i in items]),
    }
    return totals, transfers


def _cents(x: Fraction) -> Fraction:
    """Half-up to 2 decimals (the comparison of SPEC 13)."""
    return Fraction(int(x * 100 + Fraction(1, 2)), 100)


def _text(path: list[str], marks: tuple[int, ...], totals: dict[str, Fraction]) -> str:
    route = "-".join(s + ("(transfer)" if i in marks else "") for i, s in enumerate(path))
    return _answer(route, {k: f"{float(v):.6f}" for k, v in totals.items()})


@settings(max_examples=examples(150), deadline=None)
@given(case=_tied_map(), cap=st.sampled_from([None, 1]))
def test_every_optimal_route_is_paid_for_its_own_totals_only(case: Any, cap: int | None) -> None:
    net, weights = case
    paths = _simple_paths(net, "S", "T")  # never empty (S-A-T)
    column = "Total_Time" if weights[0] else "Total_Price"
    brute = {tuple(p): _brute_totals(net, p) for p in paths}
    best = min(t[column] for t, _ in brute.values())
    optimal = [p for p, (t, _) in brute.items() if t[column] == best]
    maps = _Maps(net)
    q = _query(maps, weights, keep=cap)
    # the exact solver finds the brute-force optima; the stored totals are routes[0]'s
    listed = {tuple(r.replace("(transfer)", "").split("-")) for r in q.routes}
    assert listed <= set(optimal) and (cap is not None or listed == set(optimal))
    first = tuple(q.routes[0].replace("(transfer)", "").split("-"))
    assert all(_cents(brute[first][0][k]) == _cents(Fraction(str(v))) for k, v in q.totals.items())
    for p in optimal:
        own, marks = brute[p]
        if p not in listed:
            event("an optimal route the capped list leaves out")
        row, rw = _both(maps, q, _text(list(p), marks, own))
        assert row["strict"] and all(row["totals"].values()), (p, row["totals"])
        assert rw.reward == 1.0
        for o in optimal:
            other = brute[o][0]
            differs = {k for k in other if _cents(other[k]) != _cents(own[k])}
            if not differs:
                continue
            event("a tie with other totals")
            row, rw_other = _both(maps, q, _text(list(p), marks, other))
            assert {TOTAL_FIELDS[i] for i, x in enumerate("TPCR") if not row["totals"][x]} == (
                differs
            ), (p, o)
            assert row["error_type"] == "Table Lookup" and rw_other.reward < rw.reward
