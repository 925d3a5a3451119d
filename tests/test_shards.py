"""The streaming Parquet shard writer the exports share (maptab.io.shards)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from maptab.io.shards import ShardWriter, publish

SCHEMA = pa.schema([("map_id", pa.string()), ("n", pa.int64())])


def _write(folder: Path, maps: dict[str, int], shard_rows: int | None = None, **kw) -> ShardWriter:
    """A closed writer of ``maps`` (map id -> rows), rows numbered in order."""
    w = ShardWriter(folder, "train", SCHEMA, shard_rows, **kw)
    n = 0
    for map_id, count in maps.items():
        for _ in range(count):
            w.add(map_id, {"map_id": map_id, "n": n})
            n += 1
    w.close()
    return w


def _layout(path: Path) -> list[list[str]]:
    """The map ids of each row group of a shard."""
    f = pq.ParquetFile(path)
    return [f.read_row_group(i).column("map_id").to_pylist() for i in range(f.num_row_groups)]


def test_shard_boundaries_and_one_row_group_per_map(tmp_path: Path) -> None:
    w = _write(tmp_path, {"a": 3, "b": 4, "c": 1}, shard_rows=5)
    assert w.rows == 8 and len(w.tmp_paths) == 2
    assert [p.name.startswith(".train-0000") for p in w.tmp_paths] == [True, True]
    publish([w])
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["train-00000-of-00002.parquet", "train-00001-of-00002.parquet"]
    assert [p.name for p in w.final_names()] == names
    # a map's rows are one row group, split only where a shard ends
    assert _layout(tmp_path / names[0]) == [["a"] * 3, ["b"] * 2]
    assert _layout(tmp_path / names[1]) == [["b"] * 2, ["c"]]
    rows = pa.concat_tables(pq.read_table(tmp_path / n) for n in names).column("n")
    assert rows.to_pylist() == list(range(8))


def test_shard_bytes_start_a_shard_between_maps(tmp_path: Path) -> None:
    w = _write(tmp_path, {"a": 2, "b": 2, "c": 2}, shard_bytes=1, dictionary_page_bytes=None)
    assert len(w.tmp_paths) == 3  # every map over the size: a shard each, never cut
    assert [_layout(p) for p in w.tmp_paths] == [[["a"] * 2], [["b"] * 2], [["c"] * 2]]


def test_abort_leaves_nothing(tmp_path: Path) -> None:
    w = ShardWriter(tmp_path, "test", SCHEMA, 2)
    for i in range(5):  # two shards written, one open, a row held
        w.add("a" if i < 3 else "b", {"map_id": "a", "n": i})
    assert w.tmp_paths and all(p.exists() for p in w.tmp_paths)
    w.abort()
    assert list(tmp_path.iterdir()) == []


def test_publish_replaces_an_older_export(tmp_path: Path) -> None:
    publish([_write(tmp_path, {"a": 6}, shard_rows=2)])
    (tmp_path / "notes.txt").write_text("kept")
    old_maps = tmp_path / "maps"
    old_maps.mkdir()
    (old_maps / "old.json").write_text("{}")
    new_maps = tmp_path / ".maps.tmp"
    new_maps.mkdir()
    (new_maps / "new.json").write_text("{}")
    other = tmp_path / "other"
    other.mkdir()
    (other / "x-00000-of-00001.parquet").write_bytes(b"old")
    w = _write(tmp_path, {"a": 6}, shard_rows=10)
    publish([w], extra={new_maps: old_maps}, clean=[other])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "maps",
        "notes.txt",
        "other",
        "train-00000-of-00001.parquet",
    ]
    assert [p.name for p in old_maps.iterdir()] == ["new.json"]
    assert list(other.iterdir()) == []
    assert pq.read_table(tmp_path / "train-00000-of-00001.parquet").num_rows == 6


def test_shard_rows_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 1 row"):
        ShardWriter(tmp_path, "train", SCHEMA, 0)
