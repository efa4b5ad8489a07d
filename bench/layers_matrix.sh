#!/usr/bin/env bash
# Whether reading where the reads came from changes what a matrix measures
# on Gluster: one campaign, two one-brick volumes on a private tmpfs, one
# with `caches = true` (the default: profiling started, the layers read
# around each run and, the fast ones, between a cell's tests) and one with
# `caches = false` (nothing read), the iozone-like matrix (64k-1M files,
# 4k-1M records, every test) in balanced rounds. storlab's own comparison
# gives on against off with its interval; a ratio near 1 is the aim.
# Before the fix (the Gluster counters read between a cell's tests) the
# reads of `on` were 0.3x those of `off`. Needs root and glusterd.
# Usage: bash bench/layers_matrix.sh [REPETITIONS]
# STORLAB=/path/to/storlab uses that binary instead of building one.
set -euo pipefail
reps=${1:-4}
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STORLAB:-}" ]; then
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/release/storlab"
fi
work=$(mktemp -d /tmp/storlab-bench-lm-XXXXXX)
export STORLAB_STATE_DIR="$work/state"
mkdir -p "$work/bricks" "$STORLAB_STATE_DIR"
cleanup() {
  "$STORLAB" cleanup >/dev/null 2>&1 || true
  mountpoint -q "$work/bricks" && umount "$work/bricks"
  rm -rf "$work"
}
trap cleanup EXIT
mount -t tmpfs -o size=2G storlab-bench "$work/bricks"
cat > "$work/lm.toml" <<TOML
name = "layers-matrix"

[plan]
repetitions = $reps
order = "balanced"
warmup = 0

[[target]]
name = "off"
kind = "gluster"
bricks = 1
dir = "$work/bricks"
caches = false
baseline = true

[[target]]
name = "on"
kind = "gluster"
bricks = 1
dir = "$work/bricks"

[[workload]]
name = "m"
kind = "matrix"
min_file_size = "64k"
max_file_size = "1M"
min_record_size = "4k"
max_record_size = "1M"
TOML
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$STORLAB" --db "$work/lm.db" run "$work/lm.toml" --quiet >/dev/null
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
shown=$(COLUMNS=160 "$STORLAB" --db "$work/lm.db" show)
grep -E '^(m  |workload )' <<<"$shown"
grep -E '^(all tests|read |reread|randread|bkwdread|strideread|fread) ' <<<"$shown"
