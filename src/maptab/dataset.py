"""The on-disk dataset layout: writing it deterministically and reading it back.

Layout (schema version :data:`maptab.schema.SCHEMA_VERSION`)::

    DIR/manifest.json              schema version, generator version, seed, options,
                                   maps (id, scenario, difficulty, split, language),
                                   counts, and a SHA-256 of every other file
    DIR/maps/<map_id>/edges.csv    Edge_tab    (MapTab CSV format)
    DIR/maps/<map_id>/vertices.csv Vertex_tab
    DIR/maps/<map_id>/mix.csv      Mix_tab (SPEC 5)
    DIR/maps/<map_id>/network.json Network.to_dict()
    DIR/maps/<map_id>/image.png    the rendered (or imported) map, when present
    DIR/rp.jsonl                   RPQuery rows
    DIR/qa.jsonl                   QAQuery rows
    DIR/reasonmap.jsonl            ReasonMapQuestion rows

``map_id`` may contain ``/`` (``italy/rome``); every path is checked to stay inside ``DIR``
(SPEC 16). Same inputs give byte-identical files: JSON is written with sorted manifest keys,
``\\n`` line endings and no timestamps.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, Any

from maptab import __version__
from maptab.errors import MaptabError
from maptab.network import Network
from maptab.schema import (
    SCHEMA_VERSION,
    QAQuery,
    ReasonMapQuestion,
    RPQuery,
    read_jsonl,
)

QUERY_FILES = {"rp": "rp.jsonl", "qa": "qa.jsonl", "reasonmap": "reasonmap.jsonl"}
TABLE_FILES = {"edges": "edges.csv", "vertices": "vertices.csv", "mix": "mix.csv"}


class DatasetError(MaptabError):
    """A dataset folder that is missing files or breaks the layout contract."""


def safe_join(root: Path, relative: str) -> Path:
    """``root / relative``, refusing anything that would leave ``root`` (SPEC 16)."""
    if not relative or relative.startswith(("/", "\\")) or ".." in Path(relative).parts:
        raise DatasetError(f"unsafe path {relative!r} in dataset {root}")
    path = (root / relative).resolve()
    if not path.is_relative_to(root.resolve()):
        raise DatasetError(f"unsafe path {relative!r} in dataset {root}")
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(slots=True)
class MapEntry:
    """One map of a dataset, as listed in the manifest."""

    id: str
    scenario: str
    difficulty: str
    split: str
    language: str = "en"
    difficulty_score: float = 0.0
    source: str = "synthetic"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scenario": self.scenario,
            "difficulty": self.difficulty,
            "difficulty_score": round(self.difficulty_score, 6),
            "split": self.split,
            "language": self.language,
            "source": self.source,
        }


@dataclass
class DatasetWriter:
    """Writes a dataset folder; call :meth:`finish` to write the manifest.

    ``options`` records everything that determined the content (preset, sizes, flags) so that
    the manifest says how to rebuild it.
    """

    root: Path
    seed: int
    options: dict[str, Any] = field(default_factory=dict)
    maps: list[MapEntry] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(QUERY_FILES, 0))
    _files: dict[str, IO[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.root = Path(self.root)
        self.root.mkdir(parents=True, exist_ok=True)

    def map_dir(self, map_id: str) -> Path:
        return safe_join(self.root, f"maps/{map_id}")

    def add_map(
        self,
        network: Network,
        entry: MapEntry,
        *,
        image: Path | None = None,
        render: bool = False,
    ) -> Path:
        """Write a map's tables, network and image; returns its folder.

        ``image`` is copied when given; otherwise, with ``render``, the map is drawn by
        :mod:`maptab.render` and its legibility problems (SPEC 15) are recorded in the
        manifest's ``options.legibility_problems``.
        """
        from maptab import tables  # local import: tables is a sibling leaf module

        folder = self.map_dir(entry.id)
        folder.mkdir(parents=True, exist_ok=True)
        scenario = network.scenario
        tables.write_csv(
            tables.edge_rows(network), folder / TABLE_FILES["edges"], tables.EDGE_COLUMNS[scenario]
        )
        tables.write_csv(
            tables.vertex_rows(network),
            folder / TABLE_FILES["vertices"],
            tables.VERTEX_COLUMNS[scenario],
        )
        tables.write_csv(
            tables.mix_rows(network), folder / TABLE_FILES["mix"], tables.MIX_COLUMNS[scenario]
        )
        (folder / "network.json").write_text(
            json.dumps(network.to_dict(), ensure_ascii=False, indent=1) + "\n",
            encoding="utf-8",
            newline="\n",
        )
        if image is not None:
            shutil.copyfile(image, folder / "image.png")
        elif render:
            from maptab.render import check_legibility, save_map

            problems = check_legibility(save_map(network, folder / "image.png").placed, network)
            if problems:
                self.options.setdefault("legibility_problems", {})[entry.id] = problems
        self.maps.append(entry)
        return folder

    def add(self, kind: str, rows: list[RPQuery] | list[QAQuery] | list[ReasonMapQuestion]) -> None:
        """Append query records of ``kind`` (``rp``, ``qa`` or ``reasonmap``) to its JSONL file."""
        fh = self._files.get(kind)
        if fh is None:
            fh = self._files[kind] = (self.root / QUERY_FILES[kind]).open(
                "w", encoding="utf-8", newline="\n"
            )
        for r in rows:
            fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
        self.counts[kind] += len(rows)

    def finish(self) -> dict[str, Any]:
        """Close the JSONL files (an empty one for a kind with no rows) and write the manifest
        with the content hash of every file; return the manifest."""
        for kind, name in QUERY_FILES.items():
            fh = self._files.pop(kind, None)
            if fh is None:
                (self.root / name).write_text("", encoding="utf-8")
            else:
                fh.close()
        files = sorted(p for p in self.root.rglob("*") if p.is_file() and p.name != "manifest.json")
        manifest = {
            "schema_version": SCHEMA_VERSION,
            "generator": "maptab",
            "generator_version": __version__,
            "seed": self.seed,
            "options": self.options,
            "maps": [m.to_dict() for m in self.maps],
            "counts": {
                "maps": len(self.maps),
                **self.counts,
            },
            "files": {p.relative_to(self.root).as_posix(): _sha256(p) for p in files},
        }
        (self.root / "manifest.json").write_text(
            json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
            encoding="utf-8",
            newline="\n",
        )
        return manifest


class Dataset:
    """Read access to a dataset folder (lazy; networks are cached per map)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        manifest = self.root / "manifest.json"
        if not manifest.is_file():
            raise DatasetError(f"{self.root}: not a maptab dataset (no manifest.json)")
        try:
            self.manifest: dict[str, Any] = json.loads(manifest.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{manifest}: not valid JSON ({exc.msg})") from None
        version = self.manifest.get("schema_version")
        if version != SCHEMA_VERSION:
            raise DatasetError(
                f"{manifest}: schema_version {version!r}, this maptab reads {SCHEMA_VERSION}"
            )
        self._networks: dict[str, Network] = {}

    @cached_property
    def maps(self) -> dict[str, MapEntry]:
        return {m["id"]: MapEntry(**m) for m in self.manifest.get("maps", [])}

    def map_dir(self, map_id: str) -> Path:
        if map_id not in self.maps:
            raise DatasetError(f"{self.root}: unknown map {map_id!r}")
        return safe_join(self.root, f"maps/{map_id}")

    def network(self, map_id: str) -> Network:
        if map_id not in self._networks:
            path = self.map_dir(map_id) / "network.json"
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise DatasetError(f"{path}: cannot read network ({exc})") from None
            self._networks[map_id] = Network.from_dict(data)
        return self._networks[map_id]

    def image_path(self, map_id: str) -> Path | None:
        path = self.map_dir(map_id) / "image.png"
        return path if path.is_file() else None

    def table_path(self, map_id: str, kind: str) -> Path:
        return self.map_dir(map_id) / TABLE_FILES[kind]

    def _rows(self, kind: str) -> Iterator[dict[str, Any]]:
        path = self.root / QUERY_FILES[kind]
        if path.is_file():
            yield from read_jsonl(path)

    def rp(self) -> list[RPQuery]:
        return [RPQuery.from_dict(d) for d in self._rows("rp")]

    def qa(self) -> list[QAQuery]:
        return [QAQuery.from_dict(d) for d in self._rows("qa")]

    def reasonmap(self) -> list[ReasonMapQuestion]:
        return [ReasonMapQuestion.from_dict(d) for d in self._rows("reasonmap")]

    def verify(self) -> list[str]:
        """Files whose SHA-256 differs from the manifest, or that are missing."""
        bad = []
        for rel, digest in self.manifest.get("files", {}).items():
            path = safe_join(self.root, rel)
            if not path.is_file() or _sha256(path) != digest:
                bad.append(rel)
        return bad
