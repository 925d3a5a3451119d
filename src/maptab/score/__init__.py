"""Scoring stage: parse answers, compute paper-compatible and verified metrics, summarise.

Modules: :mod:`~maptab.score.scorer` (the driver: ``score_run``, also ``maptab.score_run``),
:mod:`~maptab.score.parse` (SPEC 12), :mod:`~maptab.score.paper` (EMA/PMA/DS),
:mod:`~maptab.score.verified` (strict metrics), :mod:`~maptab.score.error_types` (taxonomy),
:mod:`~maptab.score.answers`, :mod:`~maptab.score.map_score` (SPEC 14),
:mod:`~maptab.score.metrics` (metric declarations), :mod:`~maptab.score.bootstrap` (bootstrap
intervals). The package re-exports nothing: importing one module does not load the others.
"""
