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
from maptab.io.dataset import Dataset
from test_release import build_small_dataset


def test_parquet_files_carry_rows_and_embedded_images(tmp_path):
    ds = Dataset(build_small_dataset(tmp_path / "ds"))
    out = export_hf(ds.root, tmp_path / "hf")
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
    assert files == [
        f"{c}/{s}-00000-of-00001.parquet"
        for c in ("maps", "qa", "reasonmap", "rp")
        for s in ("test", "train")
    ]
    rp = pq.read_table(out / "rp/train-00000-of-00001.parquet")
    meta = json.loads(rp.schema.metadata[b"huggingface"])
    assert meta["info"]["features"]["image"] == {"_type": "Image"}
    rows = rp.to_pylist()
    expected = [q.to_dict() for q in ds.rp() if q.split == "train"]
    for row in expected:  # the shown-table orders become a struct with fixed keys
        row["tables"] = {k: row["tables"].get(k) for k in ("edges", "vertices", "mix")}
    assert [{k: v for k, v in r.items() if k != "image"} for r in rows] == expected
    png = ds.image_path("testland/alpha").read_bytes()
    assert all(r["image"]["bytes"] == png for r in rows)
    assert Image.open(io.BytesIO(rows[0]["image"]["bytes"])).size == (8, 6)
    # the map without an image has a null image; its image is stored once per row group
    test_rows = pq.read_table(out / "rp/test-00000-of-00001.parquet").to_pylist()
    assert test_rows and all(r["image"] is None for r in test_rows)
    rm = pq.read_table(out / "reasonmap/train-00000-of-00001.parquet").to_pylist()
    assert [r["id"] for r in rm] == [q.id for q in ds.reasonmap() if q.split == "train"]
    assert rm[0]["routes"] == next(q.routes for q in ds.reasonmap() if q.id == rm[0]["id"])
    maps = pq.read_table(out / "maps/train-00000-of-00001.parquet").to_pylist()
    assert maps[0]["map_id"] == "testland/alpha" and maps[0]["edges_csv"].startswith("Edge,Line")
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "config_name: rp" in card and "path: rp/test-*.parquet" in card


def test_images_are_stored_once_per_map(tmp_path):
    ds = Dataset(build_small_dataset(tmp_path / "ds"))
    noise = Image.frombytes("RGB", (128, 128), random.Random(0).randbytes(128 * 128 * 3))
    noise.save(ds.image_path("testland/alpha"))
    out = export_hf(rehash(ds.root), tmp_path / "hf")
    size = (out / "rp/train-00000-of-00001.parquet").stat().st_size
    image = ds.image_path("testland/alpha").stat().st_size
    n_rows = sum(q.split == "train" for q in ds.rp())
    assert image > 40_000 and n_rows > 10
    assert size < 1.5 * image  # one copy, not one per row


def test_export_is_deterministic(tmp_path):
    root = build_small_dataset(tmp_path / "ds")
    a, b = export_hf(root, tmp_path / "a"), export_hf(root, tmp_path / "b")
    for p in sorted(a.rglob("*")):
        if p.is_file():
            assert p.read_bytes() == (b / p.relative_to(a)).read_bytes(), p.name


def test_loads_with_datasets(tmp_path):
    datasets = pytest.importorskip("datasets")
    ds = Dataset(build_small_dataset(tmp_path / "ds"))
    out = export_hf(ds.root, tmp_path / "hf")
    cache = str(tmp_path / "cache")
    rp = datasets.load_dataset(str(out), "rp", cache_dir=cache)
    assert set(rp) == {"train", "test"}
    assert rp["train"].num_rows == sum(q.split == "train" for q in ds.rp())
    assert isinstance(rp["train"].features["image"], datasets.Image)
    assert rp["train"][0]["image"].size == (8, 6)
    files = {"test": str(out / "reasonmap/test-*.parquet")}
    rm = datasets.load_dataset("parquet", data_files=files, cache_dir=cache)["test"]
    assert rm[0]["id"] == next(q.id for q in ds.reasonmap() if q.split == "test")
