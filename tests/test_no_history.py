"""The project describes itself in the present tense: no tracker numbers, no dated history.

Code comments, docstrings, docs and tests state what the code does and why. Where a
change came from (its tracker entry, the period of work it was made in, what was there
before it) belongs in version control, not in the text a user or maintainer reads. This test reads
every text file of the source tree, tests, benchmarks, scripts, docs, ``README.md``,
``Makefile`` and ``pyproject.toml`` (binaries, fonts, images, build outputs and the
shipped data files under ``src/maptab/data`` aside) and lists every line that matches one
of :data:`PATTERNS`, as ``file:line: [pattern] text``.

The patterns are few and chosen not to match ordinary technical prose: a hex colour
(``#1d2330``), ``# noqa``, "no longer than", "is used to show" or "1.0 before, 2.0 after"
pass. :func:`test_the_patterns_match_what_they_are_for` checks both directions on planted
lines (written as templates, filled in at run time), so the scan can fail. This file itself
is not scanned.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Folders and files read, relative to the repository root.
SCANNED = (
    "src",
    "tests",
    "benchmarks",
    "scripts",
    "docs",
    "README.md",
    "Makefile",
    "pyproject.toml",
)

#: Folders never read: shipped data, build outputs, caches.
SKIPPED_DIRS = ("src/maptab/data",)
SKIPPED_DIR_NAMES = {"__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}
SKIPPED_DIR_SUFFIXES = (".egg-info",)

#: Files never read, by suffix: images, fonts, archives, compiled and binary data.
BINARY_SUFFIXES = {
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".ico", ".svgz", ".pdf",
    ".ttf", ".otf", ".ttc", ".woff", ".woff2",
    ".gz", ".zip", ".tar", ".xz", ".bz2", ".zst", ".whl",
    ".pyc", ".so", ".npy", ".npz", ".pkl", ".pickle", ".parquet", ".arrow", ".onnx", ".bin",
}  # fmt: skip

_ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
    "thirteenth|fourteenth|fifteenth"
)

#: name -> pattern. Each matches a way of dating text by the project's history.
PATTERNS: dict[str, re.Pattern[str]] = {
    # the tracker's word followed by a number, with or without "#" or "-"
    "issue number": re.compile(r"\bissues?[ \t-]*#?\d+", re.IGNORECASE),
    # a tracker entry spoken of as the reader's context
    "the issue's": re.compile(r"\bthe issue's\b", re.IGNORECASE),
    # "(#42)", "PR #42", "pull request 42", "GH-42"; a bare "#42" would hit hex colours
    "pull request": re.compile(
        r"\(#\d+\)|\bPR[ \t]*#\d+|\bpull request[ \t]*#?\d+|\bGH-\d+", re.IGNORECASE
    ),
    # a period of work named by its ordinal
    "ordinal period": re.compile(rf"\b(?:{_ORDINALS})\s+session\b", re.IGNORECASE),
    # a period of work named by its number
    "numbered period": re.compile(r"\bsessions?[ \t]+#?\d+", re.IGNORECASE),
    # a period of work named relative to this one
    "relative period": re.compile(
        r"\b(?:previous|earlier|prior|later|this|that)\s+sessions?\b", re.IGNORECASE
    ),
    # the period of work itself
    "work period": re.compile(r"\bwork(?:ing)?\s+(?:periods?|sessions?)\b", re.IGNORECASE),
    # a sentence opening on what used to be: "Before, a run ...", "Previously, ..."
    "before, ...": re.compile(r"\b(?:Before|Previously|Formerly|Until now|Until recently),"),
    "formerly": re.compile(r"\bformerly\b", re.IGNORECASE),
    # "it used to read", "each used to ..." (not the passive "is used to show")
    "used to": re.compile(r"\b(?:it|they|this|that|each|we|which)\s+used\s+to\b", re.IGNORECASE),
    # "was tried and not kept", "two ways were tried"
    "tried": re.compile(
        r"\b(?:was|were)\s+tried\b|\btried\s+and\s+(?:not\s+kept|dropped|abandoned|reverted)\b",
        re.IGNORECASE,
    ),
}


def history_matches(line: str) -> list[str]:
    """The names of the :data:`PATTERNS` that ``line`` matches."""
    return [name for name, pattern in PATTERNS.items() if pattern.search(line)]


def _skipped(path: Path) -> bool:
    rel = path.relative_to(ROOT)
    parts = rel.parts
    if any(p in SKIPPED_DIR_NAMES or p.endswith(SKIPPED_DIR_SUFFIXES) for p in parts[:-1]):
        return True
    if any(rel.as_posix().startswith(d + "/") for d in SKIPPED_DIRS):
        return True
    return path.suffix.lower() in BINARY_SUFFIXES or path.resolve() == Path(__file__).resolve()


def scanned_files() -> list[Path]:
    """Every file :data:`SCANNED` names or holds, less the skipped ones, in path order."""
    out: list[Path] = []
    for name in SCANNED:
        top = ROOT / name
        if top.is_file():
            out.append(top)
        elif top.is_dir():
            out += [p for p in top.rglob("*") if p.is_file() and not _skipped(p)]
    return sorted(out)


def _text(path: Path) -> str | None:
    """The file as UTF-8 text; ``None`` for a binary file (a NUL byte, or not UTF-8)."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_the_patterns_match_what_they_are_for() -> None:
    planted = [
        line.format(issue="issue", Issue="Issue", session="session", Session="Session")
        for line in (
            "Score rows held compactly (SPEC 12; {issue} 16): read-only mappings",
            "# {issue} 10: regular file, size and depth limits",
            "Synthetic networks with geometry (SPEC 1; {issue}s 3, 13).",
            "See {issue} #12 for the details.",
            "is the {issue}-13 topology with the metro values drawn independently",
            "**The {issue}'s 5x target is met.**",
            "Merged in (#214).",
            "as measured in the thirteenth {session}",
            "#### Eighth {session}: one weighted sum",
            "measured in {session} 9 on a 2-core machine",
            "A later {session} ran the fourth round's final code",
            "On this {session}'s 2-core machine",
            "Ctrl-C reaches the whole process group. Before, a run of an oracle ...",
            "Previously, the scorer decoded every line twice.",
            "Each used to read them on its own",
            "Two other ways were tried and not kept.",
            "(a columnar summary was tried)",
            "the formerly separate QA module",
            "figures from the last work period",
        )
    ]
    legitimate = [
        "--fg: #1d2330; --muted: #667085; --card: #ffffff;",
        'color = colors[next(iter(lines))] if lines else "#555555"',
        "going = walk(path)  # noqa: F821 (deleted once the search is over)",
        "but no shorter than MIN_EDGE_PX and no longer than EDGE_PX",
        "Used to show per-sample shuffled tables to models (SPEC 5).",
        "the Mix_tab network used to cost map_mix queries",
        'print(f"load average: {a:.1f} before, {b:.1f} after")',
        "lh, eh, trh, before, now = leave[h], ec[h], tr[h], lines[h - 1], lines[h]",
        "stacked label is tried first; a quarter turn only on level track.",
        "{issue}d 3 warnings; the t{issue} 5 sample".format(issue="issue"),
        "a requests {s} is opened per worker; the first {s}less call".format(s="session"),
        "unknown errors are not retried",
        "Phase 2 inside one group: proportional shares",
    ]
    for line in planted:
        assert history_matches(line), f"no pattern matches the planted line {line!r}"
    for line in legitimate:
        assert not history_matches(line), f"{history_matches(line)} match {line!r}"
    used = {name for line in planted for name in history_matches(line)}
    assert used == set(PATTERNS), f"patterns without a planted line: {set(PATTERNS) - used}"


def test_the_scan_reads_the_tree() -> None:
    files = scanned_files()
    rel = {p.relative_to(ROOT).as_posix() for p in files}
    assert "README.md" in rel and "pyproject.toml" in rel
    assert any(r.startswith("src/maptab/") and r.endswith(".py") for r in rel)
    assert any(r.startswith("docs/") for r in rel)
    assert not any(r.startswith("src/maptab/data/") for r in rel)
    assert "tests/test_no_history.py" not in rel


def test_no_history_in_the_tree() -> None:
    found: list[str] = []
    for path in scanned_files():
        text = _text(path)
        if text is None:
            continue
        rel = path.relative_to(ROOT).as_posix()
        for n, line in enumerate(text.splitlines(), 1):
            names = history_matches(line)
            if names:
                found.append(f"{rel}:{n}: [{', '.join(names)}] {line.strip()[:120]}")
    assert not found, (
        f"{len(found)} line(s) speak of the project's history (state what the code does and"
        " why, in the present tense):\n" + "\n".join(found)
    )
