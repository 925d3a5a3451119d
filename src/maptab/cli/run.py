"""``maptab run``: answer a dataset's samples with a model or baseline, resumably."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer

from maptab.cli.app import VerifyOption, app, console, fail, interruptible
from maptab.cli.progress import track
from maptab.core.qa_types import QA_TYPES
from maptab.core.schema import RP_BY_NAME
from maptab.errors import MaptabError


@app.command("run")
def run_cmd(
    dataset: Annotated[Path, typer.Argument(help="Dataset folder (with manifest.json).")],
    model: Annotated[
        str,
        typer.Option(
            help="openai:NAME, vllm:PATH, oracle, shortest, random, blank or agent-oracle."
        ),
    ],
    split: Annotated[
        str | None, typer.Option(help="Only samples of this split (train/test).")
    ] = None,
    categories: Annotated[
        list[str] | None,
        typer.Option(
            help="Comma-separated, repeatable; keeps samples matching any of: rp, qa, reasonmap; "
            f"an RP category ({', '.join(RP_BY_NAME)}); a QA type qa:1 … qa:{len(QA_TYPES)}.",
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N requests.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Requests in flight.")] = 16,
    jobs: Annotated[
        int,
        typer.Option(
            min=0,
            help="Worker processes that answer, for models answered in process (baselines, "
            "Python functions; 1: this process only; 0: one per CPU, at most 8, from 20,000 "
            "samples). The answers do not depend on it.",
        ),
    ] = 1,
    out: Annotated[
        Path | None, typer.Option(help="Run folder (default runs/<dataset>__<model>).")
    ] = None,
    base_url: Annotated[
        list[str] | None,
        typer.Option(
            help="OpenAI-compatible endpoint URL; repeat it for several servers of the same "
            "model (each request goes to the least busy)."
        ),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(
            help="I/N: answer only the samples at positions k of the selection with "
            "k % N == I (merge the shards with maptab score R0 R1 … --out DIR)."
        ),
    ] = None,
    api_key_env: Annotated[
        str, typer.Option(help="Environment variable holding the API key.")
    ] = "OPENAI_API_KEY",
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="Redo samples whose request failed.")
    ] = False,
    table_format: Annotated[str, typer.Option(help="Tables as csv or json.")] = "csv",
    timeout: Annotated[float, typer.Option(help="Seconds per HTTP attempt.")] = 120.0,
    max_retries: Annotated[int, typer.Option(min=0, help="Retries of a failed request.")] = 6,
    rpm: Annotated[
        float | None, typer.Option(help="At most this many requests per minute.")
    ] = None,
    temperature: Annotated[float, typer.Option()] = 0.0,
    max_tokens: Annotated[int, typer.Option(min=1, help="Most new tokens per answer.")] = 2048,
    thinking_budget: Annotated[
        int | None,
        typer.Option(min=1, help="Thinking tokens, sent where supported (papers: 4096)."),
    ] = None,
    extra_body: Annotated[
        str | None, typer.Option(help="JSON object merged into each request body.")
    ] = None,
    image_budget: Annotated[
        str,
        typer.Option(
            help="Map images are scaled down (never up, aspect ratio kept) to at most SIDEpx "
            "on the long side and MEGAPIXELSmp in all, whichever is stricter; either alone; "
            "or none to send originals.",
        ),
    ] = "2048px,1.6mp",
    max_pixels: Annotated[
        int | None,
        typer.Option(min=1, hidden=True, help="Image pixels at most N (the budget's mp part)."),
    ] = None,
    image_size: Annotated[
        str | None, typer.Option(help="WIDTHxHEIGHT: stretch images to this exact shape.")
    ] = None,
    image_format: Annotated[str, typer.Option(help="png or jpeg.")] = "png",
    seed: Annotated[int, typer.Option(help="Seed of the random baseline.")] = 0,
    tools: Annotated[
        str | None,
        typer.Option(
            help="Tool-use mode: offer the model these tools, comma-separated (zoom, lookup, "
            "check, or all); each sample becomes a conversation, stored with its row.",
        ),
    ] = None,
    max_turns: Annotated[
        int | None,
        typer.Option(min=1, help="With --tools: model turns per sample at most (default 8)."),
    ] = None,
    max_tool_calls: Annotated[
        int | None,
        typer.Option(min=0, help="With --tools: tool calls run per sample at most (default 16)."),
    ] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    verify: VerifyOption = True,
) -> None:
    """Run a model on DATASET; predictions go to RUN_DIR/predictions.jsonl (resumable)."""
    from maptab.run import ImageSpec, make_provider
    from maptab.run.requests import parse_image_budget
    from maptab.run.runner import run
    from maptab.run.tools import ToolBudget, parse_tools

    cats = [c.strip() for item in categories or () for c in item.split(",") if c.strip()]
    try:
        body = json.loads(extra_body) if extra_body else None
        if body is not None and not isinstance(body, dict):
            raise MaptabError("--extra-body must be a JSON object")
        size = _size(image_size) if image_size else None
        pixels, side = parse_image_budget(image_budget, "--image-budget")
        if max_pixels is not None:
            pixels = max_pixels
        mode = "stretch" if size else "fit"
        image = ImageSpec(pixels, mode, size, image_format, side)  # type: ignore[arg-type]
        if table_format not in ("csv", "json"):
            raise MaptabError(f"--table-format must be csv or json, not {table_format!r}")
        part = _shard(shard) if shard is not None else None
        urls = base_url or None
        provider = make_provider(
            model,
            base_url=urls[0] if urls and len(urls) == 1 else urls,
            api_key_env=api_key_env,
            concurrency=concurrency,
            timeout=timeout,
            max_retries=max_retries,
            rpm=rpm,
            temperature=temperature,
            max_tokens=max_tokens,
            thinking_budget=thinking_budget,
            extra_body=body,
            seed=seed,
        )
        names = parse_tools(tools)
        if not names and (max_turns is not None or max_tool_calls is not None):
            raise MaptabError("--max-turns and --max-tool-calls need --tools")
        budget = None
        if names and (max_turns is not None or max_tool_calls is not None):
            own = getattr(provider, "tool_budget", None) or (None, None)
            budget = ToolBudget(
                max_turns if max_turns is not None else own[0] or 8,
                max_tool_calls if max_tool_calls is not None else own[1] or 16,
            )
        run_dir = out or Path("runs") / f"{dataset.resolve().name}__{_slug(model)}"
        with interruptible():
            summary = run(
                dataset,
                provider,
                run_dir,
                split=split,
                categories=cats,
                limit=limit,
                concurrency=concurrency,
                retry_errors=retry_errors,
                progress=track if progress else None,
                table_format=table_format,  # type: ignore[arg-type]
                image=image,
                spec=model,
                verify=verify,
                jobs=jobs if jobs else None,
                tools=names,
                budget=budget,
                shard=part,
            )
    except json.JSONDecodeError as exc:
        fail(f"--extra-body is not valid JSON ({exc.msg})")
    except MaptabError as exc:  # DatasetError, StoreError, ProviderConfigError, bad options
        fail(str(exc))
    except OSError as exc:  # e.g. the disk filled up while writing predictions
        fail(f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc))
    except KeyboardInterrupt:
        fail("interrupted; rerun the same command to resume", code=130)
    console.print(
        f"{summary.total} samples: {summary.skipped} already done, {summary.completed} answered "
        f"({summary.rate:.1f}/s), {summary.errors} errors -> {summary.out_dir}",
        highlight=False,
        markup=False,
    )
    if summary.tool_stats:
        t = summary.tool_stats
        console.print(
            f"tools: {t['tool_calls_per_sample']} calls and {t['turns_per_sample']} turns per "
            f"sample ({t['samples']} conversations)",
            highlight=False,
            markup=False,
        )
    if summary.errors:
        console.print(f"most frequent error {summary.top_error}", highlight=False, markup=False)
        console.print("rerun with --retry-errors to redo the failed requests", highlight=False)
    if summary.total and summary.errors == summary.total:
        fail(
            f"no sample succeeded: all {summary.total} ended in error; fix the cause, "
            "then rerun with --retry-errors"
        )


def _size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if not m or min(int(m.group(1)), int(m.group(2))) < 1:
        raise MaptabError(f"--image-size must be WIDTHxHEIGHT, not {text!r}")
    return int(m.group(1)), int(m.group(2))


def _shard(text: str) -> tuple[int, int]:
    from maptab.io.dataset import DatasetError, parse_shard

    try:
        return parse_shard(text)
    except DatasetError:
        raise MaptabError(f"--shard must be I/N with 0 <= I < N, not {text!r}") from None


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", spec).strip("-") or "model"
