#!/usr/bin/env bash
# The same pgbench settings by hand (initdb, postgresql.conf, pg_ctl start,
# pgbench -i, pgbench, pg_ctl stop — what the seed studies type) and through
# storlab (a `pgbench` workload on a `dir` target), alternating ROUNDS times
# on the same directory (ABBA order); prints each round, both medians,
# their ratio storlab/hand and the median of the per-round ratios.
# Both start from a fresh cluster every round and restart the server
# between `pgbench -i` and the measured run. Needs root (the server runs
# as `postgres`), PostgreSQL and python3. Usage:
#   bash bench/pgbench_vs_direct.sh [ROUNDS] [SECONDS] [SCALE] [CLIENTS] [RATE]
# RATE (transactions/s, default 300) runs both sides open-loop (pgbench -R)
# below what the machine sustains: each side's tps is then the schedule's
# (a Poisson count, ±1% at 300 tx/s for 20 s) rather than the shared
# machine's momentary speed, so the comparison is quiet enough to see a 1%
# difference in what storlab runs; their mean latencies are compared too.
# RATE=0 runs closed-loop, as fast as the machine goes (each side then
# varies by 10-15% from run to run on a busy 2-core machine).
# STORLAB=/path/to/storlab skips the build (profiling profile: release code with debug info).
set -euo pipefail
rounds=${1:-8}
secs=${2:-20}
scale=${3:-2}
clients=${4:-2}
rate=${5:-300}
threads=$(( clients < 2 ? clients : 2 ))
rate_args=()
rate_toml=""
if [ "$rate" != 0 ]; then rate_args=(-R "$rate"); rate_toml="rate = $rate"; fi
mode=prepared
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STORLAB:-}" ]; then
  cargo build --profile profiling --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/profiling/storlab"
fi
bindir=$(pg_config --bindir 2>/dev/null || ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
[ -x "$bindir/pgbench" ] || { echo "pgbench not found: apt-get install postgresql" >&2; exit 1; }
id postgres >/dev/null || { echo "no postgres user: apt-get install postgresql" >&2; exit 1; }

work=$(mktemp -d /var/tmp/storlab-pgbench-bench-XXXXXX)
chmod 755 "$work"
mkdir -p "$work/hand" "$work/storlab"
chown postgres: "$work/hand"
pg() { runuser -u postgres -- "$bindir/$1" "${@:2}"; }
cleanup() {
  [ -f "$work/hand/data/postmaster.pid" ] && pg pg_ctl -D "$work/hand/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# The settings both sides use (the ZFS-vs-ext4 seed's style, scaled down).
settings=(
  "shared_buffers = '128MB'"
  "fsync = 'on'"
  "synchronous_commit = 'off'"
  "full_page_writes = 'off'"
  "wal_level = 'minimal'"
  "max_wal_senders = '0'"
  "checkpoint_timeout = '30min'"
  "max_wal_size = '1GB'"
  "autovacuum = 'off'"
)
toml_settings=$(printf '%s, ' "${settings[@]}" | sed "s/'/\"/g; s/, $//")

cat > "$work/exp.toml" <<TOML
name = "bench-pgbench"
[plan]
repetitions = 1
drop_caches = false
[[target]]
name = "dir"
kind = "dir"
path = "$work/storlab"
[[workload]]
name = "pgbench"
kind = "pgbench"
scale = $scale
clients = $clients
threads = $threads
duration = "${secs}s"
mode = "$mode"
progress = "0s"
per_statement = false
$rate_toml
settings = { $toml_settings }
TOML

by_hand() {
  local d="$work/hand/data"
  rm -rf "$d"
  pg initdb -D "$d" -U postgres -A trust -E UTF8 --no-sync >/dev/null
  { printf '%s\n' "${settings[@]}"
    echo "listen_addresses = ''"
    echo "port = 5432"
    echo "unix_socket_directories = '$work/hand'"; } >> "$d/postgresql.conf"
  pg pg_ctl -D "$d" -l "$work/hand/log" -w start >/dev/null
  "$bindir/pgbench" -h "$work/hand" -U postgres -i -s "$scale" postgres >/dev/null 2>&1
  # Restart between init and run, as storlab does (caches drop with the server stopped).
  pg pg_ctl -D "$d" -m fast -w stop >/dev/null
  pg pg_ctl -D "$d" -l "$work/hand/log" -w start >/dev/null
  # tps and mean latency (ms), on one line.
  "$bindir/pgbench" -h "$work/hand" -U postgres -c "$clients" -j "$threads" -T "$secs" -M "$mode" \
    "${rate_args[@]}" postgres 2>/dev/null |
    awk '/^latency average = /{lat=$4} /^tps = /{tps=$3} END{print tps, lat}'
  pg pg_ctl -D "$d" -m fast -w stop >/dev/null
}

through_storlab() {
  "$STORLAB" --db "$work/s.db" --quiet run "$work/exp.toml" >/dev/null
  "$STORLAB" --db "$work/s.db" export --format json |
    python3 -c 'import json,sys
r = json.load(sys.stdin)["runs"][-1]
v = {m["name"]: m["value"] for m in r["metrics"] if not m["labels"]}
print(v["tps"], v["lat_mean_ns"] / 1e6)'
}

hand_tps=()
storlab_tps=()
hand_lat=()
storlab_lat=()
for i in $(seq "$rounds"); do
  # ABBA: odd rounds by hand first, even rounds storlab first, so drift on a
  # busy machine does not favour one side.
  if [ $((i % 2)) -eq 1 ]; then h=$(by_hand); s=$(through_storlab)
  else s=$(through_storlab); h=$(by_hand); fi
  read -r ht hl <<<"$h"
  read -r st sl <<<"$s"
  printf 'round %d: by hand %.1f tps %.3f ms, storlab %.1f tps %.3f ms\n' "$i" "$ht" "$hl" "$st" "$sl"
  hand_tps+=("$ht"); hand_lat+=("$hl")
  storlab_tps+=("$st"); storlab_lat+=("$sl")
done
echo "uptime: $(uptime)"
python3 - "${hand_tps[*]}" "${storlab_tps[*]}" "${hand_lat[*]}" "${storlab_lat[*]}" <<'PY'
import statistics, sys
hand = [float(x) for x in sys.argv[1].split()]
sl = [float(x) for x in sys.argv[2].split()]
hand_lat = [float(x) for x in sys.argv[3].split()]
sl_lat = [float(x) for x in sys.argv[4].split()]
mh, ms = statistics.median(hand), statistics.median(sl)
paired = statistics.median(s / h for h, s in zip(hand, sl))
print(f"median by hand {mh:.1f} tps, storlab {ms:.1f} tps, storlab/hand = {ms/mh:.3f}")
print(f"median of the per-round ratios storlab/hand = {paired:.3f}")
# How sure: the geometric mean of the per-round ratios with a 95% t interval
# (t quantiles from a table, no SciPy needed), and each side's run-to-run CV.
# Closed-loop on a 2-core machine each side alone varies by 10-15%, so the
# interval is wide unless ROUNDS is large; rate-limited, tps varies as the
# schedule's Poisson count does.
import math
n = len(hand)
if n >= 2:
    t = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365,
         8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160,
         14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
         20: 2.086, 25: 2.060, 30: 2.042}
    q = t.get(n - 1, t[max(k for k in t if k <= n - 1)])
    cv = lambda v: 100 * statistics.stdev(v) / statistics.mean(v)
    def ratio(what, a, b):
        logs = [math.log(y / x) for x, y in zip(a, b)]
        m, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(n)
        print(f"{what}: geometric mean ratio storlab/hand {math.exp(m):.3f}, 95% CI "
              f"[{math.exp(m - q * se):.3f}, {math.exp(m + q * se):.3f}] (±{100 * (math.exp(q * se) - 1):.1f}%); "
              f"run-to-run CV by hand {cv(a):.1f}%, storlab {cv(b):.1f}%")
    ratio("tps", hand, sl)
    ratio("mean latency", hand_lat, sl_lat)
PY
