#!/usr/bin/env python3
"""Usage: scripts/compare_snapshots.py BEFORE AFTER [--with-paper] (two snapshot_outputs.sh folders).

Compare two snapshot folders after dropping what differs between any two runs of the same
code: latency_s values, the snapshot folder's own path, and report picture names (hashes of
paths); pictures are compared as a multiset of contents. The paper preset's folders (made
with PAPER=1) are compared only with ``--with-paper``."""

import hashlib
import pathlib
import re
import sys
from collections import Counter

a, b = map(pathlib.Path, sys.argv[1:3])
WITH_PAPER = "--with-paper" in sys.argv[3:]
KEYS = r"started|finished|created|elapsed\w*|duration\w*|seconds|wall\w*|host\w*|maptab_version|version|python|platform|generated\w*|time\w*|latency_s|started_at|finished_at|rate"


def norm(p, root):
    data = p.read_bytes()
    if p.suffix in (".json", ".jsonl", ".html", ".md", ".csv", ".tex", ".txt"):
        t = data.decode("utf-8", "replace").replace(str(root), "ROOT")
        t = re.sub(rf'"({KEYS})": *("[^"]*"|[0-9.eE+-]+)', r'"\1": X', t)
        t = re.sub(
            r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?( ?UTC|Z|[+-]\d\d:\d\d)?", "TIME", t
        )
        t = re.sub(r"(gold|map|answer|route)-[0-9a-f]{16}\.png", r"\1-H.png", t)
        data = t.encode()
    return hashlib.sha256(data).hexdigest()


def files(root):
    out, pics = {}, Counter()
    for p in sorted(root.rglob("*")):
        if (
            not p.is_file()
            or p.name in ("log.txt", "hashes.txt")
            or ("paper" in p.relative_to(root).parts[0] and not WITH_PAPER)
        ):
            continue
        rel = p.relative_to(root).as_posix()
        if re.search(r"/images/\w+-[0-9a-f]{16}\.png$", rel):
            pics[(rel.split("/")[0], norm(p, root))] += 1
        else:
            out[rel] = norm(p, root)
    return out, pics


fa, pa = files(a)
fb, pb = files(b)
diff = sorted(k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))
print(len(fa), "files compared;", sum(pa.values()), "report pictures compared as a multiset")
print("differing files:", diff[:20], len(diff))
print("pictures equal:", pa == pb)
sys.exit(1 if diff or pa != pb else 0)
