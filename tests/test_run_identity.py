"""A run knows which dataset it answered (SPEC 16).

``run.json`` records ``dataset_digest``, the SHA-256 of the dataset's ``manifest.json``.
Resuming a run folder on a dataset rebuilt since (another digest) and scoring it against one
are refused with one line naming the run folder and the dataset, and nothing in the run
folder changes; the same dataset, rebuilt identically or not, resumes as before.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from maptab.api import run_model, score_run
from maptab.errors import MaptabError
from maptab.generate.pipeline import build_benchmark
from maptab.run.store import StoreError
from maptab.score.scorer import ScoreError

CLI = "from maptab.cli import main; main()"
TEXT_ONLY = {"model": "rebuilds", "uses_images": False}  # the datasets here have no images


def _maptab(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _build(root: Path, seed: int) -> Path:
    """``maptab build --preset mini --seed SEED --out ROOT`` (in place over an old build)."""
    build_benchmark(root, preset="mini", seed=seed, workers=1)
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _digest(dataset: Path) -> str:
    return "sha256:" + hashlib.sha256((dataset / "manifest.json").read_bytes()).hexdigest()


def _one_line_error(got: subprocess.CompletedProcess[str]) -> str:
    assert got.returncode == 1, got.stdout + got.stderr
    assert "Traceback" not in got.stderr, got.stderr
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), got.stderr
    return lines[0]


def test_resume_on_a_rebuilt_dataset_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    data, out = _build(tmp_path / "D", seed=0), tmp_path / "R"
    run = ["run", data, "--model", "oracle", "--out", out, "--no-progress"]
    got = _maptab(*run, "--limit", "5")
    assert got.returncode == 0, got.stderr
    record = json.loads((out / "run.json").read_text())
    assert record["dataset_digest"] == _digest(data)
    got = _maptab(*run, "--limit", "10")  # the same dataset resumes
    assert got.returncode == 0, got.stderr
    assert "10 samples: 5 already done, 5 answered" in got.stdout
    _build(data, seed=0)  # rebuilt identically: the same digest, still resumable
    got = _maptab(*run, "--limit", "12")
    assert got.returncode == 0, got.stderr
    assert "12 samples: 10 already done, 2 answered" in got.stdout

    before = _files(out)
    old = record["dataset_digest"]
    _build(data, seed=1)
    new = _digest(data)
    assert new != old
    line = _one_line_error(_maptab(*run))
    assert line == (
        f"error: {out} was answered on another dataset than {data} (manifest sha256 "
        f"{old[7:19]}… ≠ {new[7:19]}…); use a new --out, or delete "
        f"{out / 'predictions.jsonl'} to start over"
    )
    assert _files(out) == before  # predictions.jsonl and run.json byte for byte, nothing added

    (out / "predictions.jsonl").unlink()  # the way out the message gives
    got = _maptab(*run, "--limit", "5")
    assert got.returncode == 0, got.stderr
    assert "5 samples: 0 already done, 5 answered" in got.stdout
    assert json.loads((out / "run.json").read_text())["dataset_digest"] == new


def test_score_refuses_a_dataset_rebuilt_since_the_run(tmp_path: Path) -> None:
    data, out = _build(tmp_path / "D", seed=0), tmp_path / "R"
    got = _maptab("run", data, "--model", "oracle", "--out", out, "--limit", "5", "--no-progress")
    assert got.returncode == 0, got.stderr
    got = _maptab("score", out, "--no-progress")
    assert got.returncode == 0, got.stderr
    scored = {f: (out / f).read_bytes() for f in ("scores.jsonl", "summary.json")}
    old = _digest(data)

    _build(data, seed=1)
    new = _digest(data)
    line = _one_line_error(_maptab("score", out, "--no-progress"))
    assert f"{out} was answered on another dataset than {data.resolve()}" in line
    assert f"(manifest sha256 {old[7:19]}… ≠ {new[7:19]}…" in line
    assert "--dataset" in line
    assert scored == {f: (out / f).read_bytes() for f in scored}
    with pytest.raises(ScoreError, match="answered on another dataset"):
        score_run(out)

    # the dataset it answered, wherever it lies now: a build of the same seed is the same
    original = _build(tmp_path / "D0", seed=0)
    got = _maptab("score", out, "--dataset", original, "--no-progress")
    assert got.returncode == 0, got.stderr
    assert (out / "scores.jsonl").read_bytes() == scored["scores.jsonl"]


def test_a_run_folder_without_a_digest_resumes_as_before(tmp_path: Path) -> None:
    data, out = _build(tmp_path / "D", seed=0), tmp_path / "R"
    run_model(data, "oracle", out, limit=5)
    record = json.loads((out / "run.json").read_text())
    del record["dataset_digest"]  # as written before runs recorded it
    (out / "run.json").write_text(json.dumps(record), encoding="utf-8")

    _build(data, seed=1)
    score_run(out)  # nothing to check against: scored as before
    summary = run_model(data, "oracle", out, limit=8)
    assert (summary.skipped, summary.completed) == (5, 3)
    assert json.loads((out / "run.json").read_text())["dataset_digest"] == _digest(data)


def rebuilds_its_dataset(request):
    """A model that rebuilds the dataset it is answering with another seed when asked its
    ``at``-th sample (a rebuild under a live run), and answers each sample with its id."""
    rebuilds_its_dataset.calls += 1
    if rebuilds_its_dataset.calls == rebuilds_its_dataset.at:
        _build(rebuilds_its_dataset.dataset, seed=1)
    return request.id


@pytest.mark.parametrize(
    ("at", "why"),
    [
        (3, "content differs from the SHA-256 in manifest.json"),  # the next sample read
        (10, "changed while"),  # the last sample: the run's final check
    ],
)
def test_a_rebuild_under_a_live_run_stops_it_and_is_refused_after(
    tmp_path: Path, at: int, why: str
) -> None:
    data, out = _build(tmp_path / "D", seed=0), tmp_path / "R"
    rebuilds_its_dataset.calls, rebuilds_its_dataset.at = 0, at
    rebuilds_its_dataset.dataset = data
    with pytest.raises(MaptabError, match=re.escape(str(data))) as err:
        run_model(data, rebuilds_its_dataset, out, limit=10, **TEXT_ONLY)
    assert why in str(err.value)
    kept = (out / "predictions.jsonl").read_bytes()
    assert kept.count(b"\n") == at  # the rows answered are kept
    before = _files(out)
    rebuilds_its_dataset.calls = 100  # no more rebuilds
    with pytest.raises(StoreError, match="answered on another dataset"):
        run_model(data, rebuilds_its_dataset, out, limit=10, **TEXT_ONLY)
    assert _files(out) == before
    with pytest.raises(ScoreError, match="answered on another dataset"):
        score_run(out)
