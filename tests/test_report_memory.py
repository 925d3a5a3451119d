"""The report's memory-saving representations read the same as what they replace:
score rows as :class:`~maptab.report.loader.ScoreRow`, the prediction index, route pictures
drawn map by map, and the two render steps done without full-size copies."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from _examples import examples
from maptab.report.loader import PredictionFile, ReportError, ScoreRow, _read_rows, load_runs
from test_report_fixture import make_runs

# --------------------------------------------------------------------------- score rows
_json_scalar = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1.0, 0.5])
    | st.text(max_size=8)
    | st.sampled_from(["0x1.0000000000000p+0", "rp", "metro-1"])  # a float's share key as text
)
_json = st.recursive(
    _json_scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_field = st.sampled_from(["ema", "gap", "route", "totals", "category", "id", "x", "é"])
_row = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=6), "kind": st.sampled_from(["rp", "qa"])},
    optional={"map_id": st.sampled_from(["m1", "m2"])},
).flatmap(
    lambda base: st.dictionaries(_field, _json, max_size=5).map(
        lambda extra: {**base, **{k: v for k, v in extra.items() if k not in base}}
    )
)


def _write(path: Path, objs: list[dict]) -> None:
    path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs), "utf-8")


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(_row, max_size=12))
def test_score_rows_read_as_the_json_objects(tmp_path_factory, objs):
    objs = [{"map_id": "m0", **o} for o in objs]
    path = tmp_path_factory.mktemp("rows") / "scores.jsonl"
    _write(path, objs)
    rows = _read_rows(path, ("id", "kind", "map_id"))
    assert len(rows) == len(objs)
    for row, obj in zip(rows, objs, strict=True):
        assert row == obj and obj == dict(row)
        assert list(row) == list(obj) and len(row) == len(obj)
        # same values to the bit (-0.0 stays -0.0; a text never becomes a float)
        assert json.dumps(dict(row.items())) == json.dumps(obj)
        for k, v in obj.items():
            assert k in row and row[k] == v and row.get(k) == v
            assert type(row[k]) is type(v)
        assert "absent" not in row and row.get("absent", 7) == 7
        with pytest.raises(KeyError):
            row["absent"]


def test_score_rows_share_field_index_and_small_values(tmp_path):
    objs = [
        {"id": f"s{i}", "kind": "rp", "map_id": "m1", "gap": g, "category": "time"}
        for i, g in enumerate([0.0, -0.0, 0.0, 0.25, 0.25])
    ]
    path = tmp_path / "scores.jsonl"
    _write(path, objs)
    rows = _read_rows(path, ("id", "kind", "map_id"))
    assert all(r._index is rows[0]._index for r in rows)
    assert rows[0]["category"] is rows[4]["category"]
    assert rows[0]["gap"] is rows[2]["gap"] and rows[3]["gap"] is rows[4]["gap"]
    assert math.copysign(1, rows[1]["gap"]) == -1 and math.copysign(1, rows[0]["gap"]) == 1
    assert rows[0] != rows[2] and rows[0] == ScoreRow(rows[0]._index, rows[0]._values)
    assert not hasattr(rows[0], "__setitem__") and "m1" in repr(rows[0])


@pytest.mark.parametrize(
    ("line", "message"),
    [("[1, 2]", "expected a JSON object"), ('{"id": "a", "kind": "rp"}', "'map_id' is missing")],
)
def test_bad_score_rows_name_file_and_line(tmp_path, line, message):
    path = tmp_path / "scores.jsonl"
    path.write_text('{"id": "a", "kind": "rp", "map_id": "m"}\n' + line + "\n")
    with pytest.raises(ReportError, match=rf"scores.jsonl:2: .*{message}"):
        _read_rows(path, ("id", "kind", "map_id"))


# --------------------------------------------------------------------------- predictions
def test_prediction_index_keeps_the_last_row_of_each_id(tmp_path):
    path = tmp_path / "predictions.jsonl"
    rows = [
        {"id": "a", "kind": "rp", "response": "first"},
        {"id": "b", "kind": "rp", "response": "only"},
        {"id": "a", "kind": "rp", "response": "second ✓"},
    ]
    path.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in rows[:2]) + "\n\n   \n"
        + json.dumps(rows[2], ensure_ascii=False) + "\n",
        "utf-8",
    )  # fmt: skip
    preds = PredictionFile(path)
    assert list(preds) == ["a", "b"] and len(preds) == 2
    assert preds["a"].response == "second ✓" and preds["b"].response == "only"
    assert [(k, p.response) for k, p in preds.items()] == [("a", "second ✓"), ("b", "only")]
    assert preds.get("c") is None
    text = path.read_text("utf-8")
    path.write_text(text.replace('"id": "b"', '"id": "c"'), "utf-8")
    with pytest.raises(ReportError, match=r"predictions.jsonl:2: changed while"):
        preds["b"]
    path.write_text(text.replace("first", "1st"), "utf-8")  # later lines moved
    with pytest.raises(ReportError, match=r"predictions.jsonl:2: "):
        preds["b"]


# --------------------------------------------------------------------------- route pictures
def test_pictures_are_drawn_map_by_map_and_listed_in_selection_order(tmp_path, monkeypatch):
    import maptab.render as render
    from maptab.report.overlays import render_overlays, select_samples

    _, run_dirs = make_runs(tmp_path)
    runs = load_runs(run_dirs)
    rendered: list[str] = []
    drawn: list[str] = []
    real_render, real_draw = render.render_map, render.draw_route

    def fake_render(net, **kw):
        rendered.append(net.map_id)
        if net.map_id == "travel-1":
            raise ValueError("no paint")
        return real_render(net, **kw)

    def fake_draw(net, base, *a, **kw):
        drawn.append(net.map_id)
        return real_draw(net, base, *a, **kw)

    monkeypatch.setattr(render, "render_map", fake_render)
    monkeypatch.setattr(render, "draw_route", fake_draw)
    result = render_overlays(runs, tmp_path / "out", per_group=2)

    jobs = [(i, row) for i, run in enumerate(runs) for row in select_samples(run, 2)]
    maps = [str(row["map_id"]) for _, row in jobs]
    assert {"metro-1", "travel-1"} <= set(maps)
    assert maps != sorted(maps, key=maps.index)  # the selection interleaves the maps
    # each map rendered once, its pictures drawn together
    assert rendered == list(dict.fromkeys(maps))
    assert drawn == sorted(drawn, key=drawn.index)
    # results in selection order: every metro job, none of the map that failed
    expected = [(i, str(row["id"])) for i, row in jobs if row["map_id"] == "metro-1"]
    assert list(result.images) == expected
    assert result.problems == ["map 'travel-1': cannot draw routes (no paint)"]
    for paths in result.images.values():
        assert all((tmp_path / "out" / p).is_file() for p in paths.values())


def test_a_picture_the_writer_thread_cannot_write_drops_its_map(tmp_path, monkeypatch):
    """A write that fails in the background thread is reported as drawing fails: the map is
    listed once as a problem and none of its pictures are listed; the other maps' are."""
    import maptab.render as render
    import maptab.report.overlays as overlays

    _, run_dirs = make_runs(tmp_path)
    runs = load_runs(run_dirs)
    of_map: dict[int, str] = {}
    real_draw, real_write = render.draw_route, overlays._write

    def fake_draw(net, base, *a, **kw):
        img = real_draw(net, base, *a, **kw)
        of_map[id(img)] = net.map_id  # RGB: scaled in place, so the same object is written
        return img

    def fake_write(img, path):
        if of_map[id(img)] == "travel-1":
            raise OSError("disk full")
        real_write(img, path)

    monkeypatch.setattr(render, "draw_route", fake_draw)
    monkeypatch.setattr(overlays, "_write", fake_write)
    result = overlays.render_overlays(runs, tmp_path / "out", per_group=2)
    jobs = [(i, row) for i, run in enumerate(runs) for row in overlays.select_samples(run, 2)]
    expected = [(i, str(row["id"])) for i, row in jobs if row["map_id"] == "metro-1"]
    assert expected and list(result.images) == expected
    assert result.problems == ["map 'travel-1': cannot draw routes (disk full)"]
    for paths in result.images.values():
        assert all((tmp_path / "out" / p).is_file() for p in paths.values())
    # anything else a write raises is not taken for a drawing problem
    monkeypatch.setattr(overlays, "_write", lambda img, path: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        overlays.render_overlays(runs, tmp_path / "out2", per_group=2)


def test_pictures_of_a_map_that_fails_later_are_not_left_on_disk(tmp_path, monkeypatch):
    """The map's first picture is written, a later one fails: the map is dropped, and the
    picture already written goes with it, so every picture left is one the report lists."""
    import maptab.render as render
    import maptab.report.overlays as overlays

    _, run_dirs = make_runs(tmp_path)
    runs = load_runs(run_dirs)
    of_map: dict[int, str] = {}
    real_draw, real_write = render.draw_route, overlays._write
    travel_writes: list[Path] = []

    def fake_draw(net, base, *a, **kw):
        img = real_draw(net, base, *a, **kw)
        of_map[id(img)] = net.map_id
        return img

    def fake_write(img, path):
        if of_map[id(img)] == "travel-1":
            travel_writes.append(path)
            if len(travel_writes) > 1:
                path.write_bytes(b"\x89PNG half")  # a write cut off part way
                raise OSError("disk full")
        real_write(img, path)

    monkeypatch.setattr(render, "draw_route", fake_draw)
    monkeypatch.setattr(overlays, "_write", fake_write)
    out = tmp_path / "out"
    result = overlays.render_overlays(runs, out, per_group=2)
    assert len(travel_writes) >= 2 and travel_writes[0].is_file() is False
    assert result.problems == ["map 'travel-1': cannot draw routes (disk full)"]
    listed = {out / p for paths in result.images.values() for p in paths.values()}
    assert listed and set((out / "images").iterdir()) == listed


# --------------------------------------------------------------------------- dataset records
@pytest.mark.slow
def test_a_report_reads_each_query_file_once_for_every_run(tmp_path, monkeypatch):
    """Three runs of one dataset: the pictures and the browser of the report get their
    records from one pass over each query file (before: one for the pictures and one per
    run for the browser), and the browser's records are those of separate reads."""
    from maptab.io.dataset import Dataset
    from maptab.report import write_report
    from maptab.report.html import listed_ids, sample_records, shown_rows
    from maptab.report.loader import QueryRecords
    from maptab.report.overlays import render_overlays, select_samples

    _, run_dirs = make_runs(tmp_path)
    passes: list[tuple[str, frozenset[str]]] = []
    real = Dataset.records_of

    def counted(self, kind, ids):
        passes.append((kind, frozenset(ids)))
        return real(self, kind, ids)

    import maptab.report.html as report_html
    import maptab.report.overlays as report_overlays

    listed: list[str] = []
    selections: list[str] = []
    real_shown, real_select = report_html.shown_rows, report_overlays.select_samples

    def shown_once(run, *a, **kw):
        listed.append(run.name)
        return real_shown(run, *a, **kw)

    def select_once(run, *a, **kw):
        selections.append(run.name)
        return real_select(run, *a, **kw)

    monkeypatch.setattr(Dataset, "records_of", counted)
    monkeypatch.setattr(report_html, "shown_rows", shown_once)
    monkeypatch.setattr(report_overlays, "select_samples", select_once)
    files = write_report(run_dirs, tmp_path / "report", samples_per_run=6)
    assert sorted(kind for kind, _ in passes) == ["qa", "reasonmap", "rp"]
    assert not files.problems  # every selected sample pictured: the listing made once a run
    assert len(listed) == len(selections) == len(run_dirs)
    monkeypatch.setattr(report_html, "shown_rows", real_shown)
    monkeypatch.setattr(report_overlays, "select_samples", real_select)
    runs = load_runs(run_dirs)
    for run in runs:
        pictured = {str(r["id"]) for r in select_samples(run, 3)}
        assert pictured | listed_ids(shown_rows(run, 6, pictured)) <= passes[0][1]
    # the records shared as the report shares them = each part reading its own
    shared = QueryRecords()
    for run in runs:
        pictured = {str(r["id"]) for r in select_samples(run, 3)}
        shared.expect(run, pictured | listed_ids(shown_rows(run, 6, pictured)))
    overlays = render_overlays(runs, tmp_path / "pictures", queries=shared)
    passes.clear()
    got = sample_records(runs, overlays, limit=6, queries=shared)
    assert not passes  # everything was read already
    assert got == sample_records(runs, overlays, limit=6)  # read apart
    assert passes


def test_query_records_asked_for_an_unannounced_id_read_it_in_one_more_pass(tmp_path, monkeypatch):
    from maptab.io.dataset import Dataset
    from maptab.report.loader import QueryRecords

    _, run_dirs = make_runs(tmp_path)
    runs = load_runs(run_dirs)
    ids = [str(r["id"]) for r in runs[0].scores if r["kind"] == "rp"]
    calls: list[str] = []
    real = Dataset.records_of

    def counted(self, kind, wanted):
        calls.append(kind)
        return real(self, kind, wanted)

    monkeypatch.setattr(Dataset, "records_of", counted)
    queries = QueryRecords()
    queries.expect(runs[1], ids[:2])
    first = queries.of(runs[0], ids[:1])
    assert list(first) == ids[:1] and len(calls) == 3  # one pass per query file present
    assert set(queries.of(runs[2], ids[:2])) == set(ids[:2]) and len(calls) == 3  # announced
    later = queries.of(runs[0], ids[:3])
    assert set(later) == set(ids[:3]) and len(calls) == 6  # one more pass, for ids[2]
    # the records themselves, field for field, as a plain read gives them
    assert later == {rec.id: rec for rec in real(Dataset(runs[0].dataset_dir), "rp", ids[:3])}


# --------------------------------------------------------------------------- render steps
_sizes = st.tuples(st.integers(1, 40), st.integers(1, 40))


@settings(max_examples=examples(60), deadline=None)
@given(_sizes, st.integers(0, 2**32 - 1), st.sampled_from(["RGB", "RGBA", "L", "P"]))
def test_fade_table_is_blending_with_white(size, seed, mode):
    from maptab.render.overlay import FADE, _fade_table

    rng = np.random.default_rng(seed)
    img = Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8), "RGB")
    img = img.convert(mode)
    rgb = img.convert("RGB")
    want = Image.blend(rgb, Image.new("RGB", img.size, "#FFFFFF"), FADE)
    assert rgb.point(_fade_table()).tobytes() == want.tobytes()


@settings(max_examples=examples(25), deadline=None)
@given(_sizes, st.integers(0, 2**32 - 1), st.integers(0, 2**16))
def test_texture_matches_the_broadcast_formula(size, colour_seed, seed):
    from maptab.render.draw import _texture

    w, h = size[0] * 9, size[1] * 9
    rng = np.random.default_rng(colour_seed)
    img = Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), "RGB")
    # the expression _texture computes, written as one broadcast (a reference form)
    ref = np.random.default_rng(seed)
    coarse = ref.normal(0.0, 1.0, (max(2, h // 160), max(2, w // 160))).astype("float32")
    low = Image.fromarray(((coarse * 7) + 128).clip(0, 255).astype("uint8"), "L")
    low = np.asarray(low.resize((w, h), Image.Resampling.BICUBIC), dtype="float32") - 128
    grain = ref.normal(0.0, 4.0, (h, w)).astype("float32")
    base = np.asarray(img, dtype="float32")
    out = base + (low + grain)[:, :, None] * np.array([1.0, 0.93, 0.75], dtype="float32")
    want = Image.fromarray(out.clip(0, 255).astype("uint8"), "RGB")
    assert _texture(img, seed).tobytes() == want.tobytes()
