"""``maptab render``: dataset folders, map files, table pairs, routes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from maptab.cli import app
from maptab.cli.render import parse_route
from maptab.core.network import Network

runner = CliRunner()


def network(map_id: str) -> Network:
    return Network.from_lines(
        {"Red": ["Port-Royal", "Mid", "End"], "Blue": ["North", "Mid", "South"]},
        map_id=map_id,
        positions={
            "Port-Royal": (0, 0),
            "Mid": (2, 0),
            "End": (4, 0),
            "North": (2, 2),
            "South": (2, -2),
        },
    )


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    for mid in ("m1", "m2"):
        folder = tmp_path / "ds" / "maps" / mid
        folder.mkdir(parents=True)
        (folder / "network.json").write_text(json.dumps(network(mid).to_dict()), encoding="utf-8")
    return tmp_path / "ds"


def test_render_a_map_of_a_dataset(dataset, tmp_path):
    out = tmp_path / "m1.png"
    res = runner.invoke(app, ["render", str(dataset), "--map", "m1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "wrote" in res.output and "legibility" not in res.output
    assert Image.open(out).size[0] > 300


def test_render_svg(dataset, tmp_path):
    out = tmp_path / "m2.svg"
    res = runner.invoke(app, ["render", str(dataset), "--map", "m2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "<svg" in out.read_text(encoding="utf-8")


def test_route_overlay_with_hyphenated_names(dataset, tmp_path):
    out = tmp_path / "route.png"
    res = runner.invoke(
        app,
        [
            "render",
            str(dataset),
            "--map",
            "m1",
            "--route",
            "Port-Royal-Mid-North",
            "--transfers",
            "Mid",
            "--kind",
            "pred",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert out.is_file()


def test_parse_route_joins_hyphenated_pieces():
    net = network("x")
    assert parse_route(net, "Port-Royal-Mid-End") == ["Port_Royal", "Mid", "End"]
    assert parse_route(net, "Port_Royal → Mid") == ["Port_Royal", "Mid"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "2 maps; pick one with --map"),
        (["--map", "zz"], "no map 'zz'"),
        (["--map", "m1", "--route", "Mid-Atlantis"], "unknown station 'Atlantis'"),
        (["--map", "m1", "--out", "x.gif"], "must end in .png or .svg"),
    ],
)
def test_bad_input_gives_one_line_error(dataset, args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["render", str(dataset), *args])
    assert res.exit_code == 1
    assert message in res.output
    assert "Traceback" not in res.output


DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.mark.conformance
def test_render_released_table_pair(tmp_path):
    tab = DATA / "maptab-sample" / "metromap" / "tabulars" / "america"
    if not tab.is_dir():
        pytest.skip(f"{tab} is absent (shared data not beside the repo)")
    out = tmp_path / "cleveland.png"
    res = runner.invoke(
        app,
        [
            "render",
            str(tab / "cleveland_vertex.csv"),
            str(tab / "cleveland_edge.csv"),
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "legibility" not in res.output
    assert out.is_file()


def test_topology_without_coordinates_is_laid_out_once(tmp_path, monkeypatch):
    import maptab.render.layout as layout

    calls = []
    original = layout._layout_component
    monkeypatch.setattr(layout, "_layout_component", lambda *a: calls.append(1) or original(*a))
    city = tmp_path / "city.json"
    city.write_text(json.dumps({"L1": ["a", "b", "c", "d"], "L2": ["e", "b", "f"]}))
    out = tmp_path / "city.png"
    res = runner.invoke(app, ["render", str(city), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "edge crossings 0" in res.output
    assert len(calls) == 1  # one component, laid out once for the image and the numbers
