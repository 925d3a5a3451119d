"""maptab: multi-criteria, multimodal route-planning benchmarks (MapTab + ReasonMap)."""

from maptab.network import Edge, Network, NetworkError, Vertex, table_name

__version__ = "0.1.0"
__all__ = ["Edge", "Network", "NetworkError", "Vertex", "__version__", "table_name"]
