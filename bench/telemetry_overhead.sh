#!/usr/bin/env bash
# What telemetry costs the io engine: the same run with `telemetry = true`
# and `telemetry = false` in [plan], alternating on/off ROUNDS times (the
# order flips every round), on a private tmpfs — the target where the
# engine is CPU-bound, so a sampler that stole CPU would show most. Prints
# per round the throughput with telemetry on and off, then the geometric
# mean of on/off with its 95% interval (t on the log ratios), and the
# sampler's own CPU (telemetry_cpu_pct, % of one core) over the runs.
#   randread-4k  4 KiB random reads, psync, one job, 256 MiB file, time-based
# Needs root (mounts a tmpfs) and python3. Usage:
#   bash bench/telemetry_overhead.sh [ROUNDS] [RUNTIME_S]
# STORLAB=/path/to/storlab uses that binary instead of building one.
set -euo pipefail
rounds=${1:-10}
runtime=${2:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STORLAB:-}" ]; then
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/release/storlab"
fi
command -v python3 >/dev/null || { echo "python3 is not installed (apt-get install python3)" >&2; exit 1; }

work=$(mktemp -d /tmp/storlab-bench-XXXXXX)
mnt="$work/tmpfs"
mkdir -p "$mnt"
mount -t tmpfs -o size=1G storlab-bench "$mnt"
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, kernel $(uname -r)"

experiment() {
  printf 'name = "telemetry-%s"\n[plan]\nrepetitions = 1\ndrop_caches = false\ntelemetry = %s\n' "$1" "$1"
  printf '[[target]]\nname = "t"\nkind = "dir"\npath = "%s"\n' "$mnt"
  printf '[[workload]]\nname = "randread-4k"\nkind = "io"\nrw = "randread"\nbs = "4k"\nsize = "256M"\nruntime = "%ss"\n' "$runtime"
}
experiment true > "$work/on.toml"
experiment false > "$work/off.toml"

# run ON|OFF: prints "bw_bytes_per_s telemetry_cpu_pct" of the run.
run() {
  "$STORLAB" --db "$work/s.db" --quiet run "$work/$1.toml" >/dev/null
  "$STORLAB" --db "$work/s.db" export --format json | python3 -c '
import json, sys
m = json.load(sys.stdin)["runs"][-1]["metrics"]
get = lambda name: next((x["value"] for x in m if x["name"] == name and not x["labels"]), float("nan"))
print(get("bw_bytes_per_s"), get("telemetry_cpu_pct"))'
}

: > "$work/results"
for r in $(seq 1 "$rounds"); do
  if (( r % 2 )); then order="on off"; else order="off on"; fi
  for side in $order; do
    # Its own statement, so that a failed run stops the benchmark (set -e).
    figures=$(run "$side")
    echo "$r $side $figures" >> "$work/results"
  done
done
python3 - "$work/results" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
on = {int(r[0]): float(r[2]) for r in rows if r[1] == "on"}
off = {int(r[0]): float(r[2]) for r in rows if r[1] == "off"}
cost = [float(r[3]) for r in rows if r[1] == "on"]
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
     9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
     19: 2.093, 24: 2.064, 29: 2.045}
print("round  on MiB/s  off MiB/s  on/off")
logs = []
for k in sorted(on):
    ratio = on[k] / off[k]
    logs.append(math.log(ratio))
    print(f"{k:5d}  {on[k] / 2**20:8.1f}  {off[k] / 2**20:9.1f}  {ratio:6.3f}")
n = len(logs)
mean = sum(logs) / n
sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (n - 1)) if n > 1 else float("nan")
t = T.get(n - 1) or T[max(k for k in T if k <= n - 1)]
half = t * sd / math.sqrt(n)
print(f"telemetry on/off: {math.exp(mean):.3f} [{math.exp(mean - half):.3f}, {math.exp(mean + half):.3f}] (95%, {n} rounds)")
print(f"sampler CPU: mean {sum(cost) / len(cost):.3f}% of a core, max {max(cost):.3f}%")
PY
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
