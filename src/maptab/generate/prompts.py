"""Route-planning prompts (SPEC 9, 11), assembled from the wording in ``templates/rp.toml``.

A prompt is: the question in one of five instruction styles, the rules of the cost model
that the category needs (what is counted, scales, transfers, weights), and the output
contract. The wording lives in the TOML file so it can be read and changed without code;
the output contract is checked against the route text the answers are read with
(:mod:`maptab.core.route_text`, :func:`output_contract`).
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from maptab.core.route_text import (
    ROUTE_BEGIN,
    ROUTE_END,
    SEPARATOR,
    TRANSFER_MARK,
    format_route,
)
from maptab.core.schema import CRITERIA, RPCategory

_CRITERION_NAMES = {
    "time": "travel time",
    "price": "price",
    "comfort": "comfort",
    "reliability": "reliability",
}
_WEIGHT_SYMBOLS = ("wT", "wP", "wC", "wR")


@cache
def rp_templates() -> dict[str, Any]:
    """The parsed ``templates/rp.toml``."""
    text = resources.files("maptab.generate").joinpath("templates/rp.toml").read_text("utf-8")
    return tomllib.loads(text)


def route_example(scenario: str) -> str:
    """The example route of the output contract, as :func:`format_route` writes it:
    ``A-B(transfer)-C`` (metromap), ``A-B-C`` (travelmap: no marks)."""
    return format_route(("A", "B", "C"), {1} if scenario == "metromap" else ())


@cache
def output_contract(scenario: str) -> str:
    """The ``[output]`` wording of ``scenario`` (``templates/rp.toml``), checked to state the
    route text of :mod:`maptab.core.route_text` (SPEC 11): its separator, transfer mark,
    example and tags; a template that drifted from it raises ``ValueError``."""
    text = rp_templates()["output"][scenario]
    needed = [f"'{SEPARATOR}'", route_example(scenario), f"{ROUTE_BEGIN}route{ROUTE_END}"]
    if scenario == "metromap":
        needed.append(f"Name{TRANSFER_MARK}")
    missing = [n for n in needed if n not in text]
    if missing:
        raise ValueError(
            f"templates/rp.toml [output] {scenario} does not state {missing[0]!r} of the route text"
        )
    return text


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def sources_phrase(category: RPCategory, scenario: str) -> str:
    """What the model is shown, in words ("the metro map, the edge table and …")."""
    t = rp_templates()
    terms = t["terms"][scenario]
    return _join([t["sources"][i].format(**terms) for i in category.inputs])


def weight_text(weights: list[float]) -> str:
    """``wT = 0.25, wP = 0.5, …`` for the weights in force."""
    return ", ".join(f"{s} = {w:g}" for s, w in zip(_WEIGHT_SYMBOLS, weights, strict=True))


def rp_prompt(
    category: RPCategory,
    scenario: str,
    style: str,
    source: str,
    target: str,
    weights: list[float] | None = None,
    *,
    report_totals: bool = False,
    cost_model: str = "additive",
    max_detour: int = 2,
) -> str:
    """The full instruction text of one RP query (tables and image are attached separately).

    ``cost_model`` ``additive`` states the per-item cost of SPEC 3; ``mean`` states the
    paper's Eq. (1) with its detour bound ``max_detour``.
    """
    t = rp_templates()
    terms = t["terms"][scenario]
    rules = t["rules"]
    objective_key = "criteria_free" if category.criteria_free else category.name
    objective = t["objective"][objective_key].format(**terms)
    criteria = (
        _join([_CRITERION_NAMES[c] for c in category.criteria])
        if category.criteria
        else f"the number of {terms['stops']} visited"
    )
    question = t["styles"][style].format(
        a=source,
        b=target,
        sources=sources_phrase(category, scenario),
        objective=objective,
        criteria=criteria,
        **terms,
    )
    lines = [question]
    if category.criteria_free:
        if category.edge_column_only:
            lines.append(rules["edge_only_note"].format(**terms))
        lines.append(rules["criteria_free"].format(**terms))
        if scenario == "metromap":
            lines.append(rules["marks_fewest"])
    else:
        if category.items == "vertex":
            key = "vertex_items" if scenario == "metromap" else "vertex_items_travel"
        else:
            key = f"{scenario}_items"
        lines.append(rules[key].format(**terms))
        lines.append(rules[f"{scenario}_scales"])
        mean = cost_model == "mean"
        lines.append(
            rules["cost_mean"].format(max_detour=max_detour, **terms) if mean else rules["cost"]
        )
        if scenario == "metromap":
            lines.append(rules["transfers_mean" if mean else "transfers"])
            lines.append(rules["marks_cost"])
        if weights is None:
            raise ValueError(f"category {category.name} needs weights")
        if len(category.criteria) == 1:
            lines.append(rules["single"].format(criterion=_CRITERION_NAMES[category.criteria[0]]))
        else:
            lines.append(rules["weights"].format(weight_text=weight_text(weights)))
        lines.append(rules["simple"].format(**terms))
    lines.append(output_contract(scenario))
    if report_totals:
        lines.append(t["output"]["report_totals"])
    return "\n".join(lines)


def criteria_mask(category: RPCategory) -> list[bool]:
    """Which of (time, price, comfort, reliability) the category weighs."""
    return [c in category.criteria for c in CRITERIA]
