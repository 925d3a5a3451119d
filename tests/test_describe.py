"""``maptab stats`` figures: hand-made networks whose answers are worked out by
hand, gold-label shares on hand-made rows, the baselines against ``maptab run`` +
``maptab score``, the shipped reference, and the CLI."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from _examples import examples
from maptab.cli.app import app
from maptab.core.network import Network
from maptab.generate.pipeline import build_benchmark
from maptab.report.describe import (
    PAPER_TABLE4,
    count_simple_paths,
    describe_dataset,
    flatten,
    gold_figures,
    implied_shares,
    load_reference,
    network_figures,
    reference_figures,
    summarize_networks,
)
from maptab.run import make_provider, run
from maptab.score.scorer import score_run

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
STATIONS = SHARED / "reasonmap-stations"


# ---------------------------------------------------------------- hand-made networks
def cross() -> Network:
    """Line A a-b-c-d and line B e-b-f crossing at b (a tree of 6 stations)."""
    return Network.from_lines({"A": ["a", "b", "c", "d"], "B": ["e", "b", "f"]}, map_id="x")


def square() -> Network:
    """Line A p-q-r and line B p-s-r: one 4-cycle, p-r and q-s each have two routes."""
    return Network.from_lines({"A": ["p", "q", "r"], "B": ["p", "s", "r"]}, map_id="sq")


def test_cross_figures_by_hand():
    f = network_figures(cross())
    assert (f.stations, f.lines, f.edges, f.cycles, f.components) == (6, 2, 5, 0, 1)
    assert f.degrees == {1: 4, 2: 1, 4: 1} and f.dead_ends == 4
    assert f.transfer_stations == 1
    # 15 pairs; hops: a:1,2,3,2,2  b:1,2,1,1  c:1,2,2  d:3,3  e-f:2 -> 28
    assert f.pairs == 15 and f.avg_hops == pytest.approx(28 / 15) and f.max_hops == 3
    # pairs at 2+ hops: ac ad ae af bd ce cf de df ef
    assert f.far_pairs == 10 and f.tied_pairs == 0
    assert f.route_stations == Counter({3: 7, 4: 3})
    # no change: a-c a-d b-d e-f; one change at b: a-e a-f c-e c-f d-e d-f
    assert f.transfers == Counter({0: 4, 1: 6})


def test_square_ties_and_transfers_by_hand():
    f = network_figures(square())
    assert f.cycles == 1 and f.far_pairs == 2 and f.tied_pairs == 2
    # p-r: all on A (or all on B), no change; q-s: one change (at p or at r)
    assert f.transfers == Counter({0: 1, 1: 1})


def test_shared_track_transfers_take_the_common_line():
    # A a-b-c-d, B x-b-c-y share b-c: a->y rides A to c and changes once, x->y rides B only
    net = Network.from_lines({"A": ["a", "b", "c", "d"], "B": ["x", "b", "c", "y"]})
    f = network_figures(net)
    assert f.edges == 5 and f.cycles == 0
    # far pairs and their fewest changes: a-c 0, a-d 0, a-x 1, a-y 1, b-d 0, b-y 0,
    # c-x 0, d-x 1, d-y 1, x-y 0
    assert f.far_pairs == 10 and f.transfers == Counter({0: 6, 1: 4})


def test_simple_paths_by_hand():
    # square p-q-r-s-p with chord p-r and pendant t at q
    net = Network.from_edges(
        [("p", "q"), ("q", "r"), ("r", "s"), ("s", "p"), ("p", "r"), ("t", "q")]
    )
    g = net.simple_graph()
    assert count_simple_paths(g, "p", "r") == 3  # p-r, p-q-r, p-s-r
    assert count_simple_paths(g, "q", "s") == 4  # q-p-s q-r-s q-p-r-s q-r-p-s
    assert count_simple_paths(g, "t", "s") == 4 and count_simple_paths(g, "t", "q") == 1
    assert count_simple_paths(g, "q", "s", cap=2) == 2
    f = network_figures(net)
    assert f.dead_ends == 1 and f.cycles == 2
    # 10 pairs: tq 1, tp 3, tr 3, ts 4, pq 3, pr 3, ps 3, qr 3, qs 4, rs 3
    assert sorted(f.simple_paths) == [1, 3, 3, 3, 3, 3, 3, 3, 4, 4]


def test_summary_weighs_every_map_the_same():
    s = summarize_networks([network_figures(cross()), network_figures(square())])
    assert s["maps"] == 2
    assert s["tied_pair_share"] == pytest.approx((0 / 10 + 2 / 2) / 2)
    # transfers: cross 6 of 10 pairs change once (mean 0.6), square 1 of 2 (0.5)
    assert s["transfers_mean"] == pytest.approx((0.6 + 0.5) / 2)
    assert s["transfers_zero_share"] == pytest.approx((0.4 + 0.5) / 2)
    # route stations: cross {3: .7, 4: .3}, square {3: 1} -> {3: 0.85, 4: 0.15}
    assert s["route_stations_p50"] == 3 and s["route_stations_p90"] == 4
    assert s["lines_median"] == 2 and s["maps_le_2_lines"] == 1.0 and s["maps_1_line"] == 0.0
    assert s["dead_end_share"] == pytest.approx(4 / 10)
    assert s["cycles_mean"] == 0.5


# ---------------------------------------------------------------- gold labels
def _row(category, repetition=None, routes=("a-b-c",), stations=3, transfers=0, split="test"):
    return SimpleNamespace(
        category=category,
        repetition=repetition,
        routes=list(routes),
        route_vertex_numbers=[stations],
        transfer_vertex_numbers=[transfers],
        split=split,
        query_difficulty="easy",
    )


def test_gold_figures_by_hand():
    rows = [
        _row("map_only", routes=("a-b-c", "a-d-c"), stations=3),
        _row("map_only", routes=("a-b(transfer)-c", "a-b-c"), stations=5, transfers=1),
        _row("edge_only"),
        *[_row("time", r) for r in ("FR", "FR", "PR", "NR")],
        *[_row("price", r) for r in ("FR", "NR")],
    ]
    g = gold_figures(rows)
    assert g["od_pairs"] == 2 and g["rp_queries"] == 9
    assert g["repetition"] == {"FR": 0.5, "PR": 1 / 6, "NR": 1 / 3}
    assert g["repetition_by_category"]["time"] == {"FR": 0.5, "PR": 0.25, "NR": 0.25}
    # two distinct station sequences only for the first pair (marks do not count)
    assert g["gold_tied_share"] == 0.5
    assert g["gold_transfers_mean"] == 0.5 and g["gold_transfers_zero_share"] == 0.5
    assert g["gold_route_stations_max"] == 5


# ---------------------------------------------------------------- datasets and baselines
@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("describe") / "mini"
    build_benchmark(root, preset="mini", seed=3)
    return root


@pytest.mark.slow
def test_baselines_match_run_and_score(mini: Path, tmp_path: Path):
    figures = describe_dataset(mini, baselines=True)
    for name in ("shortest", "random"):
        run(mini, make_provider(name), tmp_path / name)
        summary = score_run(tmp_path / name)
        for scenario, section in figures["scenarios"].items():
            block = summary["rp"]["by_scenario"][scenario]["by_category"]
            mine = section["baselines"][name]
            for category, result in block.items():
                assert mine[category] == pytest.approx(result["ema"]["mean"]), (name, category)


def test_dataset_figures_agree_with_the_rows(mini: Path):
    figures = describe_dataset(mini, split="test")
    rows = [json.loads(x) for x in (mini / "rp.jsonl").read_text("utf-8").splitlines()]
    for scenario, section in figures["scenarios"].items():
        mine = [r for r in rows if r["scenario"] == scenario and r["split"] == "test"]
        assert section["gold"]["rp_queries"] == len(mine)
        weighted = [r for r in mine if r["repetition"] is not None]
        nr = sum(r["repetition"] == "NR" for r in weighted) / len(weighted)
        assert section["gold"]["repetition"]["NR"] == pytest.approx(nr)
        assert section["networks"]["maps"] == 3


# ---------------------------------------------------------------- reference and CLI
def test_implied_shares_reproduce_the_all_column():
    for cols in PAPER_TABLE4.values():
        shares = implied_shares(cols["ema"], cols["pma"])
        assert sum(shares) == pytest.approx(1.0)
        for metric in ("ema", "pma"):
            parts = cols[metric]
            assert sum(s * p for s, p in zip(shares, parts[:3], strict=True)) == pytest.approx(
                parts[3]
            )
    fr, pr, nr = implied_shares(PAPER_TABLE4["metromap"]["ema"], PAPER_TABLE4["metromap"]["pma"])
    assert (round(fr, 2), round(pr, 3), round(nr, 2)) == (0.73, 0.075, 0.19)


def test_shipped_reference_names_a_source_for_every_figure():
    ref = load_reference()
    assert set(ref) == {"metromap", "travelmap"}
    for section in ref.values():
        for entry in section.values():
            assert entry["source"] and "value" in entry


@pytest.mark.slow
@pytest.mark.conformance
def test_shipped_reference_is_recomputed_from_the_real_networks():
    if not STATIONS.is_dir():
        pytest.skip(f"{STATIONS} is absent (the shared ReasonMap data)")
    from maptab.cli.stats import _reasonmap_networks
    from maptab.report.describe import describe_networks

    real = describe_networks(_reasonmap_networks(STATIONS))["scenarios"]["metromap"]["networks"]
    assert reference_figures(real) == load_reference()
    # an independent audit of the same networks: 20% of maps with at most two lines, median 4
    assert real["maps_le_2_lines"] == 0.2 and real["lines_median"] == 4


@pytest.mark.slow
def test_cli_prints_and_writes_json(mini: Path, tmp_path: Path):
    out = tmp_path / "stats.json"
    result = CliRunner().invoke(
        app, ["stats", str(mini), "--compare", "--out", str(out), "--no-progress"]
    )
    assert result.exit_code == 0, result.output
    assert "tied_pair_share" in result.output and "ReasonMap" in result.output
    data = json.loads(out.read_text("utf-8"))
    flat = flatten(data["scenarios"]["metromap"])
    assert 0.0 <= flat["networks.tied_pair_share"] <= 1.0


def test_cli_errors_are_one_line(tmp_path: Path):
    runner = CliRunner()
    result = runner.invoke(app, ["stats", str(tmp_path)])
    assert result.exit_code == 1 and "not a maptab dataset" in result.output
    assert "Traceback" not in result.output
    result = runner.invoke(app, ["stats"])
    assert result.exit_code == 1 and "DATASET" in result.output


# ---------------------------------------------------------------- against the solver
@settings(max_examples=examples(15), deadline=None)
@given(
    st.integers(1, 4),
    st.integers(15, 40),
    st.integers(0, 2**32 - 1),
)
def test_pair_figures_equal_the_solver(n_lines, n_stations, seed):
    """Ties and fewest transfers per pair equal what the exact solver's criteria-free
    routes say (every fewest-stations route with its fewest-transfer marking)."""
    from maptab.core.solver import fewest_stations
    from maptab.generate.synth import MetroSpec, synth_metro

    net = synth_metro(MetroSpec(n_lines, max(n_stations, 3 + 2 * n_lines)), seed)
    f = network_figures(net)
    tied, transfers = 0, Counter()
    stations = net.stations
    for i, s in enumerate(stations):
        for t in stations[i + 1 :]:
            routes = fewest_stations(net, s, t)
            if len(routes[0].stations) < 3:
                continue
            tied += len({r.stations for r in routes}) > 1
            transfers[min(r.transfer_count for r in routes)] += 1
    assert f.tied_pairs == tied and f.transfers == transfers


@settings(max_examples=examples(25), deadline=None)
@given(st.sets(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=14))
def test_simple_path_count_equals_brute_force(pairs):
    edges = [(f"s{a}", f"s{b}") for a, b in pairs if a != b]
    assume(edges)
    graph = Network.from_edges(edges).simple_graph()
    nodes = sorted(graph)

    def brute(s: str, t: str) -> int:
        total = 0
        for k in range(len(nodes) - 1):
            for middle in itertools.permutations([n for n in nodes if n not in (s, t)], k):
                seq = [s, *middle, t]
                total += all(b in graph[a] for a, b in zip(seq, seq[1:], strict=False))
        return total

    for s, t in itertools.combinations(nodes, 2):
        assert count_simple_paths(graph, s, t, cap=10**6) == brute(s, t)


@pytest.mark.slow
def test_a_malformed_reference_is_a_one_line_error(mini: Path, tmp_path: Path):
    runner = CliRunner()
    for text in ("[1, 2]", "{not json", '{"metromap": {"x": 3}}'):
        bad = tmp_path / "ref.json"
        bad.write_text(text, "utf-8")
        result = runner.invoke(
            app, ["stats", str(mini), "--compare", "--reference", str(bad), "--no-progress"]
        )
        assert result.exit_code == 1 and "ref.json" in result.output, result.output
        assert "Traceback" not in result.output
