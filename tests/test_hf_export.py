"""Hugging Face ``datasets`` folder export."""

from __future__ import annotations

import io
import json
import random

import pyarrow.parquet as pq
import pytest
from PIL import Image

from fakeserver import rehash
from maptab.generate.hf import export_hf
from maptab.io.dataset import Dataset, DatasetError
from test_release import build_small_dataset


def _rows(folder, split):
    """The rows of a config's split, shard after shard."""
    files = sorted(folder.glob(f"{split}-*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def test_parquet_files_carry_rows_and_the_maps_their_images(tmp_path):
    ds = Dataset(build_small_dataset(tmp_path / "ds"))
    out = export_hf(ds.root, tmp_path / "hf")
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
    assert files == [
        f"{c}/{s}-00000-of-00001.parquet"
        for c in ("maps", "qa", "reasonmap", "rp")
        for s in ("test", "train")
    ]
    rows = _rows(out / "rp", "train")
    expected = [q.to_dict() for q in ds.rp() if q.split == "train"]
    for row in expected:  # the shown-table orders become a struct with fixed keys
        row["tables"] = {k: row["tables"].get(k) for k in ("edges", "vertices", "mix")}
    assert rows == expected  # no image column: rows name their map
    rm = _rows(out / "reasonmap", "train")
    assert [r["id"] for r in rm] == [q.id for q in ds.reasonmap() if q.split == "train"]
    assert rm[0]["routes"] == next(q.routes for q in ds.reasonmap() if q.id == rm[0]["id"])
    maps_table = pq.read_table(out / "maps/train-00000-of-00001.parquet")
    meta = json.loads(maps_table.schema.metadata[b"huggingface"])
    assert meta["info"]["features"]["image"] == {"_type": "Image"}
    maps = maps_table.to_pylist()
    assert [m["map_id"] for m in maps] == ["testland/alpha"]
    assert maps[0]["edges_csv"].startswith("Edge,Line")
    png = ds.image_path("testland/alpha").read_bytes()
    assert maps[0]["image"] == {"bytes": png, "path": "testland/alpha.png"}
    assert Image.open(io.BytesIO(maps[0]["image"]["bytes"])).size == (8, 6)
    # the map without an image has a null image
    assert all(m["image"] is None for m in _rows(out / "maps", "test"))
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "config_name: maps" in card and "path: rp/test-*.parquet" in card


def test_every_sample_once_in_shards_one_row_group_per_map(tmp_path):
    ds = Dataset(build_small_dataset(tmp_path / "ds"))
    out = export_hf(ds.root, tmp_path / "hf", shard_bytes=1)  # a shard per map and split
    for name, records in (("rp", ds.rp()), ("qa", ds.qa()), ("reasonmap", ds.reasonmap())):
        for split in ("train", "test"):
            ids = [q.id for q in records if q.split == split]
            assert [r["id"] for r in _rows(out / name, split)] == ids, (name, split)
            shards = sorted((out / name).glob(f"{split}-*.parquet"))
            n = len(shards)
            assert [p.name for p in shards] == [
                f"{split}-{i:05d}-of-{n:05d}.parquet" for i in range(n)
            ]
            for shard in shards:
                file = pq.ParquetFile(shard)
                for g in range(file.num_row_groups):
                    group = file.read_row_group(g, columns=["map_id"]).column(0)
                    assert len(set(group.to_pylist())) == 1
    maps = _rows(out / "maps", "train") + _rows(out / "maps", "test")
    assert sorted(m["map_id"] for m in maps) == sorted(ds.maps)  # each map once
    assert not list(tmp_path.glob(".*"))  # no temporary files left


def test_images_are_stored_once(tmp_path):
    def exported_bytes(out):
        return sum(p.stat().st_size for p in out.rglob("*.parquet"))

    ds = Dataset(build_small_dataset(tmp_path / "ds"))
    small = ds.image_path("testland/alpha").stat().st_size
    base = exported_bytes(export_hf(ds.root, tmp_path / "a"))
    noise = Image.frombytes("RGB", (128, 128), random.Random(0).randbytes(128 * 128 * 3))
    noise.save(ds.image_path("testland/alpha"))
    out = export_hf(rehash(ds.root), tmp_path / "b")
    image = ds.image_path("testland/alpha").stat().st_size
    assert image > 40_000 and sum(q.split == "train" for q in ds.rp()) > 10
    # one more copy of the image in the whole export, not one per row or config
    assert exported_bytes(out) - base < 1.2 * (image - small)


def _corrupt_image(ds):
    ds.image_path("testland/alpha").write_bytes(b"\x89PNG\r\n\x1a\n not an image")
    return rehash(ds.root)


def test_a_failed_export_leaves_nothing(tmp_path, monkeypatch):
    ds = Dataset(build_small_dataset(tmp_path / "ds"))
    with pytest.raises(DatasetError, match="nothing exported"):
        export_hf(_corrupt_image(ds), tmp_path / "out" / "hf")
    assert not (tmp_path / "out").exists()  # refused before writing

    root = build_small_dataset(tmp_path / "ds2")
    work = tmp_path / "work"
    work.mkdir()
    calls = []

    def fail_third(self, table, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk full")
        return real(self, table, *args, **kwargs)

    real = pq.ParquetWriter.write_table
    monkeypatch.setattr(pq.ParquetWriter, "write_table", fail_third)
    with pytest.raises(OSError, match="disk full"):
        export_hf(root, work / "hf")
    assert calls == [1, 1, 1] and not list(work.iterdir())  # written, then removed


def test_export_over_an_earlier_one(tmp_path, monkeypatch):
    root = build_small_dataset(tmp_path / "ds")
    out = export_hf(root, tmp_path / "hf", shard_bytes=1)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    monkeypatch.setattr(pq.ParquetWriter, "write_table", _raise)
    with pytest.raises(OSError, match="disk full"):
        export_hf(root, out)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    monkeypatch.undo()
    export_hf(root, out)  # fewer shards: the earlier ones are gone
    fresh = export_hf(root, tmp_path / "fresh")
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file())
    assert not list(tmp_path.glob(".*"))


def _raise(*args, **kwargs):
    raise OSError("disk full")


def test_export_is_deterministic(tmp_path):
    root = build_small_dataset(tmp_path / "ds")
    a, b = export_hf(root, tmp_path / "a"), export_hf(root, tmp_path / "b")
    for p in sorted(a.rglob("*")):
        if p.is_file():
            assert p.read_bytes() == (b / p.relative_to(a)).read_bytes(), p.name


def test_loads_with_datasets_and_rows_join_their_image(tmp_path):
    datasets = pytest.importorskip("datasets")
    ds = Dataset(build_small_dataset(tmp_path / "ds"))
    out = export_hf(ds.root, tmp_path / "hf")
    cache = str(tmp_path / "cache")
    rp = datasets.load_dataset(str(out), "rp", cache_dir=cache)
    assert set(rp) == {"train", "test"}
    assert rp["train"].num_rows == sum(q.split == "train" for q in ds.rp())
    assert "image" not in rp["train"].features
    maps = datasets.load_dataset(str(out), "maps", split="train", cache_dir=cache)
    assert isinstance(maps.features["image"], datasets.Image)
    # the join of the card: a row's map image
    at = {m: i for i, m in enumerate(maps["map_id"])}
    for row in rp["train"]:
        image = maps[at[row["map_id"]]]["image"]
        assert image.size == (8, 6)
    files = {"test": str(out / "reasonmap/test-*.parquet")}
    rm = datasets.load_dataset("parquet", data_files=files, cache_dir=cache)["test"]
    assert rm[0]["id"] == next(q.id for q in ds.reasonmap() if q.split == "test")
