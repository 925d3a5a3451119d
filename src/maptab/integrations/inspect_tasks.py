"""inspect_ai tasks over the task registry (``docs/guides/evaluation-harnesses.md``; extra ``maptab[inspect]``).

One adapter, :func:`maptab_task`, turns any registered task kind into an inspect ``Task``:

* **dataset** — one ``Sample`` per request ``maptab run`` sends (a ReasonMap row gives a
  ``short`` and a ``long`` sample), its input the same user message
  (:class:`maptab.run.requests.RequestBuilder`: the question, then each table shown, then
  the map image), its ``target`` the reference (oracle) answer, its metadata the kind,
  category, map and variant;
* **solver** — ``generate()``;
* **scorer** — the kind's own ``score`` (the row ``maptab score`` writes): the score value is
  a dict of the kind's plain mean metrics (RP: EMA, PMA, strict, valid, optimal, transfers;
  QA: accuracy; ReasonMap: accuracy, strict accuracy, map score), the score's ``answer`` the
  answer as maptab read it (SPEC 12; ``None`` when it did not parse), the score row (with
  ``error_type``) its metadata; each value is reported with its mean, its standard error
  clustered by map (queries of one map move together, as in maptab's own intervals, SPEC 13)
  and its mean per category (RP category, ``qa:N``, ReasonMap mode).

The map image is the data URL ``maptab run`` sends. inspect inlines image file paths into
its log as well, so a log sample holds its image once either way (``--no-log-images`` drops
it). A maptab error while the task is built (a missing dataset, a sample without a
reference) is inspect's ``PrerequisiteError`` too, which its CLI prints as one line.

``maptab_rp``, ``maptab_qa`` and ``reasonmap`` are the built-in kinds; ``maptab`` takes the
kind as a parameter (``-T kind=…``, a third party's too). The package's ``inspect_ai`` entry
point imports this module, so ``inspect eval maptab/maptab_rp --model …`` finds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from inspect_ai.scorer import Score, Target, grouped, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate

from maptab.errors import MaptabError
from maptab.integrations.common import clean, resolve_dataset, sample_values
from maptab.io.dataset import Dataset, DatasetError, Maps
from maptab.run.baselines import BASELINE_CLASSES, number_text
from maptab.run.requests import ChatRequest, RequestBuilder, iter_samples
from maptab.score.parse import Segment, parse_reasonmap
from maptab.tasks.base import TaskKind
from maptab.tasks.base import get as get_kind

try:  # inspect's CLI prints this error's message alone, without a traceback
    from inspect_ai._util.error import PrerequisiteError
except ImportError:  # pragma: no cover - a version that moved it: a plain error instead

    class PrerequisiteError(Exception):  # type: ignore[no-redef]
        """Stand-in where inspect does not have its ``PrerequisiteError`` there."""


__all__ = [
    "InspectDatasetError",
    "InspectTaskError",
    "maptab",
    "maptab_qa",
    "maptab_rp",
    "maptab_samples",
    "maptab_task",
    "reasonmap",
]


class InspectDatasetError(DatasetError, PrerequisiteError):
    """A :class:`DatasetError` that inspect's CLI prints as its one-line message (SPEC 16)."""

    def __init__(self, message: str) -> None:
        DatasetError.__init__(self, message)
        self.message = message


class InspectTaskError(MaptabError, PrerequisiteError):
    """Any other :class:`MaptabError` of building a task, printed as one line (SPEC 16)."""

    def __init__(self, message: str) -> None:
        MaptabError.__init__(self, message)
        self.message = message


def _categories(categories: str | Sequence[str] | None) -> list[str] | None:
    if categories is None or categories == "":
        return None
    if isinstance(categories, str):
        return [c.strip() for c in categories.split(",") if c.strip()]
    return list(categories)


def _message(request: ChatRequest) -> ChatMessageUser:
    """The request's user message as inspect content parts, in the same order."""
    content: list[ContentText | ContentImage] = []
    for part in request.messages[0]["content"]:
        if part.get("type") == "text":
            content.append(ContentText(text=part["text"]))
        elif part.get("type") == "image_url":
            content.append(ContentImage(image=part["image_url"]["url"]))
    return ChatMessageUser(content=content)


def maptab_samples(
    kind: TaskKind,
    dataset_dir: str | Path,
    *,
    split: str | None = None,
    categories: str | Sequence[str] | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
) -> tuple[list[Sample], dict[str, tuple[Any, str]]]:
    """The inspect samples of one kind (module docstring), and per sample id its record and
    variant (what the scorer needs). Without ``images`` no image part is attached and the
    samples that show nothing but the map are left out."""
    builder = RequestBuilder(dataset_dir, table_format=table_format, images=images)  # type: ignore[arg-type]
    oracle = BASELINE_CLASSES["oracle"](seed=0)
    wanted = [c for c in _categories(categories) or [] if kind.samples.select(c) is not None]
    if _categories(categories) and not wanted:
        return [], {}  # every category named belongs to other kinds
    samples, records = [], {}
    for s in iter_samples(dataset_dir, split=split, categories=wanted or None):
        if s.kind != kind.name:
            continue
        if not images and all(i == "map" for i in kind.prompt(s.record, s.variant).inputs):
            continue
        request = builder.request(s)
        samples.append(
            Sample(
                id=s.id,
                input=[_message(request)],
                target=_reference(kind, oracle, request, dataset_dir),
                metadata={
                    "kind": kind.name,
                    "category": kind.category_of(s.record, s.variant),
                    "map_id": s.map_id,
                    "variant": s.variant,
                },
            )
        )
        records[s.id] = (s.record, s.variant)
        if limit is not None and len(samples) >= limit:
            break
    return samples, records


def _reference(kind: TaskKind, oracle: Any, request: ChatRequest, dataset_dir: str | Path) -> str:
    """The reference (oracle) answer of ``request``; a sample that has none (a station not on
    its map, a map cut in two) is a one-line :class:`DatasetError` naming file and sample
    (SPEC 16)."""
    try:
        return kind.answer(oracle, request)
    except MaptabError:
        raise
    except ValueError as exc:
        text = str(exc).removeprefix(f"{request.id}: ")
        raise DatasetError(
            f"{Path(dataset_dir) / kind.samples.file}: sample {request.id!r}: no reference "
            f"answer ({text}); `maptab validate {dataset_dir}` lists the dataset's problems"
        ) from None


def _segment_text(seg: Segment) -> str:
    via = ""
    if seg.via_stops is not None:
        via = f" via {', '.join(seg.via_stops) or 'none'}"
    elif seg.num_via_stops is not None:
        via = f" ({seg.num_via_stops} via stops)"
    return f"{seg.route_name}: {seg.departure_stop} -> {seg.arrival_stop}{via}"


def _answer(row: dict[str, Any], completion: str, variant: str) -> str | None:
    """The answer as maptab read it (SPEC 12), from the score row's fields: ``route`` (RP),
    ``pred`` (QA), else, for a row with ``long_template`` (ReasonMap, whose row keeps no
    segments), the segments read again, ``--`` between them; ``None`` when nothing parsed."""
    if not row.get("parsed"):
        return None
    if row.get("route") is not None:
        return str(row["route"])
    if row.get("pred") is not None:
        return number_text(row["pred"])
    if "long_template" in row:
        segments = parse_reasonmap(completion, variant)
        if segments:
            return " -- ".join(_segment_text(seg) for seg in segments)
    return None


def _scorer(kind: TaskKind, dataset_dir: Path, records: dict[str, tuple[Any, str]]) -> Any:
    names = list(sample_values(kind, {}))

    per_category = grouped(mean(), "category", all=False, name_template="{group_name}")
    metrics = {name: [mean(), stderr(cluster="map_id"), per_category] for name in names}

    @scorer(metrics=metrics, name=f"maptab_{kind.name}")
    def maptab_scorer() -> Any:
        maps = Maps(Dataset(dataset_dir))

        async def score(state: TaskState, target: Target) -> Score:
            record, variant = records[str(state.sample_id)]
            completion = state.output.completion
            row = kind.scoring.score(maps, record, variant, completion)
            return Score(
                value=sample_values(kind, row),
                answer=_answer(row, completion, variant),
                explanation=row.get("error_type") or None,
                metadata=clean(row),
            )

        return score

    return maptab_scorer()


def maptab_task(
    kind: str,
    dataset: str = "mini",
    split: str | None = None,
    categories: str | Sequence[str] | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
    seed: int = 0,
) -> Task:
    """The inspect ``Task`` of task kind ``kind`` on ``dataset`` (a dataset folder or a
    preset name, built once: :func:`~maptab.integrations.common.resolve_dataset`), filtered
    as ``maptab run`` filters (``split``, ``categories`` as a list or comma-separated,
    ``limit``), tables as ``csv`` or ``json``. Errors are :class:`InspectDatasetError` (a
    :class:`DatasetError`) or :class:`InspectTaskError`: one line, in inspect's CLI too."""
    try:
        task_kind = get_kind(kind)
        root = resolve_dataset(dataset, seed=seed, images=images)
        samples, records = maptab_samples(
            task_kind,
            root,
            split=split,
            categories=categories,
            limit=limit,
            table_format=table_format,
            images=images,
        )
        if not samples:
            why = " (images=False leaves out the samples that show only the map)"
            raise DatasetError(
                f"{root}: no {kind} sample matches the selection{why if not images else ''}"
            )
        return Task(
            dataset=MemoryDataset(samples, name=f"maptab-{kind}", location=str(root)),
            solver=generate(),
            scorer=_scorer(task_kind, root, records),
            name=kind,
        )
    except DatasetError as exc:
        raise InspectDatasetError(str(exc)) from None
    except MaptabError as exc:
        raise InspectTaskError(str(exc)) from None


@task
def maptab(
    kind: str,
    dataset: str = "mini",
    split: str | None = None,
    categories: str | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
    seed: int = 0,
) -> Task:
    """Any registered maptab task kind (``-T kind=<name>``)."""
    return maptab_task(kind, dataset, split, categories, limit, table_format, images, seed)


@task
def maptab_rp(
    dataset: str = "mini",
    split: str | None = None,
    categories: str | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
    seed: int = 0,
) -> Task:
    """MapTab route planning (SPEC 11-13)."""
    return maptab_task("rp", dataset, split, categories, limit, table_format, images, seed)


@task
def maptab_qa(
    dataset: str = "mini",
    split: str | None = None,
    categories: str | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
    seed: int = 0,
) -> Task:
    """MapTab map question answering (SPEC 10-13)."""
    return maptab_task("qa", dataset, split, categories, limit, table_format, images, seed)


@task
def reasonmap(
    dataset: str = "mini",
    split: str | None = None,
    categories: str | None = None,
    limit: int | None = None,
    table_format: str = "csv",
    images: bool = True,
    seed: int = 0,
) -> Task:
    """ReasonMap questions, short and long (SPEC 14)."""
    return maptab_task("reasonmap", dataset, split, categories, limit, table_format, images, seed)
