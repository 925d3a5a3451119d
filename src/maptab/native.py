"""maptab's C accelerators where they are built.

``core`` is the solver's extension module ``maptab._solvercore`` (docs/cost-model.md, "The C
search") and ``scorecore`` the scorer's ``maptab._scorecore`` (docs/scoring.md,
"Performance"); each is ``None`` on an install that could not compile it (no C compiler):
the Python code then runs instead, with the same answers to the bit.
"""

from __future__ import annotations

from types import ModuleType

core: ModuleType | None
scorecore: ModuleType | None
try:
    from maptab import _solvercore as core
except ImportError:  # pragma: no cover - an install without a C compiler
    core = None
try:
    from maptab import _scorecore as scorecore
except ImportError:  # pragma: no cover - an install without a C compiler
    scorecore = None

__all__ = ["core", "scorecore"]
