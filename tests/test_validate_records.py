"""``maptab validate`` checks every record, not a sample (SPEC 7, 16): unique ids, finite
numbers, stations and gold routes on the map, ``network.json`` agreeing with the tables,
map images that decode. Each tampering (the manifest re-hashed, so hashes pass) is one line
naming file, line and field; ``maptab export`` refuses the ones it would copy, writing
nothing; no verb shows a traceback."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fakeserver import rehash
from maptab.cli import app
from maptab.core.network import Network
from maptab.generate.pipeline import build_benchmark
from maptab.io.dataset import Dataset, DatasetError
from maptab.score.integrity import validate_dataset

runner = CliRunner()


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("validate_records") / "mini"
    build_benchmark(root, preset="mini", seed=0)
    return root


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")


def _network(ds: Path, map_id: str) -> Network:
    return Dataset(ds, verify=False).network(map_id)


# --------------------------------------------------------------------------- tamperings
# each edits a copy of the dataset and returns the one problem line validate must print
Tamper = Callable[[Path], str]


def _duplicate_id(ds: Path) -> str:
    rows = _rows(ds / "rp.jsonl")
    rows[5]["id"] = rows[4]["id"]
    _write_rows(ds / "rp.jsonl", rows)
    return f"{ds / 'rp.jsonl'}:6: field 'id': duplicate id {rows[4]['id']!r} (first on line 5)"


def _sample_id_of_another_file(ds: Path) -> str:
    rp, qa = _rows(ds / "rp.jsonl"), _rows(ds / "qa.jsonl")
    qa[0]["id"] = rp[0]["id"]
    _write_rows(ds / "qa.jsonl", qa)
    return f"{ds / 'qa.jsonl'}:1: field 'id': sample id {rp[0]['id']!r} is also one of rp.jsonl:1"


def _nan_weight(ds: Path) -> str:
    rows = _rows(ds / "rp.jsonl")
    n = next(i for i, r in enumerate(rows) if r["weights"])
    rows[n]["weights"][1] = float("nan")
    _write_rows(ds / "rp.jsonl", rows)
    return f"{ds / 'rp.jsonl'}:{n + 1}: field 'weights[1]': expected a finite number, found nan"


def _zero_weights(ds: Path) -> str:
    rows = _rows(ds / "rp.jsonl")
    n = next(i for i, r in enumerate(rows) if r["weights"])
    rows[n]["weights"] = [0, 0, 0, 0]
    _write_rows(ds / "rp.jsonl", rows)
    return (
        f"{ds / 'rp.jsonl'}:{n + 1}: field 'weights': weights must sum to 1, "
        "got [0, 0, 0, 0] (sum 0)"
    )


def _infinite_qa_parameter(ds: Path) -> str:
    rows = _rows(ds / "qa.jsonl")
    rows[2]["params"]["scale"] = 1e400  # json writes Infinity
    _write_rows(ds / "qa.jsonl", rows)
    return f"{ds / 'qa.jsonl'}:3: field 'params.scale': not a finite number"


def _route_off_the_map(ds: Path) -> str:
    rows = _rows(ds / "rp.jsonl")
    n, row = next((i, r) for i, r in enumerate(rows) if r["route_vertex_numbers"][0] >= 4)
    stations = row["routes"][0].split("-")
    first = stations[0].removesuffix("(transfer)")
    net = _network(ds, row["map_id"])
    far = next(
        s
        for s in net.vertices
        if s not in net.neighbours(first)
        and s not in {x.removesuffix("(transfer)") for x in stations}
    )
    stations[1] = far
    row["routes"][0] = "-".join(stations)
    _write_rows(ds / "rp.jsonl", rows)
    return (
        f"{ds / 'rp.jsonl'}:{n + 1}: field 'routes[0]': {first!r} and {far!r} are not "
        f"adjacent on map {row['map_id']!r}"
    )


def _source_off_the_map(ds: Path) -> str:
    rows = _rows(ds / "rp.jsonl")
    rows[9]["source"] = "Nowhere Junction"
    _write_rows(ds / "rp.jsonl", rows)
    return (
        f"{ds / 'rp.jsonl'}:10: field 'source': 'Nowhere Junction' is not a station of "
        f"map {rows[9]['map_id']!r}"
    )


def _reasonmap_station_off_the_map(ds: Path) -> str:
    rows = _rows(ds / "reasonmap.jsonl")
    rows[3]["station_2"] = "Nowhere Junction"
    _write_rows(ds / "reasonmap.jsonl", rows)
    return (
        f"{ds / 'reasonmap.jsonl'}:4: field 'station_2': 'Nowhere Junction' is not a station "
        f"of map {rows[3]['map_id']!r}"
    )


def _reasonmap_unknown_line(ds: Path) -> str:
    rows = _rows(ds / "reasonmap.jsonl")
    rows[0]["routes"][0][0]["route_name"] = "Line 99"
    _write_rows(ds / "reasonmap.jsonl", rows)
    return (
        f"{ds / 'reasonmap.jsonl'}:1: field 'routes[0][0].route_name': 'Line 99' is not a "
        f"line of map {rows[0]['map_id']!r}"
    )


def _corrupt_image(ds: Path) -> str:
    path = ds / "maps" / "metro-001" / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    return f"{path}: not a readable image ("


def _disconnected_network(ds: Path) -> str:
    path = ds / "maps" / "travel-000" / "network.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    cut = data["edges"][0]["u"]
    data["edges"] = [e for e in data["edges"] if cut not in (e["u"], e["v"])]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return f"{path}: "


def _network_value_differs(ds: Path) -> str:
    path = ds / "maps" / "metro-000" / "network.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    was = data["edges"][3]["time"]
    data["edges"][3]["time"] = was + 0.5
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return f"{path}: field 'edges[3].time': {was + 0.5}, the table has {was}"


TAMPERINGS: dict[str, Tamper] = {
    "duplicate id": _duplicate_id,
    "sample id of another file": _sample_id_of_another_file,
    "NaN weight": _nan_weight,
    "zero weights": _zero_weights,
    "infinite QA parameter": _infinite_qa_parameter,
    "route off the map": _route_off_the_map,
    "source off the map": _source_off_the_map,
    "ReasonMap station off the map": _reasonmap_station_off_the_map,
    "ReasonMap unknown line": _reasonmap_unknown_line,
    "corrupt image": _corrupt_image,
    "disconnected network": _disconnected_network,
    "network value differs": _network_value_differs,
}
PREFIX_ONLY = {"corrupt image", "disconnected network"}  # the rest of the line is the reader's


def _tampered(mini: Path, tmp_path: Path, name: str) -> tuple[Path, str]:
    ds = tmp_path / "ds"
    shutil.copytree(mini, ds)
    expected = TAMPERINGS[name](ds)
    rehash(ds)
    return ds, expected


def _invoke(*args: str) -> Any:
    res = runner.invoke(app, list(args))
    assert "Traceback" not in res.stdout + res.stderr, res.stdout + res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res


# --------------------------------------------------------------------------- validate
def test_the_untampered_dataset_validates(mini: Path) -> None:
    res = _invoke("validate", str(mini))
    assert res.exit_code == 0 and res.stdout.startswith("ok: "), res.stdout + res.stderr


@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_validate_reports_exactly_the_tampering(mini: Path, tmp_path: Path, name: str) -> None:
    ds, expected = _tampered(mini, tmp_path, name)
    res = _invoke("validate", str(ds))
    assert res.exit_code == 1
    lines = res.stdout.splitlines()
    assert len(lines) == 1, lines
    if name in PREFIX_ONLY:
        assert lines[0].startswith(expected), (lines[0], expected)
    else:
        assert lines[0] == expected
    assert res.stderr == "error: 1 problem(s) found\n"


def test_a_disconnected_network_is_one_line_naming_the_cut(mini: Path, tmp_path: Path) -> None:
    ds, expected = _tampered(mini, tmp_path, "disconnected network")
    cut = json.loads((mini / "maps" / "travel-000" / "network.json").read_text())["edges"][0]["u"]
    (line,) = validate_dataset(ds).problems
    assert line.startswith(expected) and repr(cut) in line, line


def test_a_solver_without_route_is_one_line(mini: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sampled re-derivation reports a gold label the solver cannot re-derive."""
    import maptab.generate.queries as queries

    def no_route(*args: Any, **kwargs: Any) -> Any:
        raise IndexError("list index out of range")

    monkeypatch.setattr(queries, "gold_label", no_route)
    report = validate_dataset(mini, sample=3)
    assert len(report.problems) == 3
    assert all(
        p.startswith(f"{mini / 'rp.jsonl'}:")
        and ": gold label cannot be re-derived: no route between its stations on map " in p
        for p in report.problems
    )


# --------------------------------------------------------------------------- export
EXPORT_REFUSES = ("duplicate id", "NaN weight", "infinite QA parameter", "corrupt image")


@pytest.mark.parametrize("fmt", ["verl", "trl", "hf"])
@pytest.mark.parametrize("name", EXPORT_REFUSES)
def test_export_refuses_before_writing(mini: Path, tmp_path: Path, name: str, fmt: str) -> None:
    ds, expected = _tampered(mini, tmp_path, name)
    out = tmp_path / "out"
    images = () if name == "corrupt image" or fmt == "hf" else ("--no-images",)
    res = _invoke("export", str(ds), "--format", fmt, "--out", str(out), *images)
    assert res.exit_code == 1
    assert res.stderr.startswith(f"error: {expected}") and res.stderr.count("\n") == 1, res.stderr
    assert not out.exists()


@pytest.mark.parametrize("name", ["route off the map", "source off the map"])
def test_rl_export_refuses_gold_off_the_map(mini: Path, tmp_path: Path, name: str) -> None:
    ds, expected = _tampered(mini, tmp_path, name)
    out = tmp_path / "out"
    res = _invoke("export", str(ds), "--format", "verl", "--out", str(out), "--no-images")
    assert res.exit_code == 1
    assert res.stderr == f"error: {expected}; nothing exported\n"
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["verl", "hf"])
def test_the_untampered_dataset_exports(mini: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "out"
    extra = ("--no-images",) if fmt == "verl" else ()
    res = _invoke("export", str(mini), "--format", fmt, "--out", str(out), *extra)
    assert res.exit_code == 0, res.stderr
    assert any(out.rglob("*.parquet"))
    assert not list(out.rglob(".*.tmp"))


# --------------------------------------------------------------------------- inspect
@pytest.mark.inspect
def test_inspect_samples_name_a_sample_without_reference(mini: Path, tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    from maptab.integrations.inspect_tasks import maptab_samples
    from maptab.tasks.base import get

    ds, _ = _tampered(mini, tmp_path, "source off the map")
    row = _rows(ds / "rp.jsonl")[9]
    with pytest.raises(DatasetError) as info:
        maptab_samples(get("rp"), ds, images=False)
    message = str(info.value)
    assert message.startswith(f"{ds / 'rp.jsonl'}: sample {row['id']!r}: no reference answer (")
    assert "\n" not in message
