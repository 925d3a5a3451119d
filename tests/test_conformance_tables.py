"""Byte-for-byte compatibility with MapTab's released tables (SPEC 2) and the Mix_tab rule
(SPEC 5) checked against the released sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from maptab.core.tables import derive_mix, mix_rows, read_network, write_tables
from maptab.core.validate import validate_tables

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
TABLES = SHARED / "maptab-sample" / "metromap" / "tabulars" / "america"

pytestmark = pytest.mark.conformance


@pytest.fixture(scope="module")
def released() -> Path:
    if not TABLES.is_dir():
        pytest.skip(f"released MapTab sample not found at {TABLES}")
    return TABLES


@pytest.mark.parametrize("source", ["csv", "json"])
def test_read_then_write_reproduces_every_released_file(
    released: Path, tmp_path: Path, source: str
) -> None:
    net = read_network(
        released / f"cleveland_edge.{source}", released / f"cleveland_vertex.{source}"
    )
    written = write_tables(net, tmp_path, "cleveland")
    assert len(written) == 4
    for path in written:
        assert path.read_bytes() == (released / path.name).read_bytes(), path.name


def test_csv_and_json_releases_describe_the_same_network(released: Path) -> None:
    a = read_network(released / "cleveland_edge.csv", released / "cleveland_vertex.csv")
    b = read_network(released / "cleveland_edge.json", released / "cleveland_vertex.json")
    assert a.vertices == b.vertices and a.edges == b.edges
    assert (a.scenario, len(a.vertices), len(a.edges), a.line_names) == (
        "metromap",
        18,
        17,
        ["Red Line"],
    )


@pytest.mark.parametrize("ext", ["csv", "json"])
def test_released_tables_validate_clean(released: Path, ext: str) -> None:
    assert (
        validate_tables(released / f"cleveland_edge.{ext}", released / f"cleveland_vertex.{ext}")
        == []
    )


def test_mix_prices_reproduce_the_released_mix_total(released: Path) -> None:
    """SPEC 3 worked example: Triskett -> West 25th_Ohio City with the Mix_tab has
    Total_Price 2.09 (source counted, destination not). West 65th_Lorain's price is
    (0.68 + 0.81) / 2 = 0.745, which must round half-up to 0.75 to reach 2.09."""
    net = read_network(released / "cleveland_edge.csv", released / "cleveland_vertex.csv")
    mix = derive_mix(net)
    route = ["Triskett", "West 117th_Madison", "West Boulevard_Cudell", "West 65th_Lorain"]
    assert [mix[s].price for s in route] == [0.42, 0.45, 0.47, 0.75]
    assert round(sum(mix[s].price for s in route), 2) == 2.09
    assert [r["Vertex"] for r in mix_rows(net)] == list(net.vertices)
