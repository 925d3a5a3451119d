"""Task kinds: the registry (:mod:`maptab.tasks.base`) and one module per built-in kind
(:mod:`~maptab.tasks.rp`, :mod:`~maptab.tasks.qa`, :mod:`~maptab.tasks.reasonmap`).
See ``docs/tasks.md`` for adding a kind."""

from maptab.tasks.base import (
    ENTRY_POINT_GROUP,
    Prompt,
    RewardSpec,
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
    "TaskError",
    "TaskKind",
    "all_kinds",
    "get",
    "kind_names",
    "register",
]
