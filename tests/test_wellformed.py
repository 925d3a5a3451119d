"""Two levels of table validation (SPEC 7): a table that is not well-formed is refused by
``solve``, ``validate``, ``build --from-tables`` and release imports with one line naming the
file, row and field; a well-formed table outside the MapTab profile (SPEC 6) is used as
given, with at most one warning line per table, and ``validate --profile maptab`` lists
its deviations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maptab.cli import app
from maptab.core.validate import profile_warnings, validate_tables
from maptab.generate.owntables import OwnTablesError, build_from_tables
from maptab.generate.release import ReleaseError, export_maptab_release, import_maptab_release

runner = CliRunner()

# A metro city off the profile: 7-minute edges (MapTab draws 2-3).
CITY_EDGES = """\ufeffEdge,Line,Time,Price,Comfort Level,Reliability
A-B,Red,7,0.5,0.5,0
B-C,Red,7,1.0,0.4,0
C-D,Red,7,0.3,0.9,0
E-B,Blue,7,0.6,0.7,0
B-F,Blue,7,0.2,0.3,0
"""
CITY_VERTICES = """\ufeffVertex,Line,Time,Price,Comfort Level,Reliability,Transfer Time
A,Red,1.0,0,0.5,0.9,0
B,Red;Blue,1.5,0,0.6,0.8,6
C,Red,0.5,0,0.7,0.7,0
D,Red,1.2,0,0.8,0.6,0
E,Blue,0.8,0,0.2,0.5,0
F,Blue,0.9,0,0.4,0.95,0
"""
# A scenic park off the profile: a hub priced 15 (MapTab: 100, 200 or 300), reliabilities
# of 0.7 (not a/365) and 7-minute edges.
PARK_EDGES = """\ufeffEdge,Time,Price,Comfort Level,Reliability
Station-Lake,7,20,4.5,0.7
Lake-Hill,7,15,4.0,0.7
Hill-Cave,7,30,3.5,0.7
Station-Hill,7,25,3.0,0.7
Cave-Fort,7,10,4.2,0.7
"""
PARK_VERTICES = """\ufeffVertex,Time,Price,Comfort Level,Reliability
Station,0,15,3.0,0.7
Lake,60,35,3.5,0.7
Hill,45,40,4.0,0.7
Cave,30,20,3.5,0.7
Fort,90,50,4.5,0.7
"""


def write_map(folder: Path, edges: str, vertices: str) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    e, v = folder / "Edge_tab.csv", folder / "Vertex_tab.csv"
    e.write_text(edges, encoding="utf-8")
    v.write_text(vertices, encoding="utf-8")
    return e, v


def solve(edges: Path, vertices: Path, *args: str):
    return runner.invoke(app, ["solve", "--edges", str(edges), "--vertices", str(vertices), *args])


def no_traceback(result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output


# ----------------------------------------------------------------------------- off profile
def test_solve_uses_tables_off_the_profile_with_one_warning_per_table(tmp_path: Path) -> None:
    edges, vertices = write_map(tmp_path / "park", PARK_EDGES, PARK_VERTICES)
    result = solve(edges, vertices, "--from", "Station", "--to", "Fort", "--weights", "1,1,1,1")
    assert result.exit_code == 0, result.output
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == 2  # Vertex_tab and Edge_tab, one line each
    assert all(w.startswith("warning: ") for w in warnings)
    assert any(f"{vertices}: 6 value(s) outside the MapTab profile" in w for w in warnings)
    assert any(f"{edges}: 5 value(s) outside the MapTab profile" in w for w in warnings)
    assert "Station-Hill-Cave-Fort" in result.stdout or "Station-Lake" in result.stdout

    result = solve(edges, vertices, "--from", "Station", "--to", "Fort", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["routes"] == ["Station-Hill-Cave-Fort"]


def test_solve_metro_city_off_the_profile(tmp_path: Path) -> None:
    edges, vertices = write_map(tmp_path / "city", CITY_EDGES, CITY_VERTICES)
    result = solve(edges, vertices, "--from", "A", "--to", "F", "--weights", "1,0,0,0", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    # A(1.0) + 7 + B(1.5) + transfer 6 + 7: source counted, destination not (SPEC 3)
    assert out["routes"] == ["A-B(transfer)-F"] and out["Total_Time"] == 22.5
    [warning] = result.stderr.strip().splitlines()
    assert f"{edges}: 5 value(s) outside the MapTab profile" in warning
    assert "first: row 2: Time: 7 is outside [2, 3]" in warning


def test_validate_lists_profile_deviations_only_with_profile(tmp_path: Path) -> None:
    edges, vertices = write_map(tmp_path / "park", PARK_EDGES, PARK_VERTICES)
    plain = runner.invoke(app, ["validate", str(edges), str(vertices)])
    assert plain.exit_code == 0, plain.output
    assert plain.output.strip() == "ok: 5 spots, 5 edges"
    result = runner.invoke(app, ["validate", str(edges), str(vertices), "--profile", "maptab"])
    assert result.exit_code == 1
    no_traceback(result)
    lines = [ln for ln in result.stdout.splitlines() if ln.startswith(str(tmp_path))]
    assert len(lines) == 11
    assert f"{vertices}:2: Price: 15 on a hub must be 100, 200 or 300" in result.stdout
    assert f"{edges}:2: Reliability: 0.7 is not a/365" in result.stdout
    assert "11 problem(s) found (11 outside the MapTab profile)" in result.stderr


def test_profile_problems_carry_their_level(tmp_path: Path) -> None:
    edges, vertices = write_map(tmp_path / "city", CITY_EDGES, CITY_VERTICES)
    assert validate_tables(edges, vertices) == []
    problems = validate_tables(edges, vertices, profile="maptab")
    assert [p.level for p in problems] == ["profile"] * 5
    assert [p.row for p in problems] == [2, 3, 4, 5, 6]
    assert len(profile_warnings(problems)) == 1


@pytest.fixture(scope="module")
def own(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("own")
    write_map(root / "city", CITY_EDGES, CITY_VERTICES)
    write_map(root / "park", PARK_EDGES, PARK_VERTICES)
    return root


def test_build_from_tables_off_the_profile_succeeds_with_warnings(
    own: Path, tmp_path: Path
) -> None:
    warnings: list[str] = []
    manifest = build_from_tables(own, tmp_path / "lib", pairs_per_map=2, warn=warnings.append)
    assert manifest["counts"]["maps"] == 2
    assert len(warnings) == 3  # city Edge_tab, park Vertex_tab, park Edge_tab
    assert all("\n" not in w and "outside the MapTab profile" in w for w in warnings)
    out = tmp_path / "cli"
    result = runner.invoke(
        app,
        ["build", "--from-tables", str(own), "--out", str(out), "--no-render"]
        + ["--pairs-per-map", "2"],
    )
    assert result.exit_code == 0, result.output
    assert (out / "manifest.json").is_file()
    # the dataset is well-formed; only --profile maptab lists its deviations
    result = runner.invoke(app, ["validate", str(out), "--sample", "5"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["validate", str(out), "--sample", "5", "--profile", "maptab"])
    assert result.exit_code == 1
    no_traceback(result)
    assert "(MapTab profile, SPEC 6: travelmap vertex table)" in result.stdout
    assert "16 problem(s) found" in result.stderr


def test_release_import_off_the_profile_warns_and_malformed_is_refused(
    own: Path, tmp_path: Path
) -> None:
    build_from_tables(own, tmp_path / "ds", pairs_per_map=2)
    release = export_maptab_release(tmp_path / "ds", tmp_path / "release")
    warnings: list[str] = []
    manifest = import_maptab_release(release, tmp_path / "imported", warn=warnings.append)
    assert manifest["options"]["label_mismatches"] == []
    assert len(warnings) == 3
    edge_tab = release / "travelmap" / "tabulars" / "synthetic" / "park_edge.json"
    rows = json.loads(edge_tab.read_text("utf-8"))
    rows[1]["Price"] = -5.0
    edge_tab.write_text(json.dumps(rows), encoding="utf-8")
    with pytest.raises(ReleaseError, match=r"park_edge\.json:2: Price: -5 is negative"):
        import_maptab_release(release, tmp_path / "again")


# ----------------------------------------------------------------------------- malformed
def _drop_column(text: str, column: str) -> str:
    header, *rows = text.splitlines()
    i = header.split(",").index(column)
    kept = [",".join(c for j, c in enumerate(r.split(",")) if j != i) for r in [header, *rows]]
    return "\n".join(kept) + "\n"


def _edit(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, 1)

    return edit


MALFORMED = {
    "nan": (
        "edges",
        _edit("B-C,Red,7,", "B-C,Red,NaN,"),
        "Edge_tab.csv:3: Time: NaN is not allowed",
    ),
    "infinity": (
        "edges",
        _edit("B-C,Red,7,", "B-C,Red,Infinity,"),
        "Edge_tab.csv:3: Time: not a number: 'Infinity'",
    ),
    "overflow": (
        "edges",
        _edit("B-C,Red,7,", "B-C,Red,1e400,"),
        "Edge_tab.csv:3: Time: '1e400' is not a finite number",
    ),
    "negative cost": (
        "edges",
        _edit("B-C,Red,7,1.0", "B-C,Red,7,-1.0"),
        "Edge_tab.csv:3: Price: -1 is negative",
    ),
    "negative vertex time": (
        "vertices",
        _edit("C,Red,0.5,", "C,Red,-0.5,"),
        "Vertex_tab.csv:4: Time: -0.5 is negative",
    ),
    "comfort beyond its scale": (
        "vertices",
        _edit("C,Red,0.5,0,0.7", "C,Red,0.5,0,1.7"),
        "Vertex_tab.csv:4: Comfort Level: 1.7 is outside the column's scale [0, 1]",
    ),
    "self-loop": (
        "edges",
        _edit("B-C,Red", "B-B,Red"),
        "Edge_tab.csv:3: Edge: 'B-B' joins a station",
    ),
    "unknown station": (
        "edges",
        _edit("C-D,Red", "C-Z,Red"),
        "Edge_tab.csv:4: Edge: unknown station 'Z'",
    ),
    "missing column": (
        "vertices",
        lambda text: _drop_column(text, "Reliability"),
        "Vertex_tab.csv: Reliability: missing column(s)",
    ),
}


def spoiled_city(folder: Path, case: str) -> tuple[Path, Path]:
    table, spoil, _ = MALFORMED[case]
    edges, vertices = CITY_EDGES, CITY_VERTICES
    if table == "edges":
        edges = spoil(edges)
    else:
        vertices = spoil(vertices)
    return write_map(folder, edges, vertices)


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_tables_are_one_line_errors_everywhere(tmp_path: Path, case: str) -> None:
    expected = MALFORMED[case][2]
    edges, vertices = spoiled_city(tmp_path / "own" / "city", case)

    result = solve(edges, vertices, "--from", "A", "--to", "D", "--weights", "1,0,0,0")
    assert result.exit_code == 1, result.output
    no_traceback(result)
    assert len(result.output.strip().splitlines()) == 1
    assert expected in result.stderr

    result = runner.invoke(app, ["validate", str(edges), str(vertices)])
    assert result.exit_code == 1
    no_traceback(result)
    assert expected in result.stdout

    with pytest.raises(OwnTablesError, match="Edge_tab|Vertex_tab") as err:
        build_from_tables(tmp_path / "own", tmp_path / "lib")
    assert expected in str(err.value) and "\n" not in str(err.value)
    out = tmp_path / "ds"
    result = runner.invoke(
        app, ["build", "--from-tables", str(tmp_path / "own"), "--out", str(out), "--no-render"]
    )
    assert result.exit_code == 1
    no_traceback(result)
    assert expected in " ".join(result.output.split())
    assert not out.exists()


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_json_numbers_are_refused(tmp_path: Path, constant: str) -> None:
    edges, vertices = write_map(tmp_path, CITY_EDGES, CITY_VERTICES)
    rows = [
        {"Edge": "A-B", "Line": "Red", "Time": 7, "Price": 0.5, "Comfort Level": 0.5},
    ]
    text = json.dumps(rows)[:-2] + f', "Reliability": {constant}}}]'
    bad = tmp_path / "edge.json"
    bad.write_text(text, encoding="utf-8")
    result = solve(bad, vertices, "--from", "A", "--to", "B")
    assert result.exit_code == 1
    no_traceback(result)
    assert f"{bad}: {constant} is not allowed in a table" in result.stderr
