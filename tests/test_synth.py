"""Synthetic metro systems and scenic areas: structural invariants, names, determinism."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _examples import examples
from maptab.core.network import Network, table_name
from maptab.generate.names import (
    HUB_KINDS,
    LANGUAGES,
    hub_names,
    line_names,
    name_key,
    spot_names,
    station_names,
)
from maptab.generate.synth import (
    METRO_LANGUAGE_WEIGHTS,
    SIZES,
    TRAVEL_LANGUAGE_WEIGHTS,
    MetroSpec,
    ScenicSpec,
    SynthError,
    sample_metro_spec,
    sample_scenic_spec,
    synth_metro,
    synth_scenic,
)

FAST = settings(max_examples=examples(40), deadline=None)
FEW = settings(max_examples=examples(4), deadline=None)


# ---------------------------------------------------------------- helpers
def connected(net: Network) -> bool:
    graph = net.simple_graph()
    start = next(iter(graph))
    seen, stack = {start}, [start]
    while stack:
        for n in graph[stack.pop()]:
            if n not in seen:
                seen.add(n)
                stack.append(n)
    return len(seen) == len(graph)


def line_degrees(net: Network, line: str) -> dict[str, int]:
    deg: Counter[str] = Counter()
    for e in net.line_edges(line):
        deg[e.u] += 1
        deg[e.v] += 1
    return dict(deg)


def check_metro(net: Network, spec: MetroSpec) -> None:
    lines = net.line_names
    assert len(net.vertices) == spec.n_stations
    assert len(lines) == spec.n_lines == len(set(lines))
    assert connected(net)
    # every line is simple: no edge twice (either direction)
    keys = [e.key() for e in net.edges]
    assert len(keys) == len(set(keys))
    # vertex lines agree with the edges
    on: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        for s in line_degrees(net, line):
            on[s].append(line)
    assert {s: sorted(v.lines) for s, v in net.vertices.items()} == {
        s: sorted(ls) for s, ls in on.items()
    }
    loops = set(net.meta["loop_lines"])
    branched = set(net.meta["branched_lines"])
    assert len(loops) == spec.loop_lines and len(branched) == spec.branches
    for line in lines:
        deg = line_degrees(net, line)
        n_edges = len(net.line_edges(line))
        if line in loops:
            assert set(deg.values()) == {2} and n_edges == len(deg)
            seq = net.line_stations(line)
            assert seq[0] == seq[-1] and len(seq) == len(deg) + 1
            assert net.is_loop(line)
        else:
            assert n_edges == len(deg) - 1  # a tree (connected: checked by line_stations)
            assert len(net.line_stations(line)) == len(deg)
            assert max(deg.values()) == (3 if line in branched else 2)
    # SPEC 7 (3): edges + lines - loop lines = station occurrences
    assert len(net.edges) + len(lines) - len(loops) == sum(
        len(v.lines) for v in net.vertices.values()
    )
    # parallel edges exactly where shared segments and trunks were requested: 1-3 edges
    # of a segment, 5-40 of a trunk, shared with the host line named in meta
    pairs = Counter(frozenset((e.u, e.v)) for e in net.edges)
    assert (max(pairs.values()) > 1) == (spec.shared_segments + spec.trunks > 0)
    assert len(net.meta["shared_segments"]) == spec.shared_segments
    assert len(net.meta["trunks"]) == spec.trunks
    for key, (lo, hi) in (("shared_segments", (1, 3)), ("trunks", (5, 40))):
        for host, line in net.meta[key]:
            host_pairs = {frozenset((e.u, e.v)) for e in net.line_edges(host)}
            common = host_pairs & {frozenset((e.u, e.v)) for e in net.line_edges(line)}
            assert lo <= len(common) <= hi, (key, host, line, len(common))
    # geometry: distinct grid points, every edge an octilinear run of 1-3 grid units
    # that passes no other station
    pos = net.positions
    assert set(pos) == set(net.vertices)
    assert len(set(pos.values())) == len(pos)
    taken = set(pos.values())
    for e in net.edges:
        (ux, uy), (vx, vy) = pos[e.u], pos[e.v]
        dx, dy = vx - ux, vy - uy
        assert dx == int(dx) and dy == int(dy) and (dx, dy) != (0.0, 0.0)
        assert dx == 0 or dy == 0 or abs(dx) == abs(dy)
        k = int(max(abs(dx), abs(dy)))
        assert 1 <= k <= 3 if e.line not in set(net.meta["loop_lines"]) else k == 1
        assert not any((ux + i * dx / k, uy + i * dy / k) in taken for i in range(1, k))
    colors = net.meta["line_colors"]
    assert set(colors) == set(lines) and all(
        re.fullmatch(r"#[0-9a-f]{6}", c) for c in colors.values()
    )
    assert net.meta["kind"] == "metro" and net.meta["language"] == spec.language
    check_names(net)


def check_names(net: Network) -> None:
    labels = [net.label(s) for s in net.vertices]
    assert len({name_key(x) for x in labels}) == len(labels)
    for key in net.vertices:
        assert "-" not in key and key == key.strip()
        assert table_name(net.label(key)) == key


def _segments_cross(p, q, r, s) -> bool:
    def orient(a, b, c):
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    if {p, q} & {r, s}:
        return False
    return orient(r, s, p) * orient(r, s, q) < 0 and orient(p, q, r) * orient(p, q, s) < 0


def check_scenic(net: Network, spec: ScenicSpec) -> None:
    assert net.scenario == "travelmap"
    assert len(net.vertices) == spec.n_spots
    assert connected(net)
    pairs = [frozenset((e.u, e.v)) for e in net.edges]
    assert len(pairs) == len(set(pairs))
    assert len(net.edges) - len(net.vertices) + 1 == spec.extra_edges  # independent cycles
    deg = Counter(s for e in net.edges for s in (e.u, e.v))
    assert sum(1 for s in net.vertices if deg[s] == 1) >= spec.spurs
    pos = net.positions
    pts = list(pos.values())
    assert min(math.dist(a, b) for i, a in enumerate(pts) for b in pts[i + 1 :]) >= 0.99
    segs = [(pos[e.u], pos[e.v]) for e in net.edges]
    assert not any(_segments_cross(*a, *b) for i, a in enumerate(segs) for b in segs[i + 1 :])
    meta = net.meta
    assert len(meta["hubs"]) == spec.hubs and set(meta["hubs"].values()) <= set(HUB_KINDS)
    names = {e.name for e in net.edges}
    assert set(meta["modes"]) == names and set(meta["modes"].values()) <= {"walk", "drive"}
    ann = meta["annotations"]
    assert set(ann) <= names
    if spec.annotation is None:
        assert ann == {}
    else:
        assert len(ann) == max(1, round(spec.annotated_fraction * len(net.edges)))
        for a in ann.values():
            assert a["kind"] == spec.annotation and a["value"] > 0
            if a["kind"] == "time":
                assert isinstance(a["value"], int) and a["unit"] == "min"
            else:
                assert a["unit"] == "km"
    check_names(net)


# ---------------------------------------------------------------- strategies
@st.composite
def metro_specs(
    draw, max_lines: int = 7, max_stations: int = 120, with_trunks: bool = False
) -> MetroSpec:
    """Valid specs of every kind; ``with_trunks``: at least one trunk (so two lines or more)."""
    n_lines = draw(st.integers(2 if with_trunks else 1, max_lines))
    loops = draw(st.integers(0, min(2, n_lines - 1 - with_trunks)))
    free = n_lines - 1 - loops
    trunks = draw(st.integers(int(with_trunks), min(3, free)))
    shared = draw(st.integers(0, min(3, free - trunks)))
    branches = draw(st.integers(0, min(2, free + 1)))
    floor = (6 if trunks else 3) + 4 * loops + 2 * (n_lines - 1 - loops) + branches
    n_stations = draw(st.integers(max(15, floor), max(max_stations, floor)))
    lang = draw(st.sampled_from(sorted(LANGUAGES)))
    rates = st.sampled_from([0.0, 0.3, 0.5, 1.0])
    return MetroSpec(
        n_lines,
        n_stations,
        loops,
        branches,
        shared,
        lang,
        trunks=trunks,
        tee_rate=draw(rates),
        join_rate=draw(rates),
    )


@st.composite
def scenic_specs(draw) -> ScenicSpec:
    n = draw(st.integers(10, 40))
    spurs = draw(st.integers(0, n // 4))
    extra = draw(st.integers(0, (n - spurs) // 2))
    return ScenicSpec(
        n,
        extra,
        spurs,
        hubs=draw(st.integers(0, 2)),
        annotation=draw(st.sampled_from([None, "time", "distance"])),
        annotated_fraction=draw(st.sampled_from([0.3, 0.6, 1.0])),
        language=draw(st.sampled_from(sorted(LANGUAGES))),
    )


SEEDS = st.integers(0, 2**32 - 1)


# ---------------------------------------------------------------- metro
@FAST
@given(metro_specs(), SEEDS)
def test_metro_invariants_small(spec, seed):
    check_metro(synth_metro(spec, seed, "m"), spec)


@pytest.mark.slow
@FEW
@given(metro_specs(max_lines=25, max_stations=450).filter(lambda s: s.n_stations > 300), SEEDS)
def test_metro_invariants_large(spec, seed):
    check_metro(synth_metro(spec, seed), spec)


def test_metro_extremes():
    for spec in (
        MetroSpec(25, 450, 2, 2, 3, "zh"),
        MetroSpec(25, 450, 2, 2, 3, "zh", trunks=19, tee_rate=1.0, join_rate=1.0),
        MetroSpec(2, 15, trunks=1, tee_rate=1.0, join_rate=1.0),
        MetroSpec(2, 15),
        MetroSpec(2, 15, 1, 1, 0),
        MetroSpec(1, 15),
        MetroSpec(1, 60, branches=1),
    ):
        check_metro(synth_metro(spec, 7), spec)


def test_metro_deterministic_and_seed_sensitive():
    spec = MetroSpec(6, 90, 1, 1, 2, "ja")
    a, b = synth_metro(spec, 11, "x"), synth_metro(spec, 11, "x")
    assert a.to_dict() == b.to_dict()
    assert a.labels == b.labels and [a.label(s) for s in a.vertices] == [
        b.label(s) for s in b.vertices
    ]
    c = synth_metro(spec, 12, "x")
    assert a.to_dict() != c.to_dict()
    assert set(a.vertices) != set(c.vertices)


def test_metro_hyphenated_names_keep_labels():
    net = synth_metro(MetroSpec(12, 300, language="de"), 3)
    assert any("-" in lbl for lbl in net.labels.values())  # German street names use hyphens
    check_names(net)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_lines": 0, "n_stations": 20},
        {"n_lines": 26, "n_stations": 200},
        {"n_lines": 3, "n_stations": 14},
        {"n_lines": 3, "n_stations": 451},
        {"n_lines": 3, "n_stations": 40, "loop_lines": 3},
        {"n_lines": 3, "n_stations": 40, "loop_lines": 1, "shared_segments": 2},
        {"n_lines": 3, "n_stations": 40, "language": "xx"},
        {"n_lines": 25, "n_stations": 50},
        {"n_lines": 3, "n_stations": 40, "shared_segments": 1, "trunks": 2},
        {"n_lines": 3, "n_stations": 40, "trunks": -1},
        {"n_lines": 2, "n_stations": 15, "loop_lines": 1, "trunks": 1},
        {"n_lines": 3, "n_stations": 40, "tee_rate": 1.5},
        {"n_lines": 3, "n_stations": 40, "join_rate": -0.1},
    ],
)
def test_metro_spec_rejects(kwargs):
    with pytest.raises(SynthError):
        MetroSpec(**kwargs)


# ---------------------------------------------------------------- scenic
@FAST
@given(scenic_specs(), SEEDS)
def test_scenic_invariants(spec, seed):
    check_scenic(synth_scenic(spec, seed, "t"), spec)


def test_scenic_deterministic():
    spec = ScenicSpec(30, 5, 3, 2, "distance", 0.7, "th")
    a, b = synth_scenic(spec, 5), synth_scenic(spec, 5)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict() != synth_scenic(spec, 6).to_dict()


def test_scenic_hub_names_name_their_kind():
    net = synth_scenic(ScenicSpec(20, 3, 2, 2, None, 0.5, "en"), 1)
    for spot, kind in net.meta["hubs"].items():
        assert net.label(spot).endswith("Airport" if kind == "airport" else "Station")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_spots": 9},
        {"n_spots": 41},
        {"n_spots": 20, "spurs": 6},
        {"n_spots": 20, "extra_edges": 11},
        {"n_spots": 20, "hubs": 3},
        {"n_spots": 20, "annotation": "speed"},
        {"n_spots": 20, "annotated_fraction": 0.0},
    ],
)
def test_scenic_spec_rejects(kwargs):
    with pytest.raises(SynthError):
        ScenicSpec(**kwargs)


# ---------------------------------------------------------------- sampling
def test_sampled_specs_build_and_grow_with_size():
    rng = np.random.default_rng(0)
    for make, synth, check in (
        (sample_metro_spec, synth_metro, check_metro),
        (sample_scenic_spec, synth_scenic, check_scenic),
    ):
        sizes = {}
        for size in SIZES:
            specs = [make(rng, size) for _ in range(12)]
            for i, spec in enumerate(specs[:3]):
                check(synth(spec, i), spec)
            sizes[size] = np.mean(
                [getattr(s, "n_stations", getattr(s, "n_spots", 0)) for s in specs]
            )
        assert sizes["small"] < sizes["medium"] < sizes["large"]


def test_sampled_languages_follow_weights():
    rng = np.random.default_rng(1)
    metro = Counter(sample_metro_spec(rng, "small").language for _ in range(2000))
    travel = Counter(sample_scenic_spec(rng, "small").language for _ in range(2000))
    assert set(metro) <= set(METRO_LANGUAGE_WEIGHTS) and set(travel) <= set(TRAVEL_LANGUAGE_WEIGHTS)
    for counts, weights in ((metro, METRO_LANGUAGE_WEIGHTS), (travel, TRAVEL_LANGUAGE_WEIGHTS)):
        for lang, w in weights.items():
            assert abs(counts[lang] / 2000 - w) < 0.04
    assert sample_metro_spec(rng, "large", language="ar").language == "ar"
    with pytest.raises(SynthError):
        sample_metro_spec(rng, "huge")


# ---------------------------------------------------------------- names
SCRIPTS = {
    "zh": r"[\u4e00-\u9fff]",
    "ja": r"[\u3040-\u30ff\u4e00-\u9fff]",
    "ko": r"[\uac00-\ud7af]",
    "ru": r"[\u0400-\u04ff]",
    "ar": r"[\u0600-\u06ff]",
    "th": r"[\u0e00-\u0e7f]",
    "zh-tw": r"[\u4e00-\u9fff]",
    "el": r"[\u0370-\u03ff]",
    "uk": r"[\u0400-\u04ff]",
    "he": r"[\u0590-\u05ff]",
    "fa": r"[\u0600-\u06ff\ufb50-\ufeff]",
    "hi": r"[\u0900-\u097f]",
    "bn": r"[\u0980-\u09ff]",
    "ka": r"[\u10a0-\u10ff]",
    "hy": r"[\u0530-\u058f]",
}


@pytest.mark.parametrize("lang", sorted(LANGUAGES))
def test_names_every_language(lang):
    rng = np.random.default_rng(4)
    stations = station_names(450, lang, rng)
    spots = spot_names(40, lang, rng, taken=stations)
    hubs = hub_names(["airport", "station"], lang, rng, taken=spots)
    everything = stations + spots + hubs
    assert len({name_key(x) for x in everything}) == len(everything)
    for name in everything:
        assert name and name == name.strip() and not set(name) & set(",;()<>")
        if lang in SCRIPTS:
            assert re.search(SCRIPTS[lang], name), name
            assert not re.search(r"[A-Za-z]", name), name  # no mixed-script fallbacks
        else:
            assert re.search(r"[A-Za-zÀ-ÿ]", name), name
    lines = line_names(12, lang, rng)
    assert len(set(lines)) == 12 and all(re.search(r"\d", x) for x in lines)


def test_names_deterministic():
    a = station_names(50, "ko", np.random.default_rng(9))
    assert a == station_names(50, "ko", np.random.default_rng(9))
    assert a != station_names(50, "ko", np.random.default_rng(10))


def test_line_name_forms():
    rng = np.random.default_rng(0)
    forms = {lang: line_names(3, lang, np.random.default_rng(2)) for lang in LANGUAGES}
    assert forms["zh"][0].endswith("号线") and forms["ko"][0].endswith("호선")
    assert forms["fr"][0].startswith("Ligne ") and forms["ar"][0].startswith("الخط ")
    with pytest.raises(ValueError):
        station_names(3, "xx", rng)


def test_every_line_has_at_least_three_stations_even_on_a_tight_spec() -> None:
    # found by hypothesis: 15 stations for 5 lines (one a loop) once gave a one-edge line
    spec = MetroSpec(n_lines=5, n_stations=15, loop_lines=1, language="ar")
    net = synth_metro(spec, 7, "m")
    check_metro(net, spec)
    assert min(len(net.line_edges(line)) for line in net.line_names) >= 2


# ---------------------------------------------------------------- shapes
@pytest.mark.slow
def test_generated_shapes_match_real_networks_within_tolerances():
    """A small preset (30 + 30 maps, the three sizes in turn) against the shapes of real
    networks, with room for the sampling noise of 30 maps (the paper preset's figures are in
    docs/reference/synthesis.md)."""
    from maptab.generate.pipeline import Preset, synthesize_maps
    from maptab.report.describe import network_figures, summarize_networks

    nets = synthesize_maps(Preset("shape", 30, 30, 150, 150), seed=5)
    metro = summarize_networks([network_figures(n) for n in nets if n.scenario == "metromap"])
    scenic = summarize_networks([network_figures(n) for n in nets if n.scenario == "travelmap"])
    assert metro["tied_pair_share"] <= 0.15
    assert 3 <= metro["lines_median"] <= 5 and 0.05 <= metro["maps_le_2_lines"] <= 0.35
    assert metro["maps_avg_hops_over_17"] <= 0.05
    assert metro["route_stations_p90"] <= 25 and metro["route_stations_max"] <= 50
    assert 0.9 <= metro["transfers_mean"] <= 1.5 and 0.2 <= metro["transfers_zero_share"] <= 0.45
    # trunks and fewer dead ends (real: 4.8% shared track, 2 of 25 maps over a quarter,
    # 1.64 dead ends per line, 6.3% dead ends on maps of 120+ stations, 14.9% transfers)
    assert 0.03 <= metro["shared_track_share"] <= 0.16
    assert 0.03 <= metro["maps_shared_track_over_25"] <= 0.3
    assert metro["dead_ends_per_line"] <= 1.8 and metro["large_maps_dead_end_share"] <= 0.09
    assert 0.11 <= metro["transfer_station_share"] <= 0.2
    assert scenic["dead_end_share"] <= 0.12 and scenic["one_path_share"] <= 0.10
    assert scenic["simple_paths_median"] >= 8


def test_single_line_maps_are_sampled():
    rng = np.random.default_rng(2)
    specs = [sample_metro_spec(rng, "small") for _ in range(300)]
    ones = [s for s in specs if s.n_lines == 1]
    assert 0.05 <= len(ones) / len(specs) <= 0.2
    assert all(15 <= s.n_stations <= 40 and s.loop_lines == 0 for s in ones)
    net = synth_metro(ones[0], 1)
    check_metro(net, ones[0])
    # a single-line map gets its RP and QA queries like any other (no transfer anywhere)
    from maptab.generate.attributes import synthesize_attributes
    from maptab.generate.pipeline import qa_queries_for_map, rp_queries_for_map
    from maptab.io.dataset import MapEntry

    net = synthesize_attributes(net, 1)
    entry = MapEntry("one", "metromap", "easy", "test")
    rp = rp_queries_for_map(net, entry, 5, 1)
    assert len(rp) == 60 and all(n == 0 for q in rp for n in q.transfer_vertex_numbers)
    assert len(qa_queries_for_map(net, entry, 1)) == 12
