"""The public Python API: the handful of names ``import maptab`` gives (``docs/reference/api.md``).

Each function here is a thin front over the stage that does the work (no logic of its own):
build or load a dataset, read a map's tables and solve a route on it, run a model (a
``--model`` spec, a Python callable or a provider object) over a dataset, score the run,
report on runs, and the two registries (task kinds, providers). Library calls are silent
unless given a ``progress`` (:class:`maptab._progress.Progress`).

Names that would clash with the stage packages (``maptab.run``, ``maptab.score``,
``maptab.report``) are spelt as verbs with an object: :func:`run_model`, :func:`score_run`,
:func:`write_report`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from maptab._progress import Progress
from maptab.core.costs import Weights
from maptab.core.network import Network
from maptab.core.solver import Route, Solution, solve_routes
from maptab.core.tables import read_network
from maptab.errors import MaptabError
from maptab.io.dataset import Dataset
from maptab.run.provider import Completion, Provider
from maptab.run.providers import available_providers, make_provider
from maptab.run.runner import RunSummary
from maptab.tasks.base import TaskKind, all_kinds, register

if TYPE_CHECKING:
    from maptab.report import ReportFiles

__all__ = [
    "Completion",
    "Dataset",
    "MaptabError",
    "Network",
    "Provider",
    "Route",
    "RunSummary",
    "Solution",
    "TaskKind",
    "Weights",
    "available_providers",
    "build_dataset",
    "load",
    "make_provider",
    "read_network",
    "register_task",
    "run_model",
    "score_run",
    "solve_routes",
    "task_kinds",
    "write_report",
]


def build_dataset(
    out_dir: str | Path,
    *,
    preset: str = "mini",
    tables: str | Path | None = None,
    seed: int = 0,
    render: bool = True,
    map_style: str | None = None,
    pairs_per_map: int = 8,
    report_totals: bool = False,
    cost_model: str = "additive",
    workers: int | None = None,
    progress: Progress | None = None,
) -> Dataset:
    """Build a benchmark into ``out_dir`` and open it (SPEC 6–11; ``maptab build``).

    From the generator's ``preset`` (``"mini"``, ``"paper"``), or, with ``tables``, over
    your own maps: a folder with one sub-folder per map holding ``Edge_tab.csv`` and
    ``Vertex_tab.csv`` (``maptab build --from-tables``; ``pairs_per_map`` OD pairs per map
    on average). Map images are rendered unless ``render=False`` (then only images the
    tables folder brings are used). The same arguments give byte-identical files.

    Raises a :class:`MaptabError` (one line naming the file, row or field) on an unknown
    preset or a bad table; an interrupted build leaves any previous dataset untouched.
    """
    renderer = None
    if render:
        from maptab.render.images import DatasetImager

        renderer = DatasetImager()
    if tables is not None:
        from maptab.generate.owntables import build_from_tables

        build_from_tables(
            tables,
            out_dir,
            seed=seed,
            pairs_per_map=pairs_per_map,
            renderer=renderer,
            map_style=map_style or "clean",
            report_totals=report_totals,
            cost_model=cost_model,
            progress=progress,
            workers=workers,
        )
    else:
        from maptab.generate.pipeline import build_benchmark

        build_benchmark(
            out_dir,
            preset=preset,
            seed=seed,
            renderer=renderer,
            report_totals=report_totals,
            cost_model=cost_model,
            progress=progress,
            workers=workers,
            map_style=map_style,
        )
    return Dataset(out_dir)


def load(path: str | Path, *, verify: bool = True) -> Dataset:
    """Open the dataset folder ``path`` (its ``manifest.json``); files are checked against
    their SHA-256 as they are read unless ``verify=False`` (SPEC 16). Raises
    :class:`~maptab.io.dataset.DatasetError` when the folder has no valid manifest."""
    return Dataset(path, verify=verify)


def run_model(
    dataset: str | Path | Dataset,
    model: str | Callable[..., Any] | Provider,
    out_dir: str | Path,
    /,
    *,
    split: str | None = None,
    categories: Iterable[str] | None = None,
    limit: int | None = None,
    concurrency: int = 16,
    retry_errors: bool = False,
    table_format: Literal["csv", "json"] = "csv",
    verify: bool = True,
    progress: Progress | None = None,
    jobs: int | None = 1,
    tools: str | Sequence[str] | None = None,
    max_turns: int | None = None,
    max_tool_calls: int | None = None,
    **options: Any,
) -> RunSummary:
    """Answer the selected samples of ``dataset`` with ``model`` into the run folder
    ``out_dir`` (``maptab run``; resumable: a rerun skips answered samples).

    ``model`` is a ``--model`` spec (``"oracle"``, ``"openai:NAME"``, a plugin prefix), a
    Python function ``fn(request) -> str`` (sync or ``async``), or a provider object;
    ``options`` go to :func:`make_provider` (``base_url``, ``temperature``, ``seed``; for a
    function ``model=`` the model name recorded with its rows), as does ``concurrency``
    (the requests an HTTP provider keeps in flight). ``jobs`` > 1 answers an
    in-process model in that many worker processes (``None``: one per CPU for large runs;
    ``maptab run --jobs``); the function must then be importable (not a lambda) and the
    script guarded by ``if __name__ == "__main__":``. Runs the async runner to completion:
    call it outside a running event loop (inside one, use ``maptab.run.runner.arun``).

    ``tools`` (``"all"``, ``"zoom,lookup"`` or a list of names) is tool-use mode
    (``maptab run --tools``, :mod:`maptab.run.tools`), within ``max_turns`` model turns and
    ``max_tool_calls`` tool calls per sample (default: the provider's own budget, else 8
    and 16); a function asks for tools as :mod:`maptab.run.callable_provider` describes.

    Raises a :class:`MaptabError` on an unknown spec or tool, a selection that matches no
    sample, a malformed dataset or a run folder started with other settings (SPEC 16); a
    request that fails is recorded as its row's ``error``, not raised.
    """
    from maptab.run.runner import run
    from maptab.run.tools import (
        DEFAULT_MAX_TOOL_CALLS,
        DEFAULT_MAX_TURNS,
        ToolBudget,
        parse_tools,
    )

    root = dataset.root if isinstance(dataset, Dataset) else dataset
    provider = make_provider(model, **{"concurrency": concurrency, **options})
    names = parse_tools(tools)
    if not names and (max_turns is not None or max_tool_calls is not None):
        raise MaptabError("max_turns and max_tool_calls need tools")
    budget = None
    if names and (max_turns is not None or max_tool_calls is not None):
        own = getattr(provider, "tool_budget", None) or (None, None)
        budget = ToolBudget(
            max_turns if max_turns is not None else own[0] or DEFAULT_MAX_TURNS,
            max_tool_calls if max_tool_calls is not None else own[1] or DEFAULT_MAX_TOOL_CALLS,
        )
    return run(
        root,
        provider,
        out_dir,
        split=split,
        categories=categories,
        limit=limit,
        concurrency=concurrency,
        retry_errors=retry_errors,
        table_format=table_format,
        spec=model if isinstance(model, str) else None,
        verify=verify,
        progress=progress,
        jobs=jobs,
        tools=names,
        budget=budget,
    )


def score_run(
    run_dir: str | Path | RunSummary,
    *,
    dataset: str | Path | Dataset | None = None,
    verify: bool = True,
    progress: Progress | None = None,
    workers: int | None = 1,
) -> dict[str, Any]:
    """Score a run folder (``maptab score``): writes ``scores.jsonl`` and ``summary.json``
    there and returns the summary (SPEC 12–14). The dataset is the one recorded in
    ``run.json`` unless given. ``workers`` > 1 scores in that many processes (``None``: one
    per CPU for large runs; a script doing so needs an ``if __name__ == "__main__":``
    guard, see :func:`~maptab.score.scorer.score_predictions`). Raises
    :class:`~maptab.score.scorer.ScoreError` on a missing or malformed predictions file."""
    from maptab.score.scorer import score_run as score

    folder = run_dir.out_dir if isinstance(run_dir, RunSummary) else run_dir
    root = dataset.root if isinstance(dataset, Dataset) else dataset
    return score(folder, dataset_dir=root, progress=progress, verify=verify, workers=workers)


def write_report(
    run_dirs: Sequence[str | Path | RunSummary],
    out_dir: str | Path,
    *,
    overlays_per_group: int = 3,
    samples_per_run: int | None = 3_000,
    verify: bool = True,
    progress: Progress | None = None,
) -> ReportFiles:
    """Write the report of scored runs into ``out_dir`` (``maptab report``): ``index.html``,
    ``tables/`` (Markdown, CSV, LaTeX), ``plots/``, ``images/``. The first run is the
    baseline of the paired differences (SPEC 13). Raises
    :class:`~maptab.report.loader.ReportError` (naming the file) on an unreadable run."""
    from maptab.report import write_report as report

    folders = [r.out_dir if isinstance(r, RunSummary) else r for r in run_dirs]
    return report(
        folders,
        out_dir,
        overlays_per_group=overlays_per_group,
        samples_per_run=samples_per_run,
        verify=verify,
        progress=progress,
    )


def task_kinds() -> list[TaskKind]:
    """Every registered task kind (built-in, entry points, :func:`register_task`), in report
    order."""
    return all_kinds()


def register_task(kind: TaskKind) -> TaskKind:
    """Register ``kind`` for this process (replacing one of the same name); returns it.
    Installed distributions register through the ``maptab.tasks`` entry-point group."""
    return register(kind)
