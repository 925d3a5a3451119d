"""``maptab solve`` on small tables written by the test."""

from __future__ import annotations

import itertools
import json

import pytest
from typer.testing import CliRunner

from maptab.cli import app

runner = CliRunner()

# Red: A-B-C-D; Blue: E-B-F. B is a transfer station (transfer time 6).
EDGES = """\ufeffEdge,Line,Time,Price,Comfort Level,Reliability
A-B,Red Line,2.5,0.5,0.5,0
B-C,Red Line,2.0,1.0,0.4,0
C-D,Red Line,2.2,0.3,0.9,0
E-B,Blue Line,2.4,0.6,0.7,0
B-F,Blue Line,2.1,0.2,0.3,0
"""
VERTICES = """\ufeffVertex,Line,Time,Price,Comfort Level,Reliability,Transfer Time
A,Red Line,1.0,0,0.5,0.9,0
B,Red Line;Blue Line,1.5,0,0.6,0.8,6
C,Red Line,0.5,0,0.7,0.7,0
D,Red Line,1.2,0,0.8,0.6,0
E,Blue Line,0.8,0,0.2,0.5,0
F,Blue Line,0.9,0,0.4,0.95,0
"""


def table_args(folder, edges: str = EDGES, vertices: str = VERTICES) -> list[str]:
    """Write the two tables into ``folder``; the ``--edges``/``--vertices`` options."""
    e, v = folder / "edge.csv", folder / "vertex.csv"
    e.write_text(edges, encoding="utf-8")
    v.write_text(vertices, encoding="utf-8")
    return ["--edges", str(e), "--vertices", str(v)]


@pytest.fixture
def tables(tmp_path):
    return table_args(tmp_path)


def run(*args: str):
    return runner.invoke(app, list(args))


def test_weighted_json(tables):
    res = run("solve", *tables, "--from", "A", "--to", "F", "--weights", "1,0,0,0", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["routes"] == ["A-B(transfer)-F"]
    assert out["route_vertex_numbers"] == [3]
    assert out["transfer_vertex_numbers"] == [1]
    assert out["Total_Time"] == round(1.0 + 1.5 + 2.5 + 2.1 + 6, 2)
    assert out["Total_Price"] == 0.7
    assert out["Average_Comfort Level"] == round((0.5 + 0.6 + 0.5 + 0.3) / 4, 6)
    assert out["Average_Reliability"] == 0.85
    assert out["cost"] == pytest.approx((1.0 + 1.5 + 2.5 + 2.1 + 6) / 3)


def test_criteria_free_json_has_no_totals(tables):
    res = run("solve", *tables, "--from", "E", "--to", "D", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out == {
        "routes": ["E-B(transfer)-C-D"],
        "route_vertex_numbers": [4],
        "transfer_vertex_numbers": [1],
        "route_count": 1,
        "truncated": False,
        "cost": 4.0,
    }


def test_mix_scores_vertex_items(tables):
    res = run(
        "solve", *tables, "--from", "A", "--to", "C", "--weights", "0,1,0,0", "--mix", "--json"
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    # Mix_tab prices: A = 0.5, B = mean(0.5, 1.0, 0.6, 0.2) = 0.575 -> 0.58 (half-up)
    assert out["Total_Price"] == 1.08
    assert out["Total_Time"] == 2.5


def test_table_output(tables):
    res = run("solve", *tables, "--from", "A", "--to", "D", "--weights", "0.25,0.25,0.25,0.25")
    assert res.exit_code == 0, res.output
    assert "A-B-C-D" in res.output and "1 optimal route" in res.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--from", "A", "--to", "Dee"), "did you mean 'D'"),
        (("--from", "A", "--to", "D", "--weights", "1_0,0,0,1"), "'1_0' is not"),
        (("--from", "A", "--to", "D", "--weights", "0,0,0,0"), "must be positive"),
        (("--from", "A", "--to", "D", "--mix"), "give --weights"),
        (
            ("--from", "A", "--to", "D", "--weights", "1,0,0,0", "--model", "median"),
            "unknown cost model",
        ),
        (("--from", "A", "--to", "A"), "same station"),
    ],
)
def test_errors_are_one_line(tables, args, message):
    res = run("solve", *tables, *args)
    assert res.exit_code != 0
    assert message in res.output
    assert "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_missing_file_is_one_line(tmp_path):
    res = run(
        "solve",
        "--edges",
        str(tmp_path / "no.csv"),
        "--vertices",
        str(tmp_path / "no2.csv"),
        "--from",
        "A",
        "--to",
        "B",
    )
    assert res.exit_code != 0
    assert "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


@pytest.mark.timeout(20)
def test_negative_value_is_one_line_not_a_hang(tmp_path):
    bad = EDGES.replace("B-C,Red Line,2.0", "B-C,Red Line,-20")
    args = table_args(tmp_path, edges=bad)
    res = run("solve", *args, "--from", "A", "--to", "D", "--weights", "1,0,0,0")
    assert res.exit_code == 1
    assert "edge.csv:3: Time: -20 is negative" in res.output
    assert "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_weights_are_normalised(tables):
    """Integer conditions as the papers state them give the same answer as their fractions."""
    outs = []
    for w in ("1,2,1,0", "0.25,0.5,0.25,0", "2,4,2,0"):
        res = run("solve", *tables, "--from", "A", "--to", "F", "--weights", w, "--json")
        assert res.exit_code == 0, res.output
        outs.append(json.loads(res.output))
    assert outs[0] == outs[1] == outs[2]
    thirds = run(
        "solve", *tables, "--from", "A", "--to", "F", "--weights", "0.333333,0.333333,0.333333,0"
    )
    assert thirds.exit_code == 0, thirds.output


BAD_TABLES = {
    "negative edge price": (
        EDGES.replace("B-C,Red Line,2.0,1.0", "B-C,Red Line,2.0,-1.0"),
        VERTICES,
        "edge.csv:3: Price: -1 is negative",
    ),
    "negative vertex price": (
        EDGES,
        VERTICES.replace("C,Red Line,0.5,0", "C,Red Line,0.5,-2"),
        "vertex.csv:4: Price: -2 is negative",
    ),
    "A-B and B-A on one line": (
        EDGES + "C-B,Red Line,2.0,1.0,0.4,0\n",
        VERTICES,
        "edge.csv:7: Edge: duplicate of the edge at row 3",
    ),
}


@pytest.mark.parametrize("case", list(BAD_TABLES))
@pytest.mark.parametrize(
    "mode",
    [(), ("--weights", "1,0,0,0"), ("--weights", "0,0,1,1", "--mix"), ("--json",)],
    ids=["fewest", "weighted", "mix", "json"],
)
def test_invalid_tables_are_refused_in_every_mode(tmp_path, case, mode):
    edges, vertices, message = BAD_TABLES[case]
    args = table_args(tmp_path, edges, vertices)
    res = run("solve", *args, "--from", "A", "--to", "D", *mode)
    assert res.exit_code == 1, res.output
    assert message in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    res = run("validate", args[1], args[3])
    assert res.exit_code == 1 and message in res.output


def test_long_routes_are_not_wrapped(tmp_path):
    names = [f"Station Number {i:02d}" for i in range(30)]
    edges = "Edge,Line,Time,Price,Comfort Level,Reliability\n" + "".join(
        f"{a}-{b},Long Line,2,0.5,0.5,0\n" for a, b in itertools.pairwise(names)
    )
    vertices = "Vertex,Line,Time,Price,Comfort Level,Reliability,Transfer Time\n" + "".join(
        f"{n},Long Line,1,0,0.5,0.9,0\n" for n in names
    )
    args = table_args(tmp_path, edges, vertices)
    route = "-".join(names)
    for weights in ((), ("--weights", "1,0,0,0")):
        res = runner.invoke(
            app,
            ["solve", *args, "--from", names[0], "--to", names[-1], *weights],
            env={"COLUMNS": "80"},
        )
        assert res.exit_code == 0, res.output
        assert f"1: {route}" in res.output.splitlines()  # one whole line, far beyond 80 columns


def test_ties_are_counted_and_the_list_capped(tmp_path):
    """A 6×6 grid of equal edges: C(10, 5) = 252 fewest-station routes corner to corner."""
    k = 6
    rows = ["Edge,Line,Time,Price,Comfort Level,Reliability"]
    for i in range(k):
        for j in range(k):
            if j + 1 < k:
                rows.append(f"G{i}_{j}-G{i}_{j + 1},R{i},2,0.5,0.5,0")
            if i + 1 < k:
                rows.append(f"G{i}_{j}-G{i + 1}_{j},C{j},2,0.5,0.5,0")
    verts = ["Vertex,Line,Time,Price,Comfort Level,Reliability,Transfer Time"]
    verts += [f"G{i}_{j},R{i};C{j},1,0,0.5,0.8,5" for i in range(k) for j in range(k)]
    e, v = tmp_path / "e.csv", tmp_path / "v.csv"
    e.write_text("\n".join(rows) + "\n", encoding="utf-8")
    v.write_text("\n".join(verts) + "\n", encoding="utf-8")
    args = ["solve", "--edges", str(e), "--vertices", str(v), "--from", "G0_0", "--to", "G5_5"]
    res = run(*args, "--weights", "0,0,1,0", "--max-routes", "3", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    # comfort only: transfers are free, each staircase is one route, all tie
    assert out["route_count"] == 252 and out["truncated"] is True
    assert len(out["routes"]) == 3 == len(out["route_vertex_numbers"])
    res = run(*args, "--max-routes", "2")
    assert res.exit_code == 0, res.output
    assert "252 optimal route(s), the first 2 listed" in res.output
    res = run(*args, "--max-routes", "0")
    assert res.exit_code != 0
