#!/usr/bin/env bash
# Run every verb on fixed inputs and list a SHA-256 per output file, so two commits can be
# compared: `scripts/snapshot_outputs.sh OUT` then `diff OUT_A/hashes.txt OUT_B/hashes.txt`.
# Timing/host fields (run.json timestamps, report dates) are dropped before hashing.
# Set PAPER=1 to include the paper preset (a few minutes; built without images).
# Every run works in one fixed folder (report image names and run.json record the dataset path),
# so snapshots are serialised with a lock and moved to OUT at the end.
set -euo pipefail
dest=$(realpath -m "${1:?usage: snapshot_outputs.sh OUT}")
exec 9>/tmp/maptab-snapshot.lock
flock 9
out=/tmp/maptab-snapshot-work
bin=${MAPTAB:-.venv/bin/maptab}
shared=${SHARED:-../shared/data}
rm -rf "$out" && mkdir -p "$out"
m() { "$bin" "$@" >>"$out/log.txt" 2>&1; }

m build --preset mini --seed 0 --out "$out/mini"
m build --from-reasonmap src/maptab/data/example/reasonmap --out "$out/rm-example"
m export "$out/mini" --format maptab --out "$out/mini-maptab"
m build --from-maptab "$out/mini-maptab" --out "$out/imported"
[ -d "$shared/reasonmap-stations" ] && m build --from-reasonmap "$shared/reasonmap-stations" --no-render --out "$out/rm-real"
for ds in mini rm-example imported; do
  for model in oracle shortest random; do
    m run "$out/$ds" --model "$model" --out "$out/runs-$ds/$model" --no-progress
    m score "$out/runs-$ds/$model" --no-progress
  done
  m report "$out/runs-$ds/random" "$out/runs-$ds/oracle" "$out/runs-$ds/shortest" --out "$out/report-$ds" --no-progress
done
if [ "${PAPER:-0}" = 1 ]; then
  m build --preset paper --seed 1 --no-render --out "$out/paper"
  for model in oracle random; do
    m run "$out/paper" --model "$model" --split test --out "$out/runs-paper/$model" --no-progress
    m score "$out/runs-paper/$model" --no-progress
  done
  m report "$out/runs-paper/random" "$out/runs-paper/oracle" --out "$out/report-paper" --no-progress
fi
"$bin" stats "$out/mini" --json >"$out/stats-mini.json" 2>>"$out/log.txt" || true
python3 - "$out" <<'PY'
"""Hash every output file; in text files drop volatile values (times, durations, versions)."""
import hashlib, pathlib, re, sys
root = pathlib.Path(sys.argv[1])
KEYS = r"\w+_at|latency_s|started|finished|created|elapsed\w*|duration\w*|seconds|wall\w*|host\w*|maptab_version|version|python|platform|generated\w*|time\w*"
lines = []
for f in sorted(p for p in root.rglob("*") if p.is_file() and p.name not in ("log.txt", "hashes.txt")):
    data = f.read_bytes()
    if f.suffix in (".json", ".html", ".md", ".csv", ".tex", ".txt"):
        t = data.decode("utf-8", "replace")
        t = re.sub(rf'"({KEYS})": *("[^"]*"|[0-9.eE+-]+)', r'"\1": X', t)
        t = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?( ?UTC|Z|[+-]\d\d:\d\d)?", "TIME", t)
        data = t.encode()
    lines.append(f"{hashlib.sha256(data).hexdigest()}  {f.relative_to(root)}")
(root / "hashes.txt").write_text("\n".join(lines) + "\n")
print(len(lines), "files hashed")
PY
rm -rf "$dest" && mv "$out" "$dest"
