"""The task-kind registry (:mod:`maptab.tasks.base`); the built-in kinds are the modules of
:mod:`maptab.kinds` (:mod:`~maptab.kinds.rp`, :mod:`~maptab.kinds.qa`,
:mod:`~maptab.kinds.reasonmap`).
See ``docs/guides/add-a-task-kind.md`` for adding a kind."""

from maptab.tasks.base import (
    ENTRY_POINT_GROUP,
    Prompt,
    RewardSpec,
    Samples,
    Scoring,
    TaskError,
    TaskKind,
    all_kinds,
    get,
    kind_names,
    register,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Prompt",
    "RewardSpec",
    "Samples",
    "Scoring",
    "TaskError",
    "TaskKind",
    "all_kinds",
    "get",
    "kind_names",
    "register",
]
