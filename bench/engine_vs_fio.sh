#!/usr/bin/env bash
# storlab's native engine against fio, on the same target and the same job,
# alternating fio and storlab ROUNDS times per pair; prints the medians and
# storlab/fio for throughput (IOPS or bandwidth) and for CPU per operation.
#   randread-psync  4 KiB random read, QD1, psync, 1 GiB file on a private tmpfs
#   randread-uring  4 KiB random read, QD32, io_uring, O_DIRECT, 1 GiB file on
#                   the root disk (a directory under /var/tmp, not tmpfs)
#   seqread-1m      1 MiB sequential read, psync, 1 GiB file on the tmpfs, and
#                   the memcpy bandwidth of this machine measured in the same
#                   round (bench/memcpy_bw.c: 1 MiB memcpy from a 1 GiB buffer)
# CPU per operation: storlab's (cpu_user_s + cpu_sys_s) / ops, i.e. cpu_ns_per_op
# (getrusage of the I/O thread);
# fio's (usr_cpu + sys_cpu) % × job_runtime / total_ios.
# Needs root (mounts a tmpfs), fio, python3 and cc. Usage:
#   bash bench/engine_vs_fio.sh [ROUNDS] [RUNTIME_S] [PAIRS...]
# STORLAB=/path/to/storlab uses that binary instead of building one; FRESH=1
# makes fio lay its file out anew before every round, as storlab always does.
set -euo pipefail
rounds=${1:-5}
runtime=${2:-10}
shift $(( $# > 2 ? 2 : $# ))
pairs=("${@:-randread-psync randread-uring seqread-1m}")
pairs=(${pairs[*]})
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STORLAB:-}" ]; then
  cargo build --profile profiling --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/profiling/storlab"
fi
for tool in fio python3 cc; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install fio python3 gcc)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/storlab-bench-XXXXXX)
disk=$(mktemp -d /var/tmp/storlab-bench-XXXXXX)
mnt="$work/tmpfs"
mkdir -p "$mnt"
mount -t tmpfs -o size=3G storlab-bench "$mnt"
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$work" "$disk"; }
trap cleanup EXIT
cc -O2 -o "$work/memcpy_bw" "$here/bench/memcpy_bw.c"
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, kernel $(uname -r), $(fio --version)"

# experiment FILE NAME DIR key=value...: a one-workload storlab experiment.
experiment() {
  local file=$1 name=$2 dir=$3; shift 3
  {
    printf 'name = "bench-%s"\n[plan]\nrepetitions = 1\ndrop_caches = false\n' "$name"
    printf '[[target]]\nname = "t"\nkind = "dir"\npath = "%s"\n' "$dir"
    printf '[[workload]]\nname = "%s"\nkind = "io"\nsize = "1G"\nruntime = "%ss"\n' "$name" "$runtime"
    for kv in "$@"; do printf '%s = %s\n' "${kv%%=*}" "${kv#*=}"; done
  } > "$file"
}

# storlab_run FILE METRIC: prints "throughput cpu_ns_per_op" of the run.
storlab_run() {
  "$STORLAB" --db "$work/s.db" --quiet run "$1" >/dev/null
  "$STORLAB" --db "$work/s.db" export --format json | python3 -c '
import json, sys
m = json.load(sys.stdin)["runs"][-1]["metrics"]
key = "iops" if sys.argv[1] == "iops" else "bw_bytes_per_s"
v = lambda k: m[k]["value"]
print(v(key), (v("cpu_user_s") + v("cpu_sys_s")) * 1e9 / v("ops"))' "$2"
}

# fio_run METRIC ARGS...: prints "throughput cpu_ns_per_op" of the job.
fio_run() {
  local metric=$1; shift
  fio --name=bench --size=1G --numjobs=1 --time_based --runtime="$runtime" \
      --output-format=json "$@" | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
r = j["read"]
cpu_s = (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] / 1000
value = r["iops"] if sys.argv[1] == "iops" else r["bw_bytes"]
print(value, cpu_s * 1e9 / max(r["total_ios"], 1))' "$metric"
}

# pair NAME METRIC STORLAB-EXPERIMENT FIO-ARGS...: alternates and summarises.
pair() {
  local name=$1 metric=$2 exp=$3; shift 3
  local f s m results="$work/$name.txt"
  : > "$results"
  for i in $(seq "$rounds"); do
    # FRESH=1: fio lays its file out anew each round, as storlab does by design.
    if [ "${FRESH:-0}" = 1 ]; then rm -f "$fio_dir"/bench.*; fi
    f=$(fio_run "$metric" "$@")
    s=$(storlab_run "$exp" "$metric")
    m=$([ "$name" = seqread-1m ] && "$work/memcpy_bw" "$runtime" || echo 0)
    echo "$f $s $m" >> "$results"
    printf '%s round %d: fio %s, storlab %s%s\n' "$name" "$i" "$f" "$s" \
      "$([ "$m" != 0 ] && echo ", memcpy $m bytes/s")"
  done
  python3 - "$name" "$metric" "$results" <<'PY'
import statistics, sys
name, metric, path = sys.argv[1:4]
rows = [[float(x) for x in l.split()] for l in open(path) if l.strip()]
med = [statistics.median(c) for c in zip(*rows)]
ft, fc, st, sc, mc = med
unit = "IOPS" if metric == "iops" else "MiB/s"
scale = 1 if metric == "iops" else 1 / 2**20
print(f"{name}: median fio {ft*scale:.0f} {unit} at {fc:.0f} CPU ns/op, "
      f"storlab {st*scale:.0f} {unit} at {sc:.0f} CPU ns/op; "
      f"storlab/fio throughput = {st/ft:.3f}, CPU per op = {sc/fc:.3f}")
if mc:
    print(f"{name}: memcpy {mc/2**20:.0f} MiB/s; fio at {ft/mc:.2f}, storlab at {st/mc:.2f} of memcpy")
PY
}

for p in "${pairs[@]}"; do
  case $p in
    randread-psync)
      mkdir -p "$mnt/s1" "$mnt/f1"
      experiment "$work/p1.toml" "$p" "$mnt/s1" rw='"randread"' bs='"4k"' ioengine='"psync"'
      fio_dir="$mnt/f1" pair "$p" iops "$work/p1.toml" --directory="$mnt/f1" --rw=randread --bs=4k --ioengine=psync
      rm -rf "$mnt/s1" "$mnt/f1" ;;
    randread-uring)
      mkdir -p "$disk/s2" "$disk/f2"
      experiment "$work/p2.toml" "$p" "$disk/s2" rw='"randread"' bs='"4k"' ioengine='"io_uring"' \
        iodepth=32 direct=true
      fio_dir="$disk/f2" pair "$p" iops "$work/p2.toml" --directory="$disk/f2" --rw=randread --bs=4k \
        --ioengine=io_uring --iodepth=32 --direct=1 --fixedbufs=1 --registerfiles=1
      rm -rf "$disk/s2" "$disk/f2" ;;
    seqread-1m)
      mkdir -p "$mnt/s3" "$mnt/f3"
      experiment "$work/p3.toml" "$p" "$mnt/s3" rw='"read"' bs='"1M"' ioengine='"psync"'
      fio_dir="$mnt/f3" pair "$p" bw "$work/p3.toml" --directory="$mnt/f3" --rw=read --bs=1M --ioengine=psync
      rm -rf "$mnt/s3" "$mnt/f3" ;;
    *) echo "unknown pair $p (randread-psync, randread-uring, seqread-1m)" >&2; exit 2 ;;
  esac
done
