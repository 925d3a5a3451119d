"""``maptab validate DATASET``: a whole dataset checked end to end (SPEC 7, 16).

1. the manifest's shape (:func:`maptab.io.dataset.check_manifest`);
2. every file against the manifest's SHA-256, no file missing, none unlisted, none leading
   outside the folder (:meth:`maptab.io.dataset.Dataset.verify`);
3. every map: ``network.json`` loads, and its Edge_tab / Vertex_tab pass the file, value
   and consistency checks of :func:`maptab.core.validate.validate_tables` (no value ranges for
   ReasonMap maps, which carry no attributes);
4. every record of each task kind's query file (``rp.jsonl``, ``qa.jsonl``,
   ``reasonmap.jsonl``, …) against its schema (the kind's ``decode``), its ``map_id``
   listed in the manifest and its table row indices in range;
5. gold labels re-derived on a seeded random sample per kind, by the kind's
   ``check_label``: route-planning routes, station and transfer counts and totals by the
   exact solver; QA answers from the stored parameters (rows without stored parameters
   are skipped, ``label_checkable``). ReasonMap references are not re-derived
   (several plans can be equally right). Queries
   the manifest lists under ``options.label_mismatches`` (an import's known differences)
   are skipped.

Each problem is one line naming the file (and line) at fault.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maptab.core.network import Network
from maptab.core.schema import RecordError, jsonl_byte_lines
from maptab.io.dataset import (
    TABLE_FILES,
    Dataset,
    DatasetError,
    json_object,
    read_table,
    row_reader,
)
from maptab.tasks.base import all_kinds

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


def validate_dataset(root: str | Path, *, sample: int = 200, seed: int = 0) -> DatasetReport:
    """Check the dataset at ``root`` (module docstring); ``sample`` gold labels per kind are
    re-derived. A manifest that cannot be read raises :class:`DatasetError`."""
    ds = Dataset(root, verify=False)
    report = DatasetReport(files=len(ds.files))
    for problem in ds.verify():
        report.add(f"{ds.root}/{problem}")
    networks: dict[str, Network] = {}
    rows: dict[str, int | None] = {}  # None: the map's tables are unreadable (reported)
    for map_id in ds.maps:
        report.maps += 1
        rows.update({f"{map_id}/{k}": None for k in TABLE_FILES})
        try:
            networks[map_id] = ds.network(map_id)
            rows.update(_check_tables(ds, map_id, report))
        except DatasetError as exc:
            report.add(str(exc))
    skip = set(ds.manifest["options"].get("label_mismatches") or ())
    rng = random.Random(seed)
    kinds = all_kinds()
    picked = {k.name: _Reservoir(sample, rng) for k in kinds if k.samples.check_label is not None}
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
                if not _check_record(ds, record, rows, where, report):
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
            problem = kind.samples.check_label(record, networks[record.map_id])  # type: ignore[misc]
            if problem:
                report.add(f"{where}: {problem}")
    return report


def _check_tables(ds: Dataset, map_id: str, report: DatasetReport) -> dict[str, int | None]:
    """Validate the map's Edge_tab / Vertex_tab; returns ``{"<map>/<table>": rows}``."""
    from maptab.core.validate import validate_tables

    entry = ds.maps[map_id]
    edges, vertices = ds.table_path(map_id, "edges"), ds.table_path(map_id, "vertices")
    # ReasonMap maps carry no attributes (SPEC 14): their zeros are not SPEC 6 values
    values = entry.source != "reasonmap"
    for p in validate_tables(edges, vertices, entry.scenario, values=values):  # type: ignore[arg-type]
        report.add(str(p))
    return {f"{map_id}/{k}": len(read_table(ds.table_path(map_id, k)).rows) for k in TABLE_FILES}


def _check_record(
    ds: Dataset,
    record: Any,
    table_rows: dict[str, int | None],
    where: str,
    report: DatasetReport,
) -> bool:
    """Whether a record's map is in the manifest (its table row indices are checked
    too); a problem is reported."""
    if record.map_id not in ds.maps:
        report.add(f"{where}: map {record.map_id!r} is not in the manifest")
        return False
    for table, order in getattr(record, "tables", {}).items():
        key = f"{record.map_id}/{table}"
        count = table_rows.get(key)
        if key not in table_rows:
            report.add(f"{where}: field 'tables': unknown table {table!r}")
        elif count is not None and any(not 0 <= i < count for i in order):
            report.add(f"{where}: field 'tables.{table}': a row index is out of range")
    return True
