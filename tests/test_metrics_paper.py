"""Paper-compatible EMA / PMA / DS (SPEC 13), by hand and against a direct difflib reference."""

from __future__ import annotations

from difflib import SequenceMatcher

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maptab.score.paper import (
    difficulty_score,
    ema,
    paper_scores,
    pma,
    reference_tokens,
    station_match,
)

GOLD = "Triskett-West 117th_Madison-West Boulevard_Cudell(transfer)-West 65th_Lorain-West 25th_Ohio City"


def test_station_match_rule() -> None:
    assert station_match("Triskett", " triskett ")
    assert station_match("Triskett", "Triskit")  # ratio 0.8
    assert not station_match("Triskett", "Lorain")
    # ratio("abcd", "abxy") = 2*2/8 = 0.5: the threshold is inclusive
    assert station_match("abcd", "abxy")
    assert not station_match("abcd", "axyz")  # 2*1/8 = 0.25
    # a transfer mark demands identical (lower-cased, stripped) strings
    assert station_match("Cudell(transfer)", " cudell(TRANSFER) ")
    assert not station_match("Cudell(transfer)", "Cudell (transfer)")
    assert not station_match("Cudell(transfer)", "Cudell")
    assert not station_match("Cudell", "Cudell(transfer)")


def test_ema_pma_by_hand() -> None:
    refs = [GOLD]
    exact = reference_tokens(GOLD)
    assert ema(exact, refs) == 1 and pma(exact, refs) == 1.0
    # misspelt station still matches (ratio >= 0.5)
    typo = list(exact)
    typo[1] = "West 117 Madison"
    assert ema(typo, refs) == 1
    # missing transfer mark: the third station fails; prefix 2 of 5
    nomark = list(exact)
    nomark[2] = "West Boulevard_Cudell"
    assert ema(nomark, refs) == 0 and pma(nomark, refs) == pytest.approx(2 / 5)
    # one station short: not exact, prefix 4 of 5
    assert ema(exact[:4], refs) == 0 and pma(exact[:4], refs) == pytest.approx(4 / 5)
    # longer than the reference: PMA counts the full reference, EMA 0
    assert ema([*exact, "Extra"], refs) == 0 and pma([*exact, "Extra"], refs) == 1.0
    # first station wrong: nothing matched
    assert pma(["Lorain", *exact[1:]], refs) == 0.0
    # best over references
    refs2 = ["A1-Bx-Cq", GOLD]
    assert pma(exact[:3], refs2) == pytest.approx(3 / 5)
    assert ema(None, refs) == 0 and pma(None, refs) == 0.0
    # a route string is tokenised like the references
    assert ema(GOLD, refs) == 1


def test_difficulty_score() -> None:
    assert difficulty_score(1, "Easy", "Easy") == 2
    assert difficulty_score(1, "Hard", "Medium") == 5
    assert difficulty_score(1, "hard", "hard") == 6
    assert difficulty_score(0, "Hard", "Hard") == 0
    with pytest.raises(ValueError, match="unknown difficulty"):
        difficulty_score(1, "Impossible", "Easy")


def _reference_match(a: str, b: str) -> bool:
    a, b = a.strip().lower(), b.strip().lower()
    if "(transfer)" in a or "(transfer)" in b:
        return a == b
    return SequenceMatcher(None, a, b).ratio() >= 0.5


def _reference_scores(pred: list[str], refs: list[list[str]]) -> tuple[int, float]:
    """The definition, written out the long way."""
    e = int(
        any(
            len(pred) == len(r)
            and all(_reference_match(a, b) for a, b in zip(pred, r, strict=True))
            for r in refs
        )
    )
    best = 0.0
    for r in refs:
        k = 0
        while k < min(len(pred), len(r)) and _reference_match(pred[k], r[k]):
            k += 1
        best = max(best, k / len(r))
    return e, best


_tok = st.sampled_from(["ab", "abc", "Abd", "xyz", "ab(transfer)", "AB(transfer)", "x y", " ab "])


@settings(max_examples=300, deadline=None)
@given(
    pred=st.lists(_tok, min_size=1, max_size=6),
    refs=st.lists(st.lists(_tok, min_size=1, max_size=6), min_size=1, max_size=3),
)
def test_paper_scores_equal_direct_definition(pred: list[str], refs: list[list[str]]) -> None:
    assert paper_scores(pred, refs) == _reference_scores(pred, refs)


@settings(max_examples=500, deadline=None)
@given(
    a=st.text(alphabet="abcAB _-(transfer)xyzé ", max_size=14),
    b=st.text(alphabet="abcAB _-(transfer)xyzé ", max_size=14),
)
def test_station_match_equals_difflib_rule(a: str, b: str) -> None:
    # the early rejections (length and character-multiset bounds) never change the answer
    assert station_match(a, b) == _reference_match(a, b)
    assert station_match(a + "(transfer)", b) == _reference_match(a + "(transfer)", b)
