#!/usr/bin/env bash
# What block tracing costs a campaign of many short runs: the wall time of
# one campaign of RUNS mock runs of DURATION each on a `dir` target on the
# disk holding this repository (a block device to trace), with
# `block_trace = true` against `false` (telemetry on in both), alternating
# ROUNDS times (the order flips every round). The mock workload does no
# I/O: what differs is the tracer's lifecycle — bpftrace compiling and
# attaching its programs (seconds), its dump at each of the sampler's
# marks, its stop — which a campaign pays once, a per-run tracer per run.
# Prints per round the campaign's seconds on and off, then the geometric
# mean of on/off and the mean of on−off with their 95% intervals (t), and
# the host's load average before and after. Needs root (bpftrace) and
# python3. Usage:
#   bash bench/block_trace_campaign.sh [ROUNDS] [RUNS] [DURATION]
# STORLAB=/path/to/storlab uses that binary instead of building one.
set -euo pipefail
rounds=${1:-5}
runs=${2:-20}
duration=${3:-200ms}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STORLAB:-}" ]; then
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/release/storlab"
fi
command -v python3 >/dev/null || { echo "python3 is not installed (apt-get install python3)" >&2; exit 1; }
work=$(mktemp -d "$here/target/storlab-bench-campaign-XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, kernel $(uname -r), $(bpftrace --version 2>/dev/null || echo 'no bpftrace'), $STORLAB"

for side in true false; do
  mkdir -p "$work/$side"
  printf '[plan]\nrepetitions = %s\ndrop_caches = false\ntelemetry = true\nblock_trace = %s\n' "$runs" "$side" > "$work/$side.toml"
  printf '[[target]]\nname = "d"\nkind = "dir"\npath = "%s"\n' "$work/$side" >> "$work/$side.toml"
  printf '[[workload]]\nname = "m"\nkind = "mock"\nduration = "%s"\n' "$duration" >> "$work/$side.toml"
done

: > "$work/results"
before=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$rounds"); do
  if (( r % 2 )); then order="true false"; else order="false true"; fi
  for side in $order; do
    t0=$(date +%s.%N)
    "$STORLAB" --db "$work/s.db" --quiet run "$work/$side.toml" >/dev/null 2>"$work/err" ||
      { cat "$work/err" >&2; exit 1; }
    t1=$(date +%s.%N)
    traced=$("$STORLAB" --db "$work/s.db" export --format json | python3 -c '
import json, sys
runs = json.load(sys.stdin)["runs"]
print(sum(str(r["facts"].get("block_trace", "")).startswith("bpftrace") for r in runs))')
    echo "$r $side $(python3 -c "print($t1 - $t0)") $traced" >> "$work/results"
  done
done
echo "## $runs runs of $duration per campaign ($(date -u +%TZ); load average before $before, after $(cut -d' ' -f1-3 /proc/loadavg))"
python3 - "$work/results" "$runs" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
runs = int(sys.argv[2])
on = {int(r[0]): float(r[2]) for r in rows if r[1] == "true"}
off = {int(r[0]): float(r[2]) for r in rows if r[1] == "false"}
traced = [int(r[3]) for r in rows if r[1] == "true"]
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
     9: 2.262, 10: 2.228, 14: 2.145, 19: 2.093}
def interval(xs):
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else float("nan")
    t = T.get(n - 1) or T[max(k for k in T if k <= n - 1)] if n > 1 else float("nan")
    return m, t * sd / math.sqrt(n)
print("round  on s   off s  on/off")
for k in sorted(on):
    print(f"{k:5d}  {on[k]:5.2f}  {off[k]:5.2f}  {on[k] / off[k]:6.3f}")
m, h = interval([math.log(on[k] / off[k]) for k in sorted(on)])
print(f"campaign wall time on/off: {math.exp(m):.3f} [{math.exp(m - h):.3f}, {math.exp(m + h):.3f}] (95%, {len(on)} rounds)")
m, h = interval([on[k] - off[k] for k in sorted(on)])
print(f"on - off: {m:.2f} s [{m - h:.2f}, {m + h:.2f}] per campaign, {m / runs:.3f} s per run")
print(f"runs traced per campaign with the switch on: {traced}")
PY
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
