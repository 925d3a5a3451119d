"""Map question answering (MapTab QA, SPEC 10-13): the ``qa`` task kind, wired in one place.

Samples are :class:`~maptab.core.schema.QAQuery` rows of ``qa.jsonl`` (24 types); an answer is
right when it equals the label (:func:`maptab.score.qa.qa_correct`); the summary gives the
accuracy per scenario, type and capability (paper Table 3); the reference answer is
computed from the map (:func:`maptab.answers.qa_answer_of`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from maptab.core.schema import QA_TYPE_COUNT, QAQuery, row_decoder
from maptab.report.tables import (
    CAPABILITY_ORDER,
    Cell,
    Column,
    ReportTable,
    by,
    capability_abbrev,
    interval_cell,
    metric_cell,
    scenarios_of,
)
from maptab.score.errors import ERROR_TYPES
from maptab.score.metrics import Columns, Metric, aggregate, metric_text
from maptab.score.parse import parse_answer
from maptab.score.qa import capability_weights, qa_correct
from maptab.tasks.base import Prompt, RewardSpec, TaskKind

NAME = "qa"
_PREFIX = "qa:"

ACCURACY = Metric("accuracy", "correct", label="Acc", group_by=("scenario", "type", "capability"))
FORMAT_ERRORS = Metric("format_errors", "parsed", aggregate="count_false", fmt="int")
METRICS = (ACCURACY, FORMAT_ERRORS)


# --------------------------------------------------------------------------- samples
decode = row_decoder(QAQuery)


def selector(token: str) -> Any:
    """``qa:N`` selects QA type N."""
    if token.startswith(_PREFIX) and token[3:].isdigit() and 1 <= int(token[3:]) <= QA_TYPE_COUNT:
        wanted = int(token[3:])
        return lambda r: r.type == wanted
    return None


def slim(record: QAQuery) -> QAQuery:
    """The prompt and table row orders dropped, in place (as :func:`maptab.kinds.rp.slim`)."""
    record.question = ""
    record.tables = {}
    return record


def prompt(rec: QAQuery, variant: str) -> Prompt:
    drop = ("Line",) if rec.drop_line_column else ()
    return Prompt(rec.question, tuple(rec.inputs), rec.tables, None, drop, {"type": rec.type})


def answer(baseline: Any, request: Any) -> str:
    return baseline.qa(request, request.meta["sample"])


# --------------------------------------------------------------------------- scoring
def score(maps: Any, query: QAQuery, variant: str, response: str) -> dict[str, Any]:
    """Score row of one QA answer."""
    pred = parse_answer(response)
    return {
        "id": query.id,
        "kind": NAME,
        "map_id": query.map_id,
        "scenario": query.scenario,
        "type": query.type,
        "capabilities": list(query.capabilities),
        "parsed": pred is not None,
        "pred": pred,
        "answer": query.answer,
        "correct": qa_correct(pred, query.answer),
        "error_type": None if pred is not None else ERROR_TYPES[0],
    }


def _scenario(c: Columns, idx: np.ndarray) -> dict[str, Any]:
    per_type = c.groups(idx, "type")
    caps: dict[str, list[int]] = defaultdict(list)
    for i in idx.tolist():
        for cap in c.rows[i]["capabilities"]:
            caps[cap].append(i)
    by_cap = {}
    for cap, members in sorted(caps.items()):
        cidx = np.asarray(members, dtype=np.intp)
        w = np.zeros(len(c.rows))
        w[cidx] = capability_weights([c.rows[i]["type"] for i in members])
        by_cap[cap] = c.ci(cidx, c["correct"], w)
    return {
        "overall": aggregate(ACCURACY, c, idx),
        "format_errors": aggregate(FORMAT_ERRORS, c, idx),
        "by_type": {
            k: aggregate(ACCURACY, c, g)
            for k, g in sorted(per_type.items(), key=lambda kv: int(kv[0]))
        },
        "by_capability": by_cap,
    }


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``qa`` block of ``summary.json``: overall accuracy, and per scenario."""
    c = Columns(rows)
    scen = c.groups(c.every, "scenario")
    return {
        "overall": aggregate(ACCURACY, c, c.every),
        "by_scenario": {k: _scenario(c, g) for k, g in scen.items()},
    }


# --------------------------------------------------------------------------- report tables
def capabilities_of(runs: Sequence[Any], scenario: str) -> list[str]:
    names = {
        c
        for run in runs
        for r in run.rows(NAME)
        if r["scenario"] == scenario
        for c in r.get("capabilities", [])
    }
    order = {a: i for i, a in enumerate(CAPABILITY_ORDER)}
    return sorted(names, key=lambda c: (order.get(capability_abbrev(c), len(order)), c))


def capability_cell(rows: Sequence[dict[str, Any]], capability: str) -> Cell:
    """Accuracy on a capability: the mean of the per-type accuracies of the QA types that
    carry it (paper Table 3), as a weighted mean with weight 1/n(type)."""
    mine = [r for r in rows if capability in r.get("capabilities", [])]
    weights = dict(zip(map(id, mine), capability_weights([r["type"] for r in mine]), strict=True))
    return interval_cell(mine, lambda r: r["correct"], weight=lambda r: weights[id(r)])


def qa_table(runs: Sequence[Any], scenario: str) -> ReportTable:
    """MapTab Table 3 for one scenario: accuracy per capability, overall and per type."""
    caps = capabilities_of(runs, scenario)
    types = sorted(
        {int(r["type"]) for run in runs for r in run.rows(NAME) if r["scenario"] == scenario}
    )
    cols = [Column("Model"), Column("Acc", "All")]
    cols += [Column(capability_abbrev(c), "Capability") for c in caps]
    cols += [Column(f"Q{t}", "Type") for t in types]
    table = ReportTable(
        f"qa_{scenario}",
        f"QA, {scenario}: accuracy by capability (MapTab Table 3) and by type",
        cols,
        note="Capability = mean accuracy of the QA types attached to it (paper Table 1). "
        + ", ".join(f"{capability_abbrev(c)}: {c}" for c in caps if capability_abbrev(c) != c),
    )
    for run in runs:
        rows = [r for r in run.rows(NAME) if r["scenario"] == scenario]
        per = by(rows, "type")
        row = [Cell(run.name), metric_cell(ACCURACY, rows)]
        row += [capability_cell(rows, c) for c in caps]
        row += [metric_cell(ACCURACY, per.get(str(t), [])) for t in types]
        table.rows.append(row)
    return table


# --------------------------------------------------------------------------- report
def _leaderboard(rows: Sequence[dict[str, Any]] | None) -> Any:
    if rows is None:
        return [Column("n", "QA"), Column(ACCURACY.header, "QA")]
    return [Cell(len(rows), kind="int"), metric_cell(ACCURACY, rows)]


def _tables(runs: Sequence[Any]) -> list[Any]:
    return [qa_table(runs, s) for s in scenarios_of(runs, NAME)]


def _paired(run: Any) -> list[tuple[Any, str, str, Any]]:
    return [
        (
            (0, s),
            f"QA {s} accuracy",
            "correct",
            lambda r, s=s: r["kind"] == NAME and r["scenario"] == s,
        )
        for s in sorted({r["scenario"] for r in run.rows(NAME)})
    ]


def _describe(row: dict[str, Any], query: Any, response: str) -> dict[str, Any]:
    from maptab.report.html import TABLE_TITLES, fmt_value

    rec: dict[str, Any] = {"prompt": "", "inputs": "", "gold": "", "pred": "", "metrics": []}
    rec["category"] = f"QA type {row['type']}"
    rec["mdiff"] = rec["qdiff"] = None
    rec["pred"] = fmt_value(row.get("pred"))
    rec["gold"] = fmt_value(row.get("answer"))
    rec["metrics"] = [["correct", fmt_value(row.get("correct"))]]
    rec["metrics"].append(["capabilities", ", ".join(row.get("capabilities", []))])
    if isinstance(query, QAQuery):
        rec["prompt"] = query.question
        rec["inputs"] = ", ".join(TABLE_TITLES.get(i, i) for i in query.inputs)
    return rec


def _summary_view(block: dict[str, Any]) -> list[Any]:
    rows = [
        (scenario, str(b["overall"]["n"]), metric_text(ACCURACY, b["overall"]))
        for scenario, b in block["by_scenario"].items()
    ]
    return [("QA accuracy", ("scenario", "n", "accuracy"), 1, rows)]


def _capability_figure(runs: Sequence[Any], path: Any) -> Any:
    from maptab.report.plots import capability_profile

    return capability_profile(
        runs, path, kind=NAME, capabilities=capabilities_of, cell=capability_cell
    )


def check_label(record: QAQuery, network: Any) -> str | None:
    """How the stored answer differs from the one re-derived from its parameters, or
    ``None``."""
    from maptab.core.qa_types import QAError, qa_answer_of

    try:
        answer = qa_answer_of(record, network)
    except QAError as exc:
        return f"QA answer cannot be re-derived ({exc})"
    return None if answer == record.answer else f"answer {record.answer} != {answer}"


def _reward(ref: Any, text: str) -> Any:
    from maptab.rewards.core import qa_reward

    return qa_reward(text, ref.record)


TASK = TaskKind(
    name=NAME,
    title="QA",
    query_file="qa.jsonl",
    record=QAQuery,
    decode=decode,
    prompt=prompt,
    score=score,
    summarise=summarise,
    answer=answer,
    order=20,
    selector=selector,
    selector_help=(f"{_PREFIX}1 … {_PREFIX}{QA_TYPE_COUNT}",),
    slim=slim,
    metrics=METRICS,
    leaderboard=_leaderboard,
    tables=_tables,
    paired=_paired,
    describe=_describe,
    summary_view=_summary_view,
    figures=((20, _capability_figure, "capability_profile.png"),),
    match_question=True,
    check_label=check_label,
    # a row without QA parameters has none to re-derive from
    label_checkable=lambda row: "params" in row,
    category=lambda record, variant: f"{_PREFIX}{record.type}",
    reward=RewardSpec(
        _reward,
        ability="map_qa",
        with_map=False,
        blank={"question": "", "tables": {}, "params": {}},
    ),
)
