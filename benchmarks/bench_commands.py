"""Whole commands as a user runs them, each beside its anchor in the same run.

Every command runs in its own process; we report its wall time and peak resident memory
(``ru_maxrss`` of that child, from ``os.wait4``).

* **score**: ``maptab score OUT --results RESULTS.json --dataset DS`` against MapTab's
  released route-planning scorer on the same file, as a user runs it (one process, the
  default) and with ``--jobs 0`` (one worker process per CPU, at most 8; peak memory is
  then summed over the processes). ``--released PATH`` times the released
  ``evaluate_planning.py`` itself (placed anywhere outside this repository; it writes under
  ``PATH/../../results_evaluate``); without it the faithful re-implementation
  ``benchmarks/released_planning.py`` stands in. The output says which. With ``--reps N``
  the three commands alternate N times and each is reported as the p50 and range of its
  wall times; the ratios are of the p50s. The ratio depends on the machine (the released
  scorer is one loop over ``difflib``, ours many small functions): measure it on
  yours (docs/performance.md). A fourth command is the floor: ``maptab score`` with the scoring of
  each RP answer replaced by a stub that returns a real row of the answer's category (its
  id, map, scenario, difficulties and repetition swapped in, so the summary has the real
  groups), so that reading, matching, the dataset rows, the writes and the summary are all
  that is left; the released scorer's time over the floor's is the most that making the
  answers' scoring faster could give.
* **run**: ``maptab run --model oracle`` (the fastest baseline) over the dataset's RP rows:
  samples per second after start-up (a ``--limit 1`` run subtracted), by wall and by CPU
  time, beside a minimal read-and-write loop over the same rows (the least any runner
  pays). Target: >= 10,000 samples/s. The oracle's floor follows: the same command with
  the oracle's RP answer stubbed to one fixed route, everything but solving the queries.
  With ``--reference-src``, the other checkout's code runs too, alternating with this one
  ``--reps`` times (p50 and max of each), and the two runs' predictions must be the same
  (``latency_s`` aside). On a machine with more than one CPU the same runs follow with
  ``--jobs N`` (one worker process per CPU, at most 8), whose predictions must equal one
  process's. (The client against an HTTP server is
  ``benchmarks/bench_run.py``.)

The dataset is built once (``--no-render``; ``--maps`` maps per scenario, ``--pairs`` OD
pairs per scenario, 12 RP queries per pair) into ``--cache`` (default
``/tmp/maptab-bench-commands``) and reused. The results file holds ``--answers`` answers to
RP queries drawn at random (with replacement), in MapTab's results layout (``station_1``,
``station_2``, ``city``, ``category``, ``routes``, ``Map_Difficulty``,
``Query_Difficulty``, ``response``): 60% the gold route as a bare route, the rest a misread
station, a wrong station, a dropped transfer mark, a truncated route or a route wrapped in
prose and tags. Targets: score ≥ 5x faster than the released scorer, peak ≤ 1.5x its peak.

``--reference-src OTHER/src`` also scores the file with another checkout's code and checks
that every output file is identical to the byte (how an optimisation is checked against
the code before it).

* **paper memory** (``--paper``): peak memory of ``maptab run --model random``, ``maptab
  score`` and ``maptab report`` over the paper preset (built once into ``CACHE/paper-1``).
  Target: <= 1 GB each. With ``--reference-src``, the other checkout's report of the same
  run is timed as well, and every report file but the route pictures must be identical.
  Unless ``--skip-score``, then the score comparison above on ``--answers`` answers drawn
  from the paper dataset (196,800 RP queries, so most answers are to distinct queries,
  so slower per answer than on the default dataset).

``--seeds 1,2,3`` repeats the score and run parts on the dataset of each seed (built with
that seed, answers drawn with it; seed 1's dataset is ``CACHE/ds-M-P``, another's
``CACHE/ds-M-P-seedS``) and ends with each figure's min / p50 / max over the seeds.

Usage: ``python benchmarks/bench_commands.py [--quick] [--answers N] [--released PATH]
[--reference-src DIR] [--paper] [--skip-score] [--run-only] [--reps N] [--seeds S,...]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


_LAUNCH = (
    "import os, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)\n"
    "import resource\nu = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "sys.stdout.buffer.write(p.stdout)\n"
    "print(f'\\n@@ {p.returncode} {u.ru_maxrss} {u.ru_utime + u.ru_stime}')\n"
)


def _tree_rss(root: int) -> int:
    """Resident bytes of the processes below ``root`` (Linux ``/proc``; 0 elsewhere)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)  # field 4: parent pid
        rss[pid] = int(fields[21]) * page  # field 24: resident pages
    total, todo = 0, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total


def timed(cmd: list[str]) -> tuple[float, float, float, str]:
    """``(wall seconds, peak RSS in MB, CPU seconds, output)`` of one command; fails loudly.

    The command is started by a small launcher process, so that its peak RSS is its own
    (a child forked from this process would inherit our high-water mark). CPU time includes
    the command's worker processes; the peak is the larger of the biggest process's peak and
    the sum over the command's processes sampled every 20 ms (worker processes add up)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCH, *cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.02):
            peak = max(peak, _tree_rss(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    done.set()
    sampler.join()
    wall = time.perf_counter() - t0
    out, _, tail = stdout.decode("utf-8", "replace").rpartition("\n@@ ")
    if proc.returncode or not tail:
        raise SystemExit(f"{' '.join(cmd)}: launcher failed\n{stderr.decode()[-2000:]}")
    code, rss_kb, cpu = tail.split()
    if int(code):
        raise SystemExit(f"{' '.join(cmd)} failed ({code}):\n{out[-2000:]}")
    return wall, max(int(rss_kb) / 1024, peak / 2**20), float(cpu), out


def build_dataset(root: Path, maps: int, pairs: int, seed: int = 1) -> Path:
    """The benchmark dataset of ``seed`` (built once per size and seed and reused)."""
    from maptab.errors import MaptabError
    from maptab.generate.pipeline import Preset, build_benchmark

    ds = root / (f"ds-{maps}-{pairs}" if seed == 1 else f"ds-{maps}-{pairs}-seed{seed}")
    if not (ds / "manifest.json").is_file():
        t0 = time.perf_counter()
        try:
            build_benchmark(ds, preset=Preset("bench", maps, maps, pairs, pairs), seed=seed)
        except MaptabError as exc:  # e.g. more pairs than this seed's maps hold
            raise SystemExit(f"building {ds.name} (seed {seed}): {exc}") from None
        print(f"built {ds} in {time.perf_counter() - t0:.0f} s")
    return ds


def _answer(rng: random.Random, route: str, names: list[str]) -> str:
    toks = route.split("-")
    kind = rng.random()
    if kind < 0.6:
        return route
    if kind < 0.7:  # misread station
        i = rng.randrange(len(toks))
        t = toks[i]
        j = rng.randrange(len(t))
        toks[i] = t[:j] + rng.choice("aeioxz") + t[j + 1 :]
    elif kind < 0.8:  # wrong station
        toks[rng.randrange(len(toks))] = rng.choice(names)
    elif kind < 0.85:  # dropped transfer marks
        toks = [t.replace("(transfer)", "") for t in toks]
    elif kind < 0.9:
        toks = toks[: rng.randint(1, len(toks))]
    else:
        return f"Let me trace the lines.\nThe route is:\n<route_begin>{route}<route_end>"
    return "-".join(toks)


def write_results(ds: Path, n: int, path: Path, seed: int = 0) -> None:
    """``n`` answers in MapTab's results layout (module docstring)."""
    rows = [json.loads(line) for line in (ds / "rp.jsonl").open(encoding="utf-8")]
    names = sorted({t.removesuffix("(transfer)") for r in rows for t in r["routes"][0].split("-")})
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        r = rng.choice(rows)
        out.append(
            {
                "city": r["map_id"],
                "station_1": r["source"],
                "station_2": r["target"],
                "category": r["category"],
                "question": r["question"],
                "routes": r["routes"],
                "Map_Difficulty": r["map_difficulty"],
                "Query_Difficulty": r["query_difficulty"],
                "response": _answer(rng, r["routes"][0], names),
            }
        )
    path.write_text(json.dumps(out, ensure_ascii=False, indent=4), encoding="utf-8")


def bench_score(
    ds: Path, results: Path, work: Path, released: Path | None, reps: int = 1
) -> dict[str, float]:
    """The released scorer, ``maptab score --results`` in one process and with ``--jobs 0``,
    and the floor (module docstring), alternating ``reps`` times (in the same minutes); p50
    and range of each, and the ratios of the p50s (a ratio measured on one machine: it
    differs between machines, see docs/performance.md), which are also returned."""
    if released is not None:
        anchor = [sys.executable, str(released), "--input_file", str(results)]
        label = f"released {released}"
    else:
        out = work / "released-out.json"
        anchor = [sys.executable, str(HERE / "released_planning.py")]
        anchor += ["--input_file", str(results), "--out", str(out)]
        label = "re-implementation benchmarks/released_planning.py"
    run, pool = work / "scored", work / "scored-pool"
    cmd = [str(BIN / "maptab"), "score", str(run), "--results", str(results)]
    cmd += ["--dataset", str(ds), "--no-progress"]
    pool_cmd = [str(BIN / "maptab"), "score", str(pool), "--results", str(results)]
    pool_cmd += ["--dataset", str(ds), "--no-progress", "--jobs", "0"]
    floor = work / "scored-floor"
    floor_cmd = [*_FLOOR_CLI, "score", str(floor), "--results", str(results)]
    floor_cmd += ["--dataset", str(ds), "--no-progress"]
    got: dict[str, list[tuple[float, float, float]]] = {
        "anchor": [],
        "one": [],
        "pool": [],
        "floor": [],
    }
    a_out = ""
    for _ in range(reps):
        a_s, a_mb, a_cpu, a_out = timed(anchor)
        got["anchor"].append((a_s, a_mb, a_cpu))
        runs = (("one", run, cmd), ("pool", pool, pool_cmd), ("floor", floor, floor_cmd))
        for name, folder, command in runs:
            shutil.rmtree(folder, ignore_errors=True)
            s_, mb, cpu, _ = timed(command)
            got[name].append((s_, mb, cpu))
        same = all(
            (pool / n).read_bytes() == (run / n).read_bytes()
            for n in ("scores.jsonl", "summary.json")
        )
        if not same:
            raise SystemExit("worker processes changed the scores")

    def p50(name: str, i: int) -> float:
        return _p50([r[i] for r in got[name]])

    def line(name: str, extra: str = "") -> str:
        walls = [r[0] for r in got[name]]
        return (
            f"  {p50(name, 0):7.2f} s wall (p50 of {reps}, {min(walls):.2f}-{max(walls):.2f})"
            f"  {p50(name, 2):7.2f} s CPU  peak {max(r[1] for r in got[name]):6.0f} MB{extra}"
        )

    print(f"released scorer ({label})")
    for text in a_out.splitlines():
        if text.startswith(("Average", "Difficulty_score_total")):
            print(f"  {text}")
    print(line("anchor"))
    print("maptab score --results (one process, the default)")
    print(line("one"))
    print(f"maptab score --results --jobs 0 ({min(8, os.cpu_count() or 1)} worker processes)")
    print(line("pool", " (all processes)"))
    print("  same scores.jsonl and summary.json as one process: True")
    print("maptab score --results with each RP answer's scoring stubbed out (the floor)")
    print(line("floor"))
    bound = p50("anchor", 0) / p50("floor", 0)
    print(
        f"  everything but scoring the answers: {p50('floor', 0) / p50('one', 0):.0%} of the "
        f"command's time; with scoring free, the command would be {bound:.2f}x faster than "
        f"the released scorer (5x needs the rest faster too: {'no' if bound >= 5 else 'yes'})"
    )
    ratio, cpu_ratio = p50("anchor", 0) / p50("one", 0), p50("anchor", 2) / p50("one", 2)
    a_mb, m_mb = max(r[1] for r in got["anchor"]), max(r[1] for r in got["one"])
    print(
        f"score: {ratio:.2f}x faster by wall time, {cpu_ratio:.2f}x by CPU time "
        f"(target >= 5x {'PASS' if min(ratio, cpu_ratio) >= 5 else 'MISS'}); "
        f"with worker processes {p50('anchor', 0) / p50('pool', 0):.2f}x by wall time; "
        f"memory {m_mb / a_mb:.2f}x the released scorer's "
        f"(target <= 1.5x {'PASS' if m_mb <= 1.5 * a_mb else 'MISS'})"
    )
    return {
        "score x (wall)": ratio,
        "score x (CPU)": cpu_ratio,
        "score x (--jobs 0, wall)": p50("anchor", 0) / p50("pool", 0),
        "score x bound, scoring free": p50("anchor", 0) / p50("floor", 0),
        "memory / released": m_mb / a_mb,
    }


_LOOP = (
    "import json, sys\n"
    "with open(sys.argv[1], encoding='utf-8') as src, open(sys.argv[2], 'w') as out:\n"
    "    for line in src:\n"
    "        row = json.loads(line)\n"
    "        out.write(json.dumps({'id': row['id'], 'response': row['routes'][0]}) + '\\n')\n"
)


# maptab's command line run by this interpreter, with whatever code PYTHONPATH points at
_CLI = [sys.executable, "-c", "from maptab.cli import main; main()"]

# the same command with the scoring of each RP answer replaced by a stub: the first real row
# of each category, with the sample's own id, map, scenario, difficulties and repetition (the
# floor: everything else the command does, with rows of the real shape, in the real groups)
_FLOOR_CLI = [
    sys.executable,
    "-c",
    "from maptab.tasks.base import get\n"
    "kind = get('rp'); real = kind.scoring.score; first = {}\n"
    "def stub(maps, query, variant, response):\n"
    "    row = first.get(query.category)\n"
    "    if row is None:\n"
    "        row = first[query.category] = real(maps, query, variant, response)\n"
    "    return {**row, 'id': query.id, 'map_id': query.map_id, 'scenario': query.scenario,\n"
    "            'map_difficulty': query.map_difficulty,\n"
    "            'query_difficulty': query.query_difficulty, 'repetition': query.repetition}\n"
    "object.__setattr__(kind.scoring, 'score', stub)\n"
    "from maptab.cli import main; main()",
]

# maptab's command line with the oracle's RP answer stubbed to one fixed route (the floor of
# maptab run --model oracle: everything but solving the queries)
_ORACLE_FLOOR_CLI = [
    sys.executable,
    "-c",
    "from maptab.run.baselines import OracleProvider\n"
    "OracleProvider._rp_text = lambda self, request, q, s, t: '<route_begin>A-B<route_end>'\n"
    "from maptab.cli import main; main()",
]


@contextlib.contextmanager
def _code_of(src: Path) -> Iterator[None]:
    """Commands started meanwhile import maptab from ``src`` (another checkout's ``src/``)."""
    os.environ["PYTHONPATH"] = str(src)
    try:
        yield
    finally:
        del os.environ["PYTHONPATH"]


def same_as_reference(ds: Path, results: Path, work: Path, src: Path) -> None:
    """Score the same file with another checkout's ``src`` folder (e.g. the code before an
    optimisation: ``git archive REV src | tar -x -C /tmp/old``) and compare the outputs byte for byte."""
    out = work / "reference"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [*_CLI, "score", str(out), "--results", str(results), "--dataset", str(ds)]
    with _code_of(src):
        r_s, r_mb, r_cpu, _ = timed([*cmd, "--no-progress"])
    names = ("scores.jsonl", "summary.json", "predictions.jsonl", "run.json")
    same = all((out / n).read_bytes() == (work / "scored" / n).read_bytes() for n in names)
    print(f"reference code {src}: {r_s:7.2f} s wall  {r_cpu:7.2f} s CPU  peak {r_mb:6.0f} MB")
    print(f"  outputs identical to the byte ({', '.join(names)}): {same}")
    if not same:
        raise SystemExit("scores differ from the reference code's")


def _run_rate(
    ds: Path, out: Path, rows: int, src: Path, jobs: int = 1, cli: list[str] = _CLI
) -> tuple[float, float, float, float]:
    """``maptab run DS --model oracle`` with the code of ``src`` (a checkout's ``src/``):
    ``(samples/s after start-up by wall time, by CPU time, peak MB, start-up s)``; the
    start-up is a ``--limit 1`` run's, subtracted. ``jobs`` > 1 adds ``--jobs`` (the
    ``--limit 1`` run then starts one worker, the full run ``jobs`` at once); CPU time and
    peak memory are then those of all its processes (:func:`timed`). ``cli`` is the command
    line to start (:data:`_ORACLE_FLOOR_CLI` for the floor)."""
    base = [*cli, "run", str(ds)]
    base += ["--model", "oracle", "--no-progress"]
    if jobs > 1:
        base += ["--jobs", str(jobs)]
    with _code_of(src):
        shutil.rmtree(out.with_name(out.name + "-one"), ignore_errors=True)
        one_s, _, one_cpu, _ = timed([*base, "--out", f"{out}-one", "--limit", "1"])
        shutil.rmtree(out, ignore_errors=True)
        all_s, all_mb, all_cpu, _ = timed([*base, "--out", str(out), "--limit", str(rows)])
    return (
        (rows - 1) / max(1e-9, all_s - one_s),
        (rows - 1) / max(1e-9, all_cpu - one_cpu),
        all_mb,
        one_s,
    )


def _predictions(out: Path) -> list[dict]:
    """The run's rows without ``latency_s`` (a timing), in file order."""
    rows = [json.loads(line) for line in (out / "predictions.jsonl").open(encoding="utf-8")]
    for row in rows:
        row.pop("latency_s")
    return rows


def _p50(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def bench_run(
    ds: Path, work: Path, reference: Path | None = None, reps: int = 1
) -> dict[str, float]:
    """``maptab run --model oracle`` against a minimal read-and-write loop; with
    ``reference`` (another checkout's ``src/``), the two codes alternate ``reps`` times (A/B
    in the same minutes) and their predictions are compared (``latency_s`` aside). Returns
    this code's p50 rates."""
    rows = sum(1 for _ in (ds / "rp.jsonl").open(encoding="utf-8"))
    loop_s, loop_mb, _, _ = timed(
        [sys.executable, "-c", _LOOP, str(ds / "rp.jsonl"), str(work / "loop")]
    )
    print(f"minimal loop over {rows:,} RP rows: {loop_s:6.2f} s wall  peak {loop_mb:5.0f} MB")
    codes = {"this code": HERE.parent / "src"}
    if reference is not None:
        codes[f"reference {reference}"] = reference
    rates: dict[str, list[tuple[float, float, float, float]]] = {name: [] for name in codes}
    for _ in range(reps):
        for i, (name, src) in enumerate(codes.items()):
            rates[name].append(_run_rate(ds, work / f"run-{i}", rows, src))
    for name, got in rates.items():
        wall, cpu = [r[0] for r in got], [r[1] for r in got]
        print(
            f"{name}: oracle {_p50(wall):,.0f} samples/s after start-up by wall time "
            f"(p50 of {reps}, max {max(wall):,.0f}), {_p50(cpu):,.0f} by CPU time "
            f"(max {max(cpu):,.0f}); start-up {_p50([r[3] for r in got]):.2f} s, "
            f"peak {max(r[2] for r in got):.0f} MB; "
            f"{rows / _p50(wall) / loop_s:.1f}x the minimal loop's time"
        )
    best = _p50([r[0] for r in rates["this code"]])
    cpu = _p50([r[1] for r in rates["this code"]])
    verdict = "PASS" if min(best, cpu) >= 10_000 else "MISS"
    print(f"oracle target >= 10,000 samples/s (one process): {verdict}")
    figures = {"oracle samples/s (wall)": best, "oracle samples/s (CPU)": cpu}
    floor = _p50(
        [
            _run_rate(ds, work / "run-floor", rows, codes["this code"], cli=_ORACLE_FLOOR_CLI)[0]
            for _ in range(reps)
        ]
    )
    print(
        f"this code with the oracle's solving stubbed out (its floor): {floor:,.0f} samples/s "
        f"after start-up; solving is {1 - best / floor:.0%} of the run's time after start-up"
    )
    figures["oracle floor samples/s (solving stubbed)"] = floor
    from maptab.executors import default_workers

    jobs = default_workers()
    if jobs > 1:  # the same runs with --jobs: one worker process per CPU
        got = [
            _run_rate(ds, work / "run-jobs", rows, codes["this code"], jobs) for _ in range(reps)
        ]
        wall = [r[0] for r in got]
        print(
            f"this code, --jobs {jobs}: oracle {_p50(wall):,.0f} samples/s after start-up by "
            f"wall time (p50 of {reps}, max {max(wall):,.0f}), "
            f"{_p50([r[1] for r in got]):,.0f} by CPU time of all processes; start-up "
            f"{_p50([r[3] for r in got]):.2f} s, peak of the processes together "
            f"{max(r[2] for r in got):.0f} MB; {_p50(wall) / best:.2f}x one process"
        )
        print(
            f"oracle target >= 10,000 samples/s (--jobs {jobs}): "
            f"{'PASS' if _p50(wall) >= 10_000 else 'MISS'}"
        )
        same = _predictions(work / "run-jobs") == _predictions(work / "run-0")
        print(f"--jobs {jobs} predictions identical to one process's (latency_s aside): {same}")
        if not same:
            raise SystemExit("the oracle's predictions differ with --jobs")
        figures[f"oracle samples/s with --jobs {jobs} (wall)"] = _p50(wall)
    if reference is not None:
        same = _predictions(work / "run-0") == _predictions(work / "run-1")
        print(f"predictions identical to the reference's (latency_s aside): {same}")
        if not same:
            raise SystemExit("the oracle's predictions differ from the reference code's")
    return figures


def bench_paper_memory(paper: Path, work: Path, reference: Path | None = None) -> None:
    """Peak memory of ``maptab run --model random``, ``maptab score`` and ``maptab report``
    over a paper-size dataset (target: <= 1 GB each). ``paper`` is built with
    ``maptab build --preset paper --seed 1 --no-render`` when it has no manifest. With
    ``reference`` (another checkout's ``src``), that code's report of the same run is timed
    too, and every file but the route pictures must be the same to the byte (the pictures'
    count and size are shown)."""
    maptab = str(BIN / "maptab")
    if not (paper / "manifest.json").is_file():
        b_s, b_mb, _, _ = timed(
            [
                maptab,
                "build",
                "--preset",
                "paper",
                "--seed",
                "1",
                "--no-render",
                "--out",
                str(paper),
            ]
        )
        print(f"built {paper}: {b_s:.0f} s, peak {b_mb:.0f} MB")
    run = work / "paper-random"
    r_s, r_mb, _, _ = timed(
        [maptab, "run", str(paper), "--model", "random", "--out", str(run), "--no-progress"]
    )
    s_s, s_mb, _, _ = timed([maptab, "score", str(run), "--no-progress"])
    report = [maptab, "report", str(run), "--out", str(work / "paper-report"), "--no-progress"]
    p_s, p_mb, _, _ = timed(report)
    rows = sum(1 for _ in (run / "predictions.jsonl").open(encoding="utf-8"))
    print(f"paper size ({rows:,} samples, load {os.getloadavg()[0]:.1f}):")
    for name, secs, mb in (("run", r_s, r_mb), ("score", s_s, s_mb), ("report", p_s, p_mb)):
        verdict = "PASS" if mb <= 1024 else "MISS"
        print(
            f"  maptab {name:6s} {secs:7.1f} s wall  peak {mb:6.0f} MB (target <= 1 GB {verdict})"
        )
    if reference is not None:
        other = work / "paper-report-reference"
        with _code_of(reference):
            o_s, o_mb, _, _ = timed([*_CLI, *report[1:3], "--out", str(other), "--no-progress"])
        print(f"  reference code's report {o_s:7.1f} s wall  peak {o_mb:6.0f} MB ({reference})")
        mine, theirs = _files(work / "paper-report"), _files(other)
        same = {k: v for k, v in mine.items() if not k.startswith("images/")} == {
            k: v for k, v in theirs.items() if not k.startswith("images/")
        }
        for who, files in (("this code", mine), ("reference", theirs)):
            pics = [len(v) for k, v in files.items() if k.startswith("images/")]
            print(f"  {who}: {len(pics)} pictures, {sum(pics) / 1e6:,.0f} MB")
        print(f"  every other report file identical to the byte: {same}")
        if not same:
            raise SystemExit("the report differs from the reference code's")


def _files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small dataset, 20,000 answers")
    ap.add_argument("--answers", type=int, default=None)
    ap.add_argument("--maps", type=int, default=None)
    ap.add_argument("--pairs", type=int, default=None)
    ap.add_argument("--released", type=Path, default=None, help="the released script's path")
    ap.add_argument(
        "--reference-src", type=Path, default=None, help="another checkout's src/ to compare with"
    )
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "maptab-bench")
    ap.add_argument(
        "--paper",
        action="store_true",
        help="also measure run/score/report peak memory at paper size (builds CACHE/paper-1)",
    )
    ap.add_argument("--skip-score", action="store_true", help="skip the scorer comparison")
    ap.add_argument("--run-only", action="store_true", help="only time maptab run (no scorer)")
    ap.add_argument(
        "--reps", type=int, default=1, help="repetitions of the score and run timings (alternating)"
    )
    ap.add_argument(
        "--seeds",
        default="1",
        help="comma-separated seeds: each builds its own dataset and draws its own answers "
        "(default 1); with several, the figures' spread over the seeds is printed at the end",
    )
    args = ap.parse_args()
    n = args.answers or (20_000 if args.quick else 100_000)
    maps = args.maps or (8 if args.quick else 24)
    pairs = args.pairs or (600 if args.quick else 2000)
    seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    args.cache.mkdir(parents=True, exist_ok=True)
    figures: dict[str, list[float]] = {}
    for seed in seeds:
        ds = build_dataset(args.cache, maps, pairs, seed)
        if len(seeds) > 1:
            print(f"== seed {seed}")
        for name, value in _bench_seed(args, ds, n, seed).items():
            figures.setdefault(name, []).append(value)
    if len(seeds) > 1:
        print(f"over {len(seeds)} seeds ({', '.join(map(str, seeds))}): min / p50 / max")
        for name, values in figures.items():
            lo, mid, hi = min(values), _p50(values), max(values)
            print(f"  {name:28s} {lo:10,.2f} {mid:10,.2f} {hi:10,.2f}")
    if args.paper:
        with tempfile.TemporaryDirectory() as tmp:
            bench_paper_memory(args.cache / "paper-1", Path(tmp), args.reference_src)
            if not args.skip_score:  # the score comparison on answers to the paper dataset
                results = Path(tmp) / "paper-results.json"
                write_results(args.cache / "paper-1", n, results, seed=1)
                print(f"{n:,} answers in MapTab's layout drawn from the paper dataset (seed 1)")
                bench_score(args.cache / "paper-1", results, Path(tmp), args.released, args.reps)


def _bench_seed(args: argparse.Namespace, ds: Path, n: int, seed: int) -> dict[str, float]:
    """The score and run parts on the dataset of one seed (answers drawn with that seed)."""
    got: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.run_only:
            print(f"dataset {ds.name} ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
            return bench_run(ds, work, args.reference_src, args.reps)
        results = work / "bench" / "results.json"
        results.parent.mkdir()
        write_results(ds, n, results, seed=seed)
        print(
            f"{n:,} answers in MapTab's layout (seed {seed}), dataset {ds.name} "
            f"({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})"
        )
        if not args.skip_score:
            got.update(bench_score(ds, results, work, args.released, args.reps))
            if args.reference_src:
                same_as_reference(ds, results, work, args.reference_src)
            got.update(bench_run(ds, work, args.reference_src, args.reps))
    return got


if __name__ == "__main__":
    main()
