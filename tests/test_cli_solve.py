"""``maptab solve`` on small tables written by the test."""

from __future__ import annotations

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


@pytest.fixture
def tables(tmp_path):
    e, v = tmp_path / "edge.csv", tmp_path / "vertex.csv"
    e.write_text(EDGES, encoding="utf-8")
    v.write_text(VERTICES, encoding="utf-8")
    return ["--edges", str(e), "--vertices", str(v)]


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
        (("--from", "A", "--to", "D", "--weights", "1,1,0,0"), "sum to 1"),
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
    e, v = tmp_path / "edge.csv", tmp_path / "vertex.csv"
    e.write_text(EDGES.replace("B-C,Red Line,2.0", "B-C,Red Line,-20"), encoding="utf-8")
    v.write_text(VERTICES, encoding="utf-8")
    res = run(
        "solve",
        "--edges",
        str(e),
        "--vertices",
        str(v),
        "--from",
        "A",
        "--to",
        "D",
        "--weights",
        "1,0,0,0",
    )
    assert res.exit_code == 1
    assert "edge B-C (line 'Red Line'): Time -20" in res.output
    assert "Traceback" not in res.output


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
