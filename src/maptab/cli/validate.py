"""``maptab validate``: check an Edge_tab / Vertex_tab pair (SPEC 7), or a whole dataset;
``--profile maptab`` adds the MapTab profile (SPEC 6 synthesis ranges)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from maptab.cli.app import app, console, fail
from maptab.core.network import SCENARIOS
from maptab.core.tables import read_network
from maptab.core.validate import PROFILES, Problem, errors, validate_tables
from maptab.errors import MaptabError


def _count(problems: list[Problem], deviations: int) -> str:
    """``N problem(s) found`` with, where there are some, how many are profile deviations."""
    found = f"{len(problems)} problem(s) found"
    if deviations:
        found += f" ({deviations} outside the MapTab profile)"
    return found


@app.command()
def validate(
    edges: Annotated[
        Path, typer.Argument(help="Edge_tab file (.csv or .json), or a dataset folder.")
    ],
    vertices: Annotated[
        Path | None, typer.Argument(help="Vertex_tab file (.csv or .json).")
    ] = None,
    scenario: Annotated[
        str | None,
        typer.Option(help="metromap or travelmap; default: a Line column means metromap."),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            help="Also report values outside this profile: 'maptab' (the SPEC 6 ranges and "
            "decimals MapTab's data was generated with)."
        ),
    ] = None,
    sample: Annotated[
        int,
        typer.Option(min=0, help="Dataset: gold labels re-derived per kind (RP, QA)."),
    ] = 200,
) -> None:
    """Check two MapTab tables, or a dataset folder made by `maptab build`.

    Tables: file format, well-formed values and consistency (SPEC 7); with --profile maptab
    also the MapTab synthesis ranges (SPEC 6). Dataset: the manifest, every file's SHA-256,
    every map's tables, every record's schema, and gold labels re-derived on a random
    sample. Prints one line per problem (file:row: field: what is wrong) and exits with
    status 1, or prints a one-line summary and exits with status 0.
    """
    if profile is not None and profile not in PROFILES:
        fail(f"unknown profile {profile!r}; use {', '.join(sorted(PROFILES))}")
    if vertices is None:
        if not edges.is_dir():
            fail(f"{edges}: give a dataset folder, or an Edge_tab and a Vertex_tab file")
        _validate_dataset(edges, sample, profile)
        return
    if scenario is not None and scenario not in SCENARIOS:
        fail(f"unknown scenario {scenario!r}; use metromap or travelmap")
    try:
        problems = validate_tables(edges, vertices, scenario, profile=profile)
        if problems:
            for p in problems:
                console.print(str(p), markup=False, highlight=False, soft_wrap=True)
            fail(_count(problems, len(problems) - len(errors(problems))))
        network = read_network(edges, vertices, scenario)  # type: ignore[arg-type]
    except MaptabError as exc:
        fail(str(exc))
    if network.scenario == "metromap":
        summary = (
            f"ok: {len(network.vertices)} stations, {len(network.edges)} edges, "
            f"{len(network.line_names)} lines"
        )
    else:
        summary = f"ok: {len(network.vertices)} spots, {len(network.edges)} edges"
    if profile is not None:
        summary += f", within the {profile} profile"
    console.print(summary, markup=False, highlight=False)


def _validate_dataset(root: Path, sample: int, profile: str | None) -> None:
    from maptab.score.integrity import MAX_PROBLEMS, validate_dataset

    try:
        report = validate_dataset(root, sample=sample, profile=profile)
    except (MaptabError, OSError) as exc:
        fail(str(exc))
    for p in report.problems:
        console.print(p, markup=False, highlight=False, soft_wrap=True)
    if report.problems:
        more = " (stopped after the first ones)" if len(report.problems) >= MAX_PROBLEMS else ""
        fail(f"{len(report.problems)} problem(s) found{more}")
    console.print(
        f"ok: {report.files} files match the manifest, {report.maps} maps, "
        f"{report.records} records, {report.gold_checked} gold labels re-derived",
        markup=False,
        highlight=False,
    )
