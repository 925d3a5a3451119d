"""Line names as printed on the map (SPEC 14): keys, aliases, and ReasonMap answers using them.

The safety property: an alias names the one line of the map whose key it is, and an answer
never gets another real line through an alias (every test map runs all its lines over the
same stations, so only the route name decides).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.line_names import chinese_number, line_aliases, line_key
from maptab.core.network import Network
from maptab.core.schema import ReasonMapQuestion
from maptab.score.map_score import canonical_route_names, lenient_key, score_reasonmap
from maptab.score.parse import Segment, parse_reasonmap

STATIONS = Path(__file__).resolve().parents[2] / "shared" / "data" / "reasonmap-stations"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        # English: a generic word before or after
        ("Line 15", "15"),
        ("line15", "15"),
        ("15 Line", "15"),
        ("East West Line", "eastwest"),
        ("East-West Line", "eastwest"),
        ("Line A", "a"),
        ("Line AA", "aa"),
        # Chinese (simplified and traditional), numerals, width
        ("15号线", "15"),
        ("15 号线", "15"),
        ("15號線", "15"),
        ("十五号线", "15"),
        ("二十一号线", "21"),
        ("一号线", "1"),
        ("房山线", "房山"),
        ("地铁1号线", "1"),
        ("Ｌｉｎｅ　１５", "15"),
        # Japanese and Korean
        ("銀座線", "銀座"),
        ("2호선", "2"),
        # German, French, Spanish, Portuguese, Italian, Dutch
        ("Linie 7", "7"),
        ("Ligne 4", "4"),
        ("Línea 3", "3"),
        ("Linha Azul", "azul"),
        ("Linea A", "a"),
        ("Lijn 5", "5"),
        # a mode word
        ("Metrorail Green Line", "green"),
        ("Metro Line 1", "1"),
        # a letter before a number: L and M only
        ("M1", "1"),
        ("L 1", "1"),
        ("Line M1", "1"),
        ("S1", "s1"),
        ("U1", "u1"),
        ("T1", "t1"),
        ("MA", "ma"),
        ("1A", "1a"),
        ("Line 1A", "1a"),
        ("Line 01", "1"),
        # nothing would be left: the step is skipped
        ("Line", "line"),
        ("号线", "号线"),
        ("Metro", "metro"),
    ],
)
def test_line_key_per_pattern(name: str, key: str) -> None:
    assert line_key(name) == key


def test_chinese_numbers() -> None:
    assert [chinese_number(t) for t in ("一", "十", "十五", "二十", "九十九", "〇")] == [
        1,
        10,
        15,
        20,
        99,
        0,
    ]
    assert chinese_number("百") is None and chinese_number("十十") is None
    assert chinese_number("") is None


def test_ambiguous_keys_are_no_aliases() -> None:
    assert line_aliases(["Line 1", "M1", "Line 15", "S1"]) == {"15": "Line 15", "s1": "S1"}
    assert line_aliases(["1", "Line 1"]) == {}
    assert line_aliases(["Line 1", "Line 1A"]) == {"1": "Line 1", "1a": "Line 1A"}


# ----------------------------------------------------------------------------- properties
CORES = st.one_of(
    st.integers(0, 30).map(str),
    st.sampled_from(["1A", "S1", "U1", "A", "B", "Red", "East West", "房山", "Azul"]),
)
STYLES = ("Line {}", "{}", "{} Line", "{}号线", "Linha {}", "M{}", "L{}", "Line M{}")


def styled(core: str, style: str) -> str | None:
    """``core`` written in ``style``; the letter styles only before a number."""
    if ("M{}" in style or style == "L{}") and not core.isdigit():
        return None
    return style.format(core)


def printed_forms(core: str) -> list[str]:
    return [n for s in STYLES if (n := styled(core, s)) is not None]


@st.composite
def line_sets(draw: st.DrawFn) -> dict[str, str]:
    """``{line name: its core}``: 1 to 6 lines, e.g. ``1`` and ``Line 1``, ``S1``, ``1A``."""
    pairs = draw(st.lists(st.tuples(CORES, st.sampled_from(STYLES)), min_size=1, max_size=6))
    lines: dict[str, str] = {}
    for core, style in pairs:
        name = styled(core, style)
        if name is not None:
            lines.setdefault(name, core)
    return lines or {"Line 1": "1"}


@settings(max_examples=examples(300))
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=8, unique=True))
def test_aliases_name_the_only_line_with_that_key(names: list[str]) -> None:
    aliases = line_aliases(names)
    for alias, line in aliases.items():
        assert [n for n in names if line_key(n) == alias] == [line]
    for n in names:
        unique = sum(line_key(m) == line_key(n) for m in names) == 1
        assert (aliases.get(line_key(n)) == n) == unique


@settings(max_examples=examples(200))
@given(CORES, CORES)
def test_printed_forms_share_one_key(core: str, other: str) -> None:
    """All printed forms of a line have one key; different lines (``1``, ``1A``, ``S1``,
    ``U1``) have different keys."""
    keys = {line_key(n) for n in printed_forms(core)}
    assert len(keys) == 1
    assert (keys == {line_key(n) for n in printed_forms(other)}) == (core == other)


def _shared_track(names: list[str]) -> Network:
    return Network.from_lines({n: ["A Station", "B Station"] for n in names}, map_id="m")


def _question(line: str) -> ReasonMapQuestion:
    seg = {
        "route_name": line,
        "departure_stop": "A Station",
        "arrival_stop": "B Station",
        "via_stops": [],
        "num_via_stops": 0,
    }
    return ReasonMapQuestion(
        id="q",
        map_id="m",
        split="test",
        station_1="A Station",
        station_2="B Station",
        question_short="?",
        question_long="?",
        long_template="num_via",
        question_difficulty="easy",
        map_difficulty="easy",
        routes=[[seg]],
    )


@settings(max_examples=examples(200))
@given(line_sets(), st.data())
def test_an_alias_never_gives_another_line(lines: dict[str, str], data: st.DataObject) -> None:
    names = list(lines)
    net = _shared_track(names)
    line = data.draw(st.sampled_from(names), label="line")
    other = data.draw(st.sampled_from(names), label="reference")
    form = data.draw(st.sampled_from(printed_forms(lines[line])), label="printed form of line")
    [seg] = canonical_route_names(net, [Segment(form, "A Station", "B Station")])
    exact = [n for n in names if lenient_key(n) == lenient_key(form)]
    owners = [n for n in names if line_key(lenient_key(n)) == line_key(lenient_key(form))]
    if exact:  # a line's own name: matched exactly, as without aliases
        assert seg.route_name == form
        resolved: str | None = exact[0]
    elif len(owners) == 1:
        assert seg.route_name == owners[0]
        resolved = owners[0]
    else:  # no line or two lines with that key: not resolved
        assert seg.route_name == form
        resolved = None
    if not exact:  # a printed form of ``line`` gives ``line`` or nothing, never another line
        assert resolved in (line, None)
    # scored against a one-segment reference on ``other``: correct only when the name
    # resolves, the 2 route-name points only when it resolves to ``other``
    s = score_reasonmap(net, _question(other), parse_reasonmap(_answer(form), "short"), "short")
    assert s.correct == s.correct_strict == (resolved is not None)
    same = resolved is not None and lenient_key(resolved) == lenient_key(other)
    assert s.map_score == 1 + 2 * same + 2 + 10 * s.correct
    # a line that is not on the map (another core) is never read as one of its lines
    foreign = data.draw(CORES.filter(lambda c: c not in lines.values()), label="foreign core")
    for form in printed_forms(foreign):
        if not any(lenient_key(n) == lenient_key(form) for n in names):
            [seg] = canonical_route_names(net, [Segment(form, "A Station", "B Station")])
            assert seg.route_name == form


def _answer(*routes: str, stops: tuple[str, ...] = ("A Station", "B Station")) -> str:
    return "\n--\n".join(
        f"Route Name: {r}\nDeparture Stop: {a}\nArrival Stop: {b}"
        for r, a, b in zip(routes, stops, stops[1:], strict=False)
    )


# ----------------------------------------------------------------------------- end to end
def test_fifteen_for_line_15_is_correct_and_sixteen_is_not() -> None:
    net = Network.from_lines(
        {
            "Line 15": ["A Station", "B Station", "C Station"],
            "Line 16": ["D Station", "E Station"],
        },
        map_id="m",
    )
    q = _question("Line 15")
    q.station_2 = "C Station"
    q.routes[0][0]["arrival_stop"] = "C Station"
    q.routes[0][0]["via_stops"] = ["B Station"]
    q.routes[0][0]["num_via_stops"] = 1

    def run(route: str, mode: str = "short"):
        text = _answer(route, stops=("A Station", "C Station"))
        if mode == "long":
            text += "\nNumber of Via Stops: 1"
        return score_reasonmap(net, q, parse_reasonmap(text, mode), mode)

    exact = run("Line 15")
    assert exact.correct and exact.correct_strict and exact.map_score == 15.0
    for printed in ("15", "15号线", "M15", "十五号线", "line 15", "Ｌｉｎｅ １５"):
        s = run(printed)
        assert (s.correct, s.correct_strict, s.map_score) == (True, True, 15.0), printed
        # route 1 + 2 + 1 + 1, via count right 4, +20 correct
        assert run(printed, "long").map_score == run("Line 15", "long").map_score == 29.0
    for wrong in ("16", "Line 16", "16号线", "M16", "S15", "15A", "Line 1"):
        s = run(wrong)
        assert not s.correct and not s.correct_strict and s.map_score == 3.0, wrong


def test_an_ambiguous_alias_is_not_accepted() -> None:
    net = _shared_track(["Line 1", "M1", "1A"])
    q = _question("Line 1")
    for route, correct in [("1", False), ("Line 1", True), ("M1", True), ("L1", False)]:
        s = score_reasonmap(net, q, parse_reasonmap(_answer(route), "short"), "short")
        assert s.correct == correct, route


@pytest.mark.skipif(not STATIONS.is_dir(), reason="ReasonMap metadata not found")
def test_every_real_line_keeps_its_alias() -> None:
    lines = {
        str(p.relative_to(STATIONS).with_suffix("")): list(json.loads(p.read_text("utf-8")))
        for p in sorted(STATIONS.rglob("*.json"))
    }
    assert len(lines) == 25
    for map_id, names in lines.items():
        assert len(line_aliases(names)) == len(names), map_id
    printed = {
        ("china/beijing", "15号线"): "Line 15",
        ("china/beijing", "房山"): "房山线",
        ("canada/toronto", "1"): "Line 1",
        ("hungary/budapest", "M2"): "Line 2",
        ("australia/sydney", "M1"): "Line M1",
        ("italy/rome", "A"): "Line A",
        ("america/los_angeles", "A Line"): "Line A",
        ("america/miami", "Green Line"): "Metrorail Green Line",
        ("singapore/singapore", "East West"): "East West Line",
        ("portugal/lisboa", "Linha Azul"): "Azul",
    }
    for (map_id, name), line in printed.items():
        assert line_aliases(lines[map_id]).get(line_key(name)) == line, (map_id, name)
