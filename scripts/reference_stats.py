"""Regenerate ``src/maptab/data/reference_stats.json`` (the figures ``maptab stats --compare``
shows) from the real ReasonMap topologies and the MapTab paper's Table 4.

    .venv/bin/python scripts/reference_stats.py [../shared/data/reasonmap-stations]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from maptab.cli.stats import _reasonmap_networks
from maptab.report.describe import describe_networks, reference_figures

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    folder = Path(
        sys.argv[1] if len(sys.argv) > 1 else ROOT.parent / "shared/data/reasonmap-stations"
    )
    real = describe_networks(_reasonmap_networks(folder))["scenarios"]["metromap"]["networks"]
    path = ROOT / "src/maptab/data/reference_stats.json"
    text = json.dumps(reference_figures(real), indent=1, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
