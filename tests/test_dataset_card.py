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
    assert list(configs) == ["rp", "qa", "reasonmap", "maps"]
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
    cache = str(exported.parent / "hf-cache")
    maps = datasets.load_dataset(str(exported), "maps", split="train", cache_dir=cache)
    assert maps.features["image"] == datasets.Image()
    loaded = datasets.load_dataset(str(exported), "reasonmap", split="train", cache_dir=cache)
    assert "image" not in loaded.features and set(loaded["map_id"]) <= set(maps["map_id"])


def test_card_prose(exported: Path) -> None:
    text = (exported / "README.md").read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1]
    for heading in ("## How it was built", "## Cost model", "## Metrics", "## Citation"):
        assert heading in body, heading
    assert "MapTab: A Diagnostic Benchmark" in body  # both papers cited
    assert "Can MLLMs Guide Me Home?" in body
    assert body.count("@misc{") == 2


def test_card_join_snippet_runs(exported: Path) -> None:
    """The card's snippet gives a query row its map image."""
    body = (exported / "README.md").read_text(encoding="utf-8").split("\n---\n", 1)[1]
    snippet = body.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(snippet.strip().splitlines()) == 3
    cache = str(exported.parent / "hf-cache")

    def load_dataset(path: str, name: str, split: str) -> object:
        return datasets.load_dataset(str(exported), name, split=split, cache_dir=cache)

    scope: dict = {"load_dataset": load_dataset}
    exec(snippet.replace('split="test"', 'split="train"'), scope)  # the map with an image
    assert scope["image"].size == (8, 6)


LANGUAGE_MAPS = {
    # map id: (station names, language the manifest records)
    "cn/park": (["东门", "湖心亭", "古塔"], "zh"),
    "id/kota": (["Stasiun Gambir", "Monas", "Kota Tua"], "id"),
    "am/yerevan": (["Երևան", "Գյումրի", "Վանաձոր"], "en"),  # recorded wrongly: labels decide
    "us/town": (["Brookpark", "Puritas", "West Park"], "en"),
}


def test_card_languages_come_from_the_maps(tmp_path: Path) -> None:
    """English for the questions, then each map's language: its labels' script decides, the
    recorded language tells same-script languages apart (``id``), as for imports."""
    from maptab.core.network import Network
    from maptab.io.dataset import DatasetWriter, MapEntry

    writer = DatasetWriter(tmp_path / "ds", 1, {})
    for map_id, (names, language) in LANGUAGE_MAPS.items():
        net = Network.from_edges(list(zip(names, names[1:], strict=False)), map_id=map_id)
        writer.add_map(net, MapEntry(map_id, "travelmap", "easy", "test", language=language))
    writer.finish()
    out = export_hf(tmp_path / "ds", tmp_path / "hf")
    card = hub.DatasetCard.load(out / "README.md")
    assert card.data.language == ["en", "hy", "id", "zh"]


def test_card_of_english_maps_says_english(exported: Path) -> None:
    assert hub.DatasetCard.load(exported / "README.md").data.language == ["en"]


def test_card_language_codes_are_iso_639_1() -> None:
    from maptab.generate.hf import card_languages

    assert card_languages(["zh-tw", "zh", "id", "en", None]) == ["en", "id", "zh"]
    assert card_languages([]) == ["en"]
