"""ReasonMap metadata import (SPEC 14): annotations, branched lines, repeats, real cities."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from maptab.core.validate import validate_network
from maptab.io.metadata import (
    MetadataError,
    MissingBranchSplits,
    default_map_id,
    homonym_warnings,
    load_branch_splits,
    load_reasonmap,
    strip_annotations,
)
from reasonmap_fixtures import AV7_BROOKLYN, AV7_MANHATTAN, NYC, ST36_BROOKLYN, ST36_QUEENS

STATIONS = Path(__file__).resolve().parents[2] / "shared" / "data" / "reasonmap-stations"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Termini Station (Transfer Station)", "Termini Station"),
        ("Promenade Station (Transfer Station) (Branch-starting Station)", "Promenade Station"),
        ("Bologna Station(branch-starting station)", "Bologna Station"),
        ("Bologna Station （Branch Starting Station）", "Bologna Station"),
        ("大连站（换乘站）", "大连站"),
        ("开发区站(支线起始站)", "开发区站"),
        ("春融街站（ 支线起始站 ）", "春融街站"),
        ("Waitematā (Britomart) Station (Transfer Station)", "Waitematā (Britomart) Station"),
        ("四方河（省中医院）站", "四方河（省中医院）站"),
        ("坝堰（机场）站", "坝堰（机场）站"),
        ("  Union   Station  ", "Union Station"),
        ("Transfer Station", "Transfer Station"),
    ],
)
def test_strip_annotations(raw: str, clean: str) -> None:
    assert strip_annotations(raw) == clean


def _meta(tmp_path: Path, data: object, name: str = "land/town.json") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


BRANCHED = {
    "L1": ["A (Transfer Station)", "B", "C (Branch-starting Station)", "D", "E", "F", "G"],
    "L2": ["A (Transfer Station)", "X"],
}


def test_branched_line_joins_the_branch_start(tmp_path: Path) -> None:
    net = load_reasonmap(_meta(tmp_path, BRANCHED), branch_splits={"land/town/L1": "F"})
    assert net.map_id == "land/town"
    assert {frozenset((e.u, e.v)) for e in net.line_edges("L1")} == {
        frozenset(p)
        for p in [("A", "B"), ("B", "C"), ("C", "D"), ("D", "E"), ("C", "F"), ("F", "G")]
    }
    assert "E" not in net.neighbours("F")
    assert net.meta["branches"] == {"L1": ["C", "F"]}
    assert validate_network(net) == []


def test_branch_at_the_first_station(tmp_path: Path) -> None:
    data = {"L": ["A (Branch-starting Station)", "B", "C", "D"]}
    net = load_reasonmap(_meta(tmp_path, data), branch_splits={"land/town/L": "C"})
    assert sorted(net.neighbours("A")) == ["B", "C"]
    assert net.neighbours("D") == ["C"]


def test_branched_line_without_split_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(MetadataError, match="'land/town/L1' \\(branched at 'C'\\)"):
        load_reasonmap(_meta(tmp_path, BRANCHED), branch_splits={})


def test_all_branched_lines_without_split_in_one_error(tmp_path: Path) -> None:
    data = {
        **BRANCHED,
        "L3": ["P", "Q (Branch-starting Station)", "R", "S", "T"],
        "L4": ["U", "V", "W"],
    }
    path = _meta(tmp_path, data)
    with pytest.raises(MissingBranchSplits) as info:
        load_reasonmap(path, branch_splits={})
    assert info.value.missing == {"land/town/L1": "C", "land/town/L3": "Q"}
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: branched 2 lines are missing")
    assert '{"land/town/L1": "<first branch station>", "land/town/L3": ' in message


@pytest.mark.parametrize(
    ("splits", "match"),
    [
        ({"land/town/L1": "Q"}, "'Q' is not on the line"),
        ({"land/town/L1": "D"}, "must come after"),
        ({"land/town/L1": "B"}, "must come after"),
        ({"land/town/L1": "F", "land/town/L2": "X"}, "no Branch-starting station"),
        ({"land/town/L1": "F", "land/town/L9": "X"}, "unknown line 'land/town/L9'"),
    ],
)
def test_bad_splits(tmp_path: Path, splits, match) -> None:
    with pytest.raises(MetadataError, match=match):
        load_reasonmap(_meta(tmp_path, BRANCHED), branch_splits=splits)


def test_splits_of_other_maps_are_ignored(tmp_path: Path) -> None:
    net = load_reasonmap(
        _meta(tmp_path, BRANCHED), branch_splits={"land/town/L1": "F", "sea/port/L1": "Z"}
    )
    assert len(net.edges) == 7


def test_loop_line_and_consecutive_repeats(tmp_path: Path) -> None:
    data = {"Ring": ["A", "B", "B (Transfer Station)", "C", "D", "A"], "Spur": ["B", "E"]}
    net = load_reasonmap(_meta(tmp_path, data), branch_splits={})
    assert net.is_loop("Ring")
    assert len(net.line_edges("Ring")) == 4
    assert validate_network(net) == []


def _line_of(net, line: str) -> set[str]:
    return {net.label(s) for e in net.line_edges(line) for s in (e.u, e.v)}


def test_homonyms_are_kept_apart_and_resolved_by_neighbourhood(tmp_path: Path) -> None:
    # a map id without a shipped station alias file: the homonym rule alone decides
    path = _meta(tmp_path, NYC, "america/nyc_subset.json")
    net = load_reasonmap(path, branch_splits={})
    labels = {net.label(s) for s in net.vertices}
    assert {AV7_MANHATTAN, AV7_BROOKLYN, ST36_QUEENS, ST36_BROOKLYN} <= labels
    assert "7 Av Station" not in labels and "36 St Station" not in labels  # nothing merged
    assert len(net.vertices) == 28  # 26 names, two of them for two stations each
    # ids are the table spelling of the display names, and distinct
    assert net.resolve(AV7_MANHATTAN) != net.resolve(AV7_BROOKLYN)
    assert net.resolve(AV7_MANHATTAN) == AV7_MANHATTAN.replace("-", "_")
    # line B rides through both 7 Avs, in its own order
    assert net.neighbours(net.resolve(AV7_BROOKLYN)) == [
        net.resolve("Atlantic Av Station"),
        net.resolve("Prospect Park Station"),
    ]
    # the other lines get the one next to their own neighbours
    assert AV7_MANHATTAN in _line_of(net, "D") and AV7_BROOKLYN not in _line_of(net, "D")
    assert AV7_BROOKLYN in _line_of(net, "Q") and AV7_MANHATTAN not in _line_of(net, "Q")
    # E's neighbour 50 St is 3 hops from the Manhattan one (59 St, line A), 5+ from Brooklyn
    assert AV7_MANHATTAN in _line_of(net, "E") and AV7_BROOKLYN not in _line_of(net, "E")
    assert ST36_QUEENS in _line_of(net, "M") and ST36_BROOKLYN in _line_of(net, "D")
    assert sorted(net.lines_of(net.resolve(AV7_MANHATTAN))) == ["B", "D", "E"]
    assert sorted(net.lines_of(net.resolve(ST36_BROOKLYN))) == ["D", "R"]
    assert validate_network(net) == []
    # one warning line per homonym, naming the line, both stations and the choices made
    warnings = homonym_warnings(net)
    assert len(warnings) == 2 and all("\n" not in w for w in warnings)
    assert warnings[0].startswith("america/nyc_subset: line 'B' lists '7 Av Station' 2 times")
    assert repr(AV7_MANHATTAN) in warnings[0] and repr(AV7_BROOKLYN) in warnings[0]
    assert f"line 'D' -> {AV7_MANHATTAN!r}" in warnings[0]
    assert f"line 'Q' -> {AV7_BROOKLYN!r}" in warnings[0]
    assert "line 'R' lists '36 St Station' 2 times" in warnings[1]
    assert "no neighbour decides" not in " ".join(warnings)
    # deterministic
    assert load_reasonmap(path, branch_splits={}).to_dict() == net.to_dict()


def test_homonym_on_a_line_without_deciding_neighbours_is_reported(tmp_path: Path) -> None:
    data = {"L": ["A", "X", "B", "C", "X", "D"], "S": ["P", "X", "Q"]}
    net = load_reasonmap(_meta(tmp_path, data), branch_splits={})
    first, second = "X (between A and B)", "X (between C and D)"
    assert net.neighbours(first) == ["A", "B", "P", "Q"] and net.neighbours(second) == ["C", "D"]
    (warning,) = homonym_warnings(net)
    assert "no neighbour decides on line(s) 'S': the first candidate was taken" in warning


def test_homonym_names_stay_distinct(tmp_path: Path) -> None:
    # both X sit between A and B: the qualifiers would collide, so the stop number is used
    data = {"L": ["A", "X", "B", "A", "X", "B", "C"]}
    net = load_reasonmap(_meta(tmp_path, data), branch_splits={})
    labels = sorted(net.vertices)
    assert labels == sorted(
        ["A (next to X)", "X (between A and B)", "B (between X and A)", "A (between B and X)",
         "X (L stop 5)", "B (between X and C)", "C"]
    )  # fmt: skip
    assert len(net.line_edges("L")) == 6
    assert len(homonym_warnings(net)) == 3


def test_a_line_listed_twice_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"B": ["A", "C"], "Q": ["C", "D"], "B": ["E", "F"]}', encoding="utf-8")
    with pytest.raises(MetadataError, match="key 'B' appears twice") as info:
        load_reasonmap(path, branch_splits={})
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    path.write_text('{"Line 1": ["A", "C"], "Line  1": ["E", "F"]}', encoding="utf-8")
    with pytest.raises(MetadataError, match="'Line  1' and 'Line 1' are the same line name"):
        load_reasonmap(path, branch_splits={})
    splits = tmp_path / "s.json"
    splits.write_text('{"a/b/L": "X", "a/b/L": "Y"}', encoding="utf-8")
    with pytest.raises(MetadataError, match="key 'a/b/L' appears twice"):
        load_branch_splits(splits)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{", "malformed JSON"),
        ("[]", "non-empty object"),
        ("{}", "non-empty object"),
        ('{"L": "A"}', "expected a list"),
        ('{"L": ["A", 3]}', "expected a list"),
        ('{"L": ["A"]}', "fewer than two"),
        ('{"L": ["A", "A"]}', "fewer than two"),
        ('{"L": ["A", "(Transfer Station)"]}', "empty station name"),
    ],
)
def test_malformed_metadata(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "c" / "m.json"
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")
    with pytest.raises(MetadataError, match=match) as info:
        load_reasonmap(path, branch_splits={})
    assert str(path) in str(info.value)


@pytest.mark.parametrize("content", ['{"L": [' + "1" * 5000 + "]}", "[" * 100_000])
def test_json_the_parser_cannot_hold_is_one_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(MetadataError, match="malformed JSON") as info:
        load_reasonmap(path, branch_splits={})
    assert str(path) in str(info.value)


def test_non_utf8_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_bytes('{"L": ["Caf\xe9", "B"]}'.encode("latin-1"))
    with pytest.raises(MetadataError, match="UTF-8"):
        load_reasonmap(path, branch_splits={})
    with pytest.raises(MetadataError, match="no such file"):
        load_reasonmap(tmp_path / "none.json", branch_splits={})


def test_hyphenated_names_keep_display_labels(tmp_path: Path) -> None:
    net = load_reasonmap(
        _meta(tmp_path, {"L": ["Porta Furba-Quadraro Station", "Numidio Station"]}),
        branch_splits={},
    )
    assert "Porta Furba_Quadraro Station" in net.vertices
    assert net.label("Porta Furba_Quadraro Station") == "Porta Furba-Quadraro Station"


def test_default_map_id_and_override(tmp_path: Path) -> None:
    assert default_map_id("/data/reasonmap-stations/italy/rome.json") == "italy/rome"
    net = load_reasonmap(
        _meta(tmp_path, BRANCHED), branch_splits={"my/map/L1": "F"}, map_id="my/map"
    )
    assert net.map_id == "my/map"


def test_load_branch_splits_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "s.json"
    bad.write_text('["x"]', encoding="utf-8")
    with pytest.raises(MetadataError, match="expected an object"):
        load_branch_splits(bad)
    bad.write_text('{"a/b/L": 3}', encoding="utf-8")
    with pytest.raises(MetadataError, match="expected an object"):
        load_branch_splits(bad)
    with pytest.raises(MetadataError, match="no such file"):
        load_branch_splits(tmp_path / "none.json")


def test_shipped_splits_are_well_formed() -> None:
    splits = load_branch_splits()
    assert splits["italy/rome/Line B"] == "S. Agnese Annibaliano Station"
    assert all(k.count("/") >= 2 for k in splits)


# ----------------------------------------------------------------------------- real data
@pytest.fixture(scope="module")
def stations() -> Path:
    if not STATIONS.is_dir():
        pytest.skip(f"ReasonMap metadata not found at {STATIONS}")
    return STATIONS


@pytest.mark.conformance
def test_all_real_topologies_load_and_validate(stations: Path) -> None:
    files = sorted(stations.glob("*/*.json"))
    assert len(files) == 25
    used: set[str] = set()
    for path in files:
        net = load_reasonmap(path)
        assert validate_network(net) == [], path
        used.update(f"{net.map_id}/{line}" for line in net.meta["branches"])
        for e in net.edges:
            assert "Transfer Station" not in e.u and "换乘站" not in e.u
    # every shipped split of a city present here is needed
    present = {f"{p.parent.name}/{p.stem}" for p in files}
    assert used == {k for k in load_branch_splits() if k.rsplit("/", 1)[0] in present}


@pytest.mark.conformance
@pytest.mark.parametrize(
    ("city", "lines", "stations_", "edges"),
    [
        ("italy/rome", 3, 73, 72),
        ("china/dalian", 6, 100, 101),
        ("china/beijing", 21, 363, 441),
        ("america/washington", 6, 98, 143),
        ("singapore/singapore", 6, 142, 163),
        ("united_arab_emirates/dubai", 2, 52, 52),
        ("australia/sydney", 1, 21, 20),
    ],
)
def test_counts(stations: Path, city: str, lines: int, stations_: int, edges: int) -> None:
    net = load_reasonmap(stations / f"{city}.json")
    assert (len(net.line_names), len(net.vertices), len(net.edges)) == (lines, stations_, edges)


@pytest.mark.conformance
def test_rome_line_b_branch(stations: Path) -> None:
    net = load_reasonmap(stations / "italy" / "rome.json")
    assert net.map_id == "italy/rome"
    assert "S. Agnese Annibaliano Station" not in net.neighbours("Rebibbia Station")
    assert "S. Agnese Annibaliano Station" in net.neighbours("Bologna Station")
    assert sorted(net.neighbours("Bologna Station")) == [
        "Policlinico Station",
        "S. Agnese Annibaliano Station",
        "Tiburtina Station",
    ]
    assert net.lines_of("Termini Station") == ("Line A", "Line B")
    assert len(net.line_edges("Line B")) == 25


@pytest.mark.conformance
def test_dalian_and_dubai_branches_follow_the_maps(stations: Path) -> None:
    dalian = load_reasonmap(stations / "china" / "dalian.json")
    assert "通世泰站" in dalian.neighbours("开发区站") and "通世泰站" not in dalian.neighbours(
        "金石滩站"
    )
    dubai = load_reasonmap(stations / "united_arab_emirates" / "dubai.json")
    assert sorted(dubai.neighbours("Jabal Ali Station")) == [
        "DMCC Station",
        "The Gardens Station",
        "lbn Battuta Station",
    ]


@pytest.mark.conformance
def test_auckland_keeps_bracketed_name(stations: Path) -> None:
    net = load_reasonmap(stations / "new_zealand" / "auckland.json")
    assert "Waitematā (Britomart) Station" in net.vertices
    assert len(net.lines_of("Waitematā (Britomart) Station")) == 3


def test_splits_of_nested_map_ids_are_not_stale(tmp_path: Path) -> None:
    splits = {"land/town/L1": "F", "land/town/harbour/L1": "Z"}
    net = load_reasonmap(_meta(tmp_path, BRANCHED), branch_splits=splits)
    assert net.meta["branches"] == {"L1": ["C", "F"]}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # a second line listing the name twice gets both stations, each by its neighbours
        (
            {"L": ["A", "X", "B", "C", "X", "D"], "M": ["P", "B", "X", "Q", "R", "C", "X", "S"]},
            {"M": ["P", "B", "X (between A and B)", "Q", "R", "C", "X (between C and D)", "S"]},
        ),
        # on a loop line too (its closing repeat is not a homonym)
        (
            {"Ring": ["A", "X", "B", "C", "X", "D", "A"], "S": ["D", "X", "Z"]},
            {
                "Ring": ["A", "X (between A and B)", "B", "C", "X (between C and D)", "D", "A"],
                "S": ["D", "X (between C and D)", "Z"],
            },
        ),
    ],
)
def test_homonyms_on_other_lines_and_loops(tmp_path: Path, data, expected) -> None:
    net = load_reasonmap(_meta(tmp_path, data), branch_splits={})
    for line, stations in expected.items():
        assert [net.label(s) for s in net.line_stations(line)] == stations
    assert validate_network(net) == []
    assert len(homonym_warnings(net)) == 1
