"""Whole-command scoring paths: the fast paths give what the general ones give.

* reading a row's fields without decoding all of it (:func:`_row_id`, the match index and
  :meth:`Dataset.records_of`: :func:`maptab.io.dataset.string_fields`; ``_fields_checked``, its
  full path) agrees with ``json.loads`` on any string, whatever the
  key order and nested objects;
* the results file decoded one sample at a time equals ``json.loads`` of it;
* the bare-route fast path of :func:`parse_route` equals the general path;
* scoring decodes only the rows it needs (a broken row nobody answers is not read; a broken
  row somebody answers names file and line), repeated answers give equal, separate rows, and
  ``score_run`` writes exactly what :func:`score_predictions` returns.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.schema import Prediction
from maptab.io.dataset import _fields_checked, string_fields
from maptab.score.parse import parse_route
from maptab.score.scorer import (
    UNSET,
    ScoreError,
    _results_samples,
    _results_samples_json,
    _ResultSample,
    _row_id,
    load_scores,
    score_predictions,
    score_run,
)
from maptab.score.workers import clean_json
from test_score_cli import RED, dataset, predictions  # noqa: F401 (fixture)

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)) | st.sampled_from('"\\/\n\t-:{}'),
    max_size=40,
)


@settings(max_examples=examples(300), deadline=None)
@given(sid=TEXT, question=TEXT, source=TEXT)
def test_fields_read_without_decoding_match_json(sid: str, question: str, source: str) -> None:
    from maptab.io.dataset import DatasetError
    from maptab.tasks.base import get

    row = {"id": sid, "map_id": "m", "question": question, "source": source, "n": [1]}
    for ascii_only in (True, False):
        line = json.dumps(row, ensure_ascii=ascii_only) + "\n"
        assert _row_id(line, "x") == sid
        for text in (line, line.encode()):
            keys = ("id", "question", "source")
            assert list(_fields_checked(get("rp"), text, keys, "f:1")) == [
                sid,
                question,
                source,
            ]
            with pytest.raises(DatasetError, match="^f:1: "):
                _fields_checked(get("rp"), text, ("id", "target"), "f:1")


MATCH_KEYS = ("id", "map_id", "category", "source", "target")


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rows=st.lists(st.fixed_dictionaries(dict.fromkeys(MATCH_KEYS, TEXT)), min_size=1, max_size=4),
    nested=st.booleans(),
    ascii_only=st.booleans(),
)
def test_match_index_fields_are_the_rows_top_level_values(
    tmp_path_factory: pytest.TempPathFactory, rows: list, nested: bool, ascii_only: bool
) -> None:
    """The match index reads each row's own fields, as json.loads gives them, whatever the
    key order and whatever nested objects (with the same keys) come first."""
    from maptab.tasks.base import get

    lines = []
    for r in rows:
        row = dict(reversed(r.items()))
        if nested:
            row = {"tables": {"source": "elsewhere", "id": "elsewhere"}, **row}
        lines.append(json.dumps(row, ensure_ascii=ascii_only))
    path = tmp_path_factory.mktemp("rows") / "rp.jsonl"
    path.write_text("\n \n\u3000\n".join(lines) + "\n", encoding="utf-8")  # blank lines
    got = [tuple(values) for *_, values in string_fields(get("rp"), path, MATCH_KEYS, path)]
    assert got == [tuple(json.loads(line)[k] for k in MATCH_KEYS) for line in lines]


def test_match_index_names_a_row_whose_field_is_not_a_string(tmp_path: Path) -> None:
    from maptab.io.dataset import DatasetError
    from maptab.tasks.base import get

    good = dict.fromkeys(MATCH_KEYS, "x")
    path = tmp_path / "rp.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | {"source": 3}) + "\n")
    with pytest.raises(DatasetError, match=r"rp\.jsonl:2: "):
        list(string_fields(get("rp"), path, MATCH_KEYS, path))
    path.write_bytes(json.dumps(good).encode() + b"\n" + b'{"id": "\xff"}\n')
    with pytest.raises(DatasetError, match=r"rp\.jsonl:2: not UTF-8"):
        list(string_fields(get("rp"), path, MATCH_KEYS, path))
    # a field the index reads is checked; one it skips is checked when the row is scored
    skipped = json.dumps({**good, "question": "Q"}).encode().replace(b'"Q"', b'"\xff"')
    path.write_bytes(json.dumps(good).encode() + b"\n" + skipped + b"\n")
    assert [v for *_, v in string_fields(get("rp"), path, MATCH_KEYS, path)] == [
        tuple(good.values())
    ] * 2


def test_row_id_falls_back_to_decoding_other_layouts() -> None:
    assert _row_id('{"map_id": "m", "id": "a\\"b"}', "x") == 'a"b'
    assert _row_id('{ "id" : "c" }', "x") == "c"
    assert _row_id('{"tables": {"id": "nested"}, "id": "top"}', "x") == "top"


def _as_read(sample: object) -> object:
    """What matching reads of one sample from ``_results_samples``: the fields it has, the
    question decoded (kept undecoded by the fast path), or the value itself."""
    if not isinstance(sample, _ResultSample):
        return sample
    out = {
        k: getattr(sample, k)
        for k in _ResultSample.__struct_fields__
        if getattr(sample, k) is not UNSET
    }
    if isinstance(out.get("question"), msgspec.Raw):
        out["question"] = json.loads(bytes(out["question"]))
    return out


MATCHED = ["response", "id", "question", "station_1", "city", "category", "model"]


@settings(max_examples=examples(150), deadline=None)
@given(
    samples=st.lists(
        st.dictionaries(st.sampled_from([*MATCHED, "routes"]), TEXT | st.integers() | st.none()),
        max_size=5,
    ),
    indent=st.sampled_from([None, 0, 4]),
)
def test_results_decoded_equal_json_load(
    tmp_path_factory: pytest.TempPathFactory, samples: list[dict], indent: int | None
) -> None:
    path = tmp_path_factory.mktemp("r") / "results.json"
    read = [{k: v for k, v in s.items() if k in MATCHED} for s in samples]
    path.write_text("\n " + json.dumps(samples, indent=indent) + " \n", encoding="utf-8")
    assert [_as_read(s) for s in _results_samples(path)] == read
    path.write_text(json.dumps({"results": samples}), encoding="utf-8")
    assert [_as_read(s) for s in _results_samples(path)] == read


def _outcome(path: Path) -> object:
    try:
        return [_as_read(s) for s in _results_samples(path)]
    except ScoreError as exc:
        return str(exc)


def _outcome_json(path: Path) -> object:
    try:
        got = list(_results_samples_json(path, path.read_bytes()))
    except ScoreError as exc:
        return str(exc)
    return [{k: v for k, v in s.items() if k in MATCHED} if isinstance(s, dict) else s for s in got]


@settings(max_examples=examples(300), deadline=None)
@given(
    samples=st.lists(st.dictionaries(st.sampled_from([*MATCHED, "routes"]), TEXT), max_size=3),
    at=st.integers(min_value=0),
    insert=st.sampled_from(
        [b"", b",", b"]", b"{", b'"', b"\\", b"NaN", b"\xff", b"\xef\xbb\xbf", b" 1e400", b"5"]
    ),
    cut=st.booleans(),
)
def test_fast_decoding_fails_and_reads_as_the_json_path(
    tmp_path_factory: pytest.TempPathFactory, samples: list[dict], at: int, insert: bytes, cut: bool
) -> None:
    raw = json.dumps(samples, ensure_ascii=False).encode("utf-8")
    i = at % (len(raw) + 1)
    broken = raw[:i] + insert + raw[i + int(cut) :]
    path = tmp_path_factory.mktemp("r") / "results.json"
    path.write_bytes(broken)
    assert _outcome(path) == _outcome_json(path)


def test_bytes_that_are_not_utf8_in_an_unread_field_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(b'[{"response": "A-B", "routes": ["\xff"]}]')
    with pytest.raises(ScoreError, match="not UTF-8 text"):
        list(_results_samples(path))


@pytest.mark.parametrize("text", ["[{}, ]", "[{} {}]", "[{}] x", "[", "[{]"])
def test_broken_results_file_is_a_one_line_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "results.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScoreError, match="results.json: not valid JSON"):
        list(_results_samples(path))


VOCAB = ("Alpha", "Bravo", "Porta Furba_Quadraro", "Delta", "Rädelstr.", "Porta Furba", "Quadraro")
STATION = st.sampled_from(
    [*VOCAB, "Porta Furba-Quadraro", "alpha", "Brav0", "Del ta", "So the route is Alpha"]
)


@settings(max_examples=examples(400), deadline=None)
@given(
    stations=st.lists(STATION, min_size=0, max_size=6),
    marks=st.lists(st.sampled_from(["", "(transfer)", " (Transfer)", "（换乘）"]), max_size=6),
    seps=st.lists(st.sampled_from(["-", " - ", "->", "–", " → "]), max_size=6),
    tail=st.sampled_from(["", ".", " ", ";", "*", "**", "`"]),
    vocab=st.sampled_from([VOCAB, ("Alpha", "Bravo", "Delta"), None]),
)
def test_bare_route_fast_path_equals_the_general_path(
    stations: list[str], marks: list[str], seps: list[str], tail: str, vocab: tuple | None
) -> None:
    text = ""
    for i, s in enumerate(stations):
        mark = marks[i] if i < len(marks) else ""
        sep = seps[i] if i < len(seps) else "-"
        text += (sep if i else "") + s + mark
    text += tail
    # surrounding blank lines send the same text through the general path
    assert parse_route(text, vocab) == parse_route("\n" + text + "\n", vocab)


LINE = st.lists(
    st.sampled_from(
        [
            "Alpha",
            "b",
            " ",
            "-",
            "--",
            " -",
            "- ",
            "->",
            "=>",
            ">",
            "—",
            "→",
            "(",
            ")",
            "[",
            "]",
            "（",
            "【",
            "(transfer)",
            "(Transfer)",
            " (transfer)",
            "( transfer )",
            "(transfer station)",
            "(xfer)",
            "\t",
            "\x00",
            "é",
            ".",
            ";",
            "_",
            # not ASCII: the plain split takes such lines too when they hold no wide mark
            "–",
            "−",
            "⟶",
            "➔",
            "➝",
            "⇒",
            "\u3000",
            "\xa0",
            "(换乘)",
            "(tranſfer)",
            "도산대",
            "）",
        ]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=examples(2000), deadline=None)
@given(line=LINE)
def test_plain_split_equals_the_regular_expression_split(line: str) -> None:
    from maptab.score.parse import _split_general, _split_plain

    plain = _split_plain(line)
    if plain is not None:
        assert plain == _split_general(line)


def test_plain_split_takes_the_common_lines() -> None:
    from maptab.score.parse import _split_plain

    assert _split_plain("A-B(transfer)-C D") is not None
    for other in ("A - B", "A->B", "A-B (transfer)", "A-B(Transfer)", "A–B", "A-[transfer]"):
        assert _split_plain(other) is None


def test_only_the_answered_rows_are_decoded(tmp_path: Path, dataset: Path) -> None:  # noqa: F811
    from maptab.io.dataset import Dataset

    manifest = Dataset(dataset).manifest
    rp = dataset / "rp.jsonl"
    lines = rp.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace('"routes": [', '"routes": 7, "x": [')  # trav1: a broken row
    rp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    preds = [p for p in predictions() if p.id != "trav1"]
    rows, _ = score_predictions(dataset, preds, verify=False)
    assert {r["id"] for r in rows} == {p.id for p in preds if not p.error}
    with pytest.raises(ScoreError, match=r"rp\.jsonl:4: field 'routes'"):
        score_predictions(dataset, predictions(), verify=False)
    assert manifest  # the dataset was a verified build before the edit


def test_an_answered_row_is_checked_in_full(tmp_path: Path, dataset: Path) -> None:  # noqa: F811
    """A byte that is not UTF-8 in a field the match index skips (the question) is found
    when the row is scored, naming file and line; unanswered, the row is not decoded."""
    from maptab.score.scorer import load_external_results

    rp = dataset / "rp.jsonl"
    lines = rp.read_bytes().split(b"\n")
    lines[3] = lines[3].replace(b'"question": "', b'"question": "\xff', 1)  # trav1
    rp.write_bytes(b"\n".join(lines))
    results = tmp_path / "results.json"
    answered = [p for p in predictions() if p.kind == "rp" and not p.error]
    for preds in ([p for p in answered if p.id != "trav1"], answered):
        samples = [{"id": p.id, "response": p.response} for p in preds]
        results.write_text(json.dumps(samples), encoding="utf-8")
        matched = load_external_results(results, dataset, verify=False)
        assert [p.id for p in matched] == [p.id for p in preds]
        if len(preds) < len(answered):
            rows, _ = score_predictions(dataset, matched, verify=False)
            assert [r["id"] for r in rows] == [p.id for p in preds]
    with pytest.raises(ScoreError, match=r"rp\.jsonl:4: not UTF-8 text \(invalid start byte\)"):
        score_predictions(dataset, matched, verify=False)


def test_repeated_answers_give_equal_separate_rows(dataset: Path) -> None:  # noqa: F811
    same = [Prediction("free1", "rp", "Alpha-Bravo-Porta Furba-Delta") for _ in range(3)]
    rows, summary = score_predictions(dataset, same)
    assert rows[0] == rows[1] == rows[2] and rows[0] is not rows[1]
    rows[0]["ema"] = 99
    assert rows[1]["ema"] != 99
    assert summary["counts"]["scored"]["rp"] == 3


def test_score_run_writes_what_score_predictions_returns(tmp_path: Path, dataset: Path) -> None:  # noqa: F811
    preds = predictions()
    rows, summary = score_predictions(dataset, preds)
    run = tmp_path / "run"
    written = score_run(run, dataset_dir=dataset, predictions=preds, progress=False)
    assert load_scores(run) == json.loads(json.dumps(rows))
    # score_run summarises packed rows (maptab.score.rows), score_predictions the dicts
    written = {k: v for k, v in written.items() if k not in ("model", "dataset")}
    assert json.dumps(written, sort_keys=True) == json.dumps(clean_json(summary), sort_keys=True)
    assert not (run / "scores.jsonl.tmp").exists()
    assert RED


@settings(max_examples=examples(2000), deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            list("ab -_~*`<>#+•·1.)\"'“「\t\n\r\x0b\x1c\x85\u2028\u00a0\u3000◁")
            + ["~~~", "__", "```", "- ", "1. ", "# ", "> ", "(transfer)", "é"]
        ),
        max_size=10,
    ).map("".join)
)
def test_plain_line_test_implies_the_bare_line_test(text: str) -> None:
    from maptab.score.parse import _FENCE, _clean_line, _plain_line

    if _plain_line(text):
        assert "<" not in text and "◁" not in text
        assert text.splitlines() == [text]
        assert not _FENCE.match(text)
        assert _clean_line(text) == text


@pytest.mark.slow
def test_worker_processes_score_as_this_process_does(tmp_path: Path, dataset: Path) -> None:  # noqa: F811
    """Two worker processes (small windows, so rows cross windows and workers) give the
    rows, lines and summary of scoring in this process; repeats and API errors included."""
    import maptab.score.scorer as scorer_module

    preds = predictions() * 3 + [Prediction("free1", "rp", "Alpha-Delta")] + predictions()[:2]
    inline_rows, inline_summary = score_predictions(dataset, preds, workers=1)
    window = scorer_module._WINDOW
    scorer_module._WINDOW = 3
    try:
        pool_rows, pool_summary = score_predictions(dataset, preds, workers=2)
        (tmp_path / "a").mkdir()
        score_run(tmp_path / "a", dataset_dir=dataset, predictions=preds, workers=2)
    finally:
        scorer_module._WINDOW = window
    assert pool_rows == inline_rows and pool_summary == inline_summary
    (tmp_path / "b").mkdir()
    score_run(tmp_path / "b", dataset_dir=dataset, predictions=preds, workers=1)
    for name in ("scores.jsonl", "summary.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.slow
def test_a_score_pool_takes_its_workers_from_the_executor_factory_given(
    dataset: Path,  # noqa: F811
) -> None:
    from maptab.executors import local_executor
    from maptab.io.dataset import Dataset
    from maptab.score.workers import InlineScorer, ScorePool

    made = []

    def executors(workers, initializer=None, initargs=()):
        made.append(workers)
        return local_executor(workers, initializer, initargs)

    jobs, at = [], 0
    for n, line in enumerate((dataset / "rp.jsonl").read_bytes().splitlines(keepends=True), 1):
        rid = json.loads(line)["id"]
        jobs.append((rid, "rp", rid, "", "Alpha-Delta", (at, len(line), n), True))
        at += len(line)
    with ScorePool(dataset, 2, text=True, executors=executors) as pool:
        assert made == [2]
        pooled = pool.results(pool.submit(jobs))
    with InlineScorer(Dataset(dataset), text=True) as inline:
        rows = inline.results(inline.submit(jobs))
    assert len(rows) == len(jobs) > 1
    assert [(dict(r), t) for r, t in pooled] == [(dict(r), t) for r, t in rows]


@pytest.mark.slow
def test_a_worker_names_the_broken_row(dataset: Path) -> None:  # noqa: F811
    rp = dataset / "rp.jsonl"
    lines = rp.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace('"routes": [', '"routes": 7, "x": [')  # trav1: a broken row
    rp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ScoreError, match=r"rp\.jsonl:4: field 'routes'"):
        score_predictions(dataset, predictions(), verify=False, workers=2)


def test_a_worker_that_stops_is_a_one_line_error(tmp_path: Path) -> None:
    """A worker process that dies (here: it cannot open the dataset) ends scoring with a
    ScoreError instead of waiting for ever."""
    from maptab.score.workers import ScorePool

    pool = ScorePool(tmp_path / "no-such-dataset", 2, text=False)
    try:
        handle = pool.submit([("a", "rp", "m/a", "", "A-B", (0, 1, 1), True)])
        with pytest.raises(ScoreError, match="scoring worker process stopped"):
            pool.results(handle)
    finally:
        pool.close()


# answers of every shape for each kind: right, wrong, malformed, tags without content,
# unknown stations, repeated stations, control characters, long text
_HOSTILE = [
    "",
    "<route_begin><route_end>",
    "<route_begin>Alpha-Alpha-Alpha<route_end>",
    "Alpha-Nowhere-Delta",
    "Alpha-Bravo(transfer)-Porta Furba(transfer)-Delta",
    "<answer_begin><answer_end>",
    "<answer_begin>-1e999<answer_end>",
    "Route Name: Line 9\nDeparture Stop: X\nArrival Stop: Y",
    "\x00\x1f<think>" + "x" * 5000,
    "<route_begin>" + "-".join(["Bravo"] * 300) + "<route_end>",
]


@pytest.mark.slow
def test_answers_of_every_shape_score_alike_in_workers(dataset: Path) -> None:  # noqa: F811
    """Right, wrong and malformed answers of every kind give the same rows and summary in
    this process and through worker processes (many windows)."""
    import maptab.score.scorer as scorer_module

    preds = predictions() + [
        Prediction(p.id, p.kind, text) for p in predictions() for text in _HOSTILE
    ]
    assert len(preds) == 99
    inline = score_predictions(dataset, preds)
    window = scorer_module._WINDOW
    scorer_module._WINDOW = 16
    try:
        pooled = score_predictions(dataset, preds, workers=2)
    finally:
        scorer_module._WINDOW = window
    assert pooled == inline


_ABSENT = object()
PAIR = st.sampled_from([("Alpha", "Delta"), ("Lake", "Gate"), ("Lake ", "Gate"), ("Alpha", 3)])
FIELD = {
    "city": st.sampled_from([_ABSENT, "", "t1", "m1", "M1", None, "zz"]),
    "category": st.sampled_from([_ABSENT, "time", "map_only", "map_mix", "nope", None]),
    "question": st.sampled_from([_ABSENT, "", "x"]),
}


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    pair=PAIR,
    base=st.fixed_dictionaries(FIELD),
    changes=st.lists(
        st.one_of(*(st.tuples(st.just(k), v) for k, v in FIELD.items())), min_size=1, max_size=6
    ),
)
def test_remembered_matches_equal_matching_each_sample(
    tmp_path_factory: pytest.TempPathFactory,
    dataset: Path,  # noqa: F811 (the fixture; read only)
    pair: tuple,
    base: dict,
    changes: list[tuple[str, object]],
) -> None:
    """Samples repeated in a results file are matched from the memo: ids and errors must be
    what matching every sample afresh gives (samples differing from the first in one field
    each, repeated)."""
    from maptab.io.dataset import Dataset
    from maptab.score.scorer import _match_sample, _MatchIndex, load_external_results

    samples = []
    for field, value in [(None, None), *changes, (None, None)]:
        sample = {"station_1": pair[0], "station_2": pair[1], "response": "A"} | base
        if field is not None:
            sample[field] = value
        samples.append({k: v for k, v in sample.items() if v is not _ABSENT})
    path = tmp_path_factory.mktemp("m") / "results.json"
    path.write_text(json.dumps(samples), encoding="utf-8")
    index = _MatchIndex(Dataset(dataset))

    def each(index: _MatchIndex) -> list[str] | str:
        """The id of every sample matched afresh, or the first error."""
        ids = []
        for n, sample in enumerate(samples):
            try:
                ids.append(_match_sample(_ResultSample.of(sample), index, (path, n)))
            except ScoreError as exc:
                return str(exc)
        return ids

    want = each(index)
    try:
        got: list[str] | str = [p.id for p in load_external_results(path, dataset)]
    except ScoreError as exc:
        got = str(exc)
    assert got == want
    # the city filter skipped for a pair on one map (index.one_map) keeps what it would keep
    index.one_map = set()
    assert each(index) == want


def test_the_fast_path_leaves_questions_undecoded(tmp_path: Path) -> None:
    """Matching rarely reads a question: the fast path keeps it as raw JSON (decoded by
    ``_question`` when needed), which is most of the results file's decoding time."""
    from maptab.score.scorer import _question

    path = tmp_path / "results.json"
    path.write_text(json.dumps([{"question": " Q \u00e9 ", "response": "A"}]), encoding="utf-8")
    (sample,) = _results_samples(path)
    assert isinstance(sample.question, msgspec.Raw)
    assert _question(sample) == "Q é"


_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats()  # NaN and infinities included: written null
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=examples(300), deadline=None)
@given(row=st.dictionaries(st.text(max_size=6), _JSON_VALUES, max_size=8))
def test_score_lines_are_json_dumps(row: dict) -> None:
    """A scores.jsonl line is ``json.dumps(row, ensure_ascii=False)`` of the row with NaN
    and infinities as null, whatever the encoder path (workers.row_text)."""
    from maptab.score.workers import row_text

    assert row_text(row) == json.dumps(clean_json(row), ensure_ascii=False)


def test_records_of_equals_the_filtered_records(dataset: Path) -> None:  # noqa: F811
    """``Dataset.records_of`` (the report's read of the listed samples) gives the records
    :meth:`Dataset.records` gives for those ids, in file order, whatever the ids asked and
    whatever collection holds them."""
    from maptab.io.dataset import Dataset

    ds = Dataset(dataset)
    for kind in ("rp", "qa", "reasonmap"):
        every = [rec for _, _, rec in ds.records(kind)]
        ids = [r.id for r in every]
        for wanted in ({*ids}, set(ids[::2]), {ids[-1], "nobody"} if ids else set(), set()):
            assert list(ds.records_of(kind, wanted)) == [r for r in every if r.id in wanted]
            # any collection of ids: a list (made a set, not searched per row), a tuple
            for other in (sorted(wanted), tuple(wanted)):
                assert list(ds.records_of(kind, other)) == [r for r in every if r.id in wanted]


def test_records_of_reads_only_the_wanted_rows(dataset: Path) -> None:  # noqa: F811
    """A broken row nobody asked for is not decoded; a broken wanted row, a row whose id
    is not a string, or a line that is not JSON is an error naming file and line."""
    from maptab.io.dataset import Dataset, DatasetError

    path = dataset / "rp.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    broken = {**second, "routes": 7}
    path.write_text("\n".join([lines[0], "", json.dumps(broken), *lines[2:]]) + "\n", "utf-8")
    ds = Dataset(dataset, verify=False)
    assert [r.id for r in ds.records_of("rp", {first["id"]})] == [first["id"]]
    with pytest.raises(DatasetError, match=r"rp\.jsonl:3"):
        list(ds.records_of("rp", {second["id"]}))
    for bad in (json.dumps({**first, "id": 5}), "{not json"):
        path.write_text("\n".join([lines[0], bad, *lines[2:]]) + "\n", "utf-8")
        with pytest.raises(DatasetError, match=r"rp\.jsonl:2"):
            list(Dataset(dataset, verify=False).records_of("rp", {first["id"]}))
