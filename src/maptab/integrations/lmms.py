"""An lmms-eval task folder (``docs/guides/evaluation-harnesses.md``): ``maptab export DATASET --format
lmms-eval --out DIR``, then ``lmms_eval --include_path DIR --tasks maptab …``.

The folder holds, per task kind with a reward reference (:class:`~maptab.tasks.RewardSpec`;
the built-in kinds), ``<task>.yaml`` (task ``maptab_<kind>``: ``maptab_rp``, ``maptab_qa``,
``maptab_reasonmap``), its rows in Parquet shards
``data/<kind>-<split>-NNNNN-of-MMMMM.parquet`` (written map by map as the RL exports write
theirs, :class:`maptab.io.shards.ShardWriter`), a group ``maptab.yaml`` over them, and ``utils.py``,
which imports the functions below, so the folder needs maptab installed beside lmms-eval.

A row is one request ``maptab run`` sends: ``text`` (the question, then each table shown,
blank-line separated, as the RL exports write it), ``image`` (the map PNG when the sample
shows it, else null), ``target`` (the reference answer), ``reference`` (the reward reference:
the sample and its map's tables, :func:`maptab.rewards.encode_reference`), and ``id``,
``kind``, ``variant``, ``category``, ``map_id``, ``split``. ``process_results`` scores an
answer with the kind's own ``score`` (the row ``maptab score`` writes) against the map in the
reference, and returns the kind's plain mean metrics, which lmms-eval averages.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from maptab.integrations.common import sample_values
from maptab.io.dataset import Dataset, DatasetError, Sample
from maptab.io.shards import ShardWriter, publish
from maptab.rewards import decode_reference
from maptab.rewards.export import SHARD_ROWS, RLRow, rl_row_stream, samples_by_map
from maptab.run.baselines import BASELINE_CLASSES
from maptab.run.requests import RequestBuilder
from maptab.tasks.base import TaskKind, all_kinds
from maptab.tasks.base import get as get_kind

__all__ = [
    "doc_to_target",
    "doc_to_text",
    "doc_to_visual",
    "export_lmms",
    "lmms_task_name",
    "process_results",
    "score_row",
]

_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("kind", pa.string()),
        ("variant", pa.string()),
        ("category", pa.string()),
        ("map_id", pa.string()),
        ("split", pa.string()),
        ("text", pa.string()),
        ("image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
        ("target", pa.string()),
        ("reference", pa.string()),
    ],
    metadata={
        b"huggingface": b'{"info": {"features": {"image": {"_type": "Image"}}}}',
    },
)
UTILS = '''"""lmms-eval hooks of the maptab tasks: maptab's own parser and scorer (maptab.integrations.lmms)."""

from maptab.integrations.lmms import (  # noqa: F401
    doc_to_target,
    doc_to_text,
    doc_to_visual,
    process_results,
)
'''


def lmms_task_name(kind: TaskKind) -> str:
    """The lmms-eval task name of a kind: ``maptab_<kind>``."""
    return f"maptab_{kind.name}"


# --------------------------------------------------------------------------- hooks
def doc_to_text(
    doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None
) -> str:
    """The prompt text (question and tables), with the optional ``pre_prompt`` and
    ``post_prompt`` of the YAML's ``lmms_eval_specific_kwargs``."""
    kw = lmms_eval_specific_kwargs or {}
    return f"{kw.get('pre_prompt', '')}{doc['text']}{kw.get('post_prompt', '')}"


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The map as an RGB PIL image when the sample shows it, else no image."""
    image = doc.get("image")
    if image is None:
        return []
    if isinstance(image, dict):  # parquet read without the Image feature
        if image.get("bytes") is None:
            return []
        from PIL import Image

        image = Image.open(io.BytesIO(image["bytes"]))
    return [image.convert("RGB")]


def doc_to_target(doc: dict[str, Any]) -> str:
    """The reference answer text (what the oracle baseline answers)."""
    return str(doc.get("target") or "")


class _ReferenceMaps:
    """The ``maps`` a kind's ``score`` reads, from one decoded reference."""

    def __init__(self, ref: Any) -> None:
        self.ref = ref

    def network(self, map_id: str) -> Any:
        return self.ref.network

    def mix(self, map_id: str) -> Any:
        return self.ref.mix


def score_row(doc: dict[str, Any], response: str) -> dict[str, Any]:
    """The score row of ``response`` to the row ``doc``: the kind's ``score`` (the row
    ``maptab score`` writes), computed against the sample and map in its reference."""
    ref = decode_reference(doc["reference"])
    kind = get_kind(ref.kind)
    return kind.scoring.score(_ReferenceMaps(ref), ref.record, ref.mode, response)


def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, float]:
    """lmms-eval's per-sample hook: the kind's plain mean metrics of the first result."""
    response = results[0] if results else ""
    if not isinstance(response, str):
        response = str(response)
    row = score_row(doc, response)
    return sample_values(get_kind(row["kind"]), row)


# --------------------------------------------------------------------------- export
def _yaml_task(kind: TaskKind, files: dict[str, list[str]], test_split: str) -> str:
    lines = [
        f"task: {lmms_task_name(kind)}",
        "dataset_path: parquet",
        "dataset_kwargs:",
        "  data_files:",
        *[f"    {split}: {json.dumps(paths)}" for split, paths in sorted(files.items())],
        f"test_split: {test_split}",
        "output_type: generate_until",
        "doc_to_visual: !function utils.doc_to_visual",
        "doc_to_text: !function utils.doc_to_text",
        "doc_to_target: !function utils.doc_to_target",
        "generation_kwargs:",
        "  max_new_tokens: 4096",
        "  temperature: 0",
        "  do_sample: false",
        "process_results: !function utils.process_results",
        "metric_list:",
    ]
    for name in sample_values(kind, {}):
        metric = next(m for m in kind.metrics if m.name == name)
        lines += [
            f"  - metric: {name}",
            "    aggregation: mean",
            f"    higher_is_better: {str(metric.higher_is_better).lower()}",
        ]
    lines += ["metadata:", "  version: 1.0", ""]
    return "\n".join(lines)


def _image(ds: Dataset, map_id: str) -> dict[str, Any]:
    """The map's PNG as a ``datasets.Image`` value; a missing image is an error."""
    path = ds.image_path(map_id)
    if path is None:
        missing = ds.root / "maps" / map_id / "image.png"
        raise DatasetError(f"{missing}: map image missing (render the maps first)")
    return {"bytes": path.read_bytes(), "path": f"{map_id}.png"}


def _lmms_rows(
    ds: Dataset, dataset_dir: str | Path, table_format: Literal["csv", "json"], verify: bool
) -> Iterator[tuple[RLRow, dict[str, Any]]]:
    """Each request's RL row (text, reference) and its lmms-eval row, map by map (run
    order within a map), made as they are consumed."""
    builder = RequestBuilder(
        dataset_dir, table_format=table_format, images=False, verify=verify, messages=False
    )
    oracle = BASELINE_CLASSES["oracle"](seed=0)
    current: list[Sample] = []

    def tap(samples: Iterator[Sample]) -> Iterator[Sample]:
        for sample in samples:
            current[:] = [sample]
            yield sample

    picture: tuple[str, dict[str, Any]] | None = None
    last = None
    samples = tap(samples_by_map(ds))
    rows = rl_row_stream(
        ds,
        dataset_dir,
        samples,
        images=True,
        table_format=table_format,
        verify=verify,
        by_map=True,
    )
    for rl in rows:
        sample = current[0]
        if sample.id != rl.id:  # one row per sample of a rewarded kind
            raise RuntimeError(f"{rl.id}: the row is not that of sample {sample.id}")
        if sample.map_id != last:
            # the export holds one map's tables and networks at a time
            last = sample.map_id
            builder.forget_maps()
            oracle.forget_maps()
        kind = get_kind(sample.kind)
        image = None
        if rl.shows_map:
            if picture is None or picture[0] != sample.map_id:
                picture = (sample.map_id, _image(ds, sample.map_id))
            image = picture[1]
        doc = {
            "id": rl.id,
            "kind": kind.name,
            "variant": sample.variant,
            "category": rl.category,
            "map_id": rl.map_id,
            "split": rl.split,
            "text": rl.text,
            "image": image,
            "target": kind.answer(oracle, builder.request(sample)),
            "reference": rl.reference,
        }
        yield rl, doc


def export_lmms(
    dataset_dir: str | Path,
    out_dir: str | Path,
    *,
    table_format: Literal["csv", "json"] = "csv",
    verify: bool = True,
    shard_rows: int = SHARD_ROWS,
) -> Path:
    """Write the lmms-eval task folder of a dataset (module docstring); returns it.

    Rows are written as they are made, map by map, into shards of ``shard_rows`` rows
    (``data/<kind>-<split>-NNNNN-of-MMMMM.parquet``): memory holds one map's rows. The shards
    are written under temporary names and renamed into place together at the end (the shards
    of an earlier export into ``out_dir`` are then removed), so a failed export leaves none.
    The YAML files name the data files by absolute path (lmms-eval reads them with
    ``datasets.load_dataset("parquet", data_files=…)`` from any working folder); move the
    folder and export again."""
    if shard_rows < 1:
        raise DatasetError(f"shard size must be at least 1 row, not {shard_rows}")
    ds = Dataset(dataset_dir, verify=verify)
    out = Path(out_dir)
    data = out / "data"
    made = [p for p in (out, data) if not p.exists()]
    data.mkdir(parents=True, exist_ok=True)
    out, data = out.resolve(), data.resolve()
    writers: dict[tuple[str, str], ShardWriter] = {}
    try:
        for rl, doc in _lmms_rows(ds, dataset_dir, table_format, verify):
            w = writers.get((rl.kind, rl.split))
            if w is None:
                name = f"{rl.kind}-{rl.split}"
                w = writers[(rl.kind, rl.split)] = ShardWriter(data, name, _SCHEMA, shard_rows)
            w.add(rl.map_id, doc)
        if not writers:
            raise DatasetError(f"{ds.root}: no sample of a kind with a reward reference to export")
        for w in writers.values():
            w.close()
    except BaseException:
        for w in writers.values():
            w.abort()
        for path in reversed(made):  # the folders this export made, left empty
            with contextlib.suppress(OSError):
                path.rmdir()
        raise
    publish(writers.values(), clean=[data])
    names = []
    for kind in all_kinds():
        files = {
            split: [str(p) for p in w.final_names()]
            for (name, split), w in sorted(writers.items())
            if name == kind.name
        }
        if not files:
            continue
        test_split = "test" if "test" in files else sorted(files)[0]
        (out / f"{lmms_task_name(kind)}.yaml").write_text(
            _yaml_task(kind, files, test_split), encoding="utf-8"
        )
        names.append(lmms_task_name(kind))
    group = ["group: maptab", "task:", *[f"  - {n}" for n in names], ""]
    (out / "maptab.yaml").write_text("\n".join(group), encoding="utf-8")
    (out / "utils.py").write_text(UTILS, encoding="utf-8")
    return out
