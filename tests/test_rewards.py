"""RL rewards (docs/guides/train-with-rewards.md): bounds, gold ⇒ 1, blank ⇒ 0, monotone in
the optimality gap, agreement with maptab's scorer on strict correctness, references that
carry everything the reward reads, and the TRL / verl adapters."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.schema import Prediction, parse_record
from maptab.generate.pipeline import build_benchmark
from maptab.io.dataset import Dataset
from maptab.rewards import (
    RP_WEIGHTS,
    ReferenceError,
    combine_rp,
    completion_text,
    decode_reference,
    encode_reference,
    reward,
    score_completion,
)
from maptab.rewards.reference import compact_network, network_from_compact
from maptab.rewards.trl import maptab_reward
from maptab.rewards.verl import compute_score, compute_score_details
from maptab.run.baselines import BASELINE_CLASSES, reasonmap_answer, route_block, totals_lines
from maptab.run.requests import build_requests
from maptab.score.scorer import score_predictions

SEED = 9


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rewards") / "mini"
    build_benchmark(root, preset="mini", seed=SEED, report_totals=True)
    return root


@pytest.fixture(scope="module")
def samples(mini: Path) -> list[dict[str, Any]]:
    """Every request of the dataset with its record, reference and baseline answers."""
    ds = Dataset(mini)
    providers = {n: BASELINE_CLASSES[n](seed=1) for n in ("oracle", "shortest", "random")}
    out = []
    for req in build_requests(mini, images=False):
        rec = parse_record(req.kind, req.meta["sample"])
        net = None if req.kind == "qa" else ds.network(rec.map_id)
        out.append(
            {
                "id": req.id,
                "kind": req.kind,
                "record": rec,
                "network": net,
                "mode": req.meta.get("variant", ""),
                "reference": encode_reference(req.kind, rec, net, mode=req.meta.get("variant", "")),
                "answers": {n: p.answer(req) for n, p in providers.items()},
            }
        )
    return out


def gold_texts(s: dict[str, Any]) -> list[str]:
    """Answers written from the sample's stored gold labels (not from a solver)."""
    rec = s["record"]
    if s["kind"] == "qa":
        return [f"<answer_begin>{rec.answer}<answer_end>"]
    if s["kind"] == "reasonmap":
        return [reasonmap_answer(r, s["mode"], rec.long_template) for r in rec.routes]
    if rec.report_totals and rec.totals:  # the totals are those of routes[0]
        return [f"{route_block(rec.routes[0])}\n{totals_lines(rec.totals)}"]
    return [route_block(r) for r in rec.routes]


def test_gold_answers_score_one(samples: list[dict[str, Any]]) -> None:
    kinds = set()
    for s in samples:
        kinds.add(s["kind"])
        for text in [*gold_texts(s), s["answers"]["oracle"]]:
            b = score_completion(text, s["reference"])
            assert b.reward == 1.0, (s["id"], text, b)
            assert b.correct and b.parsed
    assert kinds == {"rp", "qa", "reasonmap"}


@pytest.mark.parametrize(
    "text", ["", "   ", "I don't know.", "<think>A-B-C</think>", "<route_begin><route_end>"]
)
def test_blank_and_unparsable_score_zero(samples: list[dict[str, Any]], text: str) -> None:
    for s in samples:
        b = score_completion(text, s["reference"])
        assert b.reward == 0.0, (s["id"], b)
        assert not b.correct


@pytest.mark.parametrize("baseline", ["oracle", "shortest", "random"])
def test_agrees_with_scorer_on_strict_correctness(
    mini: Path, samples: list[dict[str, Any]], baseline: str
) -> None:
    """reward == 1 exactly when maptab's scorer counts the answer right (RP: no error type,
    i.e. strict and every asked total right; QA: correct); ReasonMap: 1 only if correct."""
    preds = [Prediction(s["id"], s["kind"], s["answers"][baseline]) for s in samples]
    rows, _ = score_predictions(mini, preds)
    by_id = {s["id"]: s for s in samples}
    seen = {True: 0, False: 0}
    for row in rows:
        s = by_id[row["id"]]
        b = score_completion(s["answers"][baseline], s["reference"])
        assert 0.0 <= b.reward <= 1.0
        if row["kind"] == "rp":
            right = row["error_type"] is None
            assert (b.reward == 1.0) == right, (row, b)
            assert b.valid == row["valid"] and b.transfers_ok == row["transfers_ok"]
            assert b.error_type == row["error_type"]
            if row["gap"] is not None:
                assert b.gap == pytest.approx(row["gap"], rel=1e-12)
            seen[right] += 1
        elif row["kind"] == "qa":
            assert (b.reward == 1.0) == row["correct"]
        else:
            assert b.correct == row["correct"]
            if b.reward == 1.0:
                assert row["correct"]
            if not row["correct"]:
                assert b.reward <= 0.5  # without the correctness bonus: at most half
    if baseline != "oracle":
        assert seen[True] and seen[False]  # both outcomes were compared


def test_valid_answers_follow_the_formula(samples: list[dict[str, Any]]) -> None:
    """On real answers, the reward is :func:`combine_rp` of the verified parts."""
    for s in samples:
        if s["kind"] != "rp":
            continue
        for text in s["answers"].values():
            b = score_completion(text, s["reference"])
            expect = combine_rp(
                parsed=b.parsed,
                valid=b.valid,
                gap=b.gap,
                transfers_ok=b.transfers_ok,
                totals=b.totals,
                prefix=b.prefix,
            )
            assert b.reward == expect
            if b.valid:
                assert b.reward >= RP_WEIGHTS["valid"]
                assert b.efficiency == pytest.approx(1 / (1 + b.gap))


# ----------------------------------------------------------------------------- properties
parts = st.fixed_dictionaries(
    {
        "parsed": st.booleans(),
        "valid": st.booleans(),
        "gap": st.none() | st.floats(0, 1e6) | st.just(math.inf),
        "transfers_ok": st.booleans(),
        "totals": st.none() | st.floats(0, 1),
        "prefix": st.floats(0, 1),
    }
)


@settings(max_examples=examples(500), deadline=None)
@given(parts)
def test_bounded_and_one_only_when_everything_is_right(p: dict[str, Any]) -> None:
    r = combine_rp(**p)
    assert 0.0 <= r <= 1.0
    full = (
        p["parsed"]
        and p["valid"]
        and (p["gap"] or 0.0) == 0.0
        and p["transfers_ok"]
        and p["totals"] in (None, 1.0)
    )
    assert (r == 1.0) == bool(full)
    if not p["parsed"]:
        assert r == 0.0


@settings(max_examples=examples(500), deadline=None)
@given(parts, st.floats(0, 1e6), st.floats(0, 1e6))
def test_monotone_in_the_gap(p: dict[str, Any], g1: float, g2: float) -> None:
    lo, hi = sorted((g1, g2))
    p = {**p, "parsed": True, "valid": True}
    assert combine_rp(**{**p, "gap": lo}) >= combine_rp(**{**p, "gap": hi})
    assert combine_rp(**{**p, "gap": hi}) >= combine_rp(**{**p, "gap": math.inf})


@settings(max_examples=examples(300), deadline=None)
@given(parts, parts)
def test_any_valid_route_beats_any_invalid_one(a: dict[str, Any], b: dict[str, Any]) -> None:
    valid = combine_rp(**{**a, "parsed": True, "valid": True})
    invalid = combine_rp(**{**b, "valid": False})
    assert valid > invalid


@settings(max_examples=examples(300), deadline=None)
@given(st.floats(0, 1), st.floats(0, 1))
def test_monotone_in_the_prefix(p1: float, p2: float) -> None:
    lo, hi = sorted((p1, p2))
    base = {"parsed": True, "valid": False, "gap": None, "transfers_ok": False, "totals": None}
    assert combine_rp(**base, prefix=lo) <= combine_rp(**base, prefix=hi)


def _rp_samples(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in samples if s["kind"] == "rp"]


@settings(max_examples=examples(150), deadline=None)
@given(data=st.data())
def test_random_station_lists_are_bounded_and_never_beat_strictness(
    samples: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Arbitrary routes over the map's names (any order, marks, separators) stay in [0, 1]
    and reach 1 only when the scorer's verification says the route is strictly right."""
    s = data.draw(st.sampled_from(_rp_samples(samples)))
    net = s["network"]
    names = data.draw(st.lists(st.sampled_from(sorted(net.vertices)), min_size=0, max_size=12))
    rec = s["record"]
    names = [rec.source, *names, rec.target] if data.draw(st.booleans()) else names
    marks = [data.draw(st.booleans()) for _ in names]
    sep = data.draw(st.sampled_from(["-", " - ", " → ", "->"]))
    text = sep.join(n + ("(transfer)" if m else "") for n, m in zip(names, marks, strict=True))
    b = score_completion(route_block(text), s["reference"])
    assert 0.0 <= b.reward <= 1.0
    if b.reward == 1.0:
        assert b.valid and b.transfers_ok and b.gap == 0.0 and b.error_type is None


def test_listing_every_station_is_not_rewarded(samples: list[dict[str, Any]]) -> None:
    """Gaming check: source, every station of the map, target — an invalid route (unless the
    map is a path), so at most the invalid-route ceiling; always below the valid floor."""
    ceiling = RP_WEIGHTS["format"] + RP_WEIGHTS["prefix"]
    for s in _rp_samples(samples)[::7]:
        net, rec = s["network"], s["record"]
        every = [rec.source, *(v for v in net.vertices if v not in (rec.source, rec.target))]
        text = route_block("-".join([*every, rec.target]))
        b = score_completion(text, s["reference"])
        if not b.valid:
            assert b.reward <= ceiling < RP_WEIGHTS["valid"]
        assert b.reward < 1.0 or b.correct


def test_worse_routes_score_lower_on_real_samples(samples: list[dict[str, Any]]) -> None:
    """On each query, valid answers with the same marks/totals outcome are ordered by gap."""
    compared = 0
    for s in _rp_samples(samples):
        got = [score_completion(t, s["reference"]) for t in s["answers"].values()]
        valid = [b for b in got if b.valid]
        for a in valid:
            for b in valid:
                same = a.transfers_ok == b.transfers_ok and (a.gap == 0) == (b.gap == 0)
                if same and a.totals == b.totals and a.gap < b.gap:
                    assert a.reward > b.reward
                    compared += 1
    assert compared > 0


def test_prefix_credit_for_a_truncated_gold_route(samples: list[dict[str, Any]]) -> None:
    for s in _rp_samples(samples):
        gold = s["record"].routes[0].split("-")
        if len(gold) < 4:
            continue
        half = gold[: len(gold) // 2]
        b = score_completion(route_block("-".join(half)), s["reference"])
        assert not b.valid
        assert b.prefix == pytest.approx(len(half) / len(gold))
        assert b.reward == pytest.approx(
            RP_WEIGHTS["format"] + RP_WEIGHTS["prefix"] * len(half) / len(gold)
        )
        return
    pytest.fail("no gold route of 4 stations or more in mini")


FRAGMENTS = st.sampled_from(
    [
        "<route_begin>",
        "<route_end>",
        "<ROUTE_BEGIN>",
        "<think>",
        "</think>",
        "◁think▷",
        "\n",
        "-",
        " → ",
        "(transfer)",
        "**",
        "Route: ",
        "Total_Time: 14.12",
        "total price = 3",
        "Average_Reliability: 0.5",
        "TOTAL",
        "Total_",
        "time",
        "Price",
        "average ",
        "Comfort level",
        "reliability",
        ": ",
        "=",
        "：",
        "**",
        "$",
        "1.5",
        "-2e3",
        "İ",
        "```",
        " ",
        ".",
    ]
)


@settings(max_examples=examples(400), deadline=None)
@given(data=st.data())
def test_canonical_fast_path_equals_the_parser(
    samples: list[dict[str, Any]], data: st.DataObject
) -> None:
    """The reward reads a tags-only answer through a shortcut; it must give exactly what
    parse_route / parse_totals give on the whole text."""
    from maptab.rewards.core import _canonical_route, _totals
    from maptab.score.parse import parse_route, parse_totals
    from maptab.score.verified import station_index

    s = data.draw(st.sampled_from(_rp_samples(samples)))
    vocab = station_index(s["network"]).vocabulary
    names = st.sampled_from(sorted(s["network"].vertices)[:8])
    text = "".join(data.draw(st.lists(FRAGMENTS | names, max_size=14)))
    inner = _canonical_route(text)
    got = parse_route(text if inner is None else inner, vocab)
    assert got == parse_route(text, vocab)
    assert _totals(text, inner is not None) == parse_totals(text)


TOTALS_FRAGMENTS = st.sampled_from(
    [
        "Total_Time: 14.12",
        "total price = 3",
        "Average_Reliability: 0.5",
        "AVERAGE comfort level：2",
        "TOTAL",
        "Total_",
        "time",
        "Price",
        "average ",
        "Comfort level",
        "reliability",
        ": ",
        "=",
        "**",
        "$",
        "1.5",
        "-2e3",
        "\n",
        "İ",
        "ſ",
    ]
)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(TOTALS_FRAGMENTS, max_size=16))
def test_canonical_totals_equal_parse_totals(parts: list[str]) -> None:
    """The reward reads the totals of a tags-only answer by trying each pattern where it
    can start, from the end; it must find exactly what parse_totals finds (the last match
    of each)."""
    from maptab.rewards.core import _canonical_route, _totals
    from maptab.score.parse import parse_totals

    text = "<route_begin>A-B<route_end>" + "".join(parts)
    assert _canonical_route(text) is not None
    assert _totals(text, True) == parse_totals(text)


# ----------------------------------------------------------------------------- references
def test_reference_round_trip(samples: list[dict[str, Any]]) -> None:
    for s in samples[::11]:
        ref = decode_reference(s["reference"])
        assert ref.kind == s["kind"] and ref.mode == s["mode"]
        assert ref.record.id == s["record"].id
        if s["network"] is not None:
            assert compact_network(ref.network) == compact_network(s["network"])
        as_dict = decode_reference(json.loads(s["reference"]))  # a trainer may hand a dict
        assert as_dict.record.id == s["record"].id
        assert reward(s["answers"]["oracle"], as_dict) == 1.0
    net = samples[0]["network"]
    back = network_from_compact(compact_network(net))
    assert back.vertices == net.vertices and back.edges == net.edges
    assert back.labels == net.labels


def test_reference_is_self_contained(samples: list[dict[str, Any]], tmp_path: Path) -> None:
    """The reward reads nothing but the reference: it scores the same in a fresh process
    with no dataset folder on disk."""
    import subprocess
    import sys

    picked = [s for s in samples if s["kind"] != "qa"][:5] + [
        s for s in samples if s["kind"] == "qa"
    ][:2]
    payload = [[s["reference"], s["answers"]["shortest"]] for s in picked]
    (tmp_path / "refs.json").write_text(json.dumps(payload), encoding="utf-8")
    code = (
        "import json,sys; from maptab.rewards import reward; "
        "p=json.load(open(sys.argv[1])); print(json.dumps([reward(a, r) for r, a in p]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "refs.json")],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert json.loads(out.stdout) == [reward(a, r) for r, a in payload]


def test_edited_or_foreign_reference_is_one_clear_error(samples: list[dict[str, Any]]) -> None:
    text = samples[0]["reference"]
    with pytest.raises(ReferenceError, match="does not match its key"):
        decode_reference(text.replace('"source":"', '"source":"X', 1))
    with pytest.raises(ReferenceError, match="not JSON"):
        decode_reference("route A-B")
    with pytest.raises(ReferenceError, match="version"):
        decode_reference(json.dumps({"version": 99, "kind": "qa", "sample": {}}))
    with pytest.raises(ReferenceError, match="expected a JSON string"):
        decode_reference(42)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- adapters
def test_completion_forms() -> None:
    assert completion_text("A-B") == "A-B"
    assert completion_text([{"role": "assistant", "content": "A-B"}]) == "A-B"
    assert completion_text({"role": "assistant", "content": [{"type": "text", "text": "x"}]}) == "x"
    assert (
        completion_text(
            [
                {"role": "assistant", "content": "first"},
                {"role": "tool", "content": "t"},
                {"role": "assistant", "content": "last"},
            ]
        )
        == "last"
    )
    assert completion_text(None) == ""


def test_trl_reward_function(samples: list[dict[str, Any]]) -> None:
    picked = samples[::40]
    completions = [[{"role": "assistant", "content": s["answers"]["oracle"]}] for s in picked]
    refs = [s["reference"] for s in picked]
    got = maptab_reward(
        prompts=[[{"role": "user", "content": "q"}]] * len(picked),
        completions=completions,
        ground_truth=refs,
        completion_ids=[[1]] * len(picked),
        trainer_state=None,
    )
    assert got == [1.0] * len(picked)
    blank = maptab_reward(["q"] * len(picked), [""] * len(picked), ground_truth=refs)
    assert blank == [0.0] * len(picked)
    with pytest.raises(ReferenceError, match="ground_truth"):
        maptab_reward(["q"], ["A-B"], answer=["x"])
    with pytest.raises(ReferenceError, match="1 completions but 2"):
        maptab_reward(["q"], ["A-B"], ground_truth=refs[:2])


def test_verl_compute_score(samples: list[dict[str, Any]]) -> None:
    for s in samples[::40]:
        gold = s["answers"]["oracle"]
        assert compute_score(f"maptab/{s['kind']}", gold, s["reference"]) == 1.0
        assert (
            compute_score(
                data_source=f"maptab/{s['kind']}",
                solution_str="",
                ground_truth=s["reference"],
                extra_info={"index": 0},
            )
            == 0.0
        )
        details = compute_score_details("maptab/x", gold, s["reference"], None)
        assert details["score"] == 1.0
        assert set(details) == {"score", "parsed", "correct", "valid", "prefix"}


def test_a_registered_kind_brings_its_own_reward(samples: list[dict[str, Any]]) -> None:
    """The rewards dispatch through the registry: a kind registered at run time with a
    RewardSpec is encoded, decoded and rewarded with its own function; a kind without one
    is refused with one clear line."""
    from dataclasses import replace

    from maptab.rewards import RewardBreakdown
    from maptab.tasks import RewardSpec, get, register
    from maptab.tasks.base import _REGISTRY

    def echo(ref: Any, text: str) -> RewardBreakdown:
        ok = text == ref.record.id
        return RewardBreakdown("echo", 1.0 if ok else 0.0, True, ok)

    spec = RewardSpec(echo, ability="echoing", with_map=False, blank={"question": ""})
    qa = get("qa")
    register(replace(qa, name="echo", reward=spec))
    register(replace(qa, name="silent", reward=None))
    try:
        rec = next(s["record"] for s in samples if s["kind"] == "qa")
        ref = encode_reference("echo", rec)
        decoded = decode_reference(ref)
        assert decoded.kind == "echo" and decoded.record.question == ""
        assert decoded.record.id == rec.id and decoded.network is None
        assert reward(rec.id, ref) == 1.0 and reward("other", ref) == 0.0
        with pytest.raises(ReferenceError, match="unknown kind 'silent'; rewarded kinds: rp"):
            encode_reference("silent", rec)
        with pytest.raises(ReferenceError, match="unknown kind 'nope'"):
            encode_reference("nope", rec)
    finally:
        _REGISTRY.pop("echo", None)
        _REGISTRY.pop("silent", None)
