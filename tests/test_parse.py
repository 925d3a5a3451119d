"""Response parsing (SPEC 12): examples, a round-trip property and fuzzing."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.score.parse import (
    _REASONING_TAGS,
    _ascii_lower,
    normalise_name,
    parse_answer,
    parse_reasonmap,
    parse_route,
    parse_totals,
    strip_reasoning,
)

VOCAB = ["Alpha", "Bravo", "Porta Furba_Quadraro", "Porta Furba-Quadraro", "Delta", "Porta Furba"]


# ----------------------------------------------------------------------------- reasoning
def test_strip_reasoning_blocks() -> None:
    assert strip_reasoning("<think>A-B</think>C-D") == "C-D"
    assert strip_reasoning("x<THINK>a</THINK>y<thinking>b</thinking>z") == "xyz"
    assert strip_reasoning("answer<think>never closed A-B-C") == "answer"
    assert strip_reasoning("reasoning without opening</think>A-B") == "A-B"
    assert strip_reasoning("<|begin_of_thought|>x<|end_of_thought|>A-B") == "A-B"
    assert strip_reasoning("◁think▷x◁/think▷A-B") == "A-B"
    # a block ends at the first closing tag of any kind (mismatched tags)
    assert strip_reasoning("<think></think><thinking><think></think>Alpha-Bravo") == "Alpha-Bravo"
    assert strip_reasoning("<think>a<thinking>b</think>c</thinking>A-B") == "A-B"


# ----------------------------------------------------------------------------- routes
def test_route_tagged_answer_wins() -> None:
    text = "Alpha-Delta\n<route_begin>Alpha-Bravo(transfer)-Delta<route_end>\nBravo-Delta"
    r = parse_route(text, VOCAB)
    assert r is not None
    assert r.stations == ["Alpha", "Bravo", "Delta"]
    assert r.transfers == {1}
    assert r.route_string() == "Alpha-Bravo(transfer)-Delta"


def test_route_last_parsing_line_and_reasoning_ignored() -> None:
    text = "<think>Alpha-Delta is short</think>Let me see.\nAlpha → Bravo → Delta\nThat's it."
    r = parse_route(text, VOCAB)
    assert r is not None and r.stations == ["Alpha", "Bravo", "Delta"]


def test_route_separators_and_markdown() -> None:
    for text in (
        "**Alpha - Bravo - Delta**",
        "`Alpha->Bravo->Delta`",
        "```\nAlpha – Bravo — Delta\n```",
        "- Route: Alpha ⟶ Bravo => Delta.",
        "1. **Answer:** Alpha-Bravo-Delta",
    ):
        r = parse_route(text, VOCAB)
        assert r is not None, text
        assert r.stations == ["Alpha", "Bravo", "Delta"], text


def test_route_separators_models_write() -> None:
    """Doubled em dash, full-width hyphen, ideographic and full-width commas, beside the
    separators read before; with and without a vocabulary."""
    for text in (
        "Alpha——Bravo——Delta",
        "Alpha —— Bravo —— Delta",
        "Alpha－Bravo － Delta",
        "Alpha、Bravo、Delta",
        "Alpha，Bravo， Delta",
        "路线：Alpha→Bravo（换乘）→Delta。",
        "答案，路线：Alpha-Bravo-Delta",
    ):
        for vocab in (VOCAB, None):
            r = parse_route(text, vocab)
            assert r is not None and r.stations == ["Alpha", "Bravo", "Delta"], (text, vocab)


# names that clean-up would eat into: trailing apostrophe (Hebrew geresh), trailing colon,
# Markdown underscores, a transfer mark inside a name, whitespace runs, a bullet-like start
HOSTILE = ["ג'", "צ'", "Terminal:", "Dock__", "Gare (transfer) Nord", "Old  Town", "1. Mai", "Str."]


def test_route_exact_station_names_before_clean_up() -> None:
    cases = {
        "<route_begin>ג'-Terminal:(transfer)-צ'<route_end>": (["ג'", "Terminal:", "צ'"], {1}),
        "Terminal:-Dock__-Gare (transfer) Nord": (["Terminal:", "Dock__", "Gare (transfer) Nord"], set()),
        "1. Mai-Old  Town(transfer)-Str.": (["1. Mai", "Old  Town", "Str."], {1}),
        "**ג' → צ'**": (["ג'", "צ'"], set()),
        "Route: Terminal: -> ג'.": (["Terminal:", "ג'"], set()),
        "- Gare (transfer) Nord (Transfer) — Dock__": (["Gare (transfer) Nord", "Dock__"], {0}),
        "The route is:\nStr.-1. Mai\nTotal_Time: 3": (["Str.", "1. Mai"], set()),
    }  # fmt: skip
    for text, (stations, marks) in cases.items():
        r = parse_route(text, HOSTILE)
        assert r is not None and (r.stations, r.transfers) == (stations, marks), text
    # without the vocabulary the clean-up applies as before
    r = parse_route("ג'-צ'", None)
    assert r is not None and r.stations == ["ג'", "צ"]


def test_route_transfer_mark_variants() -> None:
    for mark in ("(transfer)", " (Transfer)", "( TRANSFER )", "（transfer）", "[transfer]"):
        r = parse_route(f"Alpha-Bravo{mark}-Delta", VOCAB)
        assert r is not None and r.transfers == {1} and r.stations[1] == "Bravo", mark


def test_route_hyphenated_names_from_vocabulary() -> None:
    r = parse_route("Alpha-Porta Furba-Quadraro(transfer)-Delta", VOCAB)
    assert r is not None
    assert r.stations == ["Alpha", "Porta Furba-Quadraro", "Delta"]
    assert r.transfers == {1}
    assert r.tokens() == ["Alpha", "Porta Furba_Quadraro(transfer)", "Delta"]
    # a transfer mark inside a merged name blocks the merge: two stations
    r = parse_route("Alpha-Porta Furba(transfer)-Quadraro", VOCAB)
    assert r is not None and r.stations == ["Alpha", "Porta Furba", "Quadraro"]
    # spaced separators never merge
    r = parse_route("Porta Furba - Quadraro - Delta", VOCAB)
    assert r is not None and r.stations == ["Porta Furba", "Quadraro", "Delta"]
    # without a vocabulary every hyphen separates
    r = parse_route("Alpha-Porta Furba-Quadraro-Delta")
    assert r is not None and len(r.stations) == 4


def test_route_prose_around_the_route_is_trimmed_with_vocabulary() -> None:
    r = parse_route("So the best route is Alpha → Bravo → Delta for you", VOCAB)
    assert r is not None and r.stations == ["Alpha", "Bravo", "Delta"]


def test_route_prefers_lines_made_of_vocabulary_names() -> None:
    text = "Alpha-Bravo-Delta\nThis is a time-efficient choice"
    r = parse_route(text, VOCAB)
    assert r is not None and r.stations == ["Alpha", "Bravo", "Delta"]


def test_route_unparseable() -> None:
    for text in ("", "I cannot answer.", "<think>Alpha-Bravo</think>", "-", "Alpha", "a--b"):
        assert parse_route(text, VOCAB) is None, text


# ----------------------------------------------------------------------------- QA / totals
def test_parse_answer() -> None:
    assert parse_answer("<answer_begin>Yes<answer_end>") == 1.0
    assert parse_answer("<answer_begin> no <answer_end>") == 0.0
    assert parse_answer("<answer_begin>3.50<answer_end>") == 3.5
    assert parse_answer("<answer_begin>1,234<answer_end>") == 1234.0
    assert parse_answer("<answer_begin>There are 7 stations.<answer_end>") == 7.0
    assert parse_answer("<think>maybe 3</think>The answer is\n**12**") == 12.0
    assert parse_answer("Answer: -2.5") == -2.5
    assert parse_answer("no idea at all, yes") is None  # yes and no: ambiguous
    assert parse_answer("") is None


def test_parse_totals() -> None:
    text = "<think>Total_Time: 1</think>A-B\nTotal_Time: 14.12\n**Total Price**: 2.39\naverage comfort level = 0.5575\nAverage_Reliability: 0.755"
    assert parse_totals(text) == {
        "Total_Time": 14.12,
        "Total_Price": 2.39,
        "Average_Comfort Level": 0.5575,
        "Average_Reliability": 0.755,
    }
    assert parse_totals("no totals") == {}


# ----------------------------------------------------------------------------- ReasonMap
def test_parse_reasonmap_segments() -> None:
    text = (
        "<think>Route Name: wrong</think>"
        "Route Name: Line 1\nDeparture Stop: A Station\nArrival Stop: C Station\n"
        "Number of Via Stops: 1\n--\n"
        "Route Name: Line 2 Departure Stop: C Station Arrival Stop: F Station Number of Via Stops: 0"
    )
    segs = parse_reasonmap(text, "long")
    assert segs is not None and len(segs) == 2
    assert (segs[0].route_name, segs[0].departure_stop, segs[0].arrival_stop) == (
        "Line 1",
        "A Station",
        "C Station",
    )
    assert segs[0].num_via_stops == 1 and segs[1].num_via_stops == 0
    segs = parse_reasonmap(
        "Route Name: L\nDeparture Stop: A\nArrival Stop: D\nVia Stops: B, C", "long"
    )
    assert segs is not None and segs[0].via_stops == ["B", "C"]
    assert parse_reasonmap("Route Name: L only", "short") is None
    assert parse_reasonmap("nothing", "short") is None


# ----------------------------------------------------------------------------- properties
_word = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéüß", min_size=1, max_size=8
)
_name = st.lists(_word, min_size=1, max_size=3).flatmap(
    lambda ws: st.lists(
        st.sampled_from([" ", "-"]), min_size=len(ws) - 1, max_size=len(ws) - 1
    ).map(lambda js: ws[0] + "".join(j + w for j, w in zip(js, ws[1:], strict=True)))
)
_SEPS = ["-", " - ", "->", " → ", "–", " — ", " => "]
_MARKS = ["(transfer)", " (Transfer)", "( TRANSFER )", "（transfer）", "[transfer]"]
_WRAPS = [
    "{r}",
    "**{r}**",
    "`{r}`",
    "- {r}",
    "1. {r}.",
    "Route: {r}",
    "<route_begin>{r}<route_end>",
    "<think>Alpha-Bravo-Charlie</think>\n{r}\nHope this helps!",
    "```\n{r}\n```",
]


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    vocab=st.lists(_name, min_size=3, max_size=12, unique_by=normalise_name),
    data=st.data(),
)
def test_property_formatted_route_is_recovered(vocab: list[str], data: st.DataObject) -> None:
    k = data.draw(st.integers(2, len(vocab)))
    route = data.draw(st.permutations(vocab))[:k]
    keys = {normalise_name(v) for v in vocab}
    # the route must not be ambiguous: no run of consecutive names joined by '-' is a name
    for i in range(k):
        for j in range(i + 2, k + 1):
            assume(normalise_name("-".join(route[i:j])) not in keys)
    marks = data.draw(st.sets(st.integers(1, k - 2))) if k > 2 else set()
    parts = [
        name + (data.draw(st.sampled_from(_MARKS)) if i in marks else "")
        for i, name in enumerate(route)
    ]
    text = parts[0]
    for p in parts[1:]:
        text += data.draw(st.sampled_from(_SEPS)) + p
    text = data.draw(st.sampled_from(_WRAPS)).format(r=text)
    vocabulary = vocab + [v.replace("-", "_") for v in vocab]
    got = parse_route(text, vocabulary)
    assert got is not None, text
    assert [normalise_name(s) for s in got.stations] == [normalise_name(s) for s in route], text
    assert got.transfers == marks, text


@settings(max_examples=examples(300), deadline=None)
@given(text=st.text(), vocab=st.lists(st.text(max_size=20), max_size=8))
def test_fuzz_parsers_never_crash(text: str, vocab: list[str]) -> None:
    r = parse_route(text, vocab)
    assert r is None or len(r.stations) >= 2
    parse_route(text)
    parse_answer(text)
    parse_totals(text)
    for mode in ("short", "long"):
        parse_reasonmap(text, mode)


@settings(max_examples=examples(40), deadline=None)
@given(
    chunk=st.text(min_size=1, max_size=30),
    reps=st.integers(1000, 20000),
)
def test_fuzz_huge_inputs(chunk: str, reps: int) -> None:
    text = chunk * reps
    parse_route(text, ["a", "b-c", "Ω-Ж-ﷺ"])
    parse_answer(text)
    parse_reasonmap(text, "long")


def test_long_route_with_merges() -> None:
    vocab = [f"S{i}" for i in range(500)] + ["S1-S2"]
    text = "-".join(f"S{i % 500}" for i in range(20_000))
    r = parse_route(text, vocab)
    assert r is not None
    assert len(r.stations) == 20_000 - 40  # each S1-S2 pair (40 of them) merged into one name
    assert r.stations[1] == "S1-S2"
    assert parse_route(None, vocab) is None  # type: ignore[arg-type]


def test_trailing_full_stop_kept_when_it_belongs_to_a_station():
    vocab = ["Düren", "Rädelstr."]
    assert parse_route("<route_begin>Düren-Rädelstr.<route_end>", vocab).stations == [
        "Düren",
        "Rädelstr.",
    ]
    assert parse_route("Düren-Rädelstr.", ["Düren", "Rädelstr"]).stations == ["Düren", "Rädelstr"]


def test_case_insensitive_tags_keep_offsets_for_any_script() -> None:
    # "İ".lower() is two characters: offsets found in a str.lower() copy drift past it
    vocab = ["Kabataş", "Taksim", "Şişhane", "İstiklal"]
    text = "<THINK>İstiklal, İstanbul: İ İ İ</THINK>\nKabataş-Taksim(transfer)-Şişhane"
    r = parse_route(text, vocab)
    assert r is not None and r.stations == ["Kabataş", "Taksim", "Şişhane"] and r.transfers == {1}
    text = "İİİİ İstiklal? <Route_Begin>Kabataş-Taksim<ROUTE_END> İ"
    r = parse_route(text, vocab)
    assert r is not None and r.stations == ["Kabataş", "Taksim"]
    assert parse_answer("İİİİİİ <answer_begin>12<answer_end>") == 12.0


def test_stray_and_nested_closing_tags_end_the_reasoning() -> None:
    assert strip_reasoning("<think>a</think>b-c</think>Alpha-Delta") == "Alpha-Delta"
    assert strip_reasoning("<think>x<think>Alpha-Bravo</think>y</think>Alpha-Delta") == (
        "Alpha-Delta"
    )
    r = parse_route("<think>plan</think>Bravo-Alpha, no wait</think>Alpha-Bravo-Delta", VOCAB)
    assert r is not None and r.stations == ["Alpha", "Bravo", "Delta"]


# hard fragments: every tag, separator, mark, field name and number form the parsers look for
_HARD = [
    "<think>", "</think>", "<THINK>", "<thinking>", "</thinking>", "<reasoning>",
    "</reasoning>", "<|begin_of_thought|>", "<|end_of_thought|>", "◁think▷", "◁/think▷",
    "<route_begin>", "<route_end>", "<ROUTE_BEGIN>", "<answer_begin>", "<answer_end>",
    "(transfer)", " (Transfer) ", "（transfer）", "[transfer]", "(", ")", "[", "】",
    "-", "--", " - ", "->", "→", "—", "–", "−", "=>", "⇒", ":", "：", ".", ",", "、",
    "\n", "\r\n", "\u2028", "\x00", "\x00T", " ", "\t", "**", "`", "```\n", "# ", "> ", "1. ",
    "* ", "- ", "Route:", "Answer: ", "Route Name:", "Departure Stop:", "Arrival Stop:",
    "Number of Via Stops:", "Via Stops:", "none", "Total_Time:", "total price =",
    "Average_Reliability: ", "1e309", "-0", "1,234.5", "−3", ".5", "NaN", "inf", "12", "yes",
    "no", "是", "否", "İ", "ß", "é", "\u0301", "ﷺ", "🚇", "Alpha", "Bravo", "Delta",
    "Porta Furba", "Quadraro", "Porta Furba-Quadraro", "Porta Furba_Quadraro",
]  # fmt: skip
_hard_text = st.lists(st.one_of(st.sampled_from(_HARD), st.text(max_size=4)), max_size=60).map(
    "".join
)


@settings(max_examples=examples(400), deadline=None)
@given(text=_hard_text)
def test_fuzz_hard_inputs_give_well_formed_results(text: str) -> None:
    for vocab in (VOCAB, None):
        r = parse_route(text, vocab)
        if r is not None:
            assert len(r.stations) >= 2
            assert all(s and s == s.strip() and "\x00" not in s for s in r.stations), r
            assert r.transfers <= set(range(len(r.stations)))
            assert len(r.tokens()) == len(r.stations)
    a = parse_answer(text)
    assert a is None or (isinstance(a, float) and math.isfinite(a))
    totals = parse_totals(text)
    assert set(totals) <= {
        "Total_Time",
        "Total_Price",
        "Average_Comfort Level",
        "Average_Reliability",
    }
    assert all(math.isfinite(v) for v in totals.values())
    for mode in ("short", "long"):
        segs = parse_reasonmap(text, mode)
        assert segs is None or len(segs) >= 1
        for seg in segs or []:
            assert seg.route_name and seg.departure_stop and seg.arrival_stop
            assert seg.num_via_stops is None or seg.num_via_stops >= 0
            assert seg.via_stops is None or all(seg.via_stops)
    # no closing reasoning tag survives, and a finished block never leaks into the answer
    # (``text`` may open further blocks inside it; closing tags inside it would end the
    # block early, and text between blocks is kept by design)
    stripped = _ascii_lower(strip_reasoning(text))
    assert not any(close in stripped for _, close in _REASONING_TAGS)
    inner = _ascii_lower(text)
    while any(close in inner for _, close in _REASONING_TAGS):
        for _, close in _REASONING_TAGS:
            inner = inner.replace(close, "")
    assert strip_reasoning("<think>" + inner + "</think>Alpha-Bravo") == "Alpha-Bravo"


_PIECE = st.text(alphabet="ab _-ÁB\u0301 ", min_size=1, max_size=6)


@settings(max_examples=examples(400), deadline=None)
@given(
    names=st.lists(_PIECE, min_size=1, max_size=8),
    pieces=st.lists(_PIECE.filter(str.strip), min_size=2, max_size=7),
    seps=st.data(),
)
def test_segment_head_filter_changes_nothing(
    names: list[str], pieces: list[str], seps: st.DataObject
) -> None:
    """_segment skips merges that start at a piece no vocabulary key starts with; with a
    filter that lets every piece start a merge, the DP must group the pieces the same way."""
    from dataclasses import replace

    from maptab.score.parse import _TRANSFER_TOKEN, _make_vocab, _segment

    pieces = [p + _TRANSFER_TOKEN if seps.draw(st.booleans()) else p for p in pieces]
    between = [seps.draw(st.sampled_from(["-", "-", " - ", "→"])) for _ in pieces[1:]]
    # the vocabulary: the names, and some runs of pieces joined by '-' (so merges happen)
    joined = [
        "-".join(p.replace(_TRANSFER_TOKEN, "") for p in pieces[i:j])
        for i in range(len(pieces))
        for j in range(i + 2, len(pieces) + 1)
    ]
    vocab = _make_vocab(names + seps.draw(st.lists(st.sampled_from(joined), max_size=4)))
    every = replace(vocab, heads=frozenset(normalise_name(p) for p in pieces))
    assert _segment(pieces, between, vocab) == _segment(pieces, between, every)


@settings(max_examples=examples(500), deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from(["a", "B", " ", "\t", "\x1c", "\x01", "\x00T", "\x00", "T", "é"]),
            max_size=6,
        ).map("".join),
        min_size=1,
        max_size=6,
    )
)
def test_names_of_groups_equal_one_by_one(groups: list[str]) -> None:
    """_names works on the joined groups; it must give what each group gives alone."""
    from maptab.score.parse import _TRANSFER_TOKEN, _names

    expected = [" ".join(g.replace(_TRANSFER_TOKEN, " ").split()) for g in groups]
    assert _names(groups) == expected
