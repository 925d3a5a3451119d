"""Tool-use mode: the tools on a hand-made sample, the conversation loop over loopback HTTP,
budgets, resume, and the ``agent-oracle`` baseline on a mini build."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from fakeserver import FakeServer, Reply, conversation, write_dataset
from maptab.cli import app
from maptab.core.costs import Weights, route_cost, route_totals
from maptab.core.tables import derive_mix
from maptab.generate.pipeline import build_benchmark
from maptab.run import make_provider, run
from maptab.run.provider import Completion, ProviderConfigError, ToolCall
from maptab.run.requests import ImageSpec, RequestBuilder
from maptab.run.store import StoreError
from maptab.run.tools import SCHEMAS, Conversation, Toolbox, ToolBudget, parse_tools
from maptab.score.verified import station_index

TABLE_CATEGORIES = [
    "edge_only",
    "map_edge",
    "time",
    "price",
    "comfort",
    "reliability",
    "time_price_reliability",
    "time_comfort_reliability",
    "price_comfort_reliability",
    "all_criteria",
    "map_mix",
]


@pytest.fixture()
def ds(tmp_path: Path) -> Path:
    # rp-00000 map_only, rp-00001 edge_only, rp-00002 time, rp-00003 map_mix
    return write_dataset(tmp_path / "ds", n_rp=4, n_qa=0, n_reasonmap=0, image=(800, 200))


def _requests(ds: Path, spec: ImageSpec | None = None) -> tuple[Toolbox, dict]:
    builder = RequestBuilder(ds, image=spec)
    box = Toolbox(builder, ("zoom", "lookup", "check"), spec)
    reqs = {s.id: builder.request(s) for s in builder.dataset.samples()}
    return box, reqs


def _rows(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]


# ----------------------------------------------------------------------------- the tools
def test_schemas_are_openai_functions_and_names_parse():
    for name, schema in SCHEMAS.items():
        assert schema["type"] == "function"
        assert schema["function"]["name"] == name
        params = schema["function"]["parameters"]
        assert params["type"] == "object" and set(params["required"]) == set(params["properties"])
    assert parse_tools("check, zoom") == ("zoom", "check")
    assert parse_tools("all") == ("zoom", "lookup", "check")
    with pytest.raises(Exception, match="unknown tool 'grep'"):
        parse_tools("zoom,grep")


def test_tools_are_offered_where_they_apply(ds):
    box, reqs = _requests(ds)
    assert box.offered(reqs["rp-00000"]) == ("zoom", "check")  # map only: no lookup
    assert box.offered(reqs["rp-00001"]) == ("lookup", "check")  # tables only: no zoom
    assert box.offered(reqs["rp-00002"]) == ("zoom", "lookup", "check")
    out = box.call(reqs["rp-00000"], "lookup", '{"name": "Alpha"}')
    assert out.text == "error: tool 'lookup' is not offered for this question"


def test_zoom_is_a_crop_of_the_original_within_the_budget(ds):
    spec = ImageSpec(max_pixels=5000, max_side=100)
    box, reqs = _requests(ds, spec)
    r = box.call(reqs["rp-00002"], "zoom", {"x0": 0, "y0": 0, "x1": 0.5, "y1": 1})
    assert r.image and r.image.startswith("data:image/png;base64,")
    assert r.ref == "maptab:zoom/m1/0,0,0.5,1"
    im = Image.open(io.BytesIO(base64.b64decode(r.image.split(",", 1)[1])))
    # a 400 x 200 crop (2:1) of the 800 x 200 original, scaled into 5,000 px and 100 px a side
    assert im.size == spec.target(400, 200)
    assert im.size[0] * im.size[1] <= 5000 and max(im.size) <= 100
    assert abs(im.size[0] / im.size[1] - 2.0) < 0.05
    assert "400x200 px of the map" in r.text
    small = box.call(reqs["rp-00002"], "zoom", {"x0": 0.1, "y0": 0.1, "x1": 0.11, "y1": 0.12})
    im = Image.open(io.BytesIO(base64.b64decode(small.image.split(",", 1)[1])))
    assert im.size == (8, 4)  # a small crop is not scaled up


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"x0": 0.5, "y0": 0, "x1": 0.2, "y1": 1}, "zoom needs x0 < x1 and y0 < y1"),
        ({"x0": -1, "y0": 0, "x1": 0.2, "y1": 1}, "zoom coordinates must be numbers in [0, 1]"),
        ({"x0": 0, "y0": 0, "x1": 1}, "missing argument 'y1'"),
        ({"x0": "a", "y0": 0, "x1": 1, "y1": 1}, "argument 'x0' must be a number"),
        ("{not json", "arguments are not valid JSON"),
    ],
)
def test_bad_zoom_arguments_are_one_line_results(ds, args, error):
    box, reqs = _requests(ds)
    r = box.call(reqs["rp-00002"], "zoom", args)
    assert r.text.startswith(f"error: {error}") and "\n" not in r.text and r.image is None


def test_lookup_matches_names_as_the_metrics_do(ds):
    box, reqs = _requests(ds)
    req = reqs["rp-00002"]  # map + Edge_tab + Vertex_tab
    text = box.call(req, "lookup", {"name": "  beta "}).text
    lines = text.splitlines()
    assert lines[0] == "Station: Beta" and lines[1] == "Matched:   beta "
    assert (
        "Vertex_tab (CSV):" in lines and "Edge_tab (CSV):" in lines and "Map_edges (CSV):" in lines
    )
    assert "Beta,Red;Blue,1.0,0.0,0.5,0.8,5.0" in lines
    assert sum(1 for x in lines if x.startswith(("Alpha-Beta,", "Beta-Gamma,"))) == 4  # 2 tables
    fuzzy = box.call(req, "lookup", {"name": "Gamna"}).text
    assert fuzzy.splitlines()[:2] == ["Station: Gamma", "Matched: Gamna"]
    unknown = box.call(req, "lookup", {"name": "Qqqqqqqqqq"}).text
    assert unknown == "error: no station matches 'Qqqqqqqqqq'"
    # the strict rule is the score's StationIndex
    net = box.maps.network("m1")
    names, index = box.maps.names("m1"), station_index(net)
    for probe in [*net.vertices, "ALPHA", "béta", " Eta ", "Thet a", "nope"]:
        assert names.exact(probe) == index.resolve(probe)


def test_lookup_shows_only_the_columns_and_rows_shown(ds):
    box, reqs = _requests(ds)
    edge_only = box.call(reqs["rp-00001"], "lookup", {"name": "Beta"}).text
    lines = edge_only.splitlines()
    assert lines[:3] == ["Station: Beta", "Edge_tab (CSV):", "Edge"]
    assert sorted(lines[3:]) == ["Alpha-Beta", "Beta-Eta", "Beta-Gamma", "Zeta-Beta"]
    assert "Vertex_tab" not in edge_only and "Map_edges" not in edge_only
    assert all("," not in x for x in edge_only.splitlines()[2:])  # the Edge column only
    mix = box.call(reqs["rp-00003"], "lookup", {"name": "Beta"}).text
    assert "Mix_tab (CSV):" in mix and "Edge_tab" not in mix and "Map_edges (CSV):" in mix


def test_check_says_valid_and_totals_never_optimal(ds):
    box, reqs = _requests(ds)
    req = reqs["rp-00002"]  # time, weights 1,0,0,0: the transfer route is optimal
    net = box.maps.network("m1")
    w = Weights(1.0, 0.0, 0.0, 0.0)
    for route, marks in (
        ("Alpha-Beta(transfer)-Eta-Delta", True),
        ("Alpha-Beta-Gamma-Delta", True),
        ("Alpha-Beta-Eta-Delta", False),
    ):
        text = box.call(req, "check", {"route": route}).text
        stations = route.replace("(transfer)", "").split("-")
        j = route_cost(net, stations, w)
        totals = route_totals(net, stations, weights=w).as_label()
        assert text.startswith("valid: 4 stations, 3 hops")
        assert f"J = {j:.6f}" in text
        assert f"Total_Time: {totals['Total_Time']}" in text
        assert ("marks fit the route" in text) is marks
        assert "optimal" not in text and "\n" not in text
    mix_req = reqs["rp-00003"]
    text = box.call(mix_req, "check", {"route": "Alpha-Beta-Gamma-Delta"}).text
    mix = net.with_attributes(vertices=derive_mix(net))
    j = route_cost(mix, ["Alpha", "Beta", "Gamma", "Delta"], Weights(*[0.25] * 4), items="vertex")
    assert f"J = {j:.6f}" in text


@pytest.mark.parametrize(
    ("route", "says"),
    [
        ("Alpha-Gamma-Delta", "invalid: Alpha and Gamma are not adjacent"),
        ("Alpha-Nowhere-Delta", "invalid: not stations of the map: Nowhere"),
        ("Beta-Gamma-Delta", "invalid: it must start at Alpha and end at Delta"),
        ("Alpha-Beta-Alpha-Beta-Gamma-Delta", "invalid: it visits a station twice"),
        ("", "error: missing argument"),
        ("just words", "invalid: no route could be read from the text"),
    ],
)
def test_check_names_what_is_wrong_in_one_line(ds, route, says):
    box, reqs = _requests(ds)
    args = {"route": route} if route else {}
    text = box.call(reqs["rp-00002"], "check", args).text
    assert text.startswith(says) and "\n" not in text


def test_unknown_tools_and_arguments_are_results_not_exceptions(ds):
    box, reqs = _requests(ds)
    req = reqs["rp-00002"]
    assert box.call(req, "grep", "{}").text == "error: unknown tool 'grep'"
    assert box.call(req, "lookup", '{"name": "Beta", "x": 1}').text == (
        "error: unknown argument 'x'"
    )
    assert box.call(req, "lookup", "[1]").text == "error: arguments must be a JSON object"


# ----------------------------------------------------------------------------- the loop
def test_conversation_budgets_in_process(ds):
    box, reqs = _requests(ds)

    def always_calls(request):
        return Completion(
            f"thinking {len(request.messages)}",
            tool_calls=[ToolCall("c1", "lookup", '{"name": "Beta"}')] * 3,
        )

    conv = Conversation(reqs["rp-00002"], box, ToolBudget(max_turns=8, max_tool_calls=4))
    while (r := conv.next_request()) is not None:
        conv.receive(always_calls(r))
    assert (conv.stop, conv.tool_calls, conv.turns) == ("max_tool_calls", 4, 3)
    spent = [m for m in conv.messages if m.get("role") == "tool"]
    assert [m["content"].startswith("error: tool-call budget spent") for m in spent] == [
        False,
        False,
        False,
        False,
        True,
        True,
    ]
    assert conv.completion().text == "thinking 9"  # the last text is the answer
    conv = Conversation(reqs["rp-00002"], box, ToolBudget(max_turns=2, max_tool_calls=100))
    while (r := conv.next_request()) is not None:
        conv.receive(always_calls(r))
    assert (conv.stop, conv.tool_calls, conv.turns) == ("max_turns", 6, 2)


SCRIPT = (
    Reply(
        text=None,
        tool_calls=[
            {"name": "lookup", "arguments": {"name": "alpha"}},
            {"name": "zoom", "arguments": {"x0": 0, "y0": 0, "x1": 0.5, "y1": 0.5}},
        ],
    ),
    Reply(
        text="let me check",
        tool_calls=[
            {"name": "check", "arguments": {"route": "Alpha-Beta(transfer)-Eta-Delta"}},
            {"name": "lookup", "arguments": "{broken"},
        ],
    ),
    Reply(text="<route_begin>Alpha-Beta(transfer)-Eta-Delta<route_end>", reasoning="done"),
)


def test_the_loop_over_http_stores_a_complete_transcript(ds, tmp_path):
    out = tmp_path / "run"
    with FakeServer(conversation(*SCRIPT)) as srv:
        provider = make_provider("openai:m", base_url=srv.base_url, max_retries=0)
        s = run(ds, provider, out, categories=["time"], tools=("zoom", "lookup", "check"))
        bodies = [r["body"] for r in srv.requests]
    assert s.completed == 1 and s.errors == 0
    assert len(bodies) == 3
    assert all(
        [t["function"]["name"] for t in b["tools"]] == ["zoom", "lookup", "check"] for b in bodies
    )
    second = bodies[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "tool", "user"]
    assert second[1]["tool_calls"][0]["function"]["name"] == "lookup"
    assert second[2]["tool_call_id"] == second[1]["tool_calls"][0]["id"]
    assert second[2]["content"].startswith("Station: Alpha")
    assert second[4]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    third = bodies[2]["messages"]
    assert third[-2]["content"].startswith("valid: 4 stations")
    assert third[-1]["content"].startswith("error: arguments are not valid JSON")
    (row,) = _rows(out)
    assert row["response"] == "<route_begin>Alpha-Beta(transfer)-Eta-Delta<route_end>"
    assert row["reasoning"] == "done"
    assert (row["tool_calls"], row["turns"], row["stop"]) == (4, 3, "answer")
    assert row["tools_used"] == {"check": 1, "lookup": 2, "zoom": 1}
    assert row["settings"]["tools"] == ["zoom", "lookup", "check"]
    roles = [m["role"] for m in row["transcript"]]
    assert roles == [
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    text = json.dumps(row)
    assert "base64" not in text
    assert "maptab:zoom/m1/0,0,0.5,0.5" in text and "maptab:map/m1" in text
    first = row["transcript"][0]["content"]
    assert {p["type"] for p in first} == {"text", "table_ref", "image_url"}
    assert row["completion_tokens"] == 21  # 7 per turn, summed
    summary = json.loads((out / "run.json").read_text())
    assert summary["tools"] == {
        "tools": ["zoom", "lookup", "check"],
        "max_turns": 8,
        "max_tool_calls": 16,
    }
    stats = summary["summary"]["tool_stats"]
    assert stats["tool_calls_per_sample"] == 4 and stats["turns_per_sample"] == 3
    # the score rows read the answer as any other
    r = CliRunner().invoke(app, ["score", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    score = json.loads((out / "scores.jsonl").read_text().splitlines()[0])
    assert score["strict"] is True


def test_budget_exhaustion_over_http_answers_with_the_last_text(ds, tmp_path):
    loop = Reply(
        text="maybe Alpha-Beta-Gamma-Delta",
        tool_calls=[{"name": "lookup", "arguments": {"name": "Beta"}}],
    )
    with FakeServer(conversation(loop)) as srv:
        provider = make_provider("openai:m", base_url=srv.base_url, max_retries=0)
        run(
            ds,
            provider,
            tmp_path / "run",
            categories=["time"],
            tools=("lookup",),
            budget=ToolBudget(max_turns=3, max_tool_calls=16),
        )
        assert len(srv.requests) == 3
    (row,) = _rows(tmp_path / "run")
    assert (row["stop"], row["turns"], row["tool_calls"]) == ("max_turns", 3, 3)
    assert row["response"] == "maybe Alpha-Beta-Gamma-Delta" and row["error"] is None


def test_without_tools_the_body_and_row_are_unchanged(ds, tmp_path):
    with FakeServer() as srv:
        provider = make_provider("openai:m", base_url=srv.base_url, max_retries=0)
        run(ds, provider, tmp_path / "run", categories=["time"])
        (req,) = srv.requests
    assert set(req["body"]) == {"model", "messages", "temperature", "max_tokens"}
    (row,) = _rows(tmp_path / "run")
    assert "transcript" not in row and "tools" not in row["settings"]
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert "tools" not in record and "tool_stats" not in record["summary"]


def test_a_rerun_with_other_tools_is_refused_and_jobs_with_tools_too(ds, tmp_path):
    out = tmp_path / "run"
    run(ds, make_provider("agent-oracle"), out, tools=("lookup", "check"))
    with pytest.raises(StoreError, match="tools"):
        run(ds, make_provider("agent-oracle"), out, tools=("check",))
    with pytest.raises(StoreError, match="tools"):
        run(ds, make_provider("agent-oracle"), out)
    with pytest.raises(ProviderConfigError, match="--jobs is not available with --tools"):
        run(ds, make_provider("agent-oracle"), tmp_path / "other", tools=("check",), jobs=2)


def test_cli_options(ds, tmp_path):
    def run_cli(out: str, *options: str):
        argv = ["run", str(ds), *options, "--out", str(tmp_path / out), "--no-progress"]
        return CliRunner().invoke(app, argv)

    r = run_cli("a", "--model", "oracle", "--max-turns", "3")
    assert r.exit_code != 0 and "--max-turns and --max-tool-calls need --tools" in r.output
    r = run_cli("b", "--model", "oracle", "--tools", "zoom,ls")
    assert r.exit_code != 0 and "unknown tool 'ls'" in r.output
    r = run_cli("c", "--model", "agent-oracle", "--tools", "all", "--max-tool-calls", "5")
    assert r.exit_code == 0, r.output
    rows = _rows(tmp_path / "c")
    assert all(row["tool_calls"] <= 5 for row in rows)
    assert rows[0]["settings"]["max_turns"] == 64  # the agent's own, --max-turns not given


# ----------------------------------------------------------------------------- resume
def _blocking(sample: str, turn: int):
    """The :data:`SCRIPT` model, except that ``sample``'s turn ``turn`` never comes back."""
    script = conversation(*SCRIPT)

    def respond(body, seen):
        n = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        if n == turn and sample in json.dumps(body["messages"][0]):
            return Reply(delay=3600)
        return script(body, seen)

    return respond


@pytest.mark.slow
def test_a_run_killed_mid_conversation_resumes_each_sample_once(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=12, n_qa=0, n_reasonmap=0, image=(64, 48))
    out = tmp_path / "run"
    blocked = "RP question 6:"
    with FakeServer(_blocking(blocked, 1)) as srv:
        cmd = [
            sys.executable,
            "-c",
            "from maptab.cli import main; main()",
            "run",
            str(ds),
            "--model",
            "openai:m",
            "--base-url",
            srv.base_url,
            "--concurrency",
            "1",
            "--tools",
            "all",
            "--out",
            str(out),
            "--no-progress",
        ]
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ}
        )
        try:
            deadline = time.monotonic() + 120
            while not any(
                blocked in json.dumps(r["body"]["messages"][0]) and len(r["body"]["messages"]) > 1
                for r in list(srv.requests)
            ):
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "the blocked turn never came"
                time.sleep(0.05)
        finally:
            proc.kill()
            proc.wait()
    before = [r["id"] for r in _rows(out)]
    assert before == [f"rp-{i:05d}" for i in range(6)]  # sample 6 was mid-conversation
    with FakeServer(conversation(*SCRIPT)) as srv:
        provider = make_provider("openai:m", base_url=srv.base_url, max_retries=0)
        s = run(ds, provider, out, tools=("zoom", "lookup", "check"), concurrency=1)
    assert (s.skipped, s.completed, s.errors) == (6, 6, 0)
    rows = _rows(out)
    assert sorted(r["id"] for r in rows) == [f"rp-{i:05d}" for i in range(12)]
    redone = next(r for r in rows if r["id"] == "rp-00006")
    assert redone["turns"] == 3 and redone["transcript"][0]["role"] == "user"


# ----------------------------------------------------------------------------- agent-oracle
@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tools") / "mini"
    build_benchmark(root, preset="mini", seed=3, report_totals=True)
    return root


def _strict(out: Path) -> dict[str, list[int]]:
    r = CliRunner().invoke(app, ["score", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    by: dict[str, list[int]] = {}
    for line in (out / "scores.jsonl").read_text().splitlines():
        row = json.loads(line)
        got = by.setdefault(row["category"], [0, 0])
        got[0] += bool(row["strict"])
        got[1] += 1
    return by


def test_agent_oracle_solves_table_categories_through_the_tools(mini, tmp_path):
    out = tmp_path / "agent"
    s = run(
        mini,
        make_provider("agent-oracle"),
        out,
        categories=TABLE_CATEGORIES,
        limit=48,
        tools=("lookup", "check"),
    )
    assert s.errors == 0
    by = _strict(out)
    assert set(by) == set(TABLE_CATEGORIES)
    assert all(ok == n for ok, n in by.values()), by
    rows = _rows(out)
    assert all(r["stop"] == "answer" and r["tools_used"].get("lookup") for r in rows)
    # the prompt's tables reach it (QA reads their station names), kept by reference
    assert all(
        {p["type"] for p in r["transcript"][0]["content"]} == {"text", "table_ref"} for r in rows
    )


@pytest.mark.slow
def test_agent_oracle_is_exact_on_every_table_sample_of_mini(mini, tmp_path):
    out = tmp_path / "agent"
    run(
        mini,
        make_provider("agent-oracle"),
        out,
        categories=[*TABLE_CATEGORIES, "map_only"],
        tools=("zoom", "lookup", "check"),
    )
    by = _strict(out)
    wrong = [
        (r["id"], r["route"], r["valid"], r["optimal"], r["transfers_ok"])
        for r in map(json.loads, (out / "scores.jsonl").read_text().splitlines())
        if not r["strict"] and r["category"] != "map_only"
    ]
    assert all(by[c][0] == by[c][1] == 48 for c in TABLE_CATEGORIES), (by, wrong)
    assert by["map_only"][0] < by["map_only"][1]  # no lookup offered: no map reading


def test_a_model_that_ignores_the_tools_scores_as_without_them(mini, tmp_path):
    """The control: ``shortest`` answers at once whatever it is offered, so a tool-use run of
    it scores every sample exactly as the plain run does (one turn, no call)."""
    plain, tools = tmp_path / "plain", tmp_path / "tools"
    run(mini, make_provider("shortest"), plain, limit=120)
    run(mini, make_provider("shortest"), tools, limit=120, tools=("zoom", "lookup", "check"))
    assert all(r["tool_calls"] == 0 and r["turns"] == 1 for r in _rows(tools))
    _strict(plain), _strict(tools)

    def scores(out: Path) -> dict[str, dict]:
        rows = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
        return {r["id"]: {k: v for k, v in r.items() if k != "latency_s"} for r in rows}

    assert scores(tools) == scores(plain) and len(scores(plain)) == 120
