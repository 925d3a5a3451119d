"""The task registry (docs/guides/add-a-task-kind.md): built-in kinds, no kind named outside its own file,
and a third-party kind from a separately installed distribution run end to end."""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import maptab
import maptab.core.schema
from maptab.score.metrics import Columns, Metric, aggregate
from maptab.tasks import TaskError, TaskKind, all_kinds, get, kind_names

SRC = Path(maptab.__file__).parent
BUILTIN = ("rp", "qa", "reasonmap")

# Modules that may still name a task kind, each with the reason (see docs/guides/add-a-task-kind.md):
ALLOWED = {
    # the builders produce one given kind's rows (what they build is their subject)
    "generate/pipeline.py": "builder: writes the rp, qa and reasonmap rows it generates",
    "generate/release.py": "MapTab release importer: writes rp rows",
    "generate/from_reasonmap.py": "ReasonMap builder: writes reasonmap rows",
    "generate/hf.py": "Hugging Face export: one config per built-in kind",
    "cli/build.py": "prints the counts the builder wrote",
    "cli/export.py": "help text of the Hugging Face export",
    # one inspect_ai @task per built-in kind (inspect names tasks by function); the adapter
    # they call is generic (any kind: the `maptab` task)
    "integrations/inspect_tasks.py": "the @task functions maptab_rp, maptab_qa, reasonmap",
    # the dataset writer's built-in file table and the typed accessors Dataset.rp()/qa()/
    # reasonmap() kept for the builders and tests
    "io/dataset.py": "writer's built-in query files; typed accessors",
    # 'reasonmap' here is a map's source (ReasonMap station data), not a task kind
    "score/integrity.py": "map source 'reasonmap' (no value ranges for its tables)",
    "io/metadata.py": "map source 'reasonmap'",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _kind_literals(path: Path, names: tuple[str, ...]) -> list[int]:
    """Lines of ``path`` with a string literal equal to a kind name (docstrings ignored;
    f-string parts included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in names
        and id(node) not in docs
    )


def test_no_module_outside_a_kind_file_names_a_kind():
    hits = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        # a kind's own files: maptab/kinds/<kind>.py and its view, maptab/report/<kind>_view.py
        if rel.startswith("kinds/") or rel.endswith("_view.py") or rel in ALLOWED:
            continue
        lines = _kind_literals(path, BUILTIN)
        if lines:
            hits[rel] = lines
    assert hits == {}, f"task kind names outside maptab/kinds/: {hits}"


def test_the_kind_name_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""Mentions rp in a docstring."""\nX = 1 if k == "qa" else f"{k}"\n')
    assert _kind_literals(bad, BUILTIN) == [2]


def test_builtin_kinds_in_report_order():
    assert kind_names()[:3] == BUILTIN
    for name in BUILTIN:
        kind = get(name)
        assert isinstance(kind, TaskKind) and kind.name == name
        assert kind.samples.file == f"{name}.jsonl"
        assert kind.metrics, f"{name} declares no metric"
    assert get("reasonmap").samples.variants == ("short", "long")
    assert get("reasonmap").split_id("q1/long") == ("q1", "long")
    assert get("reasonmap").split_id("q1") is None
    assert list(get("reasonmap").sample_ids("q")) == [("q/short", "short"), ("q/long", "long")]


def test_unknown_kind_is_one_clear_error():
    with pytest.raises(TaskError, match="unknown task kind 'nope'; known: rp, qa, reasonmap"):
        get("nope")


def test_metric_aggregates_against_plain_python():
    rows = [
        {"map_id": f"m{i % 3}", "ok": i % 2 == 0, "v": float(i), "valid": i % 3 != 0}
        for i in range(12)
    ]
    c = Columns(rows)
    mean = aggregate(Metric("ok", "ok"), c, c.every)
    assert mean["mean"] == pytest.approx(sum(r["ok"] for r in rows) / 12)
    assert mean["lo"] <= mean["mean"] <= mean["hi"] and mean["n"] == 12
    total = aggregate(Metric("t", "v", aggregate="total", fmt="int"), c, c.every)
    assert total["total"] == pytest.approx(sum(r["v"] for r in rows))
    kept = aggregate(Metric("g", "v", where="valid", fmt="num"), c, c.every)
    valid = [r["v"] for r in rows if r["valid"]]
    assert kept["n"] == len(valid) and kept["mean"] == pytest.approx(sum(valid) / len(valid))
    assert aggregate(Metric("f", "ok", aggregate="count_false", fmt="int"), c, c.every) == 6
    with pytest.raises(ValueError, match="unknown aggregate"):
        Metric("x", "x", aggregate="median")


# --------------------------------------------------------------------------- plug-ins
TOY_KIND = '''
"""A toy task kind: the model must repeat a word (registered through an entry point)."""
from dataclasses import dataclass, fields

from maptab.core.schema import decode_record
from maptab.score.metrics import Metric
from maptab.tasks import Prompt, Samples, Scoring, TaskKind

ACC = Metric("accuracy", "correct", label="Acc")


@dataclass
class Echo:
    id: str
    map_id: str
    split: str
    word: str

    @classmethod
    def from_dict(cls, d):
        return cls(**{f.name: d[f.name] for f in fields(cls)})


def score(maps, rec, variant, response):
    ok = response.strip() == rec.word
    return {"id": rec.id, "kind": "echo", "map_id": rec.map_id, "parsed": bool(response),
            "correct": ok}


def answer(baseline, request):
    word = request.meta["sample"]["word"]
    return word if baseline.name == "oracle" else ""


TASK = TaskKind(
    name="echo",
    title="Echo",
    samples=Samples("echo.jsonl", Echo, lambda row: decode_record(Echo, row)),
    prompt=lambda rec, variant: Prompt(f"Repeat: {rec.word}"),
    answer=answer,
    scoring=Scoring(score),
    metrics=(ACC,),
)


class Parrot:
    """A toy provider (entry point group maptab.providers): answers the echo prompt's word,
    upper-cased when its argument is "loud" (so it scores 0 on echo)."""

    name = "parrot"
    uses_images = False

    def __init__(self, model, **_):
        self.model = model
        self.settings = {}

    async def complete(self, request):
        from maptab.run.provider import Completion

        word = request.meta["sample"]["word"]
        return Completion(word.upper() if self.model == "loud" else word)

    async def aclose(self):
        return None
'''


def install_plugin(
    tmp: Path, name: str, modules: dict[str, str], entry_points: dict[str, dict[str, str]]
) -> Path:
    """Build a wheel of a distribution ``name`` holding ``modules`` (file name → source) and
    ``entry_points`` (group → {name: "module:attr"}), and install it with pip into
    ``tmp/site``; returns that folder (put it on ``PYTHONPATH``). The wheel is zipped here
    (no build backend needed) and installed offline: no index, no dependencies."""
    dist = name.replace("-", "_")
    info = f"{dist}-0.0.1.dist-info"
    files = dict(modules)
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.1\n"
    files[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: maptab-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    files[f"{info}/entry_points.txt"] = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in entry_points.items()
    )
    record = []
    for file, text in files.items():
        digest = hashlib.sha256(text.encode()).digest()
        b64 = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        record.append(f"{file},sha256={b64},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = tmp / f"{dist}-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for file, text in files.items():
            zf.writestr(file, text)
    site = tmp / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
         "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        cwd=tmp,
    )  # fmt: skip
    return site


def _toy_dataset(root: Path, words: list[str]) -> None:
    root.mkdir()
    rows = [
        {"id": f"e{i}", "map_id": "m1", "split": "test", "word": w} for i, w in enumerate(words)
    ]
    (root / "echo.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = {
        "schema_version": maptab.core.schema.SCHEMA_VERSION,
        "maps": [{"id": "m1", "scenario": "metromap", "difficulty": "easy", "split": "test"}],
        "files": {"echo.jsonl": hashlib.sha256((root / "echo.jsonl").read_bytes()).hexdigest()},
    }
    (root / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plugin")
    return install_plugin(
        tmp,
        "maptab-toy-echo",
        {"toy_echo.py": TOY_KIND},
        {
            "maptab.tasks": {"echo": "toy_echo:TASK"},
            "maptab.providers": {"parrot": "toy_echo:Parrot"},
        },
    )


def _maptab(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    code = "import sys; from maptab.cli import main; sys.argv = ['maptab', *sys.argv[1:]]; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True
    )


@pytest.mark.slow
def test_third_party_task_kind_runs_scores_and_reports(plugin_site, tmp_path):
    """One separately installed distribution brings a task kind and a provider (entry
    points maptab.tasks and maptab.providers); run, score and report use both unchanged."""
    ds = tmp_path / "ds"
    _toy_dataset(ds, ["alpha", "beta", "gamma"])
    for model in ("oracle", "blank", "parrot:quiet", "parrot:loud"):
        out = tmp_path / "runs" / model.replace(":", "-")
        r = _maptab(plugin_site, "run", str(ds), "--model", model, "--out", str(out),
                    "--no-progress", cwd=tmp_path)  # fmt: skip
        assert r.returncode == 0, r.stdout + r.stderr
        r = _maptab(plugin_site, "score", str(out), "--no-progress", cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        summary = json.loads((out / "summary.json").read_text())
        expected = 1.0 if model in ("oracle", "parrot:quiet") else 0.0
        assert summary["echo"]["accuracy"]["mean"] == expected
        assert summary["counts"]["scored"] == {"echo": 3}  # kinds of other datasets add no 0
        assert summary["counts"]["missing"] == 0
        assert "Echo" in r.stdout
    runs = [str(tmp_path / "runs" / m) for m in ("oracle", "blank", "parrot-quiet", "parrot-loud")]
    r = _maptab(plugin_site, "report", *runs, "--out", str(tmp_path / "rep"), "--no-progress",
                cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    board = (tmp_path / "rep" / "tables" / "leaderboard.md").read_text()
    assert "Echo Acc" in board and "100.0" in board
    assert (tmp_path / "rep" / "index.html").is_file()


def test_without_the_plugin_the_kind_is_unknown(tmp_path):
    assert "echo" not in kind_names()
    assert [k.name for k in all_kinds()][:3] == list(BUILTIN)
