"""Scoring stage: parse answers, compute paper-compatible and verified metrics, summarise.

Modules: :mod:`~maptab.score.parse` (SPEC 12), :mod:`~maptab.score.paper` (EMA/PMA/DS),
:mod:`~maptab.score.verified` (strict metrics), :mod:`~maptab.score.errors` (taxonomy),
:mod:`~maptab.score.qa`, :mod:`~maptab.score.reasonmap` (SPEC 14),
:mod:`~maptab.score.stats` (bootstrap intervals), :mod:`~maptab.score.scorer` (driver).
"""

from maptab.score.paper import difficulty_score, ema, pma, station_match
from maptab.score.parse import (
    ParsedRoute,
    Segment,
    parse_answer,
    parse_reasonmap,
    parse_route,
    parse_totals,
    strip_reasoning,
)
from maptab.score.scorer import (
    ScoreError,
    compare_runs,
    load_external_results,
    load_predictions,
    load_scores,
    score_predictions,
    score_run,
)
from maptab.score.stats import bootstrap_ci, paired_difference
from maptab.score.verified import Verification, verify_route

__all__ = [
    "ParsedRoute",
    "ScoreError",
    "Segment",
    "Verification",
    "bootstrap_ci",
    "compare_runs",
    "difficulty_score",
    "ema",
    "load_external_results",
    "load_predictions",
    "load_scores",
    "paired_difference",
    "parse_answer",
    "parse_reasonmap",
    "parse_route",
    "parse_totals",
    "pma",
    "score_predictions",
    "score_run",
    "station_match",
    "strip_reasoning",
    "verify_route",
]
