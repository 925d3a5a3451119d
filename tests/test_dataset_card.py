"""The dataset card of the Hugging Face export: YAML metadata that
huggingface_hub's card parser reads (licence, task categories, configs, features, split
sizes), features equal to the Parquet files' own, and the prose sections."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from maptab.generate.hf import export_hf
from test_release import build_small_dataset

datasets = pytest.importorskip("datasets", reason="datasets is not installed (dev extra)")
hub = pytest.importorskip("huggingface_hub", reason="huggingface_hub comes with datasets")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("card")
    return export_hf(build_small_dataset(root / "ds"), root / "hf")


def test_card_parses_with_huggingface_hub(exported: Path) -> None:
    card = hub.DatasetCard.load(exported / "README.md")
    data = card.data
    assert data.license == "mit"
    assert "visual-question-answering" in data.task_categories
    assert data.size_categories and data.pretty_name
    configs = {c["config_name"]: c for c in data.configs}
    assert set(configs) == {"rp", "qa", "reasonmap", "maps"}
    for name, config in configs.items():
        for entry in config["data_files"]:
            assert list(exported.glob(entry["path"])), (name, entry)


def test_card_features_and_splits_match_the_files(
    exported: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datasets.info import DatasetInfosDict

    monkeypatch.setenv("HF_DATASETS_CACHE", str(exported.parent / "hf-cache"))
    card = hub.DatasetCard.load(exported / "README.md")
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    assert set(infos) == {"rp", "qa", "reasonmap", "maps"}
    for name, info in infos.items():
        for split, split_info in info.splits.items():
            path = exported / name / f"{split}-00000-of-00001.parquet"
            table = pq.read_table(path)
            assert split_info.num_examples == table.num_rows, (name, split)
            assert info.features == datasets.Features.from_arrow_schema(table.schema), name
    loaded = datasets.load_dataset(
        str(exported), "reasonmap", split="train", cache_dir=str(exported.parent / "hf-cache")
    )
    assert loaded.features["image"] == datasets.Image()


def test_card_prose(exported: Path) -> None:
    text = (exported / "README.md").read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1]
    for heading in ("## How it was built", "## Cost model", "## Metrics", "## Citation"):
        assert heading in body, heading
    assert "MapTab: A Diagnostic Benchmark" in body  # both papers cited
    assert "Can MLLMs Guide Me Home?" in body
    assert body.count("@misc{") == 2
