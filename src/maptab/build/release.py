"""The MapTab release layout: export a maptab dataset to it and import it back (issue 3.7).

The layout (as in MapTab's released sample)::

    <scenario>/images/<group>/<map>.png
    <scenario>/tabulars/<group>/<map>_edge.json|.csv      Edge_tab
    <scenario>/tabulars/<group>/<map>_vertex.json|.csv    Vertex_tab
    <scenario>/tabulars/<group>/<map>_vertex2.json|.csv   Mix_tab
    <scenario>/data/<split>_set/<scenario>_shortest_path_query_<kind>_<split>_set.json

``<group>/<map>`` is the map id (``america/cleveland``); a map id without ``/`` goes to the
group ``synthetic``. ``<kind>`` names the RP category (:data:`CATEGORY_KINDS`). Each query
file is a JSON list of records with MapTab's fields (``country``, ``city``, ``figure``,
``edge_tab``, ``vertex_tab``, ``station_1``, ``station_2``, ``Map_Difficulty``,
``Query_Difficulty``, ``question``, ``routes``, ``route_vertex_numbers``,
``transfer_vertex_numbers``, and for criteria categories ``weights`` and the four totals).
MapTab's ``shortest_route_vertex_numbers_rank`` is not defined by the paper; it is neither
written nor read (``docs/import-export.md``).
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

from maptab import tables
from maptab.build.queries import gold_label, repetition_class
from maptab.dataset import Dataset, DatasetWriter, MapEntry, safe_join
from maptab.errors import MaptabError
from maptab.limits import read_json
from maptab.network import Network
from maptab.schema import CRITERIA, RP_BY_NAME, RP_CATEGORIES, TOTAL_FIELDS, RPCategory, RPQuery
from maptab.solver import fewest_stations

DEFAULT_GROUP = "synthetic"
RELEASE_STYLE = "release"
TAB_SUFFIX = {"edges": "edge", "vertices": "vertex", "mix": "vertex2"}


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
    """``<scenario>_shortest_path_query_<kind>_<split>_set.json``."""
    return f"{scenario}_shortest_path_query_{CATEGORY_KINDS[category]}_{split}_set.json"


def _group_and_name(map_id: str) -> tuple[str, str]:
    group, _, name = map_id.rpartition("/")
    return group or DEFAULT_GROUP, name


def _dump(data: Any, path: Path) -> None:
    """JSON as MapTab writes its query files: 4-space indent, no trailing newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=4), encoding="utf-8", newline="\n")


# --------------------------------------------------------------------------- export
def export_maptab_release(dataset_dir: str | Path, out_dir: str | Path) -> Path:
    """Write the RP part of a dataset in the MapTab release layout; returns ``out_dir``.

    Images missing from the dataset stay missing (the ``figure`` path is still written).
    Difficulty labels are capitalised (``Easy``/``Medium``/``Hard``) as in the release.
    """
    ds = Dataset(dataset_dir)
    out = Path(out_dir)
    paths: dict[str, dict[str, str]] = {}
    for map_id, entry in ds.maps.items():
        group, name = _group_and_name(map_id)
        base = f"{entry.scenario}/tabulars/{group}/{name}"
        figure = f"{entry.scenario}/images/{group}/{name}.png"
        paths[map_id] = {"figure": figure, **{k: f"{base}_{s}.json" for k, s in TAB_SUFFIX.items()}}
        net = ds.network(map_id)
        rows = {
            "edges": tables.edge_rows(net),
            "vertices": tables.vertex_rows(net),
            "mix": tables.mix_rows(net),
        }
        for kind, rel in paths[map_id].items():
            if kind == "figure":
                continue
            target = safe_join(out, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            tables.write_json(rows[kind], target)
            shutil.copyfile(ds.table_path(map_id, kind), target.with_suffix(".csv"))
        image = ds.image_path(map_id)
        if image is not None:
            target = safe_join(out, figure)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(image, target)
    files: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for q in ds.rp():
        files[(q.scenario, q.split, q.category)].append(_record(q, paths[q.map_id]))
    for (scenario, split, category), records in sorted(files.items()):
        _dump(
            records,
            out / scenario / "data" / f"{split}_set" / query_file_name(scenario, category, split),
        )
    return out


def _record(q: RPQuery, paths: dict[str, str]) -> dict[str, Any]:
    category = RP_BY_NAME[q.category]
    country, city = _group_and_name(q.map_id)
    rec: dict[str, Any] = {"country": country, "city": city, "figure": paths["figure"]}
    if category.items == "vertex":
        rec["vertex_tab"] = paths["mix"]
    else:
        rec["edge_tab"] = paths["edges"]
        rec["vertex_tab"] = paths["vertices"]
    rec.update(
        station_1=q.source,
        station_2=q.target,
        Map_Difficulty=q.map_difficulty.capitalize(),
        Query_Difficulty=q.query_difficulty.capitalize(),
        question=q.question,
        routes=list(q.routes),
        route_vertex_numbers=list(q.route_vertex_numbers),
        transfer_vertex_numbers=list(q.transfer_vertex_numbers),
    )
    if not category.criteria_free:
        rec["weights"] = list(q.weights or [])
        for k in TOTAL_FIELDS:
            rec[k] = (q.totals or {}).get(k)
    return rec


# --------------------------------------------------------------------------- import
def _parse_query_file(path: Path, scenario: str, split: str) -> str:
    """The RP category of a release query file, from its name."""
    prefix, suffix = f"{scenario}_shortest_path_query_", f"_{split}_set.json"
    kind = path.name[len(prefix) : -len(suffix)]
    if (
        not (path.name.startswith(prefix) and path.name.endswith(suffix))
        or kind not in KIND_CATEGORIES
    ):
        raise ReleaseError(f"{path}: not a MapTab query file name (unknown kind {kind!r})")
    return KIND_CATEGORIES[kind]


def _load_records(path: Path) -> list[dict[str, Any]]:
    data = read_json(path, error=ReleaseError)  # issue 10: regular file, size and depth limits
    if not isinstance(data, list):
        raise ReleaseError(f"{path}: expected a JSON list of query records")
    return data


_REQUIRED = (
    "country",
    "city",
    "figure",
    "vertex_tab",
    "station_1",
    "station_2",
    "Map_Difficulty",
    "Query_Difficulty",
    "question",
    "routes",
    "route_vertex_numbers",
    "transfer_vertex_numbers",
)


_TEXT_FIELDS = ("country", "city", "figure", "vertex_tab", "station_1", "station_2", "question")
_LEVEL_NAMES = ("easy", "medium", "hard")


def _check_record(root: Path, path: Path, n: int, rec: Any, criteria: bool) -> None:
    """Raise :class:`ReleaseError` naming ``path``, record ``n`` and the field at fault: a
    missing or mistyped field, an unknown difficulty level, a file path leaving ``root``."""
    where = f"{path}: record {n}"
    if not isinstance(rec, dict):
        raise ReleaseError(f"{where}: expected a JSON object, got {type(rec).__name__}")
    missing = [k for k in _REQUIRED if k not in rec]
    if missing:
        raise ReleaseError(f"{where}: missing field(s) {', '.join(missing)}")
    for key in (*_TEXT_FIELDS, *(("edge_tab",) if "edge_tab" in rec else ())):
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
    lists = {"routes": str, "route_vertex_numbers": int, "transfer_vertex_numbers": int}
    for key, kind in lists.items():
        noun = "strings" if kind is str else "integers"
        value = rec[key]
        if not isinstance(value, list) or not all(
            isinstance(x, kind) and not isinstance(x, bool) for x in value
        ):
            raise ReleaseError(f"{where}: field {key!r} must be a list of {noun}")
    if criteria:
        weights = rec.get("weights")
        if weights is not None and not (
            isinstance(weights, list)
            and len(weights) == len(CRITERIA)
            and all(isinstance(w, int | float) and not isinstance(w, bool) for w in weights)
        ):
            raise ReleaseError(
                f"{where}: field 'weights' must be a list of {len(CRITERIA)} numbers"
            )
        for key in TOTAL_FIELDS:
            value = rec.get(key)
            if value is not None and (
                not isinstance(value, int | float) or isinstance(value, bool)
            ):
                raise ReleaseError(f"{where}: field {key!r} must be a number")


def import_maptab_release(release_dir: str | Path, out_dir: str | Path) -> dict[str, Any]:
    """A maptab dataset (maps + ``rp.jsonl``) from a MapTab release folder; returns its manifest.

    Gold labels (routes, vertex and transfer counts, weights, totals) are kept exactly as
    released. Each one is also recomputed with the exact solver; the ids of queries whose
    recomputed label differs are listed in the manifest under ``options.label_mismatches``,
    and the repetition class (FR/PR/NR) is filled in only for criteria queries whose label
    matched. Tables come from the records' ``edge_tab``/``vertex_tab`` JSON files; the Mix_tab
    is derived (SPEC 5). Raises :class:`ReleaseError` naming the file and record on bad input.
    """
    root = Path(release_dir)
    found: list[tuple[str, str, str, Path]] = []
    for scenario in ("metromap", "travelmap"):
        for split_dir in sorted((root / scenario / "data").glob("*_set")):
            split = split_dir.name.removesuffix("_set")
            if split not in ("train", "test"):
                raise ReleaseError(f"{split_dir}: expected train_set or test_set")
            for path in sorted(split_dir.glob("*.json")):
                safe_join(root, path.relative_to(root).as_posix())  # issue 10: no link out
                found.append((scenario, split, _parse_query_file(path, scenario, split), path))
    if not found:
        raise ReleaseError(f"{root}: no MapTab query files under <scenario>/data/<split>_set/")
    order = {c.name: i for i, c in enumerate(RP_CATEGORIES)}
    found.sort(key=lambda f: (f[0], f[1], order[f[2]]))

    records: list[tuple[str, str, str, Path, int, dict[str, Any]]] = []
    maps: dict[str, dict[str, Any]] = {}
    for (
        scenario,
        split,
        category,
        path,
    ) in found:
        criteria = not RP_BY_NAME[category].criteria_free
        for n, rec in enumerate(_load_records(path)):
            _check_record(root, path, n, rec, criteria)
            map_id = f"{rec['country']}/{rec['city']}"
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
        net = tables.read_network(
            safe_join(root, info["edge_tab"]), safe_join(root, info["vertex_tab"]), map_id=map_id
        )
        networks[map_id] = (net, net.with_attributes(vertices=tables.derive_mix(net)))
        image = safe_join(root, info["figure"])
        entry = MapEntry(
            id=map_id,
            scenario=info["scenario"],
            difficulty=info["difficulty"],
            split=info["split"],
            source="maptab-release",
        )
        writer.add_map(net, entry, image=image if image.is_file() else None)

    queries: list[RPQuery] = []
    mismatches: list[str] = []
    counter: dict[str, int] = defaultdict(int)
    for scenario, split, category, path, n, rec in records:
        map_id = f"{rec['country']}/{rec['city']}"
        counter[map_id] += 1
        q = _query(rec, f"{map_id}/rp-{counter[map_id]:05d}", map_id, scenario, split, category)
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
    writer.add("rp", queries)
    return writer.finish()


def _query(
    rec: dict[str, Any], qid: str, map_id: str, scenario: str, split: str, category: str
) -> RPQuery:
    criteria = not RP_BY_NAME[category].criteria_free
    totals = {k: rec[k] for k in TOTAL_FIELDS if rec.get(k) is not None} if criteria else None
    return RPQuery(
        id=qid,
        map_id=map_id,
        scenario=scenario,
        split=split,
        category=category,
        style=RELEASE_STYLE,
        question=rec["question"],
        source=rec["station_1"],
        target=rec["station_2"],
        routes=list(rec["routes"]),
        route_vertex_numbers=list(rec["route_vertex_numbers"]),
        transfer_vertex_numbers=list(rec["transfer_vertex_numbers"]),
        map_difficulty=rec["Map_Difficulty"].lower(),
        query_difficulty=rec["Query_Difficulty"].lower(),
        weights=[float(w) for w in rec["weights"]] if criteria and rec.get("weights") else None,
        totals=totals or None,
    )
