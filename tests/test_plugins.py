"""Providers from outside maptab: a separately installed distribution registering a toy
provider through the ``maptab.providers`` entry-point group, and Python callables as models.

The toy distribution is written into a temporary folder (``pyproject.toml``, its module, and
a twenty-line in-tree PEP 517 backend that zips the wheel from ``pyproject.toml``, so no
build tool beyond pip is needed), installed with ``pip install --no-deps
--no-build-isolation --no-index --target``, and used by ``maptab run --model toy:x`` in a
subprocess that has the target on ``PYTHONPATH``: maptab itself is not changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fakeserver import write_dataset
from maptab.run import make_provider, run
from maptab.run.callable_provider import AsyncCallableProvider, CallableProvider
from maptab.run.provider import Completion, ProviderConfigError

TOY_MODULE = '''
"""A toy provider: answers every request with its own id, reasoning first."""


class ToyProvider:
    name = "toy"
    uses_images = False

    def __init__(self, model, *, seed=0):
        self.model = model
        self.settings = {"seed": seed}

    async def complete(self, request):
        from maptab.run.provider import Completion
        from maptab._reasoning import split_reasoning

        text, reasoning = split_reasoning(f"<think>toy {self.model}</think>{request.id}")
        return Completion(text, reasoning, 1, 2)

    async def aclose(self):
        return None
'''

TOY_PYPROJECT = """
[build-system]
requires = []
build-backend = "toy_backend"
backend-path = ["."]

[project]
name = "toy-maptab-provider"
version = "0.0.1"

[project.entry-points."maptab.providers"]
toy = "toy_provider:ToyProvider"
"""

TOY_BACKEND = '''
"""A minimal PEP 517 backend: a wheel of toy_provider.py with the pyproject's entry points."""
import base64, hashlib, os, tomllib, zipfile


def _meta():
    with open("pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _meta()
    dist = p["name"].replace("-", "_")
    info = f"{dist}-{p['version']}.dist-info"
    eps = "".join(
        f"[{group}]\\n" + "".join(f"{k} = {v}\\n" for k, v in items.items())
        for group, items in p.get("entry-points", {}).items()
    )
    files = {
        "toy_provider.py": open("toy_provider.py", "rb").read(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {p['name']}\\nVersion: {p['version']}\\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: toy\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
        f"{info}/entry_points.txt": eps.encode(),
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\\n".join(record) + "\\n").encode()
    wheel = f"{dist}-{p['version']}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return wheel
'''


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory) -> Path:
    """The toy distribution built and installed into its own folder (offline)."""
    root = tmp_path_factory.mktemp("toy")
    src = root / "src"
    src.mkdir()
    (src / "pyproject.toml").write_text(textwrap.dedent(TOY_PYPROJECT))
    (src / "toy_provider.py").write_text(textwrap.dedent(TOY_MODULE))
    (src / "toy_backend.py").write_text(textwrap.dedent(TOY_BACKEND))
    site = root / "site"
    cmd = [
        sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
        "--no-index", "--disable-pip-version-check", "--target", str(site), str(src),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (site / "toy_provider.py").is_file()
    return site


def _maptab(*args: str, site: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    cmd = [sys.executable, "-c", "from maptab.cli import main; main()", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow
def test_a_provider_from_an_installed_distribution_runs_through_the_cli(toy_site, tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=3, n_qa=2, n_reasonmap=1)
    out = tmp_path / "run"
    done = _maptab(
        "run", str(ds), "--model", "toy:x", "--out", str(out), "--no-progress", site=toy_site
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 3 + 2 + 2  # a ReasonMap row is asked twice (short, long)
    for r in rows:
        assert (r["provider"], r["model"], r["error"]) == ("toy", "x", None)
        assert r["response"] == r["id"] and r["reasoning"] == "toy x"
        assert (r["prompt_tokens"], r["completion_tokens"]) == (1, 2)
        assert r["settings"]["seed"] == 0  # --seed reached the factory, which takes it
    record = json.loads((out / "run.json").read_text())
    assert record["model"] == "toy:x" and record["provider"] == "toy"


@pytest.mark.slow
def test_without_the_distribution_the_spec_is_a_one_line_error(toy_site, tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=1, n_qa=0, n_reasonmap=0)
    done = _maptab("run", str(ds), "--model", "toy:x", "--out", str(tmp_path / "r"), site=tmp_path)
    assert done.returncode != 0
    assert "unknown model spec 'toy:x'" in done.stderr and "Traceback" not in done.stderr


def test_unknown_and_malformed_specs_name_what_is_accepted():
    for spec in ("gpt-4o", "openai", "openai:", "oracle:x", "nosuch:thing"):
        with pytest.raises(ProviderConfigError, match="unknown model spec") as err:
            make_provider(spec)
        assert "openai:NAME" in str(err.value) and "oracle" in str(err.value)


def test_a_python_function_is_a_model(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=4, n_qa=2, n_reasonmap=1)
    seen = []

    def model(request):
        seen.append(request.id)
        if request.id == "qa-00001":
            raise RuntimeError("no idea")
        return f"<think>about {request.kind}</think>{request.id}"

    p = make_provider(model)
    assert isinstance(p, CallableProvider) and p.model == "model"
    s = run(ds, p, tmp_path / "run", progress=False)
    rows = {
        r["id"]: r
        for r in map(json.loads, (tmp_path / "run" / "predictions.jsonl").read_text().splitlines())
    }
    assert (s.total, s.completed, s.errors) == (8, 8, 1)
    assert seen == list(rows)  # called in dataset order, one at a time
    assert rows["qa-00001"]["error"] == "RuntimeError: no idea"
    assert rows["rp-00000"]["response"] == "rp-00000"
    assert rows["rp-00000"]["reasoning"] == "about rp"
    assert rows["rp-00000"]["provider"] == "callable"


def test_an_async_function_is_a_model_and_may_return_a_completion(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=5, n_qa=0, n_reasonmap=0)

    async def model(request):
        return Completion("A-B", "why", 3, 4)

    p = make_provider(model, name="mine", model="v1")
    assert isinstance(p, AsyncCallableProvider) and not hasattr(p, "complete_sync")
    s = run(ds, p, tmp_path / "run", progress=False, concurrency=3)
    rows = [
        json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    ]
    assert s.errors == 0 and len(rows) == 5
    assert {(r["response"], r["reasoning"], r["provider"], r["model"]) for r in rows} == {
        ("A-B", "why", "mine", "v1")
    }


def test_a_function_returning_no_text_fails_its_sample_only(tmp_path):
    ds = write_dataset(tmp_path / "ds", n_rp=2, n_qa=0, n_reasonmap=0)
    s = run(ds, make_provider(lambda request: 42), tmp_path / "run", progress=False)
    rows = [
        json.loads(x) for x in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    ]
    assert s.errors == 2 and rows[0]["error"] == "the model function returned int, not str"


def test_the_run_stage_has_no_import_circle_and_the_base_imports_no_provider():
    """Module-level imports among maptab.run's modules (the package ``__init__`` aside) form
    no cycle, and ``run.provider`` and ``run.providers`` import no concrete provider."""
    import ast

    import maptab.run

    root = Path(maptab.run.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in root.glob("*.py"):
        if path.name == "__init__.py":
            continue
        name = f"maptab.run.{path.stem}"
        deps = set()
        for node in ast.parse(path.read_text()).body:  # top level only: lazy imports are fine
            if isinstance(node, ast.ImportFrom) and node.module:
                deps.add(node.module)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
            elif isinstance(node, ast.If):  # `if TYPE_CHECKING:` blocks are not run
                continue
        graph[name] = {d for d in deps if d.startswith("maptab.run.")}
    concrete = {"maptab.run.openai_provider", "maptab.run.vllm_provider", "maptab.run.baselines"}
    assert not graph["maptab.run.provider"] & (concrete | {"maptab.run.providers"})
    assert not graph["maptab.run.providers"] & concrete

    def visit(node: str, stack: list[str]) -> None:
        assert node not in stack, " -> ".join([*stack, node])
        for dep in graph.get(node, ()):
            visit(dep, [*stack, node])

    for name in graph:
        visit(name, [])
