"""Export a dataset for RL trainers: TRL and verl Parquet shards (``docs/guides/train-with-rewards.md``).

``maptab export DATASET --format trl|verl --out DIR`` writes each split (from each sample's
``split``; a split without samples is not written) as shards of :data:`SHARD_ROWS` rows,
``DIR/<split>-00000-of-000NN.parquet``, one row per request ``maptab run`` would send (a
ReasonMap pair gives a ``short`` and a ``long`` row), rows grouped by map (run order within a
map), written as they are made: memory holds one map's rows. Every row carries the sample's
reward reference (:func:`maptab.rewards.encode_reference`); by default a map's tables are
written once, to ``DIR/maps/<map_id>.json``, and the references of RP and ReasonMap rows name
that file (``map_ref``, :mod:`maptab.rewards.reference`); with ``inline_maps`` each reference
carries its map's tables, so the reward needs no file at training time.

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
shards and the map folder are written under temporary names and renamed into place together
at the end (the shards of an earlier export into ``DIR`` are then removed;
:mod:`maptab.io.shards`), so a refused or failed export leaves no file.

Images are the dataset's map PNGs as they are (``{"bytes", "path"}``, the ``datasets.Image``
layout), stored once per map and shard (one row group per map, bytes dictionary-encoded).
``images=False`` writes no image column and leaves out the samples that show nothing but the
map (text-only models cannot answer them).
"""

from __future__ import annotations

import heapq
import json
import os
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from maptab.io.dataset import Dataset, DatasetError, Sample
from maptab.io.shards import ShardWriter, publish
from maptab.rewards.reference import all_rewarded, encode_reference, map_file_text, reward_spec
from maptab.run.requests import RequestBuilder, iter_samples
from maptab.score.integrity import export_problem
from maptab.tasks.base import get as get_kind

__all__ = [
    "MAPS_FOLDER",
    "RL_FORMATS",
    "RLRow",
    "SHARD_ROWS",
    "data_source",
    "export_rl",
    "rl_row_stream",
    "rl_rows",
    "samples_by_map",
]

RL_FORMATS = ("trl", "verl")
DATA_SOURCE_PREFIX = "maptab/"
_IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
SHARD_ROWS = 20_000
"""Rows per Parquet shard (the last shard of a split holds the rest)."""
MAPS_FOLDER = "maps"


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
    """One :class:`RLRow` per request of the dataset, in ``maptab run`` order, each with its
    self-contained (map inline) reference."""
    ds = Dataset(dataset_dir, verify=verify)
    samples = iter_samples(dataset_dir, verify=verify)
    yield from rl_row_stream(
        ds, dataset_dir, samples, images=images, table_format=table_format, verify=verify
    )


def samples_by_map(ds: Dataset) -> Iterator[Sample]:
    """The samples of :func:`rl_rows` ordered by map (run order within a map): the kinds'
    files, each in map order as ``maptab build`` writes it, merged on ``map_id``."""
    streams = [ds.samples(categories=[k.name]) for k in all_rewarded() if ds.has(k.samples.file)]
    return heapq.merge(*streams, key=lambda s: s.map_id)


def rl_row_stream(
    ds: Dataset,
    dataset_dir: str | Path,
    samples: Iterable[Sample],
    *,
    images: bool,
    table_format: Literal["csv", "json"],
    verify: bool,
    maps: _MapStore | None = None,
    by_map: bool = False,
) -> Iterator[RLRow]:
    """The :class:`RLRow` of each of ``samples`` (of ``ds``, read from ``dataset_dir``) of a
    kind with a reward, made as they are consumed; without ``images``, samples that show
    nothing but the map are left out. References carry their map inline, or name its file
    in ``maps``. With ``by_map`` the samples come map by map (:func:`samples_by_map`) and only
    the current map's tables and network are kept."""
    builder = RequestBuilder(dataset_dir, table_format=table_format, images=False, verify=verify)
    last = None
    for sample in samples:
        if by_map and sample.map_id != last:
            # samples come map by map: keep one map's tables, not every map's
            last = sample.map_id
            builder.forget_maps()
            ds.forget_networks()
        task = get_kind(sample.kind)
        if task.reward is None:  # a kind without a reward has nothing to train on
            continue
        inputs = tuple(task.prompt(sample.record, sample.variant).inputs)
        if not images and all(i == "map" for i in inputs):
            continue
        request = builder.request(sample)
        parts = request.messages[0]["content"]
        text = "\n\n".join(p["text"] for p in parts if p.get("type") == "text")
        rec = sample.record
        if not task.reward.with_map:
            reference = encode_reference(sample.kind, rec, mode=sample.variant)
        elif maps is None:
            network = ds.network(sample.map_id)
            reference = encode_reference(sample.kind, rec, network, mode=sample.variant)
        else:
            map_ref = maps.ref(ds, sample.map_id)
            reference = encode_reference(sample.kind, rec, mode=sample.variant, map_ref=map_ref)
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


class _MapStore:
    """The map side files of a by-reference export: ``<tmp>/<map_id>.json`` written once
    per map, named in references by ``dir`` (where they will be after the rename)."""

    def __init__(self, tmp: Path, final: Path) -> None:
        self.tmp, self.final = tmp, str(final)
        self.digests: dict[str, str] = {}

    def ref(self, ds: Dataset, map_id: str) -> dict[str, str]:
        digest = self.digests.get(map_id)
        if digest is None:
            if not map_id or map_id.startswith(".") or any(c in map_id for c in "/\\\0"):
                raise DatasetError(f"map id {map_id!r} cannot name a map file")
            text, digest = map_file_text(ds.network(map_id))
            (self.tmp / f"{map_id}.json").write_text(text, encoding="utf-8")
            self.digests[map_id] = digest
        return {"map_id": map_id, "digest": digest, "dir": self.final}


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
    inline_maps: bool = False,
    shard_rows: int = SHARD_ROWS,
) -> Path:
    """Write the dataset's train/test shards for ``fmt`` (``trl`` or ``verl``) into
    ``out_dir`` (module docstring), with the map side files in ``out_dir/maps`` unless
    ``inline_maps``; returns ``out_dir``. Deterministic for one ``out_dir``."""
    if fmt not in RL_FORMATS:
        raise DatasetError(f"unknown RL format {fmt!r}; choose one of {', '.join(RL_FORMATS)}")
    if shard_rows < 1:
        raise DatasetError(f"shard size must be at least 1 row, not {shard_rows}")
    ds = Dataset(dataset_dir, verify=verify)
    problem = export_problem(ds, images=images)
    if problem:
        raise DatasetError(f"{problem}; nothing exported")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    schema = _schema(fmt, images)
    maps_tmp = out / f".maps.{os.getpid()}.tmp"
    splits: dict[str, ShardWriter] = {}
    try:
        maps = None
        if not inline_maps:
            shutil.rmtree(maps_tmp, ignore_errors=True)
            maps_tmp.mkdir()
            maps = _MapStore(maps_tmp, out / MAPS_FOLDER)
        picture: tuple[str, dict[str, Any]] | None = None
        rows = rl_row_stream(
            ds,
            dataset_dir,
            samples_by_map(ds),
            images=images,
            table_format=table_format,
            verify=verify,
            maps=maps,
            by_map=True,
        )
        for row in rows:
            img = None
            if images and row.shows_map:
                if picture is None or picture[0] != row.map_id:
                    picture = (row.map_id, _picture(ds, row.map_id))
                img = picture[1]
            w = splits.get(row.split)
            if w is None:
                w = splits[row.split] = ShardWriter(out, row.split, schema, shard_rows)
            if fmt == "trl":
                w.add(row.map_id, _trl_row(row, img, images))
            else:
                w.add(row.map_id, _verl_row(row, img, images, w.rows))
        for w in splits.values():
            w.close()
    except BaseException:
        for w in splits.values():
            w.abort()
        shutil.rmtree(maps_tmp, ignore_errors=True)
        raise
    extra = {} if inline_maps else {maps_tmp: out / MAPS_FOLDER}
    publish(splits.values(), extra=extra, clean=[out])
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
