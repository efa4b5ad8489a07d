#!/usr/bin/env python3
"""Grows a store that storlab wrote, with SQL, for bench/scale.sh: running
a 10^5-run campaign or a thousand campaigns takes hours on a shared
machine, copying their rows takes seconds.

  clone_store.py runs DB FACTOR
      The store's one campaign gets FACTOR times its runs: its runs copied
      FACTOR-1 times with every per-run row (figures, series, histograms,
      warnings, facts, ranks), each copy's rounds, repetitions and
      positions after the last ones, its values scaled by a factor near 1
      (1 + 0.001 × copy) so that copies are not ties.

  clone_store.py campaigns DB COUNT
      The store's one campaign (of schema 8) is copied until there are
      COUNT campaigns, each with its targets, workloads, dictionary, facts,
      pair stops and runs; copy K starts K minutes after the first and is
      tagged release=K+1 and track=nightly (the first release=1 unless it has a release),
      its values scaled by 1 + 0.001 × (K mod 7).
"""
import sqlite3
import sys
import uuid

PER_RUN = [  # table, run-id column, other columns (copied as they are)
    ("metric_values", ["key_id", "value"]),
    ("series_values", ["key_id", "interval_s", "values_f64"]),
    ("histogram_values", ["key_id", "count", "hdr_v2"]),
    ("run_warnings", ["text_id"]),
    ("run_fact_values", ["fact_id"]),
    ("run_ranks", ["rank", "host", "status", "error", "done_s"]),
    ("rank_metric_values", ["rank", "key_id", "value"]),
]
RUN_COLS = ["target_id", "workload_id", "repetition", "round", "position", "warmup",
            "status", "error", "started_at", "duration_s", "caches_dropped", "remounted", "ranks"]


def span(db, table):
    return db.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}").fetchone()[0]


def copy_runs(db, campaign, run_off, end, scale, key_off=0, text_off=0, fact_off=0,
              target_off=0, workload_off=0, new_campaign=None, shift=(0, 0)):
    """Copies campaign's runs with ids + run_off (and every reference + its
    offset) into new_campaign (the same when None)."""
    rounds, positions = shift
    new_campaign = campaign if new_campaign is None else new_campaign
    select = {
        "target_id": f"target_id + {target_off}",
        "workload_id": f"workload_id + {workload_off}",
        "repetition": f"repetition + {rounds}",
        "round": f"round + {rounds}",
        "position": f"position + {positions}",
    }
    db.execute(
        f"INSERT INTO runs (id, campaign_id, {', '.join(RUN_COLS)}) "
        f"SELECT id + {run_off}, {new_campaign}, {', '.join(select.get(c, c) for c in RUN_COLS)} "
        f"FROM runs WHERE campaign_id = {campaign} AND id <= {end}")
    refs = {"key_id": f"key_id + {key_off}", "text_id": f"text_id + {text_off}",
            "fact_id": f"fact_id + {fact_off}", "value": f"value * {scale!r}"}
    for table, rest in PER_RUN:
        db.execute(
            f"INSERT INTO {table} (run_id, {', '.join(rest)}) "
            f"SELECT v.run_id + {run_off}, {', '.join('v.' + refs.get(c, c) if c in refs else 'v.' + c for c in rest)} "
            f"FROM {table} v JOIN runs r ON r.id = v.run_id WHERE r.campaign_id = {campaign} AND r.id <= {end}")


def grow_runs(path, factor):
    db = sqlite3.connect(path)
    (campaign,) = db.execute("SELECT MIN(id) FROM campaigns").fetchone()
    end = span(db, "runs")
    n = db.execute("SELECT COUNT(*) FROM runs WHERE campaign_id = ?", (campaign,)).fetchone()[0]
    rounds, positions = db.execute(
        "SELECT MAX(round), MAX(position) + 1 FROM runs WHERE campaign_id = ?", (campaign,)).fetchone()
    for k in range(1, factor):
        copy_runs(db, campaign, k * end, end, 1 + 0.001 * k, shift=(k * rounds, k * positions))
    db.execute("UPDATE campaigns SET planned_runs = planned_runs * ? WHERE id = ?", (factor, campaign))
    db.execute("UPDATE pair_stops SET measured_runs = measured_runs * ? WHERE campaign_id = ?",
               (factor, campaign))
    db.commit()
    print(f"{path}: campaign {campaign} grew from {n} to {n * factor} runs")


def grow_campaigns(path, count):
    db = sqlite3.connect(path)
    (campaign,) = db.execute("SELECT MIN(id) FROM campaigns").fetchone()
    spans = {t: span(db, t) for t in
             ["campaigns", "targets", "workloads", "runs", "metric_keys", "warning_texts", "fact_texts"]}
    ccols = [r[1] for r in db.execute("PRAGMA table_info(campaigns)") if r[1] not in ("id", "uuid", "started_at")]
    for name, value in [("release", "1"), ("track", "nightly")]:
        db.execute("INSERT OR IGNORE INTO campaign_facts (campaign_id, kind, name, value) VALUES (?, 'tag', ?, ?)",
                   (campaign, name, value))
    for k in range(1, count):
        off = {t: k * s for t, s in spans.items()}
        new = campaign + off["campaigns"]
        db.execute(
            f"INSERT INTO campaigns (id, uuid, started_at, {', '.join(ccols)}) "
            f"SELECT ?, ?, strftime('%Y-%m-%dT%H:%M:%S', started_at, '+{k} minutes') || '.000+00:00', {', '.join(ccols)} "
            f"FROM campaigns WHERE id = ?", (new, str(uuid.uuid4()), campaign))
        for table, cols in [
            ("targets", "position, name, kind, baseline, params_json, facts_json"),
            ("workloads", "position, name, kind, primary_metric, params_json"),
            ("metric_keys", "name, labels, unit, direction"),
            ("warning_texts", "kind, message"),
            ("fact_texts", "name, value"),
        ]:
            db.execute(f"INSERT INTO {table} (id, campaign_id, {cols}) SELECT id + {off[table]}, ?, {cols} "
                       f"FROM {table} WHERE campaign_id = ?", (new, campaign))
        db.execute("INSERT INTO campaign_facts (campaign_id, kind, name, value) SELECT ?, kind, name, value "
                   "FROM campaign_facts WHERE campaign_id = ? AND NOT (kind = 'tag' AND name = 'release')",
                   (new, campaign))
        db.execute("INSERT OR REPLACE INTO campaign_facts (campaign_id, kind, name, value) VALUES (?, 'tag', 'release', ?)",
                   (new, str(k + 1)))
        db.execute("INSERT OR REPLACE INTO campaign_facts (campaign_id, kind, name, value) VALUES (?, 'tag', 'track', 'nightly')",
                   (new,))
        db.execute(
            f"INSERT INTO pair_stops (campaign_id, target_id, workload_id, reason, measured_runs, ci_pct) "
            f"SELECT ?, target_id + {off['targets']}, workload_id + {off['workloads']}, reason, measured_runs, ci_pct "
            f"FROM pair_stops WHERE campaign_id = ?", (new, campaign))
        copy_runs(db, campaign, off["runs"], spans["runs"], 1 + 0.001 * (k % 7),
                  key_off=off["metric_keys"], text_off=off["warning_texts"], fact_off=off["fact_texts"],
                  target_off=off["targets"], workload_off=off["workloads"], new_campaign=new)
    db.commit()
    print(f"{path}: {count} campaigns")


if __name__ == "__main__":
    mode, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    {"runs": grow_runs, "campaigns": grow_campaigns}[mode](path, n)
