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
  line with no known split is a :class:`MetadataError` naming the line, never a guess.
* **Repeats.** Consecutive repeats of a station are collapsed; a line whose last station is
  its first is a loop line; any other repeated station is an error.

Station keys follow :meth:`maptab.network.Network.from_lines` (display names kept as labels).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from maptab.errors import MaptabError
from maptab.network import Network

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
        return json.loads(read())
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
    for line, stations in data.items():
        if not isinstance(stations, list) or not all(isinstance(s, str) for s in stations):
            raise MetadataError(f"{where}: line {line!r}: expected a list of station names")
    return data


def _line_sequence(
    where: str, map_id: str, line: str, raw: list[str], splits: Mapping[str, str]
) -> tuple[list[str], tuple[str, str] | None]:
    """The walk handed to :meth:`Network.from_lines` and the branch ``(start, first)`` if any."""
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
    body = names[:-1] if loop else names
    repeated = sorted({s for s in body if body.count(s) > 1})
    if repeated:
        raise MetadataError(
            f"{where}: line {line!r} lists {repeated[0]!r} twice "
            "(only a loop line may repeat its first station, at the end)"
        )
    key = f"{map_id}/{line}"
    if not branch_at:
        if key in splits:
            raise MetadataError(
                f"{where}: a branch split is given for {key!r}, "
                "but the line has no Branch-starting station"
            )
        return names, None
    if len(branch_at) > 1 or loop:
        raise MetadataError(
            f"{where}: line {line!r}: only one branch on a line that is not a loop is supported"
        )
    start = branch_at[0]
    if key not in splits:
        raise MetadataError(
            f"{where}: line {line!r} is branched at {names[start]!r} but its first branch "
            f'station is unknown; pass a split file with {{"{key}": "<first branch station>"}}'
        )
    first = splits[key]
    if first not in names:
        raise MetadataError(f"{where}: branch split for {key!r}: {first!r} is not on the line")
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
    malformed files, unsupported repeats, and branched lines without a split. Branches are
    recorded in ``network.meta["branches"]`` as ``{line: [branch start, first branch station]}``.
    """
    where = os.fspath(path)
    data = _read_metadata(path)
    mid = map_id if map_id is not None else default_map_id(path)
    splits = load_branch_splits() if branch_splits is None else dict(branch_splits)
    lines: dict[str, list[str]] = {}
    branches: dict[str, list[str]] = {}
    for line, raw in data.items():
        walk, branch = _line_sequence(where, mid, _normal(line), raw, splits)
        lines[_normal(line)] = walk
        if branch:
            branches[_normal(line)] = list(branch)
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
    network.meta.update({"source": "reasonmap", "branches": branches})
    return network
