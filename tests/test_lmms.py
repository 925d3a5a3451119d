"""lmms-eval task folder (docs/guides/evaluation-harnesses.md): ``maptab export --format
lmms-eval`` writes YAML + utils; the utils functions are tested directly (gold ⇒ 1, blank
⇒ 0, equal to `maptab score`), and the YAML is loaded with lmms-eval's own task loader where
lmms-eval is installed (skipped with that reason otherwise)."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from maptab.cli import app
from maptab.core.schema import Prediction
from maptab.generate.pipeline import build_benchmark
from maptab.integrations.common import sample_values
from maptab.integrations.lmms import (
    doc_to_target,
    doc_to_text,
    doc_to_visual,
    process_results,
    score_row,
)
from maptab.render.images import DatasetImager
from maptab.run.baselines import BASELINE_CLASSES
from maptab.run.requests import build_requests
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
def test_lmms_eval_loads_the_folder(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_CACHE", str(folder.parent / "hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from lmms_eval.tasks import TaskManager, get_task_dict

    manager = TaskManager(include_path=str(folder))
    assert {"maptab", "maptab_rp", "maptab_qa", "maptab_reasonmap"} <= set(manager.all_tasks)
    tasks = get_task_dict(["maptab_rp", "maptab_qa", "maptab_reasonmap"], manager)
    for name, task in tasks.items():
        docs = list(task.test_docs())
        assert docs, name
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
