//! What the PostgreSQL server wrote during a measured run, from its
//! statistics views read just before and just after it: WAL bytes (the
//! advance of the WAL insert position), WAL records, full-page images and
//! syncs (`pg_stat_wal`), checkpoints and the data pages written by the
//! checkpointer, the background writer and the backends themselves
//! (`pg_stat_bgwriter`, `pg_stat_checkpointer`, `pg_stat_io`), data-file
//! fsyncs (`pg_stat_io`) and temporary-file bytes (`pg_stat_database`).
//!
//! The views moved between releases; [`snapshot_sql`] asks each major
//! version for the views it has, and [`Snapshot::from_json`] takes each
//! counter from wherever that version keeps it, so a counter a version
//! does not have is absent, never zero. Pure: the SQL and its answer only;
//! running psql is the workload's.

use anyhow::{Context, Result};
use serde_json::Value;

use crate::measure::Metric;
use crate::metric::catalogue as m;
use crate::metric::labels::LAYER;
use crate::metric::layer::Layer;
use crate::metric::{Labels, MetricDef};

/// One query printing one JSON object: the counters `version_num` (as
/// `server_version_num`, e.g. 150018) has.
pub fn snapshot_sql(version_num: u32) -> String {
    let major = version_num / 10_000;
    let mut parts = vec![
        "'wal_lsn', pg_current_wal_insert_lsn()::text".to_string(),
        "'block_size', current_setting('block_size')::bigint".to_string(),
        "'temp_bytes', (SELECT coalesce(sum(temp_bytes), 0) FROM pg_stat_database)".to_string(),
        "'blks_hit', (SELECT coalesce(sum(blks_hit), 0) FROM pg_stat_database)".to_string(),
        "'blks_read', (SELECT coalesce(sum(blks_read), 0) FROM pg_stat_database)".to_string(),
        "'clients', (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())".to_string(),
        "'bgwriter', (SELECT row_to_json(b) FROM pg_stat_bgwriter b)".to_string(),
    ];
    if major >= 14 {
        parts.push("'wal', (SELECT row_to_json(w) FROM pg_stat_wal w)".into());
    }
    if major >= 16 {
        // Relation I/O only (PostgreSQL 18 adds WAL rows to pg_stat_io).
        let wal_fsyncs = if major >= 18 {
            ", 'wal_fsyncs', coalesce(sum(fsyncs) FILTER (WHERE object = 'wal'), 0)"
        } else {
            ""
        };
        parts.push(format!(
            "'io', (SELECT json_build_object(\
             'fsyncs', coalesce(sum(fsyncs) FILTER (WHERE object = 'relation'), 0), \
             'backend_writes', coalesce(sum(writes) FILTER (WHERE object = 'relation' AND backend_type = 'client backend'), 0){wal_fsyncs}) \
             FROM pg_stat_io)"
        ));
    }
    if major >= 17 {
        parts.push("'checkpointer', (SELECT row_to_json(c) FROM pg_stat_checkpointer c)".into());
    }
    format!("SELECT json_build_object({})", parts.join(", "))
}

/// A counter of the server and where each release keeps it, first found wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Counter {
    WalRecords,
    WalFpi,
    WalSyncs,
    DataFsyncs,
    CheckpointsTimed,
    CheckpointsRequested,
    /// Buffers (of `block_size` bytes) written by…
    CheckpointBuffers,
    CleanBuffers,
    BackendBuffers,
    TempBytes,
    /// Blocks found in shared buffers, and read from the OS (every
    /// database's, pg_stat_database).
    BlocksHit,
    BlocksRead,
}

const SOURCES: &[(Counter, &[(&str, &str)])] = &[
    (Counter::WalRecords, &[("wal", "wal_records")]),
    (Counter::WalFpi, &[("wal", "wal_fpi")]),
    (
        Counter::WalSyncs,
        &[("wal", "wal_sync"), ("io", "wal_fsyncs")],
    ),
    (Counter::DataFsyncs, &[("io", "fsyncs")]),
    (
        Counter::CheckpointsTimed,
        &[
            ("bgwriter", "checkpoints_timed"),
            ("checkpointer", "num_timed"),
        ],
    ),
    (
        Counter::CheckpointsRequested,
        &[
            ("bgwriter", "checkpoints_req"),
            ("checkpointer", "num_requested"),
        ],
    ),
    (
        Counter::CheckpointBuffers,
        &[
            ("bgwriter", "buffers_checkpoint"),
            ("checkpointer", "buffers_written"),
        ],
    ),
    (Counter::CleanBuffers, &[("bgwriter", "buffers_clean")]),
    (
        Counter::BackendBuffers,
        &[("bgwriter", "buffers_backend"), ("io", "backend_writes")],
    ),
    (Counter::TempBytes, &[("", "temp_bytes")]),
    (Counter::BlocksHit, &[("", "blks_hit")]),
    (Counter::BlocksRead, &[("", "blks_read")]),
];

/// The server's counters at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    wal_lsn: u64,
    block_size: f64,
    /// Client connections other than the one that read this.
    pub clients: u64,
    counters: Vec<(Counter, f64)>,
}

impl Snapshot {
    /// Reads what [`snapshot_sql`]'s query printed.
    pub fn from_json(text: &str) -> Result<Snapshot> {
        let v: Value = serde_json::from_str(text.trim())
            .with_context(|| format!("the server's counters are not JSON: `{}`", text.trim()))?;
        let lsn = v["wal_lsn"]
            .as_str()
            .context("the counters have no wal_lsn")?;
        let mut counters = Vec::new();
        for (counter, places) in SOURCES {
            let found = places.iter().find_map(|(view, field)| {
                let x = if view.is_empty() {
                    &v[field]
                } else {
                    &v[view][field]
                };
                x.as_f64()
            });
            if let Some(x) = found {
                counters.push((*counter, x));
            }
        }
        Ok(Snapshot {
            wal_lsn: parse_lsn(lsn)?,
            block_size: v["block_size"].as_f64().unwrap_or(8192.0),
            clients: v["clients"].as_u64().unwrap_or(0),
            counters,
        })
    }

    fn get(&self, c: Counter) -> Option<f64> {
        self.counters.iter().find(|(k, _)| *k == c).map(|(_, v)| *v)
    }
}

/// `16/B374D848` → its byte position.
pub fn parse_lsn(text: &str) -> Result<u64> {
    let (hi, lo) = text
        .split_once('/')
        .with_context(|| format!("`{text}` is not a WAL position (X/Y)"))?;
    let part = |p: &str| {
        u64::from_str_radix(p, 16).with_context(|| format!("`{text}` is not a WAL position"))
    };
    Ok((part(hi)? << 32) | part(lo)?)
}

/// The run's figures from the counters before and after it, with
/// `transactions` the run committed; and warnings for counters that went
/// backwards (statistics reset in between), which are left out.
pub fn metrics(
    before: &Snapshot,
    after: &Snapshot,
    transactions: u64,
) -> (Vec<Metric>, Vec<String>) {
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let tx = transactions as f64;
    let per_tx = |v: f64| (transactions > 0).then(|| v / tx);
    match after.wal_lsn.checked_sub(before.wal_lsn) {
        Some(bytes) => {
            out.push(m::WAL_BYTES.value(bytes as f64));
            if let Some(v) = per_tx(bytes as f64) {
                out.push(m::WAL_BYTES_PER_TX.value(v));
            }
        }
        None => {
            warnings.push("the WAL position went backwards during the run: no WAL figures".into())
        }
    }
    let mut data_bytes = None;
    for (counter, def) in DEFS {
        let (Some(b), Some(a)) = (before.get(*counter), after.get(*counter)) else {
            continue;
        };
        if a < b {
            warnings.push(format!(
                "the server's statistics were reset during the run: {} left out",
                def.name
            ));
            continue;
        }
        let mut delta = a - b;
        if matches!(
            counter,
            Counter::CheckpointBuffers | Counter::CleanBuffers | Counter::BackendBuffers
        ) {
            delta *= after.block_size;
            *data_bytes.get_or_insert(0.0) += delta;
        }
        out.push(def.value(delta));
    }
    if let Some(v) = data_bytes.and_then(per_tx) {
        out.push(m::DATA_BYTES_PER_TX.value(v));
    }
    out.extend(shared_buffers(before, after));
    (out, warnings)
}

/// Where the database's reads came from, as the server counts them: the
/// blocks its backends asked of shared buffers (hits and reads) are what
/// the workload read; the hits are what shared buffers served, the reads
/// what they asked of the OS ([`crate::measure::layers`] goes on from
/// there). None when a counter is missing or went back (a reset).
fn shared_buffers(before: &Snapshot, after: &Snapshot) -> Vec<Metric> {
    let delta = |c| {
        let (b, a) = (before.get(c)?, after.get(c)?);
        (a >= b).then_some(a - b)
    };
    let (Some(hit), Some(read)) = (delta(Counter::BlocksHit), delta(Counter::BlocksRead)) else {
        return Vec::new();
    };
    let bs = after.block_size;
    let l = |layer: Layer| Labels::new().with(&LAYER, layer.name());
    vec![
        m::LAYER_READ_BYTES.labelled(l(Layer::Workload), (hit + read) * bs),
        m::LAYER_READ_BYTES.labelled(l(Layer::SharedBuffers), (hit + read) * bs),
        m::LAYER_READS.labelled(l(Layer::SharedBuffers), hit + read),
        m::LAYER_SERVED_BYTES.labelled(l(Layer::SharedBuffers), hit * bs),
    ]
}

/// The metric each counter's difference is stored as.
static DEFS: &[(Counter, &MetricDef)] = &[
    (Counter::WalRecords, &m::WAL_RECORDS),
    (Counter::WalFpi, &m::WAL_FPI),
    (Counter::WalSyncs, &m::WAL_SYNCS),
    (Counter::DataFsyncs, &m::DATA_FSYNCS),
    (Counter::CheckpointsTimed, &m::CHECKPOINTS_TIMED),
    (Counter::CheckpointsRequested, &m::CHECKPOINTS_REQUESTED),
    (Counter::CheckpointBuffers, &m::CHECKPOINT_WRITE_BYTES),
    (Counter::CleanBuffers, &m::BGWRITER_WRITE_BYTES),
    (Counter::BackendBuffers, &m::BACKEND_WRITE_BYTES),
    (Counter::TempBytes, &m::TEMP_BYTES),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// What PostgreSQL 15.18 answered (before and after a short run).
    const PG15_BEFORE: &str = r#"{"wal_lsn" : "0/4F1E228", "block_size" : 8192, "temp_bytes" : 10860928, "clients" : 0, "bgwriter" : {"checkpoints_timed":0,"checkpoints_req":0,"checkpoint_write_time":0,"checkpoint_sync_time":0,"buffers_checkpoint":0,"buffers_clean":0,"maxwritten_clean":0,"buffers_backend":0,"buffers_backend_fsync":0,"buffers_alloc":7215,"stats_reset":"2026-11-22T23:57:50.158523+00:00"}, "wal" : {"wal_records":239830,"wal_fpi":1600,"wal_bytes":65888731,"wal_buffers_full":3593,"wal_write":4861,"wal_sync":535,"wal_write_time":0,"wal_sync_time":0,"stats_reset":"2026-11-22T23:57:50.158523+00:00"}}"#;

    fn after_pg15() -> String {
        PG15_BEFORE
            .replace("0/4F1E228", "0/5F1E228")
            .replace("\"checkpoints_req\":0", "\"checkpoints_req\":1")
            .replace("\"buffers_checkpoint\":0", "\"buffers_checkpoint\":100")
            .replace("\"buffers_backend\":0", "\"buffers_backend\":20")
            .replace("239830", "249830")
            .replace("\"wal_sync\":535", "\"wal_sync\":1535")
    }

    fn value(ms: &[Metric], def: &MetricDef) -> Option<f64> {
        ms.iter()
            .find(|x| std::ptr::eq(x.def, def))
            .map(|x| x.value)
    }

    #[test]
    fn pg15_counters_become_the_runs_figures() {
        let before = Snapshot::from_json(PG15_BEFORE).unwrap();
        let after = Snapshot::from_json(&after_pg15()).unwrap();
        let (ms, warnings) = metrics(&before, &after, 1000);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(value(&ms, &m::WAL_BYTES), Some(16.0 * 1024.0 * 1024.0));
        assert_eq!(value(&ms, &m::WAL_BYTES_PER_TX), Some(16_777.216));
        assert_eq!(value(&ms, &m::WAL_RECORDS), Some(10_000.0));
        assert_eq!(value(&ms, &m::WAL_SYNCS), Some(1000.0));
        assert_eq!(value(&ms, &m::CHECKPOINTS_REQUESTED), Some(1.0));
        assert_eq!(value(&ms, &m::CHECKPOINT_WRITE_BYTES), Some(100.0 * 8192.0));
        assert_eq!(value(&ms, &m::BACKEND_WRITE_BYTES), Some(20.0 * 8192.0));
        assert_eq!(
            value(&ms, &m::DATA_BYTES_PER_TX),
            Some(120.0 * 8192.0 / 1000.0)
        );
        assert_eq!(value(&ms, &m::TEMP_BYTES), Some(0.0));
        // PostgreSQL 15 has no pg_stat_io: no data-file fsync count, not zero.
        assert_eq!(value(&ms, &m::DATA_FSYNCS), None);
    }

    #[test]
    fn shared_buffers_serve_the_hits_and_pass_down_the_reads() {
        let with = |hit: u64, read: u64| {
            PG15_BEFORE.replace(
                "\"temp_bytes\" : 10860928,",
                &format!(
                    "\"temp_bytes\" : 10860928, \"blks_hit\" : {hit}, \"blks_read\" : {read},"
                ),
            )
        };
        let before = Snapshot::from_json(&with(1000, 10)).unwrap();
        let after = Snapshot::from_json(&with(1990, 20)).unwrap();
        let (ms, _) = metrics(&before, &after, 1);
        let layer = |def: &MetricDef, l: Layer| {
            ms.iter()
                .find(|x| std::ptr::eq(x.def, def) && x.labels.get(&LAYER) == Some(l.name()))
                .map(|x| x.value)
        };
        assert_eq!(
            layer(&m::LAYER_READ_BYTES, Layer::Workload),
            Some(1000.0 * 8192.0)
        );
        assert_eq!(
            layer(&m::LAYER_SERVED_BYTES, Layer::SharedBuffers),
            Some(990.0 * 8192.0)
        );
        assert_eq!(layer(&m::LAYER_READS, Layer::SharedBuffers), Some(1000.0));
        // A server whose counters lack them (an older storlab's answer)
        // reports no layers.
        let old = Snapshot::from_json(PG15_BEFORE).unwrap();
        assert!(shared_buffers(&old, &old).is_empty());
    }

    #[test]
    fn pg17_keeps_checkpoints_in_its_own_view() {
        let v17 = r#"{"wal_lsn": "1/0", "block_size": 8192, "temp_bytes": 0, "clients": 2,
            "bgwriter": {"buffers_clean": 5, "maxwritten_clean": 0, "buffers_alloc": 9},
            "wal": {"wal_records": 10, "wal_fpi": 1, "wal_sync": 3},
            "io": {"fsyncs": 7, "backend_writes": 4},
            "checkpointer": {"num_timed": 2, "num_requested": 1, "buffers_written": 50}}"#;
        let s = Snapshot::from_json(v17).unwrap();
        assert_eq!(s.clients, 2);
        assert_eq!(s.get(Counter::CheckpointsTimed), Some(2.0));
        assert_eq!(s.get(Counter::CheckpointBuffers), Some(50.0));
        assert_eq!(s.get(Counter::BackendBuffers), Some(4.0));
        assert_eq!(s.get(Counter::DataFsyncs), Some(7.0));
        assert_eq!(s.wal_lsn, 1 << 32);
    }

    #[test]
    fn each_version_asks_for_the_views_it_has() {
        let v13 = snapshot_sql(130_004);
        assert!(!v13.contains("pg_stat_wal") && v13.contains("pg_stat_bgwriter"));
        let v15 = snapshot_sql(150_018);
        assert!(v15.contains("pg_stat_wal") && !v15.contains("pg_stat_io"));
        let v16 = snapshot_sql(160_002);
        assert!(v16.contains("pg_stat_io") && !v16.contains("pg_stat_checkpointer"));
        let v18 = snapshot_sql(180_000);
        assert!(v18.contains("pg_stat_checkpointer") && v18.contains("'wal_fsyncs'"));
    }

    #[test]
    fn a_reset_or_garbage_is_said_not_stored() {
        let before = Snapshot::from_json(&after_pg15()).unwrap();
        let after = Snapshot::from_json(PG15_BEFORE).unwrap();
        let (ms, warnings) = metrics(&before, &after, 10);
        assert_eq!(value(&ms, &m::WAL_BYTES), None);
        assert!(
            warnings.iter().any(|w| w.contains("wal_records")),
            "{warnings:?}"
        );
        assert!(Snapshot::from_json("ERROR").is_err());
        assert!(Snapshot::from_json(r#"{"wal_lsn": "nope"}"#).is_err());
        assert_eq!(parse_lsn("16/B374D848").unwrap(), (0x16 << 32) | 0xB374D848);
        let (none, _) = metrics(&after, &after, 0);
        assert_eq!(
            value(&none, &m::WAL_BYTES_PER_TX),
            None,
            "no transactions, no ratio"
        );
    }
}
