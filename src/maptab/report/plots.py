"""Report figures (matplotlib, Agg backend, PNG), one function per figure (SPEC 13).

* :func:`difficulty_heatmap` — accuracy by map difficulty × query difficulty, one panel per
  run and suite part (route planning per scenario, judged strict; ReasonMap by lenient
  correctness, question × map difficulty). Each cell prints its accuracy and sample count.
* :func:`capability_profile` — QA accuracy per capability (paper Table 1 mapping, each
  code with its name), grouped bars per run with 95% intervals, one panel per scenario, the
  legend below the panels.
* :func:`gap_distribution` — empirical CDF of the optimality gap J(pred)/J(opt) − 1 over
  the *valid* predicted routes of each run (a gap of 0 is an optimal route).
* :func:`error_bars` — share of route-planning samples per automatic error type, per run.

Each function takes the loaded runs and an output path, writes one PNG and returns its path,
or ``None`` when the runs hold nothing to plot.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from maptab._progress import Progress, or_silent  # noqa: E402
from maptab.report.loader import Run  # noqa: E402
from maptab.report.tables import capability_abbrev, capability_name  # noqa: E402
from maptab.report.views import view_of  # noqa: E402
from maptab.score.error_types import ERROR_TYPES  # noqa: E402
from maptab.tasks.base import all_kinds  # noqa: E402

__all__ = [
    "capability_profile",
    "difficulty_heatmap",
    "error_bars",
    "gap_distribution",
    "write_plots",
]

DPI = 110
TEXT_PT = 11  # cell annotations and bar labels: 17 px at DPI, legible when a page shrinks it
_LEVELS = ("easy", "medium", "middle", "hard")
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def _color(i: int) -> str:
    return _PALETTE[i % len(_PALETTE)]


def _level_order(values: set[str]) -> list[str]:
    rank = {v: i for i, v in enumerate(_LEVELS)}
    return sorted(values, key=lambda v: (rank.get(v.lower(), len(rank)), v))


def _save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight", facecolor="white")
    plt.close(fig)
    return path


def _heatmap_parts(run: Run) -> list[tuple[str, list[dict[str, Any]], str, str, str]]:
    """(title, rows, y field, x field, value field) of each heatmap panel of a run: every
    kind view's ``heatmaps``, in registry order."""
    return [part for kind in all_kinds() for part in view_of(kind).heatmaps(run)]


def difficulty_heatmap(runs: Sequence[Run], path: Path) -> Path | None:
    """Accuracy by map × query difficulty (module docstring)."""
    panels = [(run, *part) for run in runs for part in _heatmap_parts(run)]
    if not panels:
        return None
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(4.2 * ncols, 3.6 * nrows), squeeze=False, layout="constrained"
    )
    image = None
    for ax, (run, title, rows, yf, xf, vf) in zip(axes.flat, panels, strict=False):
        ys = _level_order({str(r[yf]) for r in rows})
        xs = _level_order({str(r[xf]) for r in rows})
        acc = np.full((len(ys), len(xs)), np.nan)
        counts = np.zeros((len(ys), len(xs)), dtype=int)
        cells: dict[tuple[str, str], list[float]] = defaultdict(list)
        for r in rows:
            cells[(str(r[yf]), str(r[xf]))].append(float(r[vf]))
        for (y, x), vals in cells.items():
            i, j = ys.index(y), xs.index(x)
            acc[i, j], counts[i, j] = np.mean(vals), len(vals)
        image = ax.imshow(acc, cmap="viridis", vmin=0, vmax=1, aspect="auto")
        for i in range(len(ys)):
            for j in range(len(xs)):
                if counts[i, j]:
                    dark = acc[i, j] < 0.6
                    ax.text(
                        j,
                        i,
                        f"{100 * acc[i, j]:.0f}%\nn={counts[i, j]}",
                        ha="center",
                        va="center",
                        fontsize=TEXT_PT,
                        color="white" if dark else "black",
                    )
        ax.set_xticks(range(len(xs)), xs, fontsize=TEXT_PT - 1)
        ax.set_yticks(range(len(ys)), ys, fontsize=TEXT_PT - 1)
        ax.set_xlabel(xf.replace("_", " "), fontsize=TEXT_PT - 1)
        ax.set_ylabel(yf.replace("_", " "), fontsize=TEXT_PT - 1)
        ax.set_title(f"{run.name}\n{title}", fontsize=TEXT_PT)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    if image is not None:
        bar = fig.colorbar(image, ax=axes, shrink=0.8)
        bar.set_label("accuracy", fontsize=TEXT_PT - 1)
    return _save(fig, path)


def capability_profile(
    runs: Sequence[Run],
    path: Path,
    *,
    kind: str,
    capabilities: Callable[[Sequence[Run], str], list[str]],
    cell: Callable[[Sequence[dict[str, Any]], str], Any],
) -> Path | None:
    """Capability profile per run (module docstring) of the rows of task kind ``kind``:
    ``capabilities(runs, scenario)`` names the bars, ``cell(rows, capability)`` is one."""
    scenarios = sorted({r["scenario"] for run in runs for r in run.rows(kind)})
    if not scenarios:
        return None
    fig, axes = plt.subplots(
        len(scenarios), 1, figsize=(10, 3.8 * len(scenarios)), squeeze=False, layout="constrained"
    )
    for ax, s in zip(axes[:, 0], scenarios, strict=True):
        caps = capabilities(runs, s)
        width = 0.8 / len(runs)
        for k, run in enumerate(runs):
            rows = [r for r in run.rows(kind) if r["scenario"] == s]
            cells = [cell(rows, c) for c in caps]
            mean = np.array([np.nan if c.value is None else c.value for c in cells], dtype=float)
            lo = np.array([np.nan if c.lo is None else c.lo for c in cells], dtype=float)
            hi = np.array([np.nan if c.hi is None else c.hi for c in cells], dtype=float)
            x = np.arange(len(caps)) + (k - (len(runs) - 1) / 2) * width
            # bootstrap_ci guarantees lo <= mean <= hi (tests/test_stats.py)
            err = np.nan_to_num(np.vstack([mean - lo, hi - mean]) * 100)
            ax.bar(x, mean * 100, width, yerr=err, capsize=2, color=_color(k), label=run.name)
        ax.set_xticks(range(len(caps)), [_capability_label(c) for c in caps], fontsize=9)
        ax.set_ylim(0, 105)
        ax.set_ylabel("accuracy (%)")
        ax.set_title(f"QA capability profile — {s}", fontsize=TEXT_PT)
        ax.grid(axis="y", alpha=0.3)
    # one legend for all panels, below them, where it cannot hide a bar of 100%
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="outside lower center", ncols=min(6, len(runs)), fontsize=TEXT_PT - 1
    )
    return _save(fig, path)


def _capability_label(capability: str) -> str:
    """A bar group's label: the paper's code over its name, wrapped (``VP`` / ``Visual
    Perception``)."""
    code, name = capability_abbrev(capability), capability_name(capability)
    if code == name:
        return code
    return code + "\n" + textwrap.fill(name, 14)


def gap_distribution(runs: Sequence[Run], path: Path, *, kind: str) -> Path | None:
    """ECDF of the optimality gap over valid routes of task kind ``kind``, per run (module
    docstring)."""
    gaps = {
        run.name: np.sort(
            [float(r["gap"]) for r in run.rows(kind) if r.get("valid") and r.get("gap") is not None]
        )
        for run in runs
    }
    if not any(run.rows(kind) for run in runs):
        return None
    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    top = max((g[-1] for g in gaps.values() if g.size), default=0.0)
    for k, (name, g) in enumerate(gaps.items()):
        if not g.size:
            ax.plot([], [], color=_color(k), label=f"{name} (no valid routes)")
            continue
        optimal = float(np.mean(g <= 1e-9))
        xs = np.concatenate([[0.0], g, [max(top, 1e-3) * 1.05]])
        ys = np.concatenate([[0.0], np.arange(1, g.size + 1) / g.size, [1.0]])
        ax.step(
            xs,
            ys,
            where="post",
            color=_color(k),
            lw=1.8,
            label=f"{name} (n={g.size}, {100 * optimal:.0f}% optimal)",
        )
    ax.set_xlabel("optimality gap  J(pred) / J(opt) − 1")
    ax.set_ylabel("share of valid routes ≤ gap")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.set_title("Optimality gap of valid predicted routes", fontsize=TEXT_PT)
    ax.legend(fontsize=TEXT_PT - 2, loc="lower right")
    return _save(fig, path)


def error_bars(runs: Sequence[Run], path: Path, *, kind: str) -> Path | None:
    """Share of the samples of task kind ``kind`` per error type, per run (module
    docstring)."""
    if not any(run.rows(kind) for run in runs):
        return None
    fig, ax = plt.subplots(
        figsize=(8, 0.6 + 0.45 * len(ERROR_TYPES) * max(1, len(runs)) ** 0.5), layout="constrained"
    )
    height = 0.8 / len(runs)
    y = np.arange(len(ERROR_TYPES))
    for k, run in enumerate(runs):
        rows = run.rows(kind)
        share = np.array([sum(r.get("error_type") == t for r in rows) for t in ERROR_TYPES])
        share = 100 * share / max(1, len(rows))
        pos = y + (k - (len(runs) - 1) / 2) * height
        ax.barh(pos, share, height, color=_color(k), label=run.name)
        for p, v in zip(pos, share, strict=True):
            if v > 0:
                ax.text(v + 0.5, p, f"{v:.1f}%", va="center", fontsize=9)
    ax.set_yticks(y, ERROR_TYPES)
    ax.invert_yaxis()
    ax.set_xlabel("share of route-planning samples (%)")
    ax.set_title("Error types (automatic taxonomy, SPEC 13)", fontsize=TEXT_PT)
    ax.grid(axis="x", alpha=0.3)
    ax.margins(x=0.12)  # room for the longest bar's label
    # below the axes: inside, the legend could hide a long bar
    fig.legend(loc="outside lower center", ncols=min(6, len(runs)), fontsize=TEXT_PT - 2)
    return _save(fig, path)


def write_plots(
    runs: Sequence[Run], out_dir: Path, *, progress: Progress | None = None
) -> list[Path]:
    """Every figure into ``out_dir``: the difficulty heatmap, then the kind views'
    ``figures`` (``(position, function, file name)``) by position; returns the files
    written. ``progress`` counts the figures drawn (:mod:`maptab._progress`)."""
    figures = [(0, difficulty_heatmap, "difficulty_heatmap.png")]
    figures += [fig for kind in all_kinds() for fig in view_of(kind).figures]
    figures.sort(key=lambda f: f[0])
    shown = or_silent(progress)(figures, "drawing figures", len(figures))
    written = [fn(runs, out_dir / name) for _, fn, name in shown]
    return [p for p in written if p is not None]
