"""How hard maps are to read: OCR station-label recall on real and generated maps.

The meter (:mod:`maptab.render.ocr`, ``maptab legibility``) reads each image with RapidOCR
and matches the text to the map's own station list. Measured here:

* **real maps** (``../shared/data``): the ReasonMap images against their station metadata and
  MapTab's Cleveland image against its tables; recall per map, and the interquartile range;
* **generated maps**: builder metro maps (``maptab.generate.synth``; languages and sizes below)
  rendered ``clean`` and ``realistic`` (and ``hard``): recall per map and the median per style,
  set against the real maps' interquartile range (the target for ``realistic``);
* **stray share** on both: the share of detections that read as no station's name (titles,
  legends, line badges, other lines' stations, icons, street names), against the real maps'
  range.

Needs the ``ocr`` extra; prints a note and exits 0 without it. OCR is slow on a small CPU (a
4,000-pixel map takes a minute or more): ``--quick`` reads two generated maps per style and
skips the real ones; ``--real-from FILE`` takes the real maps' figures from an earlier
``--json`` file; ``--no-generated`` reads the real maps only, ``--real NAMES`` some of
them; ``--sizes`` reads five builder-sized metro maps (24 to 320 stations) in each style of
``--styles`` instead; ``--json FILE`` writes every figure.
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import time
from pathlib import Path

from PIL import Image

from maptab.generate.synth import MetroSpec, ScenicSpec, synth_metro, synth_scenic
from maptab.render import render_map
from maptab.render.ocr import measure, ocr_available, read_image, station_labels

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"

#: generated maps: (lines, stations, language); sizes like the builder's medium and large maps.
#: Languages the engine reads (PP-OCRv4 reads Latin and Chinese; kana, Hangul, Cyrillic,
#: Arabic, Thai… come out as nothing or noise), like the real maps, which are all Latin or
#: Chinese.
GENERATED = [
    (6, 60, "en"),
    (9, 120, "zh"),
    (8, 100, "de"),
    (10, 150, "fr"),
    (7, 80, "es"),
    (12, 200, "en"),
]
#: builder-sized maps for ``--sizes``: (lines, stations, language, shared segments), small to
#: large
SIZES = [
    (3, 24, "en", 1),
    (5, 60, "zh", 2),
    (8, 110, "en", 4),
    (12, 200, "de", 6),
    (16, 320, "fr", 8),
]
#: generated scenic maps: (spots, language, seed)
SCENIC = [(25, "en", 1), (30, "zh", 2), (20, "de", 3)]


def orientation_recall(placed, missing: list[str]) -> dict[str, list[int]]:
    """[found, drawn] per way a station label is drawn (level, 90, 45, -45, vertical)."""
    out: dict[str, list[int]] = {}
    gone = set(missing)
    for s, lab in placed.labels.items():
        key = "vertical" if lab.vertical else ("level" if not lab.angle else str(lab.angle))
        cell = out.setdefault(key, [0, 0])
        cell[0] += s not in gone
        cell[1] += 1
    return out


def real_maps():
    """(name, image path, network loader) for every real map with a station list."""
    from maptab.core.tables import read_network
    from maptab.io.metadata import load_reasonmap

    out = []
    cle = SHARED / "maptab-sample" / "metromap"
    if cle.is_dir():
        tab = cle / "tabulars" / "america"
        out.append(
            (
                "cleveland",
                cle / "images" / "america" / "cleveland.png",
                lambda: read_network(tab / "cleveland_edge.csv", tab / "cleveland_vertex.csv"),
            )
        )
    for img in sorted(glob.glob(str(SHARED / "reasonmap-maps" / "*" / "*.png"))):
        meta = Path(img.replace("reasonmap-maps", "reasonmap-stations")).with_suffix(".json")
        if meta.is_file():
            out.append((Path(img).stem, Path(img), lambda meta=meta: load_reasonmap(meta)))
    return out


def quartiles(xs: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[1], q[2]


def _inside(figures: dict, recalls: list[float], strays: list[float]) -> str:
    """Whether every map's recall and stray share lie in the real maps' ranges."""
    real = figures.get("real_range")
    if not real:
        return ""
    (r0, r1), (s0, s1) = real["recall"], real["stray"]
    ok = all(r0 <= r <= r1 for r in recalls) and all(s0 <= s <= s1 for s in strays)
    return f" (real ranges: {'all inside' if ok else 'not all inside'})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="2 generated maps, no real ones")
    parser.add_argument("--no-real", action="store_true", help="skip the real maps")
    parser.add_argument("--styles", default="clean,realistic,hard")
    parser.add_argument("--maps", help="comma-separated indices into GENERATED (default: all)")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--no-generated", action="store_true", help="read the real maps only")
    parser.add_argument("--real", help="comma-separated real map names (default: all)")
    parser.add_argument(
        "--real-from", type=Path, help="take the real maps' figures from an earlier --json file"
    )
    parser.add_argument(
        "--sizes", action="store_true", help="the five builder-sized maps of SIZES instead"
    )
    parser.add_argument("--no-scenic", action="store_true", help="skip the scenic maps")
    parser.add_argument(
        "--cls", action="store_true", help="run RapidOCR's angle classifier on every text line"
    )
    args = parser.parse_args()
    if not ocr_available():
        print("bench_legibility: no OCR engine (pip install 'maptab[ocr]'); skipped")
        return
    Image.MAX_IMAGE_PIXELS = None
    figures: dict[str, dict] = {"real": {}, "generated": {}}

    if args.real_from:
        figures["real"] = json.loads(args.real_from.read_text("utf-8"))["real"]
    elif not (args.quick or args.no_real):
        wanted = set(args.real.split(",")) if args.real else None
        for name, path, load in real_maps():
            if wanted is not None and name not in wanted:
                continue
            t = time.perf_counter()
            with Image.open(path) as im:
                r = measure(read_image(im), station_labels(load()))
                size = im.size
            figures["real"][name] = {**r.to_dict(), "size": size}
            print(
                f"real {name:<12} {size[0]:>5}x{size[1]:<5} recall {r.recall:6.1%} "
                f"({r.found}/{r.stations})  false {r.false_detections:>4}/{r.detections:<4} "
                f"stray {r.stray_share:6.1%} "
                f"{time.perf_counter() - t:6.1f}s",
                flush=True,
            )
    real = [v["recall"] for v in figures["real"].values()]
    if len(real) >= 2:
        q1, med, q3 = quartiles(real)
        print(f"real maps: n={len(real)} recall q1 {q1:.1%} median {med:.1%} q3 {q3:.1%}")
        figures["real_iqr"] = [q1, med, q3]
        stray = [v["stray_share"] for v in figures["real"].values()]
        print(
            f"real maps: recall {min(real):.1%}–{max(real):.1%}, "
            f"stray share {min(stray):.1%}–{max(stray):.1%}"
        )
        figures["real_range"] = {
            "recall": [min(real), max(real)],
            "stray": [min(stray), max(stray)],
        }
    if args.no_generated:
        if args.json:
            args.json.write_text(json.dumps(figures, ensure_ascii=False, indent=1), "utf-8")
        return

    picked = (
        [int(i) for i in args.maps.split(",") if i]
        if args.maps is not None
        else range(len(GENERATED))
    )
    maps = [
        (
            f"{lang}-{n}",
            lambda i=i, lines=lines, n=n, lang=lang: synth_metro(
                MetroSpec(lines, n, language=lang), 40 + i, f"bench-{i}"
            ),
        )
        for i, (lines, n, lang) in [(i, GENERATED[i]) for i in picked]
    ][: 2 if args.quick else None]
    if args.sizes:
        maps = [
            (
                f"{lang}-{n}",
                lambda i=i, lines=lines, n=n, lang=lang, shared=shared: synth_metro(
                    MetroSpec(lines, n, language=lang, shared_segments=shared, branches=1),
                    60 + i,
                    f"bench-size-{i}",
                ),
            )
            for i, (lines, n, lang, shared) in enumerate(SIZES)
        ]
    if not (args.quick or args.no_scenic or args.sizes):
        maps += [
            (
                f"scenic-{lang}-{n}",
                lambda n=n, lang=lang, seed=seed: synth_scenic(
                    ScenicSpec(n, language=lang), seed, f"bench-scenic-{seed}"
                ),
            )
            for n, lang, seed in SCENIC
        ]
    for style in args.styles.split(","):
        recalls, strays = [], []
        for key, make in maps:
            net = make()
            t = time.perf_counter()
            result = render_map(net, style=style)
            dets = read_image(result.image, angle_classifier=args.cls)
            r = measure(dets, station_labels(net, result.placed))
            recalls.append(r.recall)
            strays.append(r.stray_share)
            w, h = result.image.size
            kinds = orientation_recall(result.placed, r.missing)
            figures["generated"].setdefault(style, {})[key] = {
                **r.to_dict(),
                "size": [w, h],
                "orientation": kinds,
            }
            by_kind = " ".join(f"{k} {f}/{n}" for k, (f, n) in sorted(kinds.items()))
            print(
                f"{style:<9} {key:<14} {w:>5}x{h:<5} recall {r.recall:6.1%}  "
                f"false {r.false_detections:>4}/{r.detections:<4} stray {r.stray_share:6.1%} "
                f"loc p50 {r.location_error(0.5)} px  {time.perf_counter() - t:6.1f}s  [{by_kind}]",
                flush=True,
            )
        med = statistics.median(recalls)
        note = ""
        if "real_iqr" in figures:
            q1, _, q3 = figures["real_iqr"]
            note = f" (real IQR {q1:.1%}–{q3:.1%}: {'inside' if q1 <= med <= q3 else 'outside'})"
        print(f"{style}: median recall {med:.1%} over {len(recalls)} maps{note}", flush=True)
        print(
            f"{style}: recall {min(recalls):.1%}–{max(recalls):.1%}, "
            f"stray share {min(strays):.1%}–{max(strays):.1%}{_inside(figures, recalls, strays)}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(figures, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
