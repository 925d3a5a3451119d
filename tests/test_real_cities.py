"""Real ReasonMap cities (SPEC 14): branch splits the list itself gives, station alias files
(same-name stations kept apart, duplicate spellings merged), Shanghai and New York."""

from __future__ import annotations

import json
import os
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.validate import validate_network
from maptab.io.metadata import (
    MetadataError,
    MissingBranchSplits,
    StationAliases,
    derived_branch_splits,
    homonym_warnings,
    load_reasonmap,
    load_reasonmap_folder,
    load_station_aliases,
    parse_station_aliases,
    shipped_station_aliases,
)

# MAPTAB_REASONMAP_STATIONS points the conformance tests at another copy of the metadata
# (e.g. the full ReasonMap release, which has Shanghai and New York)
STATIONS = Path(
    os.environ.get(
        "MAPTAB_REASONMAP_STATIONS",
        Path(__file__).resolve().parents[2] / "shared" / "data" / "reasonmap-stations",
    )
)


def _city(tmp_path: Path, lines: dict, map_id: str = "land/town") -> Path:
    path = tmp_path / f"{map_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(lines, ensure_ascii=False), encoding="utf-8")
    return path


def _edges(net, line: str) -> set[frozenset[str]]:
    return {frozenset((net.label(e.u), net.label(e.v))) for e in net.line_edges(line)}


def _pairs(*names: str) -> set[frozenset[str]]:
    return {frozenset(p) for p in pairwise(names)}


# ----------------------------------------------------------------------- derived splits
# the list returns to its branch start C after E: the branch C-F-G starts at F
REVISIT = {
    "L1": ["A", "B", "C (Branch-starting Station)", "D", "E", "C", "F", "G"],
    "L2": ["A (Transfer Station)", "X"],
}


def test_a_list_returning_to_its_branch_start_gives_the_split(tmp_path: Path) -> None:
    path = _city(tmp_path, REVISIT)
    assert derived_branch_splits(path) == {"land/town/L1": "F"}
    net = load_reasonmap(path, branch_splits={})
    assert _edges(net, "L1") == _pairs("A", "B", "C", "D", "E") | _pairs("C", "F", "G")
    assert net.meta["branches"] == {"L1": ["C", "F"]}
    assert net.meta["derived_branches"] == ["L1"]
    assert homonym_warnings(net) == []  # the repeat is the fork, not a second station
    assert validate_network(net) == []


def test_the_annotation_may_sit_on_the_repeat(tmp_path: Path) -> None:
    data = {"L": ["A", "C", "D", "C (Branch-starting Station)", "F"]}
    net = load_reasonmap(_city(tmp_path, data), branch_splits={})
    assert _edges(net, "L") == _pairs("A", "C", "D") | _pairs("C", "F")


def test_a_table_split_overrides_the_derived_one(tmp_path: Path) -> None:
    net = load_reasonmap(_city(tmp_path, REVISIT), branch_splits={"land/town/L1": "E"})
    # the list without its repeat, A B C D E F G, split before E
    assert _edges(net, "L1") == _pairs("A", "B", "C", "D") | _pairs("C", "E", "F", "G")
    assert net.meta["derived_branches"] == []


def test_a_list_without_a_repeat_still_needs_a_split(tmp_path: Path) -> None:
    data = {"L": ["A", "B (Branch-starting Station)", "C", "D", "E"]}
    with pytest.raises(MissingBranchSplits, match="'land/town/L' \\(branched at 'B'\\)"):
        load_reasonmap(_city(tmp_path, data), branch_splits={})
    assert derived_branch_splits(_city(tmp_path, data)) == {}


@pytest.mark.parametrize(
    ("stations", "match"),
    [
        (["A", "C (Branch-starting Station)", "D", "C", "E", "C", "F"], "'C' 3 times"),
        (["A", "C (Branch-starting Station)", "D", "E", "C"], "returns to its branch start"),
        (["A", "C (Branch-starting Station)", "D", "C", "D"], "both precedes and follows"),
    ],
)
def test_bad_repeats_of_the_branch_start(tmp_path: Path, stations, match) -> None:
    path = _city(tmp_path, {"L": stations})
    with pytest.raises(MetadataError, match=match) as info:
        load_reasonmap(path, branch_splits={})
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def _tree_lists(main: list[str], fork: int, branch: list[str]) -> dict[int, list[str]]:
    """Every split position ``k`` of ``main + branch`` → the line's edges read that way."""
    listed = main + branch
    out = {}
    for k in range(fork + 2, len(listed)):
        out[k] = _pairs(*listed[:k]) | _pairs(listed[fork], *listed[k:])
    return out


@settings(max_examples=examples(60), deadline=None)
@given(
    st.integers(0, 6),
    st.integers(0, 5),
    st.integers(1, 5),
    st.sampled_from(["first", "repeat", "both"]),
    st.randoms(use_true_random=False),
)
def test_derived_splits_match_a_brute_force_decomposition(
    tmp_path_factory, before: int, after: int, legs: int, tagged: str, rng
) -> None:
    """A random tree line with one fork (main line ``before`` + fork + ``after`` stations,
    branch of ``legs``), listed as main line, fork again, branch: the derived split is the
    one split position whose reading gives the tree's edges."""
    names = [f"S{i}" for i in range(before + 1 + max(after, 1) + legs)]
    rng.shuffle(names)
    main = names[: before + 1 + max(after, 1)]
    branch = names[len(main) :]
    fork = before
    tree = _pairs(*main) | _pairs(main[fork], *branch)
    tag = " (Branch-starting Station)"
    listed = list(main)
    if tagged in ("first", "both"):
        listed[fork] += tag
    listed += [main[fork] + (tag if tagged in ("repeat", "both") else ""), *branch]
    path = _city(tmp_path_factory.mktemp("t"), {"L": listed, "M": [main[0], "Z"]})
    matches = [k for k, edges in _tree_lists(main, fork, branch).items() if edges == tree]
    assert len(matches) == 1  # brute force: one reading of main + branch is the tree
    assert derived_branch_splits(path) == {"land/town/L": (main + branch)[matches[0]]}
    net = load_reasonmap(path, branch_splits={})
    assert _edges(net, "L") == tree
    assert validate_network(net) == []


# ----------------------------------------------------------------------- station aliases
CITY = {
    "1": ["Dyckman", "125 St (Transfer Station)", "116 St", "Penn Station Station"],
    "A": ["145 St", "125 St", "Penn Station", "Canal St"],
    "6": ["Lenox", "125 St", "116 St", "Canal St"],
    "B": ["145 St", "7 Av", "Hub", "7 Av", "Park"],
    "Q": ["Hub", "7 Av", "Park"],
    "D": ["Dyckman", "7 Av", "Hub"],
}
ALIASES = {
    "merge": {"Penn Station Station": "Penn Station"},
    "split": {
        "125 St": [["1"], ["A", "6"]],
        "116 St": [["1"], ["6"]],
        "7 Av": [["B", "D"], ["B", "Q"]],
    },
}


def test_an_alias_file_splits_and_merges(tmp_path: Path) -> None:
    net = load_reasonmap(_city(tmp_path, CITY), station_aliases=parse_station_aliases("a", ALIASES))
    lines = {net.label(s): sorted(net.lines_of(s)) for s in net.vertices}
    assert lines["125 St (1)"] == ["1"] and lines["125 St (A/6)"] == ["6", "A"]
    assert lines["116 St (1)"] == ["1"] and lines["116 St (6)"] == ["6"]
    # B lists 7 Av twice: its first occurrence takes the first group naming B, and so on
    assert lines["7 Av (B/D)"] == ["B", "D"] and lines["7 Av (B/Q)"] == ["B", "Q"]
    assert _edges(net, "B") == _pairs("145 St", "7 Av (B/D)", "Hub", "7 Av (B/Q)", "Park")
    # merged spellings are one station; names not in the file stay one station
    assert lines["Penn Station"] == ["1", "A"] and "Penn Station Station" not in lines
    assert lines["Canal St"] == ["6", "A"] and lines["Hub"] == ["B", "D", "Q"]
    assert not any(n in lines for n in ("125 St", "116 St", "7 Av"))
    assert homonym_warnings(net) == []  # B's two 7 Avs are named by the file
    assert net.meta["station_aliases"]["125 St (A/6)"] == "125 St"
    assert validate_network(net) == []


def test_without_the_file_the_names_stay_shared(tmp_path: Path) -> None:
    net = load_reasonmap(_city(tmp_path, CITY), station_aliases=StationAliases())
    assert sorted(net.lines_of("125 St")) == ["1", "6", "A"]
    assert len(homonym_warnings(net)) == 1  # B's 7 Av, by the homonym rule


def test_split_on_a_loop_line_keeps_it_closed(tmp_path: Path) -> None:
    data = {"Ring": ["X", "A", "B", "X"], "S": ["X", "Z"]}
    aliases = parse_station_aliases("a", {"split": {"X": [["Ring"], ["S"]]}})
    net = load_reasonmap(_city(tmp_path, data), station_aliases=aliases)
    assert net.is_loop("Ring") and len(net.line_edges("Ring")) == 3
    assert net.lines_of("X (S)") == ("S",)


@pytest.mark.parametrize(
    ("aliases", "match"),
    [
        (
            {"split": {"125 St": [["1"], ["A"]]}},
            "line '6' of .* lists it 1 time\\(s\\) but is in 0",
        ),
        ({"split": {"125 St": [["1"], ["A", "6", "Z"]]}}, "has no line 'Z'"),
        ({"split": {"125 St": [["1", "Q"], ["A", "6"]]}}, "line 'Q' of .* does not list it"),
        ({"split": {"Nowhere": [["1"], ["A"]]}}, "split 'Nowhere': no line of"),
        ({"split": {"7 Av": [["B", "D", "Q"]], "x": []}}, "two or more"),
        ({"split": {"7 Av": [["B", "D"], ["Q"]]}}, "line 'B' of .* lists it 2 time"),
        ({"split": {"Hub": [["B"], ["Q", "D"]]}, "merge": {"Park": "Hub (B)"}}, "already taken"),
        ({"merge": {"Nowhere": "Hub"}}, "merge 'Nowhere': no line of"),
    ],
)
def test_alias_entries_that_do_not_fit_the_city(tmp_path: Path, aliases, match) -> None:
    path = _city(tmp_path, CITY)
    with pytest.raises(MetadataError, match=match) as info:
        load_reasonmap(path, station_aliases=parse_station_aliases("aliases.json", aliases))
    message = str(info.value)
    assert message.startswith("aliases.json: ") and "\n" not in message


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("[]", "not an object"),
        ('{"splits": {}}', "unknown key 'splits'"),
        ('{"merge": {"A": 3}}', "merge 'A': expected a non-empty name"),
        ('{"merge": {"A": "A (Transfer Station)"}}', "merges into itself"),
        ('{"merge": {"A": "B", "B": "C"}}', "'B' is merged into 'C'"),
        ('{"merge": {"A": "B"}, "split": {"A": [["1"], ["2"]]}}', "split the merged name"),
        ('{"split": {"A": [["1"], []]}}', "non-empty lists"),
        ('{"split": {"A": [["1", "1"], ["2"]]}}', "names a line twice"),
        ('{"split": {"A": [["1"], ["2"]], "A": [["3"], ["4"]]}}', "key 'A' appears twice"),
        ("{", "malformed JSON"),
    ],
)
def test_malformed_alias_files(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "aliases.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(MetadataError, match=match) as info:
        load_station_aliases(path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)


def test_an_alias_folder_replaces_the_shipped_file(tmp_path: Path) -> None:
    src = tmp_path / "stations"
    _city(src, CITY, "america/new_york")  # the shipped New York file does not fit this city
    with pytest.raises(MetadataError, match="maptab/data/station_aliases/america/new_york.json"):
        load_reasonmap_folder(src)
    mine = tmp_path / "aliases" / "america" / "new_york.json"
    mine.parent.mkdir(parents=True)
    mine.write_text(json.dumps(ALIASES), encoding="utf-8")
    (net,) = load_reasonmap_folder(src, station_aliases=tmp_path / "aliases")
    assert net.map_id == "america/new_york" and "125 St (A/6)" in net.vertices
    (tmp_path / "aliases" / "america" / "boston.json").write_text("{}", encoding="utf-8")
    with pytest.raises(MetadataError, match="aliases for 'america/boston', but .* no such map"):
        load_reasonmap_folder(src, station_aliases=tmp_path / "aliases")


def test_the_shipped_new_york_file_is_well_formed() -> None:
    aliases = shipped_station_aliases("america/new_york")
    assert aliases is not None and shipped_station_aliases("italy/rome") is None
    assert aliases.merge["34 St-Penn Station Station"] == "34 St-Penn Station"
    assert ["4", "5", "6"] in aliases.split["125 St Station"]
    for name, groups in aliases.split.items():
        lines = [x for g in groups for x in g]
        assert len(groups) >= 2, name
        assert len(set(lines)) == len(lines) or name in ("7 Av Station", "36 St Station")


def test_stats_reads_the_folder_as_build_does(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from maptab.cli import app

    src = tmp_path / "stations"
    _city(src, REVISIT)
    result = CliRunner().invoke(app, ["stats", "--from-reasonmap", str(src), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["scenarios"]["metromap"]["networks"]["maps"] == 1
    _city(src, {"L": ["A", "B (Branch-starting Station)", "C", "D"]}, "land/other")
    result = CliRunner().invoke(app, ["stats", "--from-reasonmap", str(src)])
    assert result.exit_code == 1 and "'land/other/L' (branched at 'B')" in result.output
    splits = tmp_path / "splits.json"
    splits.write_text('{"land/other/L": "D"}', encoding="utf-8")
    args = ["stats", "--from-reasonmap", str(src), "--branch-splits", str(splits), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


# ----------------------------------------------------------------------- real cities
def _city_file(rel: str) -> Path:
    path = STATIONS / rel
    if not path.is_file():
        pytest.skip(f"ReasonMap metadata {rel} not found under {STATIONS}")
    return path


@pytest.mark.conformance
def test_shanghai_builds_with_no_options(tmp_path: Path) -> None:
    from maptab.generate.from_reasonmap import build_reasonmap_dataset

    path = _city_file("china/shanghai.json")
    src = tmp_path / "stations" / "china"
    src.mkdir(parents=True)
    (src / "shanghai.json").write_bytes(path.read_bytes())
    manifest = build_reasonmap_dataset(src.parent, tmp_path / "ds", per_map=8)
    assert manifest["counts"]["reasonmap"] == 8
    (net,) = load_reasonmap_folder(src.parent)
    assert net.meta["branches"] == {
        "Line 5": ["东川路站", "江川路站"],
        "Line 10": ["龙溪路站", "龙柏新村站"],
        "Line 11": ["嘉定新城站", "上海赛车场站"],
    }
    assert "江川路站" not in net.neighbours("闵行开发区站")
    assert validate_network(net) == []


# 125 St: C (St Nicholas Av) and 6 (Lexington Av) are different stations; so are 50 St on
# E (8 Av) and 1 (Broadway), and 7 Av on F/G (9 St, Brooklyn) and B/Q (Flatbush Av)
APART = [
    ("125 St Station", "C", "6"),
    ("125 St Station", "1", "A"),
    ("125 St Station", "2", "4"),
    ("50 St Station", "E", "1"),
    ("7 Av Station", "F", "B"),
    ("7 Av Station", "G", "Q"),
    ("7 Av Station", "E", "Q"),
]


def _transfers(routes):
    for route in routes:
        for a, b in pairwise(route):
            yield a["arrival_stop"], a["route_name"], b["route_name"]


@pytest.mark.conformance
def test_new_york_reference_routes_use_only_real_transfers(tmp_path: Path) -> None:
    from maptab.generate.from_reasonmap import build_reasonmap_dataset
    from maptab.io.dataset import Dataset

    path = _city_file("america/new_york.json")
    src = tmp_path / "stations" / "america"
    src.mkdir(parents=True)
    (src / "new_york.json").write_bytes(path.read_bytes())
    build_reasonmap_dataset(src.parent, tmp_path / "ds", per_map=40)
    ds = Dataset(tmp_path / "ds")
    net = ds.network("america/new_york")
    aliases = shipped_station_aliases("america/new_york")
    assert aliases is not None
    named = net.meta["station_aliases"]
    assert sorted(n for n, base in named.items() if base == "125 St Station") == [
        "125 St Station (1)",
        "125 St Station (2/3)",
        "125 St Station (4/5/6)",
        "125 St Station (A/B/C/D)",
    ]
    for name, x, y in APART:
        both = [
            s
            for s in net.vertices
            if named.get(net.label(s)) == name and {x, y} <= set(net.lines_of(s))
        ]
        assert both == [], (name, x, y)
    questions = ds.reasonmap()
    assert len(questions) == 40
    for q in questions:
        for stop, x, y in _transfers(q.routes):
            station = net.resolve(stop)
            assert {x, y} <= set(net.lines_of(station)), (q.id, stop)
            name = named.get(net.label(station), net.label(station))
            groups = aliases.split.get(aliases.merge.get(name, name))
            assert groups is None or any({x, y} <= set(g) for g in groups), (q.id, stop, x, y)
    # without the file, the same city has reference routes through such non-transfers
    bare = load_reasonmap(path, station_aliases=StationAliases())
    from maptab.generate.from_reasonmap import reasonmap_questions

    wrong = 0
    for q in reasonmap_questions(bare, map_difficulty="easy", split="test", rng_seed=0):
        for stop, x, y in _transfers(q.routes):
            name = aliases.merge.get(stop, stop)
            groups = aliases.split.get(name)
            wrong += groups is not None and not any({x, y} <= set(g) for g in groups)
    assert wrong > 0
