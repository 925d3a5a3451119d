"""``maptab score``: per-sample scores and a summary with confidence intervals."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from maptab.cli.app import VerifyOption, app, console, fail
from maptab.errors import MaptabError


@app.command("score")
def score_cmd(
    run_dir: Annotated[Path, typer.Argument(help="Run folder (predictions.jsonl, run.json).")],
    results: Annotated[
        Path | None,
        typer.Option(
            help="Score another tool's MapTab-style results JSON instead (needs --dataset)."
        ),
    ] = None,
    dataset: Annotated[
        Path | None, typer.Option(help="Dataset folder (default: the one in RUN_DIR/run.json).")
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    verify: VerifyOption = True,
) -> None:
    """Score RUN_DIR: writes RUN_DIR/scores.jsonl and RUN_DIR/summary.json, prints a table."""
    from maptab.score.scorer import ScoreError, load_external_results, score_run

    try:
        preds = None
        if results is not None:
            if dataset is None:
                raise ScoreError("--results needs --dataset (the dataset the results belong to)")
            preds = load_external_results(results, dataset, verify=verify)
        summary = score_run(
            run_dir, dataset_dir=dataset, predictions=preds, progress=progress, verify=verify
        )
    except (MaptabError, OSError) as exc:
        fail(str(exc))
    _print(summary)
    console.print(f"wrote {run_dir / 'scores.jsonl'} and {run_dir / 'summary.json'}")


def _pct(ci: dict[str, Any] | None) -> str:
    """``mean±h`` in percent, ``h`` the larger distance from the mean to a CI bound."""
    if not ci or ci.get("mean") is None:
        return "–"
    m, lo, hi = ci["mean"], ci.get("lo"), ci.get("hi")
    if lo is None or hi is None:
        return f"{100 * m:.1f}"
    return f"{100 * m:.1f}±{100 * max(m - lo, hi - m):.1f}"


def _table(title: str, columns: tuple[str, ...], left: int) -> Table:
    t = Table(title=title, box=box.SIMPLE_HEAD)
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i < left else "right", no_wrap=i >= left)
    return t


def _print(summary: dict[str, Any]) -> None:
    title = "{}, % (± 95% CI, bootstrap clustered by map)"
    rp = summary.get("rp")
    if rp:
        cols = ("scenario", "category", "n", "EMA", "PMA", "DS", "strict", "valid", "gap")
        t = _table(title.format("Route planning"), cols, 2)
        for scenario, block in rp["by_scenario"].items():
            for name, b in [("all", block["overall"]), *block["by_category"].items()]:
                gap = b.get("gap") or {}
                t.add_row(
                    scenario,
                    name,
                    str(b["n"]),
                    _pct(b["ema"]),
                    f"{100 * b['pma']['mean']:.1f}",
                    f"{b['ds']['total']:.0f}",
                    _pct(b["strict"]),
                    f"{100 * b['valid']['mean']:.1f}",
                    "–" if gap.get("mean") is None else f"{gap['mean']:.3f}",
                )
        console.print(t)
    qa = summary.get("qa")
    if qa:
        t = _table(title.format("QA accuracy"), ("scenario", "n", "accuracy"), 1)
        for scenario, block in qa["by_scenario"].items():
            t.add_row(scenario, str(block["overall"]["n"]), _pct(block["overall"]))
        console.print(t)
    rm = summary.get("reasonmap")
    if rm:
        cols = ("mode", "n", "acc", "acc strict", "weighted acc", "map score", "weighted")
        t = _table(title.format("ReasonMap"), cols, 1)
        for mode, b in rm.items():
            t.add_row(
                mode,
                str(b["accuracy"]["n"]),
                _pct(b["accuracy"]),
                _pct(b["accuracy_strict"]),
                _pct(b["weighted_accuracy"]),
                f"{b['map_score']['mean']:.2f}/{b['max_score']:.0f}",
                f"{b['weighted_map_score']['mean']:.2f}",
            )
        console.print(t)
    counts = summary.get("counts", {})
    console.print(
        f"scored {counts.get('scored')}, API errors {counts.get('api_errors')}, "
        f"format errors {counts.get('format_errors')}, missing {counts.get('missing')}"
    )
