"""The package's shape: imports run one way down the pipeline, and never in a circle.

Every module under ``src/maptab`` is parsed with :mod:`ast`; every ``import`` and
``from … import`` in it counts, at module level and inside functions alike (a function-level
import is a dependency that merely loads late); only imports under ``if TYPE_CHECKING:``
do not (they never run). Each top-level folder or module of the package belongs to a layer,
low to high, and may import its own layer and the layers below it:

    foundation < tasks < core < io < generate < render < run < score < report
        < rewards < kinds < integrations < api < cli

* ``foundation``: ``errors``, ``executors`` (worker processes) and the private helpers
  ``_cache``, ``_limits``, ``_progress``, ``_reasoning``, ``_version``;
* ``tasks``: the task-kind registry (``TaskKind``, ``register``, ``get``), which loads the
  kinds by name and imports none of them;
* ``core``: the domain (networks, tables, costs, the exact solver, QA types, the records);
* ``io``: datasets and ReasonMap metadata on disk;
* the stages ``generate``, ``render``, ``run``, ``score``, ``report``;
* ``rewards`` (RL rewards and exports), ``kinds`` (each built-in task kind wires the stages
  together), ``integrations`` (inspect_ai, lmms-eval);
* ``api`` and the package itself (the facade ``import maptab`` gives), then ``cli``.

Two more rules: ``run`` does not import ``generate`` and ``score`` does not import ``run``
(consumers of a dataset do not call sibling stages that are not their input); and no module
inside the package imports the facade (``from maptab import …`` of a name that is not a
submodule).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "maptab"

LAYERS = (
    "foundation",
    "tasks",
    "core",
    "io",
    "generate",
    "render",
    "run",
    "score",
    "report",
    "rewards",
    "kinds",
    "integrations",
    "api",
    "cli",
)
FOUNDATION = {"errors", "executors", "_cache", "_limits", "_progress", "_reasoning", "_version"}

# (importer layer, imported layer) pairs that are below but still not allowed
FORBIDDEN = {("run", "generate"), ("score", "run")}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
FACADE_IMPORTS: list[str] = []


def imports_of(name: str, path: Path) -> set[str]:
    """The maptab modules that ``name`` imports anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            if origin == "maptab" and any(f"maptab.{a.name}" not in MODULES for a in node.names):
                FACADE_IMPORTS.append(name)
            # "from pkg import submodule" depends on the submodule; anything else on origin
            targets = [
                f"{origin}.{a.name}" if f"{origin}.{a.name}" in MODULES else origin
                for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:  # "import maptab.x.y" of a name in y
                target = target.rpartition(".")[0]
            if target.startswith("maptab") and target != name:
                found.add(target)
    return found


GRAPH = {name: imports_of(name, path) for name, path in MODULES.items()}


def unit(name: str) -> str:
    """The top-level folder or module of the package that module ``name`` belongs to."""
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "maptab"


def layer(name: str) -> str:
    """The layer of module ``name`` (module docstring)."""
    top = unit(name)
    if top in FOUNDATION:
        return "foundation"
    if top == "maptab":
        return "api"
    assert top in LAYERS, f"{name}: top-level {top!r} is in no layer (tests/test_architecture.py)"
    return top


def violations() -> list[str]:
    out = []
    for importer, targets in GRAPH.items():
        for target in sorted(targets):
            low, high = layer(importer), layer(target)
            up = LAYERS.index(high) > LAYERS.index(low)
            if up or (low, high) in FORBIDDEN:
                out.append(f"{importer} ({low}) imports {target} ({high})")
    return out


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def test_every_module_is_parsed_and_placed():
    assert len(MODULES) > 50
    assert {layer(m) for m in MODULES} <= set(LAYERS)
    assert layer("maptab.generate.pipeline") == "generate"
    assert layer("maptab.cli.build") == "cli"
    assert layer("maptab.core.solver") == "core"
    assert layer("maptab.tasks.base") == "tasks"
    assert layer("maptab.kinds.rp") == "kinds"


def test_no_import_runs_up_the_pipeline():
    assert violations() == []


def test_no_import_cycles_between_files():
    cycles = [c for c in strongly_connected(GRAPH) if len(c) > 1]
    assert cycles == []


def test_no_import_cycles_between_folders():
    """No two top-level folders or modules import each other, directly or through others."""
    folders: dict[str, set[str]] = {}
    for importer, targets in GRAPH.items():
        folders.setdefault(unit(importer), set()).update(
            unit(t) for t in targets if unit(t) != unit(importer)
        )
    cycles = [c for c in strongly_connected(folders) if len(c) > 1]
    assert cycles == []


def test_no_module_imports_the_facade():
    assert FACADE_IMPORTS == []


def test_the_checks_can_fail():
    """The cycle finder and the layer rule catch planted faults (brute force on small graphs)."""
    import itertools
    import random

    rng = random.Random(0)
    for _ in range(200):
        nodes = [f"n{i}" for i in range(rng.randint(1, 7))]
        graph = {n: {m for m in nodes if m != n and rng.random() < 0.3} for n in nodes}

        def reaches(a: str, b: str, graph: dict[str, set[str]] = graph) -> bool:
            seen, todo = {a}, [a]
            while todo:
                for nxt in graph[todo.pop()]:
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            return b in seen

        components = strongly_connected(graph)
        assert sorted(itertools.chain.from_iterable(components)) == sorted(nodes)
        for comp in components:
            for a, b in itertools.combinations(comp, 2):
                assert reaches(a, b) and reaches(b, a)
        where = {n: i for i, comp in enumerate(components) for n in comp}
        for a, b in itertools.combinations(nodes, 2):
            if reaches(a, b) and reaches(b, a):
                assert where[a] == where[b]
    assert layer("maptab.cli.app") == "cli" and layer("maptab.render.maps") == "render"
    assert LAYERS.index(layer("maptab.cli.app")) > LAYERS.index(layer("maptab.io.dataset"))
    assert LAYERS.index(layer("maptab.kinds.rp")) > LAYERS.index(layer("maptab.score.scorer"))
