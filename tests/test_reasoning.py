"""The one reasoning splitter (maptab._reasoning) against a brute-force reading of its rule."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab._reasoning import REASONING_TAGS, split_reasoning, strip_reasoning
from maptab.run.providers import split_reasoning as provider_split
from maptab.score.parse import strip_reasoning as score_strip

OPENS = [o for o, _ in REASONING_TAGS]
CLOSES = [c for _, c in REASONING_TAGS]


def _tokens(text: str) -> list[tuple[str, str]]:
    """``text`` as ``("open"|"close"|"char", raw)`` tokens, trying every tag at every index
    (ASCII case-insensitive); tags never overlap a prefix of one another, so the first that
    matches at an index is the only one."""
    low = "".join(c.lower() if c.isascii() else c for c in text)
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        for kind, tags in (("open", OPENS), ("close", CLOSES)):
            hit = next((t for t in tags if low.startswith(t, i)), None)
            if hit:
                out.append((kind, text[i : i + len(hit)]))
                i += len(hit)
                break
        else:
            out.append(("char", text[i]))
            i += 1
    return out


def _reference_pass(text: str) -> str:
    """One pass of the documented rule, as a state machine over tokens."""
    kept: list[tuple[str, str]] = []
    inside = False
    for kind, raw in _tokens(text):
        if inside:
            inside = kind != "close"
        elif kind == "open":
            inside = True
        else:
            kept.append((kind, raw))
    # a leftover closing tag: everything up to and including the last one is reasoning
    last = max((i for i, (k, _) in enumerate(kept) if k == "close"), default=-1)
    return "".join(raw for _, raw in kept[last + 1 :])


def _reference(text: str) -> str:
    while True:
        out = _reference_pass(text)
        if out == text:
            return out
        text = out


PIECES = st.sampled_from(
    [
        *OPENS,
        *CLOSES,
        "<THINK>",
        "</Thinking>",
        "<",
        ">",
        "think",
        "/",
        "|",
        "◁",
        "▷",
        "A-B",
        " ",
        "\n",
        "x",
        "İ",
        "<thi",
        "nk>",
    ]
)
TEXTS = st.lists(PIECES, max_size=14).map("".join) | st.text(max_size=40)


@settings(max_examples=examples(600), deadline=None)
@given(TEXTS)
def test_strip_matches_the_brute_force_rule(text):
    assert strip_reasoning(text) == _reference(text)


@settings(max_examples=examples(400), deadline=None)
@given(TEXTS)
def test_answers_hold_no_tag_and_stripping_again_changes_nothing(text):
    answer = strip_reasoning(text)
    assert all(kind == "char" for kind, _ in _tokens(answer))
    assert strip_reasoning(answer) == answer
    got, _ = split_reasoning(text)
    assert got == answer.strip()
    # what the run stage records scores like the raw reply
    assert score_strip(got) == score_strip(text).strip()


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=60).filter(lambda t: "<" not in t and "◁" not in t))
def test_text_without_tags_is_untouched(text):
    assert strip_reasoning(text) == text
    assert split_reasoning(text) == (text.strip(), "")


def test_documented_forms_and_the_reasoning_kept():
    for o, c in REASONING_TAGS:
        assert split_reasoning(f"{o} plan {c} A-B ") == ("A-B", "plan")
    assert split_reasoning("a</think>B") == ("B", "a")  # template opened the block
    assert split_reasoning("<think>cut off") == ("", "cut off")
    assert split_reasoning("<THINKING>x</THINKING>y<think>z</think>") == ("y", "x\n\nz")
    # mismatched tags end a block; a stray closing tag ends the reasoning
    assert split_reasoning("<think>x</reasoning>A") == ("A", "x")
    assert split_reasoning("<think>x</think>y</think>z") == ("z", "x\n\ny")
    # removing a block cannot assemble a new tag that survives
    assert strip_reasoning("<thi<think>x</think>nk>A-B") == ""
    assert provider_split is split_reasoning  # one function, re-exported
