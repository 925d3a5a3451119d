"""What every harness adapter shares (``docs/guides/evaluation-harnesses.md``): finding the dataset (a
folder, or a preset built once into a cache folder), and a score row's per-sample metric
values as the kind declares them (SPEC 12-14)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from maptab.io.dataset import DatasetError
from maptab.tasks.base import TaskKind

__all__ = ["cache_root", "clean", "resolve_dataset", "sample_values"]


def cache_root() -> Path:
    """Where presets are built: ``$MAPTAB_CACHE``, else ``~/.cache/maptab``."""
    env = os.environ.get("MAPTAB_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "maptab"


def resolve_dataset(dataset: str | Path, *, seed: int = 0, images: bool = True) -> Path:
    """The dataset folder ``dataset`` names: an existing folder as it is, or a preset name
    (``mini``, ``paper``) built once (with map images when ``images``) into
    ``cache_root()/datasets/<preset>-<seed>[-text]`` and reused afterwards."""
    path = Path(dataset)
    if (path / "manifest.json").is_file():
        return path
    from maptab.generate.pipeline import PRESETS, build_benchmark

    name = str(dataset)
    if name not in PRESETS:
        raise DatasetError(
            f"{dataset}: not a dataset folder (no manifest.json) nor a preset "
            f"({', '.join(PRESETS)})"
        )
    out = cache_root() / "datasets" / f"{name}-{seed}{'' if images else '-text'}"
    if not (out / "manifest.json").is_file():
        renderer = None
        if images:
            from maptab.render.images import DatasetImager

            renderer = DatasetImager()
        build_benchmark(out, preset=name, seed=seed, renderer=renderer)
    return out


def sample_values(kind: TaskKind, row: dict[str, Any]) -> dict[str, float]:
    """The per-sample values of the kind's plain mean metrics (no weight, no ``where``):
    ``{metric name: value of its field in the score row}`` (booleans as 0/1; a missing or
    ``None`` field counts 0). Their means over samples are the summary's ``overall`` values
    of those metrics (``maptab score``)."""
    out = {}
    for m in kind.metrics:
        if m.aggregate != "mean" or m.weight is not None or m.where is not None:
            continue
        v = row.get(m.field)
        out[m.name] = 0.0 if v is None else float(v)
    return out


def clean(obj: Any) -> Any:
    """``obj`` with non-finite floats as ``None`` and tuples as lists (JSON-safe)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean(v) for v in obj]
    return obj
