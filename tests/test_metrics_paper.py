"""Paper-compatible EMA / PMA / DS (SPEC 13): the released MapTab scorer's behaviour, case for
case — a hand-derived table, a property test and the baselines on ``mini`` against the
test-only reference of the released rules (tests/released_maptab.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from _examples import examples
from maptab.cli import app
from maptab.core.schema import read_jsonl
from maptab.score.paper import (
    difficulty_score,
    ema,
    exact_token_match,
    paper_scores,
    pma,
    reference_tokens,
    station_match,
)
from released_maptab import released_route_text, released_scores

GOLD = "Triskett-West 117th_Madison-West Boulevard_Cudell(transfer)-West 65th_Lorain-West 25th_Ohio City"
G1 = "Alder-Birch-Cedar(transfer)-Dogwood"
G2 = "Ash-Fir(transfer)-Yew"
G3 = "Ash-Fir-Yew"
G4 = "Mendozamouth-Henson-North Aprilshire-Juanport(transfer)-West Williamville-South Matthew-Crane-Andreastad"
G5 = "A1-B2-C3-D4-E5-F6-G7"

# (gold routes, extracted answer route, released EMA, released PMA), each worked by hand
# from the released rules: tokens are the pieces between '-', unstripped; fuzzy =
# SequenceMatcher(gold', answer').ratio() = 2M/T >= 0.5 on stripped lower-case tokens (M
# matched characters, T the two lengths); EMA compares a token pair that contains the
# literal '(transfer)' as raw strings; PMA = leading fuzzy matches / gold length, rounded to 4.
CASES = [
    ([G1], G1, 1, 1.0),  # identical
    ([G1], "alder-birch-Cedar(transfer)-dogwood", 1, 1.0),  # unmarked: case-insensitive
    ([G1], "Alder-Birch-cedar(transfer)-Dogwood", 0, 1.0),  # marked: raw, so case matters
    ([G1], "Alder-Birch-Cedar (transfer)-Dogwood", 0, 1.0),  # 30/31 fuzzy; raw differs
    ([G1], "Alder-Birch-Cedar-Dogwood", 0, 1.0),  # cedar(transfer)/cedar 10/20 = 0.5
    ([G1], "Alder-Birch(transfer)-Cedar(transfer)-Dogwood", 0, 1.0),  # birch.. 10/20
    ([G1], "Alder-Birch-Cedar(Transfer)-Dogwood", 0, 1.0),  # gold has the mark: raw
    ([G1], " Alder -Birch-Cedar(transfer)-Dogwood", 1, 1.0),  # unmarked: stripped
    ([G1], "Alder-Birch- Cedar(transfer)-Dogwood", 0, 1.0),  # marked: the space counts
    ([G1], "Alder-Birch", 0, 0.5),  # 2 of 4
    ([G1], G1 + "-Elm", 0, 1.0),  # longer: the whole gold matched
    ([G1], "Elm-Birch-Cedar(transfer)-Dogwood", 0, 0.0),  # alder/elm 2/8
    ([G1], "Alder-Brch-Cedar(transfer)-Dogwood", 1, 1.0),  # birch/brch 8/9
    ([G1], "Alder-Oak-Cedar(transfer)-Dogwood", 0, 0.25),  # birch/oak 0
    ([G1], "Alder-Birch-Oak(transfer)-Dogwood", 0, 1.0),  # cedar(transfer)/oak(transfer) 22/28
    ([G2], "Ash-Fir-Yew", 0, 0.3333),  # fir(transfer)/fir 6/16
    ([G2], G2, 1, 1.0),
    ([G2], "Ash-Fir(transfer)", 0, 0.6667),  # 2 of 3
    ([G2], "Ashe-Fir(transfer)-Yew", 1, 1.0),  # ash/ashe 6/7
    ([G2], "As-Fir(transfer)-Yew", 1, 1.0),  # ash/as 4/5
    ([G2], "Sh-Fir(transfer)-Yew", 1, 1.0),  # ash/sh 4/5
    ([G2], "Ax-Fir(transfer)-Yew", 0, 0.0),  # ash/ax 2/5
    ([G2], "Ash-Fig(transfer)-Yew", 0, 1.0),  # fir(transfer)/fig(transfer) 24/26
    ([G2], "Ash-Fir(transfer)-Yew(transfer)", 0, 0.6667),  # yew/yew(transfer) 6/16
    ([G2], "ASH-Fir(transfer)-YEW", 1, 1.0),
    ([G2], "Ash-FIR(transfer)-Yew", 0, 1.0),
    ([G2], "Ash-Fir(TRANSFER)-Yew", 0, 1.0),  # '(transfer)' is in the gold token: raw
    ([G3], "Ash-Fir(Transfer)-Yew", 0, 0.3333),  # no literal mark: fuzzy 6/16 fails
    ([G3], "Ash-Fir(transfer)-Yew", 0, 0.3333),  # marked answer: raw differs; fuzzy fails
    ([G2, G3], "Ash-Fir-Yew", 1, 1.0),  # best over golds
    ([G1, G2], "Ash-Fir", 0, 0.3333),  # G2 1/3; G1 alder/ash 2/8
    ([G1, G2], "Alder-Birch-Cedar", 0, 0.75),  # G1 3/4 (cedar(transfer)/cedar 0.5)
    (
        [G4],  # henson/henson(transfer) 12/22; north aprilshire/munoz pass 10/26
        "Mendozamouth-Henson(transfer)-Munoz Pass-West Williamville(transfer)-South Matthew-Crane-Andreastad",
        0,
        0.25,
    ),
    ([G4], G4.replace("Juanport(transfer)", "Juanport"), 0, 1.0),  # 16/26
    ([G5], "A1-Q9", 0, 0.1429),  # 1/7 rounded
    ([G5], "A1-B2-Q9", 0, 0.2857),  # 2/7 rounded
    ([G5], "A1-B2-C3-D4-E5-F6-G8", 1, 1.0),  # g7/g8 2/4 = 0.5: inclusive
    ([G5], "A1-B2-C3-D4-E5-F6-H8", 0, 0.8571),  # g7/h8 0; 6/7
    (["abcd-efgh"], "abxy-efgh", 1, 1.0),  # 4/8
    (["abcd-efgh"], "axyz-efgh", 0, 0.0),  # 2/8
    (["abcd(transfer)-efgh"], "abxy(transfer)-efgh", 0, 1.0),  # 24/28
    (["abcd-efgh"], "abcd(transfer)-efgh", 0, 0.0),  # abcd/abcd(transfer) 8/18
    (["Crane-Ox"], "Crane(transfer)-Ox", 0, 1.0),  # 10/20
    (["Ox-Crane"], "Ox(transfer)-Crane", 0, 0.0),  # 4/14
    (["Ox-Crane"], "Ox-Crane-Ox-Crane", 0, 1.0),
    ([G3], "Ash", 0, 0.3333),
]


@pytest.mark.parametrize(("golds", "answer", "want_ema", "want_pma"), CASES)
def test_released_rules_table(golds, answer, want_ema, want_pma) -> None:
    got = paper_scores(reference_tokens(answer), [reference_tokens(g) for g in golds])
    assert got == (want_ema, want_pma)
    assert released_scores(answer, golds) == (want_ema, want_pma)  # the yardstick agrees


def test_table_is_large_and_varied() -> None:
    assert len(CASES) >= 40
    assert {e for _, _, e, _ in CASES} == {0, 1}
    assert sum(1 for _, _, e, p in CASES if e == 0 and p == 1.0) >= 10  # PMA 1 without EMA


def test_station_match_rule() -> None:
    assert station_match("Triskett", " triskett ")
    assert station_match("Triskett", "Triskit")  # ratio 0.8
    assert not station_match("Triskett", "Lorain")
    assert station_match("abcd", "abxy")  # 2*2/8 = 0.5: the threshold is inclusive
    assert not station_match("abcd", "axyz")  # 2*1/8 = 0.25
    # a mark is only characters to the fuzzy rule
    assert station_match("Cudell(transfer)", "Cudell")  # 12/22
    assert not station_match("Li", "Li(transfer)")  # 4/14
    # EMA's rule: raw identity as soon as either side carries the literal mark
    assert exact_token_match("Cudell(transfer)", "Cudell(transfer)")
    assert not exact_token_match("Cudell(transfer)", "cudell(transfer)")
    assert not exact_token_match("Cudell(transfer)", " Cudell(transfer)")
    assert not exact_token_match("Cudell", "Cudell(transfer)")
    assert exact_token_match("Cudell", " cudel ")
    assert exact_token_match("Cudell", "Cudell(Transfer)") is station_match(
        "Cudell", "Cudell(Transfer)"
    )


def test_ema_pma_by_hand() -> None:
    refs = [GOLD]
    exact = reference_tokens(GOLD)
    assert ema(exact, refs) == 1 and pma(exact, refs) == 1.0
    typo = list(exact)
    typo[1] = "West 117 Madison"  # misspelt: still fuzzy-matches
    assert ema(typo, refs) == 1
    nomark = list(exact)
    nomark[2] = "West Boulevard_Cudell"  # missing mark: EMA 0, PMA still counts it (42/52)
    assert ema(nomark, refs) == 0 and pma(nomark, refs) == 1.0
    assert ema(exact[:4], refs) == 0 and pma(exact[:4], refs) == 0.8
    assert ema([*exact, "Extra"], refs) == 0 and pma([*exact, "Extra"], refs) == 1.0
    assert pma(["Lorain", *exact[1:]], refs) == 0.0
    assert pma(exact[:3], ["A1-Bx-Cq", GOLD]) == 0.6
    assert ema(None, refs) == 0 and pma(None, refs) == 0.0
    assert ema(GOLD, refs) == 1  # a route string is tokenised like the references


def test_difficulty_score() -> None:
    assert difficulty_score(1, "Easy", "Easy") == 2
    assert difficulty_score(1, "Hard", "Medium") == 5
    assert difficulty_score(1, "hard", "hard") == 6
    assert difficulty_score(0, "Hard", "Hard") == 0
    with pytest.raises(ValueError, match="unknown difficulty"):
        difficulty_score(1, "Impossible", "Easy")


_tok = st.sampled_from(
    [
        "ab",
        "abc",
        "Abd",
        "xyz",
        "ab(transfer)",
        "AB(transfer)",
        "ab (transfer)",
        "ab(Transfer)",
        "x y",
        " ab ",
        "Crane",
        "Crane(transfer)",
        "crane ",
    ]
)


@settings(max_examples=examples(400), deadline=None)
@given(
    pred=st.lists(_tok, min_size=1, max_size=6),
    refs=st.lists(st.lists(_tok, min_size=1, max_size=6), min_size=1, max_size=3),
)
def test_paper_scores_equal_released_rules(pred: list[str], refs: list[list[str]]) -> None:
    golds = ["-".join(r) for r in refs]
    assert paper_scores(pred, [reference_tokens(g) for g in golds]) == released_scores(
        "-".join(pred), golds
    )


@settings(max_examples=examples(500), deadline=None)
@given(
    a=st.text(alphabet="abcAB _(transfer)xyzé ", max_size=14),
    b=st.text(alphabet="abcAB _(transfer)xyzé ", max_size=14),
)
def test_station_match_equals_difflib_rule(a: str, b: str) -> None:
    # the early rejections (length and character-multiset bounds) never change the answer,
    # and the order (reference first) is the released one: ratio is not symmetric
    assert station_match(a, b) == (released_scores(b, [a])[1] == 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [9, 1])
def test_baselines_on_mini_score_as_the_released_scorer(tmp_path: Path, seed: int) -> None:
    """Every bare-route answer of the shortest and random baselines on ``mini``: maptab's
    paper EMA/PMA equal the released rules applied to the tagged route text."""
    runner = CliRunner()
    ds = tmp_path / "ds"
    res = runner.invoke(
        app, ["build", "--preset", "mini", "--seed", str(seed), "--out", str(ds), "--no-render"]
    )
    assert res.exit_code == 0, res.output
    gold = {r["id"]: r["routes"] for r in read_jsonl(ds / "rp.jsonl")}
    compared = 0
    for model in ("shortest", "random"):
        run = tmp_path / model
        args = [str(ds), "--model", model, "--categories", "rp", "--out", str(run)]
        res = runner.invoke(app, ["run", *args, "--no-progress"])
        assert res.exit_code == 0, res.output
        assert runner.invoke(app, ["score", str(run)]).exit_code == 0
        answers = {p["id"]: p["response"] for p in read_jsonl(run / "predictions.jsonl")}
        rows = list(read_jsonl(run / "scores.jsonl"))
        assert len(rows) == len(answers) == len(gold) == 576
        for row in rows:
            text = released_route_text(answers[row["id"]])
            assert row["route"] == text  # a bare route: extraction changes nothing
            assert (row["ema"], row["pma"]) == released_scores(text, gold[row["id"]]), row["id"]
            compared += 1
    assert compared == 2 * 576
