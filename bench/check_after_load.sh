#!/usr/bin/env bash
# A real `check` right after a loaded minute, then the campaign it
# estimated (#45 item 6). LOOPS busy loops (default two) keep the cores busy for SECS
# seconds (default 60) and are stopped; `check` of EXAMPLE (default seed
# 003's) from an empty store runs at once, then `run` of it. Prints the
# host's load and pressure before, after the loaded minute and after the
# campaign, check's estimate (the one figure, or the range's quiet and
# busy ends) and what the campaign took, start to end, with the ratio of
# each figure. The end a campaign is held to (docs/experiment.md): the
# quiet end if nothing else ran during it, the busy end if the host stayed
# busy; the load during the run is printed to tell which.
#   sudo bash bench/check_after_load.sh [EXAMPLE] [SECS]
# STORLAB=/path/to/storlab uses that binary instead of building a release
# one; KEEP=1 keeps the store and the outputs. Needs root for the seed
# examples' targets (Gluster), sqlite3, python3.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
example=${1:-$here/examples/003-iozone-gluster-vs-nfs.toml}
secs=${2:-60}
# LOOPS busy loops (default 2, one per core here; 4 on 2 cores makes
# tasks wait for a CPU: the pressure `check` reads).
loops=${LOOPS:-2}
[ "$loops" -ge 1 ] || { echo "LOOPS must be 1 or more" >&2; exit 2; }
[ "$secs" -ge 1 ] || { echo "SECS must be 1 or more (timeout 0 would never stop the loops)" >&2; exit 2; }
if [ -z "${STORLAB:-}" ]; then
  cargo build --release --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/release/storlab"
fi
work=$(mktemp -d /tmp/check-after-load.XXXXXX)
export STORLAB_STATE_DIR="$work/state"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "${KEEP:-}" ]; then echo "kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
host() {
  echo "$1: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min); PSI cpu $(sed -n 's/^some //p' /proc/pressure/cpu); io $(sed -n 's/^some //p' /proc/pressure/io)"
}
secs_of() { # 1m05s, 2h03m, 12.3 s, 850 ms -> seconds
  python3 -c '
import re, sys
t = sys.argv[1].strip()
if t.endswith(" ms"): print(float(t[:-3]) / 1000); sys.exit()
if t.endswith(" s"): print(float(t[:-2])); sys.exit()
units = {"d": 86400, "h": 3600, "m": 60, "s": 1}
print(sum(float(n) * units[u] for n, u in re.findall(r"([0-9.]+)([dhms])", t)))' "$1"
}
host "before"
for _ in $(seq "$loops"); do
  timeout "$secs" sh -c 'while :; do :; done' &
  pids+=($!)
done
wait "${pids[@]}" || true
pids=()
host "after ${secs} s of $loops busy loops, stopped"
"$STORLAB" --db "$work/s.db" check "$example" > "$work/check.txt" 2>&1 || true
grep -E ' runs, estimated |^host: ' "$work/check.txt"
figure=$(grep ' runs, estimated ' "$work/check.txt" | sed 's/.* runs, estimated //; s/ (.*//')
(while :; do cut -d' ' -f1 /proc/loadavg >> "$work/loads"; sleep 10; done) &
pids+=($!)
"$STORLAB" --db "$work/s.db" run --quiet "$example" > "$work/run.txt" 2>&1 || {
  cat "$work/run.txt"
  exit 1
}
kill "${pids[@]}" 2>/dev/null || true
pids=()
host "after the campaign"
echo "load during the campaign (1-min average every 10 s): $(sort -n "$work/loads" | awk '{v[NR]=$1; s+=$1} END {printf "%.1f to %.1f, mean %.1f", v[1], v[NR], s/NR}')"
took=$(sqlite3 "$work/s.db" "SELECT (julianday(finished_at) - julianday(started_at)) * 86400 FROM campaigns ORDER BY id DESC LIMIT 1")
printf 'the campaign took %.1f s; its runs:\n' "$took"
sqlite3 -separator ' ' "$work/s.db" "SELECT '  ' || t.name, printf('%.1f s', r.duration_s) FROM runs r JOIN targets t ON t.id = r.target_id WHERE r.campaign_id = (SELECT max(id) FROM campaigns) ORDER BY r.position"
if [[ $figure == *" quiet, up to "* ]]; then
  quiet=$(secs_of "${figure%% quiet, up to *}")
  busy=${figure#* quiet, up to }
  busy=$(secs_of "${busy% at this load}")
  python3 -c "import sys; q, b, t = map(float, sys.argv[1:]); print(f'quiet end {q:.1f} s: x{q / t:.2f} of the campaign; busy end {b:.1f} s: x{b / t:.2f}')" "$quiet" "$busy" "$took"
else
  one=$(secs_of "$figure")
  python3 -c "import sys; e, t = map(float, sys.argv[1:]); print(f'one figure {e:.1f} s: x{e / t:.2f} of the campaign')" "$one" "$took"
fi
