"""Dataset integrity and hostile inputs: atomic builds, verified and contained
reads, record checks with line numbers, explicit limits, one-line errors."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from fakeserver import rehash, write_dataset
from maptab import _limits as limits
from maptab.cli import app
from maptab.core.network import Network
from maptab.core.schema import Prediction, QAQuery, ReasonMapQuestion, RPQuery
from maptab.generate.pipeline import Preset, build_benchmark
from maptab.io.dataset import Dataset, DatasetError, DatasetWriter, MapEntry
from maptab.run.requests import build_requests, iter_samples
from maptab.score.scorer import ScoreError, load_predictions, score_predictions

SMALL = Preset("small", 1, 1, 6, 6, q_min=2, sizes=("small",))
DEEP = "[" * 100_000 + "]" * 100_000


def _invoke(*args: str):
    res = CliRunner().invoke(app, list(args))
    out = res.stdout + res.stderr
    assert "Traceback" not in out, out
    return res, res.stderr


def _one_line_error(*args: str) -> str:
    res, err = _invoke(*args)
    assert res.exit_code == 1, (args, res.stdout, err, res.exception)
    assert isinstance(res.exception, SystemExit), res.exception
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def _run(ds: Path, out: Path, *extra: str) -> str:
    return _one_line_error(
        "run", str(ds), "--model", "oracle", "--out", str(out), "--no-progress", *extra
    )


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# --------------------------------------------------------------------------- atomic builds
def test_failed_rebuild_leaves_the_old_dataset_and_no_temporary_folder(tmp_path, monkeypatch):
    out = tmp_path / "ds"
    build_benchmark(out, preset=SMALL, seed=1)
    before = _files(out)
    calls = []

    def interrupted(self, *args, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(self, *args, **kw)

    original = DatasetWriter.record_map  # called once per map, after its files are written
    monkeypatch.setattr(DatasetWriter, "record_map", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build_benchmark(out, preset=SMALL, seed=2)
    assert _files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]


def _killed_writer(root: Path) -> None:
    """A process that starts a rebuild of ``root``, writes a map and rows, and is killed."""
    code = f"""
import os, signal
from maptab.io.dataset import DatasetWriter, MapEntry
from maptab.core.network import Network
w = DatasetWriter({str(root)!r}, 7)
net = Network.from_lines({{"L": ["A", "B", "C"]}}, map_id="new")
w.add_map(net, MapEntry("new", "metromap", "easy", "test"))
(w.root / "rp.jsonl").write_text("{{}}\\n")
os.kill(os.getpid(), signal.SIGKILL)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr


def test_killed_rebuild_never_yields_a_mixed_dataset(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=8, n_qa=2, n_reasonmap=1)
    before = _files(ds)
    n_before = len(list(iter_samples(ds)))
    _killed_writer(ds)
    assert _files(ds) == before  # the old dataset, complete and untouched
    assert Dataset(ds).verify() == []
    assert len(list(iter_samples(ds))) == n_before
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".ds.building-")]
    assert len(leftovers) == 1
    # the next build removes what the killed one left (its process is gone)
    writer = DatasetWriter(ds, 0)
    writer.add_map(
        Network.from_lines({"L": ["A", "B"]}, map_id="m"), MapEntry("m", "metromap", "easy", "test")
    )
    writer.finish()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]
    assert list(Dataset(ds).maps) == ["m"]


def test_a_folder_missing_between_the_renames_names_the_interrupted_build(tmp_path):
    (tmp_path / ".ds.old-999999999").mkdir()
    err = _run(tmp_path / "ds", tmp_path / "run")
    assert "no manifest.json" in err and "a build was interrupted" in err and ".ds.old-" in err


def test_build_refuses_to_replace_a_folder_that_is_not_a_dataset(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    with pytest.raises(DatasetError, match="not a maptab dataset; refusing to replace it"):
        DatasetWriter(tmp_path / "notes", 0)
    assert (tmp_path / "notes" / "todo.txt").read_text() == "keep me"


# --------------------------------------------------------------------------- verification
def _tamper_answers(ds: Path) -> None:
    rows = [json.loads(x) for x in (ds / "qa.jsonl").read_text().splitlines()]
    for r in rows:
        r["answer"] += 1
    (ds / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("built") / "ds"
    build_benchmark(out, preset=SMALL, seed=3)
    return out


@pytest.mark.slow
def test_a_tampered_file_is_named_by_run_score_and_validate(built, tmp_path):
    ds = tmp_path / "ds"
    shutil.copytree(built, ds)
    res, _ = _invoke("validate", str(ds))
    assert res.exit_code == 0 and res.stdout.startswith("ok: "), res.stdout
    res, _ = _invoke(
        "run", str(ds), "--model", "oracle", "--out", str(tmp_path / "r"), "--no-progress"
    )
    assert res.exit_code == 0
    res, _ = _invoke("score", str(tmp_path / "r"), "--no-progress")
    assert res.exit_code == 0
    _tamper_answers(ds)
    message = f"{ds / 'qa.jsonl'}: content differs from the SHA-256 in manifest.json"
    assert message in _run(ds, tmp_path / "r2")
    assert message in _one_line_error("score", str(tmp_path / "r"), "--no-progress")
    report = ("report", str(tmp_path / "r"), "--out", str(tmp_path / "rep"), "--no-progress")
    assert message in _one_line_error(*report, "--overlays", "0")
    res, _ = _invoke("validate", str(ds))
    assert res.exit_code == 1
    lines = res.stdout.splitlines()
    assert lines[0] == f"{ds}/qa.jsonl: content differs from the manifest's SHA-256"
    assert all(" answer " in x and "!=" in x for x in lines[1:])  # re-derived gold differs
    assert len(lines) == 1 + len((ds / "qa.jsonl").read_text().splitlines())
    # on purpose: --no-verify reads the edited file
    res, _ = _invoke("score", str(tmp_path / "r"), "--no-progress", "--no-verify")
    assert res.exit_code == 0, res.stderr


def test_a_changed_table_value_is_refused_before_the_model_sees_it(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=0, n_reasonmap=0)
    edges = ds / "maps/m1/edges.csv"
    edges.write_text(
        edges.read_text(encoding="utf-8-sig").replace("2.1", "9.9"), encoding="utf-8-sig"
    )
    assert f"{edges}: content differs" in _run(ds, tmp_path / "r")
    assert len(build_requests(ds, verify=False)) == 4


def test_files_added_after_the_build_are_refused(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    (ds / "qa.jsonl").unlink()
    rehash(ds)
    (ds / "qa.jsonl").write_text("")
    assert Dataset(ds).verify() == ["qa.jsonl: on disk but not listed in the manifest"]
    assert "qa.jsonl: not listed in the manifest's files" in _run(ds, tmp_path / "r")
    (ds / "qa.jsonl").unlink()
    assert Dataset(ds).verify() == []
    (ds / "maps/m1/image.png").unlink()  # listed but missing
    assert Dataset(ds).verify() == ["maps/m1/image.png: listed in the manifest but missing"]
    with pytest.raises(DatasetError, match=r"maps/m1/image\.png: no such file"):
        build_requests(ds)  # as a run with a model that looks at the map


def test_each_file_is_hashed_once_per_process(tmp_path, monkeypatch):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=2, n_reasonmap=1)
    hashed: list[int] = []
    real = hashlib.file_digest

    def counting(fh, digest):
        hashed.append(1)
        return real(fh, digest)

    monkeypatch.setattr(hashlib, "file_digest", counting)
    build_requests(ds)
    assert len(hashed) == 7  # three JSONL files, three tables, the image
    build_requests(ds)
    Dataset(ds).rp()
    assert len(hashed) == 7  # each once, however often read


# --------------------------------------------------------------------------- containment
def test_a_symlink_out_of_the_dataset_is_never_followed(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=0, n_reasonmap=0)
    edges = ds / "maps/m1/edges.csv"
    outside = tmp_path / "outside.csv"
    shutil.move(edges, outside)
    edges.symlink_to(outside)  # same bytes: the hash alone would not notice
    for flag in ((), ("--no-verify",)):
        assert "leads outside the folder" in _run(ds, tmp_path / "r", *flag)
    err = _one_line_error("export", str(ds), "--out", str(tmp_path / "exported"))
    assert "leads outside the folder" in err and str(edges) in err


def test_a_map_folder_linked_out_of_the_dataset_is_refused(tmp_path):
    # Dataset.map_dir remembers its checked folders (a run asks with every request): what it
    # remembers is the checked path, never a folder that failed the check
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=0, n_reasonmap=0)
    folder = ds / "maps/m1"
    outside = tmp_path / "m1-outside"
    shutil.move(folder, outside)
    folder.symlink_to(outside, target_is_directory=True)
    for verify in (True, False):
        d = Dataset(ds, verify=verify)
        for _ in range(2):
            with pytest.raises(DatasetError, match="leads outside the folder"):
                d.map_dir("m1")
            with pytest.raises(DatasetError, match="leads outside the folder"):
                d.map_file("m1", "edges.csv")
    assert "leads outside the folder" in _run(ds, tmp_path / "r", "--no-verify")


def test_a_device_linked_into_the_dataset_is_refused(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=0, n_reasonmap=0)
    edges = ds / "maps/m1/edges.csv"
    edges.unlink()
    edges.symlink_to("/dev/zero")
    assert "leads outside the folder" in _run(ds, tmp_path / "r", "--no-verify")


def test_export_refuses_to_write_into_its_own_dataset(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=2, n_qa=0, n_reasonmap=0)
    before = _files(ds)
    for out in (ds, ds / "sub"):
        assert "is inside the dataset" in _one_line_error("export", str(ds), "--out", str(out))
    assert _files(ds) == before


# --------------------------------------------------------------------------- manifest
@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ("[]", "manifest.json: expected a JSON object, found list"),
        ('{"schema_version": 1, "maps": "x"}', "'maps' must be a list, found str"),
        (
            '{"schema_version": 1, "maps": [{"id": 3}]}',
            "maps[0]: field 'id': expected str, found int",
        ),
        ('{"schema_version": 1, "files": []}', "'files' must map relative paths"),
        ('{"schema_version": 2}', "schema_version 2, this maptab reads 1"),
        (DEEP, "manifest.json: JSON nested too deeply"),
        ("{", "manifest.json: not valid JSON"),
    ],
)
def test_malformed_manifests_are_one_line_errors(tmp_path, manifest, message):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    (ds / "manifest.json").write_text(manifest)
    assert message in _run(ds, tmp_path / "r")


def test_unknown_manifest_keys_are_ignored(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=0, n_reasonmap=0)
    manifest = json.loads((ds / "manifest.json").read_text())
    manifest["future_field"] = {"x": 1}
    manifest["maps"][0]["future_key"] = "y"
    (ds / "manifest.json").write_text(json.dumps(manifest))
    assert Dataset(ds).maps["m1"].scenario == "metromap"
    assert len(build_requests(ds)) == 4


# --------------------------------------------------------------------------- records
def _edit_rows(path: Path, n: int, **changes) -> None:
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[n].update(changes)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize(
    ("kind", "changes", "message"),
    [
        ("rp", {"routes": 5}, "rp.jsonl:2: field 'routes': expected list[str], found int"),
        ("rp", {"weights": [1, 0]}, "rp.jsonl:2: field 'weights': expected 4 numbers, found 2"),
        ("rp", {"category": "fastest"}, "rp.jsonl:2: field 'category': unknown RP category"),
        ("rp", {"Total_Time": "12"}, "rp.jsonl:2: field 'Total_Time': expected a number"),
        ("qa", {"answer": "2"}, "qa.jsonl:2: field 'answer': expected float, found str"),
        ("qa", {"type": 99}, "qa.jsonl:2: field 'type': 99 is not a QA type"),
        ("qa", {"map_id": ""}, "qa.jsonl:2: field 'map_id' is empty"),
        (
            "reasonmap",
            {"routes": [[{"route_name": 1}]]},
            "reasonmap.jsonl:2: routes[0][0]: field 'route_name'",
        ),
    ],
)
def test_records_are_checked_when_read_with_their_line(tmp_path, kind, changes, message):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=2, n_reasonmap=2)
    _edit_rows(ds / f"{kind}.jsonl", 1, **changes)
    rehash(ds)
    assert message in _run(ds, tmp_path / "r")
    with pytest.raises(DatasetError, match=message.replace("[", r"\[").replace("]", r"\]")):
        getattr(Dataset(ds), kind)()


def _predictions(run: Path, rows: list[dict | str]) -> None:
    run.mkdir(parents=True, exist_ok=True)
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
    (run / "predictions.jsonl").write_text(text)


def test_hostile_prediction_rows_are_one_line_errors_in_score_run_and_report(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=2, n_qa=0, n_reasonmap=0)
    run = tmp_path / "run"
    res, _ = _invoke("run", str(ds), "--model", "oracle", "--out", str(run), "--no-progress")
    assert res.exit_code == 0
    good = json.loads((run / "predictions.jsonl").read_text().splitlines()[0])
    _predictions(run, [good, {**good, "response": 12345}])
    err = _one_line_error("score", str(run), "--no-progress")
    assert "predictions.jsonl:2: not a prediction row (field 'response': expected str" in err
    err = _run(ds, run)  # a resumed run reads the same rows
    assert "predictions.jsonl:2: not a prediction row (field 'response'" in err
    _predictions(run, [DEEP, good])
    assert "predictions.jsonl:1: JSON nested too deeply" in _one_line_error(
        "score", str(run), "--no-progress"
    )
    assert "predictions.jsonl:1: corrupt row (JSON nested too deeply)" in _run(ds, run)
    _predictions(run, [good])
    res, _ = _invoke("score", str(run), "--no-progress")
    assert res.exit_code == 0
    _predictions(run, [good, {**good, "response": 12345}])
    err = _one_line_error("report", str(run), "--out", str(tmp_path / "rep"), "--no-progress")
    assert "predictions.jsonl:2: not a prediction row" in err


def test_results_json_nested_too_deeply(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=2, n_qa=0, n_reasonmap=0)
    results = tmp_path / "results.json"
    results.write_text(DEEP)
    err = _one_line_error(
        "score", str(tmp_path / "run"), "--results", str(results), "--dataset", str(ds)
    )
    assert f"{results}: JSON nested too deeply" in err


# --------------------------------------------------------------------------- limits
def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares ``width × height`` pixels (a decompression bomb's header)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b""))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize("size", [(60_000, 60_000), (21_000, 20_000)])
def test_image_bombs_are_refused_before_decoding(tmp_path, size):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    (ds / "maps/m1/image.png").write_bytes(_png_header(*size))
    rehash(ds)
    with pytest.raises(
        DatasetError, match=r"image\.png: image (too large|of 21000×20000 pixels is over)"
    ):
        build_requests(ds)


def test_render_scale_is_bounded(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    for scale in ("200", "0", "-1"):
        err = _one_line_error("render", str(ds), "--scale", scale, "--out", str(tmp_path / "m.png"))
        assert "--scale must be in (0, 4]" in err


def test_tables_must_be_regular_files_under_the_byte_limit(tmp_path, monkeypatch):
    from maptab.core.tables import example_tables

    edges, vertices = example_tables("metromap")
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    res, _ = _invoke("validate", str(fifo), str(vertices))
    assert res.exit_code == 1
    assert f"{fifo}: is a FIFO, device or socket, not a regular file" in res.stdout
    zero = tmp_path / "zero.csv"
    zero.symlink_to("/dev/zero")
    res, _ = _invoke("validate", str(zero), str(vertices))
    assert res.exit_code == 1 and "not a regular file" in res.stdout
    monkeypatch.setattr("maptab.core.tables.MAX_TABLE_BYTES", 100)
    res, _ = _invoke("validate", str(edges), str(vertices))
    assert res.exit_code == 1 and "over the limit of 100 bytes" in res.stdout


def test_label_length_is_capped_where_maps_enter_the_renderer(monkeypatch):
    from maptab.render import maps

    def no_layout(*_a, **_k):
        raise AssertionError("the label check must come before any layout or text work")

    monkeypatch.setattr(maps, "map_positions", no_layout)
    net = Network.from_lines({"L": ["A", "B" * 5_000_000, "C"]}, map_id="huge")
    with pytest.raises(
        limits.LimitError, match="station 'BBBB.*5,000,000 characters, over the limit of 200"
    ):
        maps.place_map(net)
    net = Network.from_lines({"X" * 201: ["A", "B"]}, map_id="line")
    with pytest.raises(limits.LimitError, match="line 'XXX"):
        maps.place_map(net)


def test_over_long_responses_are_format_errors(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=2, n_reasonmap=1)
    route = "<route_begin>Alpha-Beta-Gamma-Delta<route_end>"
    pad = " " * (limits.MAX_RESPONSE_CHARS - len(route))
    preds = [
        Prediction("rp-00000", "rp", pad + route),  # exactly at the cap: parsed
        Prediction("qa-00000", "qa", "x" * limits.MAX_RESPONSE_CHARS + "2"),  # one over
        Prediction("rm-00000/short", "reasonmap", "Route Name: Red\n" * 50_000),
    ]
    rows, summary = score_predictions(ds, preds)
    by_id = {r["id"]: r for r in rows}
    assert by_id["rp-00000"]["parsed"] and by_id["rp-00000"]["ema"] == 1.0
    assert not by_id["qa-00000"]["parsed"] and by_id["qa-00000"]["correct"] is False
    assert not by_id["rm-00000/short"]["parsed"]
    assert summary["counts"]["format_errors"] == 2 and summary["counts"]["scored"]["qa"] == 1


def test_render_route_parsing_is_linear_in_the_route_length(monkeypatch):
    from maptab.cli.render import parse_route

    n = 2000
    names = [f"S{i}" for i in range(n)]
    net = Network.from_lines({"L": names}, map_id="long")
    calls = []
    real = Network.resolve
    monkeypatch.setattr(Network, "resolve", lambda self, name: calls.append(1) or real(self, name))
    assert parse_route(net, "-".join(names)) == names
    assert len(calls) == n  # one lookup per station: no name here spans two pieces
    hyphen = Network.from_lines({"L": ["Porta Furba-Quadraro", "Mid", "A-B-C"]}, map_id="h")
    assert parse_route(hyphen, "Porta Furba-Quadraro → Mid - A-B-C") == [
        "Porta Furba_Quadraro",
        "Mid",
        "A_B_C",
    ]


def test_render_transfers_must_be_stations_of_the_route(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    base = ("render", str(ds), "--route", "Alpha-Beta-Eta", "--out", str(tmp_path / "r.png"))
    assert "--transfers: unknown station 'Zzz'" in _one_line_error(*base, "--transfers", "Zzz")
    assert "'Delta' is not a station of the route" in _one_line_error(*base, "--transfers", "Delta")


# --------------------------------------------------------------------------- smaller items
def test_a_misspelt_metromap_header_says_so(tmp_path):
    from maptab.core.tables import example_tables

    edges, vertices = example_tables("metromap")
    bad = tmp_path / "edges.csv"
    bad.write_text(
        edges.read_text(encoding="utf-8-sig").replace("Line", "Lnie", 1), encoding="utf-8"
    )
    res, _ = _invoke("validate", str(bad), str(vertices))
    assert res.exit_code == 1
    assert "Lnie: unknown column; did you mean 'Line'?" in res.stdout
    assert "travelmap Edge_tab" not in res.stdout


def test_messages_are_escaped_once():
    err = _one_line_error(
        "solve",
        "--edges",
        "e.csv",
        "--vertices",
        "v.csv",
        "--from",
        "A",
        "--to",
        "B",
        "--weights",
        "[1],0,0,1",
    )
    assert "'[1]'" in err and "\\[" not in err


def test_the_cli_catches_maptab_errors_only(tmp_path, monkeypatch):
    """A user error is one line; a plain ValueError is a bug and is not disguised as one."""
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)

    def bug(*_a, **_k):
        raise ValueError("a bug")

    monkeypatch.setattr("maptab.score.scorer.score_run", bug)
    res = CliRunner().invoke(app, ["score", str(tmp_path / "run"), "--dataset", str(ds)])
    assert isinstance(res.exception, ValueError) and str(res.exception) == "a bug"


def test_a_bad_prediction_file_in_load_predictions_names_the_line(tmp_path):
    _predictions(tmp_path, [{"id": "a", "kind": "rp", "response": "x"}, {"id": 5}])
    with pytest.raises(
        ScoreError, match=r"predictions\.jsonl:2: not a prediction row \(field 'id'"
    ):
        load_predictions(tmp_path)


def test_the_release_importer_shares_the_symlink_rule(tmp_path):
    from maptab.generate.release import export_maptab_release, import_maptab_release
    from test_release import build_small_dataset

    release = export_maptab_release(build_small_dataset(tmp_path / "ds"), tmp_path / "rel")
    query = next(release.rglob("*_set/*.json"))
    outside = tmp_path / "outside.json"
    shutil.move(query, outside)
    query.symlink_to(outside)
    with pytest.raises(DatasetError, match="leads outside the folder"):
        import_maptab_release(release, tmp_path / "back")
    query.unlink()
    query.write_text(DEEP)
    err = _one_line_error("build", "--from-maptab", str(release), "--out", str(tmp_path / "b"))
    assert f"{query}: JSON nested too deeply" in err


def test_a_resumed_run_with_a_hostile_run_json_is_one_line(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    run = tmp_path / "run"
    run.mkdir()
    for text, message in ((DEEP, "JSON nested too deeply"), ("[1]", "not a run record")):
        (run / "run.json").write_text(text)
        assert f"{run / 'run.json'}: {message}" in _run(ds, run)


def test_an_empty_reasonmap_folder_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    err = _one_line_error(
        "build", "--from-reasonmap", str(tmp_path / "empty"), "--out", str(tmp_path / "o")
    )
    assert "no ReasonMap metadata JSON files found" in err


# --------------------------------------------------------------------------- record checks
def _reference_ok(value, tp) -> bool:
    """A direct reading of the JSON-type rules, to compare the records' annotations against
    (a number is finite; ``float`` takes integers; ``int`` and ``float`` refuse booleans)."""
    import math
    import types
    import typing

    if tp is typing.Any:
        return True
    if tp is type(None):
        return value is None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_reference_ok(value, t) for t in typing.get_args(tp))
    if origin is list:
        return isinstance(value, list) and all(
            _reference_ok(v, typing.get_args(tp)[0]) for v in value
        )
    if origin is dict:
        k, t = typing.get_args(tp)
        return isinstance(value, dict) and all(
            _reference_ok(a, k) and _reference_ok(b, t) for a, b in value.items()
        )
    if tp is bool:
        return isinstance(value, bool)
    if tp in (int, float):
        kinds = (int,) if tp is int else (int, float)
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return isinstance(value, kinds) and not isinstance(value, bool)
    return isinstance(value, tp)


def _json_type(tp):
    """``tp`` as :func:`_reference_ok` reads it: ``Annotated`` layers dropped, ``None`` where
    a constraint beyond the JSON type applies (a length, a range, a literal)."""
    import sys
    import types
    import typing

    import msgspec

    finite = (-sys.float_info.max, sys.float_info.max)
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        inner, *metas = typing.get_args(tp)
        for m in metas:
            if isinstance(m, msgspec.Meta) and (
                any(getattr(m, a) is not None for a in ("min_length", "max_length", "gt", "lt"))
                or (m.ge, m.le) not in ((None, None), finite)
            ):
                return None
        return _json_type(inner)
    if origin is typing.Literal:
        return None
    args = typing.get_args(tp)
    if not args:
        return tp
    plain = tuple(_json_type(a) for a in args)
    if None in plain:
        return None
    if origin in (typing.Union, types.UnionType):
        return typing.Union[plain]  # noqa: UP007 (built from a tuple)
    return origin[plain]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(value=_JSON)
def test_field_annotations_follow_the_json_type_rules(value):
    import msgspec

    from maptab.core.schema import RMSegment

    checked = 0
    for cls in (RPQuery, QAQuery, ReasonMapQuestion, Prediction, MapEntry, RMSegment):
        for f in msgspec.structs.fields(cls):
            plain = _json_type(f.type)
            if plain is None:
                continue
            checked += 1
            try:
                msgspec.convert(value, f.type)
                accepted = True
            except msgspec.ValidationError:
                accepted = False
            assert accepted == _reference_ok(value, plain), (cls.__name__, f.name, value)
    assert checked > 40


def test_render_reads_a_dataset_through_the_same_rule(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    network = ds / "maps/m1/network.json"
    outside = tmp_path / "network.json"
    shutil.move(network, outside)
    network.symlink_to(outside)
    err = _one_line_error("render", str(ds), "--out", str(tmp_path / "m.png"))
    assert f"{network}: leads outside the folder" in err


def test_validate_lists_every_problem_of_a_dataset(built, tmp_path):
    ds = tmp_path / "ds"
    shutil.copytree(built, ds)
    _edit_rows(ds / "rp.jsonl", 2, routes=5)
    _edit_rows(ds / "rp.jsonl", 4, map_id="nowhere")
    _edit_rows(ds / "qa.jsonl", 0, tables={"vertices": [10_000]})
    (ds / "extra.txt").write_text("dropped in")
    map_id = list(Dataset(ds, verify=False).maps)[-1]  # qa.jsonl:1 is about the first map
    (ds / "maps" / map_id / "vertices.csv").unlink()
    res, _ = _invoke("validate", str(ds), "--sample", "5")
    assert res.exit_code == 1
    out = res.stdout
    for line in (
        f"{ds}/rp.jsonl: content differs from the manifest's SHA-256",
        f"{ds}/maps/{map_id}/vertices.csv: listed in the manifest but missing",
        f"{ds}/extra.txt: on disk but not listed in the manifest",
        f"{ds / 'rp.jsonl'}:3: field 'routes': expected list[str], found int",
        f"{ds / 'rp.jsonl'}:5: map 'nowhere' is not in the manifest",
        f"{ds / 'qa.jsonl'}:1: field 'tables.vertices': a row index is out of range",
    ):
        assert line in out.splitlines(), (line, out)
    assert f"{ds}/maps/{map_id}/vertices.csv: no such file" in out


def test_the_gold_sample_is_uniform_and_reproducible():
    import random

    from maptab.score.integrity import _Reservoir

    counts = [0] * 10
    for seed in range(3000):
        r = _Reservoir(3, random.Random(seed))
        for i in range(10):
            r.offer(i)
        assert len(set(r.items)) == 3
        for i in r.items:
            counts[i] += 1
    assert all(0.26 < c / 3000 < 0.34 for c in counts), counts  # each item with p = 0.3
    small = _Reservoir(5, random.Random(0))
    for i in range(3):
        small.offer(i)
    assert small.items == [0, 1, 2]


SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.mark.conformance
def test_real_datasets_validate_clean(tmp_path):
    """The imported MapTab sample and a ReasonMap build from the real topologies."""
    from maptab.generate.from_reasonmap import build_reasonmap_dataset
    from maptab.generate.release import import_maptab_release
    from maptab.score.integrity import validate_dataset

    if not (SHARED / "maptab-sample").is_dir() or not (SHARED / "reasonmap-stations").is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    import_maptab_release(SHARED / "maptab-sample", tmp_path / "imported")
    build_reasonmap_dataset(SHARED / "reasonmap-stations", tmp_path / "rm", per_map=2)
    for ds in (tmp_path / "imported", tmp_path / "rm"):
        report = validate_dataset(ds, sample=50)
        assert report.problems == [] and report.records > 0, report.problems[:5]


@pytest.mark.conformance
def test_every_real_map_image_is_within_the_limit():
    images = sorted((SHARED / "reasonmap-maps").rglob("*.png")) if SHARED.is_dir() else []
    if not images:
        pytest.skip(f"shared map images not found at {SHARED}")
    for path in images:
        with limits.open_image(path) as im:
            assert im.size[0] * im.size[1] <= limits.MAX_IMAGE_PIXELS
