"""Legibility checks on the renderer's own placed-geometry record.

:func:`check_legibility` lists every problem it finds, as one readable line each:

* a station of the network with no mark, or no label;
* a line (metromap) or edge (travelmap) of the network that was not drawn;
* two labels whose boxes overlap (station labels, edge annotations, legend, title);
* a label that covers the mark of a station it does not name;
* a label or mark outside the image;
* a label with a character its font has no glyph for (a tofu box).

An empty list means the map is legible by these rules. ``maptab build`` and the tests call it.
"""

from __future__ import annotations

from maptab.core.network import Network
from maptab.render.fonts import coverage
from maptab.render.geometry import GridIndex, LabelBox, PlacedGeometry
from maptab.render.metro import pair_key


def _label_name(lab: LabelBox) -> str:
    return f"{lab.kind} label {lab.block.text!r}"


def label_overlaps(placed: PlacedGeometry) -> list[tuple[LabelBox, LabelBox]]:
    """Pairs of drawn labels whose boxes overlap."""
    index = GridIndex(96.0)
    out = []
    for lab in placed.all_labels():
        for _, other in index.query(lab.box):
            out.append((other, lab))
        index.insert(lab.box, lab)
    return out


def labels_on_stations(placed: PlacedGeometry) -> list[tuple[LabelBox, str]]:
    """(label, station) pairs where a label covers the mark of a station it does not name."""
    index = GridIndex(96.0)
    for s, m in placed.stations.items():
        index.insert(m.box, s)
    out = []
    for lab in placed.all_labels():
        for _, s in index.query(lab.box):
            if not (lab.kind == "station" and lab.owner == s):
                out.append((lab, str(s)))
    return out


def _missing_glyphs(lab: LabelBox) -> list[str]:
    return [
        ch
        for run in lab.block.runs
        for ch in run.text
        if not ch.isspace() and ord(ch) not in coverage(run.face)
    ]


def check_legibility(placed: PlacedGeometry, network: Network) -> list[str]:
    """Every legibility problem of a rendered map (module docstring); ``[]`` when none."""
    problems: list[str] = []
    for s in network.vertices:
        if s not in placed.stations:
            problems.append(f"station {s!r} is not drawn")
        if s not in placed.labels:
            problems.append(f"station {s!r} has no label")
    drawn = placed.lines_drawn()
    if network.scenario == "metromap":
        for line in network.line_names:
            if line not in drawn:
                problems.append(f"line {line!r} is not drawn")
    else:
        for e in network.edges:
            if e.name not in drawn:
                problems.append(f"path {e.name!r} is not drawn")
    for e in network.edges:
        if pair_key(e.u, e.v) not in placed.edge_paths:
            problems.append(f"edge {e.name!r} has no drawn path")
    for a, b in label_overlaps(placed):
        problems.append(f"{_label_name(a)} overlaps {_label_name(b)}")
    for lab, s in labels_on_stations(placed):
        problems.append(f"{_label_name(lab)} covers station {s!r}")
    bounds = (placed.width, placed.height)
    for lab in placed.all_labels():
        if not lab.box.inside(*bounds):
            problems.append(f"{_label_name(lab)} runs off the image")
        missing = _missing_glyphs(lab)
        if missing:
            problems.append(f"{_label_name(lab)} has no glyph for {''.join(missing)!r}")
    for s, m in placed.stations.items():
        if not m.box.inside(*bounds):
            problems.append(f"station {s!r} lies outside the image")
    return problems


def overlap_count(placed: PlacedGeometry) -> int:
    """Label–label overlaps plus labels covering a station they do not name."""
    return len(label_overlaps(placed)) + len(labels_on_stations(placed))
