"""Export a maptab dataset as a Hugging Face ``datasets`` folder.

Layout::

    OUT/README.md                                  dataset card (:func:`_card`): YAML metadata
                                                   (licence, task categories, configs,
                                                   features, split sizes) and prose
    OUT/<config>/<split>-NNNNN-of-MMMMM.parquet    config in rp, qa, reasonmap, maps

The card's ``language`` list is English (the questions) and each map's language, read from
the script of its station labels (:func:`map_languages`).

``maps`` holds one row per map: ``map_id``, the manifest fields, the image (``datasets.Image``
feature), the tables as CSV text and ``network.json`` text. ``rp``/``qa``/``reasonmap`` hold
one row per query with the JSONL fields of the dataset; they name their map (``map_id``) and
carry no image, so each image is stored once. Each map's rows form one row group; a split is
cut into shards of about :data:`SHARD_BYTES`. Configs without rows are left out.

Two passes: the first reads and checks every row and image, so a repeated id, a number that
is not finite or a map image that does not decode is refused with one line naming file, line
and field (SPEC 16; ``maptab validate`` checks the same, and more) before anything is written.
The second writes one map at a time under temporary names, renamed into ``OUT`` at the end
(:mod:`maptab.io.shards`; an earlier export's shards are then removed); a failure leaves
nothing.

The files are written with pyarrow alone; with ``datasets`` installed, load them with
``datasets.load_dataset(OUT, "rp")`` or ``load_dataset("parquet", data_files=…)``.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
from collections.abc import Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from maptab._limits import non_finite_field, open_image
from maptab.generate.release import labels_language
from maptab.io.dataset import TABLE_FILES, Dataset, DatasetError
from maptab.io.shards import ShardWriter, publish
from maptab.tasks.base import get as get_kind

CONFIGS = ("rp", "qa", "reasonmap")
IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
_HF_METADATA = {
    b"huggingface": json.dumps({"info": {"features": {"image": {"_type": "Image"}}}}).encode()
}
SHARD_BYTES = 256 << 20  # a new shard once a file's rows hold this much (in memory)


def _image(ds: Dataset, map_id: str, read: bool) -> dict[str, Any] | None:
    """The map's image (``None`` when it has none); checked, and read when ``read``."""
    path = ds.image_path(map_id)
    if path is None:
        return None
    if not read:
        _check_image(path)
        return None
    return {"bytes": path.read_bytes(), "path": f"{map_id}.png"}


def _check_image(path: Path) -> None:
    """Refuse a map image that does not decode (it would be embedded as it is)."""
    try:
        with open_image(path, error=DatasetError) as im:
            im.verify()
    except DatasetError as exc:
        raise DatasetError(f"{exc}; nothing exported") from None
    except (OSError, SyntaxError, ValueError, EOFError, struct.error) as exc:
        raise DatasetError(f"{path}: not a readable image ({exc}); nothing exported") from None


def _map_rows(ds: Dataset, read: bool) -> Iterator[dict[str, Any]]:
    for map_id, entry in ds.maps.items():
        row = entry.to_dict()
        row["map_id"] = row.pop("id")
        for kind in TABLE_FILES:
            row[f"{kind}_csv"] = ds.table_path(map_id, kind).read_text(encoding="utf-8-sig")
        row["network"] = ds.map_file(map_id, "network.json").read_text(encoding="utf-8")
        row["image"] = _image(ds, map_id, read)
        yield row


def _query_rows(ds: Dataset, kind: str) -> Iterator[dict[str, Any]]:
    shown = ds.root / get_kind(kind).samples.file
    first: dict[str, int] = {}
    for n, raw, q in ds.records(kind):
        seen = first.setdefault(q.id, n)
        if seen != n:
            raise DatasetError(
                f"{shown}:{n}: field 'id': duplicate id {q.id!r} (first on line {seen}); "
                "nothing exported"
            )
        at = non_finite_field(raw)
        if at is not None:
            raise DatasetError(f"{shown}:{n}: field {at!r}: not a finite number; nothing exported")
        row = q.to_dict()
        if "tables" in row:  # fixed keys, so every row has the same struct type
            row["tables"] = {k: row["tables"].get(k) for k in TABLE_FILES}
        if "params" in row:  # free-form per QA type: stored as JSON text
            row["params"] = json.dumps(row["params"], ensure_ascii=False, sort_keys=True)
        yield row


def _rows(ds: Dataset, name: str, read: bool) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """``(split, rows)`` of each run of a config's rows with the same split and map."""
    rows = _map_rows(ds, read) if name == "maps" else _query_rows(ds, name)
    for (split, _), group in groupby(rows, key=lambda r: (r["split"], r["map_id"])):
        yield split, list(group)


def _schema(ds: Dataset, name: str) -> pa.Schema | None:
    """The first pass: check every row (and image) of a config; its schema, ``None`` if empty."""
    found = [pa.Table.from_pylist(rows).schema for _, rows in _rows(ds, name, read=False)]
    if not found:
        return None
    schema = pa.unify_schemas(found, promote_options="permissive")
    if name != "maps":
        return schema
    image = pa.field("image", IMAGE_TYPE)
    return schema.set(schema.get_field_index("image"), image).with_metadata(_HF_METADATA)


LICENSE = "mit"  # the data is maptab's own output, under the project's licence
TASK_CATEGORIES = ("visual-question-answering", "image-text-to-text", "question-answering")
_ABOUT = {
    "rp": "route planning (MapTab): one row per query; the gold optimal routes, the query's "
    "criteria weights, category (which inputs are shown), difficulty and reported totals",
    "qa": "map question answering (MapTab): one row per question of the 24 diagnostic "
    "types, with its numeric answer, type, capabilities and parameters (JSON text)",
    "reasonmap": "ReasonMap questions: one row per question, asked in a short and a long "
    "form, with the reference routes as line segments",
    "maps": "one row per map: its image, the Edge/Vertex/Mix tables as CSV text and the "
    "network as JSON",
}
MAPTAB_AUTHORS = (
    "Shang, Ziqiao and Ge, Lingyue and Xu, Zian and Cheng, Zi-Jian and Tian, Shi-Yu and "
    "Huang, Zhenyu and Fu, Wenbo and Wu, Weiming and Chen, Yang and Zhang, Xiangwen and "
    "Hu, Yulan and Liu, Bin and Guo, Lan-Zhe"
)


def _q(value: Any) -> str:
    """A YAML scalar: JSON's quoting is valid YAML."""
    return json.dumps(value, ensure_ascii=False)


def _is_image(dtype: pa.DataType) -> bool:
    names = {dtype.field(i).name for i in range(dtype.num_fields)}
    return pa.types.is_struct(dtype) and names == {"bytes", "path"}


def _inner(dtype: pa.DataType) -> Any:
    """The feature spec of a list's items (``datasets``' YAML form): a dtype name, a list
    of fields (struct) or ``{"list": …}``."""
    if _is_image(dtype):
        return "image"
    if pa.types.is_struct(dtype):
        return [_feature(dtype.field(i).name, dtype.field(i).type) for i in range(dtype.num_fields)]
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return {"list": _inner(dtype.value_type)}
    return _dtype(dtype)


def _feature(name: str, dtype: pa.DataType) -> dict[str, Any]:
    """A ``dataset_info`` feature entry for an Arrow field (``datasets.Features`` YAML)."""
    if _is_image(dtype):
        return {"name": name, "dtype": "image"}
    if pa.types.is_struct(dtype):
        return {"name": name, "struct": _inner(dtype)}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return {"name": name, "list": _inner(dtype.value_type)}
    return {"name": name, "dtype": _dtype(dtype)}


def _yaml(obj: Any, indent: int = 0) -> list[str]:
    """Block-style YAML lines of nested dicts, lists and scalars (scalars as JSON)."""
    pad = " " * indent
    out: list[str] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, dict | list):
                out += [f"{pad}{k}:", *_yaml(v, indent + 2)]
            else:
                out.append(f"{pad}{k}: {_q(v)}")
    else:
        for item in obj:
            sub = _yaml(item, indent + 2) if isinstance(item, dict | list) else []
            if not sub:
                out.append(f"{pad}- {_q(item)}")
            elif isinstance(item, dict):
                out += [f"{pad}- {sub[0].lstrip()}", *sub[1:]]
            else:
                out += [f"{pad}-", *sub]
    return out


def _dtype(dtype: pa.DataType) -> str:
    if pa.types.is_null(dtype):
        return "null"
    if pa.types.is_boolean(dtype):
        return "bool"
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return "string"
    if pa.types.is_floating(dtype):
        return f"float{dtype.bit_width}"
    if pa.types.is_integer(dtype):
        return f"{'u' if pa.types.is_unsigned_integer(dtype) else ''}int{dtype.bit_width}"
    return "string"


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M" if n < 1_000_000 else "1M<n<10M"


def map_languages(ds: Dataset) -> dict[str, str]:
    """Each map's language, from the script of its station labels with the manifest's
    language as the hint (:func:`maptab.generate.release.labels_language`; SPEC 15)."""
    out = {}
    for map_id, entry in ds.maps.items():
        net = ds.network(map_id)
        out[map_id] = labels_language((net.label(s) for s in net.vertices), entry.language)
    return out


def card_languages(map_langs: Any) -> list[str]:
    """The card's ``language`` codes: ``en`` (every question and instruction is English),
    then the maps' languages as ISO 639-1 codes (``zh-tw`` is ``zh``), sorted."""
    codes = {str(lang).split("-")[0].lower() for lang in map_langs if lang}
    return ["en", *sorted(codes - {"en"})]


def _card(
    configs: dict[str, list[str]],
    manifest: dict[str, Any],
    schemas: dict[str, pa.Schema] | None = None,
    counts: dict[tuple[str, str], int] | None = None,
    sizes: dict[tuple[str, str], int] | None = None,
    languages: list[str] | None = None,
) -> str:
    """The dataset card (``README.md``): YAML metadata that ``huggingface_hub.DatasetCard``
    reads (licence, task categories, languages, size, configs with their files, features
    and split sizes), then prose: what the data is, how it was built, the cost model, the
    metrics, and how to cite the two papers. ``languages`` defaults to those the manifest
    records for its maps (:func:`card_languages`)."""
    schemas = schemas or {}
    counts = counts or {}
    sizes = sizes or {}
    if languages is None:
        languages = card_languages(m.get("language") for m in manifest.get("maps") or [])
    options = manifest.get("options") or {}
    preset = options.get("preset") or {}
    total = sum(n for (name, _), n in counts.items() if name != "maps")
    lines = [
        "---",
        f"license: {LICENSE}",
        "task_categories:",
        *[f"- {c}" for c in TASK_CATEGORIES],
        "language:",
        *[f"- {lang}" for lang in languages],
        "tags:",
        "- route-planning",
        "- maps",
        "- multimodal",
        "- tables",
        "- synthetic",
        f"pretty_name: {_q('maptab ' + str(preset.get('name') or 'dataset'))}",
        "size_categories:",
        f"- {_size_category(total)}",
        "configs:",
    ]
    for name, splits in configs.items():
        lines += [f"- config_name: {name}", "  data_files:"]
        for split in splits:
            lines += [f"  - split: {split}", f"    path: {name}/{split}-*.parquet"]
    if schemas:
        lines.append("dataset_info:")
        for name, splits in configs.items():
            lines += [f"- config_name: {name}", "  features:"]
            lines += _yaml([_feature(f.name, f.type) for f in schemas[name]], 2)
            lines.append("  splits:")
            for split in splits:
                lines += [
                    f"  - name: {split}",
                    f"    num_bytes: {sizes.get((name, split), 0)}",
                    f"    num_examples: {counts.get((name, split), 0)}",
                ]
    n = manifest.get("counts") or {}
    lines += [
        "---",
        "",
        f"# maptab {preset.get('name') or 'dataset'}",
        "",
        "Multimodal route-planning questions over transit and scenic-area maps, with exact "
        "gold labels: every route-planning answer was computed by an exact solver, not "
        "annotated. Written by [maptab](https://pypi.org/project/maptab/) "
        f"{manifest.get('generator_version', '')} (dataset schema "
        f"{manifest.get('schema_version')}, seed {manifest.get('seed')}): "
        f"{n.get('maps', 0)} maps, {n.get('rp', 0)} route-planning queries, "
        f"{n.get('qa', 0)} QA questions, {n.get('reasonmap', 0)} ReasonMap questions.",
        "",
        "## Configs",
        "",
        *[f"- `{c}`: {_ABOUT.get(c, 'rows of this kind')}." for c in configs],
        "",
        "Every query row names its map (`map_id`); the image is stored once, in `maps`. The "
        "`tables` field gives the row order of each table shown in the prompt. A query's "
        "map image (a map's split is its queries' split):",
        "",
        "```python",
        'rp, maps = (load_dataset("<this folder or repo>", c, split="test") for c in ("rp", "maps"))',
        'at = {m: i for i, m in enumerate(maps["map_id"])}',
        'image = maps[at[rp[0]["map_id"]]]["image"]  # PIL image of rp[0]\'s map',
        "```",
        "",
        "## How it was built",
        "",
        "maptab generates synthetic metro networks (lines, stations, transfers) and scenic "
        "areas, assigns each station and edge the four MapTab attributes (time, price, "
        "comfort, reliability) within the papers' value ranges, renders each map, and draws "
        "origin-destination pairs per map and difficulty class. For every query the solver "
        "enumerates all optimal routes under the query's criteria weights (ties are listed), "
        "so a gold route is optimal by construction; QA answers are computed from the map's "
        "tables and ReasonMap references from its lines. "
        f"Build options: preset `{preset.get('name', '?')}`, cost model "
        f"`{options.get('cost_model', 'additive')}`, map style "
        f"`{options.get('map_style', preset.get('map_style', '?'))}`, reported totals "
        f"{'asked' if options.get('report_totals') else 'not asked'}.",
        "",
        "## Cost model",
        "",
        "A route's cost is a weighted sum over its hops and stations: each item adds "
        "`wT·time + wP·price + wC·(1 − comfort) + wR·(1 − reliability)`, every attribute "
        "scaled per scenario, a missing comfort or reliability value adding nothing; a change "
        "of line at a station adds its transfer time (weighted by `wT`). The weights of a "
        "query are non-negative and sum to 1; the categories that ask for the fewest stations "
        "count hops instead. The exact rules (which stations count, the scales) are in "
        "maptab's `docs/reference/cost-model.md`.",
        "",
        "## Metrics",
        "",
        "- Route planning: the MapTab paper's exact match (EMA), partial match (PMA) and "
        "difficulty score (DS), and maptab's verified metrics, which check the answered route "
        "against the map instead of the listed gold routes: valid, optimal (with the "
        "optimality gap `J/J* − 1`), transfer marks right, and strict (all of these).",
        "- QA: accuracy, answers compared after rounding half up to 2 decimals.",
        "- ReasonMap: correctness (lenient and strict) and the map score, plain and "
        "difficulty-weighted, as the ReasonMap paper defines them.",
        "",
        "`maptab score` computes all of them; `maptab.rewards` turns them into RL rewards.",
        "",
        "## Licence",
        "",
        "MIT, as maptab. The maps, names and attributes are synthetic.",
        "",
        "## Citation",
        "",
        "The task designs come from two papers; please cite them when you use this data:",
        "",
        "```bibtex",
        "@misc{shang2026maptab,",
        "  title  = {MapTab: A Diagnostic Benchmark for Long-Horizon Multi-Criteria "
        "Multimodal Reasoning on Heterogeneous Topological Graphs},",
        f"  author = {{{MAPTAB_AUTHORS}}},",
        "  year   = {2026}",
        "}",
        "@misc{feng2025reasonmap,",
        "  title  = {Can MLLMs Guide Me Home? A Benchmark Study on Fine-Grained Visual "
        "Reasoning from Transit Maps},",
        "  author = {Feng, Sicheng and others},",
        "  year   = {2025},",
        "  eprint = {2505.18675},",
        "  archivePrefix = {arXiv}",
        "}",
        "```",
        "",
    ]
    return "\n".join(lines)


def export_hf(
    dataset_dir: str | Path, out_dir: str | Path, *, shard_bytes: int = SHARD_BYTES
) -> Path:
    """Write the dataset at ``dataset_dir`` as a Hugging Face folder at ``out_dir``; return it.

    Configs ``rp``/``qa``/``reasonmap``/``maps``, splits ``train``/``test`` from each row's
    ``split``; field names and values are those of the dataset's JSONL files and manifest.
    Deterministic: the same dataset gives byte-identical files.
    """
    ds = Dataset(dataset_dir)
    out = Path(out_dir)
    schemas = {name: _schema(ds, name) for name in (*CONFIGS, "maps")}
    languages = card_languages(map_languages(ds).values())
    out.parent.mkdir(parents=True, exist_ok=True)
    folders = [out, *(out / name for name, schema in schemas.items() if schema is not None)]
    made = [p for p in folders if not p.exists()]
    card_tmp = out / f".README.md.{os.getpid()}.tmp"
    writers: list[ShardWriter] = []
    written: dict[str, list[str]] = {}
    try:
        for path in made:
            path.mkdir()
        counts: dict[tuple[str, str], int] = {}
        sizes: dict[tuple[str, str], int] = {}
        for name, schema in schemas.items():
            if schema is None:
                continue
            splits: dict[str, ShardWriter] = {}
            for split, rows in _rows(ds, name, read=True):
                w = splits.get(split)
                if w is None:
                    w = splits[split] = ShardWriter(
                        out / name,
                        split,
                        schema,
                        shard_bytes=shard_bytes,
                        dictionary_page_bytes=None,
                    )
                    writers.append(w)
                for row in rows:
                    w.add(row["map_id"], row)
            for split in sorted(splits):
                splits[split].close()
                written.setdefault(name, []).append(split)
                counts[(name, split)] = splits[split].rows
                sizes[(name, split)] = _stored_bytes(splits[split].tmp_paths)
        used = {name: s for name, s in schemas.items() if s is not None}
        card = _card(written, ds.manifest, used, counts, sizes, languages)
        card_tmp.write_text(card, encoding="utf-8", newline="\n")
    except BaseException:
        for w in writers:
            w.abort()
        card_tmp.unlink(missing_ok=True)
        for path in reversed(made):  # the folders this export made, left empty
            with contextlib.suppress(OSError):
                path.rmdir()
        raise
    configs = [out / name for name in (*CONFIGS, "maps")]
    publish(writers, extra={card_tmp: out / "README.md"}, clean=configs)
    for folder in configs:  # a config this export has no rows of
        if folder.name not in written and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    return out


def _stored_bytes(paths: list[Path]) -> int:
    """The row groups' total byte size over the shards ``paths`` (the card's ``num_bytes``)."""
    size = 0
    for path in paths:
        meta = pq.read_metadata(path)
        size += sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
    return size
