"""ReasonMap correctness of oracle answers whose line names are written as a map prints them.

Builds the ReasonMap questions of every topology in a stations folder (``maptab build
--from-reasonmap … --no-render``), answers each question short and long with the oracle
(the optimum of :func:`maptab.core.planning.plan_routes`, written as the ``oracle``
baseline writes it), rewrites every route name in one of these styles and scores the answer
(SPEC 14):

* ``printed``: as the map images print them: Chinese maps ``Line 15`` → ``15号线``;
  Toronto ``Line 1`` → ``1``; Budapest ``Line 1`` → ``M1``; Sydney ``Line M1`` → ``M1``;
  Rome ``Line A`` → ``A``; Los Angeles ``Line A`` → ``A Line``; other names as they are;
* ``bare``: ``Line 15`` → ``15``, ``Line A`` → ``A``, ``East West Line`` → ``East West``;
* ``hanzi``: ``Line 15`` → ``15号线`` on every map (other names bare);
* ``metro``: ``Line 15`` → ``M15`` (other names bare).

*Before* is correctness by exact line names only (the answer is correct and every route name
is a line's name: what the scorer gave before line aliases); *after* is
:func:`maptab.score.map_score.score_reasonmap`'s correctness. Figures are over the answers
whose route names the style changes, and over all answers. Also checked: every rewritten
name of a line resolves to that line or to none (never to another line), and the oracle's
own answers stay correct.

Usage: ``python benchmarks/line_aliases.py [--stations DIR] [--dataset BUILT_DIR]``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from maptab.core.planning import plan_routes
from maptab.core.schema import ReasonMapQuestion
from maptab.io.dataset import Dataset
from maptab.run.baselines import reasonmap_answer
from maptab.score.map_score import canonical_route_names, lenient_key, score_reasonmap
from maptab.score.parse import parse_reasonmap

STATIONS = Path(__file__).resolve().parents[2] / "shared" / "data" / "reasonmap-stations"
_LINE = re.compile(r"^Line (\S+)$")


def _bare(name: str) -> str:
    m = _LINE.match(name)
    if m:
        return m.group(1)
    return name.removesuffix(" Line") if name.endswith(" Line") else name


def _hanzi(name: str) -> str:
    m = _LINE.match(name)
    return f"{m.group(1)}号线" if m else _bare(name)


def _metro(name: str) -> str:
    m = _LINE.match(name)
    if m and m.group(1).isdigit():
        return f"M{m.group(1)}"
    return _bare(name)


def _printed(map_id: str) -> Callable[[str], str]:
    if map_id.startswith("china/"):
        return lambda n: f"{_LINE.match(n).group(1)}号线" if _LINE.match(n) else n
    if map_id in ("canada/toronto", "italy/rome", "australia/sydney"):
        return lambda n: _LINE.match(n).group(1) if _LINE.match(n) else n
    if map_id == "hungary/budapest":
        return _metro
    if map_id == "america/los_angeles":
        return lambda n: f"{_LINE.match(n).group(1)} Line" if _LINE.match(n) else n
    return lambda n: n


STYLES: dict[str, Callable[[str], Callable[[str], str]]] = {
    "printed": _printed,
    "bare": lambda _m: _bare,
    "hanzi": lambda _m: _hanzi,
    "metro": lambda _m: _metro,
}


def build(stations: Path, out: Path) -> None:
    exe = Path(sys.executable).with_name("maptab")
    cmd = [str(exe), "build", "--from-reasonmap", str(stations), "--no-render", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"maptab build failed:\n{done.stderr}")


def measure(dataset: Path) -> dict[str, dict[str, int]]:
    ds = Dataset(dataset)
    rows = [
        ReasonMapQuestion(**json.loads(line))
        for line in (dataset / "reasonmap.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    stats = {
        s: dict.fromkeys(("n", "before", "after", "n_all", "all_before", "all_after"), 0)
        for s in STYLES
    }
    stats["canonical"] = dict.fromkeys(("n", "correct"), 0)
    wrong_line = 0
    for map_id in sorted({q.map_id for q in rows}):
        net = ds.network(map_id)
        for make in STYLES.values():
            rewrite = make(map_id)
            for line in net.line_names:  # a rewritten name never resolves to another line
                text = f"Route Name: {rewrite(line)}\nDeparture Stop: a\nArrival Stop: b"
                seg = canonical_route_names(net, parse_reasonmap(text, "short") or [])
                if seg and seg[0].route_name in net.line_names and seg[0].route_name != line:
                    wrong_line += 1
    for q in rows:
        net = ds.network(q.map_id)
        names = {lenient_key(n) for n in net.line_names}
        plan = [s.to_dict() for s in plan_routes(net, q.station_1, q.station_2)[0]]
        for mode in ("short", "long"):
            text = reasonmap_answer(plan, mode, q.long_template)
            s = score_reasonmap(net, q, parse_reasonmap(text, mode), mode)
            stats["canonical"]["n"] += 1
            stats["canonical"]["correct"] += s.correct
            for style, make in STYLES.items():
                rewrite = make(q.map_id)
                segs = [{**seg, "route_name": rewrite(seg["route_name"])} for seg in plan]
                parsed = parse_reasonmap(reasonmap_answer(segs, mode, q.long_template), mode)
                s = score_reasonmap(net, q, parsed, mode)
                exact = bool(parsed) and all(lenient_key(x.route_name) in names for x in parsed)
                st = stats[style]
                st["n_all"] += 1
                st["all_before"] += s.correct and exact
                st["all_after"] += s.correct
                if any(a["route_name"] != b["route_name"] for a, b in zip(plan, segs, strict=True)):
                    st["n"] += 1
                    st["before"] += s.correct and exact
                    st["after"] += s.correct
    stats["safety"] = {"rewritten names resolved to another line": wrong_line}
    return stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stations", type=Path, default=STATIONS)
    ap.add_argument("--dataset", type=Path, help="an already built ReasonMap dataset")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dataset = args.dataset
        if dataset is None:
            dataset = Path(tmp) / "rm"
            build(args.stations, dataset)
        stats = measure(dataset)
    c = stats["canonical"]
    print(f"oracle answers with the map's own line names: {c['correct']} of {c['n']} correct")
    for style in STYLES:
        st = stats[style]
        print(
            f"{style:8s} answers with rewritten line names: before {st['before']} of {st['n']}, "
            f"after {st['after']} of {st['n']} correct "
            f"(all answers: before {st['all_before']}, after {st['all_after']} of {st['n_all']})"
        )
    for k, v in stats["safety"].items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
