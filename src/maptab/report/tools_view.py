"""Tool use in the report (tool-use mode, :mod:`maptab.run.tools`; metrics defined in
``docs/reference/metrics.md``, "Tool use"): tables, and each selected conversation as a page.

Everything here applies only to the runs whose ``run.json`` records ``tools``
(:attr:`~maptab.report.loader.Run.tools`); a report of plain runs is unchanged. A run's
*tool samples* are its score rows whose prediction row reports tool calls
(:attr:`~maptab.report.loader.Run.tool_use`); *correct* is the row's outcome
(:func:`~maptab.report.loader.outcome`: the kind's ``scoring.success`` field).

Tables (browser section ``tools``; the metrics are declared once, below):

* ``tools`` — per tool run: tool calls, model turns and tokens per sample (:data:`PER_SAMPLE`,
  each as mean with its interval, median and maximum); token columns where rows report
  tokens;
* ``tools_by_tool`` — per tool run and tool: :data:`PER_TOOL`;
* ``tools_stop`` — per tool run: how the conversations ended (:data:`PER_STOP`);
* ``tools_vs_plain`` — each tool run against the plain runs of the same dataset (those of
  the same model when the report has any): each kind's success metric with tools, without,
  and the paired difference on the samples both runs scored, matched by id
  (:func:`maptab.report.tables.paired_cells`, as the ``paired`` table), overall and per
  group of the metric's ``group_by`` (:func:`success_groups`).

Conversation pages (:func:`write_transcripts`): ``transcripts/<run>-<hash>.html`` for the
samples of each tool run chosen by :func:`transcript_rows` (a bounded selection, as for
route pictures), every message in order: the prompt (images and tables as notes), each
assistant turn with its tool calls (name and arguments), each tool result, and each zoom
shown as the crop itself, cut from the dataset's map image and embedded as a PNG of at most
:data:`CROP_SIDE` pixels a side (:func:`zoom_crop`).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from maptab.io.dataset import DatasetError
from maptab.report.html import TABLE_TITLES, describe_row, style_sheet
from maptab.report.loader import PredictionFile, Run, outcome
from maptab.report.tables import (
    CAPABILITY_ORDER,
    CATEGORY_ORDER,
    TOOLS_SECTION,
    Cell,
    Column,
    ReportTable,
    capability_abbrev,
    category_title,
    metric_cell,
    paired_cells,
)
from maptab.run.requests import ImageSpec, crop_image
from maptab.run.tools import TOOL_NAMES
from maptab.score.metrics import Metric
from maptab.tasks.base import TaskKind, all_kinds

__all__ = [
    "CROP_SIDE",
    "PER_SAMPLE",
    "PER_STOP",
    "PER_TOOL",
    "SECTION",
    "plain_partners",
    "success_groups",
    "tool_samples",
    "tool_tables",
    "transcript_rows",
    "write_transcripts",
    "zoom_crop",
]

SECTION = TOOLS_SECTION
CROP_SIDE = 360  # a zoom crop on a conversation page: at most this many pixels a side
MAX_CROPS = 24  # crops embedded per page; later zooms are named, not shown
MAX_MESSAGES = 400  # messages shown per page (an agent's budget allows thousands)
MAX_TEXT = 20_000  # characters of one message shown
PAGE_NAME = re.compile(r"[0-9]+-[0-9a-f]{16}\.html")  # transcripts/<run>-<hash of the id>.html

# ----------------------------------------------------------------------------- metrics
PER_SAMPLE = (
    Metric("tool_calls", "tool_calls", fmt="num", label="Tool calls", higher_is_better=False),
    Metric("turns", "turns", fmt="num", label="Turns", higher_is_better=False),
    Metric(
        "prompt_tokens", "prompt_tokens", fmt="num", label="Prompt tokens", higher_is_better=False
    ),
    Metric(
        "completion_tokens",
        "completion_tokens",
        fmt="num",
        label="Completion tokens",
        higher_is_better=False,
    ),
)
"""Per-sample counts, each shown as mean (with its interval), median and maximum."""
REPORTED_ONLY = frozenset({"prompt_tokens", "completion_tokens"})
"""Metrics of :data:`PER_SAMPLE` shown only for runs whose rows report them (not all 0)."""
CORRECT = Metric("correct", "correct", aggregate="count", fmt="int", label="Correct")
PER_TOOL = (
    Metric("calls", "calls", aggregate="total", fmt="int", label="Calls"),
    Metric("calls_per_sample", "calls", fmt="num", label="Calls/sample", higher_is_better=False),
    Metric("used", "used", label="Samples using it"),
    Metric("correct_using", "used", where="correct", label="Correct answers using it"),
)
"""Per tool, over a run's tool samples: ``calls`` its calls; ``used`` the sample called it."""
PER_STOP = (
    Metric("stops", "hit", aggregate="count", fmt="int", label="n"),
    Metric("stop_share", "hit", label="Share"),
)
"""Per stop reason, over a run's tool samples: ``hit`` the conversation ended so."""
STOP_ORDER = ("answer", "max_turns", "max_tool_calls")


def _median(values: Sequence[float]) -> float:
    return float(np.median(np.asarray(values, dtype=float)))


SUMMARIES: tuple[tuple[str, Callable[[Sequence[float]], float] | None, str], ...] = (
    ("mean", None, "num"),
    ("p50", _median, "num"),
    ("max", max, "int"),
)
"""How :data:`PER_SAMPLE` is summarised: the mean is the metric's cell (with interval)."""

# how the values of a group_by field are named and ordered in ``tools_vs_plain``
GROUP_LABELS: dict[str, Callable[[str], str]] = {
    "category": category_title,
    "type": lambda v: f"Q{v}",
    "capability": capability_abbrev,
}
GROUP_ORDER: dict[str, Callable[[str], Any]] = {
    "category": lambda v: (CATEGORY_ORDER.index(v) if v in CATEGORY_ORDER else 99, v),
    "type": lambda v: (int(v) if v.isdigit() else 10**6, v),
    "capability": lambda v: (
        CAPABILITY_ORDER.index(capability_abbrev(v))
        if capability_abbrev(v) in CAPABILITY_ORDER
        else 99,
        v,
    ),
}


# ----------------------------------------------------------------------------- samples
def tool_samples(run: Run) -> list[dict[str, Any]]:
    """The run's tool samples (module docstring), in score-file order, one dict each:
    ``map_id``, the counts of :data:`PER_SAMPLE`, ``tools_used``, ``stop`` and ``correct``."""
    use = run.tool_use
    out = []
    for row in run.scores:
        u = use.get(str(row["id"]))
        if u is None:
            continue
        out.append(
            {
                "map_id": row["map_id"],
                "tool_calls": u.tool_calls,
                "turns": u.turns,
                "prompt_tokens": u.prompt_tokens,
                "completion_tokens": u.completion_tokens,
                "tools_used": u.tools_used,
                "stop": u.stop or "",
                "correct": outcome(row) == "correct",
            }
        )
    return out


def _tool_names(run: Run, samples: Sequence[dict[str, Any]]) -> list[str]:
    """The tools offered in ``run`` (``TOOL_NAMES`` order), then any other name called."""
    offered = [str(t) for t in (run.tools or {}).get("tools", [])]
    called = {t for s in samples for t in s["tools_used"]}
    known = [t for t in TOOL_NAMES if t in offered or t in called]
    return known + sorted((set(offered) | called) - set(known))


def _budget(run: Run) -> str:
    rec = run.tools or {}
    tools = ", ".join(map(str, rec.get("tools", []))) or "none"
    return f"{tools} ({rec.get('max_turns', '?')} turns, {rec.get('max_tool_calls', '?')} calls)"


# ----------------------------------------------------------------------------- tables
def _per_sample_table(
    runs: Sequence[Run], samples: Mapping[str, list[dict[str, Any]]]
) -> ReportTable:
    shown = [
        m
        for m in PER_SAMPLE
        if m.name not in REPORTED_ONLY or any(s[m.field] for ss in samples.values() for s in ss)
    ]
    cols = [Column("Model"), Column("Tools (budget)"), Column("n"), Column(CORRECT.header)]
    cols += [Column(name, m.header) for m in shown for name, _, _ in SUMMARIES]
    table = ReportTable(
        "tools",
        "Tool use: tool calls, turns and tokens per sample",
        cols,
        note=(
            "Over the scored samples of each tool-use run. Tool calls: calls run; turns: "
            "model requests; tokens summed over the turns (shown where the rows report "
            "them). mean with its 95% CI (bootstrap clustered by map), p50 the median, max "
            "the largest. Correct: answers right by the kind's success metric (RP strict)."
        ),
        section=SECTION,
    )
    for run in runs:
        rows = samples.get(run.name)
        if rows is None:
            continue
        row = [Cell(run.name), Cell(_budget(run)), Cell(len(rows), kind="int")]
        row.append(metric_cell(CORRECT, rows))
        for m in shown:
            values = [float(s[m.field]) for s in rows]
            reported = m.name not in REPORTED_ONLY or any(values)
            for _, summary, kind in SUMMARIES:
                if not values or not reported:
                    row.append(Cell(None, kind=kind))
                elif summary is None:
                    row.append(metric_cell(m, rows))
                else:
                    row.append(Cell(summary(values), kind=kind))
        table.rows.append(row)
    return table


def _per_tool_table(
    runs: Sequence[Run], samples: Mapping[str, list[dict[str, Any]]]
) -> ReportTable:
    cols = [Column("Model"), Column("Tool")] + [Column(m.header) for m in PER_TOOL]
    table = ReportTable(
        "tools_by_tool",
        "Tool use: calls per tool",
        cols,
        note=(
            "Calls: the tool's calls in all (CI: bootstrap clustered by map); Calls/sample: "
            "their mean per sample; Samples using it: share of samples with a call to it; "
            "Correct answers using it: share of the correct answers whose conversation "
            "called it at least once."
        ),
        section=SECTION,
    )
    for run in runs:
        rows = samples.get(run.name)
        if rows is None:
            continue
        for tool in _tool_names(run, rows):
            per = [
                {
                    "map_id": s["map_id"],
                    "calls": s["tools_used"].get(tool, 0),
                    "used": s["tools_used"].get(tool, 0) > 0,
                    "correct": s["correct"],
                }
                for s in rows
            ]
            table.rows.append(
                [Cell(run.name), Cell(tool)] + [metric_cell(m, per) for m in PER_TOOL]
            )
    return table


def _stop_table(runs: Sequence[Run], samples: Mapping[str, list[dict[str, Any]]]) -> ReportTable:
    cols = [Column("Model"), Column("Stop")] + [Column(m.header) for m in PER_STOP]
    table = ReportTable(
        "tools_stop",
        "Tool use: how conversations ended",
        cols,
        note=(
            "answer: the model answered without a tool call; max_turns: the last model turn "
            "was spent; max_tool_calls: the model asked for tools after its calls were spent. "
            "Share with its 95% CI."
        ),
        section=SECTION,
    )
    for run in runs:
        rows = samples.get(run.name)
        if rows is None:
            continue
        seen = {s["stop"] for s in rows}
        for stop in [s for s in STOP_ORDER if s in seen] + sorted(seen - set(STOP_ORDER)):
            per = [{"map_id": s["map_id"], "hit": s["stop"] == stop} for s in rows]
            table.rows.append(
                [Cell(run.name), Cell(stop or "(none)")] + [metric_cell(m, per) for m in PER_STOP]
            )
    return table


def _same_dataset(a: Run, b: Run) -> bool:
    da, db = a.info.get("dataset_digest"), b.info.get("dataset_digest")
    if da and db:
        return bool(da == db)
    pa, pb = a.dataset_dir, b.dataset_dir
    return pa is not None and pb is not None and pa.resolve() == pb.resolve()


def plain_partners(tool_run: Run, runs: Sequence[Run]) -> list[Run]:
    """The plain runs (no tools) of ``runs`` that answered ``tool_run``'s dataset (same
    ``dataset_digest``, else the same dataset folder); only those of its model when any
    is."""
    plain = [r for r in runs if r.tools is None and _same_dataset(tool_run, r)]
    model = tool_run.info.get("model")
    own = [r for r in plain if model and r.info.get("model") == model]
    return own or plain


def _success_metric(kind: TaskKind) -> Metric | None:
    """The kind's declared metric of its success field (one with ``group_by`` first)."""
    success = kind.scoring.success
    mine = [m for m in kind.metrics if m.field == success and m.aggregate == "mean"]
    mine.sort(key=lambda m: (not m.group_by, m.weight is not None))
    return mine[0] if mine else None


def _values(row: Mapping[str, Any], field: str) -> list[str]:
    """The group values of ``row`` for a ``group_by`` field: its value, or each item of
    the list the row holds under the plural name (``capability``: ``capabilities``)."""
    value = row.get(field)
    if value is None:
        plural = field[:-1] + "ies" if field.endswith("y") else field + "s"
        value = row.get(plural)
    if value is None:
        return []
    items = value if isinstance(value, list | tuple) else [value]
    return [str(v) for v in items if v is not None]


Group = tuple[str, Callable[[Mapping[str, Any]], bool]]


def success_groups(kind: TaskKind, rows: Sequence[Mapping[str, Any]]) -> list[Group]:
    """``(label, row filter)`` of each group ``tools_vs_plain`` compares for ``kind``:
    all its rows, then by the success metric's ``group_by`` (SPEC 13 breakdowns): the
    first field's values (when it has several), and within each of them the values of
    every further field (RP: scenario, then category; QA: scenario, then type and
    capability; a list-valued field puts a row in each of its groups)."""
    metric = _success_metric(kind)
    fields = metric.group_by if metric is not None else ()
    groups: list[Group] = [("all", lambda r: True)]
    if not fields:
        return groups
    outer, inner = fields[0], fields[1:]

    def ordered(field: str, values: set[str]) -> list[str]:
        return sorted(values, key=GROUP_ORDER.get(field, lambda v: (0, v)))

    def label(field: str, value: str) -> str:
        return GROUP_LABELS.get(field, str)(value)

    tops = ordered(outer, {v for r in rows for v in _values(r, outer)})
    for top in tops:
        in_top = (lambda r, t=top: t in _values(r, outer)) if len(tops) > 1 else (lambda r: True)
        prefix = f"{label(outer, top)} · "
        if len(tops) > 1:
            groups.append((label(outer, top), in_top))
        mine = [r for r in rows if in_top(r)]
        for field in inner:
            for value in ordered(field, {v for r in mine for v in _values(r, field)}):
                groups.append(
                    (
                        prefix + label(field, value),
                        lambda r, f=field, v=value, t=in_top: t(r) and v in _values(r, f),
                    )
                )
    return groups


def _vs_plain_table(runs: Sequence[Run]) -> ReportTable | None:
    pairs = [(t, p) for t in runs if t.tools is not None for p in plain_partners(t, runs)]
    if not pairs:
        return None
    cols = [Column(name) for name in ("Tools run", "Plain run", "Metric", "Group", "n")]
    cols += [Column("With tools"), Column("Without"), Column("Δ (pp)")]
    table = ReportTable(
        "tools_vs_plain",
        "Accuracy with and without tools (same samples)",
        cols,
        note=(
            "Each kind's success metric (RP: strict; QA, ReasonMap: correct) on the samples "
            "both runs scored, matched by id; Δ: with tools minus without, in percentage "
            "points, with a paired bootstrap interval clustered by map. A tool run is "
            "compared with the plain runs of its dataset, only those of its model when the "
            "report has one. A capability row pools the samples of the QA types carrying it "
            "(the QA table's capability accuracy is a mean over types)."
        ),
        section=SECTION,
    )
    for tool_run, plain in pairs:
        for kind in all_kinds():
            mine = tool_run.rows(kind.name)
            theirs = plain.rows(kind.name)
            metric = _success_metric(kind)
            if not mine or not theirs:
                continue
            header = f"{kind.title} {metric.header if metric else kind.scoring.success}"
            for label, keep in success_groups(kind, mine):
                cells = paired_cells(mine, theirs, kind.scoring.success, keep)
                if cells is None:
                    continue
                n, diff, with_tools, without = cells
                table.rows.append(
                    [
                        Cell(tool_run.name),
                        Cell(plain.name),
                        Cell(header),
                        Cell(label),
                        n,
                        with_tools,
                        without,
                        diff,
                    ]
                )
    return table if table.rows else None


def tool_tables(runs: Sequence[Run]) -> list[ReportTable]:
    """The tool-use tables (module docstring); none when no run used tools."""
    samples = {run.name: tool_samples(run) for run in runs if run.tools is not None}
    samples = {name: rows for name, rows in samples.items() if rows}
    if not samples:
        return []
    tables = [
        _per_sample_table(runs, samples),
        _per_tool_table(runs, samples),
        _stop_table(runs, samples),
    ]
    vs = _vs_plain_table(runs)
    return tables + ([vs] if vs is not None else [])


# ----------------------------------------------------------------------------- pages
def transcript_rows(run: Run, per_group: int) -> list[Mapping[str, Any]]:
    """The score rows of ``run`` whose conversation gets a page: per (kind, scenario,
    category or QA type or mode, right or not), the first ``per_group`` tool samples in
    file order (for route planning, the samples that get route pictures); none for a run
    without tools."""
    use = run.tool_use
    taken: dict[tuple[str, ...], int] = defaultdict(int)
    chosen = []
    for row in run.scores:
        if str(row["id"]) not in use:
            continue
        part = row.get("category", row.get("type", row.get("mode", "")))
        key = (
            str(row["kind"]),
            str(row.get("scenario", "")),
            str(part),
            str(outcome(row) == "correct"),
        )
        if taken[key] < per_group:
            taken[key] += 1
            chosen.append(row)
    return chosen


def zoom_box(ref: str) -> tuple[str, tuple[float, float, float, float]] | None:
    """``(map id, box)`` of a zoom reference ``maptab:zoom/<map_id>/<x0>,<y0>,<x1>,<y1>``;
    ``None`` for anything else (a box outside [0, 1] or empty included)."""
    if not ref.startswith("maptab:zoom/"):
        return None
    map_id, _, coords = ref[len("maptab:zoom/") :].rpartition("/")
    try:
        box = tuple(float(v) for v in coords.split(","))
    except ValueError:
        return None
    if not map_id or len(box) != 4 or not all(math.isfinite(v) and 0 <= v <= 1 for v in box):
        return None
    x0, y0, x1, y1 = box
    if not (x0 < x1 and y0 < y1):
        return None
    return map_id, (x0, y0, x1, y1)


def zoom_crop(run: Run, ref: str) -> tuple[str, tuple[int, int]] | str:
    """The crop a zoom reference names, from ``run``'s dataset map image at full
    resolution, cut as the tool cuts it (:func:`~maptab.run.requests.crop_image`) and
    scaled down to at most :data:`CROP_SIDE` pixels a side: ``(PNG data URL, size)``, or
    a one-line reason it cannot be shown."""
    parsed = zoom_box(ref)
    if parsed is None:
        return "not a zoom reference"
    map_id, box = parsed
    ds = run.dataset
    if ds is None:
        return "the run's dataset was not found"
    if map_id not in ds.maps:
        return f"map {map_id!r} is not in the dataset"
    spec = ImageSpec(max_pixels=None, max_side=CROP_SIDE, format="png")
    try:
        path = ds.image_path(map_id)
        if path is None:
            return f"map {map_id!r} has no image"
        data, size, _ = crop_image(path, box, spec)
    except (DatasetError, OSError, ValueError) as exc:
        return f"the crop could not be cut ({exc})"
    return f"data:image/png;base64,{base64.b64encode(data).decode('ascii')}", size


def _cut(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n… [{len(text) - MAX_TEXT} more characters not shown]"


def _pre(text: Any) -> str:
    return f"<pre>{html.escape(_cut(str(text or '')) or '–')}</pre>"


def _arguments(arguments: Any) -> str:
    """Tool-call arguments as indented JSON (a text that is not JSON as it is)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False, indent=1)
    except (TypeError, ValueError):
        return str(arguments)


class _Crops:
    """The crops of one report, cut once per (dataset, reference), at most
    :data:`MAX_CROPS` a page."""

    def __init__(self) -> None:
        self.cache: dict[tuple[str, str], tuple[str, tuple[int, int]] | str] = {}

    def get(self, run: Run, ref: str) -> tuple[str, tuple[int, int]] | str:
        key = (str(run.dataset_dir), ref)
        if key not in self.cache:
            self.cache[key] = zoom_crop(run, ref)
        return self.cache[key]


def _part_html(part: Any, run: Run, crops: _Crops, budget: list[int]) -> str:
    """One content part of a message: text, an image reference, a table reference."""
    if not isinstance(part, dict):
        return _pre(part)
    kind = part.get("type")
    if kind == "text":
        return _pre(part.get("text"))
    if kind == "table_ref":
        table = str(part.get("table", "?"))
        shown = html.escape(TABLE_TITLES.get(table, table))
        rows = html.escape(str(part.get("rows", "?")))
        return f'<p class="ref">Table {shown} shown ({rows} rows; not kept with the run).</p>'
    if kind == "image_url":
        url = part.get("image_url", {})
        ref = str(url.get("url", "") if isinstance(url, dict) else url)
        if ref.startswith("maptab:map/"):
            return f'<p class="ref">Map image shown: {html.escape(ref[len("maptab:map/") :])}.</p>'
        parsed = zoom_box(ref)
        if parsed is None:
            return f'<p class="ref">Image: {html.escape(ref[:200])}</p>'
        map_id, box = parsed
        where = ", ".join(f"{v:g}" for v in box)
        named = f"Zoom crop of map {html.escape(map_id)} at ({where})"
        if budget[0] <= 0:
            return f'<p class="ref">{named}: not shown (at most {MAX_CROPS} crops a page).</p>'
        got = crops.get(run, ref)
        if isinstance(got, str):
            return f'<p class="ref">{named}: {html.escape(got)}.</p>'
        budget[0] -= 1
        url_, (w, h) = got
        caption = f"zoom of map {map_id}: box ({where}), shown at {w}×{h} px"
        return (
            f'<figure class="crop"><img src="{url_}" width="{w}" height="{h}" '
            f'alt="{html.escape(caption)}"><figcaption>{html.escape(caption)}</figcaption></figure>'
        )
    return _pre(json.dumps(part, ensure_ascii=False))


def _message_html(msg: Any, turn: int, run: Run, crops: _Crops, budget: list[int]) -> str:
    if not isinstance(msg, dict):
        return f'<li class="msg">{_pre(msg)}</li>'
    role = str(msg.get("role", "?"))
    content = msg.get("content")
    parts = content if isinstance(content, list) else [] if content in (None, "") else [content]
    if role == "assistant":
        title = f"Assistant · turn {turn}"
    elif role == "tool":
        title = f"Tool result · {msg.get('name', '?')}"
    elif role == "user" and not turn:
        title = "Prompt"
    elif role == "user" and any(
        isinstance(p, dict) and p.get("type") == "image_url" for p in parts
    ):
        title = "Zoom image"
    else:
        title = role.capitalize()
    body = [f"<h4>{html.escape(title)}</h4>"]
    if msg.get("reasoning"):
        body.append(f"<details><summary>Reasoning</summary>{_pre(msg['reasoning'])}</details>")
    body += [_part_html(p, run, crops, budget) for p in parts]
    for call in msg.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        name = html.escape(str(fn.get("name", "?")))
        cid = html.escape(str(call.get("id", ""))) if isinstance(call, dict) else ""
        body.append(
            f'<div class="call"><span class="tool">→ {name}</span> '
            f'<span class="cid">{cid}</span>{_pre(_arguments(fn.get("arguments")))}</div>'
        )
    return f'<li class="msg {html.escape(role)}">{"".join(body)}</li>'


def transcript_html(
    run: Run, row: Mapping[str, Any], prediction: Mapping[str, Any], category: str, crops: _Crops
) -> str:
    """The page of one conversation (module docstring); every text escaped."""
    transcript = prediction.get("transcript")
    messages = transcript if isinstance(transcript, list) else []
    budget = [MAX_CROPS]
    items = []
    turn = 0
    for msg in messages[:MAX_MESSAGES]:
        if isinstance(msg, dict) and msg.get("role") == "assistant":
            turn += 1
        items.append(_message_html(msg, turn, run, crops, budget))
    if len(messages) > MAX_MESSAGES:
        items.append(
            f'<li class="msg"><p class="ref">… {len(messages) - MAX_MESSAGES} more messages '
            "not shown.</p></li>"
        )
    used = prediction.get("tools_used")
    used = used if isinstance(used, dict) else {}
    facts = [
        ("run", run.name),
        ("sample", row["id"]),
        ("category", category),
        ("outcome", outcome(row)),
        ("stop", prediction.get("stop")),
        ("turns", prediction.get("turns")),
        ("tool calls", prediction.get("tool_calls")),
        ("calls per tool", ", ".join(f"{k}: {v}" for k, v in used.items()) or "none"),
        ("answer", prediction.get("response")),
    ]
    cells = [(html.escape(k), html.escape(_cut("–" if v is None else str(v)))) for k, v in facts]
    table = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in cells)
    csp = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    title = f"{run.name} · {row['id']}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<title>{html.escape(title)}</title>
<style>{style_sheet()}</style>
</head>
<body>
<header><h1>Conversation</h1><p class="runs">{html.escape(title)}</p></header>
<main class="transcript">
<p><a href="../index.html">← report</a></p>
<table class="metrics">{table}</table>
<ol class="messages">{"".join(items)}</ol>
</main>
</body>
</html>
"""


def write_transcripts(
    runs: Sequence[Run], out_dir: Path, *, per_group: int = 3
) -> list[dict[str, Any]]:
    """Write the conversation page of each sample :func:`transcript_rows` picks, for every
    tool run, under ``out_dir/transcripts/``; returns one entry per page (``run``, ``id``,
    ``href`` relative to ``out_dir``, ``category``, ``outcome``, ``tool_calls``,
    ``turns``), for the browser. Pages of an earlier report in ``out_dir`` that this one
    does not write are removed, so that every page there is one the report links."""
    crops = _Crops()
    pages: list[dict[str, Any]] = []
    for i, run in enumerate(runs):
        if run.tools is None or not isinstance(run.predictions, PredictionFile):
            continue
        for row in transcript_rows(run, per_group):
            sid = str(row["id"])
            prediction = run.predictions.raw(sid)
            category = str(describe_row(dict(row), None, "").get("category", row["kind"]))
            digest = hashlib.sha1(sid.encode("utf-8")).hexdigest()[:16]
            href = f"transcripts/{i}-{digest}.html"
            path = out_dir / href
            path.parent.mkdir(parents=True, exist_ok=True)
            text = transcript_html(run, row, prediction, category, crops)
            path.write_text(text, encoding="utf-8", newline="\n")
            pages.append(
                {
                    "run": run.name,
                    "id": sid,
                    "href": href,
                    "category": category,
                    "outcome": outcome(row),
                    "tool_calls": prediction.get("tool_calls"),
                    "turns": prediction.get("turns"),
                }
            )
    written = {p["href"].rpartition("/")[2] for p in pages}
    folder = out_dir / "transcripts"
    for old in folder.glob("*.html") if folder.is_dir() else ():
        if PAGE_NAME.fullmatch(old.name) and old.name not in written:
            old.unlink()
    return pages
