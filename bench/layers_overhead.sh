#!/usr/bin/env bash
# What reading where the reads came from costs (#42): the same run on a
# Gluster target with `caches = true` (the default: Gluster's profiling
# started on the volume, the client's io-stats dumped and every layer's
# counters read before and after each run) and `caches = false` (none of
# it), alternating ROUNDS times (the order flips every round).
#
# The case where the cost shows most: 4 KiB random reads (psync, one job)
# of a 64 MiB file on a one-brick volume mounted with direct-io-mode=enable
# and io-cache/read-ahead off, so that every read goes through the FUSE
# client to the brick, whose profile counts it; the brick is on a private
# tmpfs, which serves it (no device time to hide the cost in, and no
# other process's cache drops or disk reads in the figures). Each side is a fresh
# campaign (the volume made and torn down), one measured run each.
#
# Prints per round the throughput of each side, then on/off as the
# geometric mean of the rounds' ratios with its 95% interval
# (bench/ratios.py), the layers the runs with caches on read (their
# sentence) and the host's load average before and after. REMOUNT
# `between-runs` mounts the client again before the run, after profiling
# started: the per-request cost alone, without the graph switch a client
# mounted before profiling started goes through (`never`, the default: a
# campaign's first run on a target as storlab makes it). Needs root,
# glusterd's packages and python3 with scipy. Usage:
#   bash bench/layers_overhead.sh [ROUNDS] [RUNTIME_S] [REMOUNT]
# STORLAB=/path/to/storlab uses that binary instead of building one.
set -euo pipefail
rounds=${1:-8}
runtime=${2:-10}
remount=${3:-never}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STORLAB:-}" ]; then
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/release/storlab"
fi
command -v python3 >/dev/null || { echo "python3 is not installed (apt-get install python3 python3-scipy)" >&2; exit 1; }

work=$(mktemp -d /tmp/storlab-bench-layers-XXXXXX)
export STORLAB_STATE_DIR="$work/state"
mkdir -p "$work/bricks" "$STORLAB_STATE_DIR"
mount -t tmpfs -o size=512M storlab-bench-bricks "$work/bricks"
cleanup() {
  # Only what this benchmark's own state directory recorded.
  "$STORLAB" --db "$work/s.db" cleanup >/dev/null 2>&1 || true
  umount "$work/bricks" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, kernel $(uname -r), $(glusterfs --version 2>/dev/null | head -n 1), remount $remount"

# experiment SIDE: the experiment file with caches = SIDE.
experiment() {
  cat <<EOF
name = "layers-overhead-$1"
[plan]
repetitions = 1
drop_caches = false
remount = "$remount"
[[target]]
name = "gl"
kind = "gluster"
bricks = 1
dir = "$work/bricks"
caches = $1
mount_options = ["direct-io-mode=enable"]
options = { "performance.io-cache" = "off", "performance.read-ahead" = "off" }
[[workload]]
name = "w"
kind = "io"
rw = "randread"
bs = "4k"
size = "64M"
runtime = "${runtime}s"
EOF
}

# run FILE: prints the run's bw_bytes_per_s and, to $work/said, its
# layers' sentence as `storlab show` says it.
run() {
  "$STORLAB" --db "$work/s.db" --quiet run "$1" >/dev/null 2>>"$work/log" ||
    { cat "$work/log" >&2; return 1; }
  "$STORLAB" --db "$work/s.db" show 2>/dev/null | grep -i -A2 "reads came from" >> "$work/said" || true
  "$STORLAB" --db "$work/s.db" export --format json | python3 -c '
import json, sys
run = json.load(sys.stdin)["runs"][-1]
print(next((x["value"] for x in run["metrics"] if x["name"] == "bw_bytes_per_s" and not x["labels"]), float("nan")),
      sum(1 for x in run["metrics"] if x["name"] == "layer_served_bytes"))'
}

experiment true > "$work/true.toml"
experiment false > "$work/false.toml"
: > "$work/results"
: > "$work/said"
before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "round  side  MiB/s  layer figures"
for r in $(seq 1 "$rounds"); do
  if (( r % 2 )); then order="true false"; else order="false true"; fi
  for side in $order; do
    # Its own statement, so that a failed run stops the benchmark (set -e).
    figures=$(run "$work/$side.toml")
    read -r bw layers <<<"$figures"
    label=$([ "$side" = true ] && echo on || echo off)
    echo "$r $label $bw" >> "$work/results"
    printf '%5d  %-4s  %6.1f  %s\n' "$r" "$label" "$(python3 -c "print($bw / 2**20)")" "$layers"
  done
done
echo "## $(date -u +%TZ); load average before $before, after $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/bench/ratios.py" "$work/results" on/off
echo "what the last run with caches on said:"
grep -v -i "reads came from" "$work/said" | grep -v '^--$' | tail -n 2
