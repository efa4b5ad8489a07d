#!/usr/bin/env bash
# storlab's psync engine against its ceiling: a bare C loop of pread at
# random aligned offsets (bench/pread_loop.c: no timing per operation, no
# histogram, the cheapest offset generator), on the same private tmpfs,
# one thread, 4 KiB by default. Each round runs the loop and storlab (and
# STORLAB_BEFORE, another storlab binary, when given) in an order that
# turns over every round, each on a file laid out anew (storlab lays out
# its own; the loop's is written before it runs and removed after), then
# prints each round and, by bench/ratios.py, storlab/loop (and
# before/loop, storlab/before) as geometric means of the rounds' ratios
# with 95% intervals, and the load average before and after. Each side
# is measured twice: operations per second (SIDE), and operations per
# second of the CPU time its reading thread used (SIDE-cpu: the loop's
# getrusage, storlab's cpu_ns_per_op), which a busy host moves much less
# than the first — waiting for a core costs no CPU time. On a quiet host
# the two agree; the first is the one asked.
#   bash bench/psync_vs_loop.sh [ROUNDS] [RUNTIME_S] [BS] [SIZE]
# (defaults 10 rounds, 10 s, 4k, 1G). STORLAB=/path/to/storlab uses that
# binary instead of building one. Needs root (mounts a tmpfs), cc, python3
# with scipy. Measure on an otherwise idle machine: both sides are bound by
# one CPU, and another process on it moves a round by more than the 5%
# this measures.
set -euo pipefail
rounds=${1:-10}
runtime=${2:-10}
bs=${3:-4k}
size=${4:-1G}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STORLAB:-}" ]; then
  cargo build --profile profiling --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/profiling/storlab"
fi
for tool in cc python3; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install gcc python3-scipy)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/storlab-bench-XXXXXX)
mnt="$work/tmpfs"
mkdir -p "$mnt"
mount -t tmpfs -o size=4G storlab-bench "$mnt"
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
trap "exit 130" INT TERM
cc -O2 -o "$work/pread_loop" "$here/bench/pread_loop.c"
bytes=$(numfmt --from=iec "${size^^}")
bs_bytes=$(numfmt --from=iec "${bs^^}")

cat >"$work/e.toml" <<TOML
name = "bench-psync"
[plan]
repetitions = 1
drop_caches = false
[[target]]
name = "t"
kind = "dir"
path = "$mnt/s"
[[workload]]
name = "w"
kind = "io"
rw = "randread"
bs = "$bs"
size = "$size"
ioengine = "psync"
runtime = "${runtime}s"
TOML
mkdir -p "$mnt/s"

# side NAME: operations per second of one run of that side, then its
# operations per CPU-second.
side() {
  case $1 in
    loop)
      head -c "$bytes" /dev/urandom >"$mnt/loop.dat"
      setsid -w "$work/pread_loop" "$mnt/loop.dat" "$runtime" "$bs_bytes" "$bytes" |
        awk '{ printf "%s %.0f\n", $1, 1e9 / $2 }'
      rm -f "$mnt/loop.dat" ;;
    *)
      local bin=$STORLAB
      [ "$1" = before ] && bin=$STORLAB_BEFORE
      # Its closing summary and warnings (a noisy host) go to a file,
      # shown if the run fails.
      setsid -w "$bin" --db "$work/$1.db" --quiet run "$work/e.toml" >/dev/null 2>"$work/$1.err" ||
        { cat "$work/$1.err" >&2; exit 1; }
      "$bin" --db "$work/$1.db" export --format json | python3 -c '
import json, sys
run = json.load(sys.stdin)["runs"][-1]
assert run["status"] == "ok", run.get("error")
get = lambda name: next(x["value"] for x in run["metrics"] if x["name"] == name and not x["labels"])
print(get("iops"), round(1e9 / get("cpu_ns_per_op")))' ;;
  esac
}

sides=(loop storlab)
[ -n "${STORLAB_BEFORE:-}" ] && sides+=(before)
echo "# $(date -u +%FT%TZ) $bs random pread, $size file, ${runtime}s runs, $rounds rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, kernel $(uname -r)"
results="$work/results.txt"
for r in $(seq "$rounds"); do
  # Turn the order over every round: loop storlab before, storlab before loop, ...
  k=$(( (r - 1) % ${#sides[@]} ))
  order=("${sides[@]:k}" "${sides[@]:0:k}")
  for s in "${order[@]}"; do
    v=$(side "$s")
    read -r ops cpu_ops <<<"$v"
    printf '%s %s %s\n%s %s-cpu %s\n' "$r" "$s" "$ops" "$r" "$s" "$cpu_ops" | tee -a "$results"
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
pairs=(storlab/loop storlab-cpu/loop-cpu)
[ -n "${STORLAB_BEFORE:-}" ] && pairs+=(before/loop storlab/before before-cpu/loop-cpu storlab-cpu/before-cpu)
python3 "$here/bench/ratios.py" "$results" "${pairs[@]}"
