#!/usr/bin/env python3
"""Compare two folders written by ``scripts/snapshot_outputs.sh`` at different paths.

``hashes.txt`` of two snapshots only agree when both were written at the same path: run
folders record their dataset's absolute path, report images are named by a hash of it,
and predictions carry their latency. This script compares the files themselves: in text
files the snapshot's own root is replaced by ``ROOT`` and times, durations and latencies by
``X``; report images (``gold-``, ``pred-``, ``map-`` + path hash) are compared per report
as multisets of contents. Exit status 1 and a list when anything differs.

    scripts/compare_snapshots.py /work/snap-before /tmp/snap-new [--with-paper]
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections import defaultdict
from pathlib import Path

VOLATILE = (
    r"started\w*|finished\w*|created|elapsed\w*|duration\w*|seconds|wall\w*|host\w*"
    r"|maptab_version|version|python|platform|generated\w*|time\w*|latency_s|rate"
)
TEXT = (".json", ".jsonl", ".html", ".md", ".csv", ".tex", ".txt")
HASHED = re.compile(r"\b(gold|pred|map)-[0-9a-f]{16}")


def _digest(path: Path, root: Path) -> str:
    data = path.read_bytes()
    if path.suffix in TEXT:
        text = data.decode("utf-8", "replace").replace(str(root), "ROOT")
        text = re.sub(rf'"({VOLATILE})": *("[^"]*"|[0-9.eE+-]+|null)', r'"\1": X', text)
        text = re.sub(
            r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?( ?UTC|Z|[+-]\d\d:\d\d)?", "TIME", text
        )
        data = HASHED.sub(r"\1-H", text).encode()
    return hashlib.sha256(data).hexdigest()


def collect(root: Path, paper: bool) -> tuple[dict[str, str], dict[str, list[str]]]:
    files: dict[str, str] = {}
    images: dict[str, list[str]] = defaultdict(list)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if path.name in ("log.txt", "hashes.txt") or (not paper and "paper" in rel):
            continue
        digest = _digest(path, root)
        match = HASHED.match(path.name)
        if "/images/" in rel and match:
            images[f"{rel.split('/images/')[0]}/{match.group(1)}"].append(digest)
        else:
            files[rel] = digest
    return files, {k: sorted(v) for k, v in images.items()}


def main(argv: list[str]) -> int:
    a, b = Path(argv[1]), Path(argv[2])
    paper = "--with-paper" in argv
    fa, ia = collect(a, paper)
    fb, ib = collect(b, paper)
    files = [k for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]
    images = [k for k in sorted(set(ia) | set(ib)) if ia.get(k) != ib.get(k)]
    print(f"{len(fa)} files and {sum(map(len, ia.values()))} report images compared")
    for k in files:
        print(f"differs: {k}")
    for k in images:
        print(f"image set differs: {k}")
    return 1 if files or images else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
