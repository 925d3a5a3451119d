"""Leaderboard tables: numbers recomputed from hand-written score rows, and the renderers."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from maptab.report import leaderboard, leaderboard_rows
from maptab.report.loader import ReportError, Run, load_runs
from maptab.report.qa_view import capability_cell, qa_table
from maptab.report.reasonmap_view import reasonmap_table
from maptab.report.rp_view import repetition_table
from maptab.report.tables import Cell, leaderboard_notes, to_csv, to_latex, to_markdown
from maptab.report.views import build_tables, leaderboard_table, paired_table


def rp(i, *, strict, ema=None, pma=1.0, ds=0, map_id="m1", cat="time", rep="FR", gap=0.0, **kw):
    ema = int(strict) if ema is None else ema
    row = {
        "id": f"rp-{i}", "kind": "rp", "map_id": map_id, "scenario": "metromap",
        "category": cat, "map_difficulty": "Easy", "query_difficulty": "Hard",
        "repetition": rep, "parsed": True, "route": "A-B", "ema": ema, "pma": pma, "ds": ds,
        "valid": True, "optimal": strict, "transfers_ok": True, "strict": strict, "gap": gap,
        "lenient_false_accept": bool(ema) and not strict, "totals": None,
        "error_type": None if strict else "Path Search",
    }  # fmt: skip
    row.update(kw)
    return row


def qa(i, qtype, correct, caps, map_id="m1"):
    return {
        "id": f"qa-{i}", "kind": "qa", "map_id": map_id, "scenario": "metromap", "type": qtype,
        "capabilities": caps, "parsed": True, "pred": 1.0, "answer": 1.0, "correct": correct,
        "error_type": None,
    }  # fmt: skip


def run(name, rows):
    return Run(Path(name), name, {}, {}, rows)


def cell(table, row, label):
    return table.rows[row][[c.label for c in table.columns].index(label)]


def test_leaderboard_numbers_are_the_exact_shares_with_intervals_around_them():
    rows = [rp(i, strict=i % 4 != 0, ds=4 * (i % 4 != 0), map_id=f"m{i % 5}") for i in range(12)]
    t = leaderboard_table([run("a", rows)])
    strict = cell(t, 0, "RP Strict")
    assert strict.value == pytest.approx(9 / 12)
    assert strict.lo <= strict.value <= strict.hi and strict.lo < strict.hi
    assert cell(t, 0, "RP DS").value == pytest.approx(36)
    assert cell(t, 0, "RP n").value == 12
    assert str(strict).startswith("75.0 [")


def test_capability_is_the_mean_of_per_type_accuracies_not_of_samples():
    rows = [qa(0, 1, True, ["Visual Perception"])]
    rows += [qa(i, 2, False, ["Visual Perception", "Numerical Reasoning"]) for i in range(1, 4)]
    assert capability_cell(rows, "Visual Perception").value == pytest.approx(0.5)
    assert capability_cell(rows, "Numerical Reasoning").value == pytest.approx(0.0)
    t = qa_table([run("a", rows)], "metromap")
    assert [c.name for c in t.columns][2:4] == ["VP", "NR"]  # paper abbreviations and order
    assert cell(t, 0, "All Acc").value == pytest.approx(0.25)
    assert cell(t, 0, "Type Q1").value == 1.0 and cell(t, 0, "Type Q2").value == 0.0


def test_repetition_table_splits_by_class_and_reports_totals_letters():
    rows = [
        rp(0, strict=True, rep="FR", totals={"T": True, "P": False}),
        rp(1, strict=False, rep="NR", pma=0.5, totals={"T": False, "P": False}),
        rp(2, strict=True, rep="NR", cat="price"),
        rp(3, strict=True, cat="map_only", rep=None),  # criteria-free: not in Table 4
    ]
    t = repetition_table([run("a", rows)], "metromap")
    labels = [r[1].value for r in t.rows]
    assert labels == ["Time", "Price", "All criteria"]
    assert cell(t, 0, "FR EMA").value == 1.0 and cell(t, 0, "NR EMA").value == 0.0
    assert cell(t, 0, "NR PMA").value == 0.5 and cell(t, 0, "PR EMA").value is None
    assert cell(t, 0, "Totals T").value == 0.5 and cell(t, 0, "Totals P").value == 0.0
    assert cell(t, 0, "Totals C").value is None
    assert cell(t, 2, "All EMA").value == pytest.approx(2 / 3)


def test_reasonmap_table_weights_by_difficulty():
    def rm(i, mode, correct, weight):
        return {
            "id": f"q{i}/{mode}", "kind": "reasonmap", "mode": mode, "map_id": f"m{i}",
            "parsed": True, "correct": correct, "correct_strict": False,
            "map_score": 20.0 if correct else 4.0, "max_score": 20, "weight": weight,
        }  # fmt: skip

    rows = [rm(0, "short", True, 3.0), rm(1, "short", False, 1.0), rm(2, "long", True, 1.0)]
    t = reasonmap_table([run("a", rows)])
    assert cell(t, 0, "Acc S.").value == 0.5
    assert cell(t, 0, "W.Acc S.").value == pytest.approx(0.75)
    assert cell(t, 0, "Map score S.").value == pytest.approx(12.0)
    assert cell(t, 0, "W.Map score S.").value == pytest.approx((60 + 4) / 4)
    assert cell(t, 0, "Acc L.").value == 1.0 and cell(t, 0, "Acc strict L.").value == 0.0
    # the note says why a perception-free baseline scores 100% and the oracle less than the
    # nominal maximum, in the Markdown and LaTeX a reader gets
    md, tex = to_markdown(t), to_latex(t)
    for text in ("S.: short questions, L.: long questions", "perception-free", "valid route"):
        assert text in md and text in tex
    assert "differs per question (SPEC 14)" in md and "15 of 20 (short)" in md
    board = leaderboard_table([run("a", rows)])
    assert [c.label for c in board.columns][-3:] == [
        "ReasonMap n", "ReasonMap W.Acc", "ReasonMap W.Score",
    ]  # fmt: skip
    notes = " ".join(leaderboard_notes(board))
    assert "n counts answers, not questions" in notes and "perception-free" in notes
    assert not leaderboard_notes(leaderboard_table([run("b", [rp(0, strict=True)])]))


def test_paired_difference_uses_only_common_samples():
    base = [rp(i, strict=True, map_id=f"m{i % 4}") for i in range(8)]
    other = [rp(i, strict=i < 2, map_id=f"m{i % 4}") for i in range(6)]  # 2 fewer samples
    t = paired_table([run("base", base), run("other", other)])
    strict = next(r for r in t.rows if r[1].value == "RP metromap strict")
    assert strict[2].value == 6
    assert strict[3].value == pytest.approx(2 / 6 - 1)
    assert strict[3].lo <= strict[3].value <= strict[3].hi < 0  # a real loss
    assert paired_table([run("base", base)]) is None


def test_renderers_escape_and_carry_intervals():
    rows = [rp(i, strict=i % 2 == 0, map_id=f"m{i}") for i in range(6)]
    tables = build_tables([run("a|b <i>x</i> 50% _c_ & {d}", rows)])
    board = tables[0]
    md = to_markdown(board)
    assert "a\\|b &lt;i&gt;x&lt;/i&gt;" in md and "<i>" not in md
    assert "| RP Strict |" in md and "50.0 [" in md
    parsed = list(csv.DictReader(io.StringIO(to_csv(board))))
    assert parsed[0]["Model"] == "a|b <i>x</i> 50% _c_ & {d}"
    assert float(parsed[0]["RP Strict"]) == 50.0
    assert float(parsed[0]["RP Strict_lo"]) <= 50.0 <= float(parsed[0]["RP Strict_hi"])
    tex = to_latex(board)
    assert r"a|b <i>x</i> 50\% \_c\_ \& \{d\}" in tex
    assert r"\multicolumn{6}{c}{RP}" in tex and r"\cmidrule(lr){2-7}" in tex
    assert tex.count(r"\\") == 3  # group header, column header, one row
    assert {t.key for t in tables} >= {"leaderboard", "rp_metromap", "rp_strict_metromap"}


def test_cell_printing():
    assert str(Cell(0.1234, 0.1, 0.2, "pct")) == "12.3 [10.0, 20.0]"
    assert str(Cell(-0.05, -0.1, 0.01, "pp")) == "-5.0 [-10.0, +1.0]"
    assert str(Cell(None, kind="pct")) == "–"
    assert str(Cell(12.0, 10.0, 14.0, "int")) == "12 [10, 14]"


def test_loader_errors_name_the_folder(tmp_path):
    with pytest.raises(ReportError, match="no scores.jsonl"):
        load_runs([tmp_path])
    (tmp_path / "scores.jsonl").write_text('{"id": "x", "kind": "rp"}\n')
    with pytest.raises(ReportError, match=r"scores.jsonl:1: field 'map_id' is missing"):
        load_runs([tmp_path])
    (tmp_path / "scores.jsonl").write_text("{not json\n")
    with pytest.raises(ReportError, match=r"scores.jsonl:1"):
        load_runs([tmp_path])


def test_leaderboard_from_run_folders_and_duplicate_names(tmp_path):
    from test_report_fixture import make_runs

    _, runs = make_runs(tmp_path)
    loaded = load_runs([runs[0], runs[0]])
    assert loaded[0].name != loaded[1].name
    table = leaderboard(runs)  # one column per run, one row per metric
    headers = [c.header for c in table.columns]
    assert headers[:3] == ["metric", "oracle", "shortest"]
    assert headers[3].startswith("chaos <script>")  # shown as text, never as markup
    metrics = list(table.columns[0].cells)
    assert metrics[:3] == ["RP n", "RP Strict", "RP EMA"]
    assert table.row_count == len(leaderboard_rows(runs).columns) - 1
