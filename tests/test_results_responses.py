"""The ``response`` field of another tool's results file (``maptab score --results``;
docs/reference/file-formats.md): a string, or an object holding the answer text (MapTab's
vLLM path, OpenAI-like clients); anything else is a one-line error naming the file, the
sample and the field. The dataset is the one of tests/test_score_cli.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from maptab.cli import app
from maptab.score.scorer import ScoreError, load_external_results, response_text
from test_score_cli import RED
from test_score_cli import dataset as dataset  # the fixture (re-exported for pytest)

TEXT = "<answer_begin>2<answer_end>"


@pytest.mark.parametrize(
    ("response", "text"),
    [
        (TEXT, TEXT),
        ("", ""),
        ({"content": TEXT}, TEXT),
        ({"text": TEXT}, TEXT),
        ({"output_text": TEXT}, TEXT),
        ({"choices": [{"message": {"role": "assistant", "content": TEXT}}]}, TEXT),
        ({"choices": [{"text": TEXT, "index": 0}]}, TEXT),
        # precedence: content, text, output_text, choices[0].message.content, choices[0].text
        ({"text": "t", "content": "c"}, "c"),
        ({"output_text": "o", "text": "t"}, "t"),
        ({"choices": [{"message": {"content": "m"}}], "output_text": "o"}, "o"),
        ({"choices": [{"message": {"content": "m"}, "text": "x"}]}, "m"),
        # a field that is not a string is passed over
        ({"content": None, "text": "t"}, "t"),
        ({"content": [{"type": "text", "text": "p"}], "output_text": "o"}, "o"),
        ({"choices": [{"message": {"content": None}, "text": "x"}]}, "x"),
        (
            {"choices": [{"message": {"content": "first"}}, {"message": {"content": "2nd"}}]},
            "first",
        ),
    ],
)
def test_response_text_reads_a_string_or_an_object(response: Any, text: str) -> None:
    assert response_text(response) == text


@pytest.mark.parametrize(
    "response",
    [None, 3, 2.5, True, [TEXT], {}, {"content": 2}, {"choices": []}, {"choices": {"text": "x"}}],
)
def test_response_text_reads_nothing_else(response: Any) -> None:
    assert response_text(response) is None


def _samples(time_response: Any) -> list[dict[str, Any]]:
    return [
        {"city": "t1", "station_1": "Lake", "station_2": "Gate", "response": {"text": "Lake-Gate"}},
        {
            "station_1": "Alpha",
            "station_2": "Delta",
            "category": "time",
            "response": time_response,
        },
        {"question": "qa qa1", "response": {"choices": [{"message": {"content": TEXT}}]}},
    ]


def _write(path: Path, samples: list[dict[str, Any]], wrapped: bool) -> Path:
    """A results file: a JSON list, or the same list under ``results`` (the two ways the
    file is read)."""
    path.write_text(json.dumps({"results": samples} if wrapped else samples), encoding="utf-8")
    return path


def _score(out: Path, results: Path, dataset: Path) -> Any:
    return CliRunner().invoke(
        app,
        ["score", str(out), "--results", str(results), "--dataset", str(dataset), "--no-progress"],
    )


@pytest.mark.parametrize("wrapped", [False, True])
def test_object_responses_are_scored(tmp_path: Path, dataset: Path, wrapped: bool) -> None:
    route = f"<route_begin>{RED}<route_end>\nTotal_Time: 9\nTotal_Price: 0"
    results = _write(tmp_path / "results.json", _samples({"content": route}), wrapped)
    out = tmp_path / "ext"
    result = _score(out, results, dataset)
    assert result.exit_code == 0, result.output
    rows = {
        json.loads(x)["id"]: json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()
    }
    assert rows["trav1"]["ema"] == 1 and rows["time1"]["strict"] and rows["qa1"]["correct"]
    assert all(rows["time1"]["totals"].values())
    preds = {
        json.loads(x)["id"]: json.loads(x)["response"]
        for x in (out / "predictions.jsonl").read_text().splitlines()
    }
    assert preds == {"trav1": "Lake-Gate", "time1": route, "qa1": TEXT}


@pytest.mark.parametrize("wrapped", [False, True])
@pytest.mark.parametrize(
    ("response", "problem"),
    [
        (None, "field 'response' is null, not a string or an object"),
        (7, "field 'response' is a number, not a string or an object"),
        ([RED], "field 'response' is a list, not a string or an object"),
        ({"message": RED}, "field 'response' is an object with no string content, text, "),
    ],
)
def test_a_response_with_no_text_is_a_one_line_error(
    tmp_path: Path, dataset: Path, wrapped: bool, response: Any, problem: str
) -> None:
    results = _write(tmp_path / "results.json", _samples(response), wrapped)
    result = _score(tmp_path / "ext", results, dataset)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert f"{results}: sample 1: {problem}" in lines[0]
    with pytest.raises(ScoreError, match=r"sample 1: field 'response'"):
        load_external_results(results, dataset)


def test_a_missing_response_says_so(tmp_path: Path, dataset: Path) -> None:
    samples = _samples("x")
    del samples[1]["response"]
    results = _write(tmp_path / "results.json", samples, False)
    with pytest.raises(ScoreError) as err:
        load_external_results(results, dataset)
    assert str(err.value) == f"{results}: sample 1: field 'response' is missing"


def test_string_responses_are_read_as_before(tmp_path: Path, dataset: Path) -> None:
    samples = _samples(f"<route_begin>{RED}<route_end>")
    samples[0]["response"] = "Lake-Gate"
    results = _write(tmp_path / "results.json", samples, False)
    preds = {p.id: p.response for p in load_external_results(results, dataset)}
    assert preds == {"trav1": "Lake-Gate", "time1": f"<route_begin>{RED}<route_end>", "qa1": TEXT}
