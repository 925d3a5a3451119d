"""inspect_ai tasks (docs/guides/evaluation-harnesses.md), offline with inspect's mock
model: gold answers score 100%, blank ones 0%, every number equals `maptab score` on the
same answers (standard errors clustered by map), each score's answer is the parsed one, and
errors building a task are one line. Needs the extra maptab[inspect]; skipped with that
reason without it."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

inspect_ai = pytest.importorskip(
    "inspect_ai", reason="inspect_ai is not installed (pip install 'maptab[inspect]')"
)

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from maptab.core.schema import Prediction  # noqa: E402
from maptab.generate.pipeline import build_benchmark  # noqa: E402
from maptab.integrations.common import sample_values  # noqa: E402
from maptab.integrations.inspect_tasks import maptab_task  # noqa: E402
from maptab.io.dataset import DatasetError  # noqa: E402
from maptab.render.images import DatasetImager  # noqa: E402
from maptab.run.baselines import BASELINE_CLASSES, number_text  # noqa: E402
from maptab.run.requests import build_requests  # noqa: E402
from maptab.score.scorer import score_predictions  # noqa: E402
from maptab.tasks import get  # noqa: E402

pytestmark = [pytest.mark.inspect, pytest.mark.slow]  # builds and evaluates mini datasets
SEED = 9
KINDS = ("rp", "qa", "reasonmap")


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inspect") / "mini"
    build_benchmark(root, preset="mini", seed=SEED, report_totals=True, renderer=DatasetImager())
    return root


@pytest.fixture(scope="module")
def answers(mini: Path) -> dict[str, dict[str, str]]:
    """Per baseline, the answer to each request (baselines do not look at the image)."""
    out: dict[str, dict[str, str]] = {}
    requests = build_requests(mini, images=False)
    for name in ("oracle", "random"):
        provider = BASELINE_CLASSES[name](seed=1)
        out[name] = {r.id: provider.answer(r) for r in requests}
    return out


def _text(messages: Any) -> str:
    """The text parts of the (one) user message: a sample's identity."""
    return "\n".join(c.text for c in messages[0].content if c.type == "text")


def _run(mini: Path, kind: str, reply: Any, limit: int | None = 12) -> Any:
    """Evaluate the task with mockllm answering ``reply(sample id)``; the log's samples."""
    task = maptab_task(kind, str(mini), limit=limit)
    by_text = {_text(s.input): s.id for s in task.dataset}
    assert len(by_text) == len(task.dataset)

    def respond(messages, tools, tool_choice, config):  # noqa: ANN001, ANN202
        out = ModelOutput.from_content("mockllm/model", reply(by_text[_text(messages)]))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer
        return out

    model = get_model("mockllm/model", custom_outputs=respond)
    [log] = inspect_eval(task, model=model, log_dir=str(mini.parent / "logs"), display="none")
    assert log.status == "success", log.error
    return log


def _metric(log: Any, name: str) -> float:
    for score in log.results.scores:
        if score.name == name:
            return score.metrics["mean"].value
    raise AssertionError(f"no metric {name}: {[s.name for s in log.results.scores]}")


@pytest.mark.parametrize("kind", KINDS)
def test_gold_answers_score_100(mini: Path, answers: dict[str, dict[str, str]], kind: str) -> None:
    gold = answers["oracle"]
    log = _run(mini, kind, lambda sid: gold[sid])
    assert log.samples, "no samples"
    for s in log.samples:
        [score] = s.scores.values()
        assert score.metadata["error_type"] is None, (s.id, score.metadata)
        assert isinstance(score.answer, str) and score.answer not in ("True", "False"), s.id
        if kind == "rp":  # the route read from the answer
            assert score.answer == score.metadata["route"], s.id
            assert "-" in score.answer and "\n" not in score.answer
        elif kind == "qa":  # the number read from the answer
            assert float(score.answer) == pytest.approx(score.metadata["pred"]), s.id
        else:  # the segments read from the answer
            assert " -> " in score.answer, (s.id, score.answer)
    main = {"rp": "strict", "qa": "accuracy", "reasonmap": "accuracy"}[kind]
    assert _metric(log, main) == 1.0
    assert {s.metadata["kind"] for s in log.samples} == {kind}


@pytest.mark.parametrize("kind", KINDS)
def test_blank_answers_score_0(mini: Path, kind: str) -> None:
    log = _run(mini, kind, lambda sid: "")
    for score in log.results.scores:
        assert score.metrics["mean"].value == 0.0, score
    for s in log.samples:
        [score] = s.scores.values()
        assert score.metadata["parsed"] is False and score.metadata["error_type"]
        assert score.answer is None  # nothing was read from the answer


@pytest.mark.parametrize("kind", KINDS)
def test_numbers_equal_maptab_score(
    mini: Path, answers: dict[str, dict[str, str]], kind: str
) -> None:
    """Random-baseline answers: every per-sample value, parsed answer and mean equal those of
    `maptab score` (score_predictions) on the same answers, and the stderr is the standard
    error of those values clustered by map (maptab's intervals resample maps, SPEC 13)."""
    given = answers["random"]
    log = _run(mini, kind, lambda sid: given[sid], limit=None)
    ids = [str(s.id) for s in log.samples]
    preds = [Prediction(i, kind, given[i]) for i in ids]
    rows, summary = score_predictions(mini, preds)
    by_id = {r["id"]: r for r in rows}
    task = get(kind)
    values: dict[str, list[float]] = {}
    for s in log.samples:
        [score] = s.scores.values()
        row = by_id[str(s.id)]
        expect = sample_values(task, row)
        assert score.value == expect, s.id
        assert score.metadata["error_type"] == row["error_type"]
        if not row["parsed"]:
            assert score.answer is None, s.id
        elif kind == "rp":
            assert score.answer == row["route"], s.id
        elif kind == "qa":
            assert score.answer == number_text(row["pred"]), s.id
        else:
            assert score.answer and score.answer.count(" -> ") >= 1, s.id
        for k, v in expect.items():
            values.setdefault(k, []).append(v)
    assert values, "no metric compared"
    cats = [s.metadata["category"] for s in log.samples]
    maps = [s.metadata["map_id"] for s in log.samples]
    assert len(set(maps)) > 1 and len(set(maps)) < len(maps)
    compared = 0
    for m in task.metrics:
        if m.name not in values:
            continue
        result = next(s for s in log.results.scores if s.name == m.name).metrics
        n = len(values[m.name])
        mine = sum(values[m.name]) / n
        assert result["mean"].value == pytest.approx(mine, abs=1e-12)
        assert result["stderr"].value == pytest.approx(
            _clustered_stderr(values[m.name], maps), rel=1e-9, abs=1e-12
        )
        for cat in set(cats):
            vs = [v for v, c in zip(values[m.name], cats, strict=True) if c == cat]
            assert _group(result, cat) == pytest.approx(sum(vs) / len(vs), abs=1e-12)
        # the same figure in `maptab score`'s summary: overall (RP, QA) or per mode (ReasonMap)
        for block, value in _summary_blocks(summary[kind], m.name, result):
            assert value == pytest.approx(block["mean"], abs=1e-9), m.name
            compared += 1
    assert compared, "no figure compared with maptab score's summary"


def _clustered_stderr(values: list[float], clusters: list[str]) -> float:
    """Standard error of the mean with clusters: sqrt(C/(C-1) * sum over clusters of the
    squared sum of deviations) / n."""
    n = len(values)
    mean = sum(values) / n
    sums: dict[str, float] = {}
    for v, c in zip(values, clusters, strict=True):
        sums[c] = sums.get(c, 0.0) + (v - mean)
    k = len(sums)
    return math.sqrt(sum(x * x for x in sums.values()) * k / (k - 1)) / n


def test_clustered_stderr_differs_from_the_independent_one() -> None:
    """Two maps, each with all its samples right or all wrong: the spread is between maps."""
    values, clusters = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0], ["a", "a", "a", "b", "b", "b"]
    independent = math.sqrt(sum((v - 0.5) ** 2 for v in values) / 5) / math.sqrt(6)
    assert _clustered_stderr(values, clusters) == pytest.approx(0.5)
    assert independent == pytest.approx(0.2236, abs=1e-4)


def _summary_blocks(summary: dict[str, Any], name: str, result: Any) -> list[tuple[Any, float]]:
    """(summary block, inspect figure) pairs for metric ``name``."""
    overall = summary.get("overall")
    if isinstance(overall, dict) and isinstance(overall.get(name), dict):
        return [(overall[name], result["mean"].value)]
    if isinstance(overall, dict) and "mean" in overall and name == "accuracy":
        return [(overall, result["mean"].value)]
    return [
        (block[name], _group(result, mode))
        for mode, block in summary.items()
        if isinstance(block, dict) and isinstance(block.get(name), dict)
    ]


def _group(result: dict[str, Any], group: str) -> float:
    """The per-category mean of ``group`` (inspect names it ``grouped_<group>``)."""
    found = [m.value for k, m in result.items() if k in (group, f"grouped_{group}")]
    assert len(found) == 1, (group, list(result))
    return found[0]


@pytest.mark.parametrize("kind", KINDS)
def test_messages_are_those_maptab_run_sends(mini: Path, kind: str) -> None:
    """Same parts in the same order: texts equal, the image the same data URL."""
    task = maptab_task(kind, str(mini), limit=4)
    sent = {r.id: r for r in build_requests(mini)}
    assert len(task.dataset) == 4
    for s in task.dataset:
        parts = sent[s.id].messages[0]["content"]
        mine = [c.text if c.type == "text" else c.image for c in s.input[0].content]
        theirs = [p["text"] if p["type"] == "text" else p["image_url"]["url"] for p in parts]
        assert mine == theirs


def test_text_only_leaves_out_map_only_samples(mini: Path) -> None:
    with pytest.raises(DatasetError, match="no reasonmap sample matches the selection"):
        maptab_task("reasonmap", str(mini), images=False)
    task = maptab_task("rp", str(mini), images=False)
    assert task.dataset and all(c.type == "text" for s in task.dataset for c in s.input[0].content)


def test_registered_for_inspect_eval_by_name() -> None:
    """The entry point makes `inspect eval maptab/maptab_rp` resolve."""
    from inspect_ai._util.registry import registry_lookup

    for name in ("maptab_rp", "maptab_qa", "reasonmap", "maptab"):
        assert registry_lookup("task", f"maptab/{name}") is not None, name


def test_readme_inspect_commands(
    mini: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each `inspect eval` command of the README names a registered task whose -T
    parameters build a task with samples (the model call itself needs a model)."""
    import re
    import shlex

    from inspect_ai._util.registry import registry_lookup

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = text.split("### inspect_ai", 1)[1].split("\n### ", 1)[0]
    commands = re.findall(r"^(inspect eval .*)$", section, re.MULTILINE)
    assert commands, "no inspect eval command in the README's inspect_ai section"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mini").symlink_to(mini)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MAPTAB_CACHE", str(tmp_path / "cache"))  # dataset=mini builds here
    for command in commands:
        words = shlex.split(command)
        factory = registry_lookup("task", words[2])
        assert factory is not None, words[2]
        params = {}
        for i, w in enumerate(words):
            if w == "-T":
                key, _, value = words[i + 1].partition("=")
                params[key] = int(value) if value.isdigit() else value
        task = factory(**params)
        assert len(task.dataset) > 0, command


def test_dataset_errors_are_one_line(tmp_path: Path) -> None:
    """A task that cannot be built raises a DatasetError, and inspect's CLI prints its
    message alone (no ExceptionGroup traceback) and exits non-zero."""
    from inspect_ai._util.error import PrerequisiteError

    missing = tmp_path / "missing"
    with pytest.raises(DatasetError, match="not a dataset folder") as info:
        maptab_task("rp", str(missing))
    assert isinstance(info.value, PrerequisiteError) and "\n" not in str(info.value)
    command = [sys.executable, "-m", "inspect_ai", "eval", "maptab/maptab_rp"]
    command += ["-T", f"dataset={missing}", "--model", "mockllm/model"]
    command += ["--log-dir", str(tmp_path / "logs"), "--display", "plain"]
    env = {**os.environ, "COLUMNS": "500"}  # inspect's console wraps at the terminal width
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, env=env
    )
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    assert done.returncode != 0
    assert lines == [str(info.value)], lines
