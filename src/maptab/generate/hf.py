"""Export a maptab dataset as a Hugging Face ``datasets`` folder (issue 3.7).

Layout::

    OUT/README.md                                  dataset card; its YAML lists the configs
    OUT/<config>/<split>-00000-of-00001.parquet    config in rp, qa, reasonmap, maps

``rp``/``qa``/``reasonmap`` hold one row per query with the JSONL fields of the dataset and
an ``image`` column (the map image embedded, ``datasets.Image`` feature); ``maps`` holds one
row per map (image, tables as CSV text, ``network.json`` text). Rows are written one Parquet
row group per map with the image column dictionary-encoded, so a map's image is stored once
per file however many queries use it. Configs without rows are left out.

The files are written with pyarrow alone; with ``datasets`` installed, load them with
``datasets.load_dataset(OUT, "rp")`` or ``load_dataset("parquet", data_files=…)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from maptab.dataset import TABLE_FILES, Dataset

CONFIGS = ("rp", "qa", "reasonmap")
IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
_HF_METADATA = {
    b"huggingface": json.dumps({"info": {"features": {"image": {"_type": "Image"}}}}).encode()
}
_MAX_DICTIONARY_PAGE = 1 << 30  # room for one map image per row group


def _image(
    ds: Dataset, map_id: str, cache: dict[str, dict[str, Any] | None]
) -> dict[str, Any] | None:
    if map_id not in cache:
        path = ds.image_path(map_id)
        cache[map_id] = (
            None if path is None else {"bytes": path.read_bytes(), "path": f"{map_id}.png"}
        )
    return cache[map_id]


def _map_rows(ds: Dataset, cache: dict[str, dict[str, Any] | None]) -> Iterator[dict[str, Any]]:
    for map_id, entry in ds.maps.items():
        row = entry.to_dict()
        row["map_id"] = row.pop("id")
        for kind in TABLE_FILES:
            row[f"{kind}_csv"] = ds.table_path(map_id, kind).read_text(encoding="utf-8-sig")
        row["network"] = ds.map_file(map_id, "network.json").read_text(encoding="utf-8")
        row["image"] = _image(ds, map_id, cache)
        yield row


def _query_rows(
    ds: Dataset, kind: str, cache: dict[str, dict[str, Any] | None]
) -> Iterator[dict[str, Any]]:
    for q in getattr(ds, kind)():
        row = q.to_dict()
        if "tables" in row:  # fixed keys, so every row has the same struct type
            row["tables"] = {k: row["tables"].get(k) for k in TABLE_FILES}
        if "params" in row:  # free-form per QA type: stored as JSON text
            row["params"] = json.dumps(row["params"], ensure_ascii=False, sort_keys=True)
        row["image"] = _image(ds, q.map_id, cache)
        yield row


def _write(rows: list[dict[str, Any]], path: Path) -> None:
    """One Parquet file, one row group per map, image bytes dictionary-encoded."""
    table = pa.Table.from_pylist(rows)
    image_index = table.schema.get_field_index("image")
    schema = table.schema.set(image_index, pa.field("image", IMAGE_TYPE)).with_metadata(
        _HF_METADATA
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(
        path,
        schema,
        use_dictionary=["image.bytes", "image.path"],
        dictionary_pagesize_limit=_MAX_DICTIONARY_PAGE,
        compression="zstd",
    ) as writer:
        start = 0
        for _, group in groupby(rows, key=lambda r: r["map_id"]):
            size = len(list(group))
            writer.write_table(table.slice(start, size).cast(schema))
            start += size


def _card(configs: dict[str, list[str]], manifest: dict[str, Any]) -> str:
    lines = ["---", "configs:"]
    for name, splits in configs.items():
        lines += [f"- config_name: {name}", "  data_files:"]
        for split in splits:
            lines += [f"  - split: {split}", f"    path: {name}/{split}-*.parquet"]
    lines += [
        "---",
        "",
        "# maptab dataset",
        "",
        f"Exported by maptab {manifest.get('generator_version', '')} "
        f"(schema {manifest.get('schema_version')}, seed {manifest.get('seed')}).",
        "",
        "Configs: " + ", ".join(f"`{c}`" for c in configs) + ". Load one with "
        '`datasets.load_dataset("<this folder>", "<config>")`.',
        "",
    ]
    return "\n".join(lines)


def export_hf(dataset_dir: str | Path, out_dir: str | Path) -> Path:
    """Write the dataset at ``dataset_dir`` as a Hugging Face folder at ``out_dir``; return it.

    One Parquet file per config and split (``train``/``test`` from each row's ``split``);
    field names and values are those of the dataset's JSONL files and manifest, plus the
    embedded ``image``. Deterministic: the same dataset gives byte-identical files.
    """
    ds = Dataset(dataset_dir)
    out = Path(out_dir)
    cache: dict[str, dict[str, Any] | None] = {}
    sources = {kind: list(_query_rows(ds, kind, cache)) for kind in CONFIGS}
    sources["maps"] = list(_map_rows(ds, cache))
    written: dict[str, list[str]] = {}
    for name, rows in sources.items():
        for split in sorted({r["split"] for r in rows}):
            part = [r for r in rows if r["split"] == split]
            _write(part, out / name / f"{split}-00000-of-00001.parquet")
            written.setdefault(name, []).append(split)
    (out / "README.md").write_text(_card(written, ds.manifest), encoding="utf-8", newline="\n")
    return out
