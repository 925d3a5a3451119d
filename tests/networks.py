"""Small hand-made networks shared by several test modules (their numbers are worked out by
hand in the tests that use them)."""

from __future__ import annotations

from maptab.core.network import Edge, Network, Vertex

PFQ = "Porta Furba_Quadraro"


def hyphen_metro() -> Network:
    """Red Alpha-Bravo-Porta Furba-Quadraro-Delta and Blue Bravo-Porta Furba-Delta: a station
    whose name holds a hyphen, a near-twin name, and transfers (5 min) at Bravo and Delta.

    Edge times 2 except Porta Furba-Delta 2.5; vertex times 1 except Porta Furba 0.5.
    """
    net = Network.from_lines(
        {
            "Red": ["Alpha", "Bravo", "Porta Furba-Quadraro", "Delta"],
            "Blue": ["Bravo", "Porta Furba", "Delta"],
        },
        map_id="m1",
    )
    times = {("Alpha", "Bravo"): 2, ("Bravo", PFQ): 2, (PFQ, "Delta"): 2}
    times |= {("Bravo", "Porta Furba"): 2, ("Porta Furba", "Delta"): 2.5}
    edges = [Edge(e.u, e.v, e.line, time=times[(e.u, e.v)]) for e in net.edges]
    vt = {"Alpha": 1, "Bravo": 1, PFQ: 1, "Porta Furba": 0.5, "Delta": 1}
    vertices = {
        k: Vertex(k, v.lines, time=vt[k], transfer_time=5 if k in ("Bravo", "Delta") else 0)
        for k, v in net.vertices.items()
    }
    return net.with_attributes(vertices, edges)
