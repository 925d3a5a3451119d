"""``maptab score``: per-sample scores and a summary with confidence intervals."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from maptab.cli.app import app, console, fail


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
) -> None:
    """Score RUN_DIR: writes RUN_DIR/scores.jsonl and RUN_DIR/summary.json, prints a table."""
    from maptab.score.scorer import ScoreError, load_external_results, score_run

    try:
        preds = None
        if results is not None:
            if dataset is None:
                raise ScoreError("--results needs --dataset (the dataset the results belong to)")
            preds = load_external_results(results, dataset)
        summary = score_run(run_dir, dataset_dir=dataset, predictions=preds, progress=progress)
    except (ValueError, OSError) as exc:
        fail(str(exc))
    _print(summary)
    console.print(f"wrote {run_dir / 'scores.jsonl'} and {run_dir / 'summary.json'}")


def _pct(ci: dict[str, Any] | None) -> str:
    if not ci or ci.get("mean") is None:
        return "–"
    lo, hi = ci.get("lo"), ci.get("hi")
    band = f" [{100 * lo:.1f}, {100 * hi:.1f}]" if lo is not None and hi is not None else ""
    return f"{100 * ci['mean']:.1f}{band}"


def _print(summary: dict[str, Any]) -> None:
    rp = summary.get("rp")
    if rp:
        t = Table(title="Route planning (95% CI, clustered by map)")
        for col in ("scenario", "category", "n", "EMA", "PMA", "DS", "strict", "valid", "gap"):
            t.add_column(col, justify="left" if col in ("scenario", "category") else "right")
        for scenario, block in rp["by_scenario"].items():
            rows = [("all", block["overall"]), *block["by_category"].items()]
            for name, b in rows:
                gap = b["gap"]["mean"] if b.get("gap") and b["gap"]["mean"] is not None else None
                t.add_row(
                    scenario,
                    name,
                    str(b["n"]),
                    _pct(b["ema"]),
                    _pct(b["pma"]),
                    f"{b['ds']['total']:.0f}",
                    _pct(b["strict"]),
                    _pct(b["valid"]),
                    "–" if gap is None else f"{gap:.3f}",
                )
        console.print(t)
    qa = summary.get("qa")
    if qa:
        t = Table(title="QA accuracy (95% CI)")
        t.add_column("scenario")
        t.add_column("n", justify="right")
        t.add_column("accuracy", justify="right")
        for scenario, block in qa["by_scenario"].items():
            t.add_row(scenario, str(block["overall"]["n"]), _pct(block["overall"]))
        console.print(t)
    rm = summary.get("reasonmap")
    if rm:
        t = Table(title="ReasonMap")
        for col in (
            "mode",
            "n",
            "acc",
            "acc strict",
            "weighted acc",
            "map score",
            "weighted score",
        ):
            t.add_column(col, justify="right")
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
