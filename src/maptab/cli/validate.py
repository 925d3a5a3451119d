"""``maptab validate``: check an Edge_tab / Vertex_tab pair (SPEC 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from maptab.cli.app import app, console, fail
from maptab.network import SCENARIOS
from maptab.tables import read_network
from maptab.validate import validate_tables


@app.command()
def validate(
    edges: Annotated[Path, typer.Argument(help="Edge_tab file (.csv or .json).")],
    vertices: Annotated[Path, typer.Argument(help="Vertex_tab file (.csv or .json).")],
    scenario: Annotated[
        str | None,
        typer.Option(help="metromap or travelmap; default: a Line column means metromap."),
    ] = None,
) -> None:
    """Check two MapTab tables: file format, values (SPEC 6) and consistency (SPEC 7).

    Prints one line per problem (file:row: field: what is wrong) and exits with status 1,
    or prints a one-line summary and exits with status 0.
    """
    if scenario is not None and scenario not in SCENARIOS:
        fail(f"unknown scenario {scenario!r}; use metromap or travelmap")
    problems = validate_tables(edges, vertices, scenario)
    if problems:
        for p in problems:
            console.print(str(p), markup=False, highlight=False, soft_wrap=True)
        fail(f"{len(problems)} problem(s) found")
    network = read_network(edges, vertices, scenario)  # type: ignore[arg-type]
    if network.scenario == "metromap":
        summary = (
            f"ok: {len(network.vertices)} stations, {len(network.edges)} edges, "
            f"{len(network.line_names)} lines"
        )
    else:
        summary = f"ok: {len(network.vertices)} spots, {len(network.edges)} edges"
    console.print(summary, markup=False, highlight=False)
