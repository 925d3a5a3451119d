"""Import of ReasonMap metadata: ``{line: [station, …]}`` JSON files (SPEC 14).

Adjacency is the order of each line's list (SPEC 1), with these rules:

* **Annotations.** A parenthesised tag whose whole content is a known annotation is removed
  (:data:`ANNOTATIONS`; half- or full-width brackets, any spacing, any case): e.g.
  ``Termini Station (Transfer Station)`` → ``Termini Station``, ``大连站（换乘站）`` →
  ``大连站``. Any other bracketed text is part of the name and kept:
  ``Waitematā (Britomart) Station``, ``四方河（省中医院）站``, ``坝堰（机场）站``.
  Runs of whitespace become one space.
* **Branched lines.** A line with a ``(Branch-starting Station)`` / ``（支线起始站）`` lists its
  main line first and its branch last. The first station of the branch comes from a split
  table ``{"<map_id>/<line>": "<first branch station>"}`` (:func:`load_branch_splits`; the
  shipped file covers the shared cities); the branch joins the annotated station. A branched
  line with no known split is an error (:class:`MissingBranchSplits`), never a guess; one
  error names every such line of the file.
* **Repeats.** Consecutive repeats of a station are collapsed; a line whose last station is
  its first is a loop line.
* **Homonyms.** Any other name that a line lists twice (at non-adjacent positions) names two
  different stations (New York's line B stops at two stations named ``7 Av Station``): each
  occurrence becomes its own station, shown as ``<name> (between <previous> and <next>)``
  after its neighbours on that line (``(next to <neighbour>)`` at a line end,
  ``(<line> stop <n>)`` should that still collide). Another line that lists the name once gets the candidate
  nearest to its neighbours on that line (hops over the rest of the network; a tie goes to
  the first candidate and is reported). Nothing is merged and the city is never refused;
  each homonym is described in ``network.meta["homonyms"]`` (:func:`homonym_warnings`).
* **Keys.** A line listed twice in one file (also after whitespace normalisation) is an
  error, as JSON would otherwise keep only the last list.

Station keys follow :meth:`maptab.core.network.Network.from_lines` (display names kept as labels).
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from maptab.core.network import Network
from maptab.errors import MaptabError

ANNOTATIONS: dict[str, str] = {
    "transfer station": "transfer",
    "transfer": "transfer",
    "interchange station": "transfer",
    "换乘站": "transfer",
    "换乘": "transfer",
    "branch-starting station": "branch",
    "branch starting station": "branch",
    "branch-start station": "branch",
    "branch start station": "branch",
    "支线起始站": "branch",
    "支线起点站": "branch",
}
"""Known annotation texts (lower-cased, single-spaced) and their kind."""

_BRACKETED = re.compile(r"\s*[(（]\s*([^()（）]*?)\s*[)）]")


class MetadataError(MaptabError):
    """Malformed ReasonMap metadata, or a branched line without a known split."""


class MissingBranchSplits(MetadataError):
    """Branched lines without a known split: ``missing`` maps each ``"<map>/<line>"`` key to
    the station the branch starts at, so one error can name them all."""

    def __init__(self, where: str, missing: Mapping[str, str]) -> None:
        self.where = where
        self.missing = dict(missing)
        super().__init__(branch_split_message(where, self.missing))


def branch_split_message(where: str, missing: Mapping[str, str]) -> str:
    """One line naming every branched line without a split and the file that would fix it."""
    lines = "; ".join(f"{k!r} (branched at {v!r})" for k, v in sorted(missing.items()))
    template = ", ".join(f'"{k}": "<first branch station>"' for k in sorted(missing))
    noun = "line is" if len(missing) == 1 else f"{len(missing)} lines are"
    return (
        f"{where}: branched {noun} missing a split: {lines}; pass --branch-splits FILE "
        f"with {{{template}}}"
    )


class _DuplicateKey(MaptabError):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` refusing a key given twice (JSON keeps the last one silently)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _parse_name(name: str) -> tuple[str, set[str]]:
    """The station name without annotations, and the annotation kinds found."""
    kinds: set[str] = set()

    def drop(m: re.Match[str]) -> str:
        kind = ANNOTATIONS.get(_normal(m.group(1)).lower())
        if kind is None:
            return m.group(0)
        kinds.add(kind)
        return " "

    return _normal(_BRACKETED.sub(drop, name)), kinds


def strip_annotations(name: str) -> str:
    """``name`` without its ReasonMap annotations (see :data:`ANNOTATIONS`).

    >>> strip_annotations("Promenade Station (Transfer Station) (Branch-starting Station)")
    'Promenade Station'
    >>> strip_annotations("Waitematā (Britomart) Station (Transfer Station)")
    'Waitematā (Britomart) Station'
    """
    return _parse_name(name)[0]


def load_branch_splits(path: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """A split table ``{"<map_id>/<line>": "<first branch station>"}``; the shipped one by
    default (``maptab/data/branch_splits.json``)."""
    if path is None:
        where = "maptab/data/branch_splits.json"
        shipped = resources.files("maptab").joinpath("data", "branch_splits.json")
        data = _load_json(where, lambda: shipped.read_text("utf-8"))
    else:
        where = os.fspath(path)
        data = _load_json(where, lambda: Path(path).read_text(encoding="utf-8-sig"))
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise MetadataError(
            f'{where}: expected an object {{"<map>/<line>": "<first branch station>"}}'
        )
    return {k: _normal(v) for k, v in data.items()}


def default_map_id(path: str | os.PathLike[str]) -> str:
    """``<folder>/<file stem>``: the path under the ReasonMap stations folder, e.g.
    ``italy/rome`` for ``…/reasonmap-stations/italy/rome.json``."""
    p = Path(path)
    return f"{p.parent.name}/{p.stem}" if p.parent.name else p.stem


def _load_json(where: str, read: Callable[[], str]) -> Any:
    """JSON from ``read()``, with one-line errors naming ``where``."""
    try:
        return json.loads(read(), object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise MetadataError(
            f"{where}: key {exc.key!r} appears twice in one object (JSON would keep only the "
            "last value); merge or rename them"
        ) from None
    except FileNotFoundError:
        raise MetadataError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MetadataError(f"{where}: cannot read the file as UTF-8 text ({exc})") from None
    except json.JSONDecodeError as exc:
        raise MetadataError(
            f"{where}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except (ValueError, RecursionError) as exc:  # an over-long integer, too deep nesting
        raise MetadataError(f"{where}: malformed JSON: {exc}") from None


def _read_metadata(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    where = os.fspath(path)
    data = _load_json(where, lambda: Path(path).read_text(encoding="utf-8-sig"))
    if not isinstance(data, dict) or not data:
        raise MetadataError(f"{where}: expected a non-empty object {{line: [station, …]}}")
    normal: dict[str, list[str]] = {}
    for line, stations in data.items():
        if not isinstance(stations, list) or not all(isinstance(s, str) for s in stations):
            raise MetadataError(f"{where}: line {line!r}: expected a list of station names")
        key = _normal(line)
        if key in normal:
            raise MetadataError(
                f"{where}: lines {line!r} and {next(k for k in data if _normal(k) == key)!r} "
                "are the same line name; merge or rename them"
            )
        normal[key] = stations
    return normal


@dataclass(slots=True)
class _Line:
    """One line as listed: station names (annotations stripped, consecutive repeats
    collapsed), where ``(Branch-starting Station)`` tags sit, and whether it is a loop."""

    name: str
    names: list[str]
    branch_at: list[int]
    loop: bool
    ids: list[str] = field(default_factory=list)  # station per position, homonyms resolved

    @property
    def body(self) -> list[str]:
        """The stations once each way round (a loop's closing repeat dropped)."""
        return self.names[:-1] if self.loop else self.names

    def neighbours(self, i: int) -> list[int]:
        """Positions next to body position ``i`` on the line (wrapping round a loop)."""
        n = len(self.body)
        around = [i - 1, i + 1]
        if self.loop:
            return sorted({j % n for j in around} - {i})
        return [j for j in around if 0 <= j < n]


def _parse_line(where: str, line: str, raw: list[str]) -> _Line:
    names: list[str] = []
    branch_at: list[int] = []
    for entry in raw:
        name, kinds = _parse_name(entry)
        if not name:
            raise MetadataError(f"{where}: line {line!r}: empty station name {entry!r}")
        if names and names[-1] == name:
            if "branch" in kinds and (not branch_at or branch_at[-1] != len(names) - 1):
                branch_at.append(len(names) - 1)
            continue
        if "branch" in kinds:
            branch_at.append(len(names))
        names.append(name)
    if len(set(names)) < 2:
        raise MetadataError(f"{where}: line {line!r} has fewer than two stations")
    loop = len(names) > 2 and names[0] == names[-1]
    return _Line(line, names, branch_at, loop)


@dataclass(slots=True)
class _Candidate:
    station: str  # display name of one of the stations a homonym stands for
    line: str
    position: int


def _qualified(name: str, line: _Line, i: int, taken: set[str]) -> str:
    """The display name of the homonym at body position ``i`` of ``line``, after its
    neighbours there; ``(<line> stop <n>)`` if that is already taken."""
    around = [line.body[j] for j in line.neighbours(i)]
    where = f"between {around[0]} and {around[1]}" if len(around) == 2 else f"next to {around[0]}"
    display = f"{name} ({where})"
    if display in taken:
        display = f"{name} ({line.name} stop {i + 1})"
    taken.add(display)
    return display


def _hops(graph: Mapping[str, set[str]], start: str) -> dict[str, int]:
    dist = {start: 0}
    queue = deque([start])
    while queue:
        x = queue.popleft()
        for y in graph.get(x, ()):
            if y not in dist:
                dist[y] = dist[x] + 1
                queue.append(y)
    return dist


def _resolve_homonyms(lines: Sequence[_Line]) -> list[dict[str, Any]]:
    """Fill each line's ``ids``: a name listed twice on a line (not as a loop's closing
    repeat) is one station per occurrence there; a line listing it once gets the nearest
    (see the module docstring). Returns one record per homonym for ``meta["homonyms"]``."""
    for line in lines:
        line.ids = list(line.body)
    repeated: dict[str, _Line] = {}  # homonym -> the first line listing it twice
    for line in lines:
        for name in line.body:
            if line.body.count(name) > 1:
                repeated.setdefault(name, line)
    taken = {n for line in lines for n in line.body}
    candidates: dict[str, list[_Candidate]] = {}
    for name, first in repeated.items():
        candidates[name] = [
            _Candidate(_qualified(name, first, i, taken), first.name, i)
            for i, n in enumerate(first.body)
            if n == name
        ]
        for c in candidates[name]:
            first.ids[c.position] = c.station
    # every other occurrence waits; the network known so far decides by hops
    pending = [
        (line, name, [i for i, n in enumerate(line.body) if n == name])
        for line in lines
        for name in candidates
        if name in line.body and line is not repeated[name]
    ]
    unknown = {(id(line), i) for line, _, positions in pending for i in positions}
    graph: dict[str, set[str]] = {}
    for line in lines:
        for i, station in enumerate(line.ids):
            if (id(line), i) in unknown:
                continue
            for j in line.neighbours(i):
                if (id(line), j) not in unknown:
                    graph.setdefault(station, set()).add(line.ids[j])
    hops = {c.station: _hops(graph, c.station) for cs in candidates.values() for c in cs}
    uses: dict[str, dict[str, list[str]]] = {name: {} for name in candidates}
    guessed: dict[str, list[str]] = {name: [] for name in candidates}
    for line, name, positions in pending:
        scores = {
            (i, k): min(
                (
                    hops[c.station].get(line.ids[j], len(graph) + 1)
                    for j in line.neighbours(i)
                    if (id(line), j) not in unknown
                ),
                default=len(graph) + 1,
            )
            for i in positions
            for k, c in enumerate(candidates[name])
        }
        chosen: dict[int, int] = {}
        for (i, k), score in sorted(scores.items(), key=lambda kv: (kv[1], kv[0])):
            if i in chosen or k in chosen.values():
                continue
            chosen[i] = k
            rivals = [v for (i2, k2), v in scores.items() if i2 == i and k2 != k]
            if score in rivals and line.name not in guessed[name]:
                guessed[name].append(line.name)
        for i in positions:
            if i not in chosen:  # more occurrences here than stations so far: a new one
                candidates[name].append(_Candidate(_qualified(name, line, i, taken), line.name, i))
                chosen[i] = len(candidates[name]) - 1
            line.ids[i] = candidates[name][chosen[i]].station
        uses[name][line.name] = [line.ids[i] for i in positions]
    for line in lines:
        if line.loop:
            line.ids.append(line.ids[0])
    return [
        {
            "name": name,
            "line": repeated[name].name,
            "stations": [c.station for c in cs],
            "uses": uses[name],
            "guessed": guessed[name],
        }
        for name, cs in candidates.items()
    ]


def homonym_warnings(network: Network) -> list[str]:
    """One line per homonym of ``network`` (``meta["homonyms"]``, from :func:`load_reasonmap`)."""
    out = []
    for h in network.meta.get("homonyms", []):  # type: ignore[union-attr]
        kept = ", ".join(repr(s) for s in h["stations"])
        text = (
            f"{network.map_id}: line {h['line']!r} lists {h['name']!r} "
            f"{len(h['stations'])} times; kept as different stations {kept}"
        )
        if h["uses"]:
            text += "; by neighbourhood " + ", ".join(
                f"line {line!r} -> {', '.join(repr(s) for s in used)}"
                for line, used in h["uses"].items()
            )
        if h["guessed"]:
            text += (
                f" (no neighbour decides on line(s) {', '.join(map(repr, h['guessed']))}: "
                "the first candidate was taken)"
            )
        out.append(text)
    return out


def _line_sequence(
    where: str, map_id: str, line: _Line, splits: Mapping[str, str]
) -> tuple[list[str], tuple[str, str] | None]:
    """The walk handed to :meth:`Network.from_lines` and the branch ``(start, first)`` if any.

    Raises :class:`MissingBranchSplits` for a branched line without a split."""
    names, branch_at = line.ids, line.branch_at
    key = f"{map_id}/{line.name}"
    if not branch_at:
        if key in splits:
            raise MetadataError(
                f"{where}: a branch split is given for {key!r}, "
                "but the line has no Branch-starting station"
            )
        return names, None
    if len(branch_at) > 1 or line.loop:
        raise MetadataError(
            f"{where}: line {line.name!r}: only one branch on a line that is not a loop is "
            "supported"
        )
    start = branch_at[0]
    if key not in splits:
        raise MissingBranchSplits(where, {key: names[start]})
    first = splits[key]
    if first not in names:
        hint = (
            f" (a name the line lists twice; give one of {sorted(set(names) - set(line.names))})"
            if first in line.names
            else ""
        )
        raise MetadataError(
            f"{where}: branch split for {key!r}: {first!r} is not on the line{hint}"
        )
    k = names.index(first)
    if k <= start + 1:
        raise MetadataError(
            f"{where}: branch split for {key!r}: {first!r} must come after the station after "
            f"the branch start {names[start]!r}"
        )
    # Main line, back along it to the branch start (repeated pairs add no edge in
    # Network.from_lines), then the branch: the line's tree as one walk.
    walk = names[:k] + names[k - 2 : start - 1 if start else None : -1] + names[k:]
    return walk, (names[start], first)


def load_reasonmap(
    path: str | os.PathLike[str],
    branch_splits: Mapping[str, str] | None = None,
    map_id: str | None = None,
) -> Network:
    """A metromap :class:`Network` (zero attributes) from a ReasonMap metadata file.

    ``branch_splits`` maps ``"<map_id>/<line>"`` to the first station of the line's branch
    (annotations stripped); the shipped table (:func:`load_branch_splits`) by default.
    ``map_id`` defaults to :func:`default_map_id`. Raises :class:`MetadataError` for
    malformed files and unsupported branches, and :class:`MissingBranchSplits` naming every
    branched line without a split. Branches are recorded in ``network.meta["branches"]`` as
    ``{line: [branch start, first branch station]}``, homonyms (module docstring) in
    ``network.meta["homonyms"]``.
    """
    where = os.fspath(path)
    data = _read_metadata(path)
    mid = map_id if map_id is not None else default_map_id(path)
    splits = load_branch_splits() if branch_splits is None else dict(branch_splits)
    parsed = [_parse_line(where, line, raw) for line, raw in data.items()]
    homonyms = _resolve_homonyms(parsed)
    lines: dict[str, list[str]] = {}
    branches: dict[str, list[str]] = {}
    missing: dict[str, str] = {}
    for line in parsed:
        try:
            walk, branch = _line_sequence(where, mid, line, splits)
        except MissingBranchSplits as exc:
            missing.update(exc.missing)
            continue
        lines[line.name] = walk
        if branch:
            branches[line.name] = list(branch)
    if missing:
        raise MissingBranchSplits(where, missing)
    # a split for a line this map lacks is a typo; keys with a further "/" may belong to a
    # nested map id and are left alone
    stale = sorted(
        k
        for k in splits
        if k.startswith(mid + "/") and "/" not in (rest := k[len(mid) + 1 :]) and rest not in lines
    )
    if stale:
        raise MetadataError(f"{where}: branch split for unknown line {stale[0]!r}")
    network = Network.from_lines(lines, map_id=mid)
    network.meta.update({"source": "reasonmap", "branches": branches, "homonyms": homonyms})
    return network
