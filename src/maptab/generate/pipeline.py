"""``maptab build``: synthesise maps, tables, images and queries into a dataset folder.

The pipeline (SPEC 6, 8–11, 15), all seeded so the same preset and seed give a
byte-identical dataset:

1. synthesise networks with geometry and names (:mod:`maptab.generate.synth`) and their
   attributes (:mod:`maptab.generate.attributes`);
2. score map difficulty per scenario, cut it into thirds, split maps train/test by
   consecutive triples (:mod:`maptab.generate.difficulty`);
3. allocate OD pairs per map with Algorithm 1 (:mod:`maptab.generate.allocation`);
4. per map: sample OD pairs, rank their query difficulty (SPLI / SPCI thirds), emit the 12
   RP queries of each pair with exact gold labels (:mod:`maptab.generate.queries`), and the 12
   QA queries of its scenario (:mod:`maptab.core.qa_types`);
5. render every map (:mod:`maptab.render`) and write the dataset (:mod:`maptab.io.dataset`).

Steps 1 and 4-5 run per map in any process, from a :class:`MapRecipe` (seed, index, spec):
phase 1 returns a :class:`MapSummary`, phase 2 writes the map's files and rows as parts; only
steps 2-3 (global) and the merge of the parts run in the parent.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from contextlib import ExitStack
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from maptab._progress import Progress, or_silent
from maptab.core import qa_types
from maptab.core.network import Network, cycle_rank
from maptab.core.route_text import check_network_names
from maptab.core.schema import QA_STYLES, RP_STYLES, QAQuery, ReasonMapQuestion, RPQuery
from maptab.core.tables import derive_mix
from maptab.executors import ExecutorFactory, default_workers, local_executor, worker_processes
from maptab.generate import allocation, attributes, difficulty, synth
from maptab.generate.from_reasonmap import reasonmap_questions
from maptab.generate.prompts import rp_prompt
from maptab.generate.queries import PAIR_SHARES, PairShares, eligible_pairs, select_pairs
from maptab.io.dataset import (
    QUERY_FILES,
    TABLE_FILES,
    DatasetError,
    DatasetWriter,
    MapEntry,
    MapImager,
    map_folder,
    parse_shard,
    query_lines,
    write_map_files,
)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Preset:
    """How many maps of each scenario, and how many OD pairs (Q) each scenario gets."""

    name: str
    metro_maps: int
    travel_maps: int
    metro_pairs: int
    travel_pairs: int
    q_min: int = 5
    alpha: float = 1.5
    reasonmap_per_map: int = 0
    sizes: tuple[str, ...] = ("small", "medium", "large")
    map_style: str = "clean"  # render style (maptab.render.style)


PRESETS: dict[str, Preset] = {
    # a few maps of each scenario, built in seconds (the demo and the tests use it)
    # (with a few ReasonMap questions per metro map, so every suite is exercised)
    "mini": Preset("mini", 3, 3, 24, 24, q_min=2, reasonmap_per_map=8),
    # the paper's scale: 160 + 168 maps, 8,000 + 8,400 OD pairs -> 196,800 RP queries
    "paper": Preset("paper", 160, 168, 8000, 8400, map_style="realistic"),
}

QA_OUTPUT = (
    "Give only the final answer (a number; 1 for yes, 0 for no), wrapped as "
    "<answer_begin>answer<answer_end>."
)


def _seeds(seed: int, n: int) -> list[int]:
    """``n`` independent child seeds of ``seed`` (stable across numpy versions)."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(n)]


def _shown_orders(
    inputs: Iterable[str], net: Network, rng: np.random.Generator
) -> dict[str, list[int]]:
    """A seeded row order for every table among ``inputs`` (per-sample shuffle, SPEC 5)."""
    return {
        part: [int(i) for i in rng.permutation(len(net.edges if part == "edges" else net.vertices))]
        for part in inputs
        if part in TABLE_FILES
    }


def map_count(spec: Preset) -> int:
    """The maps of ``spec``: metro maps first, then travel maps."""
    return spec.metro_maps + spec.travel_maps


def _map_seed(seed: int, index: int) -> int:
    """The child seed of map ``index``: ``_seeds(seed, n)[index]`` for any ``n > index``,
    computed alone (a spawned child's key is its position)."""
    return int(np.random.SeedSequence(seed, spawn_key=(index,)).generate_state(1)[0])


@dataclass(frozen=True, slots=True)
class MapRecipe:
    """What map ``index`` of a build depends on, and nothing else: the build's ``seed`` and
    ``spec`` (SPEC 6). Any process re-synthesises the same network from it
    (:func:`recipe_network`), so a job carries this, never a network."""

    seed: int
    index: int
    spec: Preset

    @property
    def scenario(self) -> str:
        return "metromap" if self.index < self.spec.metro_maps else "travelmap"

    @property
    def rank(self) -> int:
        """The map's position among the maps of its scenario."""
        return (
            self.index if self.index < self.spec.metro_maps else self.index - self.spec.metro_maps
        )

    @property
    def map_id(self) -> str:
        prefix = "metro" if self.scenario == "metromap" else "travel"
        return f"{prefix}-{self.rank:03d}"


def recipe_network(recipe: MapRecipe) -> Network:
    """The network of ``recipe``, with its attributes (SPEC 6), the same in every process."""
    child = _map_seed(recipe.seed, recipe.index)
    rng = np.random.default_rng(child)
    size = recipe.spec.sizes[recipe.rank % len(recipe.spec.sizes)]
    if recipe.scenario == "metromap":
        net = synth.synth_metro(synth.sample_metro_spec(rng, size), child, recipe.map_id)
    else:
        net = synth.synth_scenic(synth.sample_scenic_spec(rng, size), child, recipe.map_id)
    return attributes.synthesize_attributes(net, child)


def synthesize_maps(preset: Preset, seed: int) -> list[Network]:
    """The preset's networks with attributes, metro maps first, ids ``metro-000``…"""
    return [recipe_network(MapRecipe(seed, i, preset)) for i in range(map_count(preset))]


@dataclass(frozen=True, slots=True)
class MapSummary:
    """What the global steps need of one map (SPEC 8, Algorithm 1): its raw difficulty
    metrics (:data:`~maptab.generate.difficulty.MAP_METRICS`), station count and number of
    eligible OD pairs. Small, whatever the map's size."""

    map_id: str
    scenario: str
    language: str
    metrics: tuple[float, ...]
    stations: int
    capacity: int
    cycles: int = 0


def summarize_map(net: Network) -> MapSummary:
    """The :class:`MapSummary` of ``net``."""
    return MapSummary(
        net.map_id,
        net.scenario,
        str(net.meta.get("language", "en")),
        tuple(float(m(net)) for m in difficulty.MAP_METRICS[net.scenario]),
        len(net.vertices),
        len(eligible_pairs(net)),
        cycle_rank(net.simple_graph()),
    )


def pair_shares(summaries: list[MapSummary], quotas: dict[str, int]) -> dict[str, PairShares]:
    """Each scenario's :data:`~maptab.generate.queries.PAIR_SHARES`, scaled to the maps that
    can meet them: a map without a cycle has neither tied nor NR pairs, so the others aim
    at ``target / share of the scenario's pairs on maps with a cycle`` (at most 0.5)."""
    out = {}
    for scenario, target in PAIR_SHARES.items():
        mine = [m for m in summaries if m.scenario == scenario]
        total = sum(quotas.get(m.map_id, 0) for m in mine)
        cyclic = sum(quotas.get(m.map_id, 0) for m in mine if m.cycles > 0)
        scale = total / cyclic if cyclic else 1.0
        out[scenario] = PairShares(
            tied=min(target.tied * scale, 0.5),
            nr=None if target.nr is None else min(target.nr * scale, 0.5),
            lookahead=target.lookahead,
        )
    return out


def summarize_recipe(recipe: MapRecipe) -> MapSummary:
    """Phase 1 of a map, in a worker: synthesis, attributes, difficulty metrics."""
    return summarize_map(recipe_network(recipe))


def _min_max(values: list[float]) -> list[float]:
    lo, hi = min(values), max(values)
    return [0.0 if hi == lo else (v - lo) / (hi - lo) for v in values]


def classify_summaries(summaries: list[MapSummary], seed: int) -> list[MapEntry]:
    """Difficulty level and split of every map, scored within its scenario (SPEC 8): the
    metrics min-max normalised over the scenario's maps and averaged
    (:func:`~maptab.generate.difficulty.map_difficulty_scores`), cut into thirds."""
    entries: dict[int, MapEntry] = {}
    for scenario in ("metromap", "travelmap"):
        idx = [i for i, m in enumerate(summaries) if m.scenario == scenario]
        if not idx:
            continue
        width = len(summaries[idx[0]].metrics)
        columns = [_min_max([summaries[i].metrics[c] for i in idx]) for c in range(width)]
        scores = [sum(col[k] for col in columns) / len(columns) for k in range(len(idx))]
        levels = difficulty.tercile_levels(scores)
        splits = difficulty.split_maps(scores, seed)
        for i, score, level, split in zip(idx, scores, levels, splits, strict=True):
            m = summaries[i]
            entries[i] = MapEntry(
                id=m.map_id,
                scenario=scenario,
                difficulty=level,
                split=split,
                language=m.language,
                difficulty_score=float(score),
            )
    return [entries[i] for i in range(len(summaries))]


def classify_maps(nets: list[Network], seed: int) -> list[MapEntry]:
    """Difficulty level and split of every map, scored within its scenario (SPEC 8)."""
    return classify_summaries([summarize_map(n) for n in nets], seed)


def summary_quotas(
    summaries: list[MapSummary], entries: list[MapEntry], preset: Preset
) -> dict[str, int]:
    """OD pairs per map, by Algorithm 1 within each scenario."""
    quotas: dict[str, int] = {}
    for scenario, total in (("metromap", preset.metro_pairs), ("travelmap", preset.travel_pairs)):
        idx = [i for i, e in enumerate(entries) if e.scenario == scenario]
        if not idx:
            continue
        counts = allocation.allocate_queries(
            [summaries[i].stations for i in idx],
            total,
            alpha=preset.alpha,
            q_min=preset.q_min,
            levels=[entries[i].difficulty for i in idx],
            splits=[entries[i].split for i in idx],
            capacity=[summaries[i].capacity for i in idx],
        )
        quotas.update({entries[i].id: int(c) for i, c in zip(idx, counts, strict=True)})
    return quotas


def pair_quotas(nets: list[Network], entries: list[MapEntry], preset: Preset) -> dict[str, int]:
    """OD pairs per map, by Algorithm 1 within each scenario."""
    return summary_quotas([summarize_map(n) for n in nets], entries, preset)


def rp_queries_for_map(
    net: Network,
    entry: MapEntry,
    quota: int,
    seed: int,
    style_offset: int = 0,
    *,
    report_totals: bool = False,
    cost_model: str = "additive",
    shares: PairShares | None = None,
) -> list[RPQuery]:
    """The RP queries of one map: ``quota`` OD pairs × 12 categories, the pairs drawn toward
    ``shares`` (:func:`~maptab.generate.queries.select_pairs`; generated maps get
    :func:`pair_shares`, a user's own maps none: a uniform draw).

    Instruction styles cycle over the pairs of a scenario (SPEC 9): pair ``p`` of this map
    gets style ``(style_offset + p) mod 5`` in every category, where ``style_offset`` counts
    the pairs of the scenario's earlier maps.
    """
    rng = np.random.default_rng(seed)
    mix_net = net.with_attributes(vertices=derive_mix(net))
    selected = select_pairs(net, mix_net, quota, rng, shares, cost_model=cost_model)
    levels = difficulty.query_difficulty_levels(net, [pair for pair, _ in selected])
    out: list[RPQuery] = []
    for p, (((s, t), queries), level) in enumerate(zip(selected, levels, strict=True)):
        for category, weights, gold, repetition in queries:
            style = RP_STYLES[(style_offset + p) % len(RP_STYLES)]
            shown = _shown_orders(category.inputs, net, rng)
            asks_totals = report_totals and not category.criteria_free
            out.append(
                RPQuery(
                    id=f"{entry.id}/rp-{p:04d}-{category.name}",
                    map_id=entry.id,
                    scenario=net.scenario,
                    split=entry.split,
                    category=category.name,
                    style=style,
                    question=rp_prompt(
                        category,
                        net.scenario,
                        style,
                        s,
                        t,
                        weights,
                        report_totals=asks_totals,
                        cost_model=cost_model,
                    ),
                    source=s,
                    target=t,
                    map_difficulty=entry.difficulty,
                    query_difficulty=level,
                    weights=weights,
                    totals=gold.totals,
                    repetition=repetition,
                    report_totals=asks_totals,
                    cost_model=cost_model,
                    tables=shown,
                    **gold.label(),  # type: ignore[arg-type]
                )
            )
    return out


def qa_queries_for_map(
    net: Network, entry: MapEntry, seed: int, style_offset: int = 0
) -> list[QAQuery]:
    """The 12 QA queries of one map (one per type of its scenario, SPEC 10).

    Styles cycle over the maps of a scenario: ``style_offset`` is the map's position among them.
    """
    rng = np.random.default_rng(seed)
    out: list[QAQuery] = []
    for qtype in qa_types.QA_TYPES:
        if qtype.scenario != net.scenario:
            continue
        style = QA_STYLES[style_offset % len(QA_STYLES)]
        params = qa_types.sample_qa_params(qtype.number, net, rng)
        shown = _shown_orders(qtype.inputs, net, rng)
        if "dropped" in params:  # type 22: one spot left out of the table shown
            drop = set(params["dropped"])
            names = net.stations
            for part in ("vertices", "mix"):
                if part in shown:
                    shown[part] = [i for i in shown[part] if names[i] not in drop]
        table_order = {
            part: [net.stations[i] for i in order]
            for part, order in shown.items()
            if part != "edges"
        }
        answer = qa_types.qa_answer(qtype.number, net, params, shown=table_order)
        question = qa_types.qa_question(qtype.number, style, params, net) + "\n" + QA_OUTPUT
        out.append(
            QAQuery(
                id=f"{entry.id}/qa-{qtype.number:02d}",
                map_id=entry.id,
                scenario=net.scenario,
                split=entry.split,
                type=qtype.number,
                capabilities=list(qtype.capabilities),
                style=style,
                question=question,
                answer=answer,
                inputs=list(qtype.inputs),
                tables=shown,
                drop_line_column=qtype.drop_line_column,
                params=json.loads(json.dumps(params)),
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class MapJob:
    """Everything phase 2 of one map depends on (so maps can be built in any process):
    where its network comes from (``recipe``, re-synthesised by the worker, or ``net`` for
    builders that bring their own maps), its manifest entry, OD-pair quota, query seed and
    style offsets, and how to draw its image (``renderer`` and ``style``, or ``image`` to
    copy).

    ``delay_s`` is a test hook (:data:`SLOW_MAPS`): seconds to wait before the map's
    queries are computed, to show how a slow map affects the build."""

    entry: MapEntry
    quota: int
    seed: int
    pair_offset: int
    map_offset: int
    report_totals: bool
    cost_model: str
    reasonmap_per_map: int
    delay_s: float = 0.0
    recipe: MapRecipe | None = None
    net: Network | None = None
    style: str = "clean"
    renderer: MapImager | None = None
    image: Path | None = None
    shares: PairShares | None = None

    def network(self) -> Network:
        """The map's network (re-synthesised from its recipe when it has one)."""
        if self.net is not None:
            return self.net
        assert self.recipe is not None
        return recipe_network(self.recipe)


SLOW_MAPS: dict[str, float] = {}
"""Test hook: map id -> seconds its job waits before computing its queries (a slow map).
The variable ``MAPTAB_SLOW_MAPS`` (``ID=SECONDS,ID=SECONDS``) adds to it for a whole
``maptab build``; benchmarks/bench_build.py uses it to time a build with one slow map."""
SLOW_MAPS_ENV = "MAPTAB_SLOW_MAPS"


def _slow_maps() -> dict[str, float]:
    """:data:`SLOW_MAPS` and the maps named in ``MAPTAB_SLOW_MAPS``."""
    slow = dict(SLOW_MAPS)
    for item in os.environ.get(SLOW_MAPS_ENV, "").split(","):
        name, sep, seconds = item.strip().rpartition("=")
        if sep and name:
            try:
                slow[name] = float(seconds)
            except ValueError:
                raise DatasetError(f"{SLOW_MAPS_ENV}: {item!r} is not ID=SECONDS") from None
    return slow


def map_queries(
    job: MapJob, net: Network | None = None
) -> tuple[list[RPQuery], list[QAQuery], list[ReasonMapQuestion]]:
    """The RP, QA and (metro maps of presets that ask for them) ReasonMap queries of one map."""
    if job.delay_s > 0:
        time.sleep(job.delay_s)
    net = net if net is not None else job.network()
    entry = job.entry
    rp = rp_queries_for_map(
        net,
        entry,
        job.quota,
        job.seed,
        job.pair_offset,
        report_totals=job.report_totals,
        cost_model=job.cost_model,
        shares=job.shares,
    )
    qa_rows = qa_queries_for_map(net, entry, job.seed, job.map_offset)
    rm: list[ReasonMapQuestion] = []
    if job.reasonmap_per_map and net.scenario == "metromap":
        rm = reasonmap_questions(
            net,
            map_difficulty=entry.difficulty,
            split=entry.split,
            rng_seed=job.seed,
            per_map=job.reasonmap_per_map,
            city_label="the city shown",
        )
    return rp, qa_rows, rm


PARTS = ".parts"
"""The folder of the dataset being written where each map's query rows wait as parts
(``<position>.<kind>.jsonl``, written by the process that built the map) until the rows of
every earlier map are in the files."""


def _part(folder: Path, position: int, kind: str) -> Path:
    return folder / f"{position:06d}.{kind}.jsonl"


@dataclass(frozen=True, slots=True)
class MapDone:
    """What phase 2 of a map reports back: its rows per kind and its image's legibility
    problems (SPEC 15). Its files are already on disk."""

    counts: dict[str, int]
    legibility: list[str] | None


def write_map_parts(job: MapJob, root: Path, position: int) -> MapDone:
    """Phase 2 of one map, in any process: build its network, queries and gold labels, draw
    its image and write its tables (``root/maps/<id>/``) and its rows as parts
    (``root/.parts``). The parent only appends the parts in map order, so it never holds a
    map's network or rows, whatever order the maps finish in."""
    net = job.network()
    rows = dict(zip(QUERY_FILES, map_queries(job, net), strict=True))
    if job.style != "clean":
        net.meta["render_style"] = job.style
    image, problems = job.image, None
    if image is None and job.renderer is not None:
        folder = map_folder(root, job.entry.id)
        folder.mkdir(parents=True, exist_ok=True)
        image = folder / "image.png"
        problems = job.renderer.draw(net, image)
    write_map_files(root, net, job.entry, image=image)
    for kind, records in rows.items():
        with _part(root / PARTS, position, kind).open("w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(query_lines(records))
    return MapDone({kind: len(records) for kind, records in rows.items()}, problems)


def _completions(
    pool: Executor | None, fn: Callable[..., T], calls: Iterable[tuple[Any, ...]], window: int
) -> Iterator[tuple[int, T]]:
    """``(i, fn(*calls[i]))`` for every call, in the order they finish: in ``pool`` with at
    most ``window`` calls submitted and not finished (so the parent holds few), or here,
    one after another, without a pool."""
    if pool is None:
        for i, args in enumerate(calls):
            yield i, fn(*args)
        return
    running: dict[Future[T], int] = {}
    todo = enumerate(calls)
    while True:
        for i, args in todo:
            running[pool.submit(fn, *args)] = i
            if len(running) >= window:
                break
        if not running:
            return
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in sorted(done, key=running.__getitem__):
            yield running.pop(future), future.result()


def _window(workers: int) -> int:
    return 2 * workers


def scaled_preset(spec: Preset, maps: int) -> Preset:
    """``spec`` with ``maps`` maps per scenario and its OD pairs scaled in proportion
    (at least ``q_min`` per map); every other setting kept."""
    if maps < 1:
        raise DatasetError(f"--maps {maps}: need at least 1 map per scenario")

    def pairs(total: int, n: int) -> int:
        return max(spec.q_min * maps, round(total * maps / n)) if n else total

    return replace(
        spec,
        metro_maps=maps,
        travel_maps=maps,
        metro_pairs=pairs(spec.metro_pairs, spec.metro_maps),
        travel_pairs=pairs(spec.travel_pairs, spec.travel_maps),
    )


def build_benchmark(
    out_dir: str | Path,
    *,
    preset: str | Preset = "mini",
    seed: int = 0,
    renderer: MapImager | None = None,
    report_totals: bool = False,
    cost_model: str = "additive",
    progress: Progress | None = None,
    workers: int | None = None,
    timings: dict[str, float] | None = None,
    map_style: str | None = None,
    executors: ExecutorFactory = local_executor,
    shard: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Build a MapTab-style benchmark into ``out_dir``; returns the manifest.

    The build is atomic (:class:`~maptab.io.dataset.DatasetWriter`): an interrupted or failed
    build leaves the previous dataset at ``out_dir`` untouched.

    ``renderer`` draws every map's image (pass :class:`maptab.render.images.DatasetImager`;
    ``None``: no images). ``map_style`` (default: the preset's) is the render style of every
    map image (:mod:`maptab.render.style`; checked by ``renderer``, taken as given without
    one); it is recorded in each map's ``meta["render_style"]``. ``progress`` wraps the loop
    over maps (:mod:`maptab._progress`).

    Two phases, each map a self-contained job (:class:`MapRecipe`): phase 1 synthesises
    every map and measures its difficulty metrics; the parent classifies the maps (SPEC 8)
    and allocates OD pairs (Algorithm 1) over all of them; phase 2 re-synthesises each map
    and writes its tables, image and queries. ``workers`` processes run both phases
    (default: one per CPU, up to 8, for builds of more than 2,000 OD pairs; 1: all in this
    process), in an executor made by ``executors`` (:mod:`maptab.executors`; default: local
    processes). ``shard=(i, N)`` writes only maps ``i, i+N, …`` (phase 1 still covers every
    map, so the allocation is the global one) as a shard for
    :func:`~maptab.io.dataset.merge_shards`. The output depends on none of these.
    ``timings``, when given, receives the seconds spent in each stage.
    """
    clock = _Stopwatch(timings)
    if isinstance(preset, Preset):
        spec = preset
    elif preset in PRESETS:
        spec = PRESETS[preset]
    else:
        raise DatasetError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    style = style_name(map_style or spec.map_style, renderer)
    options = {
        "preset": asdict(spec),
        "render": renderer is not None,
        "report_totals": report_totals,
        "cost_model": cost_model,
        "map_style": style,
    }
    recipes = [MapRecipe(seed, i, spec) for i in range(map_count(spec))]
    return _write(
        out_dir,
        spec,
        seed,
        options,
        recipes=recipes,
        renderer=renderer,
        progress=progress,
        workers=workers,
        clock=clock,
        executors=executors,
        shard=shard,
    )


def style_name(name: str, renderer: MapImager | None) -> str:
    """Map style ``name`` as the renderer spells it (checked), or as given without one."""
    return renderer.style_name(name) if renderer is not None else name.strip().lower()


def write_benchmark(
    out_dir: str | Path,
    nets: list[Network],
    spec: Preset,
    seed: int,
    options: dict[str, Any],
    *,
    renderer: MapImager | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    clock: _Stopwatch | None = None,
    images: dict[str, Path] | None = None,
    source: str | None = None,
    executors: ExecutorFactory = local_executor,
) -> dict[str, Any]:
    """Classify ``nets`` (SPEC 8), allocate OD pairs (Algorithm 1), write every map's tables,
    image and queries (SPEC 9-11) into ``out_dir``; returns the manifest.

    The steps :func:`build_benchmark` runs after synthesising its maps, for builders that
    bring their own maps (:mod:`maptab.generate.owntables`). ``options`` go to the
    manifest (``options["map_style"]`` is the style recorded on each map); ``images`` maps a
    map id to an image copied instead of drawn; ``source`` is recorded on every map entry.
    ``workers`` and ``executors`` are :func:`build_benchmark`'s.
    """
    check_network_names(*nets)  # station names that route text can carry (SPEC 4, 12)
    return _write(
        out_dir,
        spec,
        seed,
        options,
        nets=nets,
        renderer=renderer,
        progress=progress,
        workers=workers,
        clock=clock,
        images=images,
        source=source,
        executors=executors,
    )


def _write(
    out_dir: str | Path,
    spec: Preset,
    seed: int,
    options: dict[str, Any],
    *,
    recipes: list[MapRecipe] | None = None,
    nets: list[Network] | None = None,
    renderer: MapImager | None,
    progress: Progress | None,
    workers: int | None,
    clock: _Stopwatch | None,
    images: dict[str, Path] | None = None,
    source: str | None = None,
    executors: ExecutorFactory,
    shard: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """Phase 1 (recipes only), the global steps, and phase 2 of :func:`build_benchmark`
    and :func:`write_benchmark` (exactly one of ``recipes`` and ``nets``)."""
    clock = clock or _Stopwatch(None)
    track = or_silent(progress)
    n = len(recipes) if recipes is not None else len(nets or ())
    shard_index, shard_count = shard or (0, 1)
    if shard is not None:
        parse_shard(f"{shard_index}/{shard_count}")  # checked
        options = {**options, "shard": {"index": shard_index, "count": shard_count, "maps": n}}
    if workers is None:
        pairs = spec.metro_pairs * (spec.metro_maps > 0) + spec.travel_pairs * (
            spec.travel_maps > 0
        )
        workers = default_workers() if pairs > 2000 else 1
    writer = DatasetWriter(Path(out_dir), seed, options=options)
    with ExitStack() as stack:
        stack.enter_context(writer)  # a failed build removes its temporary folder
        pool: Executor | None = None
        if workers > 1:
            # an error, Ctrl-C or SIGTERM (KeyboardInterrupt in maptab build) ends the
            # workers at once: a map's job can run for minutes
            pool = stack.enter_context(worker_processes(workers, executors=executors))
        window = _window(workers)
        # phase 1: what the global steps need of every map
        if recipes is not None:
            summaries: list[MapSummary | None] = [None] * n
            for i, summary in _completions(pool, summarize_recipe, ((r,) for r in recipes), window):
                summaries[i] = summary
            known = [s for s in summaries if s is not None]
        else:
            known = [summarize_map(net) for net in nets or ()]
        clock.lap("synthesis and map metrics")
        entries = classify_summaries(known, seed)
        if source is not None:
            for e in entries:
                e.source = source
        clock.lap("map difficulty and split")
        quotas = summary_quotas(known, entries, spec)
        clock.lap("allocation (Algorithm 1)")
        # phase 2: every map of this shard, written by the process that builds it
        positions = range(shard_index, n, shard_count)
        shares = pair_shares(known, quotas) if recipes is not None else None
        jobs = _jobs(entries, quotas, seed, spec, options, recipes, nets, renderer, images, shares)
        mine = (job for p, job in enumerate(jobs) if p % shard_count == shard_index)
        folder = writer.root / PARTS
        folder.mkdir()
        finished: dict[int, MapDone] = {}
        ready = 0
        rows: dict[str, list[int]] = {}
        calls = ((job, writer.root, p) for job, p in zip(mine, positions, strict=True))
        done_maps = _completions(pool, write_map_parts, calls, window)
        for k, done in track(done_maps, "maps", len(positions)):
            finished[k] = done
            while ready in finished:
                result = finished.pop(ready)
                position = positions[ready]
                writer.record_map(entries[position], result.legibility)
                for kind in QUERY_FILES:
                    writer.add_part(kind, _part(folder, position, kind), result.counts[kind])
                if shard is not None:
                    rows[entries[position].id] = [result.counts[kind] for kind in QUERY_FILES]
                ready += 1
        folder.rmdir()
        if shard is not None:
            writer.options["shard"]["rows"] = rows
        clock.lap("queries, tables" + (", images" if renderer is not None or images else ""))
        manifest = writer.finish()  # the dataset appears at out_dir only now, complete
    clock.lap("manifest and hashes")
    return manifest


def _jobs(
    entries: list[MapEntry],
    quotas: dict[str, int],
    seed: int,
    spec: Preset,
    options: dict[str, Any],
    recipes: list[MapRecipe] | None,
    nets: list[Network] | None,
    renderer: MapImager | None,
    images: dict[str, Path] | None,
    shares: dict[str, PairShares] | None = None,
) -> Iterator[MapJob]:
    """Phase 2's job of every map, in map order (made as they are submitted); generated
    maps ask their OD pairs toward ``shares`` (:func:`pair_shares`), a user's own maps
    uniformly."""
    pairs_before: dict[str, int] = defaultdict(int)
    maps_before: dict[str, int] = defaultdict(int)
    slow = _slow_maps()
    for i, entry in enumerate(entries):
        yield MapJob(
            entry,
            quotas[entry.id],
            _map_seed(seed + 1, i),
            pairs_before[entry.scenario],
            maps_before[entry.scenario],
            bool(options.get("report_totals", False)),
            options.get("cost_model", "additive"),
            spec.reasonmap_per_map,
            slow.get(entry.id, 0.0),
            recipe=recipes[i] if recipes is not None else None,
            net=nets[i] if nets is not None else None,
            style=options.get("map_style", "clean"),
            renderer=renderer,
            image=(images or {}).get(entry.id),
            shares=(shares or {}).get(entry.scenario),
        )
        pairs_before[entry.scenario] += quotas[entry.id]
        maps_before[entry.scenario] += 1


class _Stopwatch:
    """Records the seconds since the previous lap under a stage name (when asked to)."""

    def __init__(self, into: dict[str, float] | None) -> None:
        self.into = into
        self.t = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        if self.into is not None:
            self.into[stage] = self.into.get(stage, 0.0) + now - self.t
        self.t = now
