"""Map question answering (MapTab QA, SPEC 10-13): the ``qa`` task kind, wired in one place.

Samples are :class:`~maptab.core.schema.QAQuery` rows of ``qa.jsonl`` (24 types); an answer is
right when it equals the label (:func:`maptab.score.answers.qa_correct`); the summary gives the
accuracy per scenario, type and capability (paper Table 3); the reference answer is
computed from the map (:func:`maptab.answers.qa_answer_of`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from maptab.core.schema import QA_TYPE_COUNT, QAQuery, row_decoder
from maptab.score.answers import capability_weights, qa_correct
from maptab.score.error_types import ERROR_TYPES
from maptab.score.metrics import Columns, Metric, aggregate
from maptab.score.parse import parse_answer
from maptab.tasks.base import Prompt, RewardSpec, Samples, Scoring, TaskKind

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
    samples=Samples(
        file="qa.jsonl",
        record=QAQuery,
        decode=decode,
        select=selector,
        select_help=(f"{_PREFIX}1 … {_PREFIX}{QA_TYPE_COUNT}",),
        category=lambda record, variant: f"{_PREFIX}{record.type}",
        check_label=check_label,
        # a row without QA parameters has none to re-derive from
        label_checkable=lambda row: "params" in row,
    ),
    prompt=prompt,
    answer=answer,
    scoring=Scoring(score, summarise, slim=slim, match_question=True),
    metrics=METRICS,
    reward=RewardSpec(
        _reward,
        ability="map_qa",
        with_map=False,
        blank={"question": "", "tables": {}, "params": {}},
    ),
    order=20,
)
