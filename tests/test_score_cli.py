"""``maptab score`` end to end on a dataset written in the documented layout.

Maps: ``m1`` (metromap of tests/test_metrics_verified.py, rebuilt here), ``t1`` (travelmap
triangle) and ``city`` (ReasonMap network). Gold labels are worked by hand (see the
docstring of test_metrics_verified.py for the J values).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from maptab.cli import app
from maptab.core.network import Network
from maptab.core.schema import Prediction, QAQuery, ReasonMapQuestion, RPQuery, write_jsonl
from maptab.io.dataset import DatasetWriter, MapEntry
from maptab.score.scorer import compare_runs, load_scores, score_predictions, score_run
from networks import PFQ
from networks import hyphen_metro as metro

RED = f"Alpha-Bravo-{PFQ}-Delta"
BLUE = "Alpha-Bravo(transfer)-Porta Furba-Delta"


def rp(qid: str, map_id: str, scenario: str, category: str, routes: list[str], **kw) -> RPQuery:
    base = dict(
        id=qid,
        map_id=map_id,
        scenario=scenario,
        split="test",
        category=category,
        style="direct_optimization",
        question=f"question {qid}",
        source="Alpha",
        target="Delta",
        routes=routes,
        route_vertex_numbers=[len(r.split("-")) for r in routes],
        transfer_vertex_numbers=[r.count("(transfer)") for r in routes],
        map_difficulty="Easy",
        query_difficulty="Medium",
    )
    base.update(kw)
    return RPQuery(**base)


def qa(qid: str, map_id: str, scenario: str, qtype: int, answer: float, caps: list[str]) -> QAQuery:
    return QAQuery(
        qid, map_id, scenario, "test", qtype, caps, "direct", f"qa {qid}", answer, ["map"]
    )


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    w = DatasetWriter(root, seed=0)
    w.add_map(metro(), MapEntry("m1", "metromap", "Easy", "test"))
    travel = Network.from_edges(
        [("Lake", "Tower"), ("Tower", "Gate"), ("Lake", "Gate")], map_id="t1"
    )
    w.add_map(travel, MapEntry("t1", "travelmap", "Easy", "test"))
    s = lambda x: f"{x} Station"  # noqa: E731
    city = Network.from_lines(
        {"Line 1": [s("A"), s("B"), s("C"), s("D")], "Line 2": [s("E"), s("C"), s("F")]},
        map_id="city",
    )
    w.add_map(city, MapEntry("city", "metromap", "hard", "test"))
    time_w = [1.0, 0.0, 0.0, 0.0]
    w.add(
        "rp",
        [
            rp(
                "time1",
                "m1",
                "metromap",
                "time",
                [RED],
                weights=time_w,
                repetition="PR",
                report_totals=True,
                totals={"Total_Time": 9.0, "Total_Price": 0.0},
            ),
            rp(
                "free1",
                "m1",
                "metromap",
                "map_only",
                [RED, BLUE],
                map_difficulty="Hard",
                query_difficulty="Hard",
            ),
            rp("mix1", "m1", "metromap", "map_mix", [RED], weights=time_w, repetition="PR"),
            rp("trav1", "t1", "travelmap", "map_only", ["Lake-Gate"], source="Lake", target="Gate"),
        ],
    )
    w.add(
        "qa",
        [
            qa("qa1", "m1", "metromap", 1, 2, ["Visual Perception", "Graph Topology Reasoning"]),
            qa("qa2", "m1", "metromap", 3, 1, ["Visual Perception"]),
            qa("qa3", "t1", "travelmap", 13, 3, ["Visual Perception"]),
            qa("qa4", "t1", "travelmap", 15, 2, ["Spatial Localization"]),
        ],
    )
    seg = lambda r, d, a, via: {  # noqa: E731
        "route_name": r,
        "departure_stop": d,
        "arrival_stop": a,
        "via_stops": via,
        "num_via_stops": len(via),
    }
    w.add(
        "reasonmap",
        [
            ReasonMapQuestion(
                "rm1",
                "city",
                "test",
                "A Station",
                "F Station",
                "short?",
                "long?",
                "num_via",
                "medium",
                "hard",
                [
                    [
                        seg("Line 1", "A Station", "C Station", ["B Station"]),
                        seg("Line 2", "C Station", "F Station", []),
                    ]
                ],
            )
        ],
    )
    w.finish()
    return root


RM_SHORT = "Route Name: Line 1\nDeparture Stop: A Station\nArrival Stop: C Station\n--\nRoute Name: Line 2\nDeparture Stop: C Station\nArrival Stop: F Station"
RM_LONG = (
    "Route Name: Line 1 Departure Stop: A Station Arrival Stop: C Station Number of Via Stops: 1 -- "
    "Route Name: Line 2 Departure Stop: C Station Arrival Stop: F Station Number of Via Stops: 0"
)


def predictions() -> list[Prediction]:
    return [
        Prediction(
            "time1",
            "rp",
            "<think>Alpha-Delta?</think><route_begin>Alpha-Bravo-Porta Furba-Quadraro-Delta<route_end>\nTotal_Time: 9\nTotal_Price: 0",
        ),
        Prediction("free1", "rp", "Alpha-Bravo-Porta Furba-Delta"),  # Blue route, mark missing
        Prediction("mix1", "rp", "", error="HTTP 500 after 6 retries"),
        Prediction("trav1", "rp", "I would rather not say."),
        Prediction("qa1", "qa", "<answer_begin>2<answer_end>"),
        Prediction("qa2", "qa", "<answer_begin>No<answer_end>"),
        Prediction("qa3", "qa", "The answer is 3.00"),
        Prediction("rm1/short", "reasonmap", RM_SHORT),
        Prediction("rm1/long", "reasonmap", RM_LONG),
    ]


@pytest.fixture
def run_dir(tmp_path: Path, dataset: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"dataset": str(dataset), "model": "test-model"}))
    write_jsonl(run / "predictions.jsonl", [p.to_dict() for p in predictions()])
    return run


def test_score_rows_and_summary(dataset: Path) -> None:
    rows, summary = score_predictions(dataset, predictions())
    by_id = {r["id"]: r for r in rows}
    assert "mix1" not in by_id  # API failure: not scored
    t = by_id["time1"]
    assert (t["ema"], t["pma"], t["ds"], t["strict"], t["gap"]) == (1, 1.0, 3, True, 0.0)
    assert t["totals"] == {"T": True, "P": True} and t["error_type"] is None
    f = by_id["free1"]
    # "Porta Furba" ≈ "Porta Furba_Quadraro" (ratio 0.71): EMA 1 against the Red route,
    # but the answer is the Blue route without its transfer mark
    assert f["ema"] == 1 and f["ds"] == 6 and f["lenient_false_accept"]
    assert f["optimal"] and not f["transfers_ok"] and f["error_type"] == "Transfer Indeterminate"
    tr = by_id["trav1"]
    assert not tr["parsed"] and tr["ema"] == 0 and tr["error_type"] == "Output Format"
    assert [by_id[q]["correct"] for q in ("qa1", "qa2", "qa3")] == [True, False, True]
    assert by_id["rm1/short"]["map_score"] == 19.0 and by_id["rm1/long"]["map_score"] == 37.0

    assert summary["counts"] == {
        "predictions": 9,
        "scored": {"rp": 3, "qa": 3, "reasonmap": 2},
        "api_errors": {"rp": 1},
        "format_errors": 1,
        "missing": 1,
    }
    metro_rp = summary["rp"]["by_scenario"]["metromap"]
    assert metro_rp["overall"]["ema"]["mean"] == 1.0
    assert metro_rp["overall"]["strict"]["mean"] == 0.5
    assert metro_rp["overall"]["ds"]["total"] == 9
    assert metro_rp["overall"]["lenient_false_accept"] == {"count": 1, "share_of_ema": 0.5}
    assert metro_rp["errors"] == {"Transfer Indeterminate": {"count": 1, "share": 0.5}}
    assert metro_rp["totals"]["T"]["mean"] == 1.0
    assert set(metro_rp["by_category"]) == {"map_only", "time"}
    assert metro_rp["by_repetition"]["PR"]["n"] == 1
    assert summary["rp"]["by_scenario"]["travelmap"]["overall"]["format_errors"] == 1
    qa_metro = summary["qa"]["by_scenario"]["metromap"]
    assert qa_metro["overall"]["mean"] == 0.5
    assert qa_metro["by_capability"]["Visual Perception"]["mean"] == 0.5
    assert qa_metro["by_capability"]["Graph Topology Reasoning"]["mean"] == 1.0
    rm = summary["reasonmap"]
    assert (
        rm["short"]["accuracy"]["mean"] == 1.0 and rm["long"]["weighted_map_score"]["mean"] == 37.0
    )


def test_cli_writes_scores_and_summary(run_dir: Path) -> None:
    result = CliRunner().invoke(app, ["score", str(run_dir), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "Route planning" in result.output and "ReasonMap" in result.output
    rows = [json.loads(x) for x in (run_dir / "scores.jsonl").read_text().splitlines()]
    assert {r["id"] for r in rows} == {
        "time1",
        "free1",
        "trav1",
        "qa1",
        "qa2",
        "qa3",
        "rm1/short",
        "rm1/long",
    }
    for r in rows:
        if r["kind"] == "rp":
            assert {
                "ema",
                "pma",
                "ds",
                "valid",
                "optimal",
                "transfers_ok",
                "gap",
                "strict",
            } <= r.keys()
        elif r["kind"] == "qa":
            assert "correct" in r
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["model"] == "test-model"
    assert summary == score_run(run_dir, progress=False)  # deterministic


@pytest.mark.slow
def test_the_console_script_writes_everything_and_exits_with_its_status(
    tmp_path: Path, run_dir: Path
) -> None:
    """``maptab score`` through the console entry point (``main``): its output arrives whole
    through a pipe, its files are complete and the same as an in-process run's, and it exits
    0; a failing command exits 1."""
    import subprocess
    import sys

    script = "from maptab.cli import main; main()"
    got = subprocess.run(
        [sys.executable, "-c", script, "score", str(run_dir), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert got.returncode == 0, got.stderr
    assert "Route planning" in got.stdout
    assert got.stdout.rstrip().endswith("summary.json")  # the last line was flushed
    written = {f: (run_dir / f).read_bytes() for f in ("scores.jsonl", "summary.json")}
    assert CliRunner().invoke(app, ["score", str(run_dir), "--no-progress"]).exit_code == 0
    assert written == {f: (run_dir / f).read_bytes() for f in written}
    bad = subprocess.run(
        [sys.executable, "-c", script, "score", str(tmp_path / "nothing"), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 1 and "error:" in bad.stderr


def test_cli_scores_external_results(tmp_path: Path, dataset: Path) -> None:
    results = tmp_path / "results.json"
    samples = [
        {
            "city": "t1",
            "station_1": "Lake",
            "station_2": "Gate",
            "question": "x",
            "response": "Lake-Gate",
        },
        {
            "station_1": "Alpha",
            "station_2": "Delta",
            "category": "time",
            "response": f"<route_begin>{RED}<route_end>",
        },
        {"question": "qa qa1", "response": "<answer_begin>2<answer_end>"},
    ]
    results.write_text(json.dumps(samples))
    out = tmp_path / "ext"
    result = CliRunner().invoke(
        app,
        ["score", str(out), "--results", str(results), "--dataset", str(dataset), "--no-progress"],
    )
    assert result.exit_code == 0, result.output
    rows = {
        json.loads(x)["id"]: json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()
    }
    assert rows["trav1"]["ema"] == 1 and rows["time1"]["strict"] and rows["qa1"]["correct"]
    assert (out / "predictions.jsonl").is_file() and (out / "run.json").is_file()
    # ambiguous sample: three categories share the OD pair
    samples.append({"station_1": "Alpha", "station_2": "Delta", "response": RED})
    results.write_text(json.dumps(samples))
    result = CliRunner().invoke(
        app,
        ["score", str(out), "--results", str(results), "--dataset", str(dataset), "--no-progress"],
    )
    assert result.exit_code == 1
    assert "sample 3" in result.output and "3 route-planning queries match" in result.output
    assert "Traceback" not in result.output


def test_an_interrupted_score_says_so_in_one_line_and_keeps_the_last_scores(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert CliRunner().invoke(app, ["score", str(run_dir), "--no-progress"]).exit_code == 0
    before = {n: (run_dir / n).read_bytes() for n in ("scores.jsonl", "summary.json")}

    def interrupted(*args, **kwargs):  # Ctrl-C in the middle of scoring
        raise KeyboardInterrupt

    monkeypatch.setattr("maptab.score.scorer._score_stream", interrupted)
    result = CliRunner().invoke(app, ["score", str(run_dir), "--no-progress"])
    assert result.exit_code == 130
    assert result.output == ("error: interrupted; scores.jsonl and summary.json are as they were\n")
    assert {n: (run_dir / n).read_bytes() for n in before} == before
    assert not list(run_dir.glob("*.tmp"))


def test_cli_clear_errors(tmp_path: Path, run_dir: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(app, ["score", str(empty), "--no-progress"])
    assert result.exit_code == 1 and "no run.json" in result.output
    with (run_dir / "predictions.jsonl").open("a") as fh:
        fh.write(json.dumps(Prediction("nope", "rp", "A-B").to_dict()) + "\n")
    result = CliRunner().invoke(app, ["score", str(run_dir), "--no-progress"])
    assert result.exit_code == 1 and "'nope'" in result.output
    (run_dir / "predictions.jsonl").write_text("{broken\n")
    result = CliRunner().invoke(app, ["score", str(run_dir), "--no-progress"])
    assert result.exit_code == 1 and "predictions.jsonl:1" in result.output


def test_compare_runs_pairs_by_id(run_dir: Path, dataset: Path) -> None:
    score_run(run_dir, progress=False)
    a = load_scores(run_dir)
    worse = [Prediction(p.id, p.kind, "nonsense") for p in predictions()]
    b, _ = score_predictions(dataset, worse)
    cmp = compare_runs(a, b, "ema")
    # shared RP samples: time1, free1, trav1 (mix1 failed in run a); a has EMA 1, 1, 0
    assert cmp["n"] == 3 and cmp["diff"] == pytest.approx(2 / 3)
    assert cmp["lo"] <= cmp["diff"] <= cmp["hi"]
    assert compare_runs(a, a, "correct")["diff"] == 0.0
