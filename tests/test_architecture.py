"""The package's shape (issue 12): imports run one way down the pipeline, and never in a circle.

Every module under ``src/maptab`` is parsed with :mod:`ast`; every ``import`` and
``from … import`` in it counts, at module level and inside functions alike (a function-level
import is a dependency that merely loads late); only imports under ``if TYPE_CHECKING:``
do not (they never run). Each module belongs to a layer, low to high:

    domain < generate < render < run < score < report < tasks.<kind> < cli

and may import its own layer and the layers below it. Two more rules:

* a module imports nothing above its layer ("up the pipeline");
* dataset consumers do not call sibling stages below them that are not their input:
  ``run`` does not import ``generate`` (answers live beside the domain, not in the builder)
  and ``score`` does not import ``run`` (scoring reads the dataset and the predictions
  file, not the run stage's code);
* no two modules import each other, directly or through others (strongly connected
  components of the import graph, Tarjan's algorithm, must be single modules).

Where the layers put the modules that are not in a stage package, and why:

* ``describe`` (dataset figures for ``maptab stats``, with the baselines' scores) is a
  report: it reads a dataset, runs the baselines and applies the paper metrics.
* ``integrity`` (``maptab validate`` re-derives every gold label and compares) is a check
  like scoring: it reads a dataset and recomputes answers with the generator's code.
* ``rewards`` (RL rewards and the TRL/verl exports) and ``integrations`` (inspect_ai tasks,
  the lmms-eval export) are integrations, like a task kind's file: they build the same
  prompts as ``run`` and score with ``score``.
* ``api`` (the public facade ``import maptab`` gives, ``docs/api.md``) fronts every stage,
  as the CLI does, so it sits with the CLI.
* everything else at the top of ``maptab`` (network, tables, costs, solver, schema, dataset,
  cache, progress, rounding, ...) is the domain: the objects and exact computations every
  stage shares.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "maptab"

LAYERS = ("domain", "generate", "render", "run", "score", "report", "tasks", "cli")

# top-level modules placed above the domain (see the module docstring)
PLACED = {
    "maptab.api": "cli",
    "maptab.describe": "report",
    "maptab.integrity": "score",
    "maptab.rewards": "tasks",
    "maptab.integrations": "tasks",
}

# (importer layer, imported layer) pairs that are below but still not allowed
FORBIDDEN = {("run", "generate"), ("score", "run")}

# Imports that break the rules above and are tolerated for now: none. (Issue 12 emptied it:
# answers and sample selection moved out of generate/ and run/, providers got a base module.)
KNOWN_VIOLATIONS: set[tuple[str, str]] = set()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


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


def layer(name: str) -> str:
    """The layer of module ``name`` (module docstring)."""
    for prefix, placed in PLACED.items():
        if name == prefix or name.startswith(prefix + "."):
            return placed
    parts = name.split(".")
    if len(parts) == 1:
        return "domain"  # the package itself
    top = parts[1]
    if top == "tasks":
        # tasks/__init__ and tasks/base are the registry's domain part; a kind's file is above
        return "domain" if len(parts) == 2 or parts[2] in ("base", "registry") else "tasks"
    if top in LAYERS:
        return top
    return "domain"


def violations() -> list[str]:
    out = []
    for importer, targets in GRAPH.items():
        for target in sorted(targets):
            low, high = layer(importer), layer(target)
            up = LAYERS.index(high) > LAYERS.index(low)
            if (up or (low, high) in FORBIDDEN) and (importer, target) not in KNOWN_VIOLATIONS:
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
    assert layer("maptab.solver") == "domain"


def test_no_import_runs_up_the_pipeline():
    assert violations() == []


def test_no_import_cycles():
    allowed = {frozenset(pair) for pair in KNOWN_VIOLATIONS}
    graph = {
        m: {
            t
            for t in targets
            if frozenset((m, t)) not in allowed and (m, t) not in KNOWN_VIOLATIONS
        }
        for m, targets in GRAPH.items()
    }
    cycles = [c for c in strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def test_known_violations_are_still_real():
    """An allowlisted import that is gone must leave the list (it only shrinks)."""
    stale = sorted(pair for pair in KNOWN_VIOLATIONS if pair[1] not in GRAPH.get(pair[0], set()))
    assert stale == []


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
    assert LAYERS.index(layer("maptab.cli.app")) > LAYERS.index(layer("maptab.dataset"))
