"""A tiny benchmark and three scored runs for the report tests (built in code, scored by the
real scorer), and checks that the fixture is what the other report tests assume."""

from __future__ import annotations

import json
from pathlib import Path

from maptab.core.costs import Weights
from maptab.core.network import Edge, Network, Vertex
from maptab.core.schema import Prediction, QAQuery, RPQuery
from maptab.core.solver import fewest_stations, optimal_routes
from maptab.io.dataset import DatasetWriter, MapEntry
from maptab.score.scorer import score_run

# a payload that must stay text: script tags, a breakout of the JSON block, an event
# handler, quotes, and right-to-left text (an override character and Arabic)
HOSTILE = (
    "<script>document.body.dataset.pwned='script'</script>"
    "</script><script>document.body.dataset.pwned='breakout'</script>"
    "<img src=x onerror=\"document.body.dataset.pwned='img'\"> \"quoted\" 'single' "
    "\u202eevil-rtl\u202c مرحبا <!-- comment -->"
)

METRO = {
    "Red": ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"],
    "Blue": ["Zeta", "Beta", "Eta", "Delta", "Theta-West"],
}
METRO_POS = {
    "Alpha": (0, 2), "Beta": (1, 2), "Gamma": (2, 2), "Delta": (3, 2), "Epsilon": (4, 2),
    "Zeta": (1, 0), "Eta": (2, 3), "Theta-West": (3, 4),
}  # fmt: skip
TRAVEL = [("Lake", "Hill"), ("Hill", "Fort"), ("Fort", "Lake"), ("Fort", "Bay"), ("Bay", "Cave")]
TRAVEL_POS = {"Lake": (0, 0), "Hill": (2, 0), "Fort": (1, 1), "Bay": (1, 3), "Cave": (3, 3)}
TIME = Weights(1.0, 0.0, 0.0, 0.0)


def _metro() -> Network:
    base = Network.from_lines(METRO, map_id="metro-1", positions=METRO_POS)
    slow = {frozenset(("Beta", "Gamma")), frozenset(("Gamma", "Delta"))}
    edges = [
        Edge(e.u, e.v, e.line, 6.0 if frozenset((e.u, e.v)) in slow else 2.0, 1, 0.5, 0.9)
        for e in base.edges
    ]
    vertices = {
        k: Vertex(k, v.lines, 1.0, 0.0, 0.5, 0.8, 5.0 if v.is_transfer else 0.0)
        for k, v in base.vertices.items()
    }
    return base.with_attributes(vertices=vertices, edges=edges)


def _travel() -> Network:
    base = Network.from_edges(TRAVEL, map_id="travel-1", positions=TRAVEL_POS)
    edges = [Edge(e.u, e.v, None, 10.0 + i, 5.0, 0.5, 0.9) for i, e in enumerate(base.edges)]
    vertices = {k: Vertex(k, (), 20.0, 1.0, 0.5, 0.8) for k in base.vertices}
    return base.with_attributes(vertices=vertices, edges=edges)


PAIRS = {
    "metro-1": [("Alpha", "Delta"), ("Zeta", "Epsilon"), ("Alpha", "Theta_West"), ("Gamma", "Eta")],
    "travel-1": [("Lake", "Cave"), ("Hill", "Bay"), ("Cave", "Lake")],
}
LEVELS = ("Easy", "Medium", "Hard")


def _rp(net: Network, difficulty: str) -> list[RPQuery]:
    out = []
    for n, (s, t) in enumerate(PAIRS[net.map_id]):
        fewest = fewest_stations(net, s, t)
        for cat in ("map_only", "map_edge", "time"):
            if cat == "time":
                routes = optimal_routes(net, s, t, TIME)
                short = {r.stations for r in fewest}
                hits = sum(r.stations in short for r in routes)
                rep = "FR" if hits and len(short) == 1 else "PR" if hits else "NR"
            else:
                routes, rep = fewest, None
            out.append(
                RPQuery(
                    id=f"{net.map_id}/rp-{n}-{cat}",
                    map_id=net.map_id,
                    scenario=net.scenario,
                    split="test",
                    category=cat,
                    style="direct_optimization",
                    question=f"Plan a route from {s} to {t} ({cat}). Answer A-B-C.",
                    source=s,
                    target=t,
                    routes=[r.format() for r in routes],
                    route_vertex_numbers=[r.vertex_count for r in routes],
                    transfer_vertex_numbers=[r.transfer_count for r in routes],
                    map_difficulty=difficulty,
                    query_difficulty=LEVELS[n % 3],
                    weights=TIME.as_list() if cat == "time" else None,
                    repetition=rep,
                )
            )
    return out


def _qa(net: Network) -> list[QAQuery]:
    answer = float(len(net.line_names) if net.scenario == "metromap" else len(net.vertices))
    qtype = 1 if net.scenario == "metromap" else 13
    return [
        QAQuery(
            id=f"{net.map_id}/qa-{k}",
            map_id=net.map_id,
            scenario=net.scenario,
            split="test",
            type=qtype + k,
            capabilities=["Visual Perception", "Numerical Reasoning"][: 1 + k],
            style="direct",
            question=f"How many? ({k})",
            answer=answer + k,
            inputs=["map"],
        )
        for k in range(2)
    ]


def build_dataset(root: Path) -> Path:
    w = DatasetWriter(root, seed=0)
    for net, difficulty in ((_metro(), "Easy"), (_travel(), "Hard")):
        w.add_map(net, MapEntry(net.map_id, net.scenario, difficulty, "test"))
        w.add("rp", _rp(net, difficulty))
        w.add("qa", _qa(net))
    w.finish()
    return root


def _answers(name: str, rp: list[RPQuery], qa: list[QAQuery]) -> list[Prediction]:
    preds = []
    for i, q in enumerate(rp):
        if name == "oracle":
            text = f"<route_begin>{q.routes[0]}<route_end>"
        elif name == "shortest":
            text = f"Final answer:\n{q.routes[-1].replace('(transfer)', '')}"
        elif i % 4 == 0:
            text = HOSTILE
        elif i % 4 == 1:
            text = f"<route_begin>{q.source}-Nowhere-{q.target}<route_end>"
        else:
            text = f"<route_begin>{q.target}-{q.source}<route_end>"
        preds.append(Prediction(q.id, "rp", text, model=name))
    for q in qa:
        value = q.answer if name != "chaos" else q.answer + 1
        preds.append(Prediction(q.id, "qa", f"<answer_begin>{value:g}<answer_end>", model=name))
    if name == "chaos":
        preds[-1] = Prediction(qa[-1].id, "qa", "", model=name, error="HTTP 500 <b>boom</b>")
    return preds


def make_runs(tmp: Path) -> tuple[Path, list[Path]]:
    """The dataset and three scored runs: ``oracle`` (always the first gold route),
    ``shortest`` (a fewest-stations route, unmarked), ``chaos`` (hostile text, unknown
    stations, reversed routes, wrong QA answers, one API error; its model name is hostile)."""
    ds = build_dataset(tmp / "dataset")
    from maptab.io.dataset import Dataset

    d = Dataset(ds)
    rp, qa = d.rp(), d.qa()
    runs = []
    for name in ("oracle", "shortest", "chaos"):
        run = tmp / f"run-{name}"
        run.mkdir()
        model = name if name != "chaos" else "chaos <script>document.title='x'</script>"
        (run / "run.json").write_text(json.dumps({"dataset": str(ds), "model": model}))
        rows = [p.to_dict() for p in _answers(name, rp, qa)]
        (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        score_run(run, progress=False)
        runs.append(run)
    return ds, runs


def test_fixture_runs_score_as_designed(tmp_path):
    _, runs = make_runs(tmp_path)
    rows = {
        p.name: [json.loads(x) for x in (p / "scores.jsonl").read_text().splitlines()] for p in runs
    }
    oracle = [r for r in rows["run-oracle"] if r["kind"] == "rp"]
    assert oracle and all(r["strict"] and r["ema"] == 1 for r in oracle)
    chaos = [r for r in rows["run-chaos"] if r["kind"] == "rp"]
    assert not any(r["strict"] for r in chaos)
    assert {r["error_type"] for r in chaos} >= {"Output Format", "Perception"}
    # the API error is not scored
    assert len(rows["run-chaos"]) == len(rows["run-oracle"]) - 1
    # the time queries of Alpha→Delta prefer the transfer route: not all FR
    reps = {r["repetition"] for r in oracle if r["category"] == "time"}
    assert reps - {"FR"}
