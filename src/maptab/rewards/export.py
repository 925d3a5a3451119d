"""Export a dataset for RL trainers: TRL and verl Parquet splits (``docs/guides/train-with-rewards.md``).

``maptab export DATASET --format trl|verl --out DIR`` writes ``DIR/train.parquet`` and
``DIR/test.parquet`` (from each sample's ``split``; a split without samples is not written),
one row per request ``maptab run`` would send (a ReasonMap pair gives a ``short`` and a
``long`` row). Every row carries the sample's reward reference
(:func:`maptab.rewards.encode_reference`: the sample and its map's tables), so the reward
needs no dataset folder at training time.

Prompt text: the question followed by the tables shown, each ``<Table_name> (CSV):`` and
its rows in the sample's order, exactly the text parts ``maptab run`` sends
(:class:`maptab.run.requests.RequestBuilder`), joined by a blank line into one text.

* **trl** — ``prompt`` (conversational: one user message), ``images`` (with images),
  ``ground_truth`` (the reference; :func:`maptab.rewards.trl.maptab_reward` reads it), and
  ``id``, ``kind``, ``map_id``, ``category``. With images, the message content is a list of
  parts — ``{"type": "image"}`` for the map when the sample shows it, then the text — and
  ``images`` lists the map image (empty when the sample shows no map); without images the
  content is the text.
* **verl** — ``data_source`` (``maptab/<kind>``: ``maptab/rp``, ``maptab/qa``, …),
  ``prompt`` (one user message whose content is the text, preceded by ``<image>`` when the
  sample shows the map), ``images`` (with images), ``ability`` (the kind's
  ``RewardSpec.ability``), ``reward_model``
  (``{"style": "rule", "ground_truth": reference}``) and ``extra_info`` (``split``,
  ``index``, ``id``, ``kind``, ``map_id``, ``category``).

Before anything is written the dataset is checked (:func:`maptab.score.integrity.export_problem`:
ids, finite numbers, weights, map images) and every image the rows need is read; the split
files are written aside and renamed into place together, so a refused or failed export
leaves no file.

Images are the dataset's map PNGs as they are (``{"bytes", "path"}``, the ``datasets.Image``
layout), stored once per map and file (one row group per map, bytes dictionary-encoded).
``images=False`` writes no image column and leaves out the samples that show nothing but the
map (text-only models cannot answer them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from maptab.io.dataset import Dataset, DatasetError
from maptab.rewards.reference import encode_reference, reward_spec
from maptab.run.requests import RequestBuilder, iter_samples
from maptab.score.integrity import export_problem
from maptab.tasks.base import get as get_kind

__all__ = ["RL_FORMATS", "RLRow", "data_source", "export_rl", "rl_rows"]

RL_FORMATS = ("trl", "verl")
DATA_SOURCE_PREFIX = "maptab/"
_IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
_MAX_DICTIONARY_PAGE = 1 << 30


@dataclass(slots=True)
class RLRow:
    """What both formats need of one request: text, whether the map is shown, reference."""

    id: str
    kind: str
    split: str
    map_id: str
    category: str
    text: str
    shows_map: bool
    reference: str


def data_source(kind: str) -> str:
    """verl's ``data_source`` of a kind's rows: ``maptab/<kind>``."""
    return f"{DATA_SOURCE_PREFIX}{kind}"


def rl_rows(
    dataset_dir: str | Path,
    *,
    images: bool = True,
    table_format: Literal["csv", "json"] = "csv",
    verify: bool = True,
) -> Iterator[RLRow]:
    """One :class:`RLRow` per request of the dataset, in ``maptab run`` order."""
    ds = Dataset(dataset_dir, verify=verify)
    builder = RequestBuilder(dataset_dir, table_format=table_format, images=False, verify=verify)
    for sample in iter_samples(dataset_dir, verify=verify):
        task = get_kind(sample.kind)
        if task.reward is None:  # a kind without a reward has nothing to train on
            continue
        inputs = tuple(task.prompt(sample.record, sample.variant).inputs)
        if not images and all(i == "map" for i in inputs):
            continue
        request = builder.request(sample)
        parts = request.messages[0]["content"]
        text = "\n\n".join(p["text"] for p in parts if p.get("type") == "text")
        network = ds.network(sample.map_id) if task.reward.with_map else None
        reference = encode_reference(sample.kind, sample.record, network, mode=sample.variant)
        rec = sample.record
        category = task.category_of(rec, sample.variant)
        yield RLRow(
            sample.id,
            sample.kind,
            rec.split,
            sample.map_id,
            category,
            text,
            "map" in inputs,
            reference,
        )


def _trl_row(row: RLRow, image: dict[str, Any] | None, images: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if images:
        content: Any = [{"type": "text", "text": row.text}]
        if image is not None:
            content.insert(0, {"type": "image", "text": None})
        out["prompt"] = [{"role": "user", "content": content}]
        out["images"] = [image] if image is not None else []
    else:
        out["prompt"] = [{"role": "user", "content": row.text}]
    out.update(
        ground_truth=row.reference,
        id=row.id,
        kind=row.kind,
        map_id=row.map_id,
        category=row.category,
    )
    return out


def _verl_row(row: RLRow, image: dict[str, Any] | None, images: bool, index: int) -> dict[str, Any]:
    text = f"<image>{row.text}" if images and image is not None else row.text
    out: dict[str, Any] = {
        "data_source": data_source(row.kind),
        "prompt": [{"role": "user", "content": text}],
    }
    if images:
        out["images"] = [image] if image is not None else []
    out.update(
        ability=reward_spec(row.kind)[1].ability or row.kind,
        reward_model={"style": "rule", "ground_truth": row.reference},
        extra_info={
            "split": row.split,
            "index": index,
            "id": row.id,
            "kind": row.kind,
            "map_id": row.map_id,
            "category": row.category,
        },
    )
    return out


def _schema(fmt: str, images: bool) -> pa.Schema:
    message_content: pa.DataType = pa.string()
    if fmt == "trl" and images:
        message_content = pa.list_(pa.struct([("type", pa.string()), ("text", pa.string())]))
    prompt = pa.list_(pa.struct([("role", pa.string()), ("content", message_content)]))
    fields: list[pa.Field] = [pa.field("prompt", prompt)]
    if fmt == "verl":
        fields.insert(0, pa.field("data_source", pa.string()))
    if images:
        fields.append(pa.field("images", pa.list_(_IMAGE)))
    if fmt == "trl":
        fields += [pa.field(n, pa.string()) for n in ("ground_truth", "id", "kind", "map_id")]
        fields.append(pa.field("category", pa.string()))
    else:
        extra = pa.struct(
            [("split", pa.string()), ("index", pa.int64())]
            + [(n, pa.string()) for n in ("id", "kind", "map_id", "category")]
        )
        fields += [
            pa.field("ability", pa.string()),
            pa.field(
                "reward_model",
                pa.struct([("style", pa.string()), ("ground_truth", pa.string())]),
            ),
            pa.field("extra_info", extra),
        ]
    meta = {}
    if images:  # datasets reads the image column as a list of Image features
        features = {"images": {"_type": "Sequence", "feature": {"_type": "Image"}}}
        meta = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    return pa.schema(fields, metadata=meta)


def export_rl(
    dataset_dir: str | Path,
    out_dir: str | Path,
    fmt: str,
    *,
    images: bool = True,
    table_format: Literal["csv", "json"] = "csv",
    verify: bool = True,
) -> Path:
    """Write the dataset's train/test splits for ``fmt`` (``trl`` or ``verl``) into
    ``out_dir`` (module docstring); returns ``out_dir``. Deterministic."""
    if fmt not in RL_FORMATS:
        raise DatasetError(f"unknown RL format {fmt!r}; choose one of {', '.join(RL_FORMATS)}")
    ds = Dataset(dataset_dir, verify=verify)
    problem = export_problem(ds, images=images)
    if problem:
        raise DatasetError(f"{problem}; nothing exported")
    by_split: dict[str, list[RLRow]] = {}
    for row in rl_rows(dataset_dir, images=images, table_format=table_format, verify=verify):
        by_split.setdefault(row.split, []).append(row)
    pictures: dict[str, dict[str, Any]] = {}
    for rows in by_split.values() if images else ():
        for r in rows:
            if r.shows_map and r.map_id not in pictures:
                pictures[r.map_id] = _picture(ds, r.map_id)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    schema = _schema(fmt, images)
    written: list[tuple[Path, Path]] = []
    try:
        for split, rows in sorted(by_split.items()):
            rows.sort(key=lambda r: r.map_id)  # stable: run order within a map
            path = out / f"{split}.parquet"
            tmp = path.with_name(f".{path.name}.tmp")
            written.append((tmp, path))
            _write_split(tmp, schema, fmt, rows, pictures, images)
    except BaseException:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
        raise
    for tmp, path in written:
        tmp.replace(path)
    return out


def _picture(ds: Dataset, map_id: str) -> dict[str, Any]:
    """The map's image as a ``datasets.Image`` value; a missing image is an error."""
    path = ds.image_path(map_id)
    if path is None:
        raise DatasetError(
            f"{ds.root / 'maps' / map_id / 'image.png'}: map image missing "
            "(render the maps, or export with --no-images); nothing exported"
        )
    return {"bytes": path.read_bytes(), "path": f"{map_id}.png"}


def _write_split(
    path: Path,
    schema: pa.Schema,
    fmt: str,
    rows: list[RLRow],
    pictures: dict[str, dict[str, Any]],
    images: bool,
) -> None:
    """One split's Parquet file at ``path``, one row group per map."""
    with pq.ParquetWriter(
        path,
        schema,
        use_dictionary=True,
        dictionary_pagesize_limit=_MAX_DICTIONARY_PAGE,
        compression="zstd",
    ) as writer:
        index = 0
        for _, group in groupby(rows, key=lambda r: r.map_id):
            batch = []
            for r in group:
                img = pictures[r.map_id] if images and r.shows_map else None
                if fmt == "trl":
                    batch.append(_trl_row(r, img, images))
                else:
                    batch.append(_verl_row(r, img, images, index))
                index += 1
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
