#!/usr/bin/env bash
# What telemetry and block tracing cost the io engine. Two comparisons,
# each the same run with a [plan] switch on and off, alternating ROUNDS
# times (the order flips every round):
#   tmpfs  telemetry = true / false (block_trace at its default, true):
#          4 KiB random reads, psync, one job, a 256 MiB file on a private
#          tmpfs, time-based — the engine is CPU-bound there, so that a
#          sampler that stole CPU would show most. A tmpfs has no block
#          device: tracing starts nothing (the run's block_trace fact is
#          absent), which this case confirms costs nothing either;
#   disk   block_trace = true / false (telemetry on in both): io_uring at
#          queue depth 32, direct 4 KiB random reads of a 256 MiB file on
#          the disk holding this repository — every request goes through
#          bpftrace's programs on the block tracepoints;
#   loop   the same on a loop device over an image on a private tmpfs
#          (storlab's `block` target, the device read whole): the highest
#          request rate this host has, all of it CPU.
# Prints per round the throughput on and off, then the geometric mean of
# on/off with its 95% interval (t on the log ratios), the sampler's own CPU
# (telemetry_cpu_pct, % of one core) and the host's load average before
# each case and after. The disk is the host's: other processes' I/O on it
# is noise the interval carries, so run it on a machine otherwise idle.
# Needs root (mounts a tmpfs; bpftrace) and python3. Usage:
#   bash bench/telemetry_overhead.sh [ROUNDS] [RUNTIME_S] [CASES]
# CASES: a space-separated subset of "tmpfs disk loop" (default all).
# STORLAB=/path/to/storlab uses that binary instead of building one.
set -euo pipefail
rounds=${1:-10}
runtime=${2:-10}
cases=${3:-tmpfs disk loop}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STORLAB:-}" ]; then
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/release/storlab"
fi
command -v python3 >/dev/null || { echo "python3 is not installed (apt-get install python3)" >&2; exit 1; }

work=$(mktemp -d /tmp/storlab-bench-XXXXXX)
# The disk case's file lives on the disk under this repository, not /tmp.
disk=$(mktemp -d "$here/target/storlab-bench-disk-XXXXXX")
mnt="$work/tmpfs"
mkdir -p "$mnt"
mount -t tmpfs -o size=1G storlab-bench "$mnt"
loopdev=""
cleanup() {
  if [ -n "$loopdev" ]; then losetup -d "$loopdev" 2>/dev/null || true; fi
  umount "$mnt" 2>/dev/null || true
  rm -rf "$work" "$disk"
}
trap cleanup EXIT
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, kernel $(uname -r), $(bpftrace --version 2>/dev/null || echo 'no bpftrace')"

# experiment CASE SIDE: the experiment file of one side of a comparison.
experiment() {
  local switch dir workload
  case $1 in
    tmpfs) switch="telemetry = $2" ;;
    *) switch="telemetry = true
block_trace = $2" ;;
  esac
  local uring="rw = \"randread\"\nbs = \"4k\"\nsize = \"256M\"\nioengine = \"io_uring\"\niodepth = 32\ndirect = true"
  case $1 in
    disk) dir=$disk workload=$uring ;;
    loop) dir=$loopdev workload=$uring ;;
    *)
      dir=$mnt
      workload="rw = \"randread\"\nbs = \"4k\"\nsize = \"256M\"" ;;
  esac
  printf 'name = "overhead-%s-%s"\n[plan]\nrepetitions = 1\ndrop_caches = false\n%s\n' "$1" "$2" "$switch"
  if [ -b "$dir" ]; then
    printf '[[target]]\nname = "t"\nkind = "block"\ndevice = "%s"\nallow_destroy = true\n' "$dir"
  else
    printf '[[target]]\nname = "t"\nkind = "dir"\npath = "%s"\n' "$dir"
  fi
  printf '[[workload]]\nname = "w"\nkind = "io"\n%b\nruntime = "%ss"\n' "$workload" "$runtime"
}

# run FILE: prints "bw_bytes_per_s telemetry_cpu_pct" of the run and
# whether its block requests were traced (1/0); its block_trace fact goes
# to $work/facts.
run() {
  "$STORLAB" --db "$work/s.db" --quiet run "$1" >/dev/null
  "$STORLAB" --db "$work/s.db" export --format json | python3 -c '
import json, sys
run = json.load(sys.stdin)["runs"][-1]
get = lambda name: next((x["value"] for x in run["metrics"] if x["name"] == name and not x["labels"]), float("nan"))
fact = str(run["facts"].get("block_trace", ""))
print(fact, file=open(sys.argv[1], "a"))
print(get("bw_bytes_per_s"), get("telemetry_cpu_pct"), int(fact.startswith("bpftrace")))' "$work/facts"
}

for c in $cases; do
  if [ "$c" = loop ] && [ -z "$loopdev" ]; then
    # The image on the tmpfs, read through the loop device whole (the
    # block target's region is the device).
    head -c 300M /dev/urandom > "$mnt/loop.img"
    loopdev=$(losetup --show -f "$mnt/loop.img")
  fi
  experiment "$c" true > "$work/$c-on.toml"
  experiment "$c" false > "$work/$c-off.toml"
  : > "$work/$c.results"
  before=$(cut -d' ' -f1-3 /proc/loadavg)
  for r in $(seq 1 "$rounds"); do
    if (( r % 2 )); then order="on off"; else order="off on"; fi
    for side in $order; do
      # Its own statement, so that a failed run stops the benchmark (set -e).
      figures=$(run "$work/$c-$side.toml")
      echo "$r $side $figures" >> "$work/$c.results"
    done
  done
  echo "## $c ($(date -u +%TZ); load average before $before, after $(cut -d' ' -f1-3 /proc/loadavg))"
  python3 - "$work/$c.results" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
on = {int(r[0]): float(r[2]) for r in rows if r[1] == "on"}
off = {int(r[0]): float(r[2]) for r in rows if r[1] == "off"}
sampler = [float(r[3]) for r in rows if r[1] == "on"]
traced = [int(r[4]) for r in rows if r[1] == "on"]
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
print(f"on/off: {math.exp(mean):.3f} [{math.exp(mean - half):.3f}, {math.exp(mean + half):.3f}] (95%, {n} rounds)")
print(f"sampler CPU: mean {sum(sampler) / len(sampler):.3f}% of a core, max {max(sampler):.3f}%")
print(f"block requests traced in {sum(traced)} of {len(traced)} runs with the switch on")
PY
  echo "last block_trace fact: $(tail -n 1 "$work/facts")"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
