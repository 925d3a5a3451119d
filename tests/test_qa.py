"""The 24 QA types (SPEC 10): answers on hand-worked networks, sampling, wording."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from maptab.core.network import Edge, Network, Vertex
from maptab.core.qa_types import (
    CAPABILITIES,
    QA_TYPES,
    QAError,
    qa_answer,
    qa_question,
    qa_templates,
    qa_type,
    round2,
    sample_qa_params,
)
from maptab.core.schema import QA_STYLES


# ---------------------------------------------------------------- hand-worked metromap
#   Red:   A - B - C - D - E
#   Blue:  F - C - D - G           (shares the C-D track with Red)
#   Green: G - H - I - J - K - L - G  (loop line, 6 stations)
# Transfer stations: C (Red, Blue, TT 8), D (Red, Blue, TT 5), G (Blue, Green, TT 12).
def _metro() -> Network:
    net = Network.from_lines(
        {
            "Red": ["A", "B", "C", "D", "E"],
            "Blue": ["F", "C", "D", "G"],
            "Green": ["G", "H", "I", "J", "K", "L", "G"],
        }
    )
    #         time  rel   transfer time
    rows = {
        "A": (1.00, 0.50, 0),
        "B": (1.25, 0.60, 0),
        "C": (0.50, 0.60, 8),
        "D": (2.00, 0.80, 5),
        "E": (1.10, 0.90, 0),
        "F": (0.75, 0.55, 0),
        "G": (1.50, 0.65, 12),
        "H": (0.60, 0.95, 0),
        "I": (1.95, 0.75, 0),
        "J": (0.80, 0.86, 0),
        "K": (0.45, 0.70, 0),
        "L": (1.05, 0.90, 0),
    }
    vertices = {
        s: Vertex(s, v.lines, time=rows[s][0], reliability=rows[s][1], transfer_time=rows[s][2])
        for s, v in net.vertices.items()
    }
    values = {("C", "D", "Red"): (2.50, 1.20, 0.40), ("C", "D", "Blue"): (2.10, 0.30, 0.90)}
    edges = [
        Edge(e.u, e.v, e.line, *values.get((e.u, e.v, e.line), (2.0, 1.0, 0.5))) for e in net.edges
    ]
    return net.with_attributes(vertices=vertices, edges=edges)


# ---------------------------------------------------------------- hand-worked travelmap
#   P - Q          cycle P-Q-R-S, spur S-U-W-Y, leaf R-X
#   |   |
#   S - R - X
#   |
#   U - W - Y
def _travel() -> Network:
    pairs = [("P", "Q"), ("Q", "R"), ("R", "S"), ("S", "P"), ("S", "U"), ("U", "W"), ("W", "Y")]
    net = Network.from_edges([*pairs, ("R", "X")])
    #        time price
    rows = {
        "P": (0, 100),  # a hub
        "Q": (45, 35),
        "R": (35, 15),
        "S": (60, 60),
        "U": (31, 40),
        "W": (30, 10),
        "X": (120, 25),
        "Y": (20, 55),
    }
    vertices = {s: Vertex(s, time=t, price=p) for s, (t, p) in rows.items()}
    edges = [Edge(e.u, e.v, None, 10.0, 30.0, 4.0, 0.5) for e in net.edges]
    edges[0] = Edge("P", "Q", None, 12.0, 20.0, 3.5, 0.75)
    return net.with_attributes(vertices=vertices, edges=edges)


METRO, TRAVEL = _metro(), _travel()

METRO_CASES = [
    (1, {}, 3),
    # Red A→E passes B, C, D
    (2, {"line": "Red", "a": "A", "b": "E"}, 3),
    (2, {"line": "Red", "a": "E", "b": "D"}, 0),
    # Green loop G→I: G-H-I (1 between) is shorter than G-L-K-J-I (3)
    (2, {"line": "Green", "a": "G", "b": "I"}, 1),
    # G→J: both ways pass 2 stations
    (2, {"line": "Green", "a": "G", "b": "J"}, 2),
    (3, {"a": "A", "line": "Red"}, 1),
    (3, {"a": "A", "line": "Blue"}, 0),
    (3, {"a": "C", "line": "Blue"}, 1),
    # Red 5, Blue 4, Green 6 distinct stations (the loop's G counted once)
    (4, {}, 6),
    # the two C-D edges differ by line
    (5, {"a": "C", "b": "D", "line": "Red", "attribute": "time"}, 2.50),
    (5, {"a": "C", "b": "D", "line": "Blue", "attribute": "price"}, 0.30),
    (5, {"a": "D", "b": "C", "line": "Blue", "attribute": "comfort"}, 0.90),
    # Red A-B … D-E: B-C and C-D lie between
    (6, {"line": "Red", "a": "A", "b": "B", "c": "D", "d": "E"}, 2),
    (6, {"line": "Red", "a": "B", "b": "C", "c": "C", "d": "D"}, 0),
    # Green G-H … I-J: H-I one way (1), J-K, K-L, L-G the other (3)
    (6, {"line": "Green", "a": "G", "b": "H", "c": "I", "d": "J"}, 1),
    (6, {"line": "Green", "a": "G", "b": "H", "c": "J", "d": "K"}, 2),
    (7, {}, 3),
    (8, {"line": "Red"}, 2),
    (8, {"line": "Blue"}, 3),
    (8, {"line": "Green"}, 1),
    (9, {"a": "A", "b": "E"}, 1),
    (9, {"a": "A", "b": "F"}, 0),
    (9, {"a": "C", "b": "G"}, 1),
    (9, {"a": "E", "b": "H"}, 0),
    # Red 1+1.25+.5+2+1.1 = 5.85; Blue .75+.5+2+1.5 = 4.75; Green 1.5+.6+1.95+.8+.45+1.05 = 6.35
    (10, {}, 6.35),
    # A, B, C, D: (.5+.6+.6+.8)/4 = 0.625 → 0.63 (half up)
    (11, {"line": "Red", "a": "A", "b": "D"}, 0.63),
    # F, C on Blue: (.55+.6)/2 = 0.575 → 0.58
    (11, {"line": "Blue", "a": "F", "b": "C"}, 0.58),
    # G, H, I on the loop's short way: (.65+.95+.75)/3 = 0.7833 → 0.78
    (11, {"line": "Green", "a": "I", "b": "G"}, 0.78),
    # Red ∩ Blue = C (8), D (5); Blue ∩ Green = G (12); Red ∩ Green = ∅
    (12, {"line": "Red", "line2": "Blue"}, 5),
    (12, {"line": "Green", "line2": "Blue"}, 12),
    (12, {"line": "Red", "line2": "Green"}, 0),
]

SHOWN_ORDER = ["S", "P", "Y", "Q", "W", "R", "X", "U"]
TRAVEL_CASES = [
    (13, {}, None, 8),
    (14, {"a": "P"}, None, 1),
    (14, {"a": "S"}, None, 1),
    (14, {"a": "U"}, None, 0),
    (14, {"a": "X"}, None, 0),
    (15, {"a": "S"}, None, 3),  # R, P, U
    (15, {"a": "Y"}, None, 1),
    # Edge column: R in Q-R, R-S, R-X and S in R-S, S-P, S-U appear 3 times
    (16, {}, None, 3),
    (17, {"a": "P", "b": "Q", "attribute": "time"}, None, 12.0),
    (17, {"a": "Q", "b": "P", "attribute": "price"}, None, 20.0),
    (18, {"a": "Q", "b": "Y"}, None, 0),  # Q-P-S-U-W-Y: 5 hops
    (18, {"a": "Q", "b": "W"}, None, 1),  # 4 hops
    # Time < 30: P (0), Y (20); W (30) is not below 30
    (19, {}, None, 2),
    (20, {"a": "Q", "b": "S", "c": "U", "d": "X"}, None, 25),
    (20, {"a": "P", "b": "Q", "c": "R", "d": "S"}, None, 15),
    (21, {"a": "P", "b": "Q"}, {"vertices": SHOWN_ORDER}, 1),
    (21, {"a": "Q", "b": "S"}, {"vertices": SHOWN_ORDER}, 0),
    (22, {"dropped": []}, {"mix": SHOWN_ORDER}, 1),
    (22, {"dropped": ["X"]}, {"mix": [s for s in SHOWN_ORDER if s != "X"]}, 0),
    # Q→S: Q-P-S and Q-R-S; P (0) lies on one of them
    (23, {"a": "Q", "b": "S"}, None, 1),
    # Q→R: only Q-R (45, 35); P lies on the longer Q-P-S-R only
    (23, {"a": "Q", "b": "R"}, None, 0),
    # S→W: S-U-W (60, 31, 30)
    (23, {"a": "S", "b": "W"}, None, 0),
    # W→Y: the endpoint Y (20) counts
    (23, {"a": "W", "b": "Y"}, None, 1),
    (24, {"a": "S"}, None, 15),  # R 15, P 100, U 40
    (24, {"a": "W"}, None, 40),  # U 40, Y 55
]


@pytest.mark.parametrize(("qtype", "params", "expected"), METRO_CASES)
def test_metro_answers(qtype, params, expected):
    assert qa_answer(qtype, METRO, params) == expected


@pytest.mark.parametrize(("qtype", "params", "shown", "expected"), TRAVEL_CASES)
def test_travel_answers(qtype, params, shown, expected):
    assert qa_answer(qtype, TRAVEL, params, shown) == expected


def test_every_type_has_a_hand_worked_case():
    covered = {c[0] for c in METRO_CASES} | {c[0] for c in TRAVEL_CASES}
    assert covered == set(range(1, 25))


def test_single_line_map_type_12_is_one():
    one = Network.from_lines({"Red": ["A", "B", "C"]})
    assert qa_answer(12, one, {"line": "Red", "line2": "Red"}) == 1
    assert sample_qa_params(12, one, np.random.default_rng(0)) == {"line": "Red", "line2": "Red"}


def test_round2_is_half_up_on_the_decimal_value():
    assert round2(0.575) == 0.58  # round(0.575, 2) gives 0.57 (binary 0.57499…)
    assert round2(2.675) == 2.68
    assert round2(-0.0) == 0.0


@pytest.mark.parametrize(
    ("qtype", "net", "params", "shown", "message"),
    [
        (99, METRO, {}, None, "unknown QA type"),
        (13, METRO, {}, None, "is a travelmap question"),
        (2, METRO, {"line": "Red", "a": "A", "b": "G"}, None, "'G' is not on 'Red'"),
        (2, METRO, {"line": "Pink", "a": "A", "b": "B"}, None, "unknown line 'Pink'"),
        (5, METRO, {"a": "A", "b": "C", "line": "Red", "attribute": "time"}, None, "no edge A-C"),
        (11, METRO, {"line": "Green", "a": "G", "b": "J"}, None, "opposite on loop"),
        (3, METRO, {"line": "Red"}, None, "missing parameter 'a'"),
        (21, TRAVEL, {"a": "P", "b": "Q"}, None, "needs the vertices table order"),
        (21, TRAVEL, {"a": "P", "b": "Z"}, {"vertices": SHOWN_ORDER}, "'Z' is not in the table"),
        (15, TRAVEL, {"a": "Z"}, None, "unknown station 'Z'"),
        # a line or attribute that the map does not have is an error, never a silent 0
        (3, METRO, {"a": "A", "line": "Pink"}, None, "unknown line 'Pink'"),
        (8, METRO, {"line": "Pink"}, None, "unknown line 'Pink'"),
        (12, METRO, {"line": "Red", "line2": "Pink"}, None, "unknown line 'Pink'"),
        (5, METRO, {"a": "C", "b": "D", "line": "Red", "attribute": "colour"}, None,
         "attribute 'colour' is not one of time, price, comfort"),
        (17, TRAVEL, {"a": "P", "b": "Q", "attribute": "comfort"}, None,
         "attribute 'comfort' is not one of time, price"),
    ],
)  # fmt: skip
def test_bad_questions_raise_clear_errors(qtype, net, params, shown, message):
    with pytest.raises(QAError, match=re.escape(message)):
        qa_answer(qtype, net, params, shown)


# ---------------------------------------------------------------- the table as data
def test_table_shape_and_capabilities():
    assert [t.number for t in QA_TYPES] == list(range(1, 25))
    for scenario in ("metromap", "travelmap"):
        rows = [t for t in QA_TYPES if t.scenario == scenario]
        assert len(rows) == 12 and len({t.code for t in rows}) == 12
    for t in QA_TYPES:
        assert t.capabilities and set(t.capabilities) <= set(CAPABILITIES)
    # spot checks against the paper's Table 1
    assert qa_type(12).capabilities == ("CA", "GT", "PP", "GR")  # metro MM-SR
    assert qa_type(23).capabilities == ("CA", "PP", "GR")  # travel MM-LP
    assert qa_type(18).capabilities == ("TU", "GT", "PP")  # travel E-SR
    assert qa_type(5).capabilities == ("TU",)
    assert qa_type(10).drop_line_column and not qa_type(22).drop_line_column
    assert qa_type(11).inputs == ("map", "mix") and qa_type(21).inputs == ("vertices",)


# ---------------------------------------------------------------- sampling
def _shown_for(qtype: int, net: Network, params: dict) -> dict:
    kept = [s for s in reversed(net.stations) if s not in params.get("dropped", [])]
    return {"vertices": kept, "mix": kept}


@pytest.mark.parametrize("qtype", [t.number for t in QA_TYPES])
def test_sampled_params_are_answerable_seeded_and_json(qtype):
    net = METRO if qa_type(qtype).scenario == "metromap" else TRAVEL
    answers = set()
    for seed in range(24):
        params = sample_qa_params(qtype, net, np.random.default_rng(seed))
        assert params == sample_qa_params(qtype, net, np.random.default_rng(seed))
        assert json.loads(json.dumps(params)) == params
        answers.add(qa_answer(qtype, net, params, _shown_for(qtype, net, params)))
        for key in ("a", "b", "c", "d"):
            assert key not in params or params[key] in net.vertices
        if "line" in params and "a" in params and qtype in (2, 11):
            assert params["line"] in net.lines_of(params["a"])
            assert params["line"] in net.lines_of(params["b"]) and params["a"] != params["b"]
    if qa_type(qtype).kind == "yesno":
        assert answers == {0.0, 1.0}  # the coin flip reaches both answers


def test_type_22_drops_a_spot_in_about_half_the_samples():
    drops = [sample_qa_params(22, TRAVEL, np.random.default_rng(s))["dropped"] for s in range(40)]
    assert 10 <= sum(bool(d) for d in drops) <= 30
    assert all(len(d) <= 1 and set(d) <= set(TRAVEL.vertices) for d in drops)


# ---------------------------------------------------------------- wording
def test_templates_cover_every_type_and_style():
    templates = qa_templates()["types"]
    assert set(templates) == {str(n) for n in range(1, 25)}
    for entry in templates.values():
        assert set(entry) == set(QA_STYLES)
        assert len(set(entry.values())) == len(QA_STYLES)  # five distinct wordings


@pytest.mark.parametrize("qtype", [t.number for t in QA_TYPES])
def test_questions_fill_every_placeholder(qtype):
    net = METRO if qa_type(qtype).scenario == "metromap" else TRAVEL
    params = sample_qa_params(qtype, net, np.random.default_rng(qtype))
    for style in QA_STYLES:
        text = qa_question(qtype, style, params, net)
        assert not re.search(r"\{[a-z0-9_]+\}", text), text
        for key in ("a", "b", "c", "d", "line", "line2"):
            if key in params:
                assert params[key] in text
        hint = qa_templates()["hints"][qa_type(qtype).kind]
        assert text.endswith(hint)


def test_unknown_style_is_an_error():
    with pytest.raises(QAError, match="unknown QA style"):
        qa_question(1, "shouty", {}, METRO)


def test_question_with_an_unknown_attribute_names_it():
    params = {"a": "C", "b": "D", "line": "Red", "attribute": "colour"}
    with pytest.raises(QAError, match="attribute 'colour' is not one of"):
        qa_question(5, "direct", params, METRO)
