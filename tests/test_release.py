"""MapTab release layout: export and import."""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from maptab.core.network import Network
from maptab.core.schema import TOTAL_FIELDS, QAQuery, RPQuery
from maptab.core.tables import derive_mix
from maptab.generate.from_reasonmap import reasonmap_questions
from maptab.generate.queries import od_queries
from maptab.generate.release import (
    CATEGORY_KINDS,
    LAYOUTS,
    SCRIPT_LANGUAGES,
    ReleaseError,
    export_maptab_release,
    import_maptab_release,
    labels_language,
)
from maptab.io.dataset import Dataset, DatasetWriter, MapEntry

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "data" / "maptab-sample"


def attributed(lines: dict[str, list[str]], map_id: str) -> Network:
    """A metromap with seeded attributes in the SPEC 6 ranges (two decimals)."""
    net = Network.from_lines(lines, map_id=map_id)
    rng = random.Random(map_id)
    vertices = {
        k: replace(
            v,
            time=round(rng.uniform(0.5, 2.0), 2),
            comfort=round(rng.uniform(0, 1), 2),
            reliability=round(rng.uniform(0.5, 1), 2),
            transfer_time=float(rng.randint(5, 15)) if v.is_transfer else 0.0,
        )
        for k, v in net.vertices.items()
    }
    edges = [
        replace(
            e,
            time=round(rng.uniform(2, 3), 2),
            price=round(rng.uniform(0, 1.5), 2),
            comfort=round(rng.uniform(0, 1), 2),
        )
        for e in net.edges
    ]
    return net.with_attributes(vertices, edges)


CITIES = {
    "testland/alpha": {
        "Red": ["A1", "A2", "X-1", "A3", "A4"],
        "Blue": ["B1", "X-1", "B2", "X2", "B3"],
        "Green": ["G1", "G2", "X2", "G3", "G1"],
    },
    "beta": {"North": ["N1", "N2", "N3", "C1", "N4"], "South": ["S1", "C1", "S2", "S3"]},
}
PAIRS = {"testland/alpha": [("A1", "B3"), ("G2", "A4")], "beta": [("N1", "S3")]}


def build_small_dataset(root: Path) -> Path:
    """Two metromaps (one with an id without '/'), RP queries with exact gold, QA and
    ReasonMap rows, and an image for one map."""
    writer = DatasetWriter(root, 1, {"test": True})
    png = root.parent / "img.png"
    Image.new("RGB", (8, 6), (200, 10, 10)).save(png)
    for n, (map_id, lines) in enumerate(CITIES.items()):
        net = attributed(lines, map_id)
        split = ("train", "test")[n]
        entry = MapEntry(map_id, "metromap", ("easy", "hard")[n], split)
        writer.add_map(net, entry, image=png if n == 0 else None)
        rng = np.random.default_rng(n)
        mix = net.with_attributes(vertices=derive_mix(net))
        rows = []
        for s, t in PAIRS[map_id]:
            for category, weights, gold, repetition in od_queries(net, mix, s, t, rng):
                rows.append(
                    RPQuery(
                        id=f"{map_id}/rp-{len(rows) + 1:05d}",
                        map_id=map_id,
                        scenario="metromap",
                        split=split,
                        category=category.name,
                        style="direct_optimization",
                        question=f"{category.name}: from {s} to {t}?",
                        source=s,
                        target=t,
                        map_difficulty=entry.difficulty,
                        query_difficulty="medium",
                        weights=weights,
                        totals=gold.totals,
                        repetition=repetition,
                        **gold.label(),
                    )
                )
        writer.add("rp", rows)
        qa = QAQuery(
            f"{map_id}/qa-01",
            map_id,
            "metromap",
            split,
            1,
            ["perception"],
            "direct",
            "How many lines?",
            float(len(lines)),
            ["map"],
        )
        writer.add("qa", [qa])
        writer.add(
            "reasonmap",
            reasonmap_questions(
                net, map_difficulty=entry.difficulty, split=split, rng_seed=n, per_map=4
            ),
        )
    writer.finish()
    return root


GOLD = ("routes", "route_vertex_numbers", "transfer_vertex_numbers", "weights", "totals")


def test_round_trip_keeps_gold_labels(tmp_path):
    ds = Dataset(build_small_dataset(tmp_path / "ds"))
    release = export_maptab_release(ds.root, tmp_path / "release")
    assert (release / "metromap/images/testland/alpha.png").is_file()
    assert not (release / "metromap/images/synthetic/beta.png").exists()  # no image in dataset
    for suffix in ("edge", "vertex", "vertex2"):
        for ext in ("json", "csv"):
            assert (release / f"metromap/tabulars/synthetic/beta_{suffix}.{ext}").is_file()
    names = {p.name for p in (release / "metromap/data/test_set").iterdir()}
    assert names == {
        f"metromap_shortest_path_query_{k}_test_set.json" for k in CATEGORY_KINDS.values()
    }

    manifest = import_maptab_release(release, tmp_path / "back")
    assert manifest["options"]["label_mismatches"] == []
    back = Dataset(tmp_path / "back")
    assert set(back.maps) == {"testland/alpha", "synthetic/beta"}
    assert (
        back.image_path("testland/alpha").read_bytes()
        == ds.image_path("testland/alpha").read_bytes()
    )
    rename = {"testland/alpha": "testland/alpha", "beta": "synthetic/beta"}
    for old, new in rename.items():
        a, b = ds.network(old), back.network(new)
        assert a.edges == b.edges and a.vertices == b.vertices
        assert back.maps[new].split == ds.maps[old].split
        assert back.maps[new].difficulty == ds.maps[old].difficulty

    def key(q: RPQuery) -> tuple:
        return (
            rename.get(q.map_id, q.map_id),
            q.category,
            q.source,
            q.target,
        )

    original = {key(q): q for q in ds.rp()}
    imported = {key(q): q for q in back.rp()}
    assert original.keys() == imported.keys() and len(original) == 36
    for k, q in original.items():
        r = imported[k]
        for field in GOLD:
            assert getattr(r, field) == getattr(q, field), (k, field)
        assert (r.question, r.split, r.map_difficulty, r.query_difficulty, r.repetition) == (
            q.question,
            q.split,
            q.map_difficulty,
            q.query_difficulty,
            q.repetition,
        )


def test_import_flags_a_wrong_label(tmp_path):
    ds = build_small_dataset(tmp_path / "ds")
    release = export_maptab_release(ds, tmp_path / "release")
    path = (
        release
        / "metromap/data/training_set/metromap_shortest_path_query_only_map_training_set.json"
    )
    records = json.loads(path.read_text(encoding="utf-8"))
    records[0]["route_vertex_numbers"] = [99]
    path.write_text(json.dumps(records), encoding="utf-8")
    manifest = import_maptab_release(release, tmp_path / "back")
    assert manifest["options"]["label_mismatches"] == ["testland/alpha/rp-00001"]
    imported = next(q for q in Dataset(tmp_path / "back").rp() if q.id == "testland/alpha/rp-00001")
    assert imported.route_vertex_numbers == [99]  # released labels are kept, but flagged


def test_import_errors_name_the_file(tmp_path):
    bad = tmp_path / "rel" / "metromap" / "data" / "test_set"
    bad.mkdir(parents=True)
    (bad / "metromap_shortest_path_query_whatever_test_set.json").write_text("[]")
    with pytest.raises(ReleaseError, match="unknown kind 'whatever'"):
        import_maptab_release(tmp_path / "rel", tmp_path / "out")
    (bad / "metromap_shortest_path_query_whatever_test_set.json").unlink()
    (bad / "metromap_shortest_path_query_only_map_test_set.json").write_text('[{"country": "x"}]')
    with pytest.raises(ReleaseError, match=r"only_map_test_set.json: record 0: missing field"):
        import_maptab_release(tmp_path / "rel", tmp_path / "out")
    with pytest.raises(ReleaseError, match="no MapTab query files"):
        import_maptab_release(tmp_path / "empty", tmp_path / "out2")


@pytest.mark.conformance
def test_import_released_sample_reproduces_gold_labels(tmp_path):
    if not SAMPLE.is_dir():
        pytest.skip(f"MapTab release sample not found at {SAMPLE}")
    manifest = import_maptab_release(SAMPLE, tmp_path / "ds")
    assert manifest["options"]["label_mismatches"] == []  # our solver reproduces every label
    ds = Dataset(tmp_path / "ds")
    assert list(ds.maps) == ["america/cleveland"]
    assert ds.maps["america/cleveland"].difficulty == "easy"
    assert ds.maps["america/cleveland"].language == "en"
    assert ds.network("america/cleveland").meta["language"] == "en"
    assert ds.image_path("america/cleveland") is not None
    queries = {q.category: q for q in ds.rp()}
    assert len(queries) == 12
    for category, kind in CATEGORY_KINDS.items():
        released = json.loads(
            (
                SAMPLE / f"metromap/data/test_set/metromap_shortest_path_query_{kind}_test_set.json"
            ).read_text(encoding="utf-8")
        )[0]
        q = queries[category]
        assert q.routes == released["routes"]
        assert q.route_vertex_numbers == released["route_vertex_numbers"]
        assert q.transfer_vertex_numbers == released["transfer_vertex_numbers"]
        if "weights" in released:
            assert q.weights == released["weights"]
            assert q.totals == {k: released[k] for k in TOTAL_FIELDS}
            assert q.repetition == "FR"

    # and back out: every released file (query files, CSV and JSON tables, image) byte for
    # byte, the undefined rank field and the metromap CSVs' byte-order mark included
    out = export_maptab_release(tmp_path / "ds", tmp_path / "release")
    released = sorted(p for p in SAMPLE.rglob("*") if p.is_file())
    assert len(released) == 17
    assert sum(p.suffix == ".csv" for p in released) == 2
    for path in released:
        assert (out / path.relative_to(SAMPLE)).read_bytes() == path.read_bytes(), path.name
    rank = [q.release_rank for q in ds.rp() if q.category in ("map_only", "edge_only", "map_edge")]
    assert rank == [1256, 1256, 1256]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"Map_Difficulty": 3}, "record 0: field 'Map_Difficulty' must be Easy, Medium or Hard"),
        ({"Query_Difficulty": "Extreme"}, "field 'Query_Difficulty' must be Easy, Medium or Hard"),
        ({"country": None}, "record 0: field 'country' must be a non-empty string"),
        ({"routes": 5}, "field 'routes' must be a list of strings"),
        (
            {"route_vertex_numbers": ["5"]},
            "field 'route_vertex_numbers' must be a list of integers",
        ),
        ({"figure": "../../outside.png"}, "record 0: field 'figure': unsafe path"),
        ({"weights": [0.5, "x", 0.25, 0.25]}, "field 'weights' must be a list of 4 numbers"),
        ({"Total_Time": "14.12"}, "field 'Total_Time' must be a number"),
        ({"Map_Difficulty": "Hard"}, "has difficulty 'hard' here but 'easy' in an earlier record"),
    ],
)
def test_import_rejects_malformed_records_in_one_line(tmp_path, change, message):
    release = export_maptab_release(build_small_dataset(tmp_path / "ds"), tmp_path / "release")
    kind = CATEGORY_KINDS["all_criteria"]
    path = (
        release
        / f"metromap/data/training_set/metromap_shortest_path_query_{kind}_training_set.json"
    )
    records = json.loads(path.read_text(encoding="utf-8"))
    records[0].update(change)
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(ReleaseError, match=re.escape(message)) as info:
        import_maptab_release(release, tmp_path / "back")
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_import_rejects_a_record_that_is_not_an_object(tmp_path):
    release = export_maptab_release(build_small_dataset(tmp_path / "ds"), tmp_path / "release")
    path = release / "metromap/data/test_set/metromap_shortest_path_query_only_map_test_set.json"
    path.write_text('["oops"]', encoding="utf-8")
    with pytest.raises(ReleaseError, match="record 0: expected a JSON object, got str"):
        import_maptab_release(release, tmp_path / "back")


# --------------------------------------------------------------------------- both scenarios
def _dump(data, path: Path, indent: int) -> None:
    """JSON as the release writes it: non-ASCII kept, no trailing newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=indent), encoding="utf-8")


def _travel_row(name: str, time: float, price: float, comfort: float, rel: float) -> dict:
    return {
        "Vertex": name,
        "Time": time,
        "Price": price,
        "Comfort Level": comfort,
        "Reliability": rel,
    }


def write_two_scenario_release(root: Path) -> dict[str, dict[str, list[dict]]]:
    """A release folder in MapTab's layout with one travelmap (our own spots and numbers, the
    released field and file names: ``scenic_spot``, ``spot_1``/``spot_2``, ``qdi_rank``, no
    transfer counts, the Map+Mix_tab record pointing to ``_vertex.json``) and one metromap
    (``city``, ``station_1``/``station_2``, ``transfer_vertex_numbers``,
    ``shortest_route_vertex_numbers_rank``; the Map+Mix_tab record pointing to
    ``_vertex2.json``, a file the release does not ship). Returns ``{relative path: records}``.

    Travel labels, derived by hand (SPEC 3, travelmap: every spot counted, the destination
    too; the hub Gate (Time 0) counts Price 0; Time/180, Price/200, Comfort/5):

    * fewest spots Gate -> Summit: Gate-Lake-Summit (3), unique.
    * fastest: Gate-Lake-Summit takes 10+20 (edges) + 0+100+90 (spots) = 220; Gate-Pagoda-
      Garden-Summit 15+12+11 + 0+40+30+90 = 198, so the latter; Price 37+0+20+25+50 = 132,
      Comfort (3.5+4.5+3.2+3.0+3.5+4.2+4.8)/7 = 3.814286, Reliability 5.45/7 = 0.778571.
    * Map+Mix_tab, equal weights (spots only): the common spots Gate, Summit cancel; Lake
      costs 100/180 + 30/200 + (1-4.0/5) + (1-0.7) = 1.2056, Pagoda + Garden 1.0222 +
      0.6517 = 1.6739, so Gate-Lake-Summit: Time 190, Price 80, Comfort 11.8/3 = 3.933333,
      Reliability 2.55/3 = 0.85.
    """
    tab = "travelmap/tabulars/atlantis"
    edges = [
        ("Gate-Lake", 10.0, 10.0, 4.0, 0.5),
        ("Lake-Summit", 20.0, 20.0, 3.0, 0.8),
        ("Gate-Pagoda", 15.0, 12.0, 3.5, 0.6),
        ("Pagoda-Garden", 12.0, 10.0, 4.5, 0.9),
        ("Garden-Summit", 11.0, 15.0, 3.2, 0.7),
    ]
    _dump(
        [
            {"Edge": e, "Time": t, "Price": p, "Comfort Level": c, "Reliability": r}
            for e, t, p, c, r in edges
        ],
        root / f"{tab}/lostCity_edge.json",
        2,
    )
    vertices = [
        _travel_row("Gate", 0.0, 100.0, 3.0, 0.9),
        _travel_row("Lake", 100.0, 30.0, 4.0, 0.7),
        _travel_row("Pagoda", 40.0, 20.0, 3.5, 0.6),
        _travel_row("Garden", 30.0, 25.0, 4.2, 0.8),
        _travel_row("Summit", 90.0, 50.0, 4.8, 0.95),
    ]
    _dump(vertices, root / f"{tab}/lostCity_vertex.json", 2)
    travel = {
        "country": "atlantis",
        "scenic_spot": "lostCity",
        "figure": "travelmap/images/atlantis/lostCity.png",
        "edge_tab": f"{tab}/lostCity_edge.json",
        "vertex_tab": f"{tab}/lostCity_vertex.json",
        "spot_1": "Gate",
        "spot_2": "Summit",
        "Map_Difficulty": "Medium",
        "Query_Difficulty": "Easy",
    }
    short = ["Gate-Lake-Summit"]
    data = "travelmap/data/test_set/travelmap_shortest_path_query_"
    files: dict[str, list[dict]] = {
        f"{data}only_map_test_set.json": [
            {
                **travel,
                "question": "Fewest spots from Gate to Summit?",
                "routes": short,
                "route_vertex_numbers": [3],
                "qdi_rank": 17,
            }
        ],
        f"{data}map_and_tab_with_constraint_1_test_set.json": [
            {
                **travel,
                "question": "Fastest from Gate to Summit?",
                "routes": ["Gate-Pagoda-Garden-Summit"],
                "route_vertex_numbers": [4],
                "weights": [1, 0, 0, 0],
                "Total_Time": 198.0,
                "Total_Price": 132.0,
                "Average_Comfort Level": 3.814286,
                "Average_Reliability": 0.778571,
            }
        ],
    }
    mix = {k: v for k, v in travel.items() if k != "edge_tab"}
    files[f"{data}map_and_tab_with_constraint_1_2_3_4_only_vertex2_test_set.json"] = [
        {
            **mix,
            "question": "Best balanced route from Gate to Summit (spots only)?",
            "routes": short,
            "route_vertex_numbers": [3],
            "weights": [0.25, 0.25, 0.25, 0.25],
            "Total_Time": 190.0,
            "Total_Price": 80.0,
            "Average_Comfort Level": 3.933333,
            "Average_Reliability": 0.85,
        }
    ]

    # metromap: Red A-B-C, Blue B-D; A -> D changes at B
    mtab = "metromap/tabulars/testland/tinyTown"
    _dump(
        [
            {
                "Edge": "A-B",
                "Line": ["Red"],
                "Time": 2.0,
                "Price": 1.0,
                "Comfort Level": 0.5,
                "Reliability": 0.0,
            },
            {
                "Edge": "B-C",
                "Line": ["Red"],
                "Time": 2.5,
                "Price": 0.5,
                "Comfort Level": 0.4,
                "Reliability": 0.0,
            },
            {
                "Edge": "B-D",
                "Line": ["Blue"],
                "Time": 2.2,
                "Price": 0.7,
                "Comfort Level": 0.6,
                "Reliability": 0.0,
            },
        ],
        root / f"{mtab}_edge.json",
        2,
    )
    _dump(
        [
            {
                "Vertex": "A",
                "Line": ["Red"],
                "Time": 1.0,
                "Price": 0.0,
                "Comfort Level": 0.5,
                "Reliability": 0.8,
                "Transfer Time": 0,
            },
            {
                "Vertex": "B",
                "Line": ["Red", "Blue"],
                "Time": 1.5,
                "Price": 0.0,
                "Comfort Level": 0.7,
                "Reliability": 0.9,
                "Transfer Time": 6,
            },
            {
                "Vertex": "C",
                "Line": ["Red"],
                "Time": 0.5,
                "Price": 0.0,
                "Comfort Level": 0.2,
                "Reliability": 0.6,
                "Transfer Time": 0,
            },
            {
                "Vertex": "D",
                "Line": ["Blue"],
                "Time": 1.2,
                "Price": 0.0,
                "Comfort Level": 0.3,
                "Reliability": 0.7,
                "Transfer Time": 0,
            },
        ],
        root / f"{mtab}_vertex.json",
        2,
    )
    metro = {
        "country": "testland",
        "city": "tinyTown",
        "figure": "metromap/images/testland/tinyTown.png",
        "edge_tab": f"{mtab}_edge.json",
        "vertex_tab": f"{mtab}_vertex.json",
        "station_1": "A",
        "station_2": "D",
        "Map_Difficulty": "Easy",
        "Query_Difficulty": "Medium",
    }
    # the route A-B-D: edges 2.0 + 2.2, stations A 1.0 + B 1.5 (destination not counted),
    # transfer at B 6 -> Time 12.7; Price 1.0 + 0.7 = 1.7; Comfort (0.5+0.6+0.5+0.7)/4 =
    # 0.575; Reliability (0.8+0.9)/2 = 0.85 (edge reliability 0 is not an item)
    mdata = "metromap/data/training_set/metromap_shortest_path_query_"
    files[f"{mdata}only_tab_training_set.json"] = [
        {
            **metro,
            "question": "Fewest stations from A to D?",
            "routes": ["A-B(transfer)-D"],
            "route_vertex_numbers": [3],
            "transfer_vertex_numbers": [1],
            "shortest_route_vertex_numbers_rank": 4,
        }
    ]
    files[f"{mdata}map_and_tab_with_constraint_1_training_set.json"] = [
        {
            **metro,
            "question": "Fastest from A to D?",
            "routes": ["A-B(transfer)-D"],
            "route_vertex_numbers": [3],
            "transfer_vertex_numbers": [1],
            "weights": [1, 0, 0, 0],
            "Total_Time": 12.7,
            "Total_Price": 1.7,
            "Average_Comfort Level": 0.575,
            "Average_Reliability": 0.85,
        }
    ]
    mmix = {k: v for k, v in metro.items() if k != "edge_tab"}
    mmix["vertex_tab"] = f"{mtab}_vertex2.json"
    # Mix_tab: B's Price is the mean of its edges' prices (1.0, 0.5, 0.7) = 0.73, A's 1.0;
    # stations A, B counted: Time 1.0 + 1.5 + 6 = 8.5, Price 1.73, Comfort 0.6, Rel 0.85
    files[f"{mdata}map_and_tab_with_constraint_1_2_3_4_only_vertex2_training_set.json"] = [
        {
            **mmix,
            "question": "Best balanced route from A to D (stations only)?",
            "routes": ["A-B(transfer)-D"],
            "route_vertex_numbers": [3],
            "transfer_vertex_numbers": [1],
            "weights": [0.4, 0.3, 0.2, 0.1],
            "Total_Time": 8.5,
            "Total_Price": 1.73,
            "Average_Comfort Level": 0.6,
            "Average_Reliability": 0.85,
        }
    ]
    for rel, records in files.items():
        _dump(records, root / rel, 4)
    (root / "travelmap/images/atlantis").mkdir(parents=True)
    Image.new("RGB", (8, 6), (10, 120, 10)).save(root / "travelmap/images/atlantis/lostCity.png")
    return files


def test_two_scenario_release_round_trip_is_field_for_field(tmp_path):
    release = tmp_path / "release"
    files = write_two_scenario_release(release)
    manifest = import_maptab_release(release, tmp_path / "ds")
    assert manifest["options"]["label_mismatches"] == []  # the hand-derived labels hold
    assert manifest["options"]["unread_fields"] == {}
    ds = Dataset(tmp_path / "ds")
    assert {m: (e.scenario, e.split, e.difficulty) for m, e in ds.maps.items()} == {
        "atlantis/lostCity": ("travelmap", "test", "medium"),
        "testland/tinyTown": ("metromap", "train", "easy"),
    }
    travel = ds.network("atlantis/lostCity")
    assert travel.scenario == "travelmap" and len(travel.vertices) == 5
    queries = {(q.scenario, q.category): q for q in ds.rp()}
    assert len(queries) == 6
    assert queries[("travelmap", "map_only")].release_rank == 17
    assert queries[("travelmap", "map_only")].transfer_vertex_numbers == [0]  # no transfers
    assert queries[("travelmap", "time")].source == "Gate"
    assert queries[("travelmap", "time")].weights == [1.0, 0.0, 0.0, 0.0]
    assert queries[("metromap", "edge_only")].release_rank == 4
    assert queries[("metromap", "edge_only")].transfer_vertex_numbers == [1]
    assert ds.image_path("atlantis/lostCity") is not None

    out = export_maptab_release(tmp_path / "ds", tmp_path / "back")
    for rel, records in files.items():
        path = out / rel
        assert path.is_file(), rel
        ours = json.loads(path.read_text(encoding="utf-8"))
        assert ours == records, rel
        assert [list(r) for r in ours] == [list(r) for r in records], rel  # field order too
        assert path.read_bytes() == (release / rel).read_bytes(), rel
    for table in ("lostCity_edge.json", "lostCity_vertex.json"):
        rel = f"travelmap/tabulars/atlantis/{table}"
        assert (out / rel).read_bytes() == (release / rel).read_bytes(), rel
    assert not (out / "travelmap/tabulars/atlantis/lostCity_vertex2.json").exists()
    assert (out / "metromap/tabulars/testland/tinyTown_vertex2.json").is_file()
    exported = sorted(p.relative_to(out).as_posix() for p in out.rglob("*/data/*/*.json"))
    assert exported == sorted(files)


@pytest.mark.parametrize(
    ("rename", "change", "message"),
    [
        ({"spot_1": "station_1"}, {}, "record 0: missing field(s) spot_1"),
        ({}, {"qdi_rank": "17"}, "record 0: field 'qdi_rank' must be an integer"),
        ({}, {"route_vertex_numbers": [3, 3]}, "'route_vertex_numbers' must have one entry per"),
        ({}, {"scenic_spot": ""}, "record 0: field 'scenic_spot' must be a non-empty string"),
    ],
)
def test_travel_records_are_checked_by_their_own_field_names(tmp_path, rename, change, message):
    release = tmp_path / "release"
    write_two_scenario_release(release)
    path = release / "travelmap/data/test_set/travelmap_shortest_path_query_only_map_test_set.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    records[0] = {rename.get(k, k): v for k, v in records[0].items()} | change
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(ReleaseError, match=re.escape(message)) as info:
        import_maptab_release(release, tmp_path / "ds")
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_unknown_fields_are_counted_and_train_set_is_read(tmp_path):
    release = tmp_path / "release"
    write_two_scenario_release(release)
    (release / "metromap/data/training_set").rename(release / "metromap/data/train_set")
    for path in (release / "metromap/data/train_set").iterdir():
        path.rename(path.with_name(path.name.replace("_training_set", "_train_set")))
    path = release / "travelmap/data/test_set/travelmap_shortest_path_query_only_map_test_set.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    records[0]["note"] = "x"
    path.write_text(json.dumps(records), encoding="utf-8")
    (release / "metromap/data/all").mkdir()  # the release's union folder is not read twice
    manifest = import_maptab_release(release, tmp_path / "ds")
    assert manifest["options"]["unread_fields"] == {"note": 1}
    assert manifest["counts"]["rp"] == 6
    assert Dataset(tmp_path / "ds").maps["testland/tinyTown"].split == "train"
    (release / "metromap/data/dev_set").mkdir()
    with pytest.raises(ReleaseError, match="dev_set: expected training_set or test_set"):
        import_maptab_release(release, tmp_path / "ds2")


def test_layouts_name_both_scenarios():
    assert LAYOUTS["travelmap"].field_order(criteria=False, vertex_only=False) == (
        "country", "scenic_spot", "figure", "edge_tab", "vertex_tab", "spot_1", "spot_2",
        "Map_Difficulty", "Query_Difficulty", "question", "routes", "route_vertex_numbers",
        "qdi_rank",
    )  # fmt: skip
    assert LAYOUTS["metromap"].field_order(criteria=True, vertex_only=True) == (
        "country", "city", "figure", "vertex_tab", "station_1", "station_2", "Map_Difficulty",
        "Query_Difficulty", "question", "routes", "route_vertex_numbers",
        "transfer_vertex_numbers", "weights", *TOTAL_FIELDS,
    )  # fmt: skip


def test_built_travelmap_exports_in_travel_field_names_and_comes_back(tmp_path):
    net = Network.from_edges(
        [("Gate", "Lake"), ("Lake", "Summit"), ("Gate", "Pagoda"), ("Pagoda", "Summit")],
        map_id="travel-1",
    )
    rng = random.Random(3)
    vertices = {
        k: replace(v, time=float(rng.randint(20, 180)), price=float(5 * rng.randint(2, 40)),
                   comfort=round(rng.uniform(1, 5), 1), reliability=round(rng.randint(60, 365) / 365, 6))
        for k, v in net.vertices.items()
    }  # fmt: skip
    edges = [
        replace(e, time=float(rng.randint(10, 60)), price=float(rng.randint(10, 80)),
                comfort=round(rng.uniform(1, 5), 1), reliability=round(rng.randint(1, 365) / 365, 6))
        for e in net.edges
    ]  # fmt: skip
    net = net.with_attributes(vertices, edges)
    writer = DatasetWriter(tmp_path / "ds", 1, {})
    writer.add_map(net, MapEntry("travel-1", "travelmap", "medium", "train"))
    mix = net.with_attributes(vertices=derive_mix(net))
    rows = [
        RPQuery(f"travel-1/rp-{i:05d}", "travel-1", "travelmap", "train", category.name,
                "direct_optimization", "q?", "Gate", "Summit", map_difficulty="medium",
                query_difficulty="easy", weights=weights, totals=gold.totals,
                repetition=repetition, **gold.label())
        for i, (category, weights, gold, repetition) in enumerate(
            od_queries(net, mix, "Gate", "Summit", np.random.default_rng(0)), 1
        )
    ]  # fmt: skip
    writer.add("rp", rows)
    writer.finish()
    out = export_maptab_release(tmp_path / "ds", tmp_path / "release")
    data = out / "travelmap/data/training_set"
    assert len(list(data.iterdir())) == 12
    kind = CATEGORY_KINDS["map_mix"]
    (mix_record,) = json.loads(
        (data / f"travelmap_shortest_path_query_{kind}_training_set.json").read_text("utf-8")
    )
    assert mix_record["vertex_tab"] == "travelmap/tabulars/synthetic/travel-1_vertex.json"
    assert "edge_tab" not in mix_record and "transfer_vertex_numbers" not in mix_record
    assert (mix_record["scenic_spot"], mix_record["spot_1"], mix_record["spot_2"]) == (
        "travel-1",
        "Gate",
        "Summit",
    )
    assert not list(out.rglob("*_vertex2.*"))
    manifest = import_maptab_release(out, tmp_path / "back")
    assert manifest["options"]["label_mismatches"] == []
    back = {q.category: q for q in Dataset(tmp_path / "back").rp()}
    for q in rows:
        r = back[q.category]
        assert (r.routes, r.route_vertex_numbers, r.weights, r.totals, r.repetition) == (
            q.routes, q.route_vertex_numbers, q.weights, q.totals, q.repetition
        ), q.category  # fmt: skip


@pytest.mark.conformance
def test_a_full_maptab_checkout_round_trips(tmp_path):
    """With ``MAPTAB_RELEASE`` naming a checkout of MapTab's public repository (or its
    Hugging Face data), both scenarios import with every label reproduced and export back
    byte for byte: every file under ``images/``, ``tabulars/`` (CSV and JSON) and the two
    split folders of ``data/``."""
    root = os.environ.get("MAPTAB_RELEASE")
    if not root:
        pytest.skip("set MAPTAB_RELEASE to a MapTab checkout to run this check")
    release = Path(root)
    manifest = import_maptab_release(release, tmp_path / "ds")
    assert manifest["options"]["label_mismatches"] == []
    assert manifest["options"]["unread_fields"] == {}
    out = export_maptab_release(tmp_path / "ds", tmp_path / "back")
    files = sorted(
        p
        for scenario in LAYOUTS
        for p in (release / scenario).glob("*/*/*")
        if p.is_file()
        and (
            p.parts[-3] in ("images", "tabulars")
            or (p.parts[-3] == "data" and p.parent.name in ("training_set", "test_set"))
        )
    )
    assert {p.suffix for p in files} >= {".json", ".csv", ".png"}
    assert {p.relative_to(release).parts[0] for p in files} == set(LAYOUTS)
    for path in files:
        assert (out / path.relative_to(release)).read_bytes() == path.read_bytes(), path


# --------------------------------------------------------------------------- release formats
# MapTab's released travelmap tables (Angkor Wat) differ from its metromap ones (Cleveland,
# ../shared/data/maptab-sample): their CSVs have no byte-order mark, and they spell numbers
# per column as pandas does, whole columns as integers and the others as floats, whole
# values too (`龙蟠水池-圣剑寺,14,12,5.0,0.161644`); their JSON writes every number as a float.
PARK = {"东门": (0, 100, 3.0, 0.9), "湖心亭": (93, 45, 2.2, 0.446575),
        "古塔": (27, 40, 5.0, 0.252055), "山顶": (153, 35, 2.4, 0.90411)}  # fmt: skip
PARK_EDGES = {("东门", "湖心亭"): (18, 15, 3.2, 0.668493), ("湖心亭", "古塔"): (14, 12, 5.0, 0.161644),
              ("古塔", "山顶"): (22, 18, 2.0, 0.265753), ("东门", "山顶"): (38, 22, 2.5, 0.917808)}  # fmt: skip


def build_park_dataset(root: Path) -> Path:
    """A travelmap with Chinese spot names and the value shapes of the released travelmap
    (our own names and numbers), with its 12 RP queries from 东门 to 山顶."""
    net = Network.from_edges(list(PARK_EDGES), map_id="china/park")
    vertices = {
        k: replace(v, time=float(t), price=float(p), comfort=c, reliability=r)
        for k, v in net.vertices.items()
        for t, p, c, r in [PARK[k]]
    }
    edges = [
        replace(e, time=float(t), price=float(p), comfort=c, reliability=r)
        for e in net.edges
        for t, p, c, r in [PARK_EDGES[(e.u, e.v)]]
    ]
    net = net.with_attributes(vertices, edges)
    writer = DatasetWriter(root, 1, {})
    png = root.parent / "park.png"
    Image.new("RGB", (8, 6), (10, 120, 10)).save(png)
    writer.add_map(net, MapEntry("china/park", "travelmap", "hard", "test"), image=png)
    mix = net.with_attributes(vertices=derive_mix(net))
    rows = [
        RPQuery(f"china/park/rp-{i:05d}", "china/park", "travelmap", "test", category.name,
                "direct_optimization", "q?", "东门", "山顶", map_difficulty="hard",
                query_difficulty="easy", weights=weights, totals=gold.totals,
                repetition=repetition, **gold.label())
        for i, (category, weights, gold, repetition) in enumerate(
            od_queries(net, mix, "东门", "山顶", np.random.default_rng(0)), 1
        )
    ]  # fmt: skip
    writer.add("rp", rows)
    writer.finish()
    return root


def test_travel_tables_are_written_as_the_release_writes_them(tmp_path):
    out = export_maptab_release(build_park_dataset(tmp_path / "ds"), tmp_path / "release")
    tab = out / "travelmap/tabulars/china"
    assert (tab / "park_edge.csv").read_bytes() == (
        "Edge,Time,Price,Comfort Level,Reliability\n"
        "东门-湖心亭,18,15,3.2,0.668493\n"
        "湖心亭-古塔,14,12,5.0,0.161644\n"
        "古塔-山顶,22,18,2.0,0.265753\n"
        "东门-山顶,38,22,2.5,0.917808\n"
    ).encode()  # no byte-order mark; whole Time and Price, every Comfort with a decimal
    assert (tab / "park_vertex.csv").read_bytes() == (
        "Vertex,Time,Price,Comfort Level,Reliability\n"
        "东门,0,100,3.0,0.9\n"
        "湖心亭,93,45,2.2,0.446575\n"
        "古塔,27,40,5.0,0.252055\n"
        "山顶,153,35,2.4,0.90411\n"
    ).encode()
    vertex_json = (tab / "park_vertex.json").read_text(encoding="utf-8")
    assert '"Time": 93.0,' in vertex_json and '"Comfort Level": 5.0,' in vertex_json
    assert not list(tab.glob("*_vertex2.*"))


def test_imported_maps_keep_the_language_of_their_labels(tmp_path):
    first = export_maptab_release(build_park_dataset(tmp_path / "ds"), tmp_path / "release")
    manifest = import_maptab_release(first, tmp_path / "back")
    assert manifest["options"]["label_mismatches"] == []
    back = Dataset(tmp_path / "back")
    assert back.maps["china/park"].language == "zh"
    assert back.network("china/park").meta["language"] == "zh"  # what the renderer reads
    # and the round trip is byte for byte, CSVs and image included
    again = export_maptab_release(tmp_path / "back", tmp_path / "again")
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert len(files) == 12 + 4 + 1
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (again / rel).read_bytes() == (first / rel).read_bytes(), rel

    release = tmp_path / "two"
    write_two_scenario_release(release)
    import_maptab_release(release, tmp_path / "two-ds")
    assert {m: e.language for m, e in Dataset(tmp_path / "two-ds").maps.items()} == {
        "atlantis/lostCity": "en",
        "testland/tinyTown": "en",
    }


@pytest.mark.parametrize(
    ("labels", "hint", "language"),
    [
        (["东门", "湖心亭", "T2航站楼"], None, "zh"),
        (["東門", "湖心亭"], "zh-tw", "zh-tw"),  # a recorded language of the same script stays
        (["新宿", "しんじゅく"], None, "ja"),
        (["서울역", "시청"], None, "ko"),
        (["Երևան", "Գյումրի"], None, "hy"),
        (["Київ", "Львів"], "uk", "uk"),
        (["Москва"], "en", "ru"),  # a recorded language of another script is replaced
        (["Stasiun Gambir", "Monas"], "id", "id"),
        (["Brookpark", "Puritas"], "zh", "en"),
        (["12", "34"], "fr", "fr"),  # no letters: the recorded language
        ([], None, "en"),
    ],
)
def test_labels_language(labels, hint, language):
    assert labels_language(labels, hint) == language


def test_script_languages_are_map_languages():
    from maptab.generate.names import LANGUAGES

    assert {lang for langs in SCRIPT_LANGUAGES.values() for lang in langs} == set(LANGUAGES)
