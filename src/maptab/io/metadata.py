"""Import of ReasonMap metadata: ``{line: [station, …]}`` JSON files (SPEC 14).

Adjacency is the order of each line's list (SPEC 1), with these rules:

* **Annotations.** A parenthesised tag whose whole content is a known annotation is removed
  (:data:`ANNOTATIONS`; half- or full-width brackets, any spacing, any case): e.g.
  ``Termini Station (Transfer Station)`` → ``Termini Station``, ``大连站（换乘站）`` →
  ``大连站``. Any other bracketed text is part of the name and kept:
  ``Waitematā (Britomart) Station``, ``四方河（省中医院）站``, ``坝堰（机场）站``.
  Runs of whitespace become one space.
* **Station aliases.** A city's alias file (:class:`StationAliases`) is applied first: the
  ``--station-aliases`` folder's ``<map_id>.json``, else the shipped
  ``maptab/data/station_aliases/<map_id>.json``, else none. ``merge`` maps a spelling to
  the name it stands for (``"34 St-Penn Station Station": "34 St-Penn Station"``); ``split``
  maps a name to groups of lines, one group per station of that name, and each group's
  occurrences become ``<name> (<line>/<line>…)`` (``125 St Station (4/5/6)``). A line that
  lists the name *k* times is in *k* groups and its occurrences take them in list order.
  Names not in the file stay one station per name. An entry that does not fit the city (a
  name no line lists, an unknown line, a line in too few or too many groups) is an error.
* **Branched lines.** A line with a ``(Branch-starting Station)`` / ``（支线起始站）`` lists its
  main line first and its branch last; the branch joins the annotated station. Its first
  station comes from, in this order: the split table ``{"<map_id>/<line>": "<first branch
  station>"}`` (:func:`load_branch_splits`: the shipped file, extended and overridden by
  ``--branch-splits``); else the list itself, when it names the branch-start station a
  second time (``A, B, C*, D, E, C, F, G``): the list returns to the fork there, the repeat
  is dropped and the station after it (``F``) is the first branch station
  (:func:`derived_branch_splits`). A list with no such repeat does not say where its branch
  begins; a branched line with no split from either source is an error
  (:class:`MissingBranchSplits`), never a guess; one error names every such line of the file.
* **Repeats.** Consecutive repeats of a station are collapsed; a line whose last station is
  its first is a loop line.
* **Homonyms.** Any other name that a line lists twice (at non-adjacent positions, and not
  split by the alias file) names two different stations (New York's line B stops at two
  stations named ``7 Av Station``): each occurrence becomes its own station, shown as
  ``<name> (between <previous> and <next>)`` after its neighbours on that line
  (``(next to <neighbour>)`` at a line end, ``(<line> stop <n>)`` should that still collide).
  Another line that lists the name once gets the candidate nearest to its neighbours on that
  line (hops over the rest of the network; a tie goes to the first candidate and is
  reported). Nothing is merged by this rule and the city is never refused; each homonym is
  described in ``network.meta["homonyms"]`` (:func:`homonym_warnings`).
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


@dataclass(frozen=True, slots=True)
class StationAliases:
    """A city's station identity file (SPEC 14; module docstring): ``merge`` maps a spelling
    to the name it stands for, ``split`` maps a name to its line groups, one per station.
    Names are as in the metadata file, annotations stripped."""

    merge: Mapping[str, str] = field(default_factory=dict)
    split: Mapping[str, Sequence[Sequence[str]]] = field(default_factory=dict)
    source: str = "station aliases"  # where it was read, for messages


ALIAS_FORMAT = '{"merge": {"<spelling>": "<name>"}, "split": {"<name>": [["<line>", …], …]}}'


def _alias_name(text: Any) -> str | None:
    return (strip_annotations(text) or None) if isinstance(text, str) else None


def parse_station_aliases(where: str, data: Any) -> StationAliases:
    """:class:`StationAliases` from parsed JSON ``data``; one-line errors naming ``where``."""

    def bad(what: str) -> MetadataError:
        return MetadataError(f"{where}: {what}; expected {ALIAS_FORMAT}")

    if not isinstance(data, dict):
        raise bad("not an object")
    if extra := sorted(set(data) - {"merge", "split"}):
        raise bad(f"unknown key {extra[0]!r}")
    merge: dict[str, str] = {}
    raw_merge = data.get("merge", {})
    if not isinstance(raw_merge, dict):
        raise bad("'merge' is not an object")
    for key, value in raw_merge.items():
        spelling, name = _alias_name(key), _alias_name(value)
        if spelling is None or name is None:
            raise bad(f"merge {key!r}: expected a non-empty name")
        if spelling == name or spelling in merge:
            raise MetadataError(f"{where}: merge {key!r} is given twice or merges into itself")
        merge[spelling] = name
    for spelling, name in merge.items():
        if name in merge:
            raise MetadataError(
                f"{where}: merge {spelling!r} -> {name!r}, but {name!r} is merged into "
                f"{merge[name]!r}; name the final spelling"
            )
    split: dict[str, list[list[str]]] = {}
    raw_split = data.get("split", {})
    if not isinstance(raw_split, dict):
        raise bad("'split' is not an object")
    for key, groups in raw_split.items():
        name = _alias_name(key)
        if name is None or name in split:
            raise bad(f"split {key!r}: expected a non-empty name given once")
        if name in merge:
            raise MetadataError(
                f"{where}: split {key!r}: that spelling is merged into {merge[name]!r}; "
                "split the merged name"
            )
        if (
            not isinstance(groups, list)
            or len(groups) < 2
            or not all(
                isinstance(g, list) and g and all(isinstance(x, str) and x.strip() for x in g)
                for g in groups
            )
        ):
            raise bad(f"split {key!r}: expected two or more non-empty lists of line names")
        clean = [[_normal(x) for x in g] for g in groups]
        for g in clean:
            if len(set(g)) < len(g):
                raise MetadataError(f"{where}: split {key!r}: a group names a line twice: {g}")
        split[name] = clean
    return StationAliases(merge, split, where)


def load_station_aliases(path: str | os.PathLike[str]) -> StationAliases:
    """The station alias file at ``path`` (format: module docstring, :data:`ALIAS_FORMAT`)."""
    where = os.fspath(path)
    return parse_station_aliases(
        where, _load_json(where, lambda: Path(path).read_text("utf-8-sig"))
    )


def _map_parts(map_id: str) -> list[str] | None:
    parts = map_id.split("/")
    return parts if all(p and p not in {".", ".."} for p in parts) else None


def shipped_station_aliases(map_id: str) -> StationAliases | None:
    """The alias file shipped for ``map_id`` (``maptab/data/station_aliases/<map_id>.json``),
    or ``None``."""
    parts = _map_parts(map_id)
    if parts is None:
        return None
    parts[-1] += ".json"
    shipped = resources.files("maptab").joinpath("data", "station_aliases", *parts)
    if not shipped.is_file():
        return None
    where = "maptab/data/station_aliases/" + "/".join(parts)
    return parse_station_aliases(where, _load_json(where, lambda: shipped.read_text("utf-8")))


def station_aliases_for(
    map_id: str, folder: str | os.PathLike[str] | None = None
) -> StationAliases | None:
    """The alias file of ``map_id``: ``folder/<map_id>.json`` when there is one, else the
    shipped one, else ``None``."""
    parts = _map_parts(map_id)
    if folder is not None and parts is not None:
        mine = Path(folder, *parts[:-1], parts[-1] + ".json")
        if mine.is_file():
            return load_station_aliases(mine)
    return shipped_station_aliases(map_id)


@dataclass(slots=True)
class _Line:
    """One line as listed: station names (annotations stripped, merges applied, consecutive
    repeats collapsed), where ``(Branch-starting Station)`` tags sit, whether it is a loop,
    and the first branch station the list itself gives (``derived_at``, a position)."""

    name: str
    names: list[str]
    branch_at: list[int]
    loop: bool
    derived_at: int | None = None
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


def _parse_line(
    where: str, line: str, raw: list[str], merge: Mapping[str, str], seen: set[str]
) -> _Line:
    """One line's list parsed; ``seen`` collects the names as listed (before merges)."""
    names: list[str] = []
    branch_at: list[int] = []
    for entry in raw:
        name, kinds = _parse_name(entry)
        if not name:
            raise MetadataError(f"{where}: line {line!r}: empty station name {entry!r}")
        seen.add(name)
        name = merge.get(name, name)
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
    derived_at = None
    forks = {names[i] for i in branch_at}
    if len(forks) == 1 and not loop:
        (fork,) = forks
        at = [i for i, n in enumerate(names) if n == fork]
        if len(at) > 2:
            raise MetadataError(
                f"{where}: line {line!r} lists its branch start {fork!r} {len(at)} times; "
                "at most twice (the fork, and where the list returns to it)"
            )
        if len(at) == 2:
            i, j = at
            if j == len(names) - 1:
                raise MetadataError(
                    f"{where}: line {line!r} returns to its branch start {fork!r} at its end; "
                    "the branch's stations must follow the repeat"
                )
            if names[j - 1] == names[j + 1]:
                raise MetadataError(
                    f"{where}: line {line!r}: {names[j + 1]!r} both precedes and follows the "
                    f"repeat of its branch start {fork!r}"
                )
            del names[j]
            branch_at, derived_at = [i], j
    return _Line(line, names, branch_at, loop, derived_at)


def _apply_aliases(where: str, lines: Sequence[_Line], aliases: StationAliases) -> dict[str, str]:
    """Rename the occurrences of each split name to its group's station (module docstring);
    returns ``{station: name}`` for ``meta["station_aliases"]``."""
    src = aliases.source
    by_name = {line.name: line for line in lines}
    taken = {n for line in lines for n in line.body}
    out: dict[str, str] = {}
    for name, groups in aliases.split.items():
        listed = {
            line.name: [i for i, n in enumerate(line.body) if n == name]
            for line in lines
            if name in line.body
        }
        if not listed:
            raise MetadataError(f"{src}: split {name!r}: no line of {where} lists it")
        slots: dict[str, list[int]] = {}
        for g, group in enumerate(groups):
            for ln in group:
                if ln not in by_name:
                    raise MetadataError(f"{src}: split {name!r}: {where} has no line {ln!r}")
                if ln not in listed:
                    raise MetadataError(
                        f"{src}: split {name!r}: line {ln!r} of {where} does not list it"
                    )
                slots.setdefault(ln, []).append(g)
        for ln, positions in listed.items():
            given = len(slots.get(ln, []))
            if given != len(positions):
                raise MetadataError(
                    f"{src}: split {name!r}: line {ln!r} of {where} lists it {len(positions)} "
                    f"time(s) but is in {given} of its groups"
                )
        stations = [f"{name} ({'/'.join(group)})" for group in groups]
        for station in stations:
            if station in taken:
                raise MetadataError(
                    f"{src}: split {name!r}: the station name {station!r} is already taken"
                )
            taken.add(station)
            out[station] = name
        for ln, positions in listed.items():
            line = by_name[ln]
            for i, g in zip(positions, slots[ln], strict=True):
                line.names[i] = stations[g]
            if line.loop:
                line.names[-1] = line.names[0]
    return out


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
    if key in splits:
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
    elif line.derived_at is not None:
        k = line.derived_at
    else:
        raise MissingBranchSplits(where, {key: names[start]})
    if k <= start + 1:
        raise MetadataError(
            f"{where}: branch split for {key!r}: {names[k]!r} must come after the station after "
            f"the branch start {names[start]!r}"
        )
    # Main line, back along it to the branch start (repeated pairs add no edge in
    # Network.from_lines), then the branch: the line's tree as one walk.
    walk = names[:k] + names[k - 2 : start - 1 if start else None : -1] + names[k:]
    return walk, (names[start], names[k])


def _aliases_arg(aliases: Any, map_id: str) -> StationAliases:
    if aliases is None:
        return shipped_station_aliases(map_id) or StationAliases()
    if isinstance(aliases, StationAliases):
        return aliases
    return load_station_aliases(aliases)


def _parse_file(
    path: str | os.PathLike[str], aliases: StationAliases
) -> tuple[list[_Line], dict[str, str]]:
    """The file's lines, merges and splits applied; ``{station: name}`` of the splits."""
    where = os.fspath(path)
    data = _read_metadata(path)
    seen: set[str] = set()
    parsed = [_parse_line(where, line, raw, aliases.merge, seen) for line, raw in data.items()]
    for spelling in aliases.merge:
        if spelling not in seen:
            raise MetadataError(
                f"{aliases.source}: merge {spelling!r}: no line of {where} lists it"
            )
    return parsed, _apply_aliases(where, parsed, aliases)


def derived_branch_splits(
    path: str | os.PathLike[str],
    map_id: str | None = None,
    station_aliases: StationAliases | str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """``{"<map_id>/<line>": "<first branch station>"}`` for the branched lines whose list
    names the branch start a second time (module docstring, SPEC 14): the station after that
    repeat. Lines whose list does not say are left out."""
    mid = map_id if map_id is not None else default_map_id(path)
    parsed, _ = _parse_file(path, _aliases_arg(station_aliases, mid))
    return {
        f"{mid}/{line.name}": line.names[line.derived_at]
        for line in parsed
        if line.derived_at is not None
    }


def load_reasonmap(
    path: str | os.PathLike[str],
    branch_splits: Mapping[str, str] | None = None,
    map_id: str | None = None,
    station_aliases: StationAliases | str | os.PathLike[str] | None = None,
) -> Network:
    """A metromap :class:`Network` (zero attributes) from a ReasonMap metadata file (SPEC 14).

    ``branch_splits`` maps ``"<map_id>/<line>"`` to the first station of the line's branch
    (annotations stripped); the shipped table (:func:`load_branch_splits`) by default. An
    entry wins over the split the list itself gives (:func:`derived_branch_splits`).
    ``station_aliases`` is an alias file (path or :class:`StationAliases`); by default the
    shipped one for the map id, if any (``StationAliases()`` for none). ``map_id`` defaults
    to :func:`default_map_id`. Raises :class:`MetadataError` for malformed files, alias
    entries that do not fit and unsupported branches, and :class:`MissingBranchSplits`
    naming every branched line without a split. ``network.meta`` records ``branches``
    (``{line: [branch start, first branch station]}``), ``derived_branches`` (lines whose
    split the list gave), ``homonyms`` (module docstring) and ``station_aliases``
    (``{station: name}`` of split names).
    """
    where = os.fspath(path)
    mid = map_id if map_id is not None else default_map_id(path)
    splits = load_branch_splits() if branch_splits is None else dict(branch_splits)
    parsed, aliased = _parse_file(path, _aliases_arg(station_aliases, mid))
    homonyms = _resolve_homonyms(parsed)
    lines: dict[str, list[str]] = {}
    branches: dict[str, list[str]] = {}
    derived: list[str] = []
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
            if f"{mid}/{line.name}" not in splits:
                derived.append(line.name)
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
    network.meta.update(
        {
            "source": "reasonmap",
            "branches": branches,
            "derived_branches": derived,
            "homonyms": homonyms,
            "station_aliases": aliased,
        }
    )
    return network


def reasonmap_files(folder: str | os.PathLike[str]) -> list[tuple[str, Path]]:
    """``(map_id, path)`` of every ``*.json`` file under ``folder``, sorted by map id (the
    path under ``folder`` without ``.json``, e.g. ``italy/rome``)."""
    root = Path(folder)
    files = [(p.relative_to(root).with_suffix("").as_posix(), p) for p in root.rglob("*.json")]
    return sorted((mid, p) for mid, p in files if p.is_file())


def load_reasonmap_folder(
    folder: str | os.PathLike[str],
    branch_splits: str | os.PathLike[str] | Mapping[str, str] | None = None,
    station_aliases: str | os.PathLike[str] | None = None,
) -> list[Network]:
    """Every map of a ReasonMap stations folder, by map id (SPEC 14; ``maptab build`` and
    ``maptab stats --from-reasonmap``).

    ``branch_splits`` (a file or mapping) extends and overrides the shipped split table;
    ``station_aliases`` is a folder of ``<map_id>.json`` alias files that replace the shipped
    ones of those maps (each must name a map of ``folder``). Branched lines without a split,
    in any of the files, are named together in one :class:`MissingBranchSplits`.
    """
    files = reasonmap_files(folder)
    if not files:
        raise MetadataError(f"{os.fspath(folder)}: no ReasonMap metadata JSON files found")
    splits = load_branch_splits()
    if isinstance(branch_splits, Mapping):
        splits.update({k: _normal(v) for k, v in branch_splits.items()})
    elif branch_splits is not None:
        splits.update(load_branch_splits(branch_splits))
    if station_aliases is not None:
        alias_dir = Path(station_aliases)
        if not alias_dir.is_dir():
            raise MetadataError(f"{alias_dir}: no such folder of station alias files")
        known = {mid for mid, _ in files}
        for mid, path in reasonmap_files(alias_dir):
            if mid not in known:
                raise MetadataError(
                    f"{path}: station aliases for {mid!r}, but {os.fspath(folder)} has no such map"
                )
    nets: list[Network] = []
    missing: dict[str, str] = {}
    for mid, path in files:
        aliases = station_aliases_for(mid, station_aliases) or StationAliases()
        try:
            nets.append(load_reasonmap(path, splits, mid, aliases))
        except MissingBranchSplits as exc:
            missing.update(exc.missing)
    if missing:
        raise MissingBranchSplits(os.fspath(folder), missing)
    return nets
