"""maptab: multi-criteria, multimodal route-planning benchmarks (MapTab + ReasonMap).

The public API (``docs/reference/api.md``) is the names in ``__all__``; they are imported on first
use, so ``import maptab`` stays fast. Everything else is reached through its module.
"""

from __future__ import annotations

from maptab._version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (import speed)
if TYPE_CHECKING:
    from maptab.api import (
        Completion,
        Dataset,
        MaptabError,
        Network,
        Provider,
        Route,
        RunSummary,
        Solution,
        TaskKind,
        Weights,
        available_providers,
        build_dataset,
        load,
        make_provider,
        read_network,
        register_task,
        run_model,
        score_run,
        solve_routes,
        task_kinds,
        write_report,
    )
    from maptab.core.network import Edge, NetworkError, Vertex, table_name

__all__ = [
    "Completion",
    "Dataset",
    "Edge",
    "MaptabError",
    "Network",
    "NetworkError",
    "Provider",
    "Route",
    "RunSummary",
    "Solution",
    "TaskKind",
    "Vertex",
    "Weights",
    "__version__",
    "available_providers",
    "build_dataset",
    "load",
    "make_provider",
    "read_network",
    "register_task",
    "run_model",
    "score_run",
    "solve_routes",
    "table_name",
    "task_kinds",
    "write_report",
]

_FROM_NETWORK = ("Edge", "NetworkError", "Vertex", "table_name")  # the rest: maptab.api


def __getattr__(name: str) -> object:
    """Import a public name on first use (PEP 562)."""
    if name not in __all__:
        raise AttributeError(f"module 'maptab' has no attribute {name!r}")
    module = "maptab.core.network" if name in _FROM_NETWORK else "maptab.api"
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
