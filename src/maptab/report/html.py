"""The static HTML report browser: one ``index.html`` beside ``images/`` and ``plots/``.

The page needs no network: CSS and JavaScript (``assets/``) are inlined, images are
relative files. On top, the leaderboard tables and figures; below, the samples of every
run (all of them, or a stratified selection of :data:`MAX_SAMPLES` per run for large runs),
filterable by run, category, map and query difficulty, outcome and error type (plain
JavaScript), each showing its prompt, the raw answer, gold and predicted answer, its
metrics, and the map with the gold and predicted routes drawn where pictures were made
(:mod:`maptab.report.overlays`). Filters can be preset in the address:
``index.html#outcome=wrong&category=Map-only`` (``expand=1`` opens the samples shown). The
list opens on the samples not answered correctly when there are any (errors first,
:func:`default_filters`); a button beside the count, or ``#outcome=all``, lists them all.
Notes under the leaderboard say what its numbers count
(:func:`maptab.report.tables.leaderboard_notes`). When a run used tools, a "Tool use"
section shows the tables of that section and links each selected conversation's page
(``transcripts/``, :mod:`maptab.report.tools_view`), which its sample also links to.

Security (SPEC 16): everything a model or a run folder wrote is untrusted. Python writes
table cells with :func:`html.escape`; sample data travels as JSON in a
``<script type="application/json">`` block in which ``<``, ``>``, ``&`` and the line
separators U+2028/U+2029 are written as ``\\uXXXX`` escapes (so ``</script>`` cannot close
the block), and the script puts it on the page only through ``textContent``. No value is
ever spliced into JavaScript source. Texts longer than :data:`MAX_TEXT` characters are cut
with a note saying how much was left out.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Collection, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from PIL import Image

from maptab._progress import Progress
from maptab.report.loader import QueryRecords, Run, outcome
from maptab.report.overlays import Overlays, attach_map_pictures
from maptab.report.tables import TOOLS_SECTION, Cell, ReportTable, leaderboard_notes
from maptab.report.views import view_of
from maptab.tasks.base import TaskError
from maptab.tasks.base import get as get_kind

__all__ = [
    "MAX_SAMPLES",
    "MAX_TEXT",
    "default_filters",
    "describe_row",
    "json_for_html",
    "sample_records",
    "shown_rows",
    "style_sheet",
    "table_html",
    "write_browser",
]

MAX_TEXT = 20_000
MAX_SAMPLES = 3_000  # listed per run by default
NOT_CORRECT = "not correct"  # the outcome filter matching every outcome but "correct"
WIDE_FIGURE_PX = 1000  # a figure at least this wide spans the page (its text stays legible)
TABLE_TITLES = {"edges": "Edge_tab", "vertices": "Vertex_tab", "mix": "Mix_tab", "map": "Map"}


def json_for_html(data: Any) -> str:
    """JSON safe to place inside ``<script type="application/json">`` (module docstring)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for ch, esc in (
        ("&", "\\u0026"),
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(ch, esc)
    return text


def _cut(text: str | None) -> str:
    text = text or ""
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n… [{len(text) - MAX_TEXT} more characters not shown]"


def fmt_value(x: Any) -> str:
    """A metric value as the browser shows it (``–``, ``yes``/``no``, 4 significant digits)."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def segments_text(route: Sequence[dict[str, Any]]) -> str:
    """ReasonMap segments, one per line: ``Line: A → B (n via stops; via X, Y)``; the via
    fields are shown when present (a parsed short answer has neither)."""
    parts = []
    for seg in route:
        text = (
            f"{seg.get('route_name', '?')}: {seg.get('departure_stop', '?')} → "
            f"{seg.get('arrival_stop', '?')}"
        )
        extra = []
        if seg.get("num_via_stops") is not None:
            extra.append(f"{seg['num_via_stops']} via stops")
        if seg.get("via_stops") is not None:
            extra.append("via " + (", ".join(map(str, seg["via_stops"])) or "none"))
        parts.append(f"{text} ({'; '.join(extra)})" if extra else text)
    return "\n".join(parts)


def describe_row(row: dict[str, Any], query: Any, response: str) -> dict[str, Any]:
    """Category, difficulties, prompt, gold, predicted answer and metrics of one row (its
    kind view's ``describe``; a row of a kind without one shows its id and fields)."""
    try:
        describe = view_of(get_kind(str(row["kind"]))).describe
    except TaskError:
        describe = None
    if describe is not None:
        return describe(row, query, response)
    skip = {"id", "kind", "map_id", "parsed", "error_type"}
    return {
        "prompt": "",
        "inputs": "",
        "gold": "",
        "pred": "",
        "category": str(row["kind"]),
        "mdiff": None,
        "qdiff": None,
        "metrics": [[k, fmt_value(v)] for k, v in row.items() if k not in skip],
    }


def shown_rows(run: Run, limit: int | None, keep: Collection[str] = ()) -> list[dict[str, Any]]:
    """The score rows of ``run`` the browser lists: all of them up to ``limit``; beyond it a
    stratified selection of ``limit`` rows, an equal share per (kind, category, outcome)
    group (a share a small group leaves unused goes to the others), picked within a group
    by a hash of the sample id so the choice is stable. Rows whose id is in ``keep`` (those
    with route pictures) are always listed. Returned in file order."""
    rows = run.scores
    if limit is None or len(rows) <= limit:
        return list(rows)
    groups: dict[tuple[str, str, str], list[int]] = {}
    for n, row in enumerate(rows):
        part = row.get("category", row.get("type", row.get("mode", "")))
        key = (str(row["kind"]), str(part), outcome(row))
        groups.setdefault(key, []).append(n)
    for members in groups.values():
        members.sort(key=lambda n: hashlib.sha1(str(rows[n]["id"]).encode()).digest())
    chosen = {n for n, row in enumerate(rows) if row["id"] in keep}
    pending = sorted(groups.values(), key=len)
    budget = max(0, limit - len(chosen))
    for g, members in enumerate(pending):
        share = budget // (len(pending) - g)
        picked = [n for n in members if n not in chosen][:share]
        chosen.update(picked)
        budget -= len(picked)
    return [rows[n] for n in sorted(chosen)]


def listed_ids(rows: Sequence[Mapping[str, Any]]) -> set[str]:
    """The dataset ids of listed score rows (a ReasonMap row is one mode,
    ``<question>/short``, of its question's record)."""
    return {row.get("question_id", row["id"]) for row in rows}


def sample_records(
    runs: Sequence[Run],
    overlays: Overlays | None = None,
    *,
    limit: int | None = None,
    queries: QueryRecords | None = None,
    listings: Sequence[tuple[Collection[str], list[dict[str, Any]]]] | None = None,
) -> list[dict[str, Any]]:
    """One JSON-ready record per listed sample (:func:`shown_rows`; ``limit`` per run) and
    per API failure of every run; the samples' dataset records come from ``queries`` (a
    fresh :class:`QueryRecords` by default: a paper-size dataset has 200,000 records, with
    their prompts, and only the listed ones are read). ``listings``: per run, ``(kept ids,
    shown_rows(run, limit, kept ids))`` computed by the caller, used when the kept ids are
    those pictured."""
    queries = queries if queries is not None else QueryRecords()
    records: list[dict[str, Any]] = []
    for i, run in enumerate(runs):
        pictured = {sid for (k, sid) in (overlays.images if overlays else {}) if k == i}
        given = listings[i] if listings is not None else None
        shown = (
            given[1]
            if given is not None and set(given[0]) == pictured
            else shown_rows(run, limit, pictured)
        )
        of_run = queries.of(run, listed_ids(shown))
        for row in shown:
            pred = run.predictions.get(row["id"])
            response = (pred.response if pred else "") or ""
            # a ReasonMap row is one mode (``<question>/short``) of a question
            query = of_run.get(row.get("question_id", row["id"]))
            rec = {
                "run": run.name,
                "id": row["id"],
                "kind": row["kind"],
                "map": row.get("map_id"),
                "outcome": outcome(row),
                "error": row.get("error_type") or "",
                "response": _cut(response),
                **describe_row(row, query, response),
            }
            if overlays is not None:
                rec["img"] = overlays.images.get((i, row["id"]), {})
            records.append(rec)
        scored = run.by_id
        for pid, pred in run.predictions.items():
            if pred.error and pid not in scored:
                records.append(
                    {
                        "run": run.name,
                        "id": pid,
                        "kind": pred.kind,
                        "map": None,
                        "outcome": "API error",
                        "error": "",
                        "category": pred.kind,
                        "response": _cut(pred.error),
                        "prompt": "",
                        "inputs": "",
                        "gold": "",
                        "pred": "",
                        "metrics": [],
                        "img": {},
                    }
                )
    return records


def _cell_html(cell: Cell) -> str:
    band = cell.interval() if cell.value is not None else ""
    ci = f'<span class="ci">{html.escape(band)}</span>' if band else ""
    cls = "txt" if cell.kind == "text" else "num"
    return f'<td class="{cls}">{html.escape(cell.text())}{ci}</td>'


def table_html(table: ReportTable) -> str:
    """A report table as an HTML ``<table>`` (every text escaped)."""
    out = [f'<div class="table-wrap" id="t-{html.escape(table.key)}"><table>']
    out.append(f"<caption>{html.escape(table.title)}</caption><thead>")
    if any(c.group for c in table.columns):
        out.append("<tr>")
        spans: list[list[Any]] = []
        for c in table.columns:
            if spans and spans[-1][0] == c.group:
                spans[-1][1] += 1
            else:
                spans.append([c.group, 1])
        for group, width in spans:
            out.append(f'<th colspan="{width}" class="group">{html.escape(group)}</th>')
        out.append("</tr>")
    out.append("<tr>" + "".join(f"<th>{html.escape(c.name)}</th>" for c in table.columns) + "</tr>")
    out.append("</thead><tbody>")
    for row in table.rows:
        out.append("<tr>" + "".join(_cell_html(c) for c in row) + "</tr>")
    out.append("</tbody></table>")
    if table.note:
        out.append(f'<p class="note">{html.escape(table.note)}</p>')
    out.append("</div>")
    return "".join(out)


def default_filters(records: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The filters the sample list opens with: the samples not answered correctly
    (:data:`NOT_CORRECT`) when there are any, so errors come first; else none."""
    if any(r["outcome"] != "correct" for r in records):
        return {"outcome": NOT_CORRECT}
    return {}


def _figure_html(path: Path, out_dir: Path) -> str:
    """One figure; a wide one (a grid of heatmap panels) spans the whole row."""
    try:
        with Image.open(path) as im:
            wide = im.width >= WIDE_FIGURE_PX
    except OSError:
        wide = False
    cls = ' class="wide"' if wide else ""
    return (
        f'<figure{cls}><img src="{html.escape(path.relative_to(out_dir).as_posix())}" '
        f'alt="{html.escape(path.stem)}" loading="lazy"></figure>'
    )


def _notes_html(table: ReportTable) -> str:
    """What the leaderboard's numbers count and why some look odd (:func:`leaderboard_notes`)."""
    notes = leaderboard_notes(table)
    if not notes:
        return ""
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return f'<div class="legend"><h3>Reading these numbers</h3><ul>{items}</ul></div>'


def _asset(name: str) -> str:
    return resources.files("maptab.report").joinpath("assets", name).read_text(encoding="utf-8")


def style_sheet() -> str:
    """The report's CSS (inlined in every page it writes)."""
    return _asset("style.css")


def _tools_html(tables: Sequence[ReportTable], conversations: Sequence[Mapping[str, Any]]) -> str:
    """The "Tool use" section: the tool-use tables and, per run, links to the conversation
    pages (:mod:`maptab.report.tools_view`); empty when no run used tools."""
    if not tables and not conversations:
        return ""
    parts = ['<section id="tools"><h2>Tool use</h2>']
    parts += [table_html(t) for t in tables]
    by_run: dict[str, list[Mapping[str, Any]]] = {}
    for page in conversations:
        by_run.setdefault(str(page["run"]), []).append(page)
    for name, pages in by_run.items():
        items = "".join(
            f'<li><a href="{html.escape(str(p["href"]))}">{html.escape(str(p["id"]))}</a> '
            f'<span class="meta">{html.escape(str(p["category"]))} · '
            f"{html.escape(str(p['outcome']))} · {html.escape(str(p['tool_calls']))} tool calls, "
            f"{html.escape(str(p['turns']))} turns</span></li>"
            for p in pages
        )
        parts.append(
            f"<details><summary>Conversations of {html.escape(name)} ({len(pages)}): each "
            f'turn, tool call and result</summary><ul class="conversations">{items}</ul></details>'
        )
    parts.append("</section>")
    return "".join(parts)


def write_browser(
    runs: Sequence[Run],
    tables: Sequence[ReportTable],
    plots: Sequence[Path],
    out_dir: Path,
    overlays: Overlays | None = None,
    *,
    samples_per_run: int | None = MAX_SAMPLES,
    queries: QueryRecords | None = None,
    listings: Sequence[tuple[Collection[str], list[dict[str, Any]]]] | None = None,
    progress: Progress | None = None,
    conversations: Sequence[Mapping[str, Any]] = (),
) -> Path:
    """Write ``out_dir/index.html`` (module docstring); returns its path.

    At most ``samples_per_run`` samples of each run are listed (:func:`shown_rows`; ``None``
    lists all), which keeps the page loadable for paper-scale runs; every sample's scores
    stay in the run's ``scores.jsonl``. ``queries`` and ``listings``: as
    :func:`sample_records` takes them. ``progress`` shows the map pictures being written
    (:mod:`maptab._progress`). ``conversations``: the conversation pages written
    (:func:`maptab.report.tools_view.write_transcripts`), listed in the "Tool use" section
    with the tables of that section and linked from their samples.
    """
    records = sample_records(
        runs, overlays, limit=samples_per_run, queries=queries, listings=listings
    )
    pages = {(str(p["run"]), str(p["id"])): str(p["href"]) for p in conversations}
    for rec in records:
        href = pages.get((rec["run"], str(rec["id"])))
        if href is not None:
            rec["transcript"] = href
    if overlays is not None:
        attach_map_pictures(runs, records, out_dir, progress=progress)
    data = {"samples": records, "filters": default_filters(records)}
    listed = {run.name: sum(r["run"] == run.name for r in records) for run in runs}
    totals = {run.name: len(run.scores) for run in runs}
    partial = [f"{listed[n]:,} of {totals[n]:,} ({n})" for n in listed if listed[n] < totals[n]]
    selection = (
        '<p class="note">Listed: '
        + html.escape("; ".join(partial))
        + " samples, stratified by kind, category and outcome. Every sample's scores are in "
        "its run's scores.jsonl.</p>"
        if partial
        else ""
    )
    names = ", ".join(run.name for run in runs)
    head, *rest = tables
    tools = _tools_html([t for t in rest if t.section == TOOLS_SECTION], conversations)
    rest = [t for t in rest if t.section != TOOLS_SECTION]
    figures = "".join(_figure_html(p, out_dir) for p in plots)
    more = "".join(
        f"<details><summary>{html.escape(t.title)}</summary>{table_html(t)}</details>" for t in rest
    )
    problems = "".join(
        f"<li>{html.escape(p)}</li>" for p in (overlays.problems if overlays else [])
    )
    files = ", ".join(f"{t.key}.md/.csv/.tex" for t in tables)
    script = _asset("browser.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    # only our own script may run (a second guard behind the escaping), and nothing is fetched
    # from the network: images are local files
    csp = (
        "default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'; "
        f"script-src 'sha256-{digest}'"
    )
    body = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<title>maptab report</title>
<style>{style_sheet()}</style>
</head>
<body>
<header><h1>maptab report</h1><p class="runs">{html.escape(names)}</p></header>
<main>
<section id="leaderboard"><h2>Leaderboard</h2>{table_html(head)}{_notes_html(head)}</section>
<section id="figures"><h2>Figures</h2><div class="figures">{figures}</div></section>{tools}
<section id="tables"><h2>All tables</h2>{more}
<p class="note">Also written as Markdown, CSV and LaTeX: {html.escape(files)}.</p></section>
<section id="samples"><h2>Samples</h2>{selection}
<form id="filters" class="filters"></form>
<div class="showall"><p id="count" class="count">JavaScript is needed to list the samples.</p>
<span id="filter-hint" class="hint"></span>
<button id="showall" type="button" hidden>Show all samples</button></div>
<div id="list"></div>
<button id="more" type="button" hidden>Show more</button>
{f'<ul class="problems">{problems}</ul>' if problems else ""}
</section>
</main>
<script type="application/json" id="report-data">{json_for_html(data)}</script>
<script>{script}</script>
</body>
</html>
"""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "index.html"
    path.write_text(body, encoding="utf-8", newline="\n")
    return path
