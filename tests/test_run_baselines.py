"""Built-in baselines end to end on a freshly built mini dataset (SPEC 9, 10, 12-14).

The dataset is built once per module with reported totals asked; each baseline runs once and
is scored with :func:`maptab.score.scorer.score_run`. The oracle must be perfect everywhere,
``shortest`` must fall into the shortest-path trap, ``blank`` must be all format errors.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.schema import RP_CATEGORIES, TOTAL_FIELDS
from maptab.generate.pipeline import build_benchmark
from maptab.io.dataset import DatasetError
from maptab.run import make_provider, run
from maptab.run.baselines import OracleProvider, answer_block, totals_lines
from maptab.run.requests import ChatRequest
from maptab.score.parse import parse_answer, parse_totals
from maptab.score.scorer import score_run

SEED = 0
SCENARIOS = ("metromap", "travelmap")
CRITERIA = [c.name for c in RP_CATEGORIES if not c.criteria_free]
CRITERIA_FREE = [c.name for c in RP_CATEGORIES if c.criteria_free]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def _responses(run_dir: Path) -> dict[str, str]:
    rows = _jsonl(run_dir / "predictions.jsonl")
    assert all(r["error"] is None for r in rows), [r["error"] for r in rows if r["error"]][:3]
    return {r["id"]: r["response"] for r in rows}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("baselines") / "mini"
    build_benchmark(root, preset="mini", seed=SEED, report_totals=True)
    return root


@pytest.fixture(scope="module")
def scored(dataset: Path, tmp_path_factory: pytest.TempPathFactory):
    """Run directory and summary of each baseline, run and scored once per module."""
    out = {}
    runs = tmp_path_factory.mktemp("runs")
    for name in ("oracle", "shortest", "blank"):
        run_dir = runs / name
        run(dataset, make_provider(name), run_dir)
        out[name] = (run_dir, score_run(run_dir))
    return out


def test_the_mini_dataset_exercises_every_kind(dataset):
    """Guards the other tests: every category, QA type, totals and a dropped type-22 spot."""
    rp, qa = _jsonl(dataset / "rp.jsonl"), _jsonl(dataset / "qa.jsonl")
    assert {(r["scenario"], r["category"]) for r in rp} == {
        (s, c.name) for s in SCENARIOS for c in RP_CATEGORIES
    }
    assert all(r["report_totals"] == (r["category"] in CRITERIA) for r in rp)
    assert {r["type"] for r in qa} == set(range(1, 25))
    assert all("params" in r for r in qa)
    network = {
        m: json.loads((dataset / "maps" / m / "network.json").read_text())
        for m in {r["map_id"] for r in qa}
    }
    dropped = [r for r in qa if r["type"] == 22 and r["params"]["dropped"]]
    assert dropped and all(
        len(r["tables"]["mix"]) == len(network[r["map_id"]]["vertices"]) - 1 for r in dropped
    )
    assert _jsonl(dataset / "reasonmap.jsonl")


def test_oracle_is_perfect_on_every_kind(dataset, scored):
    _, summary = scored["oracle"]
    rp_rows = _jsonl(dataset / "rp.jsonl")
    assert summary["counts"]["format_errors"] == 0 and summary["counts"]["missing"] == 0
    assert summary["counts"]["api_errors"] == {}
    for scenario in SCENARIOS:
        block = summary["rp"]["by_scenario"][scenario]
        assert set(block["by_category"]) == {c.name for c in RP_CATEGORIES}
        for cat, b in block["by_category"].items():
            assert b["n"] > 0 and b["strict"]["mean"] == 1.0, (scenario, cat)
            assert b["ema"]["mean"] == 1.0 and b["optimal"]["mean"] == 1.0, (scenario, cat)
        asked = sum(r["report_totals"] for r in rp_rows if r["scenario"] == scenario)
        assert set(block["totals"]) == set("TPCR")
        for letter, ci in block["totals"].items():
            assert (ci["mean"], ci["n"]) == (1.0, asked), (scenario, letter)
        assert block["errors"] == {}
    qa = summary["qa"]
    assert qa["overall"]["mean"] == 1.0
    assert qa["overall"]["n"] == len(_jsonl(dataset / "qa.jsonl"))
    for scenario in SCENARIOS:
        for qtype, ci in qa["by_scenario"][scenario]["by_type"].items():
            assert ci["mean"] == 1.0, (scenario, qtype)
    for mode in ("short", "long"):
        rm = summary["reasonmap"][mode]
        assert rm["accuracy"]["mean"] == 1.0 and rm["accuracy_strict"]["mean"] == 1.0
        assert rm["format_errors"] == 0


def test_oracle_reports_exactly_the_labelled_totals(dataset, scored):
    """The totals the oracle computes for its own route equal the stored labels exactly
    (not only at the 2 decimals the scorer compares), and no totals are reported unasked."""
    responses = _responses(scored["oracle"][0])
    checked = 0
    for row in _jsonl(dataset / "rp.jsonl"):
        reported = parse_totals(responses[row["id"]])
        if row["report_totals"]:
            assert reported == {k: row[k] for k in TOTAL_FIELDS}, row["id"]
            checked += 1
        else:
            assert reported == {}, row["id"]
    assert checked == sum(r["category"] in CRITERIA for r in _jsonl(dataset / "rp.jsonl")) > 0


def test_oracle_recomputes_instead_of_copying_labels(dataset, scored, tmp_path):
    """On a copy whose labels are all corrupted the oracle answers exactly as on the original; the
    one documented fallback (a QA row without ``params``) echoes the stored answer."""
    original = _responses(scored["oracle"][0])
    copy = tmp_path / "tampered"
    shutil.copytree(dataset, copy)
    qa = _jsonl(copy / "qa.jsonl")
    for r in qa:
        r["answer"] += 7
    legacy = qa[0]
    del legacy["params"]
    _write_jsonl(copy / "qa.jsonl", qa)
    rp = _jsonl(copy / "rp.jsonl")
    for r in rp:
        r["routes"] = [r["source"] + "-" + r["target"]]
        for k in TOTAL_FIELDS:
            if r[k] is not None:
                r[k] += 1
    _write_jsonl(copy / "rp.jsonl", rp)
    rm = _jsonl(copy / "reasonmap.jsonl")
    for r in rm:
        r["routes"] = [[dict(seg, route_name="Nowhere") for seg in route] for route in r["routes"]]
    _write_jsonl(copy / "reasonmap.jsonl", rm)

    run(copy, make_provider("oracle"), tmp_path / "run", verify=False)
    got = _responses(tmp_path / "run")
    assert got.keys() == original.keys()
    differ = [k for k in got if got[k] != original[k]]
    assert differ == [legacy["id"]]
    assert parse_answer(got[legacy["id"]]) == legacy["answer"]
    for gold, tampered in zip(_jsonl(dataset / "qa.jsonl")[1:], qa[1:], strict=True):
        assert parse_answer(got[gold["id"]]) == gold["answer"] != tampered["answer"], gold["id"]


def test_oracle_rejects_a_table_index_outside_the_map(dataset):
    row = next(r for r in _jsonl(dataset / "qa.jsonl") if r["type"] == 21)
    oracle = OracleProvider()
    meta = {"dataset": str(dataset), "map_id": row["map_id"], "sample": row}
    good = oracle.answer(ChatRequest(row["id"], "qa", [], meta))
    assert parse_answer(good) == row["answer"]
    row["tables"]["vertices"][0] = -1
    with pytest.raises(ValueError, match=f"{row['id']}: 'tables.vertices' has a row index out"):
        oracle.answer(ChatRequest(row["id"], "qa", [], meta))


def test_shortest_falls_into_the_shortest_path_trap(scored):
    _, summary = scored["shortest"]
    for scenario in SCENARIOS:
        block = summary["rp"]["by_scenario"][scenario]
        for cat in CRITERIA_FREE:
            assert block["by_category"][cat]["strict"]["mean"] == 1.0, (scenario, cat)
        criteria = [block["by_category"][c] for c in CRITERIA]
        right = sum(b["strict"]["mean"] * b["n"] for b in criteria)
        assert right < sum(b["n"] for b in criteria), scenario
        # NR: the optimum is none of the fewest-stations routes, so a shortest route never is
        nr = block["by_repetition"]["NR"]
        assert nr["n"] > 0 and nr["strict"]["mean"] == 0.0, scenario
        assert block["overall"]["format_errors"] == 0
        assert all(ci["mean"] == 0.0 for ci in block["totals"].values())  # none reported


def test_blank_is_all_format_errors(dataset, scored):
    run_dir, summary = scored["blank"]
    n_rp, n_qa, n_rm = (len(_jsonl(dataset / f"{k}.jsonl")) for k in ("rp", "qa", "reasonmap"))
    n = len(_jsonl(run_dir / "predictions.jsonl"))
    assert summary["counts"]["format_errors"] == n == n_rp + n_qa + 2 * n_rm
    assert summary["rp"]["overall"]["format_errors"] == n_rp
    assert summary["rp"]["overall"]["strict"]["mean"] == 0.0
    assert sum(summary["qa"]["by_scenario"][s]["format_errors"] for s in SCENARIOS) == n_qa
    assert all(summary["reasonmap"][m]["format_errors"] == n_rm for m in ("short", "long"))


_values = st.one_of(
    st.integers(0, 10**6).map(float),
    st.floats(0, 1e6, allow_nan=False, allow_infinity=False).map(lambda x: round(x, 6)),
)


@settings(max_examples=examples(60), deadline=None)
@given(st.tuples(_values, _values, _values, _values))
def test_totals_and_answers_round_trip_through_the_parsers(values):
    totals = dict(zip(TOTAL_FIELDS, values, strict=True))
    text = "<route_begin>A-B-C<route_end>\n" + totals_lines(totals)
    assert parse_totals(text) == totals
    assert parse_answer(answer_block(values[0])) == values[0]


def test_missing_counts_only_the_samples_the_run_selected(dataset, tmp_path):
    run_dir = tmp_path / "partial"
    run(dataset, make_provider("oracle"), run_dir, split="test", limit=20)
    summary = score_run(run_dir)
    assert summary["counts"]["predictions"] == 20
    assert summary["counts"]["missing"] == 0
    from maptab.score.scorer import load_predictions, score_predictions

    _, whole = score_predictions(dataset, load_predictions(run_dir))  # no selection given
    rows = sum(1 for name in ("rp", "qa") for _ in _jsonl(dataset / f"{name}.jsonl"))
    rows += 2 * len(_jsonl(dataset / "reasonmap.jsonl"))
    assert whole["counts"]["missing"] == rows - 20


def test_baselines_do_not_read_messages_and_get_the_question_only(dataset):
    """Baselines answer from ``meta``: the runner builds them no tables and no image."""
    from maptab.run.provider import uses_messages
    from maptab.run.requests import RequestBuilder, iter_samples

    for name in ("oracle", "shortest", "random", "blank"):
        assert not uses_messages(make_provider(name))
    assert uses_messages(object())  # a provider without the flag reads its messages
    builder = RequestBuilder(dataset, messages=False, images=False)
    full = RequestBuilder(dataset, images=False)
    for sample in iter_samples(dataset, categories=["time"], limit=3):
        lean, rich = builder.request(sample), full.request(sample)
        assert lean.messages[0]["content"] == rich.messages[0]["content"][:1]
        assert lean.meta == rich.meta
        assert len(rich.messages[0]["content"]) == 3  # question, Edge_tab, Vertex_tab
    sample = next(iter(iter_samples(dataset, categories=["time"], limit=1)))
    sample.record.tables["edges"][0] = 10**6
    with pytest.raises(DatasetError, match="'tables.edges' has a row index out of range"):
        builder.request(sample)


def test_oracle_answers_from_its_memo_as_it_solved(dataset):
    """Asked the same rows twice, the oracle gives the same answers (the second time from
    its memo); rows that differ only in what the answer does not depend on share one."""
    rows = [r for r in _jsonl(dataset / "rp.jsonl")][:48]
    oracle = OracleProvider()

    def ask(row: dict[str, Any]) -> str:
        meta = {"dataset": str(dataset), "map_id": row["map_id"], "sample": row}
        return oracle.answer(ChatRequest(row["id"], "rp", [], meta))

    first = [ask(r) for r in rows]
    assert [ask(r) for r in rows] == first
    assert [
        OracleProvider().answer(
            ChatRequest(
                r["id"], "rp", [], {"dataset": str(dataset), "map_id": r["map_id"], "sample": r}
            )
        )
        for r in rows
    ] == first
    free = [a for r, a in zip(rows, first, strict=True) if r["category"] in CRITERIA_FREE]
    assert free and len(set(free)) * 3 == len(free)  # three categories per OD pair, one query


@settings(max_examples=examples(50), deadline=None)
@given(
    st.text(max_size=20),
    st.sampled_from(["rp", "qa", "reasonmap"]),
    st.sampled_from(["", "short", "long"]),
    st.integers(0, 2**40),
    st.integers(1, 10**6),
    st.tuples(st.integers(0, 2**40), st.integers(0, 2**62), st.integers(0, 2**40)),
)
def test_sample_refs_travel_to_run_workers_unchanged(sid, kind, variant, offset, line, version):
    """A ref pickles as its fields (what ``--jobs`` sends to each worker): the same ref back,
    still frozen."""
    import dataclasses
    import pickle

    from maptab.io.dataset import SampleRef

    ref = SampleRef(sid, kind, variant, offset, line, version)
    back = pickle.loads(pickle.dumps(ref, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == ref and type(back) is SampleRef
    with pytest.raises(dataclasses.FrozenInstanceError):
        back.offset = 0  # type: ignore[misc]
