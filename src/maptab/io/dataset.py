"""The on-disk dataset layout: writing it deterministically and reading it back.

Layout (schema version :data:`maptab.core.schema.SCHEMA_VERSION`)::

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

Integrity (``docs/reference/limits.md``): :class:`DatasetWriter` builds in a temporary
sibling folder and renames it into place, so an interrupted build leaves the previous
dataset, and holds a :class:`BuildLock` on the folder meanwhile, so a second build of it
is refused; :class:`Dataset` reads every file through :meth:`Dataset.file`, which keeps it
inside ``DIR`` (symlinks resolved), refuses non-regular files and checks its SHA-256
against the manifest, and checks each JSONL row against its schema as it is read.
"""

from __future__ import annotations

import csv
import fcntl
import glob
import hashlib
import io
import json
import os
import shutil
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

import msgspec

from maptab._limits import MAX_TABLE_BYTES, loads_json, open_regular, read_bytes, read_json
from maptab._version import __version__
from maptab.core.network import Network
from maptab.core.schema import (
    SCHEMA_VERSION,
    Number,
    QAQuery,
    ReasonMapQuestion,
    RecordError,
    RPQuery,
    jsonl_byte_lines,
    line_decoder,
    line_json_text,
    line_text,
    row_decoder,
)
from maptab.core.tables import derive_mix
from maptab.core.validate import first_error, validate_network
from maptab.errors import MaptabError
from maptab.tasks.base import TaskKind, all_kinds
from maptab.tasks.base import get as get_kind

QUERY_FILES = {"rp": "rp.jsonl", "qa": "qa.jsonl", "reasonmap": "reasonmap.jsonl"}
TABLE_FILES = {"edges": "edges.csv", "vertices": "vertices.csv", "mix": "mix.csv"}


class DatasetError(MaptabError):
    """A dataset folder that is missing files or breaks the layout contract."""


@dataclass(slots=True)
class Sample:
    """One request's worth of a dataset row: the row of task kind ``kind`` and its record;
    ``variant`` names which of the kind's variants it is (``short``/``long`` for ReasonMap,
    ``""`` for a kind asked once), and ``id`` is the row's id, suffixed ``/<variant>``."""

    id: str
    kind: str
    row: dict[str, Any]
    record: Any
    variant: str = ""

    @property
    def map_id(self) -> str:
        return str(self.row["map_id"])


@dataclass(frozen=True, slots=True)
class SampleRef:
    """Where a selected sample's row lies (:meth:`Dataset.select`): the sample's ``id``,
    ``kind`` and ``variant``, and the row's byte ``offset`` and ``line`` number in the
    kind's query file, and the ``version`` of that file whose rows were checked. A run keeps
    these, not the rows, between choosing its samples and answering them
    (:meth:`Dataset.load`)."""

    id: str
    kind: str
    variant: str
    offset: int
    line: int
    version: tuple[int, int, int] = (0, 0, 0)  # the file's size, mtime, inode when checked

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # pickled as its fields (maptab run --jobs sends every ref to a worker): 2.0 against
        # 8.3 µs a ref there and back for the frozen dataclass's own __getstate__/__setstate__
        return (SampleRef, (self.id, self.kind, self.variant, self.offset, self.line, self.version))


T = TypeVar("T")


def shard_of(items: Sequence[T], shard: tuple[int, int] | None) -> list[T]:
    """What shard ``(i, n)`` takes of a selection (:meth:`Dataset.select`): the items at
    positions ``k`` with ``k % n == i`` (all of them for ``None``); the samples ``maptab run
    --shard I/N`` answers, and those ``maptab score`` expects of that run's folder."""
    if shard is None:
        return list(items)
    i, n = shard
    return list(items[i::n])


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/N"`` as ``(i, N)`` with ``0 <= i < N`` (``--shard`` of ``maptab build`` and ``maptab
    run``); :class:`DatasetError` otherwise."""
    index, sep, count = text.strip().partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i, n = -1, 0
    if not sep or n < 1 or not 0 <= i < n:
        raise DatasetError(f"shard {text!r}: expected i/N with 0 <= i < N (e.g. 0/4)")
    return i, n


def _parse_selectors(
    kinds: list[TaskKind], categories: Iterable[str] | None
) -> tuple[set[str], dict[str, list[Callable[[Any], bool]]]]:
    """Split ``--categories`` into whole kinds and each kind's record predicates."""
    names = [k.name for k in kinds]
    whole: set[str] = set()
    picks: dict[str, list[Callable[[Any], bool]]] = {}
    for token in categories or ():
        t = token.strip()
        if not t:
            continue
        if t in names:
            whole.add(t)
            continue
        for k in kinds:
            pred = k.samples.select(t)
            if pred is not None:
                picks.setdefault(k.name, []).append(pred)
                break
        else:
            valid = ", ".join([*names, *(h for k in kinds for h in k.samples.select_help)])
            raise DatasetError(f"unknown category {t!r}; expected one of: {valid}")
    return whole, picks


def safe_join(root: Path, relative: str) -> Path:
    """``root / relative`` with every symlink resolved, refusing anything that would leave
    ``root`` (SPEC 16). The one rule for every file read through a dataset or a MapTab
    release folder: a link pointing outside is refused, a link inside is followed."""
    if not relative or relative.startswith(("/", "\\")) or ".." in Path(relative).parts:
        raise DatasetError(f"unsafe path {relative!r} in dataset {root}")
    path = (root / relative).resolve()
    if not path.is_relative_to(root.resolve()):
        raise DatasetError(f"{root / relative}: leads outside the folder {root} (a symlink?)")
    return path


_DIGESTS: dict[tuple[str, int, int, int], str] = {}
"""SHA-256 of files already hashed by this process, keyed by path, size, mtime and inode."""


def _sha256(path: Path) -> str:
    """The SHA-256 of ``path``, computed once per file version per process."""
    with open_regular(path, binary=True, error=DatasetError) as fh:
        st = os.fstat(fh.fileno())
        key = (str(path), st.st_size, st.st_mtime_ns, st.st_ino)
        digest = _DIGESTS.get(key)
        if digest is None:
            digest = _DIGESTS[key] = hashlib.file_digest(fh, "sha256").hexdigest()
    return digest


class MapEntry(msgspec.Struct):
    """One map of a dataset, as listed in the manifest."""

    id: str
    scenario: str
    difficulty: str
    split: str
    language: str = "en"
    difficulty_score: Number = 0.0
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

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MapEntry:
        """The entry of a manifest ``maps`` item; keys this version does not know are ignored.
        Raises :class:`~maptab.core.schema.RecordError` naming a field of the wrong type."""
        return row_decoder(cls)(d)


@dataclass
class DatasetWriter:
    """Writes a dataset folder atomically; call :meth:`finish` to write the manifest.

    Files go into a hidden sibling folder ``.<name>.building-<pid>``; :meth:`finish` writes the
    manifest there last and then moves the folder into place (an existing dataset at ``root``
    is moved aside first and removed after). A build that is killed or fails therefore leaves
    either the previous complete dataset or, during the instant between the two renames, no
    folder at all: never a mix of old and new files that ``maptab run`` would accept. An
    existing folder that is not empty and holds no ``manifest.json`` is refused, not replaced.
    Use as a context manager to remove the temporary folder when the build fails.

    ``options`` records everything that determined the content (preset, sizes, flags) so that
    the manifest says how to rebuild it. ``root`` is the folder being written: the temporary
    one until :meth:`finish`, the final one after. From creation until :meth:`finish` or
    :meth:`abort` the writer holds the folder's :class:`BuildLock`.
    """

    root: Path
    seed: int
    options: dict[str, Any] = field(default_factory=dict)
    maps: list[MapEntry] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(QUERY_FILES, 0))
    _files: dict[str, IO[str]] = field(default_factory=dict, repr=False)
    target: Path = field(init=False)
    _lock: BuildLock = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.target = Path(os.path.abspath(self.root))  # "." and "a/.." have a name
        self._lock = BuildLock(self.target)
        try:
            self.root = _work_folder(self.target)
        except BaseException:
            self._lock.release()
            raise

    def __enter__(self) -> DatasetWriter:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:
            self.abort()

    def abort(self) -> None:
        """Close files and remove the temporary folder (the previous dataset stays)."""
        for fh in self._files.values():
            fh.close()
        self._files.clear()
        if self.root != self.target:
            shutil.rmtree(self.root, ignore_errors=True)
        self._lock.release()

    def map_dir(self, map_id: str) -> Path:
        return map_folder(self.root, map_id)

    def add_map(
        self,
        network: Network,
        entry: MapEntry,
        *,
        image: Path | None = None,
        legibility: list[str] | None = None,
    ) -> Path:
        """Write a map's tables, network and image; returns its folder.

        ``image`` (a PNG) is copied in when given, unless it was already drawn at
        ``map_dir(id)/image.png`` (:func:`draw_map_image`). ``legibility`` lists the drawn
        image's legibility problems (SPEC 15); any are recorded in the manifest's
        ``options.legibility_problems``. The writer draws nothing itself.
        """
        folder = write_map_files(self.root, network, entry, image=image)
        self.record_map(entry, legibility)
        return folder

    def record_map(self, entry: MapEntry, legibility: list[str] | None = None) -> None:
        """List a map whose files another process wrote (:func:`write_map_files`) in the
        manifest, after the maps recorded before it; ``legibility`` as in :meth:`add_map`."""
        if legibility:
            self.options.setdefault("legibility_problems", {})[entry.id] = list(legibility)
        self.maps.append(entry)

    def add(self, kind: str, rows: list[RPQuery] | list[QAQuery] | list[ReasonMapQuestion]) -> None:
        """Append query records of ``kind`` (``rp``, ``qa`` or ``reasonmap``) to its JSONL file."""
        self._query_file(kind).writelines(query_lines(rows))
        self.counts[kind] += len(rows)

    def _query_file(self, kind: str) -> IO[str]:
        fh = self._files.get(kind)
        if fh is None:
            fh = self._files[kind] = (self.root / QUERY_FILES[kind]).open(
                "w", encoding="utf-8", newline="\n"
            )
        return fh

    def add_part(self, kind: str, part: Path, count: int) -> None:
        """Append the JSONL file ``part`` (``count`` rows written by :func:`query_lines`,
        e.g. by a worker process) to the file of ``kind``, then delete it."""
        fh = self._query_file(kind)
        with part.open(encoding="utf-8", newline="\n") as src:
            shutil.copyfileobj(src, fh)
        part.unlink()
        self.counts[kind] += count

    def add_lines(self, kind: str, lines: Iterable[bytes], count: int) -> None:
        """Append ``count`` JSONL lines (UTF-8 bytes, each ending in ``\\n``) to the file of
        ``kind``, as another dataset holds them."""
        fh = self._query_file(kind)
        for line in lines:
            fh.write(line.decode("utf-8"))
        self.counts[kind] += count

    def finish(self) -> dict[str, Any]:
        """Close the JSONL files (an empty one for a kind with no rows), write the manifest
        with the content hash of every file, move the dataset into place; return the manifest."""
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
        with (self.root / "manifest.json").open("w", encoding="utf-8", newline="\n") as fh:
            json.dump(manifest, fh, ensure_ascii=False, indent=1, sort_keys=True)  # streamed
            fh.write("\n")
        _swap_into_place(self.root, self.target)
        self.root = self.target
        self._lock.release()
        return manifest


def map_folder(root: Path, map_id: str) -> Path:
    """The folder of map ``map_id`` in the dataset folder ``root`` (kept inside it)."""
    return safe_join(root, f"maps/{map_id}")


def write_map_files(
    root: Path, network: Network, entry: MapEntry, *, image: Path | None = None
) -> Path:
    """Write a map's tables, network and image into ``root/maps/<id>/`` (any process may,
    for its own maps); returns the folder. ``image`` as in :meth:`DatasetWriter.add_map`."""
    from maptab.core import tables

    folder = map_folder(root, entry.id)
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
    target = folder / "image.png"
    if image is not None and Path(os.path.abspath(image)) != Path(os.path.abspath(target)):
        shutil.copyfile(image, target)
    return folder


def query_lines(rows: Iterable[Any]) -> Iterator[str]:
    """The JSONL lines of query records (each with ``to_dict``), as the dataset files hold
    them: keys in field order, UTF-8 text unescaped, ``\\n`` line ends."""
    for r in rows:
        yield json.dumps(r.to_dict(), ensure_ascii=False) + "\n"


_BUILDING = ".building-"
_OLD = ".old-"
_LOCK = ".lock"


class BuildLock:
    """The exclusive right to build the dataset folder ``target``: an ``flock`` on the file
    ``.<name>.lock`` beside it, which holds this process's pid.

    Taking it raises :class:`DatasetError` while another process holds it. The kernel
    drops it when the process ends, however it ends, so a killed build never blocks the
    next; :meth:`release` (also on leaving a ``with`` block) removes the file. Within one
    process a new lock of the folder takes over one not released (``maptab build`` locks
    before its writer does; an abandoned build's lock goes like its temporary folder)."""

    def __init__(self, target: str | Path) -> None:
        self.target = Path(os.path.abspath(target))
        self.path = self.target.parent / f".{self.target.name}{_LOCK}"
        held = _HELD.get(self.path)
        if held is not None and held._file is not None:
            self._file, held._file = held._file, None
        else:
            self._file = _take_lock(self.path, self.target)
        _HELD[self.path] = self

    def release(self) -> None:
        """Give the lock up and remove its file (again: nothing)."""
        file, self._file = self._file, None
        if file is None:
            return
        try:
            self.path.unlink(missing_ok=True)  # while held: a build waiting sees a new file
        finally:
            file.close()

    def __enter__(self) -> BuildLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_HELD: weakref.WeakValueDictionary[Path, BuildLock] = weakref.WeakValueDictionary()
"""The build locks of this process, by lock file (one dropped unreleased closes its file)."""


def _take_lock(path: Path, target: Path) -> IO[bytes]:
    """``path`` (created if needed) open, with an exclusive ``flock`` on it and this
    process's pid written in it; :class:`DatasetError` if another process holds the lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fh = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o644), "rb+", buffering=0)
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = fh.read(32).decode("ascii", "replace").strip()
            fh.close()
            by = f" (pid {holder})" if holder.isdigit() else ""
            raise DatasetError(
                f"{target} is being built by another maptab build{by}; "
                "wait for it or choose another --out"
            ) from None
        except BaseException:
            fh.close()
            raise
        try:
            if os.path.samestat(os.fstat(fh.fileno()), os.stat(path)):  # not removed meanwhile
                fh.truncate(0)
                fh.write(f"{os.getpid()}\n".encode("ascii"))
                return fh
        except FileNotFoundError:
            pass
        except BaseException:
            fh.close()
            raise
        fh.close()


class MapImager(Protocol):
    """Draws map images for a dataset; builders receive one (``renderer=``) and the writer
    receives the images, so neither imports :mod:`maptab.render`
    (:class:`maptab.render.images.DatasetImager` is the implementation)."""

    def style_name(self, name: str | None) -> str:
        """The canonical name of map style ``name``; unknown names raise."""
        ...

    def draw(self, network: Network, path: Path) -> list[str]:
        """Write ``network``'s PNG image to ``path``; its legibility problems."""
        ...


def draw_map_image(
    writer: DatasetWriter, network: Network, entry: MapEntry, renderer: MapImager | None
) -> tuple[Path | None, list[str] | None]:
    """Draw ``network`` with ``renderer`` straight into its dataset folder:
    ``(image path, legibility problems)`` for :meth:`DatasetWriter.add_map`; ``(None, None)``
    without a renderer."""
    if renderer is None:
        return None, None
    folder = writer.map_dir(entry.id)
    folder.mkdir(parents=True, exist_ok=True)
    image = folder / "image.png"
    return image, renderer.draw(network, image)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _leftovers(target: Path) -> list[Path]:
    """Temporary folders of earlier builds of ``target`` (``.<name>.building-<pid>`` and
    ``.<name>.old-<pid>``)."""
    parent, name = target.parent, target.name
    if not parent.is_dir():
        return []
    return sorted(
        p
        for marker in (_BUILDING, _OLD)
        for p in parent.glob(f".{glob.escape(name)}{marker}*")
        if p.name.rpartition("-")[2].isdigit()
    )


def _work_folder(target: Path) -> Path:
    """A fresh temporary folder beside ``target``, after checking that ``target`` may be
    replaced and removing the leftovers of builds whose process is gone."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise DatasetError(f"{target}: exists and is not a folder; choose another output")
    if target.is_dir() and any(target.iterdir()) and not (target / "manifest.json").is_file():
        raise DatasetError(
            f"{target}: folder exists, is not empty and is not a maptab dataset; "
            "refusing to replace it (choose another output or remove it)"
        )
    for old in _leftovers(target):
        pid = int(old.name.rpartition("-")[2])
        if pid == os.getpid() or not _pid_alive(pid):
            shutil.rmtree(old, ignore_errors=True)
    work = target.parent / f".{target.name}{_BUILDING}{os.getpid()}"
    work.mkdir(parents=True)
    return work


def _swap_into_place(work: Path, target: Path) -> None:
    """Move the finished dataset ``work`` to ``target`` (two renames on one file system)."""
    if target.exists():
        old = target.parent / f".{target.name}{_OLD}{os.getpid()}"
        os.rename(target, old)
        os.rename(work, target)
        shutil.rmtree(old)
    else:
        os.rename(work, target)


# --------------------------------------------------------------------------- reading
@dataclass(frozen=True, slots=True)
class Table:
    """A map table as written: header and rows of raw cell strings."""

    columns: list[str]
    rows: list[list[str]]


def read_table(path: Path) -> Table:
    """A MapTab CSV as header + rows of raw cell strings (BOM tolerated, values untouched)."""
    data = read_bytes(path, MAX_TABLE_BYTES, error=DatasetError)
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise DatasetError(f"{path}: not a readable UTF-8 CSV ({exc})") from None
    if not rows:
        raise DatasetError(f"{path}: empty table")
    header, body = rows[0], [r for r in rows[1:] if r]
    for n, row in enumerate(body, 2):
        if len(row) != len(header):
            raise DatasetError(f"{path}: row {n} has {len(row)} cells, header has {len(header)}")
    return Table(header, body)


class Dataset:
    """Read access to a dataset folder (lazy; networks are cached per map).

    Every file is reached through :meth:`file`: its path must stay inside the folder once
    symlinks are resolved (:func:`safe_join`), and with ``verify`` (the default) its content
    must have the SHA-256 the manifest lists; each file is hashed once per process. Pass
    ``verify=False`` (``--no-verify``) to read a dataset edited on purpose.
    """

    def __init__(self, root: str | Path, *, verify: bool = True) -> None:
        self.root = Path(root)
        self.verify_files = verify
        path = self.root / "manifest.json"
        if not path.exists():
            raise DatasetError(
                f"{self.root}: not a maptab dataset (no manifest.json)"
                f"{_interrupted(self.root)}{folder_hint(self.root)}"
            )
        safe_join(self.root, "manifest.json")
        data = read_json(path, error=DatasetError)
        self.manifest: dict[str, Any] = check_manifest(data, path)
        self._networks: dict[str, Network] = {}
        self._checked: dict[str, Path] = {}
        self._present: dict[str, bool] = {}
        self._map_dirs: dict[str, Path] = {}

    @cached_property
    def maps(self) -> dict[str, MapEntry]:
        return {m["id"]: MapEntry.from_dict(m) for m in self.manifest["maps"]}

    @property
    def files(self) -> dict[str, str]:
        """Relative path -> SHA-256 of every file the build wrote, from the manifest."""
        return self.manifest["files"]

    def file(self, relative: str) -> Path:
        """The checked path of the dataset file ``relative`` (class docstring); checked once
        per :class:`Dataset`."""
        path = self._checked.get(relative)
        if path is not None:
            return path
        path = safe_join(self.root, relative)
        if self.verify_files:
            expected = self.files.get(relative)
            shown = self.root / relative
            if expected is None:
                raise DatasetError(
                    f"{shown}: not listed in the manifest's files (added after the build); "
                    "rebuild the dataset, or pass --no-verify to read it as is"
                )
            if _sha256(path) != expected:
                raise DatasetError(
                    f"{shown}: content differs from the SHA-256 in manifest.json (changed "
                    "after the build); rebuild the dataset, or pass --no-verify to read it as is"
                )
        self._checked[relative] = path
        return path

    def has(self, relative: str) -> bool:
        """Whether the dataset has the file ``relative``: listed in the manifest or on disk
        (reading one that is only on disk is then refused by :meth:`file` when verifying)."""
        if self.verify_files and relative in self.files:
            return True
        if relative not in self._present:
            self._present[relative] = safe_join(self.root, relative).exists()
        return self._present[relative]

    def map_dir(self, map_id: str) -> Path:
        """The checked folder of a map (:func:`safe_join`); checked once per
        :class:`Dataset`, like :meth:`file` (a run asks for it with every request)."""
        path = self._map_dirs.get(map_id)
        if path is None:
            if map_id not in self.maps:
                raise DatasetError(f"{self.root}: unknown map {map_id!r}")
            path = self._map_dirs[map_id] = safe_join(self.root, f"maps/{map_id}")
        return path

    def map_file(self, map_id: str, name: str) -> Path:
        """The checked path of a map's file (``edges.csv``, ``network.json``, ``image.png`` …)."""
        self.map_dir(map_id)
        return self.file(f"maps/{map_id}/{name}")

    def network(self, map_id: str) -> Network:
        if map_id not in self._networks:
            path = self.map_file(map_id, "network.json")
            data = read_json(path, error=DatasetError)
            try:
                if not isinstance(data, dict):
                    raise TypeError("expected a JSON object")
                net = Network.from_dict(data)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise DatasetError(f"{path}: not a valid network ({exc})") from None
            # the table content, not only its hash: NaN, negative costs or a broken line are
            # refused before a model is shown them (a few ms, once per map)
            error = first_error(validate_network(net))
            if error is not None:
                raise DatasetError(f"{path}: {error}")
            self._networks[map_id] = net
        return self._networks[map_id]

    def forget_networks(self) -> None:
        """Drop the networks read so far (a caller going map by map keeps one map's)."""
        self._networks.clear()

    def image_path(self, map_id: str) -> Path | None:
        """The map's image, or ``None`` when the dataset has none."""
        if not self.has(f"maps/{map_id}/image.png"):
            return None
        return self.map_file(map_id, "image.png")

    def table_path(self, map_id: str, kind: str) -> Path:
        return self.map_file(map_id, TABLE_FILES[kind])

    def query_files(self) -> list[str]:
        """The task kinds whose query file this dataset has, in registry order."""
        return [k.name for k in all_kinds() if self.has(k.samples.file)]

    def records(self, kind: str) -> Iterator[tuple[int, dict[str, Any], Any]]:
        """``(line number, row, record)`` of each row of the query file of the task kind
        ``kind``, each checked against its schema (the kind's ``decode``); a bad row names
        file and line."""
        task = get_kind(kind)
        name = task.samples.file
        if not self.has(name):
            return
        path = self.file(name)
        for n, _, line in jsonl_byte_lines(path, error=DatasetError):
            row = _row(line, path, n)
            if row is _BLANK:
                continue
            try:
                record = task.samples.decode(row)
            except RecordError as exc:
                raise DatasetError(f"{self.root / name}:{n}: {exc}") from None
            yield n, row, record

    def records_of(self, kind: str, ids: Collection[str]) -> Iterator[Any]:
        """The records of the rows of task kind ``kind`` whose ``id`` is in ``ids``, in file
        order (a later row with the same id comes later). Only the ``id`` of the other rows
        is read: a report that shows a few hundred samples of a 200,000-row dataset decodes
        those, not every row (:meth:`records` decodes and checks them all). A wanted row is
        decoded and checked as the scorer does (:func:`record_decoder`: a bad row names file
        and line); a row whose ``id`` the fast read cannot take is read as ``json.loads``
        reads it (:func:`string_fields`: a line that is not JSON, or an ``id`` that is not a
        string, names file and line). ``ids`` is any collection of ids."""
        if not ids:
            return
        task = get_kind(kind)
        name = task.samples.file
        if not self.has(name):
            return
        wanted = set(ids)  # any collection: tested once per row
        shown = str(self.root / name)
        decode = record_decoder(task)
        for n, _, line, (sid,) in string_fields(task, self.file(name), ("id",), shown):
            if sid in wanted:
                yield decode(line, f"{shown}:{n}")  # a bad row names its problem

    def samples(
        self,
        *,
        split: str | None = None,
        categories: Iterable[str] | None = None,
        limit: int | None = None,
    ) -> Iterator[Sample]:
        """The samples of the dataset, in registry order of the kinds (``rp``, ``qa``,
        ``reasonmap``, then third-party kinds), each kind in file order, filtered (SPEC 11).

        ``categories`` mixes whole kinds (their names) and each kind's own selectors (an RP
        category such as ``time``, a QA type such as ``qa:7``); a row is kept when any
        selector matches. A row of a kind with several ``variants`` is several samples
        (``<id>/short``, ``<id>/long``). ``limit`` keeps the first N samples after filtering.
        With ``split``, rows whose ``split`` names another split are skipped unchecked.
        """
        for kind, _, _, row, record, sid, v in self._selected(split, categories, limit):
            yield Sample(sid, kind, row, record, v)

    def select(
        self,
        *,
        split: str | None = None,
        categories: Iterable[str] | None = None,
        limit: int | None = None,
    ) -> Iterator[SampleRef]:
        """Where the rows of :meth:`samples` lie (same selection, same order): one pass that
        checks each row, keeping no row. :meth:`load` reads the samples back."""
        versions: dict[str, tuple[int, int, int]] = {}
        for kind, n, offset, _, _, sid, v in self._selected(
            split, categories, limit, versions, light=True
        ):
            yield SampleRef(sid, kind, v, offset, n, versions[kind])

    def load(self, refs: Iterable[SampleRef]) -> Iterator[Sample]:
        """The samples at ``refs`` (from :meth:`select`), read back by offset: only these
        rows are read, the row of a kind with several variants once for all of them. A
        file changed since :meth:`select` read it is an error."""
        files: dict[str, tuple[IO[bytes], Path, TaskKind, tuple[int, int, int]]] = {}
        last: tuple[str, int, dict[str, Any], Any] | None = None
        try:
            for ref in refs:
                if last is None or last[0] != ref.kind or last[1] != ref.offset:
                    if ref.kind not in files:
                        task = get_kind(ref.kind)
                        path = self.file(task.samples.file)
                        fh = open_regular(path, binary=True, error=DatasetError)
                        version = _version(os.fstat(fh.fileno()))
                        files[ref.kind] = (fh, path, task, version)
                    fh, path, task, version = files[ref.kind]
                    if ref.version != version:
                        raise DatasetError(
                            f"{path}: changed since its samples were chosen; run again"
                        )
                    if fh.tell() != ref.offset:
                        fh.seek(ref.offset)
                    row = _row(fh.readline(), path, ref.line)
                    try:
                        record = None if row is _BLANK else task.samples.decode(row)
                    except RecordError as exc:
                        raise DatasetError(f"{path}:{ref.line}: {exc}") from None
                    held = None if record is None else record.id
                    if (task.split_id(ref.id) or ("",))[0] != held:
                        raise DatasetError(
                            f"{path}:{ref.line}: holds {held!r}, not {ref.id!r} "
                            "(the file changed during the run)"
                        )
                    last = (ref.kind, ref.offset, row, record)
                yield Sample(ref.id, ref.kind, last[2], last[3], ref.variant)
        finally:
            for fh, *_ in files.values():
                fh.close()

    def _selected(
        self,
        split: str | None,
        categories: Iterable[str] | None,
        limit: int | None,
        versions: dict[str, tuple[int, int, int]] | None = None,
        *,
        light: bool = False,
    ) -> Iterator[tuple[str, int, int, Any, Any, str, str]]:
        """``(kind, line, offset, row, record, sample id, variant)`` of each selected sample
        (:meth:`samples`); ``versions`` receives each query file's version as it is read.
        A row is decoded to its JSON value and checked by the kind's ``decode``; with
        ``light`` (:meth:`select`, which keeps no row) it is read by :func:`row_reader`,
        straight into its record, and ``row`` is ``None``. With ``split``, a row that names
        another split is skipped unchecked."""
        kinds = all_kinds()
        whole, picks = _parse_selectors(kinds, categories)
        any_sel = bool(whole or picks)
        present = [k for k in kinds if self.has(k.samples.file)]
        if not present:
            files = [k.samples.file for k in kinds]
            listed = f"{', '.join(files[:-1])} or {files[-1]}" if len(files) > 1 else files[0]
            raise DatasetError(f"{self.root}: no {listed}")
        count = 0
        for kind in present:
            if any_sel and kind.name not in whole and kind.name not in picks:
                continue  # no selector can match a row of this kind
            mine = picks.get(kind.name, [])
            path = self.file(kind.samples.file)
            if versions is not None:
                versions[kind.name] = _version(path.stat())
            read = row_reader(kind) if light else None
            for n, offset, line in jsonl_byte_lines(path, error=DatasetError):
                row = None
                try:
                    if read is not None:
                        record = read(line, f"{path}:{n}")
                    else:
                        row = _row(line, path, n)
                        if row is _BLANK or (split is not None and _other_split(row, split)):
                            continue
                        record = kind.samples.decode(row)
                except RecordError as exc:
                    if split is not None and _other_split(row or _row(line, path, n), split):
                        continue
                    raise DatasetError(f"{self.root / kind.samples.file}:{n}: {exc}") from None
                if record is None or (split is not None and record.split != split):
                    continue
                if any_sel and kind.name not in whole and not any(p(record) for p in mine):
                    continue
                for sid, v in kind.sample_ids(record.id):
                    if limit is not None and count >= limit:
                        return
                    yield kind.name, n, offset, row, record, sid, v
                    count += 1

    def rp(self) -> list[RPQuery]:
        return [r for _, _, r in self.records("rp")]  # type: ignore[misc]

    def qa(self) -> list[QAQuery]:
        return [r for _, _, r in self.records("qa")]  # type: ignore[misc]

    def reasonmap(self) -> list[ReasonMapQuestion]:
        return [r for _, _, r in self.records("reasonmap")]  # type: ignore[misc]

    def verify(self) -> list[str]:
        """Problems of the folder against the manifest, one ``"<path>: <what>"`` each: a file
        missing, leading outside the folder, not a regular file, with another SHA-256, or on
        disk without being listed. Empty when the dataset is exactly what was built."""
        bad = []
        for rel, digest in self.files.items():
            try:
                path = safe_join(self.root, rel)
            except DatasetError:
                bad.append(f"{rel}: leads outside the folder")
                continue
            if not path.exists():
                bad.append(f"{rel}: listed in the manifest but missing")
                continue
            try:
                same = _sha256(path) == digest
            except DatasetError as exc:
                bad.append(f"{rel}: {str(exc).removeprefix(f'{path}: ')}")
                continue
            if not same:
                bad.append(f"{rel}: content differs from the manifest's SHA-256")
        listed = set(self.files) | {"manifest.json"}
        for p in sorted(self.root.rglob("*")):
            rel = p.relative_to(self.root).as_posix()
            if (p.is_file() or p.is_symlink()) and rel not in listed:
                bad.append(f"{rel}: on disk but not listed in the manifest")
        return bad


_DECODE_ROW = msgspec.json.Decoder().decode


class Maps:
    """The networks of a dataset and their Mix_tab variants, each loaded once (what a
    route-planning scorer reads: ``network(map_id)``, ``mix(map_id)``)."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset
        self._mix: dict[str, Network] = {}

    def network(self, map_id: str) -> Network:
        return self.dataset.network(map_id)

    def mix(self, map_id: str) -> Network:
        if map_id not in self._mix:
            net = self.network(map_id)
            self._mix[map_id] = net.with_attributes(vertices=derive_mix(net))
        return self._mix[map_id]


def json_object(line: str | bytes, where: str) -> dict[str, Any]:
    """One row decoded as ``json.loads`` decodes it; a row that is not a JSON object is an
    error naming ``where``."""
    row = loads_json(line, where, error=DatasetError)
    if not isinstance(row, dict):
        raise DatasetError(f"{where}: expected a JSON object, found {type(row).__name__}")
    return row


def string_fields(
    kind: TaskKind, path: Path, keys: tuple[str, ...], shown: Path | str
) -> Iterator[tuple[int, int, bytes, tuple[str, ...]]]:
    """``(line number, byte offset, line, values)`` of each non-blank row of ``kind``'s
    query file ``path`` (``shown`` in errors): the string values of the top-level fields
    ``keys``, as ``json.loads`` gives them (the scorer's match index, the report's
    :meth:`Dataset.records_of`).

    A row is read by msgspec, which decodes only these fields (and checks their UTF-8, not
    that of the fields it skips: a row that is used is decoded whole, and checked, when it
    is used; the dataset's bytes are checked against its manifest). A line msgspec refuses
    is a blank line (also as text: other readers skip it) or read the full way, which names
    the line's problem (not UTF-8, not JSON, a value that is not a string)."""
    decode = _FIELDS.get(keys)
    if decode is None:
        struct = msgspec.defstruct("Fields", [(k, str) for k in keys])
        decode = _FIELDS[keys] = msgspec.json.Decoder(struct).decode
    astuple = msgspec.structs.astuple
    for n, at, line in jsonl_byte_lines(path, error=DatasetError):
        try:
            values = astuple(decode(line))
        except (msgspec.DecodeError, ValueError, RecursionError):
            if line_text(line, shown, n, error=DatasetError) is None:
                continue
            values = _fields_checked(kind, line, keys, f"{shown}:{n}")
        yield n, at, line, values


_FIELDS: dict[tuple[str, ...], Callable[[str | bytes], Any]] = {}  # keys -> msgspec decode


def _fields_checked(
    kind: TaskKind, line: str | bytes, keys: tuple[str, ...], where: str
) -> tuple[str, ...]:
    """The string values of the top-level fields ``keys`` in one row of ``kind``'s query
    file (at ``where``) that msgspec did not read, as ``json.loads`` gives them; a value
    that is not a string is an error naming the row and, when the kind's decoder finds
    one, the bad field."""
    row = json_object(line, where)
    values = tuple(row.get(k) for k in keys)
    if any(not isinstance(v, str) for v in values):
        try:
            kind.samples.decode(row)  # names the bad field
        except RecordError as exc:
            raise DatasetError(f"{where}: {exc}") from None
        raise DatasetError(f"{where}: a field of {', '.join(keys)} is not a string")
    return values  # type: ignore[return-value]


def row_reader(kind: TaskKind) -> Callable[[bytes, str], Any]:
    """``read(line, where)``: the record of one JSONL line (bytes) of ``kind``'s query file,
    as ``kind.samples.decode`` makes it from the line's JSON value; ``None`` for a blank line. A
    line that is not UTF-8 text or not JSON raises :class:`DatasetError` naming ``where``;
    a row ``kind.samples.decode`` refuses raises its :class:`~maptab.core.schema.RecordError` (the
    caller names file and line). For readers that keep no row (:meth:`Dataset.select`,
    the scorer): a kind whose ``decode`` is :func:`maptab.core.schema.row_decoder` of its record
    class (the built-in kinds) has its lines decoded by msgspec straight into the record
    (:func:`maptab.core.schema.line_decoder`), with the same checks and messages; any other
    kind's ``decode`` gets the JSON value."""
    if kind.samples.decode is row_decoder(kind.samples.record):
        typed = line_decoder(kind.samples.record)
        return lambda line, where: typed(line, where, DatasetError)
    decode = kind.samples.decode

    def read(line: bytes, where: str) -> Any:
        text = line_json_text(line, where, DatasetError)
        return None if text is None else decode(loads_json(text, where, error=DatasetError))

    return read


def record_decoder(kind: TaskKind) -> Callable[[bytes, str], Any]:
    """``decode(line, where)``: the record of one JSONL row (bytes) of ``kind``'s query
    file (:func:`row_reader`), every failure a :class:`DatasetError` naming ``where``. Used
    by the scorer and :meth:`Dataset.records_of`, which read single rows by offset."""
    read = row_reader(kind)

    def decode(line: bytes, where: str) -> Any:
        try:
            record = read(line, where)
        except RecordError as exc:
            raise DatasetError(f"{where}: {exc}") from None
        if record is None:
            loads_json(line, where, error=DatasetError)  # raises: a blank line is no row
        return record

    return decode


def _other_split(row: Any, split: str) -> bool:
    """Whether ``row`` names a split other than ``split``."""
    other = row.get("split") if type(row) is dict else None
    return type(other) is str and other != split


def _version(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_size, st.st_mtime_ns, st.st_ino


_BLANK = object()


def _row(line: bytes, path: Path, n: int) -> Any:
    """The JSON value of line ``n`` of ``path`` (its bytes), ``_BLANK`` for a blank line,
    or a one-line error. The bytes go to msgspec as they are (it checks the UTF-8 of every
    string it decodes; 3 µs a row less than decoding the text first); what it refuses is
    read as text by :func:`~maptab._limits.loads_json`, whose values and errors are json's."""
    try:
        return _DECODE_ROW(line)
    except (msgspec.DecodeError, ValueError, RecursionError):
        pass
    text = line_text(line, path, n, error=DatasetError)
    return _BLANK if text is None else loads_json(text, f"{path}:{n}", error=DatasetError)


def folder_hint(root: Path) -> str:
    """``"; it is …"``: what the folder ``root`` is when a command got the wrong kind of
    folder (a dataset, a run folder, a report), with the command that takes it; ``""``
    for anything else."""
    if (root / "manifest.json").is_file():
        return (
            f"; it is a dataset: answer it with `maptab run {root} --model oracle --out "
            f"runs/oracle`, then `maptab score runs/oracle`"
        )
    if (root / "run.json").is_file() or (root / "predictions.jsonl").is_file():
        try:
            dataset = json.loads((root / "run.json").read_text(encoding="utf-8"))["dataset"]
        except (OSError, ValueError, KeyError, TypeError):
            dataset = None
        where = f" (its dataset: {dataset})" if isinstance(dataset, str) else ""
        return f"; it is a run folder{where}: `maptab score {root}`, then `maptab report {root}`"
    if (root / "index.html").is_file() and (root / "tables").is_dir():
        return f"; it is a report: open {root / 'index.html'}"
    return ""


def _interrupted(root: Path) -> str:
    """A hint when an interrupted build left its temporary folders beside ``root``."""
    left = _leftovers(root)
    if not left:
        return ""
    return f"; a build was interrupted, leaving {', '.join(p.name for p in left)}"


def check_manifest(data: Any, path: Path) -> dict[str, Any]:
    """The manifest ``data`` read from ``path``, checked for the shape readers rely on.

    Keys this version does not know are ignored (a newer writer may add some within the
    same ``schema_version``; an incompatible change bumps the version, which is refused).
    """
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: expected a JSON object, found {type(data).__name__}")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise DatasetError(
            f"{path}: schema_version {version!r}, this maptab reads {SCHEMA_VERSION}"
        )
    maps = data.setdefault("maps", [])
    if not isinstance(maps, list):
        raise DatasetError(f"{path}: 'maps' must be a list, found {type(maps).__name__}")
    seen: set[str] = set()
    for i, m in enumerate(maps):
        try:
            entry = MapEntry.from_dict(m)
        except RecordError as exc:
            raise DatasetError(f"{path}: maps[{i}]: {exc}") from None
        if entry.id in seen:
            raise DatasetError(f"{path}: maps[{i}]: duplicate map id {entry.id!r}")
        seen.add(entry.id)
    files = data.setdefault("files", {})
    if not isinstance(files, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in files.items()
    ):
        raise DatasetError(f"{path}: 'files' must map relative paths to SHA-256 strings")
    for key in ("options", "counts"):
        if not isinstance(data.setdefault(key, {}), dict):
            raise DatasetError(f"{path}: {key!r} must be a JSON object")
    return data


# --------------------------------------------------------------------------- shards
def merge_shards(shards: Iterable[str | Path], out: str | Path) -> dict[str, Any]:
    """Merge the shards of one build (``maptab build --shard i/N``) into one dataset at
    ``out``; returns its manifest.

    Every shard must be present once, from the same seed and options; every file is checked
    against its shard's manifest while it is copied. Maps and query rows come in the global
    map order (map ``p`` from shard ``p mod N``), so the result is byte-identical to the same
    build made at once. Atomic, like any build (:class:`DatasetWriter`)."""
    folders = [Path(s) for s in shards]
    manifests = [_shard_manifest(f) for f in folders]
    if not manifests:
        raise DatasetError("no shard to merge")
    first = manifests[0]["options"]["shard"]
    count, total = first["count"], first["maps"]
    by_index: dict[int, tuple[Path, dict[str, Any]]] = {}
    base = _unsharded_options(manifests[0])
    for folder, m in zip(folders, manifests, strict=True):
        info = m["options"]["shard"]
        if (info["count"], info["maps"]) != (count, total) or m["seed"] != manifests[0]["seed"]:
            raise DatasetError(f"{folder}: a shard of another build (seed, shard count or maps)")
        if _unsharded_options(m) != base:
            raise DatasetError(f"{folder}: a shard built with other options")
        if info["index"] in by_index:
            raise DatasetError(f"{folder}: shard {info['index']}/{count} given twice")
        by_index[info["index"]] = (folder, m)
    missing = sorted(set(range(count)) - set(by_index))
    if missing:
        raise DatasetError(f"missing shard {missing[0]}/{count} of {count}")
    problems: dict[str, Any] = {}
    for _, m in by_index.values():
        problems.update(m["options"].get("legibility_problems", {}))
    options = dict(base)
    if problems:
        options["legibility_problems"] = problems
    readers: list[_ShardReader] = []
    try:
        with DatasetWriter(Path(out), manifests[0]["seed"], options=options) as writer:
            readers.extend(_ShardReader(*by_index[i]) for i in range(count))
            for position in range(total):
                readers[position % count].copy_next_map(writer)
            for reader in readers:
                reader.finish()
            return writer.finish()
    finally:
        for reader in readers:
            reader.close()


def _shard_manifest(folder: Path) -> dict[str, Any]:
    manifest = read_json(folder / "manifest.json", error=DatasetError)
    shard = manifest.get("options", {}).get("shard") if isinstance(manifest, dict) else None
    if not isinstance(shard, dict) or not {"index", "count", "maps", "rows"} <= set(shard):
        raise DatasetError(f"{folder}: not a shard of maptab build --shard")
    return manifest


def _unsharded_options(manifest: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v for k, v in manifest["options"].items() if k not in ("shard", "legibility_problems")
    }


class _ShardReader:
    """Reads one shard's maps in order, checking each file against the shard's manifest."""

    def __init__(self, folder: Path, manifest: dict[str, Any]) -> None:
        self.folder = folder
        self.hashes: dict[str, str] = manifest["files"]
        self.maps = [MapEntry.from_dict(m) for m in manifest["maps"]]
        self.rows: dict[str, list[int]] = manifest["options"]["shard"]["rows"]
        self.next = 0
        ids = sorted((m.id for m in self.maps), key=len, reverse=True)
        self.map_files: dict[str, list[str]] = {i: [] for i in ids}
        for name in self.hashes:
            for i in ids:  # the longest id whose folder holds the file (ids may hold "/")
                if name.startswith(f"maps/{i}/"):
                    self.map_files[i].append(name)
                    break
        self.files: dict[str, IO[bytes]] = {}
        self.digests: dict[str, Any] = {}
        for kind, name in QUERY_FILES.items():
            if name not in self.hashes:
                raise DatasetError(f"{folder}: {name} is not in the shard manifest")
            self.files[kind] = open_regular(
                safe_join(folder, name), binary=True, error=DatasetError
            )
            self.digests[kind] = hashlib.sha256()

    def copy_next_map(self, writer: DatasetWriter) -> None:
        if self.next >= len(self.maps):
            raise DatasetError(f"{self.folder}: fewer maps than its shard count says")
        entry = self.maps[self.next]
        self.next += 1
        target = map_folder(writer.root, entry.id)
        for name in self.map_files[entry.id]:
            path = safe_join(writer.root, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            digest = hashlib.sha256()
            with (
                open_regular(safe_join(self.folder, name), binary=True, error=DatasetError) as src,
                path.open("wb") as dst,
            ):
                while chunk := src.read(1 << 20):
                    digest.update(chunk)
                    dst.write(chunk)
            self._check(name, digest.hexdigest())
        target.mkdir(parents=True, exist_ok=True)
        counts = self.rows.get(entry.id)
        if counts is None or len(counts) != len(QUERY_FILES):
            raise DatasetError(f"{self.folder}: no row counts for map {entry.id!r}")
        for kind, n in zip(QUERY_FILES, counts, strict=True):
            lines = [self.files[kind].readline() for _ in range(n)]
            if any(not line.endswith(b"\n") for line in lines):
                raise DatasetError(f"{self.folder}: {QUERY_FILES[kind]} ends early")
            for line in lines:
                self.digests[kind].update(line)
            writer.add_lines(kind, lines, n)
        writer.record_map(entry)

    def finish(self) -> None:
        """Check that every map and row was read, and the query files' hashes."""
        if self.next != len(self.maps):
            raise DatasetError(f"{self.folder}: more maps than its shard count says")
        for kind, fh in self.files.items():
            if fh.read(1):
                raise DatasetError(f"{self.folder}: {QUERY_FILES[kind]} has rows of no map")
            self._check(QUERY_FILES[kind], self.digests[kind].hexdigest())

    def close(self) -> None:
        for fh in self.files.values():
            fh.close()

    def _check(self, name: str, digest: str) -> None:
        if self.hashes.get(name) != digest:
            raise DatasetError(f"{self.folder / name}: does not match its shard's manifest")
