"""The public API (``docs/reference/api.md``): lazy names, thin fronts, and the one progress hook."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import maptab
from fakeserver import write_dataset
from maptab._progress import Ticker, no_progress, start

ROOT = Path(__file__).resolve().parents[1]


class Recorder:
    """A :class:`maptab._progress.Progress` that records what it is asked to show, and how
    many items were consumed past (the count a bar shows)."""

    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def __call__(self, items, label, total=None, *, done=0, status=None):
        call: dict[str, object] = {"label": label, "total": total, "done": done, "shown": 0}
        call["status"] = status
        self.calls.append(call)
        for item in items:
            yield item
            call["shown"] = int(call["shown"]) + 1  # type: ignore[call-overload]
        call["finished"] = True


def test_import_maptab_loads_no_stage() -> None:
    code = "import sys, maptab; print(sorted(m for m in sys.modules if m.startswith(('maptab', 'numpy'))))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['maptab', 'maptab._version']"


def test_every_public_name_resolves_and_nothing_else_does() -> None:
    for name in maptab.__all__:
        assert getattr(maptab, name) is not None, name
        assert name in dir(maptab)
    assert maptab.Network is __import__("maptab.core.network").core.network.Network
    assert maptab.run_model.__module__ == "maptab.api"
    with pytest.raises(AttributeError, match="no attribute 'build_benchmark'"):
        maptab.build_benchmark  # noqa: B018 - internal names are not public


@pytest.fixture()
def ds(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "ds", n_rp=6, n_qa=2, n_reasonmap=1)


def test_run_model_takes_a_spec_a_function_or_a_provider(ds: Path, tmp_path: Path) -> None:
    oracle = maptab.run_model(maptab.load(ds), "oracle", tmp_path / "o")
    assert (oracle.total, oracle.completed, oracle.errors) == (10, 10, 0)
    assert json.loads((tmp_path / "o" / "run.json").read_text())["model"] == "oracle"
    summary = maptab.score_run(oracle)
    assert summary["rp"]["overall"]["ema"]["mean"] == 1.0
    assert summary["counts"]["scored"] == {"rp": 6, "qa": 2, "reasonmap": 2}

    seen = []

    def fn(request):
        seen.append(request.id)
        return "<answer_begin>1<answer_end>"

    mine = maptab.run_model(ds, fn, tmp_path / "f", model="mine", categories=["qa"])
    assert mine.total == 2 and len(seen) == 2
    rows = [json.loads(x) for x in (tmp_path / "f" / "predictions.jsonl").read_text().splitlines()]
    assert {r["model"] for r in rows} == {"mine"}
    provider = maptab.make_provider(fn, model="again")
    assert maptab.run_model(ds, provider, tmp_path / "p", limit=3).total == 3


def test_run_progress_gets_done_and_status_and_counts_answers(ds: Path, tmp_path: Path) -> None:
    bar = Recorder()
    maptab.run_model(ds, "blank", tmp_path / "r", limit=4, progress=bar)
    maptab.run_model(ds, "blank", tmp_path / "r", progress=bar)  # resumes: 4 done before
    first, second = bar.calls
    assert (first["label"], first["total"], first["done"]) == ("run", 4, 0)
    assert first["shown"] == 4 and first.get("finished")
    assert (second["total"], second["done"], second["shown"]) == (10, 4, 6)
    status = second["status"]
    assert callable(status) and re.fullmatch(r"[0-9.]+ req/s, 0 errors", status())


def test_async_workers_count_finished_answers(ds: Path, tmp_path: Path) -> None:
    bar = Recorder()

    async def fn(request):
        return ""

    maptab.run_model(ds, fn, tmp_path / "a", concurrency=4, progress=bar)
    (call,) = bar.calls
    assert call["shown"] == 10 and call.get("finished")


def test_plain_three_argument_progress_still_works(ds: Path, tmp_path: Path) -> None:
    labels = []

    def plain(items, label, total=None):
        labels.append((label, total))
        return items

    maptab.run_model(ds, "blank", tmp_path / "r", progress=plain)
    assert labels == [("run", 10)]


@pytest.mark.slow
def test_report_overlays_take_the_progress_hook(ds: Path, tmp_path: Path) -> None:
    run = maptab.run_model(ds, "oracle", tmp_path / "o")
    maptab.score_run(run)
    bar = Recorder()
    files = maptab.write_report([run], tmp_path / "report", overlays_per_group=1, progress=bar)
    (call,) = [c for c in bar.calls if c["label"] == "drawing routes"]
    assert call["shown"] == call["total"] > 0
    assert all(c["shown"] == c["total"] for c in bar.calls)  # every step shown to its end
    assert files.images > 0 and files.index.is_file()


@given(total=st.integers(0, 40), data=st.data())
def test_ticker_shows_exactly_the_ticks(total: int, data: st.DataObject) -> None:
    done = data.draw(st.integers(0, total))
    ticks = data.draw(st.integers(0, total - done))
    bar = Recorder()
    with Ticker(bar, "work", total, done=done) as ticker:
        for _ in range(ticks):
            ticker.tick()
    (call,) = bar.calls
    assert (call["total"], call["done"], call["shown"]) == (total, done, ticks)
    assert call.get("finished") or ticks < total - done  # closed early: the bar stops anyway


def test_start_passes_keywords_only_to_callables_that_take_them() -> None:
    got = []

    def plain(items, label, total=None):
        got.append((label, total))
        return items

    assert list(start(plain, [1, 2], "x", 2, done=1, status=lambda: "s")) == [1, 2]
    assert got == [("x", 2)]
    assert list(start(None, [3], "y")) == [3]
    assert no_progress([4], "z", 1, done=0, status=None) == [4]


def test_cli_track_yields_items_unchanged_with_done_and_status() -> None:
    from maptab.cli.progress import track

    items = list(range(7))
    assert list(track(items, "t", 10, done=3, status=lambda: "ok")) == items
    assert list(track(iter(items), "t")) == items


def test_solve_routes_on_tables_read_through_the_api(ds: Path) -> None:
    data = maptab.load(ds)
    record = next(s.record for s in data.samples(categories=["time"]))
    net = maptab.read_network(data.table_path("m1", "edges"), data.table_path("m1", "vertices"))
    solution = maptab.solve_routes(
        net, record.source, record.target, maptab.Weights(*record.weights)
    )
    assert solution.routes[0].format() in record.routes


def readme_python() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    return block


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_readme_python_example_runs(tmp_path: Path) -> None:
    block = readme_python()
    assert len(block.strip().splitlines()) <= 8
    res = subprocess.run(
        [sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "1.0"
    assert (tmp_path / "report" / "index.html").is_file()
