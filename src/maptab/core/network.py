"""The domain model: a route network with its attribute tables (SPEC 1-2).

A :class:`Network` is one map. It holds

* ``vertices`` — one :class:`Vertex` per station / scenic spot, keyed by its *table name*
  (the name as written in MapTab tables: ``-`` rewritten as ``_``, SPEC 2), in table order;
* ``edges`` — one :class:`Edge` per Edge_tab row. On a metromap every edge carries the line
  it belongs to, and two lines sharing a track segment give two edges with the same
  endpoints and different lines. Travelmap edges have ``line=None``;
* ``labels`` — display names (the original spelling, hyphens kept) for names that differ;
* optional geometry (``positions``) used by the renderer, and free-form ``meta``.

Attribute values are raw units (SPEC 6); normalisation happens in :mod:`maptab.core.costs`.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from maptab.errors import MaptabError

Scenario = Literal["metromap", "travelmap"]
SCENARIOS: tuple[Scenario, ...] = ("metromap", "travelmap")


class NetworkError(MaptabError):
    """A network that breaks a rule of SPEC 1 (unknown station, self loop, …)."""


def hop_distances(graph: Mapping[str, Iterable[str]], source: str) -> dict[str, int]:
    """Breadth-first hop counts from ``source`` over an adjacency mapping (for example
    :meth:`Network.simple_graph`); unreachable stations are absent."""
    dist = {source: 0}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for w in graph[u]:
            if w not in dist:
                dist[w] = dist[u] + 1
                queue.append(w)
    return dist


def cycle_rank(graph: Mapping[str, Iterable[str]]) -> int:
    """Independent cycles of an adjacency mapping (each edge listed at both ends):
    ``|E| − |V| + components``."""
    edges = sum(len(list(v)) for v in graph.values()) // 2
    return edges - len(graph) + len(connected_components(graph))


def fewest_hops_counts(
    graph: Mapping[str, Iterable[str]], source: str, dist: Mapping[str, int] | None = None
) -> dict[str, int]:
    """Number of fewest-hops paths (distinct station sequences) from ``source`` to each
    reachable station: the sum over a station's predecessors one hop nearer. ``dist`` are
    :func:`hop_distances` from ``source`` when already computed."""
    dist = hop_distances(graph, source) if dist is None else dist
    count = {source: 1}
    for v in sorted(dist, key=dist.__getitem__)[1:]:
        count[v] = sum(count[u] for u in graph[v] if dist.get(u) == dist[v] - 1)
    return count


def connected_components(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Connected components of an adjacency mapping, in order of their first station; each
    lists its stations in the mapping's key order (never in set order, which changes with
    the interpreter's hash seed)."""
    order = {s: i for i, s in enumerate(graph)}
    seen: set[str] = set()
    components = []
    for s in graph:
        if s not in seen:
            reached = hop_distances(graph, s)
            seen.update(reached)
            components.append(sorted(reached, key=order.__getitem__))
    return components


def table_name(name: str) -> str:
    """The MapTab table spelling of a station name: ``-`` becomes ``_``, whitespace trimmed."""
    return name.strip().replace("-", "_")


@dataclass(frozen=True, slots=True)
class Edge:
    """One Edge_tab row: an undirected edge ``u-v`` (on ``line`` for metromaps)."""

    u: str
    v: str
    line: str | None = None
    time: float = 0.0
    price: float = 0.0
    comfort: float = 0.0
    reliability: float = 0.0

    @property
    def name(self) -> str:
        """The ``Edge`` column value, ``u-v``."""
        return f"{self.u}-{self.v}"

    def other(self, station: str) -> str:
        """The endpoint that is not ``station``."""
        return self.v if station == self.u else self.u

    def key(self) -> tuple[frozenset[str], str | None]:
        """Identity of the edge regardless of direction (A-B on a line equals B-A)."""
        return frozenset((self.u, self.v)), self.line


@dataclass(frozen=True, slots=True)
class Vertex:
    """One Vertex_tab row. ``lines`` lists every line through the station (metromap)."""

    name: str
    lines: tuple[str, ...] = ()
    time: float = 0.0
    price: float = 0.0
    comfort: float = 0.0
    reliability: float = 0.0
    transfer_time: float = 0.0

    @property
    def is_transfer(self) -> bool:
        """A transfer station lies on two or more lines (SPEC 1)."""
        return len(self.lines) >= 2


@dataclass(slots=True)
class Network:
    """A metromap or travelmap: stations, edges, attributes and optional geometry."""

    scenario: Scenario
    vertices: dict[str, Vertex]
    edges: list[Edge]
    map_id: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    positions: dict[str, tuple[float, float]] = field(default_factory=dict)
    meta: dict[str, object] = field(default_factory=dict)
    _adj: dict[str, list[Edge]] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.scenario not in SCENARIOS:
            raise NetworkError(f"unknown scenario {self.scenario!r}; expected one of {SCENARIOS}")
        for e in self.edges:
            for s in (e.u, e.v):
                if s not in self.vertices:
                    raise NetworkError(f"edge {e.name}: station {s!r} has no vertex row")
            if e.u == e.v:
                raise NetworkError(f"edge {e.name}: an edge must join two different stations")

    # ----------------------------------------------------------------- structure
    @property
    def stations(self) -> list[str]:
        """Station (spot) names in table order."""
        return list(self.vertices)

    def label(self, station: str) -> str:
        """Display name of ``station`` (original spelling, hyphens kept)."""
        return self.labels.get(station, station)

    @property
    def adjacency(self) -> dict[str, list[Edge]]:
        """Incident edges per station (each undirected edge listed at both ends)."""
        if self._adj is None:
            adj: dict[str, list[Edge]] = {s: [] for s in self.vertices}
            for e in self.edges:
                adj[e.u].append(e)
                adj[e.v].append(e)
            self._adj = adj
        return self._adj

    def neighbours(self, station: str) -> list[str]:
        """Distinct adjacent stations, in edge order."""
        seen: dict[str, None] = {}
        for e in self.adjacency[station]:
            seen.setdefault(e.other(station))
        return list(seen)

    def edges_between(self, a: str, b: str) -> list[Edge]:
        """All edges joining ``a`` and ``b`` (one per line on a shared track)."""
        return [e for e in self.adjacency.get(a, ()) if e.other(a) == b]

    @property
    def line_names(self) -> list[str]:
        """Line names in order of first appearance in the Edge_tab (metromap)."""
        return list(dict.fromkeys(e.line for e in self.edges if e.line is not None))

    def line_edges(self, line: str) -> list[Edge]:
        """The edges of ``line`` in table order."""
        return [e for e in self.edges if e.line == line]

    def line_stations(self, line: str) -> list[str]:
        """Stations of ``line`` in travel order where the line is a path or loop.

        A loop line is returned closed (first station repeated at the end, SPEC 1). A
        branched line (a tree) is returned in depth-first order from its first terminus.
        A line without a terminus that is not one cycle (a figure eight, two separate loops)
        raises :class:`NetworkError`.
        """
        edges = self.line_edges(line)
        if not edges:
            raise NetworkError(f"unknown line {line!r}")
        adj: dict[str, list[str]] = defaultdict(list)
        for e in edges:
            adj[e.u].append(e.v)
            adj[e.v].append(e.u)
        ends = [s for s, n in adj.items() if len(n) == 1]
        if not ends:  # loop line: one cycle, every station of degree 2
            if (
                any(len(set(n)) != 2 or len(n) != 2 for n in adj.values())
                or len(edges) != len(adj)
                or len(connected_components(adj)) != 1
            ):
                raise NetworkError(
                    f"line {line!r} is not a path, a tree or one loop "
                    "(it has no terminus but is not a single cycle)"
                )
            start = edges[0].u
            order = [start]
            prev, cur = None, start
            while True:
                nxt = next(n for n in adj[cur] if n != prev)
                if nxt == start:
                    return [*order, start]
                order.append(nxt)
                prev, cur = cur, nxt
        first_u = edges[0].u
        start = first_u if first_u in ends else ends[0]
        # prefer the terminus that appears first in the table
        for e in edges:
            if e.u in ends:
                start = e.u
                break
            if e.v in ends:
                start = e.v
                break
        order, stack, seen = [], [start], set()
        while stack:
            s = stack.pop()
            if s in seen:
                continue
            seen.add(s)
            order.append(s)
            stack.extend(reversed([n for n in adj[s] if n not in seen]))
        return order

    def is_loop(self, line: str) -> bool:
        """A loop line's first and last station coincide (every station has degree 2)."""
        seq = self.line_stations(line)
        return len(seq) > 1 and seq[0] == seq[-1]

    def lines_of(self, station: str) -> tuple[str, ...]:
        """Lines through ``station`` (from the Vertex_tab row)."""
        return self.vertices[station].lines

    @property
    def transfer_stations(self) -> list[str]:
        """Stations on two or more lines, in table order."""
        return [s for s, v in self.vertices.items() if v.is_transfer]

    def simple_graph(self) -> dict[str, set[str]]:
        """Station adjacency with parallel edges merged (the graph that routes walk on)."""
        return {s: set(self.neighbours(s)) for s in self.vertices}

    def resolve(self, name: str) -> str | None:
        """The station key for a table name or a display label, else ``None``."""
        if name in self.vertices:
            return name
        key = table_name(name)
        return key if key in self.vertices else None

    def with_attributes(
        self, vertices: Mapping[str, Vertex] | None = None, edges: Sequence[Edge] | None = None
    ) -> Network:
        """A copy with new attribute rows (same topology, same geometry)."""
        return replace(
            self,
            vertices=dict(vertices) if vertices is not None else dict(self.vertices),
            edges=list(edges) if edges is not None else list(self.edges),
            labels=dict(self.labels),
            positions=dict(self.positions),
            meta=dict(self.meta),
            _adj=None,
        )

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_lines(
        cls,
        lines: Mapping[str, Sequence[str]],
        *,
        map_id: str = "",
        positions: Mapping[str, tuple[float, float]] | None = None,
    ) -> Network:
        """A metromap from ``{line: [station, …]}`` (consecutive stations adjacent).

        A line whose first and last station coincide is a loop line. Names are display names;
        keys are their :func:`table_name`. Attributes are zero until synthesised.
        """
        labels: dict[str, str] = {}
        station_lines: dict[str, list[str]] = {}
        edges: list[Edge] = []
        for line, seq in lines.items():
            keys = [table_name(s) for s in seq]
            for raw, key in zip(seq, keys, strict=True):
                if raw.strip() != key:
                    labels[key] = raw.strip()
                ls = station_lines.setdefault(key, [])
                if line not in ls:
                    ls.append(line)
            seen: set[frozenset[str]] = set()
            for a, b in zip(keys, keys[1:], strict=False):
                pair = frozenset((a, b))
                if a == b or pair in seen:
                    continue
                seen.add(pair)
                edges.append(Edge(a, b, line))
        vertices = {s: Vertex(s, tuple(ls)) for s, ls in station_lines.items()}
        pos = {table_name(k): v for k, v in (positions or {}).items()}
        return cls("metromap", vertices, edges, map_id=map_id, labels=labels, positions=pos)

    @classmethod
    def from_edges(
        cls,
        pairs: Iterable[tuple[str, str]],
        *,
        map_id: str = "",
        positions: Mapping[str, tuple[float, float]] | None = None,
    ) -> Network:
        """A travelmap from undirected spot pairs (attributes zero until synthesised)."""
        labels: dict[str, str] = {}
        vertices: dict[str, Vertex] = {}
        edges: list[Edge] = []
        for a, b in pairs:
            ka, kb = table_name(a), table_name(b)
            for raw, key in ((a, ka), (b, kb)):
                if raw.strip() != key:
                    labels[key] = raw.strip()
                vertices.setdefault(key, Vertex(key))
            edges.append(Edge(ka, kb))
        pos = {table_name(k): v for k, v in (positions or {}).items()}
        return cls("travelmap", vertices, edges, map_id=map_id, labels=labels, positions=pos)

    # ----------------------------------------------------------------- serialisation
    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (``maps/<id>/network.json`` in a dataset)."""
        return {
            "scenario": self.scenario,
            "map_id": self.map_id,
            "vertices": [
                {
                    "name": v.name,
                    "lines": list(v.lines),
                    "time": v.time,
                    "price": v.price,
                    "comfort": v.comfort,
                    "reliability": v.reliability,
                    "transfer_time": v.transfer_time,
                }
                for v in self.vertices.values()
            ],
            "edges": [
                {
                    "u": e.u,
                    "v": e.v,
                    "line": e.line,
                    "time": e.time,
                    "price": e.price,
                    "comfort": e.comfort,
                    "reliability": e.reliability,
                }
                for e in self.edges
            ],
            "labels": dict(sorted(self.labels.items())),
            "positions": {k: [float(x), float(y)] for k, (x, y) in self.positions.items()},
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Network:
        """Inverse of :meth:`to_dict`."""
        try:
            vertices = {
                v["name"]: Vertex(
                    v["name"],
                    tuple(v.get("lines", ())),
                    float(v.get("time", 0)),
                    float(v.get("price", 0)),
                    float(v.get("comfort", 0)),
                    float(v.get("reliability", 0)),
                    float(v.get("transfer_time", 0)),
                )
                for v in data["vertices"]  # type: ignore[union-attr]
            }
            edges = [
                Edge(
                    e["u"],
                    e["v"],
                    e.get("line"),
                    float(e.get("time", 0)),
                    float(e.get("price", 0)),
                    float(e.get("comfort", 0)),
                    float(e.get("reliability", 0)),
                )
                for e in data["edges"]  # type: ignore[union-attr]
            ]
        except (KeyError, TypeError, ValueError) as exc:
            raise NetworkError(f"malformed network data: {exc}") from None
        positions = {
            k: (float(p[0]), float(p[1])) for k, p in dict(data.get("positions") or {}).items()
        }
        return cls(
            data["scenario"],  # type: ignore[arg-type]
            vertices,
            edges,
            map_id=str(data.get("map_id", "")),
            labels=dict(data.get("labels") or {}),  # type: ignore[arg-type]
            positions=positions,
            meta=dict(data.get("meta") or {}),  # type: ignore[arg-type]
        )
