"""``maptab build --from-tables DIR``: a benchmark over the user's own maps.

The folder holds one sub-folder per map (``docs/guides/import-and-export.md``)::

    DIR/<map id>/Edge_tab.csv     edges (or Edge_tab.json), required
    DIR/<map id>/Vertex_tab.csv   stations (or Vertex_tab.json), required
    DIR/<map id>/Mix_tab.csv      optional; checked against the one derived (SPEC 5)
    DIR/<map id>/image.png        optional; copied as the map image instead of drawing one

The map id is the sub-folder's path below ``DIR`` (``europe/lyon`` for ``DIR/europe/lyon``).
The scenario of each map comes from its columns (a ``Line`` column: metromap; SPEC 5). The
tables are read as the MapTab tables are everywhere (:func:`maptab.core.tables.read_network`) and
must be well-formed (SPEC 7, :func:`maptab.core.validate.validate_tables`); values outside the
MapTab profile (the SPEC 6 synthesis ranges) are kept as given and reported to ``warn``, one
line per table. From there the maps go through the same steps as generated ones
(:func:`maptab.generate.pipeline.write_benchmark`): map difficulty and train/test split
(SPEC 8), OD pairs by Algorithm 1, 12 RP queries per pair with exact gold labels and 12 QA
queries per map, spread over ``workers`` made by ``executors`` as a synthetic build's maps are
(:mod:`maptab.executors`: local processes or Ray tasks; the files do not depend on either).
Bad input raises :class:`OwnTablesError` naming the file, row and field.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from maptab._progress import Progress
from maptab.core import tables
from maptab.core.network import Network
from maptab.core.validate import first_error, profile_warnings, validate_tables
from maptab.errors import MaptabError
from maptab.executors import ExecutorFactory, local_executor
from maptab.generate.pipeline import Preset, style_name, write_benchmark
from maptab.io.dataset import MapImager, safe_join

__all__ = ["OwnTablesError", "build_from_tables", "find_maps"]

TABLE_NAMES = {"edges": "Edge_tab", "vertices": "Vertex_tab", "mix": "Mix_tab"}
IMAGE_NAME = "image.png"
DEFAULT_PAIRS_PER_MAP = 8


class OwnTablesError(MaptabError):
    """A folder of own maps that cannot become a benchmark (names file, row and field)."""


def _table(folder: Path, kind: str, required: bool) -> Path | None:
    """``folder``'s table of ``kind`` (CSV or JSON); both present or a required one missing
    is an error."""
    stem = TABLE_NAMES[kind]
    found = [
        folder / f"{stem}{ext}" for ext in (".csv", ".json") if (folder / f"{stem}{ext}").exists()
    ]
    if len(found) > 1:
        raise OwnTablesError(f"{folder}: both {stem}.csv and {stem}.json; keep one")
    if not found:
        if required:
            raise OwnTablesError(f"{folder}: no {stem}.csv (or {stem}.json)")
        return None
    return found[0]


def find_maps(root: str | Path) -> list[tuple[str, Path]]:
    """``(map id, folder)`` of every map under ``root``, sorted by id: each folder holding an
    ``Edge_tab`` or ``Vertex_tab`` file."""
    root = Path(root)
    if not root.is_dir():
        raise OwnTablesError(f"{root}: not a folder")
    folders = sorted(
        {p.parent for stem in ("Edge_tab", "Vertex_tab") for p in root.rglob(f"{stem}.*")}
    )
    maps = []
    for folder in folders:
        map_id = folder.relative_to(root).as_posix()
        if map_id == ".":
            raise OwnTablesError(
                f"{root}: tables lie directly in the folder; put each map's tables in a "
                "sub-folder named after the map"
            )
        safe_join(root, map_id)  # no link leading out of the folder
        maps.append((map_id, folder))
    if not maps:
        raise OwnTablesError(f"{root}: no map folders (<map id>/Edge_tab.csv + Vertex_tab.csv)")
    return maps


def read_map(map_id: str, folder: Path, warn: Callable[[str], None] | None = None) -> Network:
    """One map's network from its folder, checked (module docstring)."""
    edges = _table(folder, "edges", required=True)
    vertices = _table(folder, "vertices", required=True)
    assert edges is not None and vertices is not None
    problems = validate_tables(edges, vertices, profile="maptab")
    error = first_error(problems)
    if error is not None:
        raise OwnTablesError(error)
    if warn is not None:
        for line in profile_warnings(problems):
            warn(line)
    try:
        net = tables.read_network(edges, vertices, map_id=map_id)
    except tables.TableError as exc:
        raise OwnTablesError(str(exc)) from None
    mix = _table(folder, "mix", required=False)
    if mix is not None:
        _check_mix(net, mix)
    return net


def _check_mix(net: Network, path: Path) -> None:
    """A given Mix_tab must equal the one SPEC 5 derives from Edge_tab and Vertex_tab."""
    try:
        given = tables.read_vertices(path, net.scenario)
    except tables.TableError as exc:
        raise OwnTablesError(str(exc)) from None
    derived = {row["Vertex"]: row for row in tables.mix_rows(net)}
    first_row = 2 if path.suffix.lower() == ".csv" else 1
    shown = net.with_attributes(vertices={v.name: v for v in given})
    for n, row in enumerate(tables.vertex_rows(shown)):
        line = first_row + n
        want = derived.get(row["Vertex"])
        if want is None:
            raise OwnTablesError(
                f"{tables.location(str(path), line, 'Vertex')}{row['Vertex']!r} is not a "
                "station of Vertex_tab"
            )
        for column, value in row.items():
            if column != "Vertex" and value != want[column]:
                raise OwnTablesError(
                    f"{tables.location(str(path), line, column)}{value!r}, but Edge_tab and "
                    f"Vertex_tab give {want[column]!r} (SPEC 5 Mix_tab); fix it or leave "
                    "Mix_tab out"
                )
    missing = sorted(set(derived) - {v.name for v in given})
    if missing:
        raise OwnTablesError(f"{path}: no row for station {missing[0]!r}")


def build_from_tables(
    tables_dir: str | Path,
    out_dir: str | Path,
    *,
    seed: int = 0,
    pairs_per_map: int = DEFAULT_PAIRS_PER_MAP,
    renderer: MapImager | None = None,
    map_style: str = "clean",
    report_totals: bool = False,
    cost_model: str = "additive",
    progress: Progress | None = None,
    workers: int | None = None,
    executors: ExecutorFactory = local_executor,
    warn: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """A benchmark over the maps of ``tables_dir`` (module docstring); returns the manifest.

    ``pairs_per_map`` OD pairs per map on average (each scenario gets ``pairs_per_map`` ×
    its maps, spread by Algorithm 1, at least 2 per map where the map has them).
    ``renderer`` draws the image of every map that brings none (``None``: only the supplied
    images); ``warn`` gets one line per table with values outside the MapTab profile; the
    rest, ``workers`` and ``executors`` included, as
    :func:`maptab.generate.pipeline.build_benchmark`.
    """
    if pairs_per_map < 1:
        raise OwnTablesError(f"pairs per map must be at least 1, not {pairs_per_map}")
    found = find_maps(tables_dir)
    nets: list[Network] = []
    images: dict[str, Path] = {}
    for map_id, folder in found:
        nets.append(read_map(map_id, folder, warn))
        if (folder / IMAGE_NAME).is_file():
            images[map_id] = folder / IMAGE_NAME
    # the generator's order: metro maps first (difficulty and allocation are per scenario)
    nets.sort(key=lambda n: (n.scenario != "metromap", n.map_id))
    metro = sum(n.scenario == "metromap" for n in nets)
    spec = Preset(
        "tables",
        metro,
        len(nets) - metro,
        pairs_per_map * metro,
        pairs_per_map * (len(nets) - metro),
        q_min=min(2, pairs_per_map),
        map_style=map_style,
    )
    options = {
        "source": "tables",
        "pairs_per_map": pairs_per_map,
        "preset": {"q_min": spec.q_min, "alpha": spec.alpha},
        "render": renderer is not None,
        "report_totals": report_totals,
        "cost_model": cost_model,
        "map_style": style_name(map_style, renderer),
    }
    return write_benchmark(
        out_dir,
        nets,
        spec,
        seed,
        options,
        renderer=renderer,
        progress=progress,
        workers=workers,
        images=images,
        source="tables",
        executors=executors,
    )
