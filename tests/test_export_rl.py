"""``maptab export --format trl|verl`` (docs/guides/train-with-rewards.md): the Parquet
shards read back with the columns the trainers read, one row per request of ``maptab run``,
and the adapters score the gold answers 1.0 from the exported references alone; references
that name the map's side file score exactly as self-contained ones."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import maptab.rewards.export as rl_export
from maptab.cli import app
from maptab.generate.pipeline import build_benchmark
from maptab.render.images import DatasetImager
from maptab.rewards import ReferenceError, decode_reference, reference
from maptab.rewards.export import export_rl, rl_rows
from maptab.rewards.trl import maptab_reward
from maptab.rewards.verl import compute_score
from maptab.run.baselines import OracleProvider, RandomProvider, ShortestProvider
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


_SHARD = re.compile(r"^(\w+)-(\d{5})-of-(\d{5})\.parquet$")


def _read(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Each split's rows, its shards read in order; the shards must be complete."""
    shards: dict[str, list[tuple[int, int, Path]]] = {}
    for p in out.glob("*.parquet"):
        m = _SHARD.match(p.name)
        assert m, p.name
        shards.setdefault(m[1], []).append((int(m[2]), int(m[3]), p))
    splits = {}
    for split, parts in shards.items():
        parts.sort()
        assert [(i, n) for i, n, _ in parts] == [(i, len(parts)) for i in range(len(parts))]
        splits[split] = [r for _, _, p in parts for r in pq.read_table(p).to_pylist()]
    return splits


def _export(mini: Path, out: Path, fmt: str, *extra: str) -> dict[str, list[dict[str, Any]]]:
    result = runner.invoke(app, ["export", str(mini), "--format", fmt, "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return _read(out)


def _clear_reward_caches() -> None:
    reference._CACHE.clear()
    reference._NETWORKS.clear()


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
    out = tmp_path / "a"
    _export(mini, out, "verl", "--no-images")
    first = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    _export(mini, out, "verl", "--no-images")
    again = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert first == again
    # inline rows name no folder: the same bytes wherever they are written
    _export(mini, tmp_path / "b", "verl", "--no-images", "--inline-maps")
    _export(mini, tmp_path / "c", "verl", "--no-images", "--inline-maps")
    for p in (tmp_path / "b").glob("*.parquet"):
        assert p.read_bytes() == (tmp_path / "c" / p.name).read_bytes()


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


@pytest.fixture(scope="module")
def answers(mini: Path) -> dict[str, list[str]]:
    """Request id -> the oracle's, the fewest-stations and a random answer."""
    providers = (OracleProvider(), ShortestProvider(), RandomProvider(seed=3))
    return {r.id: [p.answer(r) for p in providers] for r in build_requests(mini, images=False)}


def _scores(rows: list[dict[str, Any]], answers: dict[str, list[str]]) -> dict[str, list[float]]:
    return {
        r["extra_info"]["id"]: [
            compute_score(r["data_source"], a, r["reward_model"]["ground_truth"], r["extra_info"])
            for a in answers[r["extra_info"]["id"]]
        ]
        for r in rows
    }


def test_reference_rows_score_as_inline_rows(
    mini: Path, answers: dict[str, list[str]], tmp_path: Path
) -> None:
    by_ref = _export(mini, tmp_path / "ref", "verl")
    inline = _export(mini, tmp_path / "inline", "verl", "--inline-maps")
    assert by_ref.keys() == inline.keys() == {"train", "test"}
    maps = tmp_path / "ref" / "maps"
    assert not (tmp_path / "inline" / "maps").exists()
    kinds = set()
    for split in by_ref:
        assert len(by_ref[split]) == len(inline[split])
        for a, b in zip(by_ref[split], inline[split], strict=True):
            ga = a["reward_model"].pop("ground_truth")
            gb = b["reward_model"].pop("ground_truth")
            assert a == b  # the same rows, in the same order, but the reference
            ref = json.loads(ga)
            kinds.add(ref["kind"])
            if "map_ref" in ref:  # the map is named, not inlined
                assert "map" not in ref and ref["version"] == 2
                assert ref["map_ref"]["map_id"] == a["extra_info"]["map_id"]
                assert Path(ref["map_ref"]["dir"]) == maps.resolve()
                assert (maps / f"{a['extra_info']['map_id']}.json").is_file()
                assert len(ga) < len(gb)
            else:
                assert ga == gb
            a["reward_model"]["ground_truth"], b["reward_model"]["ground_truth"] = ga, gb
    assert kinds == {"rp", "qa", "reasonmap"}
    ref_rows = [r for rs in by_ref.values() for r in rs]
    inline_rows = [r for rs in inline.values() for r in rs]
    _clear_reward_caches()
    got = _scores(ref_rows, answers)
    _clear_reward_caches()
    want = _scores(inline_rows, answers)
    assert got == want
    assert all(v[0] == 1.0 for v in got.values())  # the oracle
    assert any(v[1] < 1.0 for v in got.values()) and any(v[2] < 1.0 for v in got.values())


def test_shards_hold_every_sample_once(mini: Path, tmp_path: Path) -> None:
    out = export_rl(mini, tmp_path / "s", "trl", shard_rows=50)
    splits = _read(out)
    want = {}
    for row in rl_rows(mini):
        want.setdefault(row.split, []).append(row.id)
    assert {k: sorted(v) for k, v in want.items()} == {
        k: sorted(r["id"] for r in rs) for k, rs in splits.items()
    }
    for split, rows in splits.items():
        n = len(list(out.glob(f"{split}-*.parquet")))
        assert n == -(-len(rows) // 50) > 1
        for i in range(n - 1):
            assert (
                pq.ParquetFile(out / f"{split}-{i:05d}-of-{n:05d}.parquet").metadata.num_rows == 50
            )
        # rows are grouped by map, in run order within a map
        assert [r["map_id"] for r in rows] == sorted(r["map_id"] for r in rows)
    # verl numbers the rows of a split across its shards
    verl = _read(export_rl(mini, tmp_path / "v", "verl", images=False, shard_rows=40))
    for split, rows in verl.items():
        assert [r["extra_info"]["index"] for r in rows] == list(range(len(rows)))
        assert {r["extra_info"]["split"] for r in rows} == {split}
    # a second export into the same folder leaves no shard of the first
    export_rl(mini, tmp_path / "s", "trl", shard_rows=10_000)
    assert sorted(p.name for p in out.glob("*.parquet")) == [
        "test-00000-of-00001.parquet",
        "train-00000-of-00001.parquet",
    ]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_failed_export_leaves_nothing(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "f"
    calls = {"n": 0}
    real = rl_export._verl_row

    def failing(*args: Any) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] > 120:
            raise OSError("disk full")
        return real(*args)

    monkeypatch.setattr(rl_export, "_verl_row", failing)
    with pytest.raises(OSError, match="disk full"):
        export_rl(mini, out, "verl", images=False, shard_rows=25)
    assert calls["n"] > 120 and list(out.iterdir()) == []
    # over an earlier export: that one is left as it was
    monkeypatch.setattr(rl_export, "_verl_row", real)
    export_rl(mini, out, "verl", images=False)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    calls["n"] = 0
    monkeypatch.setattr(rl_export, "_verl_row", failing)
    with pytest.raises(OSError):
        export_rl(mini, out, "verl", images=False, shard_rows=25)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before


def test_inline_maps_gives_self_contained_rows(mini: Path, tmp_path: Path) -> None:
    splits = _export(mini, tmp_path / "i", "trl", "--inline-maps")
    assert [p.name for p in (tmp_path / "i").iterdir() if p.is_dir()] == []
    refs = {r.id: r for r in rl_rows(mini)}  # the self-contained references, in run order
    for split, rows in splits.items():
        want = sorted((r for r in refs.values() if r.split == split), key=lambda r: r.map_id)
        assert [r["id"] for r in rows] == [r.id for r in want]
        assert [r["ground_truth"] for r in rows] == [r.reference for r in want]
    rp = next(json.loads(r.reference) for r in refs.values() if r.kind == "rp")
    assert rp["version"] == 1 and "map" in rp and "map_ref" not in rp


def test_old_reference_still_decodes(mini: Path, tmp_path: Path) -> None:
    old = next(r for r in rl_rows(mini, images=False) if r.kind == "rp")
    export_rl(mini, tmp_path / "r", "trl", images=False)
    new = next(
        r["ground_truth"] for rs in _read(tmp_path / "r").values() for r in rs if r["id"] == old.id
    )
    _clear_reward_caches()
    a, b = decode_reference(old.reference), decode_reference(new)
    assert a.record == b.record and a.network is b.network  # one network per map
    assert a.network is not None and a.network.to_dict() == b.network.to_dict()


def test_moved_export_with_maps_dir(
    mini: Path, answers: dict[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(reference.MAPS_DIR_ENV, raising=False)
    _export(mini, tmp_path / "here", "verl", "--no-images")
    rows = [r for rs in _read(tmp_path / "here").values() for r in rs]
    _clear_reward_caches()
    want = _scores(rows, answers)
    shutil.move(tmp_path / "here", tmp_path / "there")
    _clear_reward_caches()
    rp = next(r for r in rows if r["extra_info"]["kind"] == "rp")
    with pytest.raises(ReferenceError, match=reference.MAPS_DIR_ENV) as err:
        compute_score("maptab/rp", "", rp["reward_model"]["ground_truth"], rp["extra_info"])
    assert "\n" not in str(err.value)
    monkeypatch.setenv(reference.MAPS_DIR_ENV, str(tmp_path / "there" / "maps"))
    _clear_reward_caches()
    assert _scores(rows, answers) == want
    # a maps folder of another export is refused, not silently used
    other = tmp_path / "other" / "maps"
    other.mkdir(parents=True)
    for p in (tmp_path / "there" / "maps").glob("*.json"):
        data = json.loads(p.read_text())
        data["v"][0][2] += 1.0
        (other / p.name).write_text(json.dumps(data))
    monkeypatch.setenv(reference.MAPS_DIR_ENV, str(other))
    _clear_reward_caches()
    with pytest.raises(ReferenceError, match="does not match"):
        compute_score("maptab/rp", "", rp["reward_model"]["ground_truth"], rp["extra_info"])
