"""The MapTab release layout: export a maptab dataset to it and import it back.

The layout (as in MapTab's public repository, both scenarios)::

    <scenario>/images/<group>/<map>.png
    <scenario>/tabulars/<group>/<map>_edge.json|.csv      Edge_tab
    <scenario>/tabulars/<group>/<map>_vertex.json|.csv    Vertex_tab
    <scenario>/tabulars/<group>/<map>_vertex2.json|.csv   Mix_tab (metromap only)
    <scenario>/data/<folder>/<scenario>_shortest_path_query_<kind>_<folder>.json

``<folder>`` is ``training_set`` or ``test_set`` (:data:`SPLIT_FOLDERS`; ``train_set`` is
read too). ``<group>/<map>`` is the map id (``america/cleveland``); a map id without ``/``
goes to the group ``synthetic``. ``<kind>`` names the RP category (:data:`CATEGORY_KINDS`).
Each query file is a JSON list of records whose field names depend on the scenario
(:data:`LAYOUTS`): metromap records name the map ``country``/``city`` and the endpoints
``station_1``/``station_2`` and carry ``transfer_vertex_numbers``; travelmap records use
``scenic_spot``, ``spot_1``, ``spot_2`` and have no transfer counts. A travelmap Mix_tab
equals its Vertex_tab (SPEC 5), so the travel Map+Mix_tab records point to ``_vertex.json``.
The released rank field of criteria-free records (``shortest_route_vertex_numbers_rank`` /
``qdi_rank``) is not defined by the paper: it is kept verbatim on import and written back on
export, never computed (``docs/guides/import-and-export.md``).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from maptab._limits import read_json
from maptab.core import tables
from maptab.core.network import Network
from maptab.core.schema import (
    CRITERIA,
    RP_BY_NAME,
    RP_CATEGORIES,
    TOTAL_FIELDS,
    RPCategory,
    RPQuery,
)
from maptab.core.solver import fewest_stations
from maptab.core.validate import first_error, profile_warnings, validate_tables
from maptab.errors import MaptabError
from maptab.generate.queries import gold_label, repetition_class
from maptab.io.dataset import Dataset, DatasetWriter, MapEntry, safe_join

DEFAULT_GROUP = "synthetic"
RELEASE_STYLE = "release"
SPLIT_FOLDERS = {"train": "training_set", "test": "test_set"}
"""Split -> the release's folder name (and file-name suffix)."""
_FOLDER_SPLITS = {**{f: s for s, f in SPLIT_FOLDERS.items()}, "train_set": "train"}
_SKIPPED_FOLDERS = ("all",)  # the release's ``all`` folder repeats the two split folders


@dataclass(frozen=True, slots=True)
class RecordLayout:
    """The field names of one scenario's release records and its Mix_tab file suffix."""

    place: str
    source: str
    target: str
    rank: str
    transfers: bool
    mix_suffix: str

    def field_order(self, criteria: bool, vertex_only: bool) -> tuple[str, ...]:
        """The record's fields in the release's order."""
        tabs = ("vertex_tab",) if vertex_only else ("edge_tab", "vertex_tab")
        head = ("country", self.place, "figure", *tabs, self.source, self.target)
        labels = ("routes", "route_vertex_numbers")
        if self.transfers:
            labels += ("transfer_vertex_numbers",)
        tail = ("weights", *TOTAL_FIELDS) if criteria else (self.rank,)
        return (*head, "Map_Difficulty", "Query_Difficulty", "question", *labels, *tail)


LAYOUTS: dict[str, RecordLayout] = {
    "metromap": RecordLayout(
        "city", "station_1", "station_2", "shortest_route_vertex_numbers_rank", True, "vertex2"
    ),
    "travelmap": RecordLayout("scenic_spot", "spot_1", "spot_2", "qdi_rank", False, "vertex"),
}
"""Release record layout per scenario (MapTab's public repository)."""


class ReleaseError(MaptabError):
    """A MapTab release folder that breaks the layout (unknown file, missing table, bad record)."""


def category_kind(category: RPCategory) -> str:
    """The ``<kind>`` part of a release file name for an RP category.

    ``only_map`` / ``only_tab`` / ``map_and_tab`` for the criteria-free categories;
    ``map_and_tab_with_constraint_<i>_<j>…`` with 1–4 for time, price, comfort, reliability;
    ``…_only_vertex2`` for the Map+Mix_tab category.
    """
    if category.criteria_free:
        if category.inputs == ("map",):
            return "only_map"
        return "map_and_tab" if "map" in category.inputs else "only_tab"
    numbers = "_".join(str(CRITERIA.index(c) + 1) for c in category.criteria)
    suffix = "_only_vertex2" if category.items == "vertex" else ""
    return f"map_and_tab_with_constraint_{numbers}{suffix}"


CATEGORY_KINDS: dict[str, str] = {c.name: category_kind(c) for c in RP_CATEGORIES}
KIND_CATEGORIES: dict[str, str] = {k: c for c, k in CATEGORY_KINDS.items()}


def query_file_name(scenario: str, category: str, split: str) -> str:
    """``<scenario>_shortest_path_query_<kind>_<folder>.json`` (``training_set``/``test_set``)."""
    return f"{scenario}_shortest_path_query_{CATEGORY_KINDS[category]}_{SPLIT_FOLDERS[split]}.json"


def _group_and_name(map_id: str) -> tuple[str, str]:
    group, _, name = map_id.rpartition("/")
    return group or DEFAULT_GROUP, name


def _dump(data: Any, path: Path) -> None:
    """JSON as MapTab writes its query files: 4-space indent, no trailing newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=4), encoding="utf-8", newline="\n")


# --------------------------------------------------------------------------- export
def _table_paths(scenario: str, map_id: str) -> dict[str, str]:
    """Release-relative paths of a map's image and tables (``edges``/``vertices``/``mix``)."""
    group, name = _group_and_name(map_id)
    base = f"{scenario}/tabulars/{group}/{name}"
    return {
        "figure": f"{scenario}/images/{group}/{name}.png",
        "edges": f"{base}_edge.json",
        "vertices": f"{base}_vertex.json",
        "mix": f"{base}_{LAYOUTS[scenario].mix_suffix}.json",
    }


def export_maptab_release(dataset_dir: str | Path, out_dir: str | Path) -> Path:
    """Write the RP part of a dataset in the MapTab release layout; returns ``out_dir``.

    Images missing from the dataset stay missing (the ``figure`` path is still written).
    Difficulty labels are capitalised (``Easy``/``Medium``/``Hard``) as in the release. A
    travelmap's Mix_tab is its Vertex_tab, so no ``_vertex2`` file is written for it. Tables
    are written from the map's network in the released formats (:mod:`maptab.core.tables`:
    the CSV byte-order mark and number spelling per scenario and column), not copied.
    """
    ds = Dataset(dataset_dir)
    out = Path(out_dir)
    paths: dict[str, dict[str, str]] = {}
    for map_id, entry in ds.maps.items():
        paths[map_id] = _table_paths(entry.scenario, map_id)
        net = ds.network(map_id)
        rows = {
            "edges": tables.edge_rows(net),
            "vertices": tables.vertex_rows(net),
            "mix": tables.mix_rows(net),
        }
        for kind, rows_of_kind in rows.items():
            ds.table_path(map_id, kind)  # the dataset's table is checked (place, hash) all the same
            target = safe_join(out, paths[map_id][kind])
            if kind == "mix" and target.name == Path(paths[map_id]["vertices"]).name:
                continue  # travelmap: Mix_tab == Vertex_tab, one file
            target.parent.mkdir(parents=True, exist_ok=True)
            tables.write_json(rows_of_kind, target)
            columns = (tables.EDGE_COLUMNS if kind == "edges" else tables.VERTEX_COLUMNS)[
                entry.scenario
            ]
            bom = tables.CSV_BOM[entry.scenario]
            tables.write_csv(rows_of_kind, target.with_suffix(".csv"), columns, bom=bom)
        image = ds.image_path(map_id)
        if image is not None:
            target = safe_join(out, paths[map_id]["figure"])
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(image, target)
    files: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for q in ds.rp():
        files[(q.scenario, q.split, q.category)].append(_record(q, paths[q.map_id]))
    for (scenario, split, category), records in sorted(files.items()):
        folder = out / scenario / "data" / SPLIT_FOLDERS[split]
        _dump(records, folder / query_file_name(scenario, category, split))
    return out


def _release_number(value: float) -> int | float:
    """A weight as the release writes it: integral values as integers (``[1, 0, 0, 0]``)."""
    return int(value) if float(value).is_integer() else value


def _record(q: RPQuery, paths: dict[str, str]) -> dict[str, Any]:
    """One release record, fields in the release's order (:meth:`RecordLayout.field_order`)."""
    category = RP_BY_NAME[q.category]
    layout = LAYOUTS[q.scenario]
    country, place = _group_and_name(q.map_id)
    vertex_only = category.items == "vertex"
    values: dict[str, Any] = {
        "country": country,
        layout.place: place,
        "figure": paths["figure"],
        "edge_tab": paths["edges"],
        "vertex_tab": paths["mix"] if vertex_only else paths["vertices"],
        layout.source: q.source,
        layout.target: q.target,
        "Map_Difficulty": q.map_difficulty.capitalize(),
        "Query_Difficulty": q.query_difficulty.capitalize(),
        "question": q.question,
        "routes": list(q.routes),
        "route_vertex_numbers": list(q.route_vertex_numbers),
        "transfer_vertex_numbers": list(q.transfer_vertex_numbers),
        "weights": [_release_number(w) for w in q.weights or []],
        layout.rank: q.release_rank,
        **{k: (q.totals or {}).get(k) for k in TOTAL_FIELDS},
    }
    order = layout.field_order(not category.criteria_free, vertex_only)
    return {k: values[k] for k in order if not (k == layout.rank and values[k] is None)}


# --------------------------------------------------------------------------- language
_SCRIPT_BLOCKS: tuple[tuple[int, int, str], ...] = (
    (0x0370, 0x03FF, "greek"),
    (0x0400, 0x052F, "cyrillic"),
    (0x0530, 0x058F, "armenian"),
    (0x0590, 0x05FF, "hebrew"),
    (0x0600, 0x06FF, "arabic"),
    (0x0750, 0x077F, "arabic"),
    (0x08A0, 0x08FF, "arabic"),
    (0x0900, 0x097F, "devanagari"),
    (0x0980, 0x09FF, "bengali"),
    (0x0E00, 0x0E7F, "thai"),
    (0x10A0, 0x10FF, "georgian"),
    (0x1100, 0x11FF, "hangul"),
    (0x2E80, 0x2FDF, "han"),
    (0x3040, 0x30FF, "kana"),
    (0x3130, 0x318F, "hangul"),
    (0x31F0, 0x31FF, "kana"),
    (0x3400, 0x4DBF, "han"),
    (0x4E00, 0x9FFF, "han"),
    (0xAC00, 0xD7AF, "hangul"),
    (0xF900, 0xFAFF, "han"),
    (0xFB1D, 0xFB4F, "hebrew"),
    (0xFB50, 0xFDFF, "arabic"),
    (0xFE70, 0xFEFF, "arabic"),
    (0x20000, 0x2FFFF, "han"),
)
"""Unicode blocks that decide a letter's script (inclusive ranges); other letters are Latin."""

SCRIPT_LANGUAGES: dict[str, tuple[str, ...]] = {
    "latin": ("en", "fr", "de", "es", "it", "pt", "nl", "pl", "cs", "hu", "id"),
    "han": ("zh", "zh-tw", "ja"),
    "kana": ("ja",),
    "hangul": ("ko",),
    "cyrillic": ("ru", "uk"),
    "greek": ("el",),
    "arabic": ("ar", "fa"),
    "hebrew": ("he",),
    "thai": ("th",),
    "devanagari": ("hi",),
    "bengali": ("bn",),
    "georgian": ("ka",),
    "armenian": ("hy",),
}
"""The map languages (:data:`maptab.generate.names.LANGUAGES`) written in each script, the
one assumed when nothing else tells them apart first."""


def _script(ch: str) -> str | None:
    cp = ord(ch)
    for lo, hi, script in _SCRIPT_BLOCKS:
        if lo <= cp <= hi:
            return script
    return "latin" if ch.isalpha() else None


def labels_language(labels: Iterable[str], hint: str | None = None) -> str:
    """The language of a map from the script of its station labels (SPEC 15).

    The script with most letters decides (Han with any kana is Japanese); ``hint`` (a
    recorded language) is kept when it is written in that script (``id`` for Latin labels,
    ``zh-tw`` or ``ja`` for Han), else the script's first language of
    :data:`SCRIPT_LANGUAGES` (Latin: ``en``, Han: ``zh``). Labels without letters give
    ``hint`` or ``en``.
    """
    counts = Counter(s for text in labels for ch in text if (s := _script(ch)) is not None)
    if not counts:
        return hint or "en"
    script = max(counts, key=lambda k: counts[k])
    if script == "han" and counts["kana"]:
        script = "kana"
    choices = SCRIPT_LANGUAGES[script]
    return hint if hint in choices else choices[0]


# --------------------------------------------------------------------------- import
def _parse_query_file(path: Path, scenario: str, folder: str) -> str:
    """The RP category of a release query file, from its name."""
    prefix, suffix = f"{scenario}_shortest_path_query_", f"_{folder}.json"
    kind = path.name[len(prefix) : -len(suffix)]
    if (
        not (path.name.startswith(prefix) and path.name.endswith(suffix))
        or kind not in KIND_CATEGORIES
    ):
        raise ReleaseError(f"{path}: not a MapTab query file name (unknown kind {kind!r})")
    return KIND_CATEGORIES[kind]


def _load_records(path: Path) -> list[dict[str, Any]]:
    data = read_json(path, error=ReleaseError)  # regular file, size and depth limits
    if not isinstance(data, list):
        raise ReleaseError(f"{path}: expected a JSON list of query records")
    return data


_LEVEL_NAMES = ("easy", "medium", "hard")
_INT_LISTS = ("route_vertex_numbers", "transfer_vertex_numbers")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_record(
    root: Path, path: Path, n: int, rec: Any, layout: RecordLayout, criteria: bool
) -> list[str]:
    """The fields of ``rec`` that the layout does not define; raise :class:`ReleaseError`
    naming ``path``, record ``n`` and the field at fault for a missing or mistyped field, an
    unknown difficulty level, or a file path leaving ``root``."""
    where = f"{path}: record {n}"
    if not isinstance(rec, dict):
        raise ReleaseError(f"{where}: expected a JSON object, got {type(rec).__name__}")
    known = set(layout.field_order(criteria, vertex_only=False))
    optional = {"edge_tab", "weights", layout.rank, *TOTAL_FIELDS}
    missing = [k for k in layout.field_order(criteria, False) if k not in rec and k not in optional]
    if missing:
        raise ReleaseError(f"{where}: missing field(s) {', '.join(missing)}")
    text = ("country", layout.place, "figure", "vertex_tab", layout.source, layout.target)
    for key in (*text, "question", *(("edge_tab",) if "edge_tab" in rec else ())):
        if not isinstance(rec[key], str) or not rec[key].strip():
            raise ReleaseError(f"{where}: field {key!r} must be a non-empty string")
    for key in ("figure", "edge_tab", "vertex_tab"):
        if key in rec:
            try:
                safe_join(root, rec[key])
            except ValueError as exc:
                raise ReleaseError(f"{where}: field {key!r}: {exc}") from None
    for key in ("Map_Difficulty", "Query_Difficulty"):
        if not isinstance(rec[key], str) or rec[key].lower() not in _LEVEL_NAMES:
            raise ReleaseError(f"{where}: field {key!r} must be Easy, Medium or Hard")
    for key in ("routes", *_INT_LISTS):
        if key not in rec:
            continue
        kind, noun = (str, "strings") if key == "routes" else (int, "integers")
        value = rec[key]
        if not isinstance(value, list) or not all(
            isinstance(x, kind) and not isinstance(x, bool) for x in value
        ):
            raise ReleaseError(f"{where}: field {key!r} must be a list of {noun}")
        if len(value) != len(rec["routes"]):
            raise ReleaseError(f"{where}: field {key!r} must have one entry per route")
    rank = rec.get(layout.rank)
    if rank is not None and (not isinstance(rank, int) or isinstance(rank, bool)):
        raise ReleaseError(f"{where}: field {layout.rank!r} must be an integer")
    if criteria:
        weights = rec.get("weights")
        if weights is not None and not (
            isinstance(weights, list)
            and len(weights) == len(CRITERIA)
            and all(_is_number(w) for w in weights)
        ):
            raise ReleaseError(
                f"{where}: field 'weights' must be a list of {len(CRITERIA)} numbers"
            )
        for key in TOTAL_FIELDS:
            value = rec.get(key)
            if value is not None and not _is_number(value):
                raise ReleaseError(f"{where}: field {key!r} must be a number")
    return sorted(k for k in rec if k not in known)


def _query_files(root: Path) -> list[tuple[str, str, str, Path]]:
    """``(scenario, split, category, path)`` of every query file, in registry order."""
    found: list[tuple[str, str, str, Path]] = []
    for scenario in LAYOUTS:
        for folder in sorted(p for p in (root / scenario / "data").glob("*") if p.is_dir()):
            if folder.name in _SKIPPED_FOLDERS:
                continue
            split = _FOLDER_SPLITS.get(folder.name)
            if split is None:
                raise ReleaseError(f"{folder}: expected training_set or test_set")
            for path in sorted(folder.glob("*.json")):
                safe_join(root, path.relative_to(root).as_posix())  # no link out of the release
                category = _parse_query_file(path, scenario, folder.name)
                found.append((scenario, split, category, path))
    if not found:
        raise ReleaseError(
            f"{root}: no MapTab query files under <scenario>/data/training_set|test_set/"
        )
    order = {c.name: i for i, c in enumerate(RP_CATEGORIES)}
    found.sort(key=lambda f: (f[0], f[1], order[f[2]], f[3].name))
    return found


def import_maptab_release(
    release_dir: str | Path, out_dir: str | Path, *, warn: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """A maptab dataset (maps + ``rp.jsonl``) from a MapTab release folder; returns its manifest.

    Both scenarios, in the release's own field names (:data:`LAYOUTS`). Gold labels (routes,
    vertex and transfer counts, weights, totals) and the rank field are kept exactly as
    released; a travelmap record's transfer counts are 0 (no lines). Each label is also
    recomputed with the exact solver; the ids of queries whose recomputed label differs are
    listed in the manifest under ``options.label_mismatches``, and the repetition class
    (FR/PR/NR) is filled in only for criteria queries whose label matched. Record fields the
    layout does not define are counted under ``options.unread_fields``. Tables come from the
    records' ``edge_tab``/``vertex_tab`` JSON files and must be well-formed (SPEC 7); ``warn``
    gets one line per table with values outside the MapTab profile. The Mix_tab is derived
    (SPEC 5). A map's language (manifest entry and network ``meta``, which the renderer
    reads) is that of its station labels (:func:`labels_language`). Raises
    :class:`ReleaseError` naming the file and record on bad input.
    """
    root = Path(release_dir)
    records: list[tuple[str, str, str, Path, int, dict[str, Any]]] = []
    maps: dict[str, dict[str, Any]] = {}
    unread: dict[str, int] = defaultdict(int)
    for scenario, split, category, path in _query_files(root):
        layout = LAYOUTS[scenario]
        criteria = not RP_BY_NAME[category].criteria_free
        for n, rec in enumerate(_load_records(path)):
            for key in _check_record(root, path, n, rec, layout, criteria):
                unread[key] += 1
            map_id = f"{rec['country']}/{rec[layout.place]}"
            where = {
                "scenario": scenario,
                "split": split,
                "difficulty": rec["Map_Difficulty"].lower(),
            }
            info = maps.setdefault(map_id, dict(where))
            for key, value in where.items():
                if info[key] != value:
                    raise ReleaseError(
                        f"{path}: record {n}: map {map_id} has {key} {value!r} here "
                        f"but {info[key]!r} in an earlier record"
                    )
            info.setdefault("figure", rec["figure"])
            if "edge_tab" in rec:
                info.setdefault("edge_tab", rec["edge_tab"])
                info.setdefault("vertex_tab", rec["vertex_tab"])
            records.append((scenario, split, category, path, n, rec))

    writer = DatasetWriter(Path(out_dir), 0, {"source": "maptab-release"})
    networks: dict[str, tuple[Network, Network]] = {}
    for map_id, info in sorted(maps.items()):
        if "edge_tab" not in info:
            raise ReleaseError(f"{root}: map {map_id}: no record names its edge_tab/vertex_tab")
        edge_tab = safe_join(root, info["edge_tab"])
        vertex_tab = safe_join(root, info["vertex_tab"])
        problems = validate_tables(edge_tab, vertex_tab, info["scenario"], profile="maptab")
        error = first_error(problems)
        if error is not None:
            raise ReleaseError(error)
        if warn is not None:
            for line in profile_warnings(problems):
                warn(line)
        net = tables.read_network(edge_tab, vertex_tab, scenario=info["scenario"], map_id=map_id)
        net.meta["language"] = labels_language(net.label(s) for s in net.vertices)
        networks[map_id] = (net, net.with_attributes(vertices=tables.derive_mix(net)))
        image = safe_join(root, info["figure"])
        entry = MapEntry(
            id=map_id,
            scenario=info["scenario"],
            difficulty=info["difficulty"],
            split=info["split"],
            language=str(net.meta["language"]),
            source="maptab-release",
        )
        writer.add_map(net, entry, image=image if image.is_file() else None)

    queries: list[RPQuery] = []
    mismatches: list[str] = []
    counter: dict[str, int] = defaultdict(int)
    for scenario, split, category, path, n, rec in records:
        layout = LAYOUTS[scenario]
        map_id = f"{rec['country']}/{rec[layout.place]}"
        counter[map_id] += 1
        qid = f"{map_id}/rp-{counter[map_id]:05d}"
        q = _query(rec, layout, qid, map_id, scenario, split, category)
        net, mix = networks[map_id]
        try:
            gold = gold_label(net, mix, RP_BY_NAME[category], q.source, q.target, q.weights)
        except ValueError as exc:
            raise ReleaseError(f"{path}: record {n}: {exc}") from None
        label = gold.label()
        same = (
            label["routes"] == q.routes
            and label["route_vertex_numbers"] == q.route_vertex_numbers
            and label["transfer_vertex_numbers"] == q.transfer_vertex_numbers
            and (gold.totals or None) == (q.totals or None)
        )
        if not same:
            mismatches.append(q.id)
        elif not RP_BY_NAME[category].criteria_free:
            q.repetition = repetition_class(gold.routes, fewest_stations(net, q.source, q.target))
        queries.append(q)
    writer.options["label_mismatches"] = mismatches
    writer.options["unread_fields"] = dict(sorted(unread.items()))
    writer.add("rp", queries)
    return writer.finish()


def _query(
    rec: dict[str, Any],
    layout: RecordLayout,
    qid: str,
    map_id: str,
    scenario: str,
    split: str,
    category: str,
) -> RPQuery:
    criteria = not RP_BY_NAME[category].criteria_free
    totals = {k: rec[k] for k in TOTAL_FIELDS if rec.get(k) is not None} if criteria else None
    routes = list(rec["routes"])
    return RPQuery(
        id=qid,
        map_id=map_id,
        scenario=scenario,
        split=split,
        category=category,
        style=RELEASE_STYLE,
        question=rec["question"],
        source=rec[layout.source],
        target=rec[layout.target],
        routes=routes,
        route_vertex_numbers=list(rec["route_vertex_numbers"]),
        transfer_vertex_numbers=(
            list(rec["transfer_vertex_numbers"]) if layout.transfers else [0] * len(routes)
        ),
        map_difficulty=rec["Map_Difficulty"].lower(),
        query_difficulty=rec["Query_Difficulty"].lower(),
        weights=[float(w) for w in rec["weights"]] if criteria and rec.get("weights") else None,
        totals=totals or None,
        release_rank=rec.get(layout.rank),
    )
