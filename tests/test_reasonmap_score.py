"""ReasonMap correctness and map score (SPEC 14) with hand-computed values.

Network: Line 1 = A, B, C, D (stations "X Station"); Line 2 = E, C, F; Line 3 = G, H.
Question A → F, reference: Line 1 A→C (via B, 1 stop), Line 2 C→F (no via stop).
"""

from __future__ import annotations

import pytest

from maptab.core.network import Network
from maptab.core.schema import ReasonMapQuestion
from maptab.score.map_score import difficulty_weight, lenient_key, score_reasonmap
from maptab.score.parse import parse_reasonmap


def net() -> Network:
    s = lambda x: f"{x} Station"  # noqa: E731
    return Network.from_lines(
        {
            "Line 1": [s("A"), s("B"), s("C"), s("D")],
            "Line 2": [s("E"), s("C"), s("F")],
            "Line 3": [s("G"), s("H")],
        },
        map_id="city",
    )


def question(template: str = "num_via") -> ReasonMapQuestion:
    seg = lambda r, d, a, via: {  # noqa: E731
        "route_name": r,
        "departure_stop": d,
        "arrival_stop": a,
        "via_stops": via,
        "num_via_stops": len(via),
    }
    return ReasonMapQuestion(
        id="rm1",
        map_id="city",
        split="test",
        station_1="A Station",
        station_2="F Station",
        question_short="?",
        question_long="?",
        long_template=template,
        question_difficulty="medium",
        map_difficulty="hard",
        routes=[
            [
                seg("Line 1", "A Station", "C Station", ["B Station"]),
                seg("Line 2", "C Station", "F Station", []),
            ]
        ],
    )


def answer(*segs: tuple[str, str, str, str]) -> str:
    return "\n--\n".join(
        f"Route Name: {r}\nDeparture Stop: {d}\nArrival Stop: {a}\n{extra}"
        for r, d, a, extra in segs
    )


def score(text: str, mode: str, template: str = "num_via"):
    return score_reasonmap(net(), question(template), parse_reasonmap(text, mode), mode)


def test_perfect_answers() -> None:
    short = answer(
        ("Line 1", "A Station", "C Station", ""), ("Line 2", "C Station", "F Station", "")
    )
    s = score(short, "short")
    # 1 (endpoints) + 2 × (2 + 1 + 1) = 9, then +10 correct
    assert s.correct and s.correct_strict and s.map_score == 19.0 and s.max_score == 20.0
    long = answer(
        ("Line 1", "A Station", "C Station", "Number of Via Stops: 1"),
        ("Line 2", "C Station", "F Station", "Number of Via Stops: 0"),
    )
    # route 9 + via (4 + 4) = 17 (≤ 20), +20 correct
    assert score(long, "long").map_score == 37.0
    vias = answer(
        ("Line 1", "A Station", "C Station", "Via Stops: B Station"),
        ("Line 2", "C Station", "F Station", "Via Stops: none"),
    )
    # via part: (min(10, 1 found) + 10 × IoU 1) / 2 = 5.5 → 9 + 5.5 = 14.5, +20
    assert score(vias, "long", "via_list").map_score == 34.5
    assert s.weight == 2.5  # (medium question, hard map)


def test_partial_and_wrong_answers() -> None:
    # wrong via count: 3 vs 1 → max(0, 4 − 4·2/1) = 0; second right → 4; route 9 → 13 + 20
    long = answer(
        ("Line 1", "A Station", "C Station", "Number of Via Stops: 3"),
        ("Line 2", "C Station", "F Station", "Number of Via Stops: 0"),
    )
    assert score(long, "long").map_score == 33.0
    # route name not on the map: not correct; 1 + (0 + 1 + 1) + (2 + 1 + 1) = 7
    bad_line = answer(
        ("Line 9", "A Station", "C Station", ""), ("Line 2", "C Station", "F Station", "")
    )
    s = score(bad_line, "short")
    assert not s.correct and s.map_score == 7.0
    # wrong destination: 0 points
    s = score(answer(("Line 1", "A Station", "D Station", "")), "short")
    assert not s.correct and s.map_score == 0.0
    # segments that do not meet
    gap = answer(("Line 1", "A Station", "B Station", ""), ("Line 2", "C Station", "F Station", ""))
    assert not score(gap, "short").correct
    # stop not on the line
    off = answer(("Line 1", "A Station", "E Station", ""), ("Line 2", "E Station", "F Station", ""))
    assert not score(off, "short").correct
    # unparseable
    s = score("I do not know", "short")
    assert not s.parsed and s.map_score == 0.0


def test_lenient_versus_strict() -> None:
    # names without "Station" and in other case pass leniently, fail strictly
    loose = answer(("line 1", "a", "c", ""), ("Line 2", "C", "F", ""))
    s = score(loose, "short")
    assert s.correct and not s.correct_strict
    # departure equal to arrival within a segment: lenient yes, strict no
    same = answer(
        ("Line 1", "A Station", "C Station", ""),
        ("Line 2", "C Station", "C Station", ""),
        ("Line 2", "C Station", "F Station", ""),
    )
    s = score(same, "short")
    assert s.correct and not s.correct_strict


def test_weights_and_keys() -> None:
    assert difficulty_weight("easy", "easy") == 1.0
    assert difficulty_weight("Hard", "middle") == 2.5
    assert difficulty_weight("hard", "hard") == 3.0
    with pytest.raises(ValueError):
        difficulty_weight("extreme", "easy")
    assert lenient_key("Deák Ferenc tér Station (Transfer Station)") == lenient_key(
        "deak ferenc ter"
    )
    assert lenient_key("西直门站") == lenient_key("西直门")


def _three_leg_question(template: str) -> ReasonMapQuestion:
    q = question(template)
    legs = [("Line 1", "A", "B", []), ("Line 1", "B", "C", []), ("Line 2", "C", "F", [])]
    q.routes = [
        [
            {
                "route_name": r,
                "departure_stop": f"{d} Station",
                "arrival_stop": f"{a} Station",
                "via_stops": via,
                "num_via_stops": len(via),
            }
            for r, d, a, via in legs
        ],
        *question(template).routes,
    ]
    return q


def test_caps_and_best_reference() -> None:
    legs = [
        ("Line 1", "A Station", "B Station", "Number of Via Stops: 0"),
        ("Line 1", "B Station", "C Station", "Number of Via Stops: 0"),
        ("Line 2", "C Station", "F Station", "Number of Via Stops: 0"),
    ]
    q = _three_leg_question("num_via")
    short = score_reasonmap(net(), q, parse_reasonmap(answer(*legs), "short"), "short")
    # 1 + 3 × 4 = 13, capped at 10, +10; the two-leg reference would give less
    assert short.correct and short.map_score == 20.0
    long = score_reasonmap(net(), q, parse_reasonmap(answer(*legs), "long"), "long")
    # route 10 + via 3 × 4 = 12 capped at 10, +20
    assert long.map_score == 40.0
    # against the two-leg reference alone: route 1 + (2 + 1 + 0) + 0 = 4; via: said 0 for
    # 1 → 0, said 0 for 0 → 4
    q.routes = q.routes[1:]
    long = score_reasonmap(net(), q, parse_reasonmap(answer(*legs), "long"), "long")
    assert long.map_score == 4.0 + 4.0 + 20.0


def test_via_scores_edge_cases() -> None:
    # reference count 0, answer says 2: 0 for that leg (no division by zero)
    long = answer(
        ("Line 1", "A Station", "C Station", "Number of Via Stops: 1"),
        ("Line 2", "C Station", "F Station", "Number of Via Stops: 2"),
    )
    assert score(long, "long").map_score == 9.0 + 4.0 + 20.0
    # a missing count scores 0, not a format error
    missing = answer(
        ("Line 1", "A Station", "C Station", ""), ("Line 2", "C Station", "F Station", "")
    )
    s = score(missing, "long")
    assert s.parsed and s.map_score == 9.0 + 20.0
    # via list on legs whose route names do not match the reference: no via points
    wrong_lines = answer(
        ("Line 2", "A Station", "C Station", "Via Stops: B Station"),
        ("Line 1", "C Station", "F Station", "Via Stops: none"),
    )
    s = score(wrong_lines, "long", "via_list")
    assert not s.correct and s.map_score == 1.0 + 2.0 + 2.0
    # one of two listed via stops right on leg 1: found 1, IoU 1/2 → (1 + 5) / 2 = 3
    half = answer(
        ("Line 1", "A Station", "C Station", "Via Stops: B Station, D Station"),
        ("Line 2", "C Station", "F Station", "Via Stops: none"),
    )
    assert score(half, "long", "via_list").map_score == 9.0 + 3.0 + 20.0


def test_line_names_as_printed_on_the_map() -> None:
    # "1", "2号线", "M2" name Line 1 / Line 2 (aliases, SPEC 14): scored as the exact names
    for first, second in [("1", "2号线"), ("Line 1", "M2"), ("一号线", "2")]:
        short = answer(
            (first, "A Station", "C Station", ""), (second, "C Station", "F Station", "")
        )
        s = score(short, "short")
        assert s.correct and s.correct_strict and s.map_score == 19.0, (first, second)
        vias = answer(
            (first, "A Station", "C Station", "Via Stops: B Station"),
            (second, "C Station", "F Station", "Via Stops: none"),
        )
        assert score(vias, "long", "via_list").map_score == 34.5
    # a number that is no line of the map, or the wrong line, is still wrong
    for wrong in ("9", "3", "S2", "2A"):
        s = score(
            answer(("1", "A Station", "C Station", ""), (wrong, "C Station", "F Station", "")),
            "short",
        )
        assert not s.correct and not s.correct_strict and s.map_score == 7.0, wrong
