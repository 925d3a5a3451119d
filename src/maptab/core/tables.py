"""MapTab attribute tables: Edge_tab, Vertex_tab and Mix_tab as CSV or JSON (SPEC 2, 5).

File formats (byte-compatible with MapTab's released files):

* **CSV**: UTF-8, ``\\n`` line ends, minimal quoting; a byte-order mark on metromap tables,
  none on travelmap tables (:data:`CSV_BOM`). Numbers per column: a column whose values are
  all whole is written in integers (``0``, travelmap ``18``); any other column writes every
  value as a float, in its shortest round-trip form with a decimal point (``2.5``,
  ``0.493151``, travelmap Comfort ``5.0``), never with an exponent. The ``Line`` cell of a
  station on several lines joins them with :data:`LINE_SEPARATOR`.
* **JSON**: a list of objects, two-space indentation, non-ASCII kept as is, no trailing
  newline. ``Line`` is a list. Metromap ``Transfer Time`` is a JSON integer when integral;
  every other number is a JSON float (``0.0``, travelmap ``21.0``), as in the released files
  of both scenarios.

Columns (SPEC 2): metromap Edge_tab ``Edge,Line,Time,Price,Comfort Level,Reliability`` and
Vertex_tab ``Vertex,Line,Time,Price,Comfort Level,Reliability,Transfer Time``; travelmap
drops ``Line`` and ``Transfer Time``. Mix_tab has the Vertex_tab columns.

Station names are written in their table spelling (:func:`maptab.core.network.table_name`: ``-``
becomes ``_``). On reading, an ``Edge`` cell with several ``-`` is split where both halves
are stations of the Vertex_tab.

Errors: every problem in a file is a :class:`TableError` naming the file, the row (the line
number for CSV, header = line 1; the 1-based position in the list for JSON) and the field.
:func:`parse_tables` collects all of them (used by :mod:`maptab.core.validate`); the ``read_*``
functions raise the first.
"""

from __future__ import annotations

import ast
import csv
import difflib
import io
import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

from maptab._limits import MAX_TABLE_BYTES, LimitError, read_bytes
from maptab.core.network import SCENARIOS, Edge, Network, Scenario, Vertex, table_name
from maptab.core.rounding import as_decimal, round_half_up
from maptab.errors import MaptabError

LINE_SEPARATOR = ";"
"""Separator of line names in the CSV ``Line`` cell of a transfer station (``Red;Blue``).

Reading also accepts ``,``, ``；``, ``，``, ``、`` and ``|``, and a bracketed list
(``['Red', 'Blue']`` or ``["Red", "Blue"]``), the forms other MapTab-style files use."""

_READ_SEPARATORS = re.compile(r"[;,；，、|]")

EDGE_COLUMNS: dict[str, tuple[str, ...]] = {
    "metromap": ("Edge", "Line", "Time", "Price", "Comfort Level", "Reliability"),
    "travelmap": ("Edge", "Time", "Price", "Comfort Level", "Reliability"),
}
VERTEX_COLUMNS: dict[str, tuple[str, ...]] = {
    "metromap": (
        "Vertex",
        "Line",
        "Time",
        "Price",
        "Comfort Level",
        "Reliability",
        "Transfer Time",
    ),
    "travelmap": ("Vertex", "Time", "Price", "Comfort Level", "Reliability"),
}
MIX_COLUMNS = VERTEX_COLUMNS

ATTRIBUTE_OF_COLUMN = {
    "Time": "time",
    "Price": "price",
    "Comfort Level": "comfort",
    "Reliability": "reliability",
    "Transfer Time": "transfer_time",
}
"""Table column -> :class:`~maptab.core.network.Edge` / :class:`~maptab.core.network.Vertex` field."""

INTEGER_COLUMNS: dict[tuple[str, str], frozenset[str]] = {
    ("metromap", "edge"): frozenset(),
    ("metromap", "vertex"): frozenset({"Transfer Time"}),
    ("travelmap", "edge"): frozenset(),
    ("travelmap", "vertex"): frozenset(),
}
"""Columns written as JSON integers when integral: metromap ``Transfer Time`` only, as in the
released files (MapTab's travelmap JSON tables write every number as a float, ``21.0``)."""

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class TableError(MaptabError):
    """A problem in a table file, located by file, row and field.

    ``row`` is the CSV line number (header = 1) or the 1-based position in a JSON list, or
    ``None`` for a problem of the whole file; ``field`` is a column name or ``None``.
    """

    def __init__(self, file: str, row: int | None, field: str | None, message: str) -> None:
        self.file, self.row, self.field, self.message = file, row, field, message
        super().__init__(location(file, row, field) + message)


def location(file: str, row: int | None, field: str | None) -> str:
    """The ``file:row: field: `` prefix of a problem message (parts that are ``None`` left out)."""
    where = file if row is None else f"{file}:{row}"
    return f"{where}: " + (f"{field}: " if field else "")


# ----------------------------------------------------------------------------- reading
@dataclass
class ParsedTables:
    """Result of the lenient reader :func:`parse_tables`.

    ``network`` holds every row that could be parsed (``None`` when a file is unusable);
    ``edge_rows[i]`` is the row of ``network.edges[i]`` and ``vertex_rows`` maps a station
    to its row. ``errors`` lists every problem found while reading, in file order.
    """

    edge_file: str
    vertex_file: str
    network: Network | None = None
    edge_rows: list[int] = field(default_factory=list)
    vertex_rows: dict[str, int] = field(default_factory=dict)
    errors: list[TableError] = field(default_factory=list)


Record = tuple[int, dict[str, Any]]


def _decode(path: Path, file: str) -> str:
    """Read ``path`` as UTF-8 text (a leading BOM is dropped), with a clear error otherwise.

    Only a regular file of at most :data:`~maptab._limits.MAX_TABLE_BYTES` is read (a FIFO
    or a device such as ``/dev/zero`` is refused before reading)."""
    try:
        data = read_bytes(path, MAX_TABLE_BYTES)
    except LimitError as exc:
        raise TableError(file, None, None, str(exc).removeprefix(f"{path}: ")) from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise TableError(file, None, None, "the file is UTF-16 text; save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start]
        raise TableError(
            file,
            line,
            None,
            f"the file is not UTF-8 text (byte 0x{bad:02x} at offset {exc.start}; "
            "it may be Latin-1 or Windows-1252): save it as UTF-8",
        ) from None
    if "\x00" in text:
        raise TableError(file, None, None, "the file contains NUL bytes; it is not a text table")
    if not text.strip():
        raise TableError(file, None, None, "the file is empty")
    return text


def _csv_records(text: str, file: str) -> tuple[list[str], list[Record]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[Record] = []
    header: list[str] | None = None
    start = 1
    try:
        for cells in reader:
            row, start = start, reader.line_num + 1
            if not cells or all(not c.strip() for c in cells):
                continue
            if header is None:
                header = [c.strip() for c in cells]
                continue
            if len(cells) != len(header):
                raise TableError(
                    file,
                    row,
                    None,
                    f"expected {len(header)} fields ({','.join(header)}), found {len(cells)}; "
                    "a name that contains a comma must be quoted",
                )
            records.append((row, dict(zip(header, cells, strict=True))))
    except csv.Error as exc:
        raise TableError(file, start, None, f"malformed CSV: {exc}") from None
    if header is None:
        raise TableError(file, None, None, "the file is empty")
    dup = sorted({c for c in header if header.count(c) > 1})
    if dup:
        raise TableError(file, 1, None, f"duplicate column(s) {', '.join(dup)}")
    return header, records


def _json_records(text: str, file: str) -> tuple[list[str], list[Record]]:
    def reject(const: str) -> Any:
        raise TableError(file, None, None, f"{const} is not allowed in a table (not a number)")

    try:
        data = json.loads(text, parse_constant=reject)
    except json.JSONDecodeError as exc:
        raise TableError(
            file, None, None, f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except (ValueError, RecursionError) as exc:  # an over-long integer, too deep nesting
        if isinstance(exc, TableError):
            raise
        raise TableError(file, None, None, f"malformed JSON: {exc}") from None
    if not isinstance(data, list):
        raise TableError(file, None, None, "expected a JSON list of row objects")
    header: dict[str, None] = {}
    records: list[Record] = []
    for i, item in enumerate(data, 1):
        if not isinstance(item, dict):
            raise TableError(file, i, None, f"expected an object, found {type(item).__name__}")
        header.update(dict.fromkeys(item))
        records.append((i, item))
    return list(header), records


def _load(path: str | os.PathLike[str]) -> tuple[str, list[str], list[Record]]:
    """``(file, columns, records)`` of a CSV or JSON table; file-level problems raise."""
    file = os.fspath(path)
    p = Path(path)
    suffix = p.suffix.lower()
    if p.is_dir():
        raise TableError(file, None, None, "is a directory, not a table file")
    if suffix not in (".csv", ".json"):
        raise TableError(file, None, None, f"unknown table format {p.suffix!r} (use .csv or .json)")
    text = _decode(p, file)
    header, records = (_csv_records if suffix == ".csv" else _json_records)(text, file)
    if not records:
        raise TableError(file, None, None, "the table has no data rows")
    return file, header, records


def _check_misspelt_metro(file: str, header: Sequence[str]) -> None:
    """A header without ``Line`` is a travelmap table, unless a column is a near miss of a
    metromap-only column (``Lines``, ``line``, ``Transfer time``): then say so, rather than
    reporting the table against the travelmap columns."""
    if "Line" in header:
        return
    known = set(EDGE_COLUMNS["travelmap"]) | set(VERTEX_COLUMNS["travelmap"])
    for col in header:
        if col in known:
            continue
        near = difflib.get_close_matches(col.casefold(), ["line", "transfer time"], 1, 0.7)
        if near:
            meant = "Line" if near[0] == "line" else "Transfer Time"
            raise TableError(
                file,
                1,
                col,
                f"unknown column; did you mean {meant!r}? Without a 'Line' column the table "
                "is read as a travelmap table",
            )


def _infer_scenario(header: Sequence[str]) -> Scenario:
    return "metromap" if "Line" in header else "travelmap"


def _check_columns(
    file: str, header: Sequence[str], expected: Sequence[str], scenario: str, table: str
) -> list[TableError]:
    """Problems with the columns: missing ones raise (the rows cannot be read), unexpected
    ones are returned (reported; their cells are ignored)."""
    expect = f"expected {','.join(expected)}"
    missing = [c for c in expected if c not in header]
    if missing:
        raise TableError(
            file,
            None,
            ", ".join(missing),
            f"missing column(s) in this {scenario} {table}; {expect}",
        )
    extra = [c for c in header if c not in expected]
    if not extra:
        return []
    return [
        TableError(
            file, None, ", ".join(extra), f"unexpected column(s) for a {scenario} {table}; {expect}"
        )
    ]


def _text(value: Any, file: str, row: int, col: str, errors: list[TableError]) -> str:
    if not isinstance(value, str):
        errors.append(TableError(file, row, col, f"expected text, found {json.dumps(value)}"))
        return ""
    text = value.strip()
    if not text:
        errors.append(TableError(file, row, col, "missing value"))
    return text


def _number(
    value: Any, file: str, row: int, col: str, errors: list[TableError], text: bool
) -> float:
    """A numeric cell as float (``text``: a CSV cell); problems are recorded and give NaN."""
    if isinstance(value, bool) or value is None or (isinstance(value, str) and not text):
        errors.append(TableError(file, row, col, f"expected a number, found {json.dumps(value)}"))
        return math.nan
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
    elif isinstance(value, str):
        cell = value.strip()
        if not cell:
            errors.append(TableError(file, row, col, "missing value"))
            return math.nan
        if not _NUMBER.fullmatch(cell):
            what = "NaN is not allowed" if cell.lower() == "nan" else f"not a number: {cell!r}"
            errors.append(TableError(file, row, col, what))
            return math.nan
        number = float(cell)
    else:
        errors.append(
            TableError(file, row, col, f"expected a number, found {type(value).__name__}")
        )
        return math.nan
    if not math.isfinite(number):
        shown = repr(value) if len(repr(value)) <= 20 else f"{repr(value)[:17]}..."
        errors.append(TableError(file, row, col, f"{shown} is not a finite number"))
        return math.nan
    return number


def split_lines(cell: Any) -> list[str]:
    """Line names of a ``Line`` cell: a JSON list, or CSV text joined by a separator."""
    if isinstance(cell, list):
        return [str(x).strip() for x in cell if str(x).strip()]
    if not isinstance(cell, str):
        return []
    text = cell.strip()
    if text.startswith("[") and text.endswith("]"):
        for parse in (json.loads, ast.literal_eval):
            try:
                items = parse(text)
            except (ValueError, SyntaxError):
                continue
            if isinstance(items, list) and all(isinstance(x, str) for x in items):
                return [x.strip() for x in items if x.strip()]
    return [p.strip() for p in _READ_SEPARATORS.split(text) if p.strip()]


def _lines(value: Any, file: str, row: int, errors: list[TableError]) -> list[str]:
    if not isinstance(value, list | str) or (
        isinstance(value, list) and not all(isinstance(x, str) for x in value)
    ):
        errors.append(TableError(file, row, "Line", "expected a line name or a list of line names"))
        return []
    listed = split_lines(value)
    names = list(dict.fromkeys(listed))
    if not names:
        errors.append(TableError(file, row, "Line", "missing value"))
    for name in names:
        if listed.count(name) > 1:  # MapTab B.5 step 1: a duplicate within one line
            errors.append(TableError(file, row, "Line", f"line {name!r} is listed twice"))
    return names


def _split_edge(
    cell: str, vocabulary: Iterable[str] | None, file: str, row: int, errors: list[TableError]
) -> tuple[str, str] | None:
    cuts = [i for i, ch in enumerate(cell) if ch == "-"]
    pairs = [(table_name(cell[:i]), table_name(cell[i + 1 :])) for i in cuts]
    pairs = [(a, b) for a, b in pairs if a and b]
    if len(pairs) == 1:
        return pairs[0]
    if vocabulary is not None and pairs:
        known = set(vocabulary)
        found = [(a, b) for a, b in pairs if a in known and b in known]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            errors.append(
                TableError(file, row, "Edge", f"{cell!r} splits into stations in several ways")
            )
            return None
    errors.append(
        TableError(
            file,
            row,
            "Edge",
            f"{cell!r} is not 'A-B' with two known station names "
            "(a '-' inside a name is written '_')",
        )
    )
    return None


def _parse_vertices(
    file: str, records: list[Record], scenario: Scenario, errors: list[TableError]
) -> list[tuple[int, Vertex, str]]:
    """``(row, vertex, original name)`` for every row; problems go to ``errors``."""
    text = file.lower().endswith(".csv")
    numeric = [c for c in VERTEX_COLUMNS[scenario] if c in ATTRIBUTE_OF_COLUMN]
    out = []
    for row, rec in records:
        if "Vertex" not in rec:
            errors.append(TableError(file, row, "Vertex", "missing value"))
            continue
        name = _text(rec["Vertex"], file, row, "Vertex", errors)
        lines = _lines(rec.get("Line"), file, row, errors) if scenario == "metromap" else []
        values = {
            ATTRIBUTE_OF_COLUMN[c]: _number(rec.get(c), file, row, c, errors, text) for c in numeric
        }
        if name:
            out.append((row, Vertex(table_name(name), tuple(lines), **values), name))
    return out


def _parse_edges(
    file: str,
    records: list[Record],
    scenario: Scenario,
    vocabulary: Iterable[str] | None,
    errors: list[TableError],
) -> list[tuple[int, Edge]]:
    """``(row, edge)`` per edge; a metromap row listing several lines gives one edge per line."""
    numeric = [c for c in EDGE_COLUMNS[scenario] if c in ATTRIBUTE_OF_COLUMN]
    vocab = list(vocabulary) if vocabulary is not None else None
    text = file.lower().endswith(".csv")
    out = []
    for row, rec in records:
        cell = _text(rec.get("Edge", ""), file, row, "Edge", errors)
        ends = _split_edge(cell, vocab, file, row, errors) if cell else None
        lines: list[str | None] = (
            list(_lines(rec.get("Line"), file, row, errors)) if scenario == "metromap" else [None]
        )
        values = {
            ATTRIBUTE_OF_COLUMN[c]: _number(rec.get(c), file, row, c, errors, text) for c in numeric
        }
        if ends is None:
            continue
        if ends[0] == ends[1]:
            errors.append(TableError(file, row, "Edge", f"{cell!r} joins a station to itself"))
            continue
        out.extend((row, Edge(ends[0], ends[1], line, **values)) for line in lines)
    return out


def _open_table(
    path: str | os.PathLike[str], kind: str, scenario: Scenario | None
) -> tuple[str, Scenario, list[Record], list[TableError]]:
    file, header, records = _load(path)
    if scenario is None:
        _check_misspelt_metro(file, header)
    scen = scenario or _infer_scenario(header)
    if scen not in SCENARIOS:
        raise TableError(
            file, None, None, f"unknown scenario {scen!r}; expected one of {SCENARIOS}"
        )
    expected = (EDGE_COLUMNS if kind == "edge" else VERTEX_COLUMNS)[scen]
    errors = _check_columns(
        file, header, expected, scen, "Edge_tab" if kind == "edge" else "Vertex_tab"
    )
    return file, scen, records, errors


def _raise_first(errors: list[TableError]) -> None:
    if errors:
        raise errors[0]


def read_vertices(path: str | os.PathLike[str], scenario: Scenario | None = None) -> list[Vertex]:
    """The rows of a Vertex_tab (or Mix_tab) file, CSV or JSON by extension.

    The scenario is inferred from the columns (a ``Line`` column means metromap) unless
    given. Raises :class:`TableError` on the first problem.
    """
    file, scen, records, errors = _open_table(path, "vertex", scenario)
    rows = _parse_vertices(file, records, scen, errors)
    _raise_first(errors)
    return [v for _, v, _ in rows]


def read_edges(path: str | os.PathLike[str], scenario: Scenario | None = None) -> list[Edge]:
    """The rows of an Edge_tab file (one :class:`Edge` per line listed in a row).

    Without the Vertex_tab, an ``Edge`` cell must contain exactly one ``-``; use
    :func:`read_network` to split names that contain hyphens. Raises :class:`TableError`.
    """
    file, scen, records, errors = _open_table(path, "edge", scenario)
    edges = _parse_edges(file, records, scen, None, errors)
    _raise_first(errors)
    return [e for _, e in edges]


def parse_tables(
    edges_path: str | os.PathLike[str],
    vertices_path: str | os.PathLike[str],
    scenario: Scenario | None = None,
    map_id: str = "",
) -> ParsedTables:
    """Read an Edge_tab and a Vertex_tab leniently, collecting every problem.

    Rows with problems are kept where possible (unparseable numbers become NaN) so that
    later checks can still run; duplicate stations keep their first row; edges to stations
    missing from the Vertex_tab are dropped and reported. Never raises :class:`TableError`.
    """
    parsed = ParsedTables(os.fspath(edges_path), os.fspath(vertices_path))
    errors = parsed.errors
    try:
        vfile, vscen, vrecords, verr = _open_table(vertices_path, "vertex", scenario)
    except TableError as exc:
        errors.append(exc)
        vrecords = None
    try:
        efile, escen, erecords, eerr = _open_table(edges_path, "edge", scenario)
    except TableError as exc:
        errors.append(exc)
        erecords = None
    if vrecords is None or erecords is None:
        return parsed
    if vscen != escen:
        errors.append(
            TableError(
                vfile,
                None,
                None,
                f"the Edge_tab is a {escen} table but the Vertex_tab is a {vscen} table "
                "(a Line column means metromap)",
            )
        )
        return parsed
    errors.extend(verr)
    vertices: dict[str, Vertex] = {}
    labels: dict[str, str] = {}
    for row, vertex, raw in _parse_vertices(vfile, vrecords, vscen, errors):
        if vertex.name in vertices:
            first = parsed.vertex_rows[vertex.name]
            errors.append(
                TableError(
                    vfile, row, "Vertex", f"duplicate station {raw!r} (first at row {first})"
                )
            )
            continue
        vertices[vertex.name] = vertex
        parsed.vertex_rows[vertex.name] = row
        if raw != vertex.name:
            labels[vertex.name] = raw
    errors.extend(eerr)
    edges: list[Edge] = []
    for row, edge in _parse_edges(efile, erecords, escen, vertices, errors):
        unknown = [s for s in (edge.u, edge.v) if s not in vertices]
        if unknown:
            errors.extend(
                TableError(
                    efile, row, "Edge", f"unknown station {s!r} (not in the Vertex_tab {vfile})"
                )
                for s in unknown
            )
            continue
        edges.append(edge)
        parsed.edge_rows.append(row)
    parsed.network = Network(escen, vertices, edges, map_id=map_id, labels=labels)
    return parsed


def read_network(
    edges_path: str | os.PathLike[str],
    vertices_path: str | os.PathLike[str],
    scenario: Scenario | None = None,
    map_id: str = "",
) -> Network:
    """A :class:`Network` from its Edge_tab and Vertex_tab files (CSV or JSON).

    The scenario is inferred (a ``Line`` column means metromap) unless given. Raises
    :class:`TableError` naming file, row and field of the first problem; does not run the
    consistency checks of SPEC 7 (see :func:`maptab.core.validate.validate_tables`).
    """
    parsed = parse_tables(edges_path, vertices_path, scenario, map_id)
    _raise_first(parsed.errors)
    assert parsed.network is not None
    return parsed.network


# ----------------------------------------------------------------------------- rows
def _typed(value: float, integer: bool) -> int | float:
    if integer and float(value).is_integer():
        return int(value)
    return float(value)


def edge_rows(network: Network) -> list[dict[str, Any]]:
    """Edge_tab rows (MapTab column names, table order); ``Line`` is a list on metromaps."""
    scenario = network.scenario
    ints = INTEGER_COLUMNS[(scenario, "edge")]
    rows = []
    for e in network.edges:
        row: dict[str, Any] = {"Edge": f"{table_name(e.u)}-{table_name(e.v)}"}
        for col in EDGE_COLUMNS[scenario][1:]:
            if col == "Line":
                row[col] = [e.line] if e.line is not None else []
            else:
                row[col] = _typed(getattr(e, ATTRIBUTE_OF_COLUMN[col]), col in ints)
        rows.append(row)
    return rows


def vertex_rows(network: Network) -> list[dict[str, Any]]:
    """Vertex_tab rows (MapTab column names, table order); ``Line`` is a list on metromaps."""
    scenario = network.scenario
    ints = INTEGER_COLUMNS[(scenario, "vertex")]
    rows = []
    for v in network.vertices.values():
        row: dict[str, Any] = {"Vertex": table_name(v.name)}
        for col in VERTEX_COLUMNS[scenario][1:]:
            if col == "Line":
                row[col] = list(v.lines)
            else:
                row[col] = _typed(getattr(v, ATTRIBUTE_OF_COLUMN[col]), col in ints)
        rows.append(row)
    return rows


def _round2_half_up(values: Sequence[float]) -> float:
    """Mean of ``values`` as written in the table (exact decimals), rounded half-up to 0.01."""
    total = sum((as_decimal(x) for x in values), Decimal(0))
    return round_half_up(total / len(values), 2)


MIX_FROM_EDGES: dict[str, tuple[str, ...]] = {"metromap": ("price",), "travelmap": ()}
"""Vertex fields that SPEC 6 fixes at 0 and Mix_tab fills from incident edges (SPEC 5)."""


def derive_mix(network: Network) -> dict[str, Vertex]:
    """The Mix_tab of SPEC 5: Vertex_tab rows, with each column that is constant 0 on vertices
    (metromap ``Price``) replaced by the mean over the station's incident Edge_tab rows
    (parallel edges of a shared track count once each), rounded half-up to 2 decimals.
    A station without edges keeps 0. Other columns keep the vertex value.
    """
    fields = MIX_FROM_EDGES[network.scenario]
    mix = {}
    for name, v in network.vertices.items():
        incident = network.adjacency.get(name, [])
        if not fields or not incident:
            mix[name] = v
            continue
        updates = {f: _round2_half_up([getattr(e, f) for e in incident]) for f in fields}
        mix[name] = Vertex(
            v.name,
            v.lines,
            updates.get("time", v.time),
            updates.get("price", v.price),
            updates.get("comfort", v.comfort),
            updates.get("reliability", v.reliability),
            v.transfer_time,
        )
    return mix


def mix_rows(network: Network) -> list[dict[str, Any]]:
    """Mix_tab rows (Vertex_tab columns, table order), see :func:`derive_mix`."""
    return vertex_rows(network.with_attributes(vertices=derive_mix(network)))


# ----------------------------------------------------------------------------- writing
CSV_BOM: dict[str, bool] = {"metromap": True, "travelmap": False}
"""Whether MapTab's released CSV tables of a scenario start with a UTF-8 byte-order mark."""


def _float_text(value: float) -> str:
    """A float as Python writes it (shortest round trip, a decimal point always: ``5.0``,
    ``0.90411``), spelt out instead of an exponent (``0.00001``)."""
    text = repr(float(value))
    if not math.isfinite(value):
        return text
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    return text if "." in text else f"{text}.0"


def _whole_columns(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> set[str]:
    """The numeric columns whose every value is a whole number (written ``18``, not ``18.0``)."""
    whole = set()
    for c in columns:
        values = [r[c] for r in rows if isinstance(r[c], int | float)]
        if values and all(math.isfinite(v) and float(v).is_integer() for v in values):
            whole.add(c)
    return whole


def _csv_cell(value: Any, column: str, whole: bool) -> str:
    if isinstance(value, list):
        for name in value:
            if _READ_SEPARATORS.search(name) or name.startswith("["):
                raise TableError(
                    "<CSV>",
                    None,
                    column,
                    f"line name {name!r} contains a line separator; write the table as JSON",
                )
        return LINE_SEPARATOR.join(value)
    if isinstance(value, bool):
        raise TableError("<CSV>", None, column, f"unexpected boolean {value!r}")
    if isinstance(value, int | float):
        return str(int(value)) if whole else _float_text(value)
    return str(value)


def _ordered(rows: Sequence[dict[str, Any]], order: Sequence[int] | None) -> list[dict[str, Any]]:
    if order is None:
        return list(rows)
    if sorted(order) != list(range(len(rows))):
        raise MaptabError(f"order must be a permutation of 0..{len(rows) - 1}")
    return [rows[i] for i in order]


def table_csv(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[str],
    order: Sequence[int] | None = None,
    drop_columns: Iterable[str] = (),
) -> str:
    """A table as CSV text (no BOM), rows in ``order`` (a permutation of row indices), without
    ``drop_columns``. Numbers per column as MapTab's release writes them (module docstring)."""
    dropped = set(drop_columns)
    cols = [c for c in columns if c not in dropped]
    whole = _whole_columns(rows, cols)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(cols)
    for row in _ordered(rows, order):
        writer.writerow([_csv_cell(row[c], c, c in whole) for c in cols])
    return out.getvalue()


def table_json(
    rows: Sequence[dict[str, Any]],
    order: Sequence[int] | None = None,
    drop_columns: Iterable[str] = (),
) -> str:
    """A table as JSON text in the released format, rows in ``order``, without ``drop_columns``."""
    dropped = set(drop_columns)
    picked = [{k: v for k, v in row.items() if k not in dropped} for row in _ordered(rows, order)]
    return json.dumps(picked, indent=2, ensure_ascii=False)


def write_csv(
    rows: Sequence[dict[str, Any]],
    path: str | os.PathLike[str],
    columns: Sequence[str],
    *,
    bom: bool | None = None,
) -> None:
    """Write rows as a MapTab CSV file (UTF-8, ``\\n`` line ends). ``bom`` defaults to the
    release's choice for the table's scenario (:data:`CSV_BOM`; a ``Line`` column means
    metromap)."""
    if bom is None:
        bom = CSV_BOM["metromap" if "Line" in columns else "travelmap"]
    text = table_csv(rows, columns)
    Path(path).write_bytes((("\ufeff" if bom else "") + text).encode("utf-8"))


def write_json(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write rows as a MapTab JSON file (indent 2, UTF-8, no trailing newline)."""
    Path(path).write_bytes(table_json(rows).encode("utf-8"))


def write_tables(
    network: Network,
    folder: str | os.PathLike[str],
    stem: str,
    formats: Sequence[str] = ("csv", "json"),
) -> list[Path]:
    """Write ``{stem}_edge`` and ``{stem}_vertex`` tables in each format; returns the paths."""
    unknown = [f for f in formats if f not in ("csv", "json")]
    if unknown:
        raise MaptabError(f"unknown table format(s) {unknown}; use csv or json")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    tables = (
        ("edge", edge_rows(network), EDGE_COLUMNS[network.scenario]),
        ("vertex", vertex_rows(network), VERTEX_COLUMNS[network.scenario]),
    )
    paths = []
    for fmt in formats:
        for kind, rows, columns in tables:
            path = out / f"{stem}_{kind}.{fmt}"
            if fmt == "csv":
                try:
                    write_csv(rows, path, columns, bom=CSV_BOM[network.scenario])
                except TableError as exc:
                    raise TableError(os.fspath(path), exc.row, exc.field, exc.message) from None
            else:
                write_json(rows, path)
            paths.append(path)
    return paths


def example_tables(scenario: Scenario) -> tuple[Path, Path]:
    """Paths ``(edges, vertices)`` of the small example tables shipped with the package."""
    if scenario not in SCENARIOS:
        raise MaptabError(f"unknown scenario {scenario!r}; expected one of {SCENARIOS}")
    folder = Path(str(resources.files("maptab") / "data" / "example"))
    return folder / f"{scenario}_edge.csv", folder / f"{scenario}_vertex.csv"
