"""Chat requests from dataset samples: parts, tables, images."""

from __future__ import annotations

import base64
import csv
import io
import json
import os

import pytest
from PIL import Image

from fakeserver import rehash, write_dataset
from maptab.io.dataset import Dataset, DatasetError
from maptab.run.requests import ImageSpec, RequestBuilder, build_requests, iter_samples


@pytest.fixture()
def ds(tmp_path):
    return write_dataset(tmp_path / "ds", n_rp=8, n_qa=2, n_reasonmap=2, image=(800, 600))


def _parts(req):
    (msg,) = req.messages
    assert msg["role"] == "user"
    return msg["content"]


def _image(part) -> Image.Image:
    url = part["image_url"]["url"]
    head, data = url.split(",", 1)
    assert head in ("data:image/png;base64", "data:image/jpeg;base64")
    return Image.open(io.BytesIO(base64.b64decode(data)))


def test_parts_follow_the_category_inputs(ds):
    reqs = {r.id: r for r in build_requests(ds)}
    assert len(reqs) == 8 + 2 + 2 * 2
    kinds = {rid: [p["type"] for p in _parts(r)] for rid, r in reqs.items()}
    assert kinds["rp-00000"] == ["text", "image_url"]  # map_only
    assert kinds["rp-00001"] == ["text", "text"]  # edge_only: no image
    assert kinds["rp-00002"] == ["text", "text", "text", "image_url"]  # time: E + V + map
    assert kinds["rp-00003"] == ["text", "text", "image_url"]  # map_mix
    titles = [p["text"].split("\n", 1)[0] for p in _parts(reqs["rp-00002"])[1:3]]
    assert titles == ["Edge_tab (CSV):", "Vertex_tab (CSV):"]
    assert _parts(reqs["rp-00003"])[1]["text"].startswith("Mix_tab (CSV):\n")
    assert _parts(reqs["rp-00000"])[0]["text"].startswith("RP question 0")
    assert reqs["rp-00002"].meta["category"] == "time"
    assert reqs["qa-00001"].meta["type"] == 7


def test_tables_rows_in_the_sample_order_and_column_selection(ds):
    rows = list(csv.reader((ds / "maps/m1/edges.csv").open(encoding="utf-8-sig")))
    header, body = rows[0], rows[1:]
    reqs = {r.id: r for r in build_requests(ds)}
    full = _parts(reqs["rp-00002"])[1]["text"].split("\n", 1)[1]
    got = list(csv.reader(io.StringIO(full)))
    assert got[0] == header
    assert got[1:] == list(reversed(body))  # tables.edges is the reversed index list
    edge_only = _parts(reqs["rp-00001"])[1]["text"].split("\n")[1:]
    assert edge_only == ["Edge"] + [r[0] for r in reversed(body)]


def test_json_tables_have_numbers_and_line_lists(ds):
    req = {r.id: r for r in build_requests(ds, table_format="json")}["rp-00002"]
    text = _parts(req)[2]["text"]
    assert text.startswith("Vertex_tab (JSON):\n")
    rows = json.loads(text.split("\n", 1)[1])
    beta = next(r for r in rows if r["Vertex"] == "Beta")
    assert beta["Line"] == ["Red", "Blue"]
    assert beta["Transfer Time"] == 5.0 and isinstance(beta["Time"], float)


def test_qa_drop_line_column(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=0, n_qa=2, n_reasonmap=0)
    rows = [json.loads(x) for x in (ds / "qa.jsonl").read_text().splitlines()]
    rows[1]["drop_line_column"] = True
    (ds / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    req = build_requests(rehash(ds))[1]
    header = _parts(req)[1]["text"].split("\n")[1]
    assert header == "Vertex,Time,Price,Comfort Level,Reliability,Transfer Time"


def test_reasonmap_rows_expand_to_short_and_long(ds):
    reqs = [r for r in build_requests(ds) if r.kind == "reasonmap"]
    assert [r.id for r in reqs] == [
        "rm-00000/short",
        "rm-00000/long",
        "rm-00001/short",
        "rm-00001/long",
    ]
    assert _parts(reqs[0])[0]["text"] == "short question 0"
    assert _parts(reqs[1])[0]["text"] == "long question 0"
    assert reqs[1].meta["variant"] == "long"


def test_filters(ds):
    ids = lambda **kw: [s.id for s in iter_samples(ds, **kw)]  # noqa: E731
    assert ids(categories=["time"]) == ["rp-00002", "rp-00006"]
    assert ids(categories=["qa:7", "reasonmap"])[0] == "qa-00001"
    assert len(ids(categories=["rp"])) == 8
    assert ids(split="train", categories=["rp"]) == [f"rp-{i:05d}" for i in range(1, 8, 2)]
    assert len(ids(limit=3)) == 3
    with pytest.raises(DatasetError, match="unknown category 'fastest'"):
        ids(categories=["fastest"])


def test_image_fit_keeps_aspect_within_budget(ds):
    req = build_requests(ds, limit=1, image_budget=120_000)[0]
    im = _image(_parts(req)[-1])
    w, h = im.size
    assert w * h <= 120_000 and w * h > 110_000
    assert abs(w / h - 800 / 600) < 0.02
    small = _image(_parts(build_requests(ds, limit=1, image_budget=10**7)[0])[-1])
    assert small.size == (800, 600)  # never upscaled


def test_image_stretch_and_jpeg(ds):
    req = build_requests(
        ds, limit=1, image_mode="stretch", image_size=(224, 224), image_format="jpeg"
    )[0]
    im = _image(_parts(req)[-1])
    assert im.size == (224, 224) and im.format == "JPEG"
    with pytest.raises(ValueError, match="needs a size"):
        ImageSpec(mode="stretch")


def test_image_encoded_once_per_map_and_cached_on_disk(ds, tmp_path):
    cache = tmp_path / "cache"
    b1 = RequestBuilder(ds, cache_dir=cache)
    reqs = [b1.request(s) for s in iter_samples(ds)]
    urls = {p["image_url"]["url"] for r in reqs for p in _parts(r) if p["type"] == "image_url"}
    assert len(urls) == 1 and b1.encoder.encoded == 1
    assert len(list(cache.iterdir())) == 1
    b2 = RequestBuilder(ds, cache_dir=cache)
    again = [b2.request(s) for s in iter_samples(ds, limit=1)]
    assert b2.encoder.encoded == 0  # read back from the disk cache
    assert _parts(again[0])[-1]["image_url"]["url"] in urls


def test_missing_image_and_bad_rows_are_one_line_errors(tmp_path):
    ds = write_dataset(tmp_path / "ds", image=None)
    with pytest.raises(DatasetError, match=r"image\.png: map image missing"):
        build_requests(ds)
    assert len(build_requests(ds, images=False)) == 8
    good = (ds / "rp.jsonl").read_text().splitlines()[0]
    (ds / "rp.jsonl").write_text(good + '\n{"id": 3}\n')
    with pytest.raises(DatasetError, match=r"rp\.jsonl:2: field 'id': expected str, found int"):
        list(iter_samples(rehash(ds)))
    (ds / "rp.jsonl").write_text('{"id": "x", "map_id": "m1", "category": "time"}\n')
    with pytest.raises(DatasetError, match=r"rp\.jsonl:1: field 'scenario' is missing"):
        list(iter_samples(rehash(ds)))
    (ds / "rp.jsonl").unlink()
    row = json.loads((ds / "qa.jsonl").read_text().splitlines()[0])
    (ds / "qa.jsonl").write_text(json.dumps({**row, "map_id": "../../etc"}) + "\n")
    rehash(ds)
    with pytest.raises(DatasetError, match="unknown map"):
        build_requests(ds, categories=["qa"], images=False)


def test_map_edge_and_qa_map_mix_without_line_and_reasonmap_image(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=1, n_reasonmap=1)
    rp = json.loads((ds / "rp.jsonl").read_text())
    (ds / "rp.jsonl").write_text(json.dumps({**rp, "category": "map_edge"}) + "\n")
    mix = list(csv.reader((ds / "maps/m1/mix.csv").open(encoding="utf-8-sig")))
    order = [3, 0, 2]  # a shuffled subset, as QA type 22 shows it
    qa = json.loads((ds / "qa.jsonl").read_text())
    qa.update(inputs=["map", "mix"], tables={"mix": order}, drop_line_column=True)
    (ds / "qa.jsonl").write_text(json.dumps(qa) + "\n")
    edges = list(csv.reader((ds / "maps/m1/edges.csv").open(encoding="utf-8-sig")))[1:]
    reqs = {r.id: _parts(r) for r in build_requests(rehash(ds))}

    text, table, image = reqs["rp-00000"]
    assert text == {"type": "text", "text": rp["question"]}
    assert table["text"].split("\n") == ["Edge_tab (CSV):", "Edge"] + [
        edges[i][0] for i in rp["tables"]["edges"]
    ]
    assert image["type"] == "image_url"

    text, table, image = reqs["qa-00000"]
    keep = [i for i, c in enumerate(mix[0]) if c != "Line"]
    lines = ["Mix_tab (CSV):"] + [
        ",".join(r[i] for i in keep) for r in [mix[0]] + [mix[1 + j] for j in order]
    ]
    assert table["text"].split("\n") == lines
    assert image["type"] == "image_url"

    for variant in ("short", "long"):
        text, image = reqs[f"rm-00000/{variant}"]
        assert text["text"] == f"{variant} question 0" and image["type"] == "image_url"


def test_select_then_load_gives_the_samples_of_one_pass(ds):
    """The runner's two steps (rows checked once, selected rows read back by offset) give the
    samples ``Dataset.samples`` gives, with every filter, variants included."""
    data = Dataset(ds)
    for kw in ({}, {"split": "train"}, {"categories": ["time", "reasonmap"]}, {"limit": 5}):
        refs = list(data.select(**kw))
        want = [(s.id, s.kind, s.variant, s.row, s.record) for s in data.samples(**kw)]
        got = [(s.id, s.kind, s.variant, s.row, s.record) for s in data.load(refs)]
        assert got == want and [r.id for r in refs] == [w[0] for w in want]
    # a subset, as a resumed run asks for it: only those rows, in order
    refs = list(data.select())
    some = refs[1::3]
    assert [s.id for s in data.load(some)] == [r.id for r in some]


def test_select_reads_each_row_once_and_load_only_the_selected_ones(ds, monkeypatch):
    import maptab.io.dataset

    selected, loaded_rows = [], []
    reader, row = maptab.io.dataset.row_reader, maptab.io.dataset._row

    def counted_reader(kind):
        inner = reader(kind)

        def counted(line, where):
            selected.append(where)
            return inner(line, where)

        return counted

    def counted_row(line, path, n):
        loaded_rows.append(n)
        return row(line, path, n)

    monkeypatch.setattr(maptab.io.dataset, "row_reader", counted_reader)
    monkeypatch.setattr(maptab.io.dataset, "_row", counted_row)
    data = Dataset(ds)
    refs = list(data.select())
    assert len(selected) == 8 + 2 + 2 and not loaded_rows  # rows, not samples (reasonmap: 2)
    loaded = list(data.load(refs))
    assert len(loaded) == 8 + 2 + 2 * 2 and len(loaded_rows) == 12  # a row once for its variants
    some = refs[1::3]
    assert [s.id for s in data.load(some)] == [r.id for r in some]
    assert len(loaded_rows) == 12 + len({(r.kind, r.offset) for r in some})
    assert [s.id for s in data.samples()] == [s.id for s in loaded] and len(selected) == 12


def test_other_split_rows_are_skipped_unchecked_and_a_changed_file_is_an_error(ds):
    lines = (ds / "rp.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines]
    bad = next(i for i, r in enumerate(rows) if r["split"] == "test")
    rows[bad]["category"] = 7  # malformed, in the test split
    (ds / "rp.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = Dataset(rehash(ds))
    train = [r.id for r in data.select(split="train", categories=["rp"])]
    assert train == [f"rp-{i:05d}" for i in range(1, 8, 2)]
    with pytest.raises(DatasetError, match=rf"rp\.jsonl:{bad + 1}: field 'category'"):
        list(data.select(split="test"))
    # the file is rewritten between choosing the samples and reading them back
    data = Dataset(ds, verify=False)
    refs = list(data.select(split="train", categories=["rp"]))
    rows.insert(0, rows.pop())
    text = "".join(json.dumps(r) + "\n" for r in rows)
    (ds / "rp.jsonl").write_text(text)
    with pytest.raises(DatasetError, match=r"rp\.jsonl: changed since its samples were chosen"):
        list(data.load(refs))
    # the same offsets, size and modification time, another row there
    refs = list(Dataset(ds, verify=False).select(split="train", categories=["rp"]))
    st = (ds / "rp.jsonl").stat()
    text = (ds / "rp.jsonl").read_text()
    first = refs[0].id
    (ds / "rp.jsonl").write_text(text.replace(f'"{first}"', '"rp-99999"'))
    os.utime(ds / "rp.jsonl", ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(DatasetError, match=f"holds 'rp-99999', not '{first}'"):
        list(Dataset(ds, verify=False).load(refs))


def test_a_kind_registered_in_place_of_a_built_in_keeps_its_own_checks(ds):
    from dataclasses import replace

    from maptab.core.schema import RecordError
    from maptab.tasks import get, register

    def strict(row):
        raise RecordError("refused by the replacement")

    rp = get("rp")
    register(replace(rp, samples=replace(rp.samples, decode=strict)))
    try:
        with pytest.raises(DatasetError, match="refused by the replacement"):
            list(Dataset(ds).select())
    finally:
        register(rp)
