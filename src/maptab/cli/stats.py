"""``maptab stats``: the shape of a dataset's networks and gold labels."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from maptab.cli.app import BranchSplitsOption, StationAliasesOption, app, console, fail
from maptab.cli.progress import track
from maptab.errors import MaptabError

#: Figures shown in the table (the JSON has all of them), per scenario.
_QUERIES = (
    "gold.repetition.FR",
    "gold.repetition.PR",
    "gold.repetition.NR",
    "gold.gold_tied_share",
    "baselines.shortest.weighted",
    "baselines.random.criteria_free",
)
SHOWN = {
    "metromap": (
        "networks.maps",
        "networks.stations_median",
        "networks.lines_median",
        "networks.lines_mean",
        "networks.maps_le_2_lines",
        "networks.maps_1_line",
        "networks.cycles_mean",
        "networks.dead_end_share",
        "networks.transfer_station_share",
        "networks.avg_hops_median",
        "networks.maps_avg_hops_over_17",
        "networks.route_stations_p90",
        "networks.route_stations_max",
        "networks.tied_pair_share",
        "networks.transfers_mean",
        "networks.transfers_zero_share",
        *_QUERIES,
    ),
    "travelmap": (
        "networks.maps",
        "networks.stations_median",
        "networks.cycles_mean",
        "networks.dead_end_share",
        "networks.one_path_share",
        "networks.simple_paths_median",
        "networks.avg_hops_median",
        "networks.route_stations_p90",
        "networks.tied_pair_share",
        *_QUERIES,
    ),
}


def _fmt(value: Any, name: str) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if "share" in name or name.startswith(("gold.repetition", "baselines", "networks.maps_")):
            return f"{100 * value:.1f}%"
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return str(value)


def _tables(figures: dict[str, Any], reference: dict[str, Any] | None) -> list[Table | str]:
    """One table per scenario; with a reference, its value and a numbered source per row,
    the sources listed below the tables."""
    from maptab.report.describe import flatten

    out: list[Table | str] = []
    sources: dict[str, int] = {}
    for scenario, section in figures["scenarios"].items():
        flat = flatten(section)
        ref = (reference or {}).get(scenario, {})
        table = Table(title=f"{scenario} ({figures.get('split', 'all')} queries)")
        table.add_column("figure")
        table.add_column("this", justify="right")
        if reference is not None:
            table.add_column("reference", justify="right")
            table.add_column("src", justify="right")
        for name in SHOWN[scenario]:
            if name not in flat and name not in ref:
                continue
            row = [name, _fmt(flat.get(name), name)]
            if reference is not None:
                entry = ref.get(name, {})
                source = entry.get("source")
                tag = f"[{sources.setdefault(source, len(sources) + 1)}]" if source else ""
                row += [_fmt(entry.get("value"), name), tag]
            table.add_row(*row)
        out.append(table)
    out += [f"[{n}] {escape(source)}" for source, n in sources.items()]
    return out


@app.command()
def stats(
    dataset: Annotated[
        Path | None, typer.Argument(help="Dataset folder (from maptab build).")
    ] = None,
    from_reasonmap: Annotated[
        Path | None,
        typer.Option(help="Describe the metro topologies of a ReasonMap stations folder instead."),
    ] = None,
    branch_splits: BranchSplitsOption = None,
    station_aliases: StationAliasesOption = None,
    compare: Annotated[
        bool, typer.Option("--compare", help="Put the reference figures beside the dataset's.")
    ] = False,
    reference: Annotated[
        Path | None,
        typer.Option(help="Reference file for --compare (default: the shipped real-network one)."),
    ] = None,
    baselines: Annotated[
        bool,
        typer.Option(
            "--baselines", help="Also score the shortest and random baselines (paper EMA)."
        ),
    ] = False,
    split: Annotated[
        str | None, typer.Option(help="Query figures of this split only (train/test).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write every figure to this JSON file.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON instead.")] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Figures that describe a dataset: network shape (stations, lines, cycles, degrees,
    path lengths, ties, transfers, simple paths), gold labels (FR/PR/NR per category,
    gold route lengths), attribute quantiles, difficulty shares; see docs/reference/synthesis.md."""
    from maptab.report.describe import describe_dataset, describe_networks, load_reference

    if (dataset is None) == (from_reasonmap is None):
        fail("give a DATASET folder or --from-reasonmap DIR (one of them)")
    if from_reasonmap is None and (branch_splits or station_aliases):
        fail("--branch-splits and --station-aliases go with --from-reasonmap")
    if split not in (None, "train", "test"):
        fail(f"unknown split {split!r}; use train or test")
    try:
        if from_reasonmap is not None:
            figures = describe_networks(
                _reasonmap_networks(from_reasonmap, branch_splits, station_aliases)
            )
        else:
            bar = track if progress and not as_json else None
            figures = describe_dataset(dataset, baselines=baselines, split=split, progress=bar)
        ref = load_reference(reference) if compare else None
    except (MaptabError, OSError, json.JSONDecodeError) as exc:
        fail(str(exc))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if as_json:
        console.print_json(data=figures)
        return
    for item in _tables(figures, ref):
        console.print(item, highlight=False, soft_wrap=isinstance(item, str))


def _reasonmap_networks(
    folder: Path, branch_splits: Path | None = None, station_aliases: Path | None = None
) -> list:
    """The maps of a ReasonMap stations folder, read as ``maptab build`` reads them (SPEC 14)."""
    from maptab.io.metadata import load_reasonmap_folder

    return load_reasonmap_folder(
        folder, branch_splits=branch_splits, station_aliases=station_aliases
    )
