"""lmms-eval task folder (docs/guides/evaluation-harnesses.md): ``maptab export --format
lmms-eval`` writes YAML + utils and the rows in Parquet shards, map by map; the rows equal
those built in memory from the public API, the export never holds more than one map's rows
per shard writer, the utils functions are tested directly (gold ⇒ 1, blank ⇒ 0, equal to
`maptab score`), and the YAML is loaded with lmms-eval's own task loader where lmms-eval is
installed (skipped with that reason otherwise)."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import maptab.integrations.lmms as lmms
from maptab.cli import app
from maptab.core.schema import Prediction
from maptab.generate.pipeline import Preset, build_benchmark
from maptab.integrations.common import sample_values
from maptab.integrations.lmms import (
    doc_to_target,
    doc_to_text,
    doc_to_visual,
    export_lmms,
    process_results,
    score_row,
)
from maptab.io.dataset import Dataset
from maptab.io.shards import ShardWriter
from maptab.render.images import DatasetImager
from maptab.rewards.export import rl_rows
from maptab.run.baselines import BASELINE_CLASSES
from maptab.run.requests import RequestBuilder, build_requests, iter_samples
from maptab.score.scorer import score_predictions
from maptab.tasks import all_kinds, get

SEED = 9
ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
MAIN = {"rp": "strict", "qa": "accuracy", "reasonmap": "accuracy"}
pytestmark = pytest.mark.slow  # builds a mini benchmark with images


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lmms") / "mini"
    build_benchmark(root, preset="mini", seed=SEED, report_totals=True, renderer=DatasetImager())
    return root


@pytest.fixture(scope="module")
def folder(mini: Path) -> Path:
    out = mini.parent / "lmms"
    res = runner.invoke(app, ["export", str(mini), "--format", "lmms-eval", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


def _docs(folder: Path) -> list[dict[str, Any]]:
    docs = []
    for path in sorted((folder / "data").glob("*.parquet")):
        docs += pq.read_table(path).to_pylist()
    return docs


_SHARD = re.compile(r"^(\w+)-(\w+)-(\d{5})-of-(\d{5})\.parquet$")


def _tasks(folder: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Each (kind, split)'s rows, its shards read in order; the shards must be complete and
    be the files its task's YAML names."""
    shards: dict[tuple[str, str], list[tuple[int, int, Path]]] = {}
    for path in (folder / "data").iterdir():
        m = _SHARD.match(path.name)
        assert m, path.name
        shards.setdefault((m[1], m[2]), []).append((int(m[3]), int(m[4]), path))
    out = {}
    for (kind, split), parts in shards.items():
        parts.sort()
        assert [(i, n) for i, n, _ in parts] == [(i, len(parts)) for i in range(len(parts))]
        yaml = (folder / f"maptab_{kind}.yaml").read_text(encoding="utf-8")
        named = re.search(rf"^    {split}: (.*)$", yaml, re.MULTILINE)
        assert named, (kind, split)
        assert json.loads(named[1]) == [str(p) for _, _, p in parts]
        out[(kind, split)] = [r for _, _, p in parts for r in pq.read_table(p).to_pylist()]
    return out


def _rows_in_memory(dataset: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The task rows built from the public API, all in memory: each request's RL row (text,
    reference), the map's PNG when shown, and the oracle's answer, in run order per kind and
    split."""
    texts = {r.id: r for r in rl_rows(dataset)}
    builder = RequestBuilder(dataset, images=False)
    oracle = BASELINE_CLASSES["oracle"](seed=0)
    ds = Dataset(dataset)
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for sample in iter_samples(dataset):
        rl = texts.get(sample.id)
        if rl is None:
            continue
        image = None
        if rl.shows_map:
            path = ds.image_path(sample.map_id)
            assert path is not None
            image = {"bytes": path.read_bytes(), "path": f"{sample.map_id}.png"}
        kind = get(sample.kind)
        out.setdefault((kind.name, rl.split), []).append(
            {
                "id": rl.id,
                "kind": kind.name,
                "variant": sample.variant,
                "category": rl.category,
                "map_id": rl.map_id,
                "split": rl.split,
                "text": rl.text,
                "image": image,
                "target": kind.answer(oracle, builder.request(sample)),
                "reference": rl.reference,
            }
        )
    return out


def test_rows_equal_the_rows_built_in_memory(mini: Path, tmp_path: Path) -> None:
    """Written map by map into shards of 40 rows, the rows are exactly those built in memory,
    in the same order per task and split; a second export into the folder leaves no shard
    of the first."""
    want = _rows_in_memory(mini)
    out = export_lmms(mini, tmp_path / "t", shard_rows=40)
    got = _tasks(out)
    assert list(got) and sorted(got) == sorted(want)
    for key, rows in want.items():
        assert got[key] == rows, key
    assert any(len(list((out / "data").glob(f"{k}-{s}-*"))) > 2 for k, s in got)
    export_lmms(mini, out)
    assert _tasks(out) == got
    assert all(p.name.endswith("-00000-of-00001.parquet") for p in (out / "data").iterdir())
    assert not [p for p in out.rglob(".*")]  # no temporary file left


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sixteen small maps, each with few questions."""
    root = tmp_path_factory.mktemp("lmms-many") / "many"
    preset = Preset("many", 8, 8, 16, 16, q_min=1, reasonmap_per_map=2, sizes=("small",))
    build_benchmark(root, preset=preset, seed=SEED, renderer=DatasetImager())
    return root


def test_export_holds_one_map_per_shard_writer(
    many: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows go to the shards as the samples are read: a shard writer holds the rows of one
    map until the next map's, so the samples read and not yet written never exceed one
    map's rows per task and split (plus the next sample of each kind's file, which the
    map-ordered merge holds), whatever the number of maps; every shard but a split's last
    holds the shard size, and the rows are one per request."""
    requests = list(rl_rows(many))
    per_map = Counter((r.kind, r.split, r.map_id) for r in requests)
    largest: dict[tuple[str, str], int] = {}
    for (kind, split, _), n in per_map.items():
        largest[(kind, split)] = max(largest.get((kind, split), 0), n)
    kinds = {kind for kind, _ in largest}
    bound = sum(largest.values()) + len(kinds)
    assert len({m for _, _, m in per_map}) == 16 and bound < len(requests) / 4
    read, written, pending = [0], [0], [0]
    batches: list[tuple[int, set[str]]] = []
    by_map, flush = lmms.samples_by_map, ShardWriter._flush

    def counted_by_map(ds: Dataset) -> Any:
        for sample in by_map(ds):
            read[0] += 1
            pending[0] = max(pending[0], read[0] - written[0])
            yield sample

    def counted_flush(self: Any) -> None:
        if self.batch:
            batches.append((len(self.batch), {r["map_id"] for r in self.batch}))
            written[0] += len(self.batch)
        flush(self)

    monkeypatch.setattr(lmms, "samples_by_map", counted_by_map)
    monkeypatch.setattr(ShardWriter, "_flush", counted_flush)
    out = export_lmms(many, tmp_path / "m", shard_rows=3)
    assert read[0] == written[0] == len(requests)
    assert 0 < pending[0] <= bound
    assert all(n <= 3 and len(maps) == 1 for n, maps in batches)
    rows = _tasks(out)
    assert {k: len(v) for k, v in rows.items()} == Counter((r.kind, r.split) for r in requests)
    assert sorted(r["id"] for v in rows.values() for r in v) == sorted(r.id for r in requests)
    for (kind, split), task_rows in rows.items():
        files = sorted((out / "data").glob(f"{kind}-{split}-*.parquet"))
        assert len(files) == -(-len(task_rows) // 3)
        assert [pq.ParquetFile(f).metadata.num_rows for f in files[:-1]] == [3] * (len(files) - 1)
    assert any(len(v) > 6 for v in rows.values())  # several shards somewhere


def test_failed_export_leaves_no_shard(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An export that fails midway removes the shards it wrote and the folders it made."""
    calls = [0]
    real = lmms._image

    def failing(*args: Any) -> dict[str, Any]:
        calls[0] += 1
        if calls[0] > 2:
            raise OSError("disk full")
        return real(*args)

    monkeypatch.setattr(lmms, "_image", failing)
    with pytest.raises(OSError, match="disk full"):
        export_lmms(mini, tmp_path / "f" / "out", shard_rows=5)
    assert calls[0] == 3 and list((tmp_path / "f").iterdir()) == []


def test_folder_layout(folder: Path, mini: Path) -> None:
    names = {p.name for p in folder.iterdir()}
    assert {"maptab.yaml", "utils.py", "data"} <= names
    assert {f"maptab_{k.name}.yaml" for k in all_kinds() if k.reward} <= names
    text = (folder / "maptab_rp.yaml").read_text()
    assert "process_results: !function utils.process_results" in text
    assert "- metric: strict" in text
    sent = {r.id for r in build_requests(mini, images=False)}
    docs = _docs(folder)
    assert {d["id"] for d in docs} == sent  # every request, once
    assert len(docs) == len(sent)


def test_hooks_gold_one_blank_zero(folder: Path) -> None:
    docs = _docs(folder)
    seen = set()
    for doc in docs:
        gold = process_results(doc, [doc_to_target(doc)])
        assert gold[MAIN[doc["kind"]]] == 1.0, (doc["id"], gold)
        blank = process_results(doc, [""])
        assert all(v == 0.0 for v in blank.values()), (doc["id"], blank)
        assert doc_to_text(doc).startswith(doc_to_text(doc, {"pre_prompt": ""}))
        assert doc_to_text(doc, {"post_prompt": "!"}).endswith("!")
        seen.add(doc["kind"])
    assert seen == {"rp", "qa", "reasonmap"}


def test_hooks_equal_maptab_score(mini: Path, folder: Path) -> None:
    """Random-baseline answers: the score row from the exported row equals `maptab score`'s
    row for the same answer (so every metric value does)."""
    provider = BASELINE_CLASSES["random"](seed=1)
    answers = {r.id: provider.answer(r) for r in build_requests(mini, images=False)}
    docs = _docs(folder)
    preds = [Prediction(d["id"], d["kind"], answers[d["id"]]) for d in docs]
    rows, _ = score_predictions(mini, preds)
    by_id = {r["id"]: r for r in rows}
    wrong = 0
    for doc in docs:
        mine = score_row(doc, answers[doc["id"]])
        assert mine == by_id[doc["id"]], doc["id"]
        values = process_results(doc, [answers[doc["id"]]])
        assert values == sample_values(get(doc["kind"]), by_id[doc["id"]])
        wrong += values[MAIN[doc["kind"]]] < 1.0
    assert wrong, "the random answers were all right: nothing compared"


def test_visuals(folder: Path) -> None:
    """A shown map is one RGB image (the map's PNG); a sample without the map has none.
    (A few rows per kind and image state: decoding every row's PNG takes a minute.)"""
    picked: dict[tuple[str, bool], int] = {}
    for doc in _docs(folder):
        key = (doc["kind"], doc["image"] is None)
        if picked.get(key, 0) >= 3:
            continue
        picked[key] = picked.get(key, 0) + 1
        images = doc_to_visual(doc)
        if doc["image"] is None:
            assert images == []
        else:
            assert len(images) == 1 and images[0].mode == "RGB"
    assert ("reasonmap", False) in picked and ("rp", True) in picked


_LMMS = importlib.util.find_spec("lmms_eval")


@pytest.mark.lmms
@pytest.mark.skipif(
    _LMMS is None,
    reason="lmms-eval is not installed (it pulls torch and GBs; make test-integrations)",
)
def test_lmms_eval_loads_the_folder(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lmms-eval's task loader reads every task's test split from its shards (several per
    split here) with the rows the export wrote."""
    folder = export_lmms(mini, tmp_path / "lmms", shard_rows=50)
    written = _tasks(folder)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from lmms_eval.tasks import TaskManager, get_task_dict

    manager = TaskManager(include_path=str(folder))
    assert {"maptab", "maptab_rp", "maptab_qa", "maptab_reasonmap"} <= set(manager.all_tasks)
    tasks = get_task_dict(["maptab_rp", "maptab_qa", "maptab_reasonmap"], manager)
    for name, task in tasks.items():
        docs = list(task.test_docs())
        kind = name.removeprefix("maptab_")
        assert [d["id"] for d in docs] == [r["id"] for r in written[(kind, "test")]], name
        for doc in docs[:5]:
            out = task.process_results(doc, [task.doc_to_target(doc)])
            assert out[MAIN[doc["kind"]]] == 1.0, (name, out)
            assert isinstance(task.doc_to_text(doc), str)


def test_readme_lmms_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's lmms-eval export command runs as written (from a clone, after the
    tour's `maptab build --preset mini --out out/mini`)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### lmms-eval", 1)[1].split("\n### ", 1)[0]
    commands = re.findall(r"^(maptab export .*)$", section, re.MULTILINE)
    assert commands, "no maptab export command in the README's lmms-eval section"
    monkeypatch.chdir(tmp_path)
    build_benchmark(tmp_path / "out" / "mini", preset="mini", seed=0, renderer=DatasetImager())
    for command in commands:
        res = runner.invoke(app, shlex.split(command)[1:], catch_exceptions=False)
        assert res.exit_code == 0, (command, res.output)
    # the --include_path of the lmms_eval command is the folder written
    include = re.search(r"--include_path (\S+)", section)
    assert include and (tmp_path / include.group(1) / "maptab.yaml").is_file()


def test_resolve_dataset_folder_or_preset(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness adapters' `dataset`: a folder as it is, a preset built once into
    $MAPTAB_CACHE and reused, anything else one clear error."""
    from maptab.integrations.common import resolve_dataset
    from maptab.io.dataset import DatasetError

    monkeypatch.setenv("MAPTAB_CACHE", str(tmp_path))
    assert resolve_dataset(mini) == mini
    built = resolve_dataset("mini", seed=3, images=False)
    assert built == tmp_path / "datasets" / "mini-3-text"
    stamp = (built / "manifest.json").stat().st_mtime_ns
    assert resolve_dataset("mini", seed=3, images=False) == built
    assert (built / "manifest.json").stat().st_mtime_ns == stamp  # reused, not rebuilt
    with pytest.raises(DatasetError, match="not a dataset folder .* nor a preset"):
        resolve_dataset(tmp_path / "nothing")


def test_missing_images_is_one_line_error(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    build_benchmark(bare, preset="mini", seed=SEED)  # no renderer: no map images
    res = runner.invoke(
        app, ["export", str(bare), "--format", "lmms-eval", "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 1
    assert "image.png: map image missing" in res.output
    assert "Traceback" not in res.output
