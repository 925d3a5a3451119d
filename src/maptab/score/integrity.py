"""``maptab validate DATASET``: a whole dataset checked end to end (SPEC 7, 16).

1. the manifest's shape (:func:`maptab.io.dataset.check_manifest`);
2. every file against the manifest's SHA-256, no file missing, none unlisted, none leading
   outside the folder (:meth:`maptab.io.dataset.Dataset.verify`);
3. every map: ``network.json`` loads, and its Edge_tab / Vertex_tab pass the file, value
   and consistency checks of :func:`maptab.core.validate.validate_tables`;
   ``network.json`` (what gold labels are computed on) has the stations, edges and values of
   those tables; its ``image.png``, when present, decodes;
4. every record of each task kind's query file (``rp.jsonl``, ``qa.jsonl``,
   ``reasonmap.jsonl``, …): its schema (the kind's ``decode``), its ``map_id`` listed in
   the manifest, its table row indices in range, its id unique (and every sample id, over
   all files), every number finite, and the fields that name the map's parts
   (:func:`record_problem`): stations on the map, gold routes that are paths on it;
5. gold labels re-derived on a seeded random sample per kind, by the kind's
   ``check_label``: route-planning routes, station and transfer counts and totals by the
   exact solver; QA answers from the stored parameters (rows without stored parameters
   are skipped, ``label_checkable``). ReasonMap references are not re-derived
   (several plans can be equally right). Queries
   the manifest lists under ``options.label_mismatches`` (an import's known differences)
   are skipped, and so are records with a problem of step 4.

Each problem is one line naming the file, line and field at fault. :func:`export_problem`
runs the checks an export relies on (ids, numbers, images) before anything is written.
"""

from __future__ import annotations

import math
import random
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maptab._limits import non_finite_field, open_image
from maptab.core.network import Edge, Network, Vertex, table_name
from maptab.core.schema import RecordError, jsonl_byte_lines
from maptab.io.dataset import (
    TABLE_FILES,
    Dataset,
    DatasetError,
    json_object,
    read_table,
    row_reader,
)
from maptab.tasks.base import TaskKind, all_kinds

MAX_PROBLEMS = 200
"""Problems reported before the check stops (a broken file would otherwise list every row)."""


@dataclass
class DatasetReport:
    """What :func:`validate_dataset` checked and the problems it found."""

    files: int = 0
    maps: int = 0
    records: int = 0
    gold_checked: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, problem: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)


class _Reservoir:
    """A uniform random sample of ``size`` items of a stream, in constant memory
    (reservoir sampling, Algorithm R); the same seed and stream give the same sample."""

    def __init__(self, size: int, rng: random.Random) -> None:
        self.size, self.rng = size, rng
        self.items: list[Any] = []
        self.seen = 0

    def offer(self, item: Any) -> None:
        self.seen += 1
        if len(self.items) < self.size:
            self.items.append(item)
        else:
            j = self.rng.randrange(self.seen)
            if j < self.size:
                self.items[j] = item


def validate_dataset(
    root: str | Path, *, sample: int = 200, seed: int = 0, profile: str | None = None
) -> DatasetReport:
    """Check the dataset at ``root`` (module docstring); ``sample`` gold labels per kind are
    re-derived; ``profile`` (``"maptab"``) also lists table values outside that profile
    (SPEC 7; not for ReasonMap maps, which carry no attributes). A manifest that cannot be
    read raises :class:`DatasetError`."""
    ds = Dataset(root, verify=False)
    report = DatasetReport(files=len(ds.files))
    for problem in ds.verify():
        report.add(f"{ds.root}/{problem}")
    networks: dict[str, Network] = {}  # maps whose network.json is sound
    rows: dict[str, int | None] = {}  # None: the map's tables are unreadable (reported)
    for map_id in ds.maps:
        report.maps += 1
        rows.update({f"{map_id}/{k}": None for k in TABLE_FILES})
        try:
            ds.map_dir(map_id)
        except DatasetError as exc:  # its folder leads outside the dataset
            report.add(str(exc))
            continue
        network = tables = None
        try:
            network = ds.network(map_id)
        except DatasetError as exc:
            report.add(str(exc))
        try:
            counts, tables = _check_tables(ds, map_id, report, profile)
            rows.update(counts)
        except DatasetError as exc:
            report.add(str(exc))
        if network is not None:
            problem = network_problem(network, tables) if tables is not None else None
            if problem:
                report.add(f"{ds.root / 'maps' / map_id / 'network.json'}: {problem}")
            else:
                networks[map_id] = network
        problem = _map_image_problem(ds, map_id)
        if problem:
            report.add(problem)
    skip = set(ds.manifest["options"].get("label_mismatches") or ())
    rng = random.Random(seed)
    kinds = all_kinds()
    picked = {k.name: _Reservoir(sample, rng) for k in kinds if k.samples.check_label is not None}
    ids = _Ids()
    for kind in kinds:
        name = kind.samples.file
        if not ds.has(name):
            continue
        try:
            path = ds.file(name)
            read = row_reader(kind)
            for n, _, line in jsonl_byte_lines(path, error=DatasetError):
                where = f"{ds.root / name}:{n}"
                try:
                    record = read(line, f"{path}:{n}")
                except RecordError as exc:
                    report.records += 1
                    report.add(f"{where}: {exc}")
                    continue
                if record is None:
                    continue
                report.records += 1
                problem = ids.problem(kind, record, name, n) or value_problem(record, line, where)
                if problem:
                    report.add(f"{where}: {problem}")
                    continue
                if not _check_record(ds, record, rows, where, report):
                    continue
                network = networks.get(record.map_id)
                problem = record_problem(kind, record, network) if network is not None else None
                if problem:
                    report.add(f"{where}: {problem}")
                    continue
                if (
                    kind.name in picked
                    and record.id not in skip
                    and kind.samples.label_checkable(json_object(line, f"{path}:{n}"))
                ):
                    picked[kind.name].offer((where, record))
        except DatasetError as exc:
            report.add(str(exc))
    for kind in kinds:
        for where, record in picked[kind.name].items if kind.name in picked else ():
            if record.map_id not in networks:
                continue  # its network.json is broken, already reported
            report.gold_checked += 1
            try:
                problem = kind.samples.check_label(record, networks[record.map_id])  # type: ignore[misc]
            except IndexError:  # the solver found no route (a map cut in two)
                problem = (
                    f"gold label cannot be re-derived: no route between its stations "
                    f"on map {record.map_id!r}"
                )
            if problem:
                report.add(f"{where}: {problem}")
    return report


def _check_tables(
    ds: Dataset, map_id: str, report: DatasetReport, profile: str | None = None
) -> tuple[dict[str, int | None], Network | None]:
    """Validate the map's Edge_tab / Vertex_tab: ``({"<map>/<table>": rows}, the network
    the tables describe)``, the network ``None`` when the tables are not well-formed."""
    from maptab.core.tables import parse_tables
    from maptab.core.validate import validate_tables

    entry = ds.maps[map_id]
    edges, vertices = ds.table_path(map_id, "edges"), ds.table_path(map_id, "vertices")
    # ReasonMap maps carry no attributes (SPEC 14): their zeros are no profile's values
    profile = profile if entry.source != "reasonmap" else None
    problems = validate_tables(edges, vertices, entry.scenario, profile=profile)
    for p in problems:
        report.add(str(p))
    tables = None
    if not any(getattr(p, "level", "error") == "error" for p in problems):
        tables = parse_tables(edges, vertices, entry.scenario).network  # type: ignore[arg-type]
    counts: dict[str, int | None] = {
        f"{map_id}/{k}": len(read_table(ds.table_path(map_id, k)).rows) for k in TABLE_FILES
    }
    return counts, tables


def _check_record(
    ds: Dataset,
    record: Any,
    table_rows: dict[str, int | None],
    where: str,
    report: DatasetReport,
) -> bool:
    """Whether a record's map is in the manifest and its table row indices are in range;
    a problem is reported."""
    if record.map_id not in ds.maps:
        report.add(f"{where}: map {record.map_id!r} is not in the manifest")
        return False
    ok = True
    for table, order in getattr(record, "tables", {}).items():
        key = f"{record.map_id}/{table}"
        count = table_rows.get(key)
        if key not in table_rows:
            report.add(f"{where}: field 'tables': unknown table {table!r}")
            ok = False
        elif count is not None and any(not 0 <= i < count for i in order):
            report.add(f"{where}: field 'tables.{table}': a row index is out of range")
            ok = False
    return ok


# --------------------------------------------------------------------------- every record
class _Ids:
    """Record ids seen so far: each unique within its file, and every sample id (a row of
    a kind with variants gives ``<id>/<variant>``) unique over the dataset, since runs,
    scores and exports are keyed by it."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], int] = {}  # (file, id) -> line
        self.samples: dict[str, str] = {}  # sample id -> "file:line"

    def problem(self, kind: TaskKind, record: Any, file: str, line: int) -> str | None:
        """Why ``record`` (line ``line`` of ``file``) repeats an id, or ``None``."""
        first = self.rows.setdefault((file, record.id), line)
        if first != line:
            return f"field 'id': duplicate id {record.id!r} (first on line {first})"
        for sid, _ in kind.sample_ids(record.id):
            other = self.samples.setdefault(sid, f"{file}:{line}")
            if other != f"{file}:{line}":
                return f"field 'id': sample id {sid!r} is also one of {other}"
        return None


# a JSON number that is not finite can only be written NaN, Infinity, with a 3-digit
# exponent or with 300 digits or more; lines without any of these are not decoded again
_MAYBE_NOT_FINITE = re.compile(rb"NaN|Infinity|[eE]\+?[0-9]{3}|[0-9]{300}")


def value_problem(record: Any, line: bytes, where: str) -> str | None:
    """A number of the row ``line`` (at ``where``) that is not finite, in any field, or
    criterion ``weights`` that are not four non-negative numbers summing to 1 (SPEC 3);
    ``None`` when there is neither. Needs no map."""
    if _MAYBE_NOT_FINITE.search(line):
        at = non_finite_field(json_object(line, where))
        if at is not None:
            return f"field {at!r}: not a finite number"
    weights = getattr(record, "weights", None)
    if isinstance(weights, list) and len(weights) == 4:
        from maptab.core.costs import CostError, Weights

        try:
            Weights(*weights)
        except (CostError, TypeError) as exc:
            return f"field 'weights': {exc}"
    return None


STATION_FIELDS = ("source", "target", "station_1", "station_2")
"""Record fields that name one station of the record's map (any task kind)."""


def record_problem(kind: TaskKind, record: Any, network: Network) -> str | None:
    """What in ``record`` does not fit its map ``network``, or ``None``: a station field
    (:data:`STATION_FIELDS`) that names no station of the map; MapTab gold ``routes``
    (route strings, SPEC 4) that are not simple paths on the map from ``source`` to
    ``target``, or whose ``route_vertex_numbers`` / ``transfer_vertex_numbers`` do not
    count their stations and marks; ReasonMap reference ``routes`` (segments, SPEC 14) whose
    stops are not stations of the map on the segment's line, or that do not lead from
    ``station_1`` to ``station_2``. Then the kind's own ``check_record(record, network)``,
    when its :class:`~maptab.tasks.base.Samples` has one."""
    from maptab.score.verified import station_index

    index = station_index(network)
    for name in STATION_FIELDS:
        value = getattr(record, name, None)
        if isinstance(value, str) and network.resolve(value) is None:
            return f"field {name!r}: {value!r} is not a station of map {record.map_id!r}"
    routes = getattr(record, "routes", None)
    problem = None
    if isinstance(routes, list) and routes and all(isinstance(r, str) for r in routes):
        problem = _route_problem(record, routes, index)
    elif isinstance(routes, list) and all(isinstance(r, list) for r in routes):
        problem = _segments_problem(record, routes, index)
    if problem is None:
        own = getattr(kind.samples, "check_record", None)
        problem = own(record, network) if callable(own) else None
    return problem


def _route_problem(record: Any, routes: list[str], index: Any) -> str | None:
    """The first gold route string that is not a path of the map (``record_problem``)."""
    from maptab.score.verified import gold_routes

    network, map_id = index.network, record.map_id
    ends = [network.resolve(getattr(record, k, None) or "") for k in ("source", "target")]
    counts = {
        k: getattr(record, k, None) for k in ("route_vertex_numbers", "transfer_vertex_numbers")
    }
    for k, numbers in counts.items():
        if isinstance(numbers, list) and len(numbers) != len(routes):
            return f"field {k!r}: {len(numbers)} numbers for {len(routes)} routes"
    for i, (stations, marks) in enumerate(gold_routes(index, routes)):
        at = f"field 'routes[{i}]'"
        for s in stations:
            if s not in network.vertices:
                return f"{at}: {s!r} is not a station of map {map_id!r}"
        for a, b in zip(stations, stations[1:], strict=False):
            if (a, b) not in index.adjacent:
                return f"{at}: {a!r} and {b!r} are not adjacent on map {map_id!r}"
        if len(set(stations)) != len(stations):
            return f"{at}: passes a station twice (a route is a simple path, SPEC 4)"
        for end, (name, want) in zip(
            (stations[0], stations[-1]), (("source", ends[0]), ("target", ends[1])), strict=True
        ):
            if want is not None and end != want:
                return f"{at}: does not {'start' if name == 'source' else 'end'} at the {name}"
        for k, found in (
            ("route_vertex_numbers", len(stations)),
            ("transfer_vertex_numbers", len(marks)),
        ):
            numbers = counts[k]
            if isinstance(numbers, list) and numbers[i] != found:
                return f"field '{k}[{i}]': {numbers[i]!r}, but routes[{i}] has {found}"
    return None


def _segments_problem(record: Any, routes: list[list[Any]], index: Any) -> str | None:
    """The first reference segment whose stops are not on the map (``record_problem``)."""
    network, map_id = index.network, record.map_id
    ends = [network.resolve(getattr(record, k, None) or "") for k in ("station_1", "station_2")]
    lines = set(network.line_names)
    for i, route in enumerate(routes):
        stops: list[str] = []
        for j, seg in enumerate(route):
            if not isinstance(seg, dict):
                continue  # the schema checks the segments' shape
            at = f"field 'routes[{i}][{j}]"
            line = seg.get("route_name")
            if line not in lines:
                return f"{at}.route_name': {line!r} is not a line of map {map_id!r}"
            for key in ("departure_stop", "arrival_stop"):
                station = index.resolve(str(seg.get(key)))
                if station is None:
                    return f"{at}.{key}': {seg.get(key)!r} is not a station of map {map_id!r}"
                if line not in network.lines_of(station):
                    return f"{at}.{key}': {seg.get(key)!r} is not on line {line!r}"
                stops.append(station)
        for j in range(1, len(stops) - 1, 2):
            if stops[j] != stops[j + 1]:
                at = f"field 'routes[{i}][{j // 2 + 1}].departure_stop'"
                return f"{at}: not where the segment before arrives"
        if stops and None not in ends and (stops[0], stops[-1]) != tuple(ends):
            return f"field 'routes[{i}]': does not lead from station_1 to station_2"
    return None


# --------------------------------------------------------------------------- maps
_EDGE_VALUES = ("time", "price", "comfort", "reliability")
_VERTEX_VALUES = (*_EDGE_VALUES, "transfer_time")


def network_problem(network: Network, tables: Network) -> str | None:
    """How ``network.json`` differs from its map's Edge_tab / Vertex_tab (``tables``, the
    network they describe): a station or edge (with its line) that only one of them has, or
    another value; a value that is not finite. ``None`` when they agree."""
    mine = {table_name(k): v for k, v in network.vertices.items()}
    for i, (name, v) in enumerate(mine.items()):
        other = tables.vertices.get(name)
        if other is None:
            return f"field 'vertices[{i}]': station {name!r} is not in the Vertex_tab"
        problem = _values_problem(f"vertices[{i}]", v, other, _VERTEX_VALUES)
        if problem:
            return problem
        if tuple(v.lines) != tuple(other.lines):
            at = f"field 'vertices[{i}].lines'"
            return f"{at}: {list(v.lines)}, the Vertex_tab has {list(other.lines)}"
    for name in tables.vertices:
        if name not in mine:
            return f"field 'vertices': station {name!r} of the Vertex_tab is missing"
    theirs = {_edge_key(e, lambda s: s): e for e in tables.edges}
    seen = set()
    for i, e in enumerate(network.edges):
        key = _edge_key(e, table_name)
        seen.add(key)
        other = theirs.get(key)
        if other is None:
            return f"field 'edges[{i}]': edge {e.name!r}{_on(e)} is not in the Edge_tab"
        problem = _values_problem(f"edges[{i}]", e, other, _EDGE_VALUES)
        if problem:
            return problem
    for key, e in theirs.items():
        if key not in seen:
            return f"field 'edges': edge {e.name!r}{_on(e)} of the Edge_tab is missing"
    return None


def _edge_key(e: Edge, name: Any) -> tuple[frozenset[str], str | None]:
    return frozenset((name(e.u), name(e.v))), e.line


def _on(e: Edge) -> str:
    return f" on line {e.line!r}" if e.line is not None else ""


def _values_problem(
    at: str, item: Edge | Vertex, other: Edge | Vertex, names: tuple[str, ...]
) -> str | None:
    for name in names:
        a, b = getattr(item, name), getattr(other, name)
        if not math.isfinite(a):
            return f"field '{at}.{name}': not a finite number ({a})"
        if not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9):
            return f"field '{at}.{name}': {a}, the table has {b}"
    return None


def image_problem(path: Path) -> str | None:
    """Why the image file ``path`` does not decode (one line naming it), or ``None``."""
    try:
        with open_image(path, error=DatasetError) as im:
            im.verify()
    except DatasetError as exc:
        return str(exc)
    except (OSError, SyntaxError, ValueError, EOFError, struct.error) as exc:
        return f"{path}: not a readable image ({exc})"
    return None


def _map_image_problem(ds: Dataset, map_id: str) -> str | None:
    """Why the map's ``image.png`` (when it has one) does not decode, or ``None``."""
    try:
        path = ds.image_path(map_id)
    except DatasetError as exc:
        return str(exc)
    return None if path is None else image_problem(path)


# --------------------------------------------------------------------------- exports
def export_problem(ds: Dataset, *, images: bool = True) -> str | None:
    """The first problem that would make an export of ``ds`` wrong, as one line naming file,
    line and field, or ``None``: a row its schema refuses, a repeated id or sample id, a
    number that is not finite, criterion weights that are not (SPEC 3), a record that does
    not fit its map (:func:`record_problem`) and, with ``images``, a map image that does not
    decode. Every record is read, no label re-derived; run before anything is written."""
    for problem in _export_problems(ds, images):
        return problem
    return None


def _export_problems(ds: Dataset, images: bool) -> Iterator[str]:
    ids = _Ids()
    for kind in all_kinds():
        name = kind.samples.file
        if not ds.has(name):
            continue
        path = ds.file(name)
        read = row_reader(kind)
        for n, _, line in jsonl_byte_lines(path, error=DatasetError):
            where = f"{ds.root / name}:{n}"
            try:
                record = read(line, where)
            except RecordError as exc:
                yield f"{where}: {exc}"
                return
            if record is None:
                continue
            problem = ids.problem(kind, record, name, n) or value_problem(record, line, where)
            if not problem and record.map_id in ds.maps:
                problem = record_problem(kind, record, ds.network(record.map_id))
            if problem:
                yield f"{where}: {problem}"
                return
    for map_id in ds.maps if images else ():
        problem = _map_image_problem(ds, map_id)
        if problem:
            yield problem
            return
