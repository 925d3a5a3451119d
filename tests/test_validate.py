"""Validation (SPEC 7): each structural check, the well-formed value domains, the MapTab
profile (SPEC 6 ranges), malformed files, and the ``maptab validate`` verb (one line per
problem, never a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from maptab.cli import app
from maptab.core.network import Edge, Network, Vertex
from maptab.core.tables import example_tables, write_tables
from maptab.core.validate import (
    MAPTAB_PROFILE,
    WELL_FORMED,
    Problem,
    validate_network,
    validate_tables,
)


def good_metro() -> Network:
    net = Network.from_lines(
        {"Red": ["A", "B", "C", "D"], "Blue": ["E", "B", "C", "F"], "Ring": ["F", "G", "H", "F"]}
    )
    edges = [Edge(e.u, e.v, e.line, 2.5, 0.75, 0.5, 0.0) for e in net.edges]
    vertices = {
        k: Vertex(k, v.lines, 1.0, 0.0, 0.5, 0.75, 9 if v.is_transfer else 0)
        for k, v in net.vertices.items()
    }
    return net.with_attributes(vertices, edges)


def good_travel() -> Network:
    net = Network.from_edges(
        [("Port", "Lake"), ("Lake", "Hill"), ("Hill", "Port"), ("Hill", "Cave")]
    )
    edges = [Edge(e.u, e.v, None, 25, 20, 4.5, round(300 / 365, 6)) for e in net.edges]
    vertices = {k: Vertex(k, (), 60, 35, 3.5, round(200 / 365, 6)) for k in net.vertices}
    vertices["Port"] = Vertex("Port", (), 0, 200, 3.0, round(365 / 365, 6))
    return net.with_attributes(vertices, edges)


def messages(problems: list[Problem]) -> str:
    return "\n".join(map(str, problems))


def test_good_networks_validate_clean() -> None:
    for profile in (None, "maptab"):
        assert validate_network(good_metro(), profile=profile) == []
        assert validate_network(good_travel(), profile=profile) == []


def test_example_tables_validate_clean() -> None:
    for scenario in ("metromap", "travelmap"):
        assert validate_tables(*example_tables(scenario), profile="maptab") == []


def test_problem_string_format() -> None:
    assert str(Problem("e.csv", 3, "Time", "bad")) == "e.csv:3: Time: bad"
    assert str(Problem("e.csv", None, None, "empty")) == "e.csv: empty"
    assert str(Problem("e.csv", 2, None, "x")) == "e.csv:2: x"


def test_duplicate_edge_within_a_line_in_either_direction() -> None:
    net = good_metro()
    dup = net.with_attributes(edges=[*net.edges, Edge("B", "A", "Red", 2.5, 0.75, 0.5, 0.0)])
    problems = validate_network(dup)
    assert any(
        p.file == "Edge_tab"
        and p.row == len(dup.edges)
        and "duplicate of the edge at row 1" in p.message
        for p in problems
    )
    # the same pair on another line is a shared track, not a duplicate
    assert not any("duplicate" in p.message for p in validate_network(net))


def test_station_without_edge() -> None:
    net = good_metro()
    extra = net.with_attributes(
        vertices={**net.vertices, "Z": Vertex("Z", ("Red",), 1.0, 0, 0.5, 0.75, 0)}
    )
    text = messages(validate_network(extra))
    assert "Vertex_tab:9: Vertex: station 'Z' has no edge" in text
    # the Red line now lists 5 stations for 3 edges (check 3)
    assert "line 'Red': 3 edges + 1 - 0 (not a loop line) = 4 stations expected, but 5" in text


def test_line_count_check_understands_loop_lines() -> None:
    net = good_metro()
    assert net.is_loop("Ring")
    broken = dict(net.vertices)
    broken["G"] = Vertex("G", ("Blue",), 1.0, 0, 0.5, 0.75, 0)  # G dropped from Ring
    text = messages(validate_network(net.with_attributes(vertices=broken)))
    assert "line 'Ring': 3 edges + 1 - 1 (a loop line) = 3 stations expected, but 2" in text
    assert "'G' is on ['Blue'] in the Vertex_tab but on ['Ring'] in the Edge_tab" in text


@pytest.mark.timeout(20)
def test_line_stations_of_a_line_that_is_no_path_tree_or_single_loop() -> None:
    """A figure-eight line (two cycles through X) has no terminus but is not one loop: an
    error, not an endless walk round one cycle; validation reports its station count."""
    from maptab.core.network import NetworkError

    pairs = [("B", "A"), ("X", "C"), ("C", "D"), ("D", "X"), ("A", "X"), ("X", "B")]
    edges = [Edge(a, b, "L", 2.5, 0.75, 0.5, 0.0) for a, b in pairs]
    vertices = {s: Vertex(s, ("L",), 1.0, 0.0, 0.5, 0.75, 0) for s in "ABCDX"}
    net = Network("metromap", vertices, edges)
    with pytest.raises(NetworkError, match="line 'L' is not a path, a tree or one loop"):
        net.line_stations("L")
    with pytest.raises(NetworkError, match="line 'L'"):
        net.is_loop("L")
    assert "6 edges + 1 - 0 (not a loop line) = 7 stations expected, but 5" in messages(
        validate_network(net)
    )
    # two disjoint loops on one line: also not one loop
    two = [("A", "B"), ("B", "C"), ("C", "A"), ("D", "X"), ("X", "F"), ("F", "D")]
    vertices = {s: Vertex(s, ("L",)) for s in "ABCDXF"}
    net = Network("metromap", vertices, [Edge(a, b, "L") for a, b in two])
    with pytest.raises(NetworkError, match="not a path, a tree or one loop"):
        net.line_stations("L")


def test_transfer_annotations_must_agree() -> None:
    net = good_metro()
    vs = dict(net.vertices)
    vs["A"] = Vertex("A", ("Red",), 1.0, 0, 0.5, 0.75, 8)  # transfer time on a one-line station
    vs["B"] = Vertex("B", ("Red",), 1.0, 0, 0.5, 0.75, 9)  # B is also on Blue in the Edge_tab
    text = messages(validate_network(net.with_attributes(vertices=vs)))
    assert "Vertex_tab:1: Transfer Time: 8 marks a transfer station, but 'A' is on one line" in text
    assert "'B' is on ['Red'] in the Vertex_tab but on ['Blue', 'Red'] in the Edge_tab" in text


def test_unknown_line_in_vertex_tab() -> None:
    net = good_metro()
    vs = dict(net.vertices)
    vs["A"] = Vertex("A", ("Red", "Purple"), 1.0, 0, 0.5, 0.75, 9)
    assert "line 'Purple' has no edge in the Edge_tab" in messages(
        validate_network(net.with_attributes(vertices=vs))
    )


def test_travelmap_must_be_connected_without_isolated_spots() -> None:
    net = good_travel()
    split = net.with_attributes(
        vertices={
            **net.vertices,
            "Fort": Vertex("Fort", (), 60, 35, 3.5, 0.6),
            "Mill": Vertex("Mill", (), 60, 35, 3.5, 0.6),
            "Pier": Vertex("Pier", (), 60, 35, 3.5, 0.6),
        },
        edges=[*net.edges, Edge("Fort", "Mill", None, 25, 20, 4.5, round(300 / 365, 6))],
    )
    text = messages(validate_network(split))
    assert "spot 'Pier' has no edge" in text
    assert "not one connected graph: 2 parts (4, 2 spots)" in text


@pytest.mark.parametrize(
    ("scenario", "table", "column", "value", "ok"),
    [
        ("metromap", "edge", "Time", 3.01, False),
        ("metromap", "edge", "Time", 2.0, True),
        ("metromap", "edge", "Price", 0.123, False),
        ("metromap", "edge", "Reliability", 0.5, False),
        ("metromap", "vertex", "Time", 0.49, False),
        ("metromap", "vertex", "Price", 0.1, False),
        ("metromap", "vertex", "Reliability", 0.5, True),
        ("travelmap", "edge", "Time", 0.5, False),
        ("travelmap", "edge", "Time", 95.5, True),
        ("travelmap", "edge", "Price", 81, False),
        ("travelmap", "edge", "Price", 12.5, False),
        ("travelmap", "edge", "Comfort Level", 4.25, False),
        ("travelmap", "edge", "Comfort Level", 0.9, False),
        ("travelmap", "edge", "Reliability", 0.5, False),
        ("travelmap", "edge", "Reliability", round(1 / 365, 6), True),
        ("travelmap", "vertex", "Reliability", round(59 / 365, 6), False),
        ("travelmap", "vertex", "Reliability", round(60 / 365, 6), True),
        ("travelmap", "vertex", "Time", 19, False),
        ("travelmap", "vertex", "Time", 20, True),
        ("travelmap", "vertex", "Time", 0, True),
        ("travelmap", "vertex", "Time", 30.5, False),
    ],
)
def test_profile_rules(scenario, table, column, value, ok) -> None:
    item = Vertex("X", time=60) if table == "vertex" else Edge("X", "Y")
    assert (MAPTAB_PROFILE[(scenario, table, column)](value, item) is None) == ok


@pytest.mark.parametrize(
    ("scenario", "table", "column", "value", "ok"),
    [
        ("metromap", "edge", "Time", 7.0, True),
        ("metromap", "edge", "Time", -0.5, False),
        ("metromap", "edge", "Price", 0.123, True),
        ("metromap", "edge", "Reliability", 0.5, True),
        ("metromap", "edge", "Comfort Level", 1.2, False),
        ("metromap", "vertex", "Price", 3.0, True),
        ("metromap", "vertex", "Transfer Time", -1, False),
        ("metromap", "vertex", "Transfer Time", 2.5, True),
        ("metromap", "vertex", "Reliability", 1.01, False),
        ("travelmap", "edge", "Time", 0.0, True),
        ("travelmap", "edge", "Price", 12.5, True),
        ("travelmap", "edge", "Comfort Level", 5.0, True),
        ("travelmap", "edge", "Comfort Level", 5.5, False),
        ("travelmap", "edge", "Reliability", 0.7, True),
        ("travelmap", "edge", "Reliability", -0.1, False),
        ("travelmap", "vertex", "Price", 15, True),
        ("travelmap", "vertex", "Time", 7, True),
    ],
)
def test_well_formed_rules(scenario, table, column, value, ok) -> None:
    """Well-formed: non-negative, comfort and reliability within the SPEC 3 scale."""
    item = Vertex("X", ("A", "B"), time=0) if table == "vertex" else Edge("X", "Y")
    assert (WELL_FORMED[(scenario, table, column)](value, item) is None) == ok


def test_rule_tables_cover_every_numeric_column() -> None:
    assert set(WELL_FORMED) == set(MAPTAB_PROFILE)
    assert len(WELL_FORMED) == 17


@pytest.mark.parametrize(
    ("time", "price", "ok"),
    [
        (0, 300, True),
        (0, 150, False),
        (60, 300, False),
        (60, 95, True),
        (60, 97, False),
        (60, 5, False),
    ],
)
def test_travel_vertex_price_depends_on_hub(time, price, ok) -> None:
    rule = MAPTAB_PROFILE[("travelmap", "vertex", "Price")]
    assert (rule(price, Vertex("X", time=time)) is None) == ok


def test_transfer_time_range_on_transfer_stations() -> None:
    rule = MAPTAB_PROFILE[("metromap", "vertex", "Transfer Time")]
    assert rule(0, Vertex("X", ("A", "B"))) is not None
    assert rule(7.5, Vertex("X", ("A", "B"))) is not None
    assert rule(15, Vertex("X", ("A", "B"))) is None


def test_negative_transfer_time_on_a_one_line_station() -> None:
    net = good_metro()
    vs = dict(net.vertices)
    vs["A"] = Vertex("A", ("Red",), 1.0, 0.0, 0.5, 0.75, -3)
    problems = validate_network(net.with_attributes(vertices=vs))
    assert [str(p) for p in problems] == [
        "Vertex_tab:1: Transfer Time: -3 is negative; it must be 0 or more (SPEC 7)"
    ]
    assert problems[0].level == "error"


def test_disconnected_parts_are_listed_in_table_order() -> None:
    """The message must not depend on set iteration order (the interpreter's hash seed)."""
    hub = ["Hub", "Alpha", "Bravo", "Charlie", "Delta", "Echo"]
    pairs = [("Hub", s) for s in hub[1:]] + [("Pier", "Quay")]
    net = Network.from_edges(pairs)
    edges = [Edge(e.u, e.v, None, 25, 20, 4.5, round(300 / 365, 6)) for e in net.edges]
    vertices = {k: Vertex(k, (), 60, 35, 3.5, round(200 / 365, 6)) for k in net.vertices}
    problems = validate_network(net.with_attributes(vertices, edges))
    assert [str(p) for p in problems] == [
        "Edge_tab: the Edge_tab is not one connected graph: 2 parts (6, 2 spots): "
        "'Hub', 'Alpha', 'Bravo' …; 'Pier', 'Quay'"
    ]


def test_profile_problems_are_located_and_only_asked_for() -> None:
    net = good_metro()
    edges = list(net.edges)
    edges[2] = Edge(edges[2].u, edges[2].v, edges[2].line, 9.0, 0.75, 0.5, 0.0)
    problems = validate_network(net.with_attributes(edges=edges), profile="maptab")
    assert [str(p) for p in problems] == [
        "Edge_tab:3: Time: 9 is outside [2, 3] (MapTab profile, SPEC 6: metromap edge table)"
    ]
    assert problems[0].level == "profile"
    assert validate_network(net.with_attributes(edges=edges)) == []


def test_a_value_that_is_not_well_formed_is_an_error_even_with_the_profile() -> None:
    net = good_metro()
    edges = list(net.edges)
    edges[0] = Edge(edges[0].u, edges[0].v, edges[0].line, -2.0, 0.75, 1.5, 0.0)
    for profile in (None, "maptab"):
        problems = validate_network(net.with_attributes(edges=edges), profile=profile)
        assert [(str(p), p.level) for p in problems] == [
            ("Edge_tab:1: Time: -2 is negative; it must be 0 or more (SPEC 7)", "error"),
            (
                "Edge_tab:1: Comfort Level: 1.5 is outside the column's scale [0, 1] (SPEC 7)",
                "error",
            ),
        ]


def test_unknown_profile_is_refused() -> None:
    from maptab.errors import MaptabError

    with pytest.raises(MaptabError, match="unknown profile 'paper'"):
        validate_network(good_metro(), profile="paper")


def test_nan_is_always_reported() -> None:
    net = good_metro()
    vs = dict(net.vertices)
    vs["A"] = Vertex("A", ("Red",), float("nan"), 0, 0.5, 0.75, 0)
    problems = validate_network(net.with_attributes(vertices=vs))
    assert [str(p) for p in problems] == ["Vertex_tab:1: Time: nan is not a finite number"]


# ----------------------------------------------------------------------------- files
@pytest.fixture
def tables(tmp_path: Path) -> tuple[Path, Path]:
    write_tables(good_metro(), tmp_path, "m", formats=("csv",))
    return tmp_path / "m_edge.csv", tmp_path / "m_vertex.csv"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8-sig")
    assert old in text
    path.write_text("\ufeff" + text.replace(old, new, 1), encoding="utf-8")


def test_validate_tables_collects_problems_from_both_files(tables) -> None:
    edges, vertices = tables
    _edit(edges, "A-B,Red,2.5", "A-B,Red,fast")
    _edit(vertices, "D,Red,1,0,0.5,0.75,0", "D,Red,1,0,0.5,0.75,4")
    problems = validate_tables(edges, vertices)
    assert f"{edges}:2: Time: not a number: 'fast'" in map(str, problems)
    assert (
        f"{vertices}:5: Transfer Time: 4 marks a transfer station, but 'D' is on one line"
        in map(str, problems)
    )
    assert len(problems) == 2  # the NaN from 'fast' is not reported twice


def test_validate_tables_reports_unknown_station_and_missing_vertex(tables) -> None:
    edges, vertices = tables
    _edit(edges, "C-D,Red", "C-Q,Red")
    text = messages(validate_tables(edges, vertices))
    assert "Edge: unknown station 'Q'" in text
    assert "station 'D' has no edge" in text


# ----------------------------------------------------------------------------- CLI
runner = CliRunner()


def _run(*args: str):
    return runner.invoke(app, ["validate", *map(str, args)])


def test_cli_ok(tables) -> None:
    result = _run(*tables)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "ok: 8 stations, 9 edges, 3 lines"
    travel = _run(*example_tables("travelmap"))
    assert travel.exit_code == 0 and travel.output.strip() == "ok: 8 spots, 10 edges"


BROKEN = {
    "empty": b"",
    "bom only": b"\xef\xbb\xbf",
    "header only": b"Edge,Line,Time,Price,Comfort Level,Reliability\n",
    "missing column": b"Edge,Line,Time\nA-B,Red,2.5\n",
    "bad quoting": b'Edge,Line,Time,Price,Comfort Level,Reliability\n"A-B"x,Red,2.5,1,0.5,0\n',
    "field count": b"Edge,Line,Time,Price,Comfort Level,Reliability\nA-B,Red,2.5\n",
    "latin-1": "Edge,Line,Time,Price,Comfort Level,Reliability\nA-Caf\xe9,Red,2.5,1,0.5,0\n".encode(
        "latin-1"
    ),
    "utf-16": "Edge,Line,Time,Price,Comfort Level,Reliability\n".encode("utf-16"),
    "nul bytes": b"Edge,Line\x00,Time\n",
    "nan": b"Edge,Line,Time,Price,Comfort Level,Reliability\nA-B,Red,NaN,1,0.5,0\n",
    "markup in names": b"Edge,Line,Time,Price,Comfort Level,Reliability\n[bold]X[/]-B,Red,2.5,1,0.5,0\n",
    "binary": bytes(range(256)),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_cli_broken_edge_files_give_problem_lines(tables, tmp_path: Path, case: str) -> None:
    _, vertices = tables
    bad = tmp_path / "bad.csv"
    bad.write_bytes(BROKEN[case])
    result = _run(bad, vertices)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert f"{bad}" in result.output


@pytest.mark.parametrize(
    "content",
    [
        "[",
        "{}",
        "[1]",
        '[{"Edge": "A-B"}]',
        "[]",
        '[{"Edge": "A-B", "Line": 5, "Time": 2.5, "Price": 1, "Comfort Level": 0.5, "Reliability": 0}]',
    ],
)
def test_cli_broken_json_files(tables, tmp_path: Path, content: str) -> None:
    _, vertices = tables
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    result = _run(bad, vertices)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert str(bad) in result.output


def test_cli_missing_file_directory_and_bad_extension(tables, tmp_path: Path) -> None:
    _, vertices = tables
    for path, what in [
        (tmp_path / "none.csv", "no such file"),
        (tmp_path, "directory"),
        (vertices.with_suffix(".xlsx"), "unknown table format"),
    ]:
        result = _run(path, vertices)
        assert result.exit_code == 1 and what in result.output
    weird = tmp_path / "t.tsv"
    weird.write_text("x", encoding="utf-8")
    result = _run(weird, vertices)
    assert result.exit_code == 1 and "unknown table format" in result.output


def test_cli_markup_in_names_is_printed_verbatim(tables, tmp_path: Path) -> None:
    _, vertices = tables
    bad = tmp_path / "bad.csv"
    bad.write_bytes(BROKEN["markup in names"])
    result = _run(bad, vertices)
    assert "unknown station '[bold]X[/]'" in result.output


def test_cli_problems_one_per_line(tables) -> None:
    edges, vertices = tables
    _edit(edges, "A-B,Red,2.5", "A-B,Red,-9")
    _edit(vertices, "A,Red,1,", "A,Red,-7,")
    result = _run(edges, vertices)
    assert result.exit_code == 1
    lines = [ln for ln in result.output.splitlines() if ln.startswith(str(edges.parent))]
    assert len(lines) == 2
    assert f"{vertices}:2: Time: -7 is negative" in result.output


def test_cli_profile_deviations_only_with_profile(tables) -> None:
    edges, vertices = tables
    _edit(edges, "A-B,Red,2.5", "A-B,Red,9")
    _edit(vertices, "A,Red,1,", "A,Red,7,")
    result = _run(edges, vertices)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "ok: 8 stations, 9 edges, 3 lines"
    result = _run(edges, vertices, "--profile", "maptab")
    assert result.exit_code == 1
    lines = [ln for ln in result.output.splitlines() if ln.startswith(str(edges.parent))]
    assert len(lines) == 2
    assert f"{vertices}:2: Time: 7 is outside [0.5, 2] (MapTab profile" in result.output
    assert "2 problem(s) found (2 outside the MapTab profile)" in result.output
    result = _run(edges, vertices, "--profile", "paper")
    assert result.exit_code == 1 and "unknown profile 'paper'" in result.output


def test_cli_scenario_option(tables) -> None:
    result = _run(*tables, "--scenario", "travelmap")
    assert result.exit_code == 1 and "unexpected column" in result.output
    result = _run(*tables, "--scenario", "bus")
    assert result.exit_code == 1 and "unknown scenario" in result.output
