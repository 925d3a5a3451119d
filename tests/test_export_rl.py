"""``maptab export --format trl|verl`` (docs/guides/train-with-rewards.md): the Parquet
splits read back with the columns the trainers read, one row per request of ``maptab run``,
and the adapters score the gold answers 1.0 from the exported references alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from maptab.cli import app
from maptab.generate.pipeline import build_benchmark
from maptab.render.images import DatasetImager
from maptab.rewards.trl import maptab_reward
from maptab.rewards.verl import compute_score
from maptab.run.baselines import OracleProvider
from maptab.run.requests import build_requests

runner = CliRunner()
pytestmark = pytest.mark.slow  # builds a mini benchmark with images


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export_rl") / "mini"
    build_benchmark(root, preset="mini", seed=4, renderer=DatasetImager(), report_totals=True)
    return root


@pytest.fixture(scope="module")
def gold(mini: Path) -> dict[str, tuple[str, str]]:
    """Request id -> (split, oracle answer) for every request of the dataset."""
    oracle = OracleProvider()
    return {
        r.id: (r.meta["sample"]["split"], oracle.answer(r))
        for r in build_requests(mini, images=False)
    }


def _export(mini: Path, out: Path, fmt: str, *extra: str) -> dict[str, list[dict[str, Any]]]:
    result = runner.invoke(app, ["export", str(mini), "--format", fmt, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return {p.stem: pq.read_table(p).to_pylist() for p in sorted(out.glob("*.parquet"))}


def test_trl_export(mini: Path, gold: dict[str, tuple[str, str]], tmp_path: Path) -> None:
    splits = _export(mini, tmp_path / "trl", "trl")
    assert set(splits) == {"train", "test"}
    rows = [r for split, rs in splits.items() for r in rs]
    assert sorted(r["id"] for r in rows) == sorted(gold)  # one row per request
    for split, rs in splits.items():
        assert all(gold[r["id"]][0] == split for r in rs)
        assert set(rs[0]) == {
            "prompt",
            "images",
            "ground_truth",
            "id",
            "kind",
            "map_id",
            "category",
        }
    for r in rows:
        (message,) = r["prompt"]
        assert message["role"] == "user"
        kinds = [p["type"] for p in message["content"]]
        assert kinds[-1] == "text" and kinds.count("text") == 1
        assert ("image" in kinds) == bool(r["images"])
        if r["images"]:
            assert r["images"][0]["bytes"].startswith(b"\x89PNG")
    completions = [[{"role": "assistant", "content": gold[r["id"]][1]}] for r in rows]
    prompts = [r["prompt"] for r in rows]
    refs = [r["ground_truth"] for r in rows]
    assert maptab_reward(prompts, completions, ground_truth=refs) == [1.0] * len(rows)
    assert maptab_reward(prompts, [""] * len(rows), ground_truth=refs) == [0.0] * len(rows)


def test_verl_export(mini: Path, gold: dict[str, tuple[str, str]], tmp_path: Path) -> None:
    splits = _export(mini, tmp_path / "verl", "verl")
    rows = [r for rs in splits.values() for r in rs]
    assert sorted(r["id"] for r in (r["extra_info"] for r in rows)) == sorted(gold)
    for split, rs in splits.items():
        assert [r["extra_info"]["index"] for r in rs] == list(range(len(rs)))
        assert all(r["extra_info"]["split"] == split for r in rs)
    for r in rows:
        kind = r["extra_info"]["kind"]
        assert r["data_source"] == f"maptab/{kind}"
        assert r["reward_model"]["style"] == "rule"
        (message,) = r["prompt"]
        assert message["content"].startswith("<image>") == bool(r["images"])
        answer = gold[r["extra_info"]["id"]][1]
        score = compute_score(
            r["data_source"], answer, r["reward_model"]["ground_truth"], r["extra_info"]
        )
        assert score == 1.0


def test_text_only_export(mini: Path, tmp_path: Path) -> None:
    splits = _export(mini, tmp_path / "text", "trl", "--no-images", "--table-format", "json")
    rows = [r for rs in splits.values() for r in rs]
    assert rows and "images" not in rows[0]
    assert all(isinstance(r["prompt"][0]["content"], str) for r in rows)
    # samples that show nothing but the map are left out
    assert not any(r["kind"] == "reasonmap" or r["category"] == "map_only" for r in rows)
    assert any("(JSON):" in r["prompt"][0]["content"] for r in rows)


def test_export_is_deterministic(mini: Path, tmp_path: Path) -> None:
    _export(mini, tmp_path / "a", "verl", "--no-images")
    _export(mini, tmp_path / "b", "verl", "--no-images")
    for name in ("train.parquet", "test.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_missing_images_is_one_line_error(tmp_path: Path) -> None:
    root = tmp_path / "bare"
    build_benchmark(root, preset="mini", seed=4)
    result = runner.invoke(
        app, ["export", str(root), "--format", "trl", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code != 0
    assert "map image missing" in result.output and "--no-images" in result.output
    assert "Traceback" not in result.output
    bad = runner.invoke(
        app, ["export", str(root), "--format", "trl", "--table-format", "xml", "--out", "x"]
    )
    assert bad.exit_code != 0 and "csv or json" in bad.output
