"""Resumable, concurrent runs of a provider over a dataset (SPEC 16).

:func:`run` selects the samples, skips those already answered in ``out_dir`` (errored ones
too, unless ``retry_errors``), and sends the rest through ``concurrency`` asyncio workers.
Each request is built just before it is sent (tables rendered per sample, each map image
encoded once) and each answer is appended to ``predictions.jsonl`` as soon as it arrives.
A provider that answers in process (``complete_sync``: the baselines, a plain Python
function) is called in a plain loop instead, one sample after the other in dataset order,
with its rows written in batches (:mod:`maptab.run.store`); ``concurrency`` does not apply,
and ``jobs`` > 1 spreads the samples over that many worker processes instead
(:mod:`maptab.run.inprocess`: same rows in the same order, but for ``latency_s``).
Requests that fail after the provider's retries are stored with ``error`` set; any other
exception while answering one sample is stored the same way (named by its type) so that one
bad sample cannot sink a long run; a malformed dataset stops the run with a one-line error.
So does a server that cannot be reached (SPEC 16): the provider's optional probe runs before
the run folder is touched, and a server lost during the run
(:class:`~maptab.run.provider.EndpointUnreachable`) stops the workers with every row already
written kept, so that rerunning the same command resumes.

``run.json`` records the settings (never an API key), the dataset's identity
(``dataset_digest``: :func:`~maptab.run.store.dataset_digest`) and, when the run ends, its
summary. A rerun into the same directory must use the same model and request settings, and
the same dataset: a rebuilt one (another digest) is refused before anything in the directory
changes, unless it holds no answers yet or its ``run.json`` predates the digest. A dataset
rebuilt while the run answers it makes the run end with an error once its rows are stored.

``shard=(i, n)`` answers only the samples at positions ``k`` of the selection (after
``split``, ``categories`` and ``limit``, in dataset order) with ``k % n == i``, and records
``"shard": [i, n]`` in ``run.json`` (a rerun into the folder must name the same shard).
That rule is :func:`~maptab.io.dataset.shard_of`, by which ``maptab score R0`` expects of a
shard's folder only its samples; ``maptab score R0 R1 … --out MERGED`` merges the shards.

With ``tools`` (tool-use mode, :mod:`maptab.run.tools`) each sample is a conversation: the
model is offered the tools that apply to it and asked again after each round of tool calls,
within a :class:`~maptab.run.tools.ToolBudget` (``budget``; default: the provider's
``tool_budget`` attribute, else 8 turns and 16 calls). Its row adds ``transcript``,
``tool_calls``, ``turns``, ``tools_used`` and ``stop`` (a row is written once the
conversation ends, so a sample interrupted mid-conversation is asked again from the start),
and ``run.json``'s summary adds ``tool_stats``. An in-process model converses in this process
(``jobs`` > 1 is refused). Without ``tools`` nothing of this applies and rows are as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from maptab._limits import read_json
from maptab._progress import Progress, Ticker
from maptab._version import __version__
from maptab.core.schema import Prediction, PredictionLines
from maptab.executors import ExecutorFactory, local_executor, workers_for
from maptab.io.dataset import DatasetError, shard_of
from maptab.run.inprocess import (
    AnswerPool,
    BuilderSettings,
    answer_sync,
    base_row,
    prediction_row,
)
from maptab.run.provider import (
    EndpointUnreachable,
    Provider,
    ProviderConfigError,
    probe,
    uses_messages,
)
from maptab.run.requests import ImageSpec, RequestBuilder, Sample
from maptab.run.store import (
    PredictionStore,
    StoreError,
    check_dataset,
    dataset_digest,
    short_digest,
)
from maptab.run.tools import (
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_MAX_TURNS,
    Conversation,
    Toolbox,
    ToolBudget,
)

RUN_FILE = "run.json"
# seconds of in-process answers between two returns to the event loop: Ctrl-C cancels the
# run's task (asyncio.run), which takes effect only where the task awaits
_YIELD_SECONDS = 0.05
# settings that may change between resumed runs without changing what is asked
_OPERATIONAL = ("base_url", "api_key_env", "timeout", "max_retries", "rpm")


@dataclass(slots=True)
class RunSummary:
    """What a run did. ``skipped``: already done before it; ``completed``: answered now
    (errors included); ``errors``: rows of the selected samples left with ``error`` set."""

    out_dir: str
    total: int
    skipped: int
    completed: int
    errors: int
    elapsed_s: float
    repaired_bytes: int = 0
    compacted: bool = False
    top_error: str | None = None  # the most frequent of those errors, ``"(n×) message"``
    tool_stats: dict[str, Any] | None = None  # tool-use mode: calls and turns per sample

    @property
    def rate(self) -> float:
        """Requests answered per second in this run."""
        return self.completed / self.elapsed_s if self.elapsed_s > 0 else 0.0


def run(
    dataset_dir: str | Path,
    provider: Provider,
    out_dir: str | Path,
    *,
    split: str | None = None,
    categories: Iterable[str] | None = None,
    limit: int | None = None,
    concurrency: int = 16,
    retry_errors: bool = False,
    progress: Progress | None = None,
    table_format: Literal["csv", "json"] = "csv",
    image: ImageSpec | None = None,
    spec: str | None = None,
    verify: bool = True,
    jobs: int | None = 1,
    executors: ExecutorFactory = local_executor,
    tools: Sequence[str] = (),
    budget: ToolBudget | None = None,
    shard: tuple[int, int] | None = None,
) -> RunSummary:
    """Run ``provider`` on the selected samples of ``dataset_dir`` into ``out_dir``.

    ``spec`` is the ``--model`` string recorded in ``run.json``. ``jobs``: processes that
    answer with an in-process provider (1: this one; ``N > 1``: ``N`` workers; ``None``:
    :func:`~maptab.executors.workers_for` the samples to answer); a network provider takes
    only 1 or ``None``. ``executors`` makes the workers' executor (:mod:`maptab.executors`;
    default: local processes, started with ``spawn``, which imports the calling script
    again: a script that asks for them must guard its entry point with
    ``if __name__ == "__main__":``). ``progress`` shows the
    answered count (with the samples done before, the errors and the rate as its ``done`` and
    ``status``; :mod:`maptab._progress`); none by default. The provider is closed at
    the end (a provider serves one run). Raises ``DatasetError`` / ``StoreError`` (one-line
    messages) on a malformed dataset or an unusable run directory, ``EndpointUnreachable``
    on a server that cannot be reached (SPEC 16). ``shard``: see the module docstring.
    """
    return asyncio.run(
        arun(
            dataset_dir,
            provider,
            out_dir,
            split=split,
            categories=categories,
            limit=limit,
            concurrency=concurrency,
            retry_errors=retry_errors,
            progress=progress,
            table_format=table_format,
            image=image,
            spec=spec,
            verify=verify,
            jobs=jobs,
            executors=executors,
            tools=tools,
            budget=budget,
            shard=shard,
        )
    )


async def arun(
    dataset_dir: str | Path,
    provider: Provider,
    out_dir: str | Path,
    *,
    split: str | None = None,
    categories: Iterable[str] | None = None,
    limit: int | None = None,
    concurrency: int = 16,
    retry_errors: bool = False,
    progress: Progress | None = None,
    table_format: Literal["csv", "json"] = "csv",
    image: ImageSpec | None = None,
    spec: str | None = None,
    verify: bool = True,
    jobs: int | None = 1,
    executors: ExecutorFactory = local_executor,
    tools: Sequence[str] = (),
    budget: ToolBudget | None = None,
    shard: tuple[int, int] | None = None,
) -> RunSummary:
    """:func:`run` inside a running event loop."""
    if concurrency < 1:
        raise DatasetError("--concurrency must be at least 1")
    if jobs is not None and jobs < 1:
        raise DatasetError("jobs must be at least 1, or None (one process per CPU)")
    if shard is not None and not 0 <= shard[0] < shard[1]:
        raise DatasetError(f"--shard must be I/N with 0 <= I < N, not {shard[0]}/{shard[1]}")
    image = image or ImageSpec()
    out = Path(out_dir)
    cats = sorted(set(categories or ()))
    complete_sync = getattr(provider, "complete_sync", None)
    pool: AnswerPool | None = None
    finished = False  # an error or an interruption stops the workers at once
    try:
        # the identity is read before the dataset is opened: a rebuild in between leaves the
        # record older than the answers, which a resume or a score then refuses
        digest = _digest(dataset_dir)
        counted = jobs if jobs is not None and jobs > 1 else 0  # workers asked for by number
        if tools and counted:
            raise ProviderConfigError(
                "--jobs is not available with --tools: tool conversations run in one process"
            )
        if counted and complete_sync is None:
            raise ProviderConfigError(
                f"--jobs is for models answered in process (baselines, Python functions), "
                f"not {provider.name!r}: set --concurrency instead"
            )
        # the requests' settings, for this process's builder and any worker's
        how = BuilderSettings(
            str(dataset_dir),
            table_format,
            image,
            provider.uses_images,
            str(out / ".cache" / "images"),
            verify,
            uses_messages(provider),
        )
        builder = how.builder()
        digest = digest or dataset_digest(dataset_dir)
        row_settings = {**provider.settings, "table_format": table_format, "image": image.tag()}
        toolbox: Toolbox | None = None
        if tools:
            toolbox = Toolbox(builder, tools, image)
            budget = budget or _provider_budget(provider)
            row_settings["tools"] = list(toolbox.names)
            row_settings["max_turns"] = budget.max_turns
            row_settings["max_tool_calls"] = budget.max_tool_calls
        if counted:  # the workers start up while this process chooses the samples
            pool = AnswerPool(how, provider, row_settings, counted, executors=executors)
        # one pass checks every row and keeps where the selected ones lie; the rows are read
        # again by offset as the run takes them, so memory follows the requests in flight,
        # not the dataset (a paper-size row holds its prompt and table orders)
        dataset = builder.dataset
        refs = list(dataset.select(split=split, categories=cats, limit=limit))
        samples = [r.id for r in refs]
        if not samples:
            asked = f"split {split!r}" if split is not None else ""
            asked += (" and " if asked and cats else "") + (f"categories {cats}" if cats else "")
            raise DatasetError(f"{dataset_dir}: no sample matches {asked or 'the selection'}")
        _check_unique(samples, dataset_dir)
        if shard is not None:
            i, n = shard
            if i >= len(samples):
                raise DatasetError(
                    f"{dataset_dir}: shard {i}/{n} is empty (the selection has only "
                    f"{len(samples)} samples)"
                )
            refs = shard_of(refs, shard)
            samples = shard_of(samples, shard)
        await probe(provider)  # a server that is not there: one line, nothing written
        record = {
            "dataset": str(Path(dataset_dir).resolve()),
            "dataset_digest": digest,
            "model": spec or f"{provider.name}:{provider.model}",
            "provider": provider.name,
            "model_name": provider.model,
            "settings": provider.settings,
            "table_format": table_format,
            "image": asdict(image),
            "split": split,
            "categories": cats,
            "limit": limit,
            "concurrency": concurrency,
            **({"shard": list(shard)} if shard is not None else {}),
            "maptab_version": __version__,
            "started_at": _now(),
        }
        if toolbox is not None:
            assert budget is not None
            record["tools"] = {
                "tools": list(toolbox.names),
                "max_turns": budget.max_turns,
                "max_tool_calls": budget.max_tool_calls,
            }
        start = time.perf_counter()
        _check_compatible(out / RUN_FILE, record, out, dataset_dir)  # before the store opens
        with PredictionStore(out) as store:
            _check_compatible(out / RUN_FILE, record, out, dataset_dir)  # under its lock
            _write_json(out / RUN_FILE, record)
            done = store.done_ids(include_errors=not retry_errors)
            todo = sum(1 for i in samples if i not in done)
            bar = _Counts(progress, len(samples), len(samples) - todo)
            pending = dataset.load(r for r in refs if r.id not in done)
            if pool is None and complete_sync is not None and todo and toolbox is None:
                workers = min(workers_for(jobs, todo), todo)
                if workers > 1:
                    pool = AnswerPool(how, provider, row_settings, workers, executors=executors)

            async def worker() -> None:
                for sample in pending:
                    pred = await _answer(sample, builder, provider, row_settings)
                    store.append(pred)
                    bar.tick(pred.error is not None)

            async def converse() -> None:
                assert toolbox is not None and budget is not None and tools_thread is not None
                for sample in pending:
                    pred, extra = await _answer_tools(
                        sample, builder, provider, row_settings, toolbox, budget, tools_thread
                    )
                    store.append_line(pred.id, pred.error, _with(lines.line(pred), extra))
                    bar.tick(pred.error is not None)

            lines = PredictionLines()
            # a served model's tool calls run off the event loop (one thread: the toolbox's
            # caches see one caller), so a zoom's image work does not hold up the requests
            # of the other conversations
            tools_thread = (
                ThreadPoolExecutor(1, thread_name_prefix="maptab-tools")
                if toolbox is not None and complete_sync is None
                else None
            )
            with bar, tools_thread or contextlib.nullcontext():
                if toolbox is not None and complete_sync is not None:  # in process, in turns
                    assert budget is not None
                    for sample in pending:
                        pred, extra = _answer_tools_sync(
                            sample, builder, provider, complete_sync, row_settings, toolbox, budget
                        )
                        store.append_line(pred.id, pred.error, _with(lines.line(pred), extra))
                        bar.tick(pred.error is not None)
                        await asyncio.sleep(0)
                elif pool is not None:  # in worker processes (maptab.run.inprocess)
                    async for sid, error, line in pool.answer(r for r in refs if r.id not in done):
                        store.append_line(sid, error, line, defer=True)
                        bar.tick(error is not None)
                    store.flush()
                elif complete_sync is not None:  # in process: no event loop per sample
                    due = time.monotonic() + _YIELD_SECONDS
                    for sample in pending:
                        pred = answer_sync(sample, builder, provider, complete_sync, row_settings)
                        store.append(pred, defer=True)
                        bar.tick(pred.error is not None)
                        if time.monotonic() >= due:
                            await asyncio.sleep(0)
                            due = time.monotonic() + _YIELD_SECONDS
                    store.flush()
                else:
                    try:
                        async with asyncio.TaskGroup() as tg:  # a fatal error cancels the rest
                            for _ in range(min(concurrency, todo)):
                                tg.create_task(worker() if toolbox is None else converse())
                    except BaseExceptionGroup as group:
                        first = group.exceptions[0]
                        if isinstance(first, EndpointUnreachable):
                            kept = len(samples) - todo + bar.new
                            raise EndpointUnreachable(
                                f"{first}; the run stopped, {kept} answers kept in {out}: "
                                "rerun the same command to resume"
                            ) from None
                        raise first from None
            compacted = store.compact()
            ids = set(samples)
            errors = Counter(e for i, e in store.failed.items() if i in ids)
            top = errors.most_common(1)
            summary = RunSummary(
                str(out),
                len(samples),
                len(samples) - todo,
                todo,
                errors.total(),
                time.perf_counter() - start,
                store.repaired,
                compacted,
                f"({top[0][1]}×) {top[0][0]}" if top else None,
                _tool_stats(store, ids) if toolbox is not None else None,
            )
            record["finished_at"] = _now()
            record["summary"] = {**asdict(summary), "rate": round(summary.rate, 3)}
            if summary.tool_stats is None:  # a run without tools records what it always did
                del record["summary"]["tool_stats"]
            _write_json(out / RUN_FILE, record)
        finished = True
        now = _digest(dataset_dir)
        if now != digest:
            raise StoreError(
                f"{dataset_dir} changed while {out} was answered (manifest sha256 "
                f"{short_digest(digest)} ≠ {short_digest(now) if now else 'none'}): its answers "
                f"may mix both datasets; use a new --out, or delete "
                f"{out / 'predictions.jsonl'} to start over"
            )
    finally:
        if pool is not None:
            pool.close(now=not finished)
        await provider.aclose()
    return summary


async def _answer(
    sample: Sample, builder: RequestBuilder, provider: Provider, settings: dict[str, Any]
) -> Prediction:
    base = base_row(sample, provider, settings)
    request = builder.request(sample)  # a malformed dataset raises here and stops the run
    t0 = time.perf_counter()
    try:
        c = await provider.complete(request)
    except (DatasetError, StoreError, EndpointUnreachable):
        raise
    except Exception as exc:  # one sample's failure is recorded, not fatal (module doc)
        return prediction_row(base, t0, None, exc)
    return prediction_row(base, t0, c, None)


def _provider_budget(provider: Provider) -> ToolBudget:
    """The provider's own ``tool_budget`` (``(max_turns, max_tool_calls)``), else the
    defaults."""
    own = getattr(provider, "tool_budget", None)
    if own is None:
        return ToolBudget(DEFAULT_MAX_TURNS, DEFAULT_MAX_TOOL_CALLS)
    return ToolBudget(*own)


async def _answer_tools(
    sample: Sample,
    builder: RequestBuilder,
    provider: Provider,
    settings: dict[str, Any],
    toolbox: Toolbox,
    budget: ToolBudget,
    tools_thread: Executor,
) -> tuple[Prediction, dict[str, Any]]:
    """One sample's conversation (:class:`~maptab.run.tools.Conversation`) and its row, its
    tool calls run in ``tools_thread``; a failed request ends it with the row's ``error`` set
    and the transcript so far kept."""
    base = base_row(sample, provider, settings)
    conv = Conversation(builder.request(sample), toolbox, budget)
    loop = asyncio.get_running_loop()
    t0 = time.perf_counter()
    try:
        while (request := conv.next_request()) is not None:
            completion = await provider.complete(request)
            await loop.run_in_executor(tools_thread, conv.receive, completion)
    except (DatasetError, StoreError, EndpointUnreachable):
        raise
    except Exception as exc:  # one sample's failure is recorded, not fatal (module doc)
        return prediction_row(base, t0, None, exc), conv.record()
    return prediction_row(base, t0, conv.completion(), None), conv.record()


def _answer_tools_sync(
    sample: Sample,
    builder: RequestBuilder,
    provider: Provider,
    complete: Any,
    settings: dict[str, Any],
    toolbox: Toolbox,
    budget: ToolBudget,
) -> tuple[Prediction, dict[str, Any]]:
    """:func:`_answer_tools` for a provider that answers in process (``complete``)."""
    base = base_row(sample, provider, settings)
    conv = Conversation(builder.request(sample), toolbox, budget)
    t0 = time.perf_counter()
    try:
        while (request := conv.next_request()) is not None:
            conv.receive(complete(request))
    except (DatasetError, StoreError):
        raise
    except Exception as exc:  # one sample's failure is recorded, not fatal (module doc)
        return prediction_row(base, t0, None, exc), conv.record()
    return prediction_row(base, t0, conv.completion(), None), conv.record()


def _with(line: str, extra: dict[str, Any]) -> str:
    """A row's line (a JSON object) with the fields of ``extra`` added at its end."""
    more = json.dumps(extra, ensure_ascii=False)
    return f"{line[:-1]}, {more[1:]}" if extra else line


def _tool_stats(store: PredictionStore, ids: set[str]) -> dict[str, Any]:
    """Tool calls and turns per sample over the selected samples' rows (tool-use mode)."""
    calls: list[int] = []
    turns: list[int] = []
    by_tool: Counter[str] = Counter()
    stops: Counter[str] = Counter()
    for sid in store.ids():
        if sid not in ids:
            continue
        row = store.row(sid)
        if "tool_calls" not in row:
            continue
        calls.append(int(row.get("tool_calls") or 0))
        turns.append(int(row.get("turns") or 0))
        by_tool.update(row.get("tools_used") or {})
        stops[str(row.get("stop"))] += 1
    n = len(calls)
    return {
        "samples": n,
        "tool_calls": sum(calls),
        "turns": sum(turns),
        "tool_calls_per_sample": round(sum(calls) / n, 3) if n else 0.0,
        "turns_per_sample": round(sum(turns) / n, 3) if n else 0.0,
        "max_tool_calls": max(calls, default=0),
        "max_turns": max(turns, default=0),
        "by_tool": dict(sorted(by_tool.items())),
        "stop": dict(sorted(stops.items())),
    }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _check_unique(ids: list[str], dataset_dir: str | Path) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise DatasetError(f"{dataset_dir}: sample id {i!r} appears twice")
        seen.add(i)


def _digest(dataset_dir: str | Path) -> str | None:
    """:func:`~maptab.run.store.dataset_digest`, or None where there is no manifest to read
    (opening the dataset then says why)."""
    try:
        return dataset_digest(dataset_dir)
    except StoreError:
        return None


def _fingerprint(record: dict[str, Any]) -> dict[str, Any]:
    settings = {k: v for k, v in record["settings"].items() if k not in _OPERATIONAL}
    keys = ("dataset", "provider", "model_name", "table_format", "image", "tools", "shard")
    fp = {**{k: record.get(k) for k in keys}, "settings": settings}
    if isinstance(fp["image"], dict):  # a run recorded before images had a side budget
        fp["image"] = {"max_side": None, **fp["image"]}
    return fp


def _check_compatible(
    path: Path, record: dict[str, Any], out: Path, dataset_dir: str | Path
) -> None:
    """A resumed run must ask the same thing of the same model, on the same dataset."""
    if not path.is_file():
        return
    old = read_json(path, error=StoreError)
    if not isinstance(old, dict) or not isinstance(old.get("settings"), dict):
        raise StoreError(f"{path}: not a run record (expected an object with 'settings')")
    a, b = _fingerprint(old), _fingerprint(record)
    for key in a:
        if a[key] != b[key]:
            raise StoreError(
                f"{path}: this run directory was started with {key} = {a[key]!r}, "
                f"not {b[key]!r}; use another --out"
            )
    check_dataset(out, dataset_dir, old.get("dataset_digest"), record["dataset_digest"])


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class _Counts:
    """The run's progress: answered samples through a :class:`~maptab._progress.Ticker`, the
    samples done before as ``done``, errors and rate as ``status``."""

    def __init__(self, progress: Progress | None, total: int, done: int) -> None:
        self.errors = 0
        self.new = 0
        self.t0 = time.perf_counter()
        self._ticker = Ticker(progress, "run", total, done=done, status=self.status)

    def status(self) -> str:
        rate = self.new / max(1e-9, time.perf_counter() - self.t0)
        return f"{rate:.1f} req/s, {self.errors} errors"

    def tick(self, error: bool) -> None:
        self.new += 1
        self.errors += error
        self._ticker.tick()

    def __enter__(self) -> _Counts:
        return self

    def __exit__(self, *exc: object) -> None:
        self._ticker.close()
