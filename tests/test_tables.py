"""Reading and writing MapTab tables (SPEC 2, 5): round trips, formats, Mix_tab, errors."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.network import Edge, Network, Vertex, table_name
from maptab.core.tables import (
    EDGE_COLUMNS,
    LINE_SEPARATOR,
    VERTEX_COLUMNS,
    TableError,
    derive_mix,
    edge_rows,
    example_tables,
    mix_rows,
    read_edges,
    read_network,
    read_vertices,
    split_lines,
    table_csv,
    table_json,
    vertex_rows,
    write_tables,
)


def metro() -> Network:
    """Two lines sharing the track Market-Central, one transfer-rich loop line."""
    net = Network.from_lines(
        {
            "Red": ["Alpha", "Market", "Central", "Omega"],
            "Blue": ["Beta", "Market", "Central", "Gamma"],
            "Ring": ["Gamma", "Delta", "Epsilon", "Gamma"],
        }
    )
    edges = [
        Edge(e.u, e.v, e.line, 2.0 + i / 100, round(0.1 * i, 2), 0.5, 0.0)
        for i, e in enumerate(net.edges)
    ]
    vertices = {
        k: Vertex(k, v.lines, 1.25, 0.0, 0.3, 0.75, 7 if v.is_transfer else 0)
        for k, v in net.vertices.items()
    }
    return net.with_attributes(vertices, edges)


def travel() -> Network:
    net = Network.from_edges([("Gate", "Lake"), ("Lake", "Hill"), ("Hill", "Gate")])
    edges = [Edge(e.u, e.v, None, 12.5, 20, 4.1, 0.493151) for e in net.edges]
    vertices = {k: Vertex(k, (), 45, 35, 3.5, 0.8) for k in net.vertices}
    return net.with_attributes(vertices, edges)


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("make", [metro, travel])
def test_write_then_read_is_lossless(tmp_path: Path, fmt: str, make) -> None:
    net = make()
    write_tables(net, tmp_path, "m", formats=(fmt,))
    back = read_network(tmp_path / f"m_edge.{fmt}", tmp_path / f"m_vertex.{fmt}")
    assert back.scenario == net.scenario
    assert back.vertices == net.vertices
    assert back.edges == net.edges
    assert list(back.vertices) == list(net.vertices)


def test_write_tables_returns_paths_in_format_order(tmp_path: Path) -> None:
    paths = write_tables(metro(), tmp_path, "x")
    assert [p.name for p in paths] == ["x_edge.csv", "x_vertex.csv", "x_edge.json", "x_vertex.json"]
    with pytest.raises(ValueError, match="unknown table format"):
        write_tables(metro(), tmp_path, "x", formats=("xlsx",))


def test_csv_layout_bom_separator_and_numbers(tmp_path: Path) -> None:
    write_tables(metro(), tmp_path, "m", formats=("csv",))
    raw = (tmp_path / "m_vertex.csv").read_bytes()
    assert raw.startswith(
        b"\xef\xbb\xbfVertex,Line,Time,Price,Comfort Level,Reliability,Transfer Time\n"
    )
    text = raw.decode("utf-8-sig")
    assert f"Market,Red{LINE_SEPARATOR}Blue,1.25,0,0.3,0.75,7\n" in text
    assert "\r" not in text and text.endswith("\n")


def test_json_layout_and_typing(tmp_path: Path) -> None:
    write_tables(travel(), tmp_path, "t", formats=("json",))
    vtext = (tmp_path / "t_vertex.json").read_text(encoding="utf-8")
    assert not vtext.endswith("\n") and vtext.startswith('[\n  {\n    "Vertex": "Gate",')
    row = json.loads(vtext)[0]
    # every travelmap number is a JSON float, integral ones too, as in MapTab's released
    # travelmap tables ("Time": 21.0, "Price": 50.0)
    assert '"Time": 45.0,' in vtext and '"Price": 35.0,' in vtext
    assert row == {
        "Vertex": "Gate",
        "Time": 45,
        "Price": 35,
        "Comfort Level": 3.5,
        "Reliability": 0.8,
    }
    assert all(isinstance(row[k], float) for k in ("Time", "Price", "Reliability"))
    erow = json.loads((tmp_path / "t_edge.json").read_text(encoding="utf-8"))[0]
    assert isinstance(erow["Time"], float) and isinstance(erow["Price"], float)


def test_integer_column_with_fraction_stays_float() -> None:
    net = metro()
    v = net.vertices["Market"]
    odd = net.with_attributes(
        {**net.vertices, "Market": Vertex(v.name, v.lines, transfer_time=7.5)}
    )
    row = next(r for r in vertex_rows(odd) if r["Vertex"] == "Market")
    assert row["Transfer Time"] == 7.5


def test_non_ascii_kept_in_json(tmp_path: Path) -> None:
    net = Network.from_lines({"1号线": ["西单站", "复兴门站"]})
    write_tables(net, tmp_path, "cn", formats=("json",))
    assert "西单站" in (tmp_path / "cn_vertex.json").read_text(encoding="utf-8")


def test_hyphenated_names_are_written_with_underscores_and_keep_labels(tmp_path: Path) -> None:
    net = Network.from_lines({"L": ["Porta Furba-Quadraro", "Numidio", "West-End-Pier"]})
    assert edge_rows(net)[0]["Edge"] == "Porta Furba_Quadraro-Numidio"
    assert net.label("West_End_Pier") == "West-End-Pier"


def test_edge_cell_with_hyphenated_names_is_split_by_vocabulary(tmp_path: Path) -> None:
    (tmp_path / "v.csv").write_text(
        "Vertex,Time,Price,Comfort Level,Reliability\nA-1,30,10,3,0.5\nB-2,30,10,3,0.5\n",
        encoding="utf-8",
    )
    (tmp_path / "e.csv").write_text(
        "Edge,Time,Price,Comfort Level,Reliability\nA-1-B-2,10,10,3,0.5\n", encoding="utf-8"
    )
    net = read_network(tmp_path / "e.csv", tmp_path / "v.csv")
    assert [(e.u, e.v) for e in net.edges] == [("A_1", "B_2")]
    assert net.label("A_1") == "A-1"
    with pytest.raises(TableError, match="not 'A-B'"):
        read_edges(tmp_path / "e.csv")


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("Red Line", ["Red Line"]),
        ("Red Line;Blue Line", ["Red Line", "Blue Line"]),
        ("Red Line, Blue Line", ["Red Line", "Blue Line"]),
        ("1号线、2号线", ["1号线", "2号线"]),
        ("['Red Line', 'Blue Line']", ["Red Line", "Blue Line"]),
        ('["Red Line","Blue Line"]', ["Red Line", "Blue Line"]),
        (["Red Line", " Blue Line "], ["Red Line", "Blue Line"]),
        ("", []),
    ],
)
def test_split_lines_accepts_common_separators(cell, expected) -> None:
    assert split_lines(cell) == expected


def test_line_name_with_separator_cannot_go_to_csv(tmp_path: Path) -> None:
    net = Network.from_lines({"Red;Blue": ["A", "B"]})
    with pytest.raises(TableError, match="line separator"):
        write_tables(net, tmp_path, "m", formats=("csv",))
    write_tables(net, tmp_path, "m", formats=("json",))
    back = read_network(tmp_path / "m_edge.json", tmp_path / "m_vertex.json")
    assert back.edges[0].line == "Red;Blue"


def test_edge_row_with_several_lines_gives_one_edge_per_line(tmp_path: Path) -> None:
    (tmp_path / "e.csv").write_text(
        'Edge,Line,Time,Price,Comfort Level,Reliability\nA-B,"Red;Blue",2.5,1,0.5,0\n',
        encoding="utf-8",
    )
    assert [e.line for e in read_edges(tmp_path / "e.csv")] == ["Red", "Blue"]


def test_table_csv_order_and_drop() -> None:
    rows = vertex_rows(metro())
    text = table_csv(
        rows, VERTEX_COLUMNS["metromap"], order=[2, 0, 1, 3, 4, 5, 6, 7], drop_columns=["Line"]
    )
    lines = text.splitlines()
    assert lines[0] == "Vertex,Time,Price,Comfort Level,Reliability,Transfer Time"
    assert [ln.split(",")[0] for ln in lines[1:4]] == ["Central", "Alpha", "Market"]
    assert not text.startswith("\ufeff")
    with pytest.raises(ValueError, match="permutation"):
        table_csv(rows, VERTEX_COLUMNS["metromap"], order=[0, 0])


def test_table_json_order_and_drop() -> None:
    rows = edge_rows(travel())
    data = json.loads(table_json(rows, order=[2, 1, 0], drop_columns=["Price"]))
    assert [r["Edge"] for r in data] == ["Hill-Gate", "Lake-Hill", "Gate-Lake"]
    assert all("Price" not in r for r in data)


def test_numbers_never_use_exponents(tmp_path: Path) -> None:
    net = travel()
    tiny = [Edge(e.u, e.v, None, 1e-05, 20, 4.0, 1e-7) for e in net.edges]
    text = table_csv(edge_rows(net.with_attributes(edges=tiny)), EDGE_COLUMNS["travelmap"])
    assert text.splitlines()[1] == "Gate-Lake,0.00001,20,4,0.0000001"


def test_derive_mix_metro_price_is_half_up_mean_of_incident_edges() -> None:
    net = Network.from_lines({"L": ["A", "B", "C"], "M": ["B", "D"]})
    prices = {("A", "B"): 0.68, ("B", "C"): 0.81, ("B", "D"): 0.75}
    edges = [Edge(e.u, e.v, e.line, 2.5, prices[(e.u, e.v)], 0.5, 0.0) for e in net.edges]
    vertices = {
        k: Vertex(k, v.lines, 1.0, 0.0, 0.4, 0.9, 6 if v.is_transfer else 0)
        for k, v in net.vertices.items()
    }
    mix = derive_mix(net.with_attributes(vertices, edges))
    assert mix["A"].price == 0.68
    assert mix["C"].price == 0.81
    assert mix["D"].price == 0.75
    # (0.68 + 0.81 + 0.75) / 3 = 0.74666… -> 0.75
    assert mix["B"].price == 0.75
    assert mix["B"].time == 1.0 and mix["B"].transfer_time == 6
    # half-up, not banker's: (0.68 + 0.81) / 2 = 0.745 -> 0.75
    two = Network.from_lines({"L": ["A", "B", "C"]})
    two = two.with_attributes(
        edges=[Edge("A", "B", "L", price=0.68), Edge("B", "C", "L", price=0.81)]
    )
    assert derive_mix(two)["B"].price == 0.75


def test_derive_mix_counts_each_parallel_edge() -> None:
    net = Network.from_lines({"L": ["A", "B"], "M": ["A", "B"]})
    net = net.with_attributes(
        edges=[Edge("A", "B", "L", price=1.0), Edge("A", "B", "M", price=0.5)]
    )
    assert derive_mix(net)["A"].price == 0.75


def test_mix_rows_travelmap_equals_vertex_rows() -> None:
    assert mix_rows(travel()) == vertex_rows(travel())


def test_example_tables_ship_and_load() -> None:
    for scenario in ("metromap", "travelmap"):
        edges, vertices = example_tables(scenario)
        net = read_network(edges, vertices)
        assert net.scenario == scenario
    metro_net = read_network(*example_tables("metromap"))
    assert len(metro_net.vertices) == 12 and len(metro_net.line_names) == 3
    assert metro_net.is_loop("Green Line")
    assert len(metro_net.edges_between("Market", "Central")) == 2


# ----------------------------------------------------------------------------- errors
def _write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("e.csv", "", "empty"),
        ("e.csv", "\ufeff\n\n", "empty"),
        ("e.csv", "Edge,Time,Price,Comfort Level,Reliability\n", "no data rows"),
        ("e.csv", "Edge,Time\nA-B,3\n", "missing column"),
        ("e.csv", "Edge,Time,Price,Comfort Level,Reliability\nA-B,3,4\n", "expected 5 fields"),
        ("e.csv", 'Edge,Time,Price,Comfort Level,Reliability\n"A-B"x,1,2,3,0.5\n', "malformed CSV"),
        ("e.csv", "Edge,Time,Price,Comfort Level,Reliability\nA-B,fast,2,3,0.5\n", "not a number"),
        ("e.csv", "Edge,Time,Price,Comfort Level,Reliability\nA-B,nan,2,3,0.5\n", "NaN"),
        ("e.csv", "Edge,Time,Price,Comfort Level,Reliability\nA-B,,2,3,0.5\n", "missing value"),
        ("e.csv", "Edge,Time,Price,Comfort Level,Reliability\nA-A,1,2,3,0.5\n", "itself"),
        ("e.csv", "Edge,Time,Price,Comfort Level,Reliability\nAB,1,2,3,0.5\n", "not 'A-B'"),
        (
            "e.csv",
            "Edge,Edge,Time,Price,Comfort Level,Reliability\nA-B,A-B,1,2,3,0.5\n",
            "duplicate column",
        ),
        ("e.json", "[1, 2]", "expected an object"),
        ("e.json", '{"Edge": "A-B"}', "JSON list"),
        ("e.json", "[{", "malformed JSON"),
        (
            "e.json",
            '[{"Edge": "A-B", "Time": NaN, "Price": 1, "Comfort Level": 3, "Reliability": 0.5}]',
            "NaN",
        ),
        (
            "e.json",
            '[{"Edge": "A-B", "Time": "3", "Price": 1, "Comfort Level": 3, "Reliability": 0.5}]',
            "expected a number",
        ),
        (
            "e.json",
            '[{"Edge": "A-B", "Time": true, "Price": 1, "Comfort Level": 3, "Reliability": 0.5}]',
            "expected a number",
        ),
        ("e.txt", "x", "unknown table format"),
        # Python's json parser raises plain ValueError / RecursionError for these
        (
            "e.json",
            '[{"Edge": "A-B", "Time": ' + "1" * 5000 + "}]",
            "malformed JSON",
        ),
        ("e.json", "[" * 100_000, "malformed JSON"),
        # a JSON integer too large for a float
        (
            "e.json",
            '[{"Edge": "A-B", "Time": 1' + "0" * 400 + ', "Price": 1, "Comfort Level": 3, '
            '"Reliability": 0.5}]',
            "not a finite number",
        ),
    ],
)
def test_read_edges_errors_name_file_and_problem(tmp_path: Path, name, content, match) -> None:
    path = _write(tmp_path / name, content)
    with pytest.raises(TableError, match=match) as info:
        read_edges(path)
    assert str(path) in str(info.value)


def test_error_rows_are_csv_line_numbers(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "e.csv",
        'Edge,Time,Price,Comfort Level,Reliability\n\nA-B,1,2,3,0.5\n"C\nD-E",x,2,3,0.5\n',
    )
    with pytest.raises(TableError) as info:
        read_edges(path)
    assert (info.value.row, info.value.field) == (4, "Time")
    assert str(info.value) == f"{path}:4: Time: not a number: 'x'"


def test_latin1_file_gets_an_encoding_message(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "v.csv",
        "Vertex,Time,Price,Comfort Level,Reliability\nCaf\xe9,30,10,3,0.5\n".encode("latin-1"),
    )
    with pytest.raises(TableError, match="not UTF-8") as info:
        read_vertices(path)
    assert info.value.row == 2


def test_utf16_file_gets_an_encoding_message(tmp_path: Path) -> None:
    path = _write(tmp_path / "v.csv", "Vertex,Time\nA,1\n".encode("utf-16"))
    with pytest.raises(TableError, match="UTF-16"):
        read_vertices(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TableError, match="no such file"):
        read_vertices(tmp_path / "nope.csv")


def test_unknown_station_in_edges(tmp_path: Path) -> None:
    write_tables(travel(), tmp_path, "t", formats=("csv",))
    text = (tmp_path / "t_edge.csv").read_text(encoding="utf-8-sig")
    _write(tmp_path / "t_edge.csv", text.replace("Hill-Gate", "Hill-Castle"))
    with pytest.raises(TableError, match="unknown station 'Castle'") as info:
        read_network(tmp_path / "t_edge.csv", tmp_path / "t_vertex.csv")
    assert info.value.row == 4 and info.value.field == "Edge"


def test_duplicate_vertex_row(tmp_path: Path) -> None:
    write_tables(travel(), tmp_path, "t", formats=("csv",))
    path = tmp_path / "t_vertex.csv"
    text = path.read_text(encoding="utf-8-sig")
    _write(path, text + text.splitlines()[1] + "\n")
    with pytest.raises(TableError, match="duplicate station 'Gate' \\(first at row 2\\)"):
        read_network(tmp_path / "t_edge.csv", path)


def test_mixed_scenarios_are_rejected(tmp_path: Path) -> None:
    write_tables(travel(), tmp_path, "t", formats=("csv",))
    write_tables(metro(), tmp_path, "m", formats=("csv",))
    with pytest.raises(TableError, match="metromap table but the Vertex_tab is a travelmap"):
        read_network(tmp_path / "m_edge.csv", tmp_path / "t_vertex.csv")


def test_explicit_scenario_flags_extra_columns(tmp_path: Path) -> None:
    write_tables(metro(), tmp_path, "m", formats=("csv",))
    with pytest.raises(TableError, match="unexpected column"):
        read_vertices(tmp_path / "m_vertex.csv", scenario="travelmap")


# ----------------------------------------------------------------------------- property
_ALPHABET = st.sampled_from(
    list(string.ascii_letters + string.digits + " ,;\"'-_()[]é中文ß") + ["ŋ", "\u00a0"]
)
_NAME = st.text(_ALPHABET, min_size=1, max_size=8).filter(lambda s: table_name(s) != "")
_LINE = st.text(
    st.sampled_from(list(string.ascii_letters + " 号线")), min_size=1, max_size=6
).filter(lambda s: s.strip() == s and s != "")
_VALUE = st.floats(min_value=0, max_value=400, allow_nan=False).map(lambda x: round(x, 6))


@st.composite
def networks(draw) -> Network:
    names = draw(st.lists(_NAME, min_size=2, max_size=7, unique_by=table_name))
    if draw(st.booleans()):
        lines = draw(st.lists(_LINE, min_size=1, max_size=3, unique=True))
        seqs = {
            ln: draw(st.lists(st.sampled_from(names), min_size=2, max_size=5, unique=True))
            for ln in lines
        }
        net = Network.from_lines(seqs)
    else:
        pairs = draw(
            st.lists(
                st.tuples(st.sampled_from(names), st.sampled_from(names)).filter(
                    lambda p: table_name(p[0]) != table_name(p[1])
                ),
                min_size=1,
                max_size=8,
            )
        )
        net = Network.from_edges(pairs)
    edges = [
        Edge(e.u, e.v, e.line, *draw(st.tuples(_VALUE, _VALUE, _VALUE, _VALUE))) for e in net.edges
    ]
    vertices = {
        k: Vertex(k, v.lines, *draw(st.tuples(_VALUE, _VALUE, _VALUE, _VALUE, _VALUE)))
        for k, v in net.vertices.items()
    }
    if net.scenario == "travelmap":
        vertices = {
            k: Vertex(k, (), v.time, v.price, v.comfort, v.reliability) for k, v in vertices.items()
        }
    return net.with_attributes(vertices, edges)


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(net=networks(), fmt=st.sampled_from(["csv", "json"]))
def test_round_trip_random_networks(tmp_path: Path, net: Network, fmt: str) -> None:
    write_tables(net, tmp_path, "r", formats=(fmt,))
    back = read_network(
        tmp_path / f"r_edge.{fmt}", tmp_path / f"r_vertex.{fmt}", scenario=net.scenario
    )
    assert back.vertices == net.vertices
    assert back.edges == net.edges
    assert edge_rows(back) == edge_rows(net) and vertex_rows(back) == vertex_rows(net)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("e.csv", 'Edge,Line,Time,Price,Comfort Level,Reliability\nA-B,"Red;Red",2,1,0.5,0\n'),
        (
            "e.json",
            '[{"Edge": "A-B", "Line": ["Red", "Red"], "Time": 2, "Price": 1, '
            '"Comfort Level": 0.5, "Reliability": 0}]',
        ),
    ],
)
def test_line_listed_twice_in_a_row_is_reported(tmp_path: Path, name: str, content: str) -> None:
    """B.5 step 1: an edge (or station) listed twice within the same line is a duplicate."""
    path = _write(tmp_path / name, content)
    with pytest.raises(TableError, match="line 'Red' is listed twice") as info:
        read_edges(path)
    assert info.value.row == (2 if name.endswith(".csv") else 1) and info.value.field == "Line"
