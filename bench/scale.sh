#!/usr/bin/env bash
# How storlab's own cost grows with the size of a campaign, and how one
# storlab compares with another (main before a change, the branch after).
#
# The mock workload (no storage cost, no sleep) on two `dir` targets, N runs
# in one campaign, for each N of SCALE_RUNS (default 1000 10000 100000). For
# each N and each storlab: wall time and peak RSS (GNU time's maximum
# resident set size) of `run`, `show`, `report -o r.html` and
# `export -o runs.csv`, and the store's bytes per run. Each storlab works on
# a store it wrote itself.
#
# With STORLAB_BEFORE (another storlab binary, e.g. main's) every command is
# measured SCALE_REPS times (default 3) for both, interleaved (before,
# after, before, after, …: a load that drifts hits both alike), and the table
# gives the median of each and the ratio after/before with its 95% interval
# (paired by repetition, t interval of the log ratios: a ratio whose
# interval excludes 1 is a change, not noise). `run` is repeated
# SCALE_RUN_REPS times (default 1: a 10^5-run campaign takes minutes).
#
# Campaigns above SCALE_RUN_MAX runs (default: no limit) are not run: the
# largest campaign run is grown to N runs with SQL (bench/clone_store.py
# copies its runs with every per-run row), and only the read commands are
# measured on it: a 10^5-run campaign takes 30 minutes on a loaded 2-core
# machine, its copy seconds.
#
# Then, unless SCALE_HISTORY=0, a store of SCALE_CAMPAIGNS (default 1000)
# campaigns of 100 runs of one experiment, each tagged release=K and
# track=nightly: one campaign run by the after storlab, copied with SQL
# (bench/clone_store.py campaigns). `history`, `history -o h.html` and
# `compare --baseline-tag` on it, SCALE_REPS times for each side, each
# stopped after SCALE_TIMEOUT seconds (default 300).
#
# The machine's load (1-minute average, cores) is printed before each N:
# the host may be shared. Needs no root. Needs python3 for the summary.
#   bash bench/scale.sh
#   STORLAB_BEFORE=/path/to/main/storlab SCALE_HISTORY=0 bash bench/scale.sh
#   SCALE_RUNS="1000 10000" SCALE_REPS=5 STORLAB_BEFORE=… bash bench/scale.sh
# A before binary from a git ref, built outside this tree:
#   git archive main | tar -x -C /var/tmp/main-src &&
#   (cd /var/tmp/main-src && cargo build --profile profiling) &&
#   STORLAB_BEFORE=/var/tmp/main-src/target/profiling/storlab bash bench/scale.sh
#
# With SCALE_VARIANTS (e.g. "2 20 200 2000"), instead: for each V, one
# campaign of SCALE_VARIANT_RUNS runs (default 100000) of the mock workload
# swept over V values on two `dir` targets (2·V pairs, each
# SCALE_VARIANT_RUNS/(2·V) rounds): a campaign of SCALE_VARIANT_BASE runs
# (default 4000) is run (`run` is measured on it) and grown to the full
# count with SQL (bench/clone_store.py runs), then `show`, `report -o
# r.html` and `compare` (within the campaign, against its baseline) are
# measured on it, SCALE_REPS times each (interleaved with STORLAB_BEFORE's
# when given). Reading back should not grow with the number of variants:
#   SCALE_VARIANTS="2 20 200 2000" bash bench/scale.sh
#   SCALE_VARIANTS="2 2000" STORLAB_BEFORE=/var/tmp/main-src/target/profiling/storlab bash bench/scale.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${STORLAB:-}" ]; then
  cargo build --profile profiling --quiet --manifest-path "$here/Cargo.toml"
  STORLAB="${CARGO_TARGET_DIR:-$here/target}/profiling/storlab"
fi
reps=${SCALE_REPS:-3}
run_reps=${SCALE_RUN_REPS:-1}
sides="after"
if [ -n "${STORLAB_BEFORE:-}" ]; then
  sides="before after"
else
  reps=1
  run_reps=1
fi
work=$(mktemp -d /var/tmp/storlab-scale-XXXXXX)
trap 'rm -rf "$work"' EXIT
results="$work/results.tsv" # N, command, side, repetition, seconds, KiB
: >"$results"

binary() { if [ "$1" = before ]; then echo "$STORLAB_BEFORE"; else echo "$STORLAB"; fi; }

# N runs of the mock workload: on 2 targets up to 20,000 runs, beyond on
# N/10,000 targets (a pair takes at most 10,000 repetitions). Block tracing
# off: bpftrace's attach before every run (seconds, as root) would be the
# cost measured, not storlab's.
experiment() { # $1 = runs
  local targets=$(($1 > 20000 ? $1 / 10000 : 2))
  mock_experiment scale $(($1 / targets)) "$targets" ""
}

# mock_experiment NAME REPETITIONS TARGETS SWEEP: the mock workload on
# TARGETS `dir` targets, SWEEP (a TOML line, or empty) in its table.
mock_experiment() {
  cat <<TOML
name = "$1"
[plan]
repetitions = $2
drop_caches = false
block_trace = false
max_variants = 100000
TOML
  for i in $(seq 1 "$3"); do
    mkdir -p "$work/t$i"
    printf '[[target]]\nname = "t%s"\nkind = "dir"\npath = "%s"\n' "$i" "$work/t$i"
  done
  cat <<TOML
[[workload]]
name = "m"
kind = "mock"
noise = 0.05
factor = { t2 = 1.02 }
$4
TOML
}

# Runs "$@" under GNU time; prints "SECONDS KIB" (wall, peak RSS).
measure() {
  local log="$work/time.log"
  /usr/bin/time -f '%e %M' -o "$log" "$@" >/dev/null 2>"$work/stderr" || {
    echo "failed: $*" >&2
    tail -5 "$work/stderr" >&2
    exit 1
  }
  cat "$log"
}

# record N COMMAND SIDE REP -- ARGS…
record() {
  local n=$1 cmd=$2 side=$3 rep=$4
  shift 5
  local m
  m=$(measure "$@")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$cmd" "$side" "$rep" $m >>"$results"
}

load() { echo "$(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores"; }

# The mock workload swept over $1 values on two targets, $2 rounds.
variants_experiment() { # $1 = variants, $2 = repetitions
  mock_experiment scale-variants "$2" 2 "sweep = { value = [$(seq -s, 1000 $((1000 + $1 - 1)))] }"
}

for side in $sides; do echo "$side: $(binary "$side") ($("$(binary "$side")" --version))"; done
loads="$work/loads.tsv"
: >"$loads"
if [ -n "${SCALE_VARIANTS:-}" ]; then
  total=${SCALE_VARIANT_RUNS:-100000}
  base=${SCALE_VARIANT_BASE:-4000}
  for v in $SCALE_VARIANTS; do
    rounds=$((total / (2 * v)))
    factor=$((total / base))
    base_rounds=$((rounds / factor))
    if [ $((2 * v * base_rounds * factor)) -ne "$total" ]; then
      echo "$total runs over 2 targets × $v variants do not split into $factor copies of a $base-run campaign; choose SCALE_VARIANT_BASE" >&2
      exit 2
    fi
    key="$v variants"
    printf '%s\t%s\n' "$key" "$(load)" >>"$loads"
    variants_experiment "$v" "$base_rounds" >"$work/e.toml"
    for side in $sides; do
      db="$work/$side-v$v.db"
      rm -f "$db" "$db".*
      record "$key" "run ($base runs)" "$side" 1 -- "$(binary "$side")" --db "$db" --quiet run "$work/e.toml"
      python3 "$here/bench/clone_store.py" runs "$db" "$factor" >&2
    done
    for rep in $(seq 1 "$reps"); do
      for side in $sides; do
        bin=$(binary "$side")
        db="$work/$side-v$v.db"
        record "$key" show "$side" "$rep" -- "$bin" --db "$db" show
        record "$key" "report -o r.html" "$side" "$rep" -- "$bin" --db "$db" report -o "$work/r.html"
        record "$key" compare "$side" "$rep" -- "$bin" --db "$db" compare
        rm -f "$work/r.html"
      done
    done
    for side in $sides; do rm -f "$work/$side-v$v.db" "$work/$side-v$v.db".*; done
  done
fi
for n in ${SCALE_RUNS:-1000 10000 100000}; do
  [ -n "${SCALE_VARIANTS:-}" ] && break
  printf '%s\t%s\n' "$n" "$(load)" >>"$loads"
  experiment "$n" >"$work/e.toml"
  if [ "$n" -le "${SCALE_RUN_MAX:-$n}" ]; then
    for rep in $(seq 1 "$run_reps"); do
      for side in $sides; do
        db="$work/$side-$n.db"
        rm -f "$db" "$db".*
        record "$n" run "$side" "$rep" -- "$(binary "$side")" --db "$db" --quiet run "$work/e.toml"
        printf '%s\tstore bytes per run\t%s\t%s\t%s\t0\n' "$n" "$side" "$rep" "$(($(stat -c %s "$db") / n))" >>"$results"
        cp "$db" "$work/$side-largest.db"
        echo "$n" >"$work/largest-runs"
      done
    done
  else
    for side in $sides; do
      db="$work/$side-$n.db"
      cp "$work/$side-largest.db" "$db"
      python3 "$here/bench/clone_store.py" runs "$db" $((n / $(cat "$work/largest-runs"))) >&2
      printf '%s\tstore bytes per run (grown with SQL)\t%s\t1\t%s\t0\n' "$n" "$side" "$(($(stat -c %s "$db") / n))" >>"$results"
    done
  fi
  for rep in $(seq 1 "$reps"); do
    for side in $sides; do
      bin=$(binary "$side")
      db="$work/$side-$n.db"
      record "$n" show "$side" "$rep" -- "$bin" --db "$db" show
      record "$n" "report -o r.html" "$side" "$rep" -- "$bin" --db "$db" report -o "$work/r.html"
      record "$n" "export -o runs.csv" "$side" "$rep" -- "$bin" --db "$db" export -o "$work/runs.csv"
      rm -f "$work/r.html" "$work/runs.csv"
    done
  done
  for side in $sides; do rm -f "$work/$side-$n.db" "$work/$side-$n.db".*; done
done

python3 - "$results" "$loads" <<'PY'
import math, statistics, sys
from collections import defaultdict

rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
loads = dict(l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip())
# two-sided 95% t quantiles by degrees of freedom
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365,
     8: 2.306, 9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}
def t95(df):
    return T.get(df) or T[max(k for k in T if k <= df)]

data = defaultdict(lambda: defaultdict(dict))  # (n, cmd) -> side -> rep -> (s, kib)
order = []
for n, cmd, side, rep, s, kib in rows:
    key = (n, cmd)
    if key not in order:
        order.append(key)
    data[key][side][int(rep)] = (float(s), float(kib))

def fmt(cmd, v):
    s, kib = v
    if cmd.startswith("store bytes per run"):
        return f"{s:.0f} B"
    return f"{s:.2f} s, {kib / 1024:.0f} MB"

def ratio(cmd, d, which):
    reps = sorted(set(d["before"]) & set(d["after"]))
    logs = []
    for r in reps:
        a, b = d["after"][r][which], d["before"][r][which]
        if a <= 0 or b <= 0:
            return "—"
        logs.append(math.log(a / b))
    if not logs:
        return "—"
    m = statistics.fmean(logs)
    if len(logs) < 2:
        return f"×{math.exp(m):.3g} (n=1, no interval)"
    h = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return f"×{math.exp(m):.3g} [{math.exp(m - h):.3g}, {math.exp(m + h):.3g}]"

def median(d, side):
    vals = list(d[side].values())
    return (statistics.median(v[0] for v in vals), statistics.median(v[1] for v in vals))

both = any("before" in data[k] for k in order)
if both:
    print("| campaign | command | before (median) | after (median) | time after/before, 95% CI | peak RSS after/before, 95% CI | load before |")
    print("|---|---|---|---|---|---|---|")
else:
    print("| campaign | command | time, peak RSS | load before |")
    print("|---|---|---|---|")
for n, cmd in order:
    d = data[(n, cmd)]
    load = loads.get(n, "")
    if both:
        reps = len(d["after"])
        b, a = fmt(cmd, median(d, "before")), fmt(cmd, median(d, "after"))
        if cmd.startswith("store bytes per run"):
            print(f"| {n} | {cmd} | {b} | {a} | size {ratio(cmd, d, 0)} | | {load} |")
        else:
            print(f"| {n} | {cmd} (n={reps}) | {b} | {a} | {ratio(cmd, d, 0)} | {ratio(cmd, d, 1)} | {load} |")
    else:
        print(f"| {n} | {cmd} | {fmt(cmd, median(d, 'after'))} | {load} |")
PY

[ "${SCALE_HISTORY:-1}" = 0 ] || [ -n "${SCALE_VARIANTS:-}" ] && exit 0
campaigns=${SCALE_CAMPAIGNS:-1000}
timeout=${SCALE_TIMEOUT:-300}
db="$work/history.db"
experiment 100 >"$work/e.toml"
"$STORLAB" --db "$db" --quiet run --tag release=1 --tag track=nightly "$work/e.toml" >/dev/null 2>&1
python3 "$here/bench/clone_store.py" campaigns "$db" "$campaigns" >&2
echo
echo "history store: $campaigns campaigns of 100 runs, $(($(stat -c %s "$db") / 1024 / 1024)) MB (one run, $((campaigns - 1)) copied with SQL; load $(load))"
echo
# Median time and peak RSS of SCALE_REPS runs, or "stopped after T s".
timed() {
  local log="$work/time.log" out=()
  for rep in $(seq 1 "$reps"); do
    if ! timeout "$timeout" /usr/bin/time -f '%e %M' -o "$log" "$@" >/dev/null 2>&1; then
      echo "stopped after $timeout s"
      return
    fi
    out+=("$(cat "$log")")
  done
  printf '%s\n' "${out[@]}" | python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin if l.strip()]
s = statistics.median(float(r[0]) for r in rows)
kib = statistics.median(float(r[1]) for r in rows)
print(f"{s:.2f} s, {kib / 1024:.0f} MB (median of {len(rows)})")'
}
printf '| command |'; for side in $sides; do printf ' %s |' "$side"; done; echo
printf '|---|'; for side in $sides; do printf -- '---|'; done; echo
for args in "history" "history -o $work/h.html" "compare --baseline-tag release=1" "compare --baseline-tag track=nightly"; do
  printf '| %s |' "${args/$work\//}"
  for side in $sides; do
    # shellcheck disable=SC2086 # the words of $args are the arguments
    printf ' %s |' "$(timed "$(binary "$side")" --db "$db" $args)"
  done
  echo
done
echo "load after: $(load)"
