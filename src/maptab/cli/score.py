"""``maptab score``: per-sample scores and a summary with confidence intervals."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from maptab.cli.app import VerifyOption, app, console, fail, interruptible
from maptab.cli.progress import track
from maptab.errors import MaptabError


@app.command("score")
def score_cmd(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Run folder (predictions.jsonl, run.json); one shard's folder is scored "
            "alone; several: the shards of one run (maptab run --shard), merged into --out.",
            metavar="RUN_DIR...",
        ),
    ],
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
    jobs: Annotated[
        int,
        typer.Option(
            min=0,
            help="Worker processes that score answers (1: this process only; 0: one per "
            "CPU, at most 8, from 20,000 predictions). Workers add memory; the scores do "
            "not depend on it.",
        ),
    ] = 1,
    out: Annotated[
        Path | None,
        typer.Option(
            help="With several run folders: the new run folder their predictions are merged "
            "into (in sample order), then scored."
        ),
    ] = None,
) -> None:
    """Score RUN_DIR: writes RUN_DIR/scores.jsonl and RUN_DIR/summary.json, prints a table.

    One shard's folder (maptab run --shard I/N) is scored as that shard alone, a partial
    run. Several RUN_DIRs (the shards of one run) are merged into --out, which is scored
    instead; a sample answered in two of them, or in none, is refused."""
    from maptab.score.scorer import ScoreError, load_external_results, merge_runs, score_run

    # The one piece of interpreter tuning, kept at the command's edge: scoring holds every
    # answer's row until the summary and forms no reference cycles, so the cyclic collector
    # only re-walks live objects (with it on, scoring 50,824 answers takes 1.39x the CPU time).
    gc.disable()
    run_dir = run_dirs[0]
    try:
        if len(run_dirs) > 1:
            if out is None:
                raise ScoreError("several run folders are merged: name the new folder with --out")
            if results is not None or dataset is not None:
                raise ScoreError("--results and --dataset score one run folder, not a merge")
            run_dir = merge_runs(run_dirs, out, verify=verify)
        elif out is not None:
            raise ScoreError("--out merges several run folders; one is scored in place")
        preds = None
        if results is not None:
            if dataset is None:
                raise ScoreError("--results needs --dataset (the dataset the results belong to)")
            preds = load_external_results(results, dataset, verify=verify)
        with interruptible():
            summary = score_run(
                run_dir,
                dataset_dir=dataset,
                predictions=preds,
                progress=track if progress else None,
                verify=verify,
                workers=jobs if jobs else None,
            )
    except (MaptabError, OSError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:  # scores.jsonl and summary.json are replaced only at the end
        fail("interrupted; scores.jsonl and summary.json are as they were", code=130)
    _print(summary)
    console.print(
        f"wrote {run_dir / 'scores.jsonl'} and {run_dir / 'summary.json'}", soft_wrap=True
    )


def _table(title: str, columns: tuple[str, ...], left: int, rows: list[Any]) -> Table:
    t = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), collapse_padding=True)
    for i, col in enumerate(columns):
        # names fold onto a second line rather than being cut (two cut names could read the
        # same in a narrow terminal); numbers never wrap
        text = i < left
        t.add_column(col, justify="left" if text else "right", no_wrap=not text, overflow="fold")
    return t


def _print(summary: dict[str, Any]) -> None:
    """Each task kind's tables (its view's ``printout`` of its ``summary.json`` block), then
    the counts."""
    from maptab.report.views import view_of
    from maptab.tasks import all_kinds

    title = "{}, % (± 95% CI, bootstrap clustered by map)"
    for kind in all_kinds():
        block = summary.get(kind.name)
        if not block:
            continue
        for name, columns, left, rows in view_of(kind).printout(block):
            t = _table(title.format(name), columns, left, rows)
            for n, row in enumerate(rows):  # a repeated leading name is printed once
                same = n and rows[n - 1][0] == row[0] and left > 1
                t.add_row("" if same else row[0], *row[1:])
            console.print(t)
    console.print(_counts_line(summary.get("counts", {})), soft_wrap=True)
    shard = summary.get("shard")
    if shard:
        console.print(_partial_line(*shard), soft_wrap=True)


def _counts_line(counts: dict[str, Any]) -> str:
    """The closing line in words: answers scored (per kind), API errors, format errors and
    samples missing an answer."""

    def total(value: Any) -> int:
        return sum(value.values()) if isinstance(value, dict) else int(value or 0)

    scored = counts.get("scored", {})
    per_kind = ", ".join(f"{k} {n}" for k, n in scored.items()) if isinstance(scored, dict) else ""
    n = total(scored)
    line = f"scored {n} answer{'s' * (n != 1)}" + (f" ({per_kind})" if per_kind else "")
    return (
        f"{line}; {total(counts.get('api_errors'))} API errors, "
        f"{total(counts.get('format_errors'))} format errors, "
        f"{total(counts.get('missing'))} samples without an answer"
    )


def _partial_line(index: int, count: int) -> str:
    """What a shard's scores cover (SPEC 13 metrics over part of the run) and how to get the
    whole run's."""
    return (
        f"partial run: shard {index}/{count} only (the samples at positions k % {count} == "
        f"{index} of the selection); score all {count} shards together with "
        f"maptab score R0 … R{count - 1} --out MERGED"
    )
