"""Seconds per rendered map: metro maps of 30, 120 and 400 stations and scenic
maps, at full size (target: under 1 s for 400 stations). Besides the renderer's own sample
maps, two of the benchmark builder's synthetic maps (``maptab.generate.synth``), whose sparse
grid layouts exercise the canvas sizing: a medium one and a 434-station one.

Baseline, measured in the same run: matplotlib (Agg) drawing the same network at the same
pixel size with straight edges, dots and unplaced, unshaped labels — what a quick script
would do. The ratio is ours / baseline (below 1 means faster). ``--quick`` skips the large map.

Map styles: 400-station maps (zh and en, several seeds) rendered ``clean``,
``realistic`` and ``hard`` (target: realistic under 1 s); p50 / p99 / max seconds per style and
the ratio to clean, all measured in the same run, with the load average (the machine is
shared: compare ratios when it is loaded). ``--styles-only`` runs just this part.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # samplenets
import matplotlib.pyplot as plt  # noqa: E402

from maptab.generate.synth import MetroSpec, synth_metro  # noqa: E402
from maptab.render import render_map  # noqa: E402
from maptab.render.text import column, measure  # noqa: E402
from samplenets import sample_metro, sample_scenic  # noqa: E402


def ours(net, style: str | None = None) -> None:
    measure.cache_clear()  # shape every label afresh, as for a new map (fonts stay loaded)
    column.cache_clear()
    render_map(net, style=style)


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def styles(seeds: int, repeat: int) -> None:
    """Seconds per 400-station map, clean vs realistic vs hard (module docstring)."""
    nets = [sample_metro(400, lang=lang, seed=s) for s in range(seeds) for lang in ("zh", "en")]
    times: dict[str, list[float]] = {"clean": [], "realistic": [], "hard": []}
    cpu: dict[str, list[float]] = {k: [] for k in times}
    load = os.getloadavg()
    for net in nets:
        for style in times:
            ours(net, style)  # warm this map's fonts and sizes
            for _ in range(repeat):
                t, c = time.perf_counter(), time.process_time()
                ours(net, style)
                times[style].append(time.perf_counter() - t)
                cpu[style].append(time.process_time() - c)
    load = tuple(max(a, b) for a, b in zip(load, os.getloadavg(), strict=True))
    print(f"\n400-station maps, {len(nets)} maps x {repeat} runs (zh and en, seeds 0..{seeds - 1})")
    print(
        f"load average (1/5/15 min, highest of start and end): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print("wall-clock seconds, and CPU seconds of this process (less affected by other jobs)")
    print(
        f"{'style':<10} {'p50 s':>7} {'p99 s':>7} {'max s':>7} {'p50 / clean':>12} "
        f"{'cpu p50':>8} {'cpu p99':>8} {'cpu max':>8} {'cpu / clean':>12}"
    )
    base = statistics.median(times["clean"])
    cbase = statistics.median(cpu["clean"])
    for style, xs in times.items():
        p50, c50 = statistics.median(xs), statistics.median(cpu[style])
        cs = cpu[style]
        print(
            f"{style:<10} {p50:>7.3f} {percentile(xs, 0.99):>7.3f} {max(xs):>7.3f} "
            f"{p50 / base:>12.2f} {c50:>8.3f} {percentile(cs, 0.99):>8.3f} {max(cs):>8.3f} "
            f"{c50 / cbase:>12.2f}"
        )


def timed(fn, repeat: int) -> float:
    fn()  # warm caches (fonts, shaping)
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def baseline(net, size: tuple[int, int]) -> None:
    warnings.filterwarnings("ignore", message="Glyph .* missing")  # its CJK labels are tofu
    fig = plt.figure(figsize=(size[0] / 100, size[1] / 100), dpi=100)
    ax = fig.add_axes((0, 0, 1, 1))
    pos = net.positions
    for e in net.edges:
        (x0, y0), (x1, y1) = pos[e.u], pos[e.v]
        ax.plot((x0, x1), (y0, y1), lw=4)
    xs, ys = zip(*(pos[s] for s in net.vertices), strict=False)
    ax.scatter(xs, ys, s=30, c="white", edgecolors="black", zorder=3)
    for s in net.vertices:
        ax.text(*pos[s], net.label(s), fontsize=10)
    ax.set_axis_off()
    fig.canvas.draw()
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small and medium maps only")
    parser.add_argument("--styles-only", action="store_true", help="only the style comparison")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per language (styles)")
    args = parser.parse_args()
    if args.styles_only:
        styles(seeds=args.seeds, repeat=2)
        return
    cases = [
        ("metro small", sample_metro(30, lang="zh", seed=1)),
        ("metro medium", sample_metro(120, lang="ar", seed=1)),
    ]
    cases.append(("builder medium", synth_metro(MetroSpec(9, 124, language="zh"), 0, "b0")))
    if not args.quick:
        cases.append(("metro large", sample_metro(400, lang="zh", seed=1)))
        cases.append(("builder large", synth_metro(MetroSpec(13, 434, 0, 1, 2, "zh"), 101, "b1")))
    cases += [
        ("scenic small", sample_scenic(15, seed=1)),
        ("scenic medium", sample_scenic(40, seed=1)),
    ]
    repeat = 2 if args.quick else 3
    print(f"{'map':<14} {'stations':>8} {'size':>11} {'ours s':>8} {'baseline s':>10} {'ratio':>6}")
    for name, net in cases:
        size = render_map(net).image.size
        mine = timed(lambda net=net: ours(net), repeat)
        base = timed(lambda net=net, size=size: baseline(net, size), repeat)
        print(
            f"{name:<14} {len(net.vertices):>8} {size[0]:>5}x{size[1]:<5} "
            f"{mine:>8.3f} {base:>10.3f} {mine / base:>6.2f}"
        )
    if not args.quick:
        styles(seeds=args.seeds, repeat=2)


if __name__ == "__main__":
    main()
