"""The solver's C accelerator where it is built (docs/cost-model.md, "The C search").

``core`` is the extension module ``maptab._solvercore``, or ``None`` on an install that
could not compile it (no C compiler): the Python code then runs instead, with the same
answers to the bit.
"""

from __future__ import annotations

from types import ModuleType

core: ModuleType | None
try:
    from maptab import _solvercore as core
except ImportError:  # pragma: no cover - an install without a C compiler
    core = None

__all__ = ["core"]
