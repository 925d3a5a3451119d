"""Validation of networks and their tables at two levels (SPEC 7; MapTab appendix B.5, B.6).

**Well-formed** (level ``"error"``; an error wherever tables are read). Structure
(:data:`STRUCTURE`), metromap:

1. no duplicate edge within a line (``A-B`` and ``B-A`` are the same edge);
2. the station sets of Edge_tab and Vertex_tab agree (no station without an edge, no edge to
   an unknown station);
3. per line, ``edges + 1 - [loop line]`` equals the number of Vertex_tab rows listing the
   line; summed over lines this is B.5's ``edges + lines - loop lines = station occurrences``.
   A loop line is one whose edges form a single cycle (its first station equals its last);
4. transfer annotations agree: each station's lines in the Vertex_tab equal the lines its
   Edge_tab rows put it on, and ``Transfer Time > 0`` only on a station with several lines.

Travelmap: checks 1 and 2 (no isolated spot), and the Edge_tab forms one connected graph.
Values (:data:`WELL_FORMED`): every number finite; times, prices and transfer times
non-negative; comfort and reliability within the scale of SPEC 3 (``[0, 1]``, travelmap
comfort ``[0, 5]``). Files (:func:`validate_tables`): encoding, CSV/JSON syntax, columns,
numeric cells, self-loops, duplicate stations, unknown stations.

**MapTab profile** (level ``"profile"``, only with ``profile="maptab"``): the SPEC 6 synthesis
ranges and decimals (:data:`PROFILES`). They describe how MapTab generated its data, not
what a table may hold: callers report them as a warning (:func:`profile_warnings`).
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

from maptab.core.costs import SCALES
from maptab.core.network import Edge, Network, Vertex, connected_components
from maptab.core.tables import (
    ATTRIBUTE_OF_COLUMN,
    EDGE_COLUMNS,
    VERTEX_COLUMNS,
    location,
    parse_tables,
)
from maptab.errors import MaptabError

Level = Literal["error", "profile"]
LEVELS: tuple[Level, ...] = ("error", "profile")
"""``"error"``: the table is not well-formed; ``"profile"``: a well-formed value outside the
MapTab profile (SPEC 7)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One validation finding. ``row`` is the CSV line (header = 1), the 1-based JSON row or,
    for a network in memory, the 1-based row in table order; ``None`` for the whole file.
    ``level`` is ``"error"`` (not well-formed) or ``"profile"`` (outside the profile)."""

    file: str
    row: int | None
    field: str | None
    message: str
    level: Level = "error"

    def __str__(self) -> str:
        return location(self.file, self.row, self.field) + self.message


# ----------------------------------------------------------------------------- value rules
Item = Edge | Vertex
Rule = Callable[[float, Item], str | None]
RuleKey = tuple[str, str, str]
"""``(scenario, table, column)``: table is ``"edge"`` or ``"vertex"``."""


def _decimals_ok(value: float, decimals: int) -> bool:
    return abs(value - round(value, decimals)) < 1e-9


def _non_negative(value: float, item: Item) -> str | None:
    return f"{value:g} is negative; it must be 0 or more" if value < 0 else None


def _scale(high: float) -> Rule:
    """Within ``[0, high]``, the scale a cost normalises by (SPEC 3)."""

    def rule(value: float, item: Item) -> str | None:
        if not 0 <= value <= high:
            return f"{value:g} is outside the column's scale [0, {high:g}]"
        return None

    return rule


def _interval(low: float, high: float, decimals: int = 2) -> Rule:
    def rule(value: float, item: Item) -> str | None:
        if not low <= value <= high:
            return f"{value:g} is outside [{low:g}, {high:g}]"
        if not _decimals_ok(value, decimals):
            return f"{value!r} has more than {decimals} decimals"
        return None

    return rule


def _exactly(target: float) -> Rule:
    def rule(value: float, item: Item) -> str | None:
        return None if value == target else f"{value:g} must be {target:g}"

    return rule


def _days_per_year(low: int, high: int) -> Rule:
    """``a/365`` with integer ``a`` in ``[low, high]``, written with six decimals."""

    def rule(value: float, item: Item) -> str | None:
        days = round(value * 365)
        if abs(round(days / 365, 6) - value) > 1e-9:
            return f"{value!r} is not a/365 for an integer a (rounded to 6 decimals)"
        if not low <= days <= high:
            return f"{value!r} = {days}/365; a must be in [{low}, {high}]"
        return None

    return rule


def _transfer_time(value: float, item: Item) -> str | None:
    assert isinstance(item, Vertex)
    # on a station of one line a positive value is a structural problem (check 4)
    if item.is_transfer and not (float(value).is_integer() and 5 <= value <= 15):
        return f"{value:g} on a transfer station; must be an integer in [5, 15]"
    return None


def _travel_vertex_time(value: float, item: Item) -> str | None:
    if not float(value).is_integer():
        return f"{value!r} must be a whole number of minutes"
    if value != 0 and not 20 <= value <= 180:
        return f"{value:g} must be 0 (a transport hub) or in [20, 180]"
    return None


def _travel_vertex_price(value: float, item: Item) -> str | None:
    if item.time == 0:  # a transport hub
        return None if value in (100, 200, 300) else f"{value:g} on a hub must be 100, 200 or 300"
    if not (float(value).is_integer() and value % 5 == 0 and 10 <= value <= 200):
        return f"{value:g} must be a multiple of 5 in [10, 200]"
    return None


def _integer(low: float, high: float) -> Rule:
    def rule(value: float, item: Item) -> str | None:
        if not (float(value).is_integer() and low <= value <= high):
            return f"{value:g} must be an integer in [{low:g}, {high:g}]"
        return None

    return rule


def _well_formed_rules() -> dict[RuleKey, Rule]:
    rules: dict[RuleKey, Rule] = {}
    for scen, scale in SCALES.items():
        for table, columns in (("edge", EDGE_COLUMNS[scen]), ("vertex", VERTEX_COLUMNS[scen])):
            for col in columns:
                if col == "Comfort Level":
                    rules[(scen, table, col)] = _scale(scale.comfort)
                elif col == "Reliability":
                    rules[(scen, table, col)] = _scale(scale.reliability)
                elif col in ATTRIBUTE_OF_COLUMN:  # Time, Price, Transfer Time
                    rules[(scen, table, col)] = _non_negative
    return rules


WELL_FORMED: dict[RuleKey, Rule] = _well_formed_rules()
"""Well-formed value rules (SPEC 7), per ``(scenario, table, column)``: times, prices and
transfer times are non-negative; comfort and reliability lie within the SPEC 3 scale
(``[0, 1]``; travelmap comfort ``[0, 5]``). A finite number is checked before any rule."""

MAPTAB_PROFILE: dict[RuleKey, Rule] = {
    ("metromap", "edge", "Time"): _interval(2.0, 3.0),
    ("metromap", "edge", "Price"): _interval(0.0, 1.5),
    ("metromap", "edge", "Comfort Level"): _interval(0.0, 1.0),
    ("metromap", "edge", "Reliability"): _exactly(0.0),
    ("metromap", "vertex", "Time"): _interval(0.5, 2.0),
    ("metromap", "vertex", "Price"): _exactly(0.0),
    ("metromap", "vertex", "Comfort Level"): _interval(0.0, 1.0),
    ("metromap", "vertex", "Reliability"): _interval(0.5, 1.0),
    ("metromap", "vertex", "Transfer Time"): _transfer_time,
    ("travelmap", "edge", "Time"): _interval(1.0, math.inf),
    ("travelmap", "edge", "Price"): _integer(10, 80),
    ("travelmap", "edge", "Comfort Level"): _interval(1.0, 5.0, decimals=1),
    ("travelmap", "edge", "Reliability"): _days_per_year(1, 365),
    ("travelmap", "vertex", "Time"): _travel_vertex_time,
    ("travelmap", "vertex", "Price"): _travel_vertex_price,
    ("travelmap", "vertex", "Comfort Level"): _interval(1.0, 5.0, decimals=1),
    ("travelmap", "vertex", "Reliability"): _days_per_year(60, 365),
}
"""The MapTab profile: SPEC 6 synthesis ranges and decimals per ``(scenario, table, column)``,
checked on values that are already well-formed."""

PROFILES: dict[str, dict[RuleKey, Rule]] = {"maptab": MAPTAB_PROFILE}
"""Value profiles by name (``maptab validate --profile NAME``)."""


# ----------------------------------------------------------------------------- structure
@dataclass(frozen=True, slots=True)
class _Where:
    """Where each edge and vertex of a network sits in its files."""

    edge_file: str
    vertex_file: str
    edge_rows: list[int]
    vertex_rows: dict[str, int]

    def edge(self, i: int, col: str | None, message: str) -> Problem:
        return Problem(self.edge_file, self.edge_rows[i], col, message)

    def vertex(self, name: str, col: str | None, message: str) -> Problem:
        return Problem(self.vertex_file, self.vertex_rows.get(name), col, message)


def _duplicates(net: Network, where: _Where) -> list[Problem]:
    seen: dict[tuple[frozenset[str], str | None], int] = {}
    problems = []
    for i, e in enumerate(net.edges):
        key = e.key()
        if key in seen:
            on = f" on line {e.line!r}" if e.line is not None else ""
            first = where.edge_rows[seen[key]]
            problems.append(
                where.edge(i, "Edge", f"duplicate of the edge at row {first}{on} (A-B equals B-A)")
            )
        else:
            seen[key] = i
    return problems


def _isolated(net: Network, where: _Where) -> list[Problem]:
    word = "station" if net.scenario == "metromap" else "spot"
    return [
        where.vertex(s, "Vertex", f"{word} {s!r} has no edge in the Edge_tab")
        for s, inc in net.adjacency.items()
        if not inc
    ]


def _line_shape(edges: list[Edge]) -> tuple[set[str], bool]:
    """Stations of a line and whether its edges form one cycle (a loop line)."""
    adj: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        adj[e.u].add(e.v)
        adj[e.v].add(e.u)
    stations = set(adj)
    if len(stations) < 3 or any(len(n) != 2 for n in adj.values()):
        return stations, False
    start = next(iter(stations))
    seen, stack = {start}, [start]
    while stack:
        for n in adj[stack.pop()]:
            if n not in seen:
                seen.add(n)
                stack.append(n)
    return stations, seen == stations and len(edges) == len(stations)


def _line_counts(net: Network, where: _Where) -> list[Problem]:
    problems = []
    listing: dict[str, list[str]] = defaultdict(list)
    for v in net.vertices.values():
        for line in v.lines:
            listing[line].append(v.name)
    edge_lines = net.line_names
    first_row = {}
    for i, e in enumerate(net.edges):
        first_row.setdefault(e.line, i)
    for line in edge_lines:
        edges = net.line_edges(line)
        _, loop = _line_shape(edges)
        expected = len(edges) + 1 - int(loop)
        found = len(listing.get(line, ()))
        if expected != found:
            kind = "a loop line" if loop else "not a loop line"
            problems.append(
                where.edge(
                    first_row[line],
                    "Line",
                    f"line {line!r}: {len(edges)} edges + 1 - {int(loop)} ({kind}) = {expected} "
                    f"stations expected, but {found} Vertex_tab rows list the line",
                )
            )
    known = set(edge_lines)
    for v in net.vertices.values():
        for line in v.lines:
            if line not in known:
                problems.append(
                    where.vertex(v.name, "Line", f"line {line!r} has no edge in the Edge_tab")
                )
    return problems


def _transfers(net: Network, where: _Where) -> list[Problem]:
    problems = []
    on_lines: dict[str, set[str]] = defaultdict(set)
    for e in net.edges:
        if e.line is not None:
            on_lines[e.u].add(e.line)
            on_lines[e.v].add(e.line)
    for i, e in enumerate(net.edges):
        if e.line is None:
            problems.append(where.edge(i, "Line", "a metromap edge needs a line"))
    for name, v in net.vertices.items():
        from_edges = on_lines.get(name, set())
        listed = set(v.lines)
        if from_edges and listed != from_edges:
            problems.append(
                where.vertex(
                    name,
                    "Line",
                    f"{name!r} is on {sorted(listed)} in the Vertex_tab but on "
                    f"{sorted(from_edges)} in the Edge_tab",
                )
            )
        if v.transfer_time > 0 and len(listed) < 2:
            problems.append(
                where.vertex(
                    name,
                    "Transfer Time",
                    f"{v.transfer_time:g} marks a transfer station, but {name!r} is on one line",
                )
            )
    return problems


def _connected(net: Network, where: _Where) -> list[Problem]:
    graph = net.simple_graph()
    components = connected_components({s: n for s, n in graph.items() if n})
    if len(components) <= 1:
        return []
    sizes = ", ".join(str(len(c)) for c in components)
    parts = "; ".join(
        ", ".join(repr(x) for x in c[:3]) + (" …" if len(c) > 3 else "") for c in components
    )
    return [
        Problem(
            where.edge_file,
            None,
            None,
            f"the Edge_tab is not one connected graph: {len(components)} parts ({sizes} spots): {parts}",
        )
    ]


Check = Callable[[Network, _Where], list[Problem]]

STRUCTURE: dict[str, tuple[Check, ...]] = {
    "metromap": (_duplicates, _isolated, _line_counts, _transfers),
    "travelmap": (_duplicates, _isolated, _connected),
}
"""Well-formed structural checks per scenario (SPEC 7, module docstring)."""


def _values(
    net: Network, where: _Where, profile: dict[RuleKey, Rule] | None, finite: bool
) -> list[Problem]:
    """Every numeric cell: non-finite (unless the reader reported it), then the well-formed
    rule, then (only where well-formed) the profile rule."""
    problems = []
    scen = net.scenario
    tables: list[tuple[str, tuple[str, ...], list[tuple[Item, Callable[..., Problem]]]]] = [
        (
            "vertex",
            VERTEX_COLUMNS[scen],
            [(v, lambda c, m, n=n: where.vertex(n, c, m)) for n, v in net.vertices.items()],
        ),
        (
            "edge",
            EDGE_COLUMNS[scen],
            [(e, lambda c, m, i=i: where.edge(i, c, m)) for i, e in enumerate(net.edges)],
        ),
    ]
    for kind, columns, items in tables:
        for item, report in items:
            for col in columns:
                if col not in ATTRIBUTE_OF_COLUMN:
                    continue
                key = (scen, kind, col)
                value = float(getattr(item, ATTRIBUTE_OF_COLUMN[col]))
                if not math.isfinite(value):
                    if finite:
                        problems.append(report(col, f"{value} is not a finite number"))
                elif msg := WELL_FORMED[key](value, item):
                    problems.append(report(col, f"{msg} (SPEC 7)"))
                elif profile is not None and (msg := profile[key](value, item)):
                    found = report(col, f"{msg} (MapTab profile, SPEC 6: {scen} {kind} table)")
                    problems.append(replace(found, level="profile"))
    return problems


def _profile_rules(profile: str | None) -> dict[RuleKey, Rule] | None:
    if profile is None:
        return None
    if profile not in PROFILES:
        raise MaptabError(f"unknown profile {profile!r}; expected one of {sorted(PROFILES)}")
    return PROFILES[profile]


def _check(net: Network, where: _Where, profile: str | None, finite: bool = True) -> list[Problem]:
    rules = _profile_rules(profile)
    problems = [p for check in STRUCTURE[net.scenario] for p in check(net, where)]
    return problems + _values(net, where, rules, finite)


def validate_network(network: Network, *, profile: str | None = None) -> list[Problem]:
    """Every well-formed problem of a network in memory (SPEC 7; empty list: well-formed),
    plus, with ``profile="maptab"``, its values outside the SPEC 6 profile (level
    ``"profile"``).

    Problems name the table (``Edge_tab`` / ``Vertex_tab``) and the 1-based row in table
    order. Cheap (linear in the rows and lines): loaders can call it once per map.
    """
    where = _Where(
        "Edge_tab",
        "Vertex_tab",
        list(range(1, len(network.edges) + 1)),
        {name: i for i, name in enumerate(network.vertices, 1)},
    )
    return _check(network, where, profile)


def validate_tables(
    edges_path: str | os.PathLike[str],
    vertices_path: str | os.PathLike[str],
    scenario: str | None = None,
    *,
    profile: str | None = None,
) -> list[Problem]:
    """Every problem of an Edge_tab / Vertex_tab pair of files, located by file and row:
    malformed files (encoding, CSV or JSON syntax, columns, numbers, self-loops, unknown or
    duplicate stations) and every check of :func:`validate_network` (the profile only with
    ``profile``). Never raises for bad input."""
    parsed = parse_tables(edges_path, vertices_path, scenario)  # type: ignore[arg-type]
    problems = [Problem(e.file, e.row, e.field, e.message) for e in parsed.errors]
    if parsed.network is None:
        return problems
    where = _Where(parsed.edge_file, parsed.vertex_file, parsed.edge_rows, parsed.vertex_rows)
    # numbers that failed to parse are NaN and were reported by the reader
    return problems + _check(parsed.network, where, profile, finite=False)


def errors(problems: Iterable[Problem]) -> list[Problem]:
    """The problems that make a table not well-formed (level ``"error"``)."""
    return [p for p in problems if p.level == "error"]


def first_error(problems: Iterable[Problem]) -> str | None:
    """The first well-formed problem as one line, with how many more there are; ``None``
    when the tables are well-formed."""
    found = errors(problems)
    if not found:
        return None
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return f"{found[0]}{more}"


def profile_warnings(problems: Iterable[Problem]) -> list[str]:
    """One line per table with values outside the profile: how many, and the first
    (SPEC 7: a warning everywhere but ``maptab validate --profile``)."""
    by_file: dict[str, list[Problem]] = {}
    for p in problems:
        if p.level == "profile":
            by_file.setdefault(p.file, []).append(p)
    lines = []
    for file, found in by_file.items():
        first = found[0]
        at = "".join(
            f"{part}: " for part in (first.row and f"row {first.row}", first.field) if part
        )
        lines.append(
            f"{file}: {len(found)} value(s) outside the MapTab profile, kept as given; "
            f"first: {at}{first.message}; `maptab validate --profile maptab` lists them"
        )
    return lines
