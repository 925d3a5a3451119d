"""MapTab release layout: export and import (issue 3.7)."""

from __future__ import annotations

import json
import random
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from maptab.build.queries import od_queries
from maptab.build.reasonmap import reasonmap_questions
from maptab.build.release import (
    CATEGORY_KINDS,
    ReleaseError,
    export_maptab_release,
    import_maptab_release,
)
from maptab.dataset import Dataset, DatasetWriter, MapEntry
from maptab.network import Network
from maptab.schema import TOTAL_FIELDS, QAQuery, RPQuery
from maptab.tables import derive_mix

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
    path = release / "metromap/data/train_set/metromap_shortest_path_query_only_map_train_set.json"
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

    # and back out: the same file names and the same records (less the undefined rank field)
    out = export_maptab_release(tmp_path / "ds", tmp_path / "release")
    for path in sorted((SAMPLE / "metromap/data/test_set").glob("*.json")):
        ours = json.loads((out / path.relative_to(SAMPLE)).read_text(encoding="utf-8"))
        theirs = json.loads(path.read_text(encoding="utf-8"))
        for rec in theirs:
            rec.pop("shortest_route_vertex_numbers_rank", None)
        assert ours == theirs, path.name


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
    path = release / f"metromap/data/train_set/metromap_shortest_path_query_{kind}_train_set.json"
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
