"""ReasonMap questions (SPEC 14): reference routes, question difficulty, pair sampling, and the
ReasonMap-style dataset built from real topologies (``maptab build --from-reasonmap``).

**Routes.** A route from ``a`` to ``b`` is a sequence of *segments*; a segment rides one line
from a departure stop to an arrival stop along a simple path of that line's own track graph
(its edges), so on a loop line either direction is a ride and on a branched line the ride is
the path through the branch point. Consecutive segments meet at a stop; the route as a whole
visits no station twice, and no line is ridden twice. Its cost is the lexicographic pair
``(transfers, stops)``: transfers = segments − 1, stops = edges travelled.

**Reference routes**: :func:`maptab.core.planning.plan_routes` (the domain module; the
``oracle`` baseline answers with it too).

**Question difficulty** (:func:`question_difficulty`): transfers of the first reference
route: 0 easy, 1 medium, 2 or more hard.

**Pair sampling** (:func:`reasonmap_questions`): unordered station pairs whose optimal route
passes at least one intermediate station, in seeded random order, each drawn in a seeded
random direction; a pair is kept while its level's quota (20:15:5 by default) is open. When a
map has too few pairs of some level, the open slots are filled with the remaining pairs of
the other levels in the same sampled order, so each map still yields ``per_map`` questions
when it has that many pairs (documented in ``docs/guides/build-from-reasonmap.md``).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from maptab._progress import Progress, or_silent
from maptab.core.network import Network
from maptab.core.planning import PlanError, RoutePlanner
from maptab.core.route_text import check_network_names
from maptab.core.schema import ReasonMapQuestion, RMSegment
from maptab.generate import difficulty
from maptab.io.dataset import DatasetWriter, MapEntry, MapImager, draw_map_image
from maptab.io.metadata import homonym_warnings, load_reasonmap_folder, reasonmap_files

LEVELS = ("easy", "medium", "hard")
LONG_TEMPLATES = ("num_via", "via_list")
SEGMENT_SEPARATOR = "--"


def question_difficulty(routes: Sequence[Sequence[RMSegment | dict[str, Any]]]) -> str:
    """Question difficulty by the first reference route's transfers: 0 easy, 1 medium, ≥2 hard."""
    if not routes or not routes[0]:
        raise PlanError("question difficulty needs at least one non-empty reference route")
    transfers = len(routes[0]) - 1
    return LEVELS[min(transfers, 2)]


# --------------------------------------------------------------------------- questions
_SHORT = (
    "This is the rail transit map of {city}. Plan a trip from {a} to {b}.\n"
    "Give the trip as its segments in travel order, one block per segment:\n"
    "Route Name: <the line's name as printed on the map>\n"
    "Departure Stop: <the station where you board>\n"
    "Arrival Stop: <the station where you get off>\n"
    "{extra}"
    "Put a line containing only -- between two blocks. Where you change lines, that "
    "station is the arrival stop of one block and the departure stop of the next."
)
_EXTRA = {
    "num_via": (
        "Number of Via Stops: <how many stations the train passes between the departure "
        "and arrival stop, counting neither of them>\n"
    ),
    "via_list": (
        "Via Stops: <the stations passed between the departure and arrival stop, in travel "
        "order, separated by commas; write None when there are none>\n"
    ),
}


def city_name(map_id: str) -> str:
    """A readable city name from a map id: ``america/los_angeles`` -> ``Los Angeles``."""
    return map_id.rsplit("/", 1)[-1].replace("_", " ").strip().title() or "this city"


def question_texts(city: str, a: str, b: str, long_template: str) -> tuple[str, str]:
    """The short question and the long question (``num_via`` or ``via_list`` template)."""
    if long_template not in _EXTRA:
        raise ValueError(f"unknown long template {long_template!r}; expected {LONG_TEMPLATES}")
    short = _SHORT.format(city=city, a=a, b=b, extra="")
    long = _SHORT.format(city=city, a=a, b=b, extra=_EXTRA[long_template])
    return short, long


def scaled_quota(quota: Sequence[int], total: int) -> tuple[int, ...]:
    """``quota`` rescaled to sum to ``total`` (largest remainder; ties to the easier level)."""
    base = sum(quota)
    if base <= 0 or total < 0:
        raise ValueError(f"quota {tuple(quota)} and total {total} must be positive")
    exact = [q * total / base for q in quota]
    counts = [int(x) for x in exact]
    order = sorted(range(len(quota)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: total - sum(counts)]:
        counts[i] += 1
    return tuple(counts)


def sample_question_pairs(
    planner: RoutePlanner, per_map: int, quota: Sequence[int], rng: random.Random
) -> list[tuple[str, str, int]]:
    """Station pairs ``(a, b, fewest transfers)`` to the level quota (module docstring)."""
    net = planner.network
    stations = net.stations
    pairs = [(x, y) for i, x in enumerate(stations) for y in stations[i + 1 :]]
    rng.shuffle(pairs)
    want = dict(zip(LEVELS, scaled_quota(quota, per_map), strict=True))
    kept: list[tuple[str, str, int]] = []
    spare: list[tuple[str, str, int]] = []
    for x, y in pairs:
        a, b = (y, x) if rng.random() < 0.5 else (x, y)
        transfers = planner.min_transfers(a, b)
        if transfers is None or b in net.neighbours(a):
            continue
        level = LEVELS[min(transfers, 2)]
        if want[level] > 0:
            want[level] -= 1
            kept.append((a, b, transfers))
            if len(kept) == per_map:
                return kept
        elif len(spare) < per_map:
            spare.append((a, b, transfers))
    return kept + spare[: per_map - len(kept)]


def reasonmap_questions(
    network: Network,
    *,
    map_difficulty: str,
    split: str,
    rng_seed: int,
    per_map: int = 40,
    quota: Sequence[int] = (20, 15, 5),
    city_label: str | None = None,
) -> list[ReasonMapQuestion]:
    """ReasonMap questions for one map (SPEC 14).

    Samples up to ``per_map`` station pairs to the easy:medium:hard ``quota`` (rescaled when
    it does not sum to ``per_map``; shortfalls filled as the module docstring says), plans
    their reference routes with :func:`maptab.core.planning.plan_routes`, and writes a short and a long question per
    pair; long questions alternate the ``num_via`` and ``via_list`` templates. Ids are
    ``<map_id>/rm-0001``, … Deterministic for a given ``rng_seed``.
    """
    planner = RoutePlanner(network)
    rng = random.Random(rng_seed)
    city = city_label or city_name(network.map_id)
    out = []
    for n, (a, b, _) in enumerate(sample_question_pairs(planner, per_map, quota, rng), 1):
        routes = [planner.segments(r) for r in planner.routes(a, b)]
        template = LONG_TEMPLATES[(n - 1) % 2]
        la, lb = network.label(a), network.label(b)
        short, long = question_texts(city, la, lb, template)
        out.append(
            ReasonMapQuestion(
                id=f"{network.map_id}/rm-{n:04d}",
                map_id=network.map_id,
                split=split,
                station_1=la,
                station_2=lb,
                question_short=short,
                question_long=long,
                long_template=template,
                question_difficulty=question_difficulty(routes),
                map_difficulty=map_difficulty,
                routes=[[s.to_dict() for s in r] for r in routes],
            )
        )
    return out


# --------------------------------------------------------------------------- dataset
def _derived_seed(seed: int, map_id: str) -> int:
    """A per-map seed that depends only on the dataset seed and the map id."""
    digest = hashlib.sha256(f"{seed}:{map_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _language(network: Network) -> str:
    """``zh`` when station names use Han characters, else ``en`` (a script-level guess)."""
    names = (network.label(s) for s in network.vertices)
    return "zh" if any("\u4e00" <= ch <= "\u9fff" for n in names for ch in n) else "en"


def metadata_files(stations_dir: Path) -> list[tuple[str, Path]]:
    """``(map_id, path)`` of every metadata JSON under ``stations_dir``, sorted by map id."""
    return reasonmap_files(stations_dir)


def build_reasonmap_dataset(
    stations_dir: str | Path,
    out_dir: str | Path,
    *,
    images_dir: str | Path | None = None,
    branch_splits: str | Path | None = None,
    station_aliases: str | Path | None = None,
    seed: int = 0,
    per_map: int = 40,
    progress: Progress | None = None,
    renderer: MapImager | None = None,
    warn: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """A ReasonMap-style dataset on real topologies; returns the manifest (SPEC 14).

    Every metadata JSON under ``stations_dir`` becomes a map with id its relative path without
    ``.json`` (``italy/rome``), loaded with :func:`maptab.io.metadata.load_reasonmap_folder`
    (branch splits: the shipped table, extended and overridden by the ``branch_splits`` file,
    else derived from the list; station aliases: ``station_aliases/<map_id>.json``, else the
    shipped file of the map). Map difficulty and the
    train/test split come from :mod:`maptab.generate.difficulty` (GS and WASP thirds; consecutive
    triples). ``images_dir/<map_id>.png`` is copied as the map image when present; otherwise,
    with a ``renderer`` (:class:`maptab.io.dataset.MapImager`), the map is laid out and drawn.
    ``progress`` wraps the loop over maps (:mod:`maptab._progress`). Attribute columns of the tables are zero:
    ReasonMap questions use topology only.

    Homonymous stations are kept apart (:mod:`maptab.io.metadata`); ``warn`` gets one line per
    homonym and the manifest lists them under ``options.homonyms``. Branched lines without a
    split, in any of the files, are named together in one
    :class:`maptab.io.metadata.MissingBranchSplits`.
    """
    nets = load_reasonmap_folder(
        stations_dir, branch_splits=branch_splits, station_aliases=station_aliases
    )
    check_network_names(*nets)  # every name the route text can carry, or one line naming it
    for net in nets:
        for line in homonym_warnings(net):
            if warn is not None:
                warn(line)
    scores = difficulty.map_difficulty_scores(nets)
    levels = difficulty.tercile_levels(scores)
    split_of = difficulty.split_maps(scores, seed)
    writer = DatasetWriter(
        Path(out_dir),
        seed,
        {"suite": "reasonmap", "per_map": per_map, "quota": [20, 15, 5]},
    )
    writer.options["homonyms"] = {
        net.map_id: [h["name"] for h in net.meta["homonyms"]]  # type: ignore[union-attr]
        for net in nets
        if net.meta.get("homonyms")
    }
    items = or_silent(progress)(
        zip(nets, levels, split_of, scores, strict=True), "ReasonMap maps", len(nets)
    )
    for net, level, split, score in items:
        image = Path(images_dir) / f"{net.map_id}.png" if images_dir is not None else None
        entry = MapEntry(
            id=net.map_id,
            scenario="metromap",
            difficulty=level,
            split=split,
            language=_language(net),
            difficulty_score=score,
            source="reasonmap",
        )
        real = image if image and image.is_file() else None
        problems = None
        if real is None:
            real, problems = draw_map_image(writer, net, entry, renderer)
        writer.add_map(net, entry, image=real, legibility=problems)
        questions = reasonmap_questions(
            net,
            map_difficulty=level,
            split=split,
            rng_seed=_derived_seed(seed, net.map_id),
            per_map=per_map,
        )
        writer.add("reasonmap", questions)
    return writer.finish()
