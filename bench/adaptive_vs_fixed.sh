#!/usr/bin/env bash
# How much run time an adaptive plan (until the 95% CI half-width is within
# 2% of the mean, 3 to 20 runs) needs against a fixed plan of 10 repetitions,
# on two targets (a tmpfs and a directory on the root disk), with the
# intervals each plan reached. Needs root (tmpfs, cache drops) and python3.
#   bash bench/adaptive_vs_fixed.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --profile profiling --quiet --manifest-path "$here/Cargo.toml"
storlab="${CARGO_TARGET_DIR:-$here/target}/profiling/storlab"
work=$(mktemp -d /var/tmp/storlab-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/disk"

experiment() { # $1 = repetitions value
  cat <<TOML
[plan]
repetitions = $1
drop_caches = true
[[target]]
name = "tmpfs"
kind = "tmpfs"
size = "512M"
[[target]]
name = "disk"
kind = "dir"
path = "$work/disk"
[[workload]]
name = "seqread-1m"
kind = "io"
rw = "read"
bs = "1M"
size = "256M"
TOML
}
experiment 10 > "$work/fixed.toml"
experiment '{ min = 3, max = 20, until_ci = "2%" }' > "$work/adaptive.toml"

for plan in fixed adaptive; do
  start=$(date +%s.%N)
  "$storlab" --db "$work/s.db" --quiet run "$work/$plan.toml" >/dev/null
  end=$(date +%s.%N)
  # Each plan's figures from its own campaign, named after its file.
  "$storlab" --db "$work/s.db" export --format json "$plan" | python3 -c '
import json, statistics, sys
from math import sqrt
plan, wall = sys.argv[1], float(sys.argv[2])
d = json.load(sys.stdin)
assert d["campaign"]["name"] == plan, (d["campaign"]["name"], plan)
# Student t 97.5% quantiles for small df; the report uses statrs for the same.
t = {1:12.706,2:4.303,3:3.182,4:2.776,5:2.571,6:2.447,7:2.365,8:2.306,9:2.262,10:2.228,11:2.201,12:2.179,13:2.160,14:2.145,15:2.131,16:2.120,17:2.110,18:2.101,19:2.093}
runs = [r for r in d["runs"] if r["status"] == "ok" and not r["warmup"]]
busy = sum(r["duration_s"] for r in d["runs"])
print(f"{plan:9s} wall {wall:6.1f} s, run time {busy:6.1f} s, {len(runs)} runs")
for target in ("tmpfs", "disk"):
    v = [r["metrics"]["bw_bytes_per_s"]["value"] for r in runs if r["target"] == target]
    m = statistics.mean(v); hw = t[len(v)-1] * statistics.stdev(v) / sqrt(len(v))
    stop = next((s["reason"] for s in d["stops"] if s["target"] == target), "?")
    print(f"  {target:6s} n={len(v):2d} mean {m/2**20:8.1f} MiB/s, 95% CI ±{100*hw/m:5.2f}% (stopped on {stop})")
' "$plan" "$(echo "$end - $start" | bc)"
done
