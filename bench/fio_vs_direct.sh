#!/usr/bin/env bash
# One fio job file run by fio directly and through storlab's `fio` workload,
# alternating, on a private tmpfs; prints each round's bandwidth, both
# medians and storlab/fio (and the median of each round's ratio, which a
# machine whose load drifts disturbs less). fio's figure is its own: the
# jobs' bw_bytes summed.
# Needs root (mounts a tmpfs), fio and python3. Usage:
#   bash bench/fio_vs_direct.sh [JOBFILE] [ROUNDS]
# STORLAB=/path/to/storlab measures that binary instead of building this
# tree's (an older build, for a before/after).
# JOBFILE defaults to bench/jobs/randread-4k.fio; it must fit in 3 GiB and
# must not set `directory`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
job=$(realpath "${1:-$here/bench/jobs/randread-4k.fio}")
rounds=${2:-5}
command -v fio >/dev/null || { echo "fio is not installed: apt-get install fio" >&2; exit 1; }
if [ -n "${STORLAB:-}" ]; then
  storlab=$STORLAB
else
  cargo build --profile profiling --quiet --manifest-path "$here/Cargo.toml"
  storlab="${CARGO_TARGET_DIR:-$here/target}/profiling/storlab"
fi

work=$(mktemp -d /tmp/storlab-bench-XXXXXX)
mnt="$work/tmpfs"
mkdir -p "$mnt"
mount -t tmpfs -o size=3G storlab-bench "$mnt"
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$mnt/fio" "$mnt/storlab"

cat > "$work/exp.toml" <<TOML
name = "bench-fio-vs-direct"
[plan]
repetitions = 1
drop_caches = false
[[target]]
name = "tmpfs"
kind = "dir"
path = "$mnt/storlab"
[[workload]]
name = "job"
kind = "fio"
job = "$job"
TOML

# Both sides lay the job's files out anew for every run and delete them
# after it, so each layout takes the pages the other side's run freed: a
# side that kept reusing its own pages would keep one placement of the
# blocks, which alone moves tmpfs bandwidth by several percent.
run_fio() {
  (cd "$mnt/fio" && fio --directory="$mnt/fio" --output-format=json "$job") |
    python3 -c 'import json,sys
jobs = json.load(sys.stdin)["jobs"]
print(sum(j[d]["bw_bytes"] for j in jobs for d in ("read", "write", "trim")))'
  find "$mnt/fio" -mindepth 1 -delete
}
run_storlab() {
  "$storlab" --db "$work/s.db" --quiet run "$work/exp.toml" >/dev/null
  "$storlab" --db "$work/s.db" export --format json |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"][-1]
print(next(m["value"] for m in r["metrics"] if m["name"] == "bw_bytes_per_s" and not m["labels"]))'
}

fio_bw=()
storlab_bw=()
for i in $(seq "$rounds"); do
  # Which side goes first alternates, so that a drift within a round
  # favours neither.
  if [ $((i % 2)) -eq 1 ]; then
    f=$(run_fio); s=$(run_storlab)
  else
    s=$(run_storlab); f=$(run_fio)
  fi
  printf 'round %d: fio %.1f MiB/s, storlab %.1f MiB/s\n' "$i" \
    "$(python3 -c "print($f / 2**20)")" "$(python3 -c "print($s / 2**20)")"
  fio_bw+=("$f")
  storlab_bw+=("$s")
done
echo "load average at the end (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
python3 - "${fio_bw[*]}" "${storlab_bw[*]}" <<'PY'
import statistics, sys
fio = [float(x) for x in sys.argv[1].split()]
sl = [float(x) for x in sys.argv[2].split()]
mf, ms = statistics.median(fio), statistics.median(sl)
paired = statistics.median(s / f for f, s in zip(fio, sl))
print(f"median fio {mf / 2**20:.1f} MiB/s, storlab {ms / 2**20:.1f} MiB/s, storlab/fio = {ms / mf:.3f}"
      f" (median of the rounds' ratios {paired:.3f})")
PY
