#!/usr/bin/env bash
# matrix cells against fio running the same pattern, on a private tmpfs:
# a file (default 1 GiB) written then read sequentially, records of 4 KiB and 1 MiB,
# psync (pwrite/pread), one job; fio and storlab alternate ROUNDS times.
# As in iozone, the write starts from an empty file and allocates as it goes
# (fio: --fallocate=none; its default would preallocate, untimed). Prints
# each cell's median throughput for both and storlab/fio.
# Needs root (mounts a tmpfs), fio and python3. Usage:
#   bash bench/matrix_vs_fio.sh [ROUNDS] [FILE_SIZE]
set -euo pipefail
rounds=${1:-5}
fsize=${2:-1G}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --profile profiling --quiet --manifest-path "$here/Cargo.toml"
storlab="${CARGO_TARGET_DIR:-$here/target}/profiling/storlab"
command -v fio >/dev/null || { echo "fio is not installed: apt-get install fio" >&2; exit 1; }

work=$(mktemp -d /tmp/storlab-bench-XXXXXX)
mnt="$work/tmpfs"
mkdir -p "$mnt"
mount -t tmpfs -o size=3G storlab-bench "$mnt"
mkdir -p "$mnt/fio" "$mnt/storlab"
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

{
  printf 'name = "bench-matrix"\n[plan]\nrepetitions = 1\ndrop_caches = false\n'
  printf '[[target]]\nname = "tmpfs"\nkind = "dir"\npath = "%s"\n' "$mnt/storlab"
  for rec in 4k 1M; do
    printf '[[workload]]\nname = "m-%s"\nkind = "matrix"\ntests = ["write", "read"]\n' "$rec"
    printf 'min_file_size = "%s"\nmax_file_size = "%s"\n' "$fsize" "$fsize"
    printf 'min_record_size = "%s"\nmax_record_size = "%s"\n' "$rec" "$rec"
  done
} > "$work/exp.toml"

fio_bw() { # rw bs -> bytes/s
  fio --name=m --filename="$mnt/fio/f" --rw="$1" --bs="$2" --size="$fsize" --ioengine=psync \
      --numjobs=1 --fallocate=none --output-format=json |
    python3 -c "import json,sys; print(json.load(sys.stdin)['jobs'][0]['$1']['bw_bytes'])"
}

results="$work/results.txt"
for i in $(seq "$rounds"); do
  for rec in 4k 1M; do
    rm -f "$mnt/fio/f"
    echo "fio write $rec $(fio_bw write "$rec")" >> "$results"
    echo "fio read $rec $(fio_bw read "$rec")" >> "$results"
  done
  "$storlab" --db "$work/s.db" --quiet run "$work/exp.toml" >/dev/null
  "$storlab" --db "$work/s.db" export --format json | python3 -c '
import json, sys
fsize = sys.argv[1].lower()
for r in json.load(sys.stdin)["runs"]:
    rec = r["workload"][2:].lower()
    for t in ("write", "read"):
        print("storlab", t, r["workload"][2:], r["metrics"][f"{t}_{fsize}_{rec}_bw_bytes_per_s"]["value"])
' "$fsize" >> "$results"
  rm -f "$work/s.db"
  echo "round $i done" >&2
done

python3 - "$results" "$fsize" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(tool, t, rec):
    return statistics.median(float(v) for w, tt, r, v in rows if (w, tt, r) == (tool, t, rec))
print(f"file {sys.argv[2]}, tmpfs, psync, medians of {len(rows) // 8} rounds")
print(f"{'cell':<14}{'fio MiB/s':>12}{'storlab MiB/s':>15}{'storlab/fio':>13}")
for rec in ("4k", "1M"):
    for t in ("write", "read"):
        f, s = med("fio", t, rec), med("storlab", t, rec)
        print(f"{t + ' ' + rec:<14}{f / 2**20:>12.0f}{s / 2**20:>15.0f}{s / f:>13.3f}")
PY
