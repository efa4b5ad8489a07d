#!/usr/bin/env bash
# The same capacity search repeated on a known system: a loop device whose
# reads a cgroup throttles to RATE per second (v2 io.max or v1 blkio), the
# search of tests/capacity.rs (random 4k direct reads through io_uring, 32
# in flight, 3 runs of 5 s per probe, p99 <= 200 ms, from 100/s). Runs it
# SEARCHES times, one campaign each in one store, then prints each
# search's capacity and interval, and how many of the later ones fall
# within the first's interval (#43: at least 3 of 4).
#   sudo bash bench/capacity_repeat.sh [SEARCHES] [RATE]
# (defaults 5, 200). STORLAB=/path/to/storlab uses that binary instead of
# building one. Needs root (a loop device, a cgroup), python3.
set -euo pipefail
searches=${1:-5}
rate=${2:-200}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STORLAB:-}" ]; then
  cargo build --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/debug/storlab"
fi
work=$(mktemp -d /tmp/capacity-repeat.XXXXXX)
export STORLAB_STATE_DIR="$work/state"
dev=""
cg=""
cleanup() {
  [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
  [ -n "$cg" ] && for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$cg" 2>/dev/null && break; sleep 0.2; done
  rm -rf "$work"
}
trap cleanup EXIT
truncate -s 64M "$work/disk.img"
dev=$(losetup --find --show "$work/disk.img")
mm=$(cat "/sys/block/$(basename "$dev")/dev")
if grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  echo +io > /sys/fs/cgroup/cgroup.subtree_control || true
  cg=/sys/fs/cgroup/storlab-bench-$$
  mkdir "$cg"
  echo "$mm riops=$rate" > "$cg/io.max"
elif [ -e /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]; then
  cg=/sys/fs/cgroup/blkio/storlab-bench-$$
  mkdir "$cg"
  echo "$mm $rate" > "$cg/blkio.throttle.read_iops_device"
else
  echo "no io or blkio cgroup controller on this host" >&2
  exit 1
fi
cat > "$work/throttled.toml" <<EOF
name = "throttled"
[plan]
repetitions = 3
telemetry = false
[[target]]
name = "thr"
kind = "block"
device = "$dev"
allow_destroy = true
[[workload]]
name = "reads"
kind = "io"
rw = "randread"
bs = "4k"
size = "48M"
direct = true
ioengine = "io_uring"
iodepth = 32
runtime = "5s"
capacity = { latency = "p99", max = "200ms", start = 100, max_rate = 1000 }
EOF
echo "load before: $(uptime)"
for i in $(seq "$searches"); do
  # The search joins the throttled cgroup before storlab starts.
  sh -c "echo \$\$ > $cg/cgroup.procs && exec \"$STORLAB\" --db \"$work/store.db\" run --quiet \"$work/throttled.toml\"" >/dev/null
  "$STORLAB" --db "$work/store.db" show --format json > "$work/search-$i.json"
done
echo "load after: $(uptime)"
python3 - "$work" "$searches" "$rate" <<'EOF'
import json, sys
work, n, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
found = []
for i in range(1, n + 1):
    k = json.load(open(f"{work}/search-{i}.json"))["capacities"][0]["targets"][0]["knee"]
    lo, hi = k["interval"]["low"], k["interval"]["high"]
    found.append((k["estimate"], lo, hi))
    print(f"search {i}: {k['estimate']:.0f}/s [{lo:.0f}, {hi:.0f}] ({k['estimate'] / rate - 1:+.1%} of the throttle's {rate:.0f}/s)")
_, lo, hi = found[0]
within = sum(lo <= f <= hi for f, _, _ in found[1:])
print(f"later searches within the first's interval: {within} of {n - 1}")
EOF
