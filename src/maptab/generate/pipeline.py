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
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor, as_completed
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from maptab._progress import Progress, or_silent
from maptab.core import qa_types
from maptab.core.network import Network
from maptab.core.route_text import check_network_names
from maptab.core.schema import QA_STYLES, RP_STYLES, QAQuery, ReasonMapQuestion, RPQuery
from maptab.core.tables import derive_mix
from maptab.executors import ExecutorFactory, default_workers, local_executor, worker_processes
from maptab.generate import allocation, attributes, difficulty, synth
from maptab.generate.from_reasonmap import reasonmap_questions
from maptab.generate.prompts import rp_prompt
from maptab.generate.queries import eligible_pairs, od_queries, sample_pairs
from maptab.io.dataset import (
    QUERY_FILES,
    TABLE_FILES,
    DatasetError,
    DatasetWriter,
    MapEntry,
    MapImager,
    draw_map_image,
    query_lines,
)


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


def synthesize_maps(preset: Preset, seed: int) -> list[Network]:
    """The preset's networks with attributes, metro maps first, ids ``metro-000``…"""
    nets: list[Network] = []
    plan = [("metromap", i) for i in range(preset.metro_maps)] + [
        ("travelmap", i) for i in range(preset.travel_maps)
    ]
    for (scenario, i), child in zip(plan, _seeds(seed, len(plan)), strict=True):
        rng = np.random.default_rng(child)
        size = preset.sizes[i % len(preset.sizes)]
        if scenario == "metromap":
            net = synth.synth_metro(synth.sample_metro_spec(rng, size), child, f"metro-{i:03d}")
        else:
            net = synth.synth_scenic(synth.sample_scenic_spec(rng, size), child, f"travel-{i:03d}")
        nets.append(attributes.synthesize_attributes(net, child))
    return nets


def classify_maps(nets: list[Network], seed: int) -> list[MapEntry]:
    """Difficulty level and split of every map, scored within its scenario (SPEC 8)."""
    entries: dict[str, MapEntry] = {}
    for scenario in ("metromap", "travelmap"):
        group = [n for n in nets if n.scenario == scenario]
        if not group:
            continue
        scores = difficulty.map_difficulty_scores(group)
        levels = difficulty.tercile_levels(scores)
        splits = difficulty.split_maps(scores, seed)
        for net, score, level, split in zip(group, scores, levels, splits, strict=True):
            entries[net.map_id] = MapEntry(
                id=net.map_id,
                scenario=scenario,
                difficulty=level,
                split=split,
                language=str(net.meta.get("language", "en")),
                difficulty_score=float(score),
            )
    return [entries[n.map_id] for n in nets]


def pair_quotas(nets: list[Network], entries: list[MapEntry], preset: Preset) -> dict[str, int]:
    """OD pairs per map, by Algorithm 1 within each scenario."""
    quotas: dict[str, int] = {}
    for scenario, total in (("metromap", preset.metro_pairs), ("travelmap", preset.travel_pairs)):
        idx = [i for i, e in enumerate(entries) if e.scenario == scenario]
        if not idx:
            continue
        counts = allocation.allocate_queries(
            [len(nets[i].vertices) for i in idx],
            total,
            alpha=preset.alpha,
            q_min=preset.q_min,
            levels=[entries[i].difficulty for i in idx],
            splits=[entries[i].split for i in idx],
            capacity=[len(eligible_pairs(nets[i])) for i in idx],
        )
        quotas.update({entries[i].id: int(c) for i, c in zip(idx, counts, strict=True)})
    return quotas


def rp_queries_for_map(
    net: Network,
    entry: MapEntry,
    quota: int,
    seed: int,
    style_offset: int = 0,
    *,
    report_totals: bool = False,
    cost_model: str = "additive",
) -> list[RPQuery]:
    """The RP queries of one map: ``quota`` OD pairs × 12 categories.

    Instruction styles cycle over the pairs of a scenario (SPEC 9): pair ``p`` of this map
    gets style ``(style_offset + p) mod 5`` in every category, where ``style_offset`` counts
    the pairs of the scenario's earlier maps.
    """
    rng = np.random.default_rng(seed)
    mix_net = net.with_attributes(vertices=derive_mix(net))
    pairs = sample_pairs(net, quota, rng)
    levels = difficulty.query_difficulty_levels(net, pairs)
    out: list[RPQuery] = []
    for p, ((s, t), level) in enumerate(zip(pairs, levels, strict=True)):
        for category, weights, gold, repetition in od_queries(
            net, mix_net, s, t, rng, cost_model=cost_model
        ):
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
    """Everything one map's queries depend on (so maps can be built in parallel).

    ``delay_s`` is a test hook (:data:`SLOW_MAPS`): seconds to wait before the map's
    queries are computed, to show how a slow map affects the build."""

    net: Network
    entry: MapEntry
    quota: int
    seed: int
    pair_offset: int
    map_offset: int
    report_totals: bool
    cost_model: str
    reasonmap_per_map: int
    delay_s: float = 0.0


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


def map_queries(job: MapJob) -> tuple[list[RPQuery], list[QAQuery], list[ReasonMapQuestion]]:
    """The RP, QA and (metro maps of presets that ask for them) ReasonMap queries of one map."""
    if job.delay_s > 0:
        time.sleep(job.delay_s)
    net, entry = job.net, job.entry
    rp = rp_queries_for_map(
        net,
        entry,
        job.quota,
        job.seed,
        job.pair_offset,
        report_totals=job.report_totals,
        cost_model=job.cost_model,
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
"""The folder of the dataset being written where worker processes leave each map's query
rows (``<position>.<kind>.jsonl``) until the rows of every earlier map are in the files."""


def _part(folder: Path, position: int, kind: str) -> Path:
    return folder / f"{position:06d}.{kind}.jsonl"


def write_map_parts(job: MapJob, folder: Path, position: int) -> dict[str, int]:
    """Compute one map's queries and write them as JSONL parts in ``folder`` (in a worker
    process); the rows per kind. The parent only concatenates the parts in map order, so it
    never holds a finished map's rows, whatever order the maps finish in."""
    rows = dict(zip(QUERY_FILES, map_queries(job), strict=True))
    for kind, records in rows.items():
        with _part(folder, position, kind).open("w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(query_lines(records))
    return {kind: len(records) for kind, records in rows.items()}


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
) -> dict[str, Any]:
    """Build a MapTab-style benchmark into ``out_dir``; returns the manifest.

    The build is atomic (:class:`~maptab.io.dataset.DatasetWriter`): an interrupted or failed
    build leaves the previous dataset at ``out_dir`` untouched.

    ``renderer`` draws every map's image (pass :class:`maptab.render.images.DatasetImager`;
    ``None``: no images). ``map_style`` (default: the preset's) is the render style of every
    map image (:mod:`maptab.render.style`; checked by ``renderer``, taken as given without
    one); it is recorded in each map's ``meta["render_style"]``. ``progress`` wraps the loop
    over maps (:mod:`maptab._progress`).

    ``workers`` processes compute the maps' queries in parallel (default: one per CPU, up to
    8, for builds of more than 2,000 OD pairs; 1 otherwise), in an executor made by
    ``executors`` (:mod:`maptab.executors`; default: local processes). The output does not
    depend on either. ``timings``, when given, receives the seconds spent in each stage.
    """
    clock = _Stopwatch(timings)
    if isinstance(preset, Preset):
        spec = preset
    elif preset in PRESETS:
        spec = PRESETS[preset]
    else:
        raise DatasetError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    style = style_name(map_style or spec.map_style, renderer)
    nets = synthesize_maps(spec, seed)
    clock.lap("synthesize maps")
    options = {
        "preset": asdict(spec),
        "render": renderer is not None,
        "report_totals": report_totals,
        "cost_model": cost_model,
        "map_style": style,
    }
    return write_benchmark(
        out_dir,
        nets,
        spec,
        seed,
        options,
        renderer=renderer,
        progress=progress,
        workers=workers,
        clock=clock,
        executors=executors,
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

    The steps :func:`build_benchmark` runs after synthesising its maps, shared with builders
    that bring their own maps (:mod:`maptab.generate.owntables`). ``options`` go to the
    manifest (``options["map_style"]`` is the style recorded on each map); ``images`` maps a
    map id to an image copied instead of drawn; ``source`` is recorded on every map entry.
    ``workers`` and ``executors`` are :func:`build_benchmark`'s.
    """
    check_network_names(*nets)  # station names that route text can carry (SPEC 4, 12)
    clock = clock or _Stopwatch(None)
    track = or_silent(progress)
    style = options.get("map_style", "clean")
    cost_model = options.get("cost_model", "additive")
    report_totals = bool(options.get("report_totals", False))
    render = renderer is not None
    entries = classify_maps(nets, seed)
    if source is not None:
        for e in entries:
            e.source = source
    clock.lap("map difficulty and split")
    quotas = pair_quotas(nets, entries, spec)
    clock.lap("allocation (Algorithm 1)")
    writer = DatasetWriter(Path(out_dir), seed, options=options)
    jobs = []
    pairs_before: dict[str, int] = defaultdict(int)
    maps_before: dict[str, int] = defaultdict(int)
    slow = _slow_maps()
    for net, entry, child in zip(nets, entries, _seeds(seed + 1, len(nets)), strict=True):
        jobs.append(
            MapJob(
                net,
                entry,
                quotas[entry.id],
                child,
                pairs_before[net.scenario],
                maps_before[net.scenario],
                report_totals,
                cost_model,
                spec.reasonmap_per_map,
                slow.get(entry.id, 0.0),
            )
        )
        pairs_before[net.scenario] += quotas[entry.id]
        maps_before[net.scenario] += 1
    if workers is None:
        workers = default_workers() if sum(quotas.values()) > 2000 else 1

    def write_map(job: MapJob) -> None:
        if style != "clean":
            job.net.meta["render_style"] = style
        image, problems = (images or {}).get(job.entry.id), None
        if image is None:
            image, problems = draw_map_image(writer, job.net, job.entry, renderer)
        writer.add_map(job.net, job.entry, image=image, legibility=problems)

    with ExitStack() as stack:
        stack.enter_context(writer)  # a failed build removes its temporary folder
        if workers > 1:
            # an error, Ctrl-C or SIGTERM (KeyboardInterrupt in maptab build) ends the
            # workers at once: a map's job can run for minutes
            pool = stack.enter_context(worker_processes(workers, executors=executors))
            for job in _parallel_maps(pool, jobs, writer, track):
                write_map(job)
        else:
            for job in track(jobs, "maps", len(jobs)):
                rp, qa_rows, rm = map_queries(job)
                write_map(job)
                writer.add("rp", rp)
                writer.add("qa", qa_rows)
                writer.add("reasonmap", rm)
        clock.lap("queries, tables" + (", images" if render or images else ""))
        manifest = writer.finish()  # the dataset appears at out_dir only now, complete
    clock.lap("manifest and hashes")
    return manifest


def _parallel_maps(
    pool: Executor, jobs: list[MapJob], writer: DatasetWriter, track: Progress
) -> Iterator[MapJob]:
    """Run ``jobs`` in ``pool``, each worker writing its map's rows as parts
    (:func:`write_map_parts`); append the parts to the dataset's files in map order as soon
    as every earlier map is done, and yield each job then (the caller writes its tables and
    image). The maps' order, not the order they finish in, decides the output; the parent
    holds no query rows, so a slow map delays the files but does not grow memory."""
    folder = writer.root / PARTS
    folder.mkdir()
    futures = {pool.submit(write_map_parts, job, folder, i): i for i, job in enumerate(jobs)}
    finished: dict[int, dict[str, int]] = {}
    ready = 0
    for future in track(as_completed(futures), "maps", len(jobs)):
        finished[futures.pop(future)] = future.result()
        while ready in finished:
            counts = finished.pop(ready)
            yield jobs[ready]
            for kind in QUERY_FILES:
                writer.add_part(kind, _part(folder, ready, kind), counts[kind])
            ready += 1
    folder.rmdir()


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
