"""The HTML report: escaping of everything a model wrote, and the page in real headless
Chromium (the script runs, filters from the address apply, no injected script runs)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from maptab.core.schema import Prediction, ReasonMapQuestion
from maptab.report import write_report
from maptab.report.html import json_for_html, sample_records
from maptab.report.loader import Run, load_runs
from test_report_fixture import HOSTILE, make_runs

CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium")) if p and Path(p).exists()), None
)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    _, runs = make_runs(tmp)
    files = write_report(runs, tmp / "out", overlays_per_group=1)
    return tmp, runs, files


def _data(index: Path) -> dict:
    text = index.read_text(encoding="utf-8")
    block = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S
    )
    return json.loads(block.group(1))


def test_json_block_cannot_be_closed_from_inside():
    text = json_for_html({"a": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028"}


def test_hostile_text_is_only_data(report):
    tmp, runs, files = report
    html = files.index.read_text(encoding="utf-8")
    assert "<script>document" not in html
    assert "<img src=x" not in html
    assert html.count("<script") == 2  # the data block and our own script
    # the CSP admits only our script's hash: an inline handler would be blocked silently
    assert not re.search(r"<[^>]*\son[a-z]+\s*=", html.split('id="report-data"')[0])
    data = _data(files.index)
    responses = [s["response"] for s in data["samples"]]
    assert HOSTILE in responses  # kept verbatim as data, RTL characters included
    header = re.search(r'<p class="runs">(.*?)</p>', html).group(1)
    assert "chaos &lt;script&gt;document.title=&#x27;x&#x27;&lt;/script&gt;" in header
    api = [s for s in data["samples"] if s["outcome"] == "API error"]
    assert len(api) == 1 and api[0]["response"] == "HTTP 500 <b>boom</b>"


def test_samples_carry_prompts_gold_and_pictures(report):
    tmp, runs, files = report
    samples = _data(files.index)["samples"]
    assert (
        len(samples)
        == sum(len(r.read_text().splitlines()) for r in (p / "scores.jsonl" for p in runs)) + 1
    )
    oracle = next(s for s in samples if s["id"] == "metro-1/rp-0-time" and s["run"] == "oracle")
    assert oracle["prompt"].startswith("Plan a route from Alpha to Delta")
    assert oracle["gold"] == "Alpha-Beta(transfer)-Eta-Delta"
    assert oracle["outcome"] == "correct" and oracle["inputs"] == "Map, Edge_tab, Vertex_tab"
    pictured = [s for s in samples if s.get("img")]
    # one right and one wrong per run and category where the run has both; the files exist
    assert pictured and all(
        (files.index.parent / p).is_file() for s in pictured for p in s["img"].values()
    )
    per_run = {s["run"] for s in pictured}
    assert per_run == {r.name for r in load_runs(runs)}
    assert files.images == sum(len(s["img"]) for s in pictured)


def _chromium(url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", f"--user-data-dir={profile}", "--virtual-time-budget=3000",
            *extra, url,
        ],
        capture_output=True, text=True, timeout=90,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.browser
def test_page_runs_in_headless_chromium(report):
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (scripts/system-deps.sh installs it)")
    tmp, runs, files = report
    samples = _data(files.index)["samples"]
    want = sum(s["run"] == "shortest" and s["outcome"] == "wrong" for s in samples)
    assert 0 < want < len(samples)
    # a malformed escape in the address must not stop the script
    url = files.index.resolve().as_uri() + "#run=shortest&outcome=wrong&expand=1&junk=%zz"
    done = _chromium(url, tmp / "profile", "--dump-dom")
    dom = done.stdout
    assert done.returncode == 0, done.stderr[-2000:]
    count = re.search(r'<p id="count" class="count" data-matches="(\d+)">([^<]*)</p>', dom)
    assert count, "the script did not render the sample count"
    assert int(count.group(1)) == want and count.group(2).startswith(
        f"{want} of {len(samples)} samples"
    )
    assert dom.count('class="sample"') == want
    # no preset: the list opens on the samples not answered correctly, with a control to
    # show all of them; "#outcome=all" lists all
    errors = sum(s["outcome"] != "correct" for s in samples)
    assert 0 < errors < len(samples)
    for hash_, matches in (("", errors), ("#outcome=all", len(samples))):
        dom = _chromium(files.index.resolve().as_uri() + hash_, tmp / "profile", "--dump-dom")
        count = re.search(r'<p id="count" class="count" data-matches="(\d+)">', dom.stdout)
        assert count and int(count.group(1)) == matches, hash_
        button = re.search(r'<button id="showall" type="button"( hidden="")?>([^<]*)<', dom.stdout)
        assert button and button.group(2) == f"Show all {len(samples)} samples"
        assert bool(button.group(1)) == (matches == len(samples))  # hidden when all are listed
        badges = set(re.findall(r'class="badge o-([a-zA-Z-]+)"', dom.stdout))
        assert ("correct" in badges) == (matches == len(samples)), badges
    # unfiltered, the chaos run's hostile answer is shown as text and never runs
    done = _chromium(
        files.index.resolve().as_uri()
        + "#run="
        + "chaos%20%3Cscript%3Edocument.title%3D'x'%3C%2Fscript%3E&expand=1",
        tmp / "profile",
        "--dump-dom",
    )
    dom = done.stdout
    assert "pwned" not in re.search(r"<body[^>]*>", dom).group(0)
    assert "<title>maptab report</title>" in dom
    assert "&lt;script&gt;document.body.dataset.pwned='script'&lt;/script&gt;" in dom
    assert "\u202eevil-rtl\u202c مرحبا" in dom
    shot = tmp / "shot.png"
    done = _chromium(
        files.index.resolve().as_uri(),
        tmp / "profile",
        "--window-size=1280,900",
        f"--screenshot={shot}",
    )
    assert shot.is_file() and shot.stat().st_size > 10_000


class _RMDataset:
    """A stand-in dataset holding one ReasonMap question."""

    def __init__(self, question: ReasonMapQuestion, root: Path) -> None:
        self.question = question
        self.root = root  # which dataset it is (runs of one dataset share its records)

    def has(self, relative: str) -> bool:
        """Every query file is there (only the ReasonMap one holds a record)."""
        return True

    def records_of(self, kind: str, ids):
        """The one question for its kind when it is asked for, nothing for the others."""
        if kind == "reasonmap" and self.question.id in ids:
            yield self.question


def test_reasonmap_samples_show_prompt_gold_and_parsed_answer(tmp_path):
    seg = {"route_name": "Line 1", "departure_stop": "A Station", "arrival_stop": "C Station"}
    question = ReasonMapQuestion(
        id="city/rm-1",
        map_id="city",
        split="test",
        station_1="A Station",
        station_2="C Station",
        question_short="Short: from A Station to C Station?",
        question_long="Long: from A Station to C Station, with via stops?",
        long_template="via_list",
        question_difficulty="easy",
        map_difficulty="hard",
        routes=[[{**seg, "via_stops": ["B Station"], "num_via_stops": 1}]],
    )
    answer = (
        "<think>Route Name: Line 9</think>Route Name: Line 1\nDeparture Stop: A Station\n"
        "Arrival Stop: C Station\nVia Stops: B Station"
    )
    scores, preds = [], {}
    for mode in ("short", "long"):
        sid = f"{question.id}/{mode}"
        scores.append(
            {
                "id": sid,
                "kind": "reasonmap",
                "question_id": question.id,
                "mode": mode,
                "map_id": "city",
                "question_difficulty": "easy",
                "map_difficulty": "hard",
                "parsed": True,
                "correct": True,
                "correct_strict": True,
                "map_score": 15.0,
                "max_score": 20.0,
            }
        )
        preds[sid] = Prediction(id=sid, kind="reasonmap", response=answer)
    run = Run(tmp_path, "m", {}, {}, scores, preds)
    run.dataset = _RMDataset(question, tmp_path)  # type: ignore[misc]
    short, long = sample_records([run])
    assert short["prompt"] == question.question_short
    assert long["prompt"] == question.question_long
    assert short["gold"] == long["gold"]
    assert short["gold"] == (
        "Reference 1:\nLine 1: A Station → C Station (1 via stops; via B Station)"
    )
    # the parsed answer, reasoning dropped
    assert short["pred"] == "Line 1: A Station → C Station (via B Station)"
    assert long["pred"] == "Line 1: A Station → C Station (via B Station)"
    assert short["category"] == "ReasonMap short" and long["mdiff"] == "hard"


def test_large_runs_list_a_bounded_stratified_selection(tmp_path):
    """Paper-scale runs must not embed every sample: a stratified selection per run, every
    (kind, category, outcome) group represented, pictured samples always kept."""
    from maptab.report.html import shown_rows
    from maptab.report.loader import load_runs, outcome
    from test_report_fixture import make_runs

    _, run_dirs = make_runs(tmp_path)
    run = load_runs([run_dirs[2]])[0]  # the run with right, wrong and format-error answers
    rows = run.scores
    assert shown_rows(run, None) == rows
    assert shown_rows(run, len(rows)) == rows

    def group(r):
        return (r["kind"], str(r.get("category", r.get("type", r.get("mode")))), outcome(r))

    groups = {group(r) for r in rows}
    limit = len(groups) + 3
    assert limit < len(rows)
    picked = shown_rows(run, limit)
    assert len(picked) == limit
    assert {group(r) for r in picked} == groups  # every group keeps at least one sample
    assert picked == [r for r in rows if r in picked]  # file order
    assert shown_rows(run, limit) == picked  # stable
    last = rows[-1]["id"]
    assert last in {r["id"] for r in shown_rows(run, 1, keep={last})}


def test_samples_without_route_pictures_show_their_map(tmp_path):
    """QA samples (and RP samples beyond the drawn selection) show the map the model saw."""
    from PIL import Image

    from fakeserver import rehash
    from maptab.io.dataset import Dataset
    from maptab.report.loader import load_runs
    from maptab.report.overlays import Overlays, attach_map_pictures
    from test_report_fixture import make_runs

    ds_dir, run_dirs = make_runs(tmp_path)
    ds = Dataset(ds_dir)
    first = next(iter(ds.maps))
    Image.new("RGB", (3000, 1500), "white").save(ds.map_dir(first) / "image.png")
    rehash(ds_dir)  # the image was added after the build, on purpose
    runs = load_runs(run_dirs[:1])
    records = sample_records(runs, Overlays())
    out = tmp_path / "report"
    assert attach_map_pictures(runs, records, out) == 1  # one picture per map with an image
    pictured = [r for r in records if r["img"].get("map")]
    assert pictured and all(r["map"] == first for r in pictured)
    assert any(r["kind"] == "qa" for r in pictured)
    assert not [r for r in records if r["map"] != first and r["img"].get("map")]
    with Image.open(out / pictured[0]["img"]["map"]) as pic:
        assert max(pic.size) <= 1100 and pic.size[0] == 2 * pic.size[1]
    # a map smaller than the pictures' size is written as it is (read before its file closes)
    Image.new("RGB", (400, 300), "white").save(ds.map_dir(first) / "image.png")
    rehash(ds_dir)
    small = tmp_path / "small"
    records = sample_records(runs, Overlays())
    assert attach_map_pictures(runs, records, small) == 1
    with Image.open(small / next(r for r in records if r["img"].get("map"))["img"]["map"]) as pic:
        assert pic.size == (400, 300)
    # a picture the writer thread cannot write stops the report, as a failed read does
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "images").write_text("a file where the folder goes", "utf-8")
    with pytest.raises(OSError):
        attach_map_pictures(runs, sample_records(runs, Overlays()), blocked)


def _rm_row(i: int, mode: str, correct: bool) -> dict:
    return {
        "id": f"city/rm-{i}/{mode}", "kind": "reasonmap", "question_id": f"city/rm-{i}",
        "mode": mode, "map_id": "city", "question_difficulty": "easy",
        "map_difficulty": "hard", "parsed": True, "correct": correct, "correct_strict": correct,
        "map_score": 15.0, "max_score": 20.0 if mode == "short" else 40.0, "weight": 1.0,
    }  # fmt: skip


def test_page_explains_its_numbers_and_opens_on_errors(tmp_path):
    """Under the leaderboard: what ReasonMap's n counts, why a perception-free baseline
    scores 100% and why the oracle's map score is not the maximum, the capability names;
    the sample list opens on the samples not answered correctly when there are any."""
    from maptab.report.html import write_browser
    from maptab.report.views import build_tables

    rows = [_rm_row(i, mode, True) for i in range(3) for mode in ("short", "long")]
    runs = [Run(tmp_path / "random", "random", {}, {}, rows)]
    index = write_browser(runs, build_tables(runs), [], tmp_path / "all-right")
    text = index.read_text(encoding="utf-8")
    legend = re.search(r'<div class="legend">(.*?)</div>', text, re.S).group(1)
    assert "n counts answers, not questions" in legend and "short and a long form" in legend
    assert "perception-free" in legend and "scores 100%" in legend
    assert "differs per question" in legend and "20" in legend and "40" in legend
    assert "oracle" in legend
    assert _data(index)["filters"] == {}  # nothing to put first: every sample is listed

    wrong = rows[:-1] + [_rm_row(2, "long", False)]
    runs.append(Run(tmp_path / "model", "model", {}, {}, wrong))
    index = write_browser(runs, build_tables(runs), [], tmp_path / "one-wrong")
    assert _data(index)["filters"] == {"outcome": "not correct"}
    assert '<button id="showall" type="button" hidden>' in index.read_text(encoding="utf-8")


def test_tables_spell_out_capabilities_and_qa_types(report):
    tmp, runs, files = report
    tables = files.index.parent / "tables"
    metro = (tables / "qa_metromap.md").read_text(encoding="utf-8")
    # the fixture's types 1 and 2 carry Visual Perception and Numerical Reasoning
    assert "VP: Visual Perception" in metro and "NR: Numerical Reasoning" in metro
    assert "Q1: number of lines" in metro and "Q2: stations strictly between" in metro
    travel = (tables / "qa_travelmap.md").read_text(encoding="utf-8")
    assert "Q13: number of spots" in travel and "Q14: does A lie on a cycle" in travel
    rp = (tables / "rp_metromap.md").read_text(encoding="utf-8")
    assert "EMA: exact-match accuracy" in rp and "DS: difficulty score" in rp
    assert "T Time, P Price, C Comfort, R Reliability" in rp
    page = files.index.read_text(encoding="utf-8")
    assert "VP: Visual Perception" in page and "Q13: number of spots" in page
    assert _data(files.index)["filters"] == {"outcome": "not correct"}
    qa_sample = next(s for s in _data(files.index)["samples"] if s["kind"] == "qa")
    assert ["type", "Q1: number of lines"] in qa_sample["metrics"]
    assert ["capabilities", "VP (Visual Perception)"] in qa_sample["metrics"]


def test_figures_and_map_pictures_report_their_progress(tmp_path):
    """The report's other long steps take the progress hook (:mod:`maptab._progress`)."""
    from maptab.report.overlays import Overlays, attach_map_pictures
    from maptab.report.plots import write_plots

    _, run_dirs = make_runs(tmp_path)
    runs = load_runs(run_dirs)
    calls = []

    def record(items, label, total=None):
        calls.append((label, total))
        return items

    plots = write_plots(runs, tmp_path / "plots", progress=record)
    assert calls == [("drawing figures", 4)] and len(plots) == 4
    records = sample_records(runs, Overlays())
    attach_map_pictures(runs, records, tmp_path / "out", progress=record)
    assert calls[-1] == ("listing samples", len(records))
