#!/usr/bin/env bash
# 4 KiB random read, psync, one job, a 1 GiB file on tmpfs, 10 s: fio against
# storlab, alternating five times; prints both medians and storlab/fio.
# Needs root (mounts a private tmpfs), fio and python3. Usage:
#   bash bench/randread_vs_fio.sh [ROUNDS] [RUNTIME_S]
set -euo pipefail
rounds=${1:-5}
runtime=${2:-10}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$here/Cargo.toml"
storlab="$here/target/release/storlab"
command -v fio >/dev/null || { echo "fio is not installed: apt-get install fio" >&2; exit 1; }

work=$(mktemp -d /tmp/storlab-bench-XXXXXX)
mnt="$work/tmpfs"
mkdir -p "$mnt/fio" "$mnt/storlab"
mount -t tmpfs -o size=3G storlab-bench "$mnt"
mkdir -p "$mnt/fio" "$mnt/storlab"
cleanup() { umount "$mnt" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

cat > "$work/exp.toml" <<TOML
name = "bench-randread"
[plan]
repetitions = 1
drop_caches = false
[[target]]
name = "tmpfs"
kind = "dir"
path = "$mnt/storlab"
[[workload]]
name = "randread-4k"
kind = "io"
rw = "randread"
bs = "4k"
size = "1G"
ioengine = "psync"
numjobs = 1
runtime = "${runtime}s"
TOML

fio_iops=()
storlab_iops=()
for i in $(seq "$rounds"); do
  f=$(fio --name=rr --directory="$mnt/fio" --rw=randread --bs=4k --size=1G --ioengine=psync \
        --numjobs=1 --time_based --runtime="$runtime" --output-format=json |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["read"]["iops"])')
  "$storlab" --db "$work/s.db" --quiet run "$work/exp.toml" >/dev/null
  s=$("$storlab" --db "$work/s.db" export --format json |
      python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"][-1]; print(r["metrics"]["iops"]["value"])')
  printf 'round %d: fio %.0f IOPS, storlab %.0f IOPS\n' "$i" "$f" "$s"
  fio_iops+=("$f")
  storlab_iops+=("$s")
done
python3 - "${fio_iops[*]}" "${storlab_iops[*]}" <<'PY'
import statistics, sys
fio = [float(x) for x in sys.argv[1].split()]
sl = [float(x) for x in sys.argv[2].split()]
mf, ms = statistics.median(fio), statistics.median(sl)
print(f"median fio {mf:.0f} IOPS, storlab {ms:.0f} IOPS, storlab/fio = {ms/mf:.3f}")
PY
