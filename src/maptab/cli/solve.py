"""``maptab solve``: every optimal route between two stations of a MapTab table pair (SPEC 3-4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from maptab.cli.app import app, console, fail, warn
from maptab.core.costs import MODELS, Weights, route_totals
from maptab.core.network import SCENARIOS
from maptab.core.solver import MAX_ROUTES, Solution, solve_routes
from maptab.core.tables import derive_mix, read_network
from maptab.core.validate import first_error, profile_warnings, validate_tables
from maptab.errors import MaptabError


def _payload(solution: Solution, totals: dict[str, float] | None) -> dict[str, object]:
    """The ``--json`` object, with MapTab label names, the exact ``route_count`` and
    ``truncated`` (more optimal routes than listed)."""
    routes = solution.routes
    out: dict[str, object] = {
        "routes": [r.format() for r in routes],
        "route_vertex_numbers": [r.vertex_count for r in routes],
        "transfer_vertex_numbers": [r.transfer_count for r in routes],
        "route_count": solution.count,
        "truncated": solution.truncated,
        "cost": routes[0].cost,
    }
    if totals is not None:
        out.update(totals)
    return out


@app.command()
def solve(
    edges: Annotated[Path, typer.Option("--edges", help="Edge_tab file (.csv or .json).")],
    vertices: Annotated[Path, typer.Option("--vertices", help="Vertex_tab file (.csv or .json).")],
    source: Annotated[str, typer.Option("--from", help="Origin station (table name or label).")],
    target: Annotated[str, typer.Option("--to", help="Destination station.")],
    weights: Annotated[
        str | None,
        typer.Option(
            help="wT,wP,wC,wR: non-negative numbers, normalised to sum 1 (1,2,1,0 is "
            "0.25,0.5,0.25,0). Omitted: criteria-free, fewest stations."
        ),
    ] = None,
    mix: Annotated[
        bool, typer.Option("--mix", help="Score with the derived Mix_tab, vertex items only.")
    ] = False,
    model: Annotated[
        str, typer.Option(help="Cost model: additive (default) or mean.")
    ] = "additive",
    max_detour: Annotated[
        int, typer.Option(help="mean model: routes may have shortest + this many stations.")
    ] = 2,
    scenario: Annotated[
        str | None,
        typer.Option(help="metromap or travelmap; default: a Line column means metromap."),
    ] = None,
    max_routes: Annotated[
        int,
        typer.Option(
            min=1, help="List at most this many optimal routes (all are counted: route_count)."
        ),
    ] = MAX_ROUTES,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Print every optimal route from --from to --to with its totals.

    Without --weights: all routes with the fewest stations, each with its minimum-transfer
    marks. With --weights: all routes of minimum cost J (ties within 1e-9), marked with
    their J-optimal, fewest-transfer line assignment. Ties are counted exactly; the first
    --max-routes of them are listed. Tables that are not well-formed (`maptab validate`
    rejects them) are refused in every mode; values outside the MapTab profile (SPEC 6) are
    used as given, with one warning line per table on stderr.
    """
    if scenario is not None and scenario not in SCENARIOS:
        fail(f"unknown scenario {scenario!r}; use metromap or travelmap")
    if model not in MODELS:
        fail(f"unknown cost model {model!r}; use additive or mean")
    if weights is None and (mix or model != "additive"):
        fail("--mix and --model score weighted queries; give --weights too")
    try:
        w = Weights.parse(weights) if weights is not None else None
        problems = validate_tables(edges, vertices, scenario, profile="maptab")
        error = first_error(problems)
        if error is not None:
            fail(f"{error}; `maptab validate` lists every problem")
        for line in profile_warnings(problems):
            warn(line)
        network = read_network(edges, vertices, scenario)  # type: ignore[arg-type]
        items = "edge_vertex"
        if mix:
            network = network.with_attributes(vertices=derive_mix(network))
            items = "vertex"
        solution = solve_routes(
            network,
            source,
            target,
            w,
            items=items,
            model=model,
            max_detour=max_detour,
            max_routes=max_routes,
        )
        routes = solution.routes
        if not routes:
            fail(f"no route from {source} to {target}: they are not connected")
        totals = [
            route_totals(network, r.stations, r.lines, items=items).as_label() for r in routes
        ]
    except MaptabError as exc:
        fail(str(exc))
    if as_json:
        payload = _payload(solution, totals[0] if w is not None else None)
        console.print_json(json.dumps(payload, ensure_ascii=False))
        return
    title = "fewest stations"
    if w is not None:
        title = f"{model} model, weights {','.join(f'{x:.6g}' for x in w.as_list())}"
    shown = f", the first {len(routes)} listed" if solution.truncated else ""
    console.print(
        f"[bold]{escape(source)} → {escape(target)}[/]: {solution.count:,} optimal route(s)"
        f"{shown}, {title}" + (" (Mix_tab, vertex items)" if mix else ""),
        soft_wrap=True,
    )
    # the route is printed whole on its own line (a table column would wrap it into pieces)
    table = Table(box=None, header_style="bold")
    for name in ("#", "stations", "transfers"):
        table.add_column(name, justify="right", no_wrap=True)
    names = ("J", "time", "price", "comfort", "reliability") if w is not None else ()
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    for i, (r, tot) in enumerate(zip(routes, totals, strict=True), 1):
        extra = [f"{r.cost:.6f}", *(f"{v:g}" for v in tot.values())] if w is not None else []
        table.add_row(str(i), str(r.vertex_count), str(r.transfer_count), *extra)
    console.print(table)
    for i, r in enumerate(routes, 1):
        console.print(f"{i}: {r.format()}", markup=False, highlight=False, soft_wrap=True)
    if w is not None:
        console.print(
            "J: route cost (lower is better); time/price: totals; comfort/reliability: averages",
            soft_wrap=True,
        )
