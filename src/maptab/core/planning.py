"""ReasonMap reference routes (SPEC 14): exact route planning over a metromap's lines.

A route from ``a`` to ``b`` is a sequence of *segments*; a segment rides one line from a
departure stop to an arrival stop along a simple path of that line's own track graph (its
edges), so on a loop line either direction is a ride and on a branched line the ride is the
path through the branch point. Consecutive segments meet at a stop; the route as a whole
visits no station twice, and no line is ridden twice. Its cost is the lexicographic pair
``(transfers, stops)``: transfers = segments − 1, stops = edges travelled.

**Reference routes** (:func:`plan_routes`): the optimum is the cheapest route. Alternatives
are the cheapest route of each other *line sequence*, ranked by cost; up to
``max_alternatives`` routes with pairwise distinct line sequences are kept, and only line
sequences with at most ``max_extra_transfers`` transfers more than the optimum are
considered. Ties are broken by the lines' order of first appearance in the network, then by
the station keys along the route, so the result is a pure function of the network.

Domain code: the ReasonMap builder (:mod:`maptab.generate.from_reasonmap`) writes these routes as
gold, the ``oracle`` baseline answers with them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from maptab.core.network import Network
from maptab.core.schema import RMSegment
from maptab.errors import MaptabError

__all__ = ["PlanError", "RoutePlanner", "plan_routes"]


class PlanError(MaptabError):
    """A route request that cannot be answered (unknown station, same endpoints, no route)."""


# --------------------------------------------------------------------------- planner
class RoutePlanner:
    """Exact ReasonMap route planning on one metromap (see the module docstring).

    Build once per network; :meth:`min_transfers` is a constant-time look-up after the
    line-graph distances are computed, :meth:`routes` enumerates line sequences level by level.
    """

    def __init__(self, network: Network) -> None:
        if network.scenario != "metromap":
            raise PlanError(f"map {network.map_id!r}: ReasonMap routes need a metromap")
        self.network = network
        self.lines: list[str] = network.line_names
        self._rank = {line: i for i, line in enumerate(self.lines)}
        self.track: dict[str, dict[str, set[str]]] = {line: {} for line in self.lines}
        for e in network.edges:
            adj = self.track[e.line]  # type: ignore[index]
            adj.setdefault(e.u, set()).add(e.v)
            adj.setdefault(e.v, set()).add(e.u)
        self.station_lines: dict[str, list[str]] = {s: [] for s in network.vertices}
        for line in self.lines:
            for s in self.track[line]:
                self.station_lines[s].append(line)
        self.shared: dict[tuple[str, str], list[str]] = {}
        for i, x in enumerate(self.lines):
            for y in self.lines[i + 1 :]:
                common = [s for s in network.vertices if s in self.track[x] and s in self.track[y]]
                if common:
                    self.shared[(x, y)] = self.shared[(y, x)] = common
        self.line_adj: dict[str, list[str]] = {
            x: [y for y in self.lines if (x, y) in self.shared] for x in self.lines
        }
        self.line_dist = {x: self._bfs_lines(x) for x in self.lines}
        self._rides: dict[tuple[str, str, str], list[tuple[str, ...]]] = {}

    def _bfs_lines(self, start: str) -> dict[str, int]:
        dist = {start: 0}
        queue = deque([start])
        while queue:
            x = queue.popleft()
            for y in self.line_adj[x]:
                if y not in dist:
                    dist[y] = dist[x] + 1
                    queue.append(y)
        return dist

    def resolve(self, name: str) -> str:
        """The station key of ``name`` (key or display label); :class:`PlanError` if unknown."""
        key = self.network.resolve(name)
        if key is None:
            raise PlanError(f"map {self.network.map_id!r}: unknown station {name!r}")
        return key

    def min_transfers(self, a: str, b: str) -> int | None:
        """Fewest transfers of any route from ``a`` to ``b`` (``None`` when unreachable).

        Exact: a shortest line sequence is always realisable by a simple route, since a
        station visited twice would lie on two of its lines and give a shorter sequence.
        """
        best = None
        for x in self.station_lines[a]:
            dist = self.line_dist[x]
            for y in self.station_lines[b]:
                d = dist.get(y)
                if d is not None and (best is None or d < best):
                    best = d
        return best

    def rides(self, line: str, x: str, y: str) -> list[tuple[str, ...]]:
        """Every simple path from ``x`` to ``y`` on ``line``'s track graph (stations, ends included)."""
        key = (line, x, y)
        if key not in self._rides:
            adj = self.track[line]
            found: list[tuple[str, ...]] = []
            path = [x]
            on_path = {x}

            def walk(s: str) -> None:
                if s == y:
                    found.append(tuple(path))
                    return
                for n in sorted(adj[s]):
                    if n not in on_path:
                        path.append(n)
                        on_path.add(n)
                        walk(n)
                        on_path.discard(n)
                        path.pop()

            walk(x)
            self._rides[key] = found
        return self._rides[key]

    def _line_sequences(self, a: str, b: str, transfers: int) -> Iterator[tuple[str, ...]]:
        """Line sequences of exactly ``transfers + 1`` distinct lines from ``a`` to ``b``."""
        ends = set(self.station_lines[b])

        def reach(line: str) -> int:
            dist = self.line_dist[line]
            return min((dist[e] for e in ends if e in dist), default=len(self.lines))

        def extend(seq: list[str]) -> Iterator[tuple[str, ...]]:
            left = transfers + 1 - len(seq)
            if left == 0:
                if seq[-1] in ends:
                    yield tuple(seq)
                return
            for y in self.line_adj[seq[-1]]:
                if y not in seq and reach(y) <= left - 1:
                    seq.append(y)
                    yield from extend(seq)
                    seq.pop()

        for x in self.station_lines[a]:
            if reach(x) <= transfers:
                yield from extend([x])

    def _best_for(
        self, a: str, b: str, seq: tuple[str, ...]
    ) -> tuple[int, tuple[str, ...], list[tuple[str, ...]]] | None:
        """The cheapest simple route riding exactly ``seq``: (stops, station path, rides)."""
        best: list[Any] = [None]
        rides: list[tuple[str, ...]] = []
        visited = {a}

        def go(i: int, at: str, stops: int) -> None:
            if best[0] is not None and stops > best[0][0]:
                return
            line = seq[i]
            last = i == len(seq) - 1
            targets = [b] if last else self.shared[(line, seq[i + 1])]
            for t in targets:
                if t in visited or (not last and t == b):
                    continue
                for ride in self.rides(line, at, t):
                    inner = ride[1:]
                    if any(s in visited for s in inner) or (not last and b in inner):
                        continue
                    total = stops + len(ride) - 1
                    if best[0] is not None and total > best[0][0]:
                        continue
                    rides.append(ride)
                    if last:
                        path = tuple(s for r in rides for s in r[:-1]) + (b,)
                        if best[0] is None or (total, path) < best[0][:2]:
                            best[0] = (total, path, list(rides))
                    else:
                        visited.update(inner)
                        go(i + 1, t, total)
                        visited.difference_update(inner)
                    rides.pop()

        go(0, a, 0)
        return best[0]

    def routes(
        self, a: str, b: str, *, max_alternatives: int = 3, max_extra_transfers: int = 1
    ) -> list[list[tuple[str, tuple[str, ...]]]]:
        """Reference routes as lists of ``(line, ride stations)``; best first.

        Raises :class:`PlanError` when the stations are equal or not connected.
        """
        a, b = self.resolve(a), self.resolve(b)
        if a == b:
            raise PlanError(f"map {self.network.map_id!r}: departure and arrival are both {a!r}")
        fewest = self.min_transfers(a, b)
        if fewest is None:
            raise PlanError(f"map {self.network.map_id!r}: no route from {a!r} to {b!r}")
        found: list[tuple[Any, ...]] = []
        for transfers in range(fewest, fewest + max_extra_transfers + 1):
            level = []
            for seq in self._line_sequences(a, b, transfers):
                hit = self._best_for(a, b, seq)
                if hit is not None:
                    stops, path, rides = hit
                    ranks = tuple(self._rank[x] for x in seq)
                    level.append(((transfers, stops, ranks, path), seq, rides))
            found.extend(sorted(level, key=lambda item: item[0]))
            if len(found) >= max_alternatives:
                break
        return [list(zip(seq, rides, strict=True)) for _, seq, rides in found[:max_alternatives]]

    def segments(self, route: list[tuple[str, tuple[str, ...]]]) -> list[RMSegment]:
        """A planned route as ReasonMap segments (display names)."""
        label = self.network.label
        return [
            RMSegment(
                route_name=line,
                departure_stop=label(ride[0]),
                arrival_stop=label(ride[-1]),
                via_stops=[label(s) for s in ride[1:-1]],
                num_via_stops=len(ride) - 2,
            )
            for line, ride in route
        ]


def plan_routes(
    network: Network,
    a: str,
    b: str,
    *,
    max_alternatives: int = 3,
    max_extra_transfers: int = 1,
) -> list[list[RMSegment]]:
    """Reference routes from ``a`` to ``b`` (SPEC 14): fewest transfers, then fewest stops.

    Returns up to ``max_alternatives`` routes with pairwise distinct line sequences, the
    optimum first, each a list of :class:`~maptab.core.schema.RMSegment` with display names. The
    exact definitions (what a segment may ride, the ranking, the tie-break) are in the module
    docstring. ``a`` and ``b`` may be station keys or display labels.

    Raises :class:`PlanError` for unknown or equal stations, or when no route exists.

    >>> net = Network.from_lines({"L1": ["A", "B", "C"], "L2": ["C", "D"]})
    >>> [s.route_name for s in plan_routes(net, "A", "D")[0]]
    ['L1', 'L2']
    """
    planner = RoutePlanner(network)
    routes = planner.routes(
        a, b, max_alternatives=max_alternatives, max_extra_transfers=max_extra_transfers
    )
    return [planner.segments(r) for r in routes]
