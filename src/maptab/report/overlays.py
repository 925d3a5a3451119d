"""Gold and predicted routes drawn on their map, for the report browser (SPEC 15).

Drawing every sample would make a report of a large run slow and heavy, so only a bounded
selection gets pictures: per run and per (scenario, RP category), the first ``per_group``
samples the run got right and the first ``per_group`` it got wrong (outcome as in
:func:`maptab.report.loader.outcome`; format errors count as wrong and get the gold
picture only). Each map is rendered once (:func:`maptab.render.render_map`) and the route
drawn with :func:`maptab.render.draw_route`; the gold picture of a sample is shared by all
runs. Pictures are scaled to at most :data:`MAX_SIDE` pixels and written as PNG (zlib
level :data:`PNG_LEVEL`) under ``images/`` with hashed file names (sample ids may hold any
character), by a background thread while the next route is drawn.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict, deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from maptab._limits import open_image
from maptab._progress import Progress, or_silent
from maptab.core.network import Network
from maptab.core.schema import RPQuery
from maptab.io.dataset import DatasetError
from maptab.report.loader import QueryRecords, Run, outcome
from maptab.report.views import view_of
from maptab.tasks.base import all_kinds

__all__ = [
    "MAX_SIDE",
    "Overlays",
    "attach_map_pictures",
    "gold_route",
    "render_overlays",
    "select_samples",
]

MAX_SIDE = 1100
# zlib level of the pictures: the textured scenic maps barely compress, and level 6 spent
# 350 ms a picture where level 1 spends 80 for a file 16% larger (docs/performance.md)
PNG_LEVEL = 1
TRANSFER = "(transfer)"


@dataclass
class Overlays:
    """Relative image paths per ``(run index, sample id)``: ``{"gold": …, "pred": …}``, and
    one line per map that could not be drawn."""

    images: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def gold_route(route: str) -> tuple[list[str], list[str]]:
    """Stations and transfer stations of a gold MapTab route string ``A-B(transfer)-C``."""
    stations, transfers = [], []
    for tok in route.split("-"):
        name = tok.strip()
        if name.endswith(TRANSFER):
            name = name[: -len(TRANSFER)].strip()
            transfers.append(name)
        stations.append(name)
    return stations, transfers


def select_samples(run: Run, per_group: int) -> list[dict[str, Any]]:
    """The RP score rows of ``run`` that get pictures (module docstring), in file order."""
    taken: dict[tuple[str, str, bool], int] = defaultdict(int)
    chosen = []
    rows = [r for k in all_kinds() if view_of(k).route_overlays for r in run.rows(k.name)]
    for row in rows:
        key = (str(row["scenario"]), str(row["category"]), outcome(row) == "correct")
        if taken[key] < per_group:
            taken[key] += 1
            chosen.append(row)
    return chosen


def _scaled(img: Image.Image) -> Image.Image:
    """``img`` scaled to at most :data:`MAX_SIDE`, as RGB (an RGB image is scaled in place:
    the callers hand over pictures they no longer need, and a copy of a paper-size map is
    50 MB)."""
    if img.mode != "RGB":
        img = img.convert("RGB")
    # a box reduction by the whole factor first, then bicubic: a 4,300-pixel metro map is
    # scaled in 35 instead of 130 ms, with a mean pixel difference of 0.07 of 255 (0.0 by
    # eye); the default gap of 2.0 would leave such a map to bicubic alone
    img.thumbnail((MAX_SIDE, MAX_SIDE), reducing_gap=1.0)
    return img


def _write(img: Image.Image, path: Path) -> None:
    """Write a scaled picture as PNG."""
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, optimize=False, compress_level=PNG_LEVEL)


class _Writer:
    """Pictures written as PNG by one background thread, in the order handed over: Pillow
    lets go of the GIL while it encodes, so the next route is drawn meanwhile. At most
    :data:`_PENDING` scaled pictures (about 3.6 MB each) wait; :meth:`settle` returns the
    tag of each finished write that failed, with its error."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="maptab-png")
        self._pending: deque[tuple[Future[None], Any]] = deque()

    def submit(self, img: Image.Image, path: Path, tag: Any) -> list[tuple[Any, BaseException]]:
        """Queue ``img`` for ``path``; the failures of the writes finished before it."""
        failed = self.settle(_PENDING - 1)
        self._pending.append((self._pool.submit(_write, img, path), tag))
        return failed

    def settle(self, keep: int = 0) -> list[tuple[Any, BaseException]]:
        """Wait until at most ``keep`` writes are pending; the failures among those done."""
        failed = []
        while len(self._pending) > keep:
            future, tag = self._pending.popleft()
            exc = future.exception()
            if exc is not None:
                failed.append((tag, exc))
        return failed

    def close(self) -> None:
        self.settle()
        self._pool.shutdown()


_PENDING = 2
# what drawing or writing one map's pictures may raise (the map is then listed as a problem)
_DRAW_ERRORS = (ValueError, OSError, KeyError, RuntimeError)


def _by_map(jobs: list[tuple[int, Run, dict[str, Any]]]) -> list[int]:
    """Positions of ``jobs`` grouped by map (maps in order of first appearance, jobs in
    order within a map), so that one rendered map is held at a time."""
    first: dict[tuple[str, str], int] = {}
    keys = []
    for n, (_, run, row) in enumerate(jobs):
        ds = run.dataset
        root = str(ds.root.resolve()) if ds is not None else ""
        keys.append(first.setdefault((root, str(row["map_id"])), n))
    return sorted(range(len(jobs)), key=lambda n: (keys[n], n))


def _scale(net: Network) -> float:
    """The scale to render ``net`` at for pictures: about their final size (blending and
    resizing a 4,000-pixel map for every route is what would cost the time; a style with a
    paper-like size is drawn at its size whatever the scale). The trial placement is
    dropped on return."""
    from maptab.render import place_map

    full = place_map(net)
    return min(1.0, 1.5 * MAX_SIDE / max(full.width, full.height))


def render_overlays(
    runs: Sequence[Run],
    out_dir: Path,
    *,
    per_group: int = 3,
    progress: Progress | None = None,
    queries: QueryRecords | None = None,
    selected: Sequence[Sequence[dict[str, Any]]] | None = None,
) -> Overlays:
    """Draw the selected samples of every run into ``out_dir/images``; see module docstring.
    ``progress`` shows the count of pictures drawn (:mod:`maptab._progress`); the samples'
    dataset records come from ``queries`` (a fresh :class:`QueryRecords` by default).
    ``selected``: each run's :func:`select_samples` for ``per_group``, when the caller has
    it already.

    The pictures of one map are drawn one after the other and its rendering is dropped
    before the next map's (a paper-size map is a 4,000-pixel image, ~50 MB, and each route
    drawn on it briefly needs three more); what is returned is in selection order."""
    from maptab.render import draw_route, render_map
    from maptab.score.parse import parse_route
    from maptab.score.verified import station_index

    result = Overlays()
    if selected is None:
        selected = [select_samples(run, per_group) for run in runs]
    jobs = [
        (i, run, row)
        for i, (run, rows) in enumerate(zip(runs, selected, strict=True))
        for row in rows
    ]
    if not jobs:
        return result
    current: tuple[tuple[str, str], Any] | None = None  # (map key, its rendering)
    queries = queries if queries is not None else QueryRecords()
    drawn_kinds = [kind for kind in all_kinds() if view_of(kind).route_overlays]
    by_root: dict[str, dict[str, RPQuery]] = {}
    failed: dict[tuple[str, str], int] = {}  # map key -> the job its problem is listed at
    # job -> ((run, sample id), picture paths, map key)
    images: dict[int, tuple[tuple[int, str], dict[str, str], tuple[str, str]]] = {}
    problems: dict[int, str] = {}
    pictured = {str(row["id"]) for _, _, row in jobs}
    order = _by_map(jobs)
    writer = _Writer()
    written: set[str] = set()  # pictures handed to the writer (gold ones are shared)

    def give_up(n: int, key: tuple[str, str], exc: BaseException) -> None:
        """The map of job ``n`` cannot be drawn: no pictures for it from job ``n`` on, and
        one problem, at its first failing job (a write fails after later jobs were drawn)."""
        if not isinstance(exc, _DRAW_ERRORS):
            raise exc
        if key in failed:
            if failed[key] <= n:
                return
            del problems[failed[key]]
        failed[key] = n
        for later in [m for m in images if m >= n and images[m][2] == key]:
            del images[later]
        problems[n] = f"map {jobs[n][2]['map_id']!r}: cannot draw routes ({exc})"

    def write(img: Image.Image, rel: str, n: int, key: tuple[str, str]) -> None:
        written.add(rel)
        for (m, mkey), exc in writer.submit(_scaled(img), out_dir / rel, (n, key)):
            give_up(m, mkey, exc)

    try:
        for n in or_silent(progress)(order, "drawing routes", len(jobs)):
            i, run, row = jobs[n]
            ds = run.dataset
            if ds is None:
                continue
            root = str(ds.root.resolve())
            if root not in by_root:
                # only the pictured queries are kept (a paper-size dataset has 200,000)
                by_root[root] = queries.of(run, pictured, drawn_kinds)
            query = by_root[root].get(row["id"])
            key = (root, str(row["map_id"]))
            if query is None or key in failed:
                continue
            try:
                net: Network = ds.network(query.map_id)
                if current is None or current[0] != key:
                    current = base = None  # let the previous map go before drawing the next
                    current = (key, render_map(net, scale=_scale(net)))
                base = current[1]
                paths: dict[str, str] = {}
                gold_rel = f"images/gold-{_hash(root + '|' + query.id)}.png"
                if gold_rel not in written and not (out_dir / gold_rel).is_file():
                    stations, transfers = gold_route(query.routes[0])
                    gold = draw_route(net, base, stations, transfers=transfers, kind="gold")
                    write(gold, gold_rel, n, key)
                paths["gold"] = gold_rel
                pred = run.predictions.get(query.id)
                index = station_index(net)
                parsed = parse_route(pred.response, index.vocabulary) if pred else None
                if parsed is not None and parsed.stations:
                    pred_rel = f"images/pred-{i}-{_hash(query.id)}.png"
                    keys = [index.resolve(s) or s for s in parsed.stations]
                    marks = [keys[k] for k in sorted(parsed.transfers)]
                    drawn = draw_route(net, base, keys, transfers=marks, kind="pred")
                    write(drawn, pred_rel, n, key)
                    paths["pred"] = pred_rel
                if key not in failed:
                    images[n] = ((i, query.id), paths, key)
            except _DRAW_ERRORS as exc:
                give_up(n, key, exc)
        for (m, mkey), exc in writer.settle():
            give_up(m, mkey, exc)
    finally:
        writer.close()
    result.images = dict(images[n][:2] for n in sorted(images))
    result.problems = [problems[n] for n in sorted(problems)]
    # a map that failed after some of its pictures were written (a later write failing, a
    # later route not drawn) lists none of them: those files go too, so that every picture
    # this call leaves in out_dir is one the report shows (a gold picture shared with a
    # listed sample of another run stays)
    listed = {rel for paths in result.images.values() for rel in paths.values()}
    for rel in sorted(written - listed):
        (out_dir / rel).unlink(missing_ok=True)
    return result


def attach_map_pictures(
    runs: Sequence[Run],
    records: list[dict[str, Any]],
    out_dir: Path,
    *,
    progress: Progress | None = None,
) -> int:
    """Give every listed sample without a route picture (QA, ReasonMap, RP beyond the drawn
    selection) its map, as the model saw it: the dataset's ``image.png`` scaled to at most
    :data:`MAX_SIDE`, written once per map as ``images/map-<hash>.png`` and set as the
    record's ``img["map"]``. Returns the number of map pictures written. Each picture is
    read and scaled here and written by a background thread (:class:`_Writer`) while the
    next map is read; a picture that cannot be read or written stops the report, as
    before. ``progress`` counts the listed samples as they get their map
    (:mod:`maptab._progress`)."""
    datasets = {run.name: run.dataset for run in runs}
    made: dict[tuple[str, str], str | None] = {}
    writer = _Writer()
    try:
        for rec in or_silent(progress)(records, "listing samples", len(records)):
            img = rec.setdefault("img", {})
            ds = datasets.get(rec["run"])
            if img.get("gold") or img.get("pred") or ds is None or not rec.get("map"):
                continue
            key = (str(ds.root.resolve()), str(rec["map"]))
            if key not in made:
                src = ds.image_path(key[1]) if key[1] in ds.maps else None
                made[key] = None
                if src is not None:
                    rel = f"images/map-{_hash('|'.join(key))}.png"
                    # read whole here (a picture small enough is not scaled, which would
                    # load it): leaving the block closes its file, the thread writes it
                    with open_image(src, error=DatasetError) as picture:
                        picture.load()
                        scaled = _scaled(picture)
                    for _, exc in writer.submit(scaled, out_dir / rel, rel):
                        raise exc
                    made[key] = rel
            if made[key]:
                img["map"] = made[key]
        for _, exc in writer.settle():
            raise exc
    finally:
        writer.close()
    return sum(1 for rel in made.values() if rel)
