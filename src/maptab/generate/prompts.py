"""Route-planning prompts (SPEC 9, 11), assembled from the wording in ``templates/rp.toml``.

A prompt is: the question in one of five instruction styles, the rules of the cost model
that the category needs (what is counted, scales, transfers, weights), and the output
contract. The wording lives in the TOML file so it can be read and changed without code.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

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
    lines.append(t["output"][scenario])
    if report_totals:
        lines.append(t["output"]["report_totals"])
    return "\n".join(lines)


def criteria_mask(category: RPCategory) -> list[bool]:
    """Which of (time, price, comfort, reliability) the category weighs."""
    return [c in category.criteria for c in CRITERIA]
