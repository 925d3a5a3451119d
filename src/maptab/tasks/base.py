"""The task registry: one :class:`TaskKind` record per kind of benchmark sample (SPEC 11-14).

A task kind (route planning ``rp``, map QA, ReasonMap, or a third party's) is everything
the pipeline needs to know about one kind of sample, named in one record: its query file
and record type, how a row is decoded and selected, the prompt it becomes, how an answer is
scored and summarised, the reference (oracle) answer and the RL reward. ``run``, ``score``,
``report`` and the CLI iterate over :func:`all_kinds` and call these fields; no module
outside a kind's own file branches on a kind's name (``tests/test_tasks.py``). How a kind
is shown in reports is declared apart, in :mod:`maptab.report.views`.

Where kinds come from (``docs/guides/add-a-task-kind.md``):

* every kind, built-in (:mod:`maptab.kinds`) or a third party's, is an entry point of the
  group ``maptab.tasks`` (``pyproject.toml``: ``[project.entry-points."maptab.tasks"]
  mykind = "mypkg.mykind:TASK"``) naming a :class:`TaskKind` (or a callable returning
  one); they are loaded on the first :func:`get` / :func:`all_kinds`;
* :func:`register` adds one at run time (tests, notebooks).

This module imports only :mod:`maptab.errors` and the standard library, so every layer may
use the registry; the kind modules it loads by name import the stages they wire together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from maptab.errors import MaptabError

__all__ = [
    "ENTRY_POINT_GROUP",
    "Prompt",
    "RewardSpec",
    "Samples",
    "Scoring",
    "TaskError",
    "TaskKind",
    "all_kinds",
    "get",
    "kind_names",
    "register",
]

ENTRY_POINT_GROUP = "maptab.tasks"


class TaskError(MaptabError):
    """An unknown task kind, or a task registration that is not a :class:`TaskKind`."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """What a sample shows a model (SPEC 11): the question ``text``, the ``inputs`` in order
    (table names ``edges``/``vertices``/``mix`` and ``map``), the per-table row orders, the
    table columns kept (``None``: all) or dropped, and ``meta`` keys for the request."""

    text: str
    inputs: Sequence[str] = ()
    tables: dict[str, list[int]] = field(default_factory=dict)
    keep: Sequence[str] | None = None
    drop: Sequence[str] = ()
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RewardSpec:
    """How a kind is rewarded for RL (``docs/guides/train-with-rewards.md``), read by :mod:`maptab.rewards`.

    ``score(reference, text)`` is the :class:`~maptab.rewards.RewardBreakdown` of one
    completion text against a decoded :class:`~maptab.rewards.Reference` (its ``record``,
    ``network``, ``mode`` = the variant, and ``mix``). The reference text of a sample carries
    the record less the fields of ``blank`` (which scoring never reads; they are given these
    values back when decoded) and, with ``with_map``, the map's tables. ``prepare(reference)``
    runs once when a reference is first decoded (warm caches, check the gold; a
    ``ValueError`` names a broken sample). ``ability`` is verl's ``ability`` column.
    """

    score: Callable[[Any, str], Any]
    ability: str = ""
    with_map: bool = True
    blank: dict[str, Any] = field(default_factory=dict)
    prepare: Callable[[Any], None] | None = None


def _none(*_: Any) -> Any:
    return None


def _same(record: Any) -> Any:
    return record


def _every(row: dict[str, Any]) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Samples:
    """A kind's rows and the requests they become (SPEC 11).

    ``file`` is the dataset's JSONL file of rows (``DIR/<file>``); ``record`` their class
    (with ``id``, ``map_id``, ``split``); ``decode(row)`` turns a JSON row into a
    ``record`` or raises :class:`~maptab.core.schema.RecordError` naming the field.
    ``variants`` are the requests one row becomes (``("",)``: one, with the row's id;
    otherwise ``<id>/<variant>``). ``select(token)`` returns a predicate on records for a
    ``--categories`` token of this kind (an RP category, ``qa:7``), or ``None`` when the
    token is not one of its own; ``select_help`` lists them for error messages.
    ``category(record, variant)`` is the sample's category label in exports and harness
    metadata (default: the variant, else the kind's name). ``check_label(record,
    network)`` re-derives a row's gold label for ``maptab validate`` and says how the stored
    one differs (``None``: it agrees; no ``check_label``: labels are not re-derived);
    ``label_checkable(row)`` says whether a row can be.
    """

    file: str
    record: type
    decode: Callable[[dict[str, Any]], Any]
    variants: tuple[str, ...] = ("",)
    select: Callable[[str], Callable[[Any], bool] | None] = _none
    select_help: tuple[str, ...] = ()
    category: Callable[[Any, str], str] | None = None
    check_label: Callable[[Any, Any], str | None] | None = None
    label_checkable: Callable[[dict[str, Any]], bool] = _every


@dataclass(frozen=True, slots=True)
class Scoring:
    """How an answer to one of a kind's samples is scored (SPEC 13).

    ``score(maps, record, variant, response)`` is the score row (a dict with ``id``,
    ``kind``, ``map_id``, ``parsed`` and the per-sample fields the kind's metrics read).
    ``summarise(rows)`` is the kind's block of ``summary.json`` (``None``: every declared
    metric aggregated over all rows, :func:`maptab.score.metrics.summarise_metrics`).
    ``success`` is the field that makes a row *correct* in reports; ``once``: equal answers
    to one sample are scored once; ``slim(record)`` drops what scoring never reads (it may
    change the record it is given, which the scorer decoded for itself). For ``maptab score
    --results``: ``match_question`` (a sample may be matched by its question text) and
    ``match_pair`` (the two record fields a ``station_1``/``station_2`` pair is matched
    against).
    """

    score: Callable[..., dict[str, Any]]
    summarise: Callable[[Sequence[Mapping[str, Any]]], dict[str, Any]] | None = None
    success: str = "correct"
    once: bool = False
    slim: Callable[[Any], Any] = _same
    match_question: bool = False
    match_pair: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class TaskKind:
    """One kind of sample (module docstring), as an inspect_ai task is a dataset, a solver
    and a scorer: ``samples`` (:class:`Samples`), the ``prompt(record, variant)`` a model
    is shown (:class:`Prompt`), the reference ``answer(baseline, request)`` (a built-in
    baseline's answer; the ``oracle``'s is the reference answer), ``scoring``
    (:class:`Scoring`), the :class:`~maptab.score.metrics.Metric` declarations its summary,
    report and printout read, and its RL ``reward`` (:class:`RewardSpec`; ``None``: left
    out of RL exports). ``title`` is its display name and ``order`` its place in summaries
    and reports. How a kind looks in a report is :mod:`maptab.report.views`' business.
    """

    name: str
    title: str
    samples: Samples
    prompt: Callable[[Any, str], Prompt]
    answer: Callable[[Any, Any], str]
    scoring: Scoring
    metrics: tuple[Any, ...] = ()
    reward: RewardSpec | None = None
    order: int = 100

    def category_of(self, record: Any, variant: str) -> str:
        """The sample's category label (``samples.category``, else the variant or the kind's name)."""
        if self.samples.category is not None:
            return self.samples.category(record, variant)
        return variant or self.name

    def sample_ids(self, record_id: str) -> Iterator[tuple[str, str]]:
        """``(sample id, variant)`` of each request a row with ``record_id`` becomes."""
        for v in self.samples.variants:
            yield (f"{record_id}/{v}" if v else record_id), v

    def split_id(self, sample_id: str) -> tuple[str, str] | None:
        """``(record id, variant)`` of a sample id of this kind's shape, or ``None``."""
        variants = self.samples.variants
        if variants == ("",):
            return sample_id, ""
        base, _, v = sample_id.rpartition("/")
        return (base, v) if v in variants and base else None


_REGISTRY: dict[str, TaskKind] = {}
_loaded = False


def register(kind: TaskKind) -> TaskKind:
    """Add ``kind`` to the registry (replacing one of the same name); returns it."""
    if not isinstance(kind, TaskKind):
        raise TaskError(f"a task registration must be a TaskKind, not {type(kind).__name__}")
    _REGISTRY[kind.name] = kind
    return kind


def load_entry_points(group: str, cls: type, noun: str) -> list[tuple[str, Any]]:
    """``(name, object)`` of each entry point of ``group``: the object it names, or what a
    callable that is not a ``cls`` returns; an entry point that fails to load or is not a
    ``cls`` is a one-line :class:`TaskError` naming it (``noun``: what it should be)."""
    out = []
    for ep in entry_points(group=group):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plug-in names itself, not a traceback
            raise TaskError(f"{noun} entry point {ep.name!r} ({ep.value}): {exc}") from None
        obj = obj() if callable(obj) and not isinstance(obj, cls) else obj
        if not isinstance(obj, cls):
            raise TaskError(f"{noun} entry point {ep.name!r} ({ep.value}) is not a {cls.__name__}")
        out.append((ep.name, obj))
    return out


def _load() -> None:
    """Load the kinds named by the ``maptab.tasks`` entry points (once): the built-in ones
    (``pyproject.toml``) and any installed plug-in's."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for _, task in load_entry_points(ENTRY_POINT_GROUP, TaskKind, "task kind"):
        _REGISTRY.setdefault(task.name, task)


def all_kinds() -> list[TaskKind]:
    """Every registered kind, in report order (``order``, then name)."""
    _load()
    return sorted(_REGISTRY.values(), key=lambda k: (k.order, k.name))


def kind_names() -> tuple[str, ...]:
    """The names of :func:`all_kinds`, in the same order."""
    return tuple(k.name for k in all_kinds())


def get(name: str) -> TaskKind:
    """The kind called ``name``; an unknown name is a :class:`TaskError` listing the known."""
    _load()
    kind = _REGISTRY.get(name)
    if kind is None:
        raise TaskError(f"unknown task kind {name!r}; known: {', '.join(kind_names())}")
    return kind
