"""Tool use in the report: the "Tool use" tables recounted from the run folders' rows, the
with/without-tools table recounted on the shared samples, and the conversation pages (tool
calls, results, zoom crops embedded at the box's shape); a report of plain runs has none of
it."""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from fakeserver import FakeServer, Reply, conversation, write_dataset
from maptab.api import score_run, write_report
from maptab.report.loader import Run
from maptab.report.tools_view import CROP_SIDE, plain_partners, success_groups
from maptab.run import make_provider, run
from maptab.tasks.base import get as get_kind

TOOLS = ("zoom", "lookup", "check")
IMAGE = (800, 200)
BOX = (0.1, 0.0, 0.7, 1.0)  # 480 x 200 px of the 800 x 200 map, shown at 360 x 150
HOSTILE = "<img src=x onerror=alert(1)>"
SCRIPT = (
    Reply(
        text=None,
        tool_calls=[
            {"name": "lookup", "arguments": {"name": "alpha"}},
            {"name": "zoom", "arguments": dict(zip(("x0", "y0", "x1", "y1"), BOX, strict=True))},
        ],
    ),
    Reply(
        text=f"let me check {HOSTILE}",
        tool_calls=[{"name": "check", "arguments": {"route": "Alpha-Beta(transfer)-Eta-Delta"}}],
    ),
    Reply(text="<route_begin>Alpha-Beta(transfer)-Eta-Delta<route_end>"),
)
SUCCESS = {"rp": "strict", "qa": "correct"}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("report-tools")
    # rp-00000.. cycle map_only, edge_only, time, map_mix; qa-00000 type 1, qa-00001 type 7
    ds = write_dataset(root / "ds", n_rp=8, n_qa=2, n_reasonmap=0, image=IMAGE)
    dirs = {name: root / name for name in ("agent", "oracle", "shortest", "chat")}
    run(ds, make_provider("agent-oracle"), dirs["agent"], tools=TOOLS)
    run(ds, make_provider("oracle"), dirs["oracle"])
    run(ds, make_provider("shortest"), dirs["shortest"])
    with FakeServer(conversation(*SCRIPT)) as srv:
        provider = make_provider("openai:m", base_url=srv.base_url, max_retries=0)
        run(ds, provider, dirs["chat"], categories=["time", "map_mix"], tools=TOOLS)
    for folder in dirs.values():
        score_run(folder)
    dirs["report"] = root / "report"
    write_report([dirs[k] for k in ("agent", "oracle", "shortest", "chat")], dirs["report"])
    dirs["plain"] = root / "plain-report"
    write_report([dirs["oracle"], dirs["shortest"]], dirs["plain"])
    return dirs


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _csv(report: Path, key: str) -> list[dict[str, str]]:
    text = (report / "tables" / f"{key}.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def _correct(row: dict[str, Any]) -> bool:
    return bool(row["parsed"] and row[SUCCESS[row["kind"]]])


def _samples(folder: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(prediction row, score row) of every scored sample, counted here from the files."""
    scores = {r["id"]: r for r in _jsonl(folder / "scores.jsonl")}
    preds = _jsonl(folder / "predictions.jsonl")
    return [(p, scores[p["id"]]) for p in preds if p["id"] in scores]


def _name(folder: Path) -> str:
    return json.loads((folder / "run.json").read_text())["model"]


# ----------------------------------------------------------------------------- the tables
@pytest.mark.parametrize("which", ["agent", "chat"])
def test_tool_use_figures_are_the_counts_of_the_rows(made, which):
    folder = made[which]
    pairs = _samples(folder)
    assert pairs and all("tool_calls" in p for p, _ in pairs)
    calls = [p["tool_calls"] for p, _ in pairs]
    turns = [p["turns"] for p, _ in pairs]
    (row,) = [r for r in _csv(made["report"], "tools") if r["Model"] == _name(folder)]
    assert int(row["n"]) == len(pairs)
    assert int(row["Correct"]) == sum(_correct(s) for _, s in pairs)
    for label, values in (("Tool calls", calls), ("Turns", turns)):
        assert float(row[f"{label} mean"]) == pytest.approx(statistics.mean(values), abs=1e-4)
        assert float(row[f"{label} p50"]) == pytest.approx(statistics.median(values), abs=1e-4)
        assert int(row[f"{label} max"]) == max(values)
    tokens = [p["completion_tokens"] for p, _ in pairs]
    if any(tokens):  # the chat server reports 7 completion tokens a turn
        assert which == "chat"
        assert float(row["Completion tokens mean"]) == pytest.approx(7 * statistics.mean(turns))
    else:  # the agent reports none: its token columns stay empty
        assert row["Completion tokens mean"] == ""

    by_tool = {
        r["Tool"]: r for r in _csv(made["report"], "tools_by_tool") if r["Model"] == _name(folder)
    }
    assert list(by_tool) == list(TOOLS)
    correct = [p for p, s in pairs if _correct(s)]
    for tool, r in by_tool.items():
        used = [p["tools_used"].get(tool, 0) for p, _ in pairs]
        assert int(r["Calls"]) == sum(used)
        assert float(r["Calls/sample"]) == pytest.approx(sum(used) / len(pairs), abs=1e-4)
        share = 100 * sum(u > 0 for u in used) / len(pairs)
        assert float(r["Samples using it"]) == pytest.approx(share, abs=1e-4)
        if correct:
            share = 100 * sum(p["tools_used"].get(tool, 0) > 0 for p in correct) / len(correct)
            assert float(r["Correct answers using it"]) == pytest.approx(share, abs=1e-4)
    stops = {
        r["Stop"]: int(r["n"])
        for r in _csv(made["report"], "tools_stop")
        if r["Model"] == _name(folder)
    }
    counted: dict[str, int] = {}
    for p, _ in pairs:
        counted[p["stop"]] = counted.get(p["stop"], 0) + 1
    assert stops == counted


def test_the_chat_run_used_every_tool_and_the_agent_lookup_and_check(made):
    agent = {
        r["Tool"]: int(r["Calls"])
        for r in _csv(made["report"], "tools_by_tool")
        if r["Model"] == _name(made["agent"])
    }
    chat = {
        r["Tool"]: int(r["Calls"])
        for r in _csv(made["report"], "tools_by_tool")
        if r["Model"] == _name(made["chat"])
    }
    assert agent["lookup"] > 0 and agent["check"] > 0 and agent["zoom"] == 0
    assert chat == {"zoom": 4, "lookup": 4, "check": 4}  # 4 samples: a lookup, a zoom, a check


def test_with_and_without_tools_on_the_shared_samples(made):
    rows = _csv(made["report"], "tools_vs_plain")
    pairs = {(r["Tools run"], r["Plain run"]) for r in rows}
    names = {k: _name(made[k]) for k in ("agent", "oracle", "shortest", "chat")}
    # each tool run against each plain run of the dataset (no plain run shares a model)
    assert pairs == {
        (names[t], names[p]) for t in ("agent", "chat") for p in ("oracle", "shortest")
    }
    labels = {
        "map_only": "Map-only",
        "edge_only": "Edge_tab-only",
        "time": "Time",
        "map_mix": "Map+Mix_tab",
    }
    checked = 0
    for tool, plain in (("agent", "oracle"), ("agent", "shortest"), ("chat", "shortest")):
        mine = {s["id"]: s for _, s in _samples(made[tool])}
        theirs = {s["id"]: s for _, s in _samples(made[plain])}
        shared = sorted(set(mine) & set(theirs))
        groups: dict[tuple[str, str], list[str]] = {}
        for sid in shared:
            s = mine[sid]
            metric = "Route planning Strict" if s["kind"] == "rp" else "QA Acc"
            groups.setdefault((metric, "all"), []).append(sid)
            if s["kind"] == "rp":
                groups.setdefault((metric, f"metromap · {labels[s['category']]}"), []).append(sid)
            else:
                groups.setdefault((metric, f"metromap · Q{s['type']}"), []).append(sid)
        got = {
            (r["Metric"], r["Group"]): r
            for r in rows
            if (r["Tools run"], r["Plain run"]) == (names[tool], names[plain])
        }
        for key, ids in groups.items():
            field = SUCCESS[mine[ids[0]]["kind"]]
            with_tools = 100 * sum(bool(mine[i][field]) for i in ids) / len(ids)
            without = 100 * sum(bool(theirs[i][field]) for i in ids) / len(ids)
            r = got[key]
            assert int(r["n"]) == len(ids), key
            assert float(r["With tools"]) == pytest.approx(with_tools, abs=1e-4), key
            assert float(r["Without"]) == pytest.approx(without, abs=1e-4), key
            assert float(r["Δ (pp)"]) == pytest.approx(with_tools - without, abs=1e-4), key
            checked += 1
    assert checked >= 12
    # the chat run answered only Time and Map+Mix_tab: only those are compared
    chat_groups = {r["Group"] for r in rows if r["Tools run"] == names["chat"]}
    assert chat_groups == {"all", "metromap · Time", "metromap · Map+Mix_tab"}
    agent_oracle = {
        r["Group"]: float(r["Δ (pp)"])
        for r in rows
        if (r["Tools run"], r["Plain run"], r["Metric"])
        == (names["agent"], names["oracle"], "Route planning Strict")
    }
    assert agent_oracle["metromap · Map-only"] == -100.0  # no lookup on the map alone
    assert agent_oracle["metromap · Time"] == 0.0


def test_the_section_is_on_the_page_and_absent_without_tools(made):
    page = (made["report"] / "index.html").read_text(encoding="utf-8")
    assert '<section id="tools"><h2>Tool use</h2>' in page
    for key in ("tools", "tools_by_tool", "tools_stop", "tools_vs_plain"):
        assert f'id="t-{key}"' in page
    plain = (made["plain"] / "index.html").read_text(encoding="utf-8")
    assert 'id="tools"' not in plain and '"transcript"' not in plain
    assert not (made["plain"] / "transcripts").exists()
    assert not list((made["plain"] / "tables").glob("tools*"))


# ----------------------------------------------------------------------------- the pages
def _data(index: Path) -> dict[str, Any]:
    page = index.read_text(encoding="utf-8")
    found = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S
    )
    assert found
    return json.loads(found.group(1))


def test_each_conversation_page_shows_the_calls_results_and_the_crop(made):
    data = _data(made["report"] / "index.html")
    chat = [s for s in data["samples"] if s["run"] == _name(made["chat"])]
    assert chat and all(s.get("transcript") for s in chat)  # 4 samples, all selected
    agent_ids = {
        s["id"] for s in data["samples"] if s["run"] == _name(made["agent"]) and s.get("transcript")
    }
    assert agent_ids  # the agent's selection: per category and outcome, the first 3
    assert not [
        s for s in data["samples"] if s["run"] in (_name(made["oracle"]),) and s.get("transcript")
    ]
    for sample in chat:
        page = (made["report"] / sample["transcript"]).read_text(encoding="utf-8")
        pred = next(
            p for p in _jsonl(made["chat"] / "predictions.jsonl") if p["id"] == sample["id"]
        )
        for msg in pred["transcript"]:
            for call in msg.get("tool_calls") or []:
                assert f"→ {call['function']['name']}</span>" in page
            if msg["role"] == "tool":
                first = msg["content"].splitlines()[0]
                assert html.escape(first) in page
        assert "Assistant · turn 3" in page and "Tool result · check" in page
        assert html.escape('"route": "Alpha-Beta(transfer)-Eta-Delta"') in page  # arguments
        assert HOSTILE not in page and "let me check &lt;img src=x" in page
        table = "Edge_tab" if sample["category"] == "Time" else "Mix_tab"
        assert f"Table {table} shown" in page and "Map image shown: m1" in page
        (src,) = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
        with Image.open(io.BytesIO(base64.b64decode(src))) as crop:
            w, h = crop.size
        x0, y0, x1, y1 = BOX
        box_w, box_h = (x1 - x0) * IMAGE[0], (y1 - y0) * IMAGE[1]
        scale = min(1.0, CROP_SIDE / max(box_w, box_h))  # scaled down, never up
        assert abs(w - box_w * scale) <= 1 and abs(h - box_h * scale) <= 1
        assert w / h == pytest.approx(box_w / box_h, rel=0.02) and box_w / box_h != 4
    # the section links each page, and each link's file exists
    section = (made["report"] / "index.html").read_text(encoding="utf-8").split('id="tools"')[1]
    hrefs = re.findall(r'href="(transcripts/[^"]+)"', section.split("</section>")[0])
    assert len(hrefs) == len(set(hrefs)) == len(list((made["report"] / "transcripts").iterdir()))
    assert all((made["report"] / h).is_file() for h in hrefs)


# ----------------------------------------------------------------------------- the rules
def _run(name: str, model: str, digest: str | None, tools: bool) -> Run:
    info: dict[str, Any] = {"model": model, "dataset_digest": digest}
    if tools:
        info["tools"] = {"tools": ["lookup"], "max_turns": 8, "max_tool_calls": 16}
    return Run(Path(name), name, info, {}, [])


def test_a_tool_run_is_compared_with_its_models_plain_runs_when_there_are_any():
    tool = _run("t", "openai:a", "sha256:1", True)
    same = _run("p1", "openai:a", "sha256:1", False)
    other = _run("p2", "openai:b", "sha256:1", False)
    elsewhere = _run("p3", "openai:a", "sha256:2", False)
    assert plain_partners(tool, [tool, same, other, elsewhere]) == [same]
    assert plain_partners(tool, [tool, other, elsewhere]) == [other]
    assert plain_partners(tool, [tool, elsewhere, _run("t2", "openai:a", "sha256:1", True)]) == []


def test_groups_follow_the_success_metrics_breakdown():
    rows = [
        {"kind": "qa", "scenario": "metromap", "type": 7, "capabilities": ["Visual Perception"]},
        {
            "kind": "qa",
            "scenario": "travelmap",
            "type": 1,
            "capabilities": ["Visual Perception", "Numerical Reasoning"],
        },
    ]
    groups = success_groups(get_kind("qa"), rows)
    labels = [label for label, _ in groups]
    assert labels == [
        "all",
        "metromap",
        "metromap · Q7",
        "metromap · VP",
        "travelmap",
        "travelmap · Q1",
        "travelmap · VP",
        "travelmap · NR",
    ]
    keep = dict(groups)
    assert [keep["travelmap · NR"](r) for r in rows] == [False, True]
    assert [keep["metromap · VP"](r) for r in rows] == [True, False]


@pytest.mark.slow
@pytest.mark.browser
def test_a_listed_sample_links_its_conversation_in_chromium(made, tmp_path):
    from test_report_browser import CHROMIUM, _chromium

    if CHROMIUM is None:
        pytest.skip("chromium is not installed (scripts/system-deps.sh installs it)")
    index = (made["report"] / "index.html").resolve()
    run_name = _name(made["chat"])
    want = {s["transcript"] for s in _data(index)["samples"] if s["run"] == run_name}
    url = f"{index.as_uri()}#run={run_name}&outcome=all&expand=1"
    done = _chromium(url, tmp_path / "profile", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    links = re.findall(r'<a href="(transcripts/[^"]+)">Conversation: ', done.stdout)
    assert links and set(links) == want


def test_a_report_written_over_another_keeps_only_its_own_pages(made, tmp_path):
    out = tmp_path / "report"
    write_report([made["chat"]], out)
    assert len(list((out / "transcripts").glob("*.html"))) == 4
    (out / "transcripts" / "notes.html").write_text("mine", encoding="utf-8")  # not a page
    write_report([made["oracle"]], out)
    assert [p.name for p in (out / "transcripts").iterdir()] == ["notes.html"]
