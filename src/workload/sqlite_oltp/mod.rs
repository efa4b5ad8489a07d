//! Workload `sqlite-oltp`: pgbench's TPC-B-like transaction on an embedded
//! SQLite database inside the target — the OLTP workload that needs no
//! server. `prepare` creates a fresh `oltp.db` (pgbench's schema, scale 1 =
//! 100,000 accounts; its load time is `init_seconds`); `run` starts
//! `clients` threads, each with its own connection and a busy timeout, for
//! `duration`, then checks TPC-B's invariant (a violation fails the run);
//! `cleanup` removes the database.

mod client;
pub mod schema;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use self::client::{ClientResult, ClientSpec};
use super::{RunContext, Workload};
use crate::experiment::params::{ParamSpec, ParamType, Params};
use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, RunOutput, Series};
use crate::metric::catalogue::{self as m, LAT};
use crate::metric::Labels;

/// The database file inside the workload's directory.
pub const DB_FILE: &str = "oltp.db";

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "scale",
        ty: ParamType::Int {
            min: 1,
            max: 10_000,
        },
        default: Some("1"),
        help: "as pgbench -s: 1 = 1 branch, 10 tellers, 100,000 accounts",
    },
    ParamSpec {
        name: "clients",
        ty: ParamType::Int { min: 1, max: 1024 },
        default: Some("1"),
        help: "threads, each with its own connection",
    },
    ParamSpec {
        name: "duration",
        ty: ParamType::Duration,
        default: Some("10s"),
        help: "run length",
    },
    ParamSpec {
        name: "journal_mode",
        ty: ParamType::Choice(&["delete", "truncate", "persist", "memory", "wal", "off"]),
        default: Some("wal"),
        help: "SQLite's PRAGMA journal_mode",
    },
    ParamSpec {
        name: "synchronous",
        ty: ParamType::Choice(&["off", "normal", "full", "extra"]),
        default: Some("full"),
        help: "SQLite's PRAGMA synchronous",
    },
    ParamSpec {
        name: "busy_timeout",
        ty: ParamType::Duration,
        default: Some("5s"),
        help: "how long a client waits for the write lock before the transaction counts as failed",
    },
];

pub fn validate(p: &Params) -> Result<(), (&'static str, String)> {
    if p.duration("duration").is_some_and(|d| d.is_zero()) {
        return Err(("duration", "duration must be longer than 0".into()));
    }
    Ok(())
}

pub fn estimate(p: &Params) -> Duration {
    let scale = p.int("scale").unwrap_or(1) as u64;
    p.duration("duration").unwrap_or_default() + Duration::from_millis(500 + 500 * scale)
}

pub fn bytes_needed(p: &Params) -> u64 {
    (64 << 20) + p.int("scale").unwrap_or(1) as u64 * (24 << 20)
}

pub struct SqliteOltp {
    spec: ClientSpec,
    clients: usize,
    duration: Duration,
    init_seconds: Option<f64>,
}

impl SqliteOltp {
    pub fn new(p: &Params) -> SqliteOltp {
        SqliteOltp {
            spec: ClientSpec {
                db: PathBuf::new(),
                journal_mode: p.str("journal_mode").unwrap_or("wal").to_string(),
                synchronous: p.str("synchronous").unwrap_or("full").to_string(),
                busy_timeout: p.duration("busy_timeout").unwrap_or(Duration::from_secs(5)),
                scale: p.int("scale").unwrap_or(1),
                seed: 0,
            },
            clients: p.int("clients").unwrap_or(1) as usize,
            duration: p.duration("duration").unwrap_or(Duration::from_secs(10)),
            init_seconds: None,
        }
    }
}

/// Removes the database and its journal files.
fn remove_db(db: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(&name) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {name:?}")),
        }
    }
    Ok(())
}

impl Workload for SqliteOltp {
    fn prepare(&mut self, dir: &Path) -> Result<()> {
        self.spec.db = dir.join(DB_FILE);
        remove_db(&self.spec.db)?;
        let t0 = Instant::now();
        let mut conn = client::open(&self.spec)?;
        schema::load(&mut conn, self.spec.scale)
            .with_context(|| format!("loading {}", self.spec.db.display()))?;
        if self.spec.journal_mode == "wal" {
            conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
                .context("checkpointing the loaded database")?;
        }
        self.init_seconds = Some(t0.elapsed().as_secs_f64());
        Ok(())
    }

    fn run(&mut self, _dir: &Path, cx: &RunContext) -> Result<RunOutput> {
        let done = AtomicU64::new(0);
        let stop = cx.stop.as_atomic();
        let start = Instant::now();
        let deadline = start + self.duration;
        let (results, series) = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.clients)
                .map(|i| {
                    let mut spec = self.spec.clone();
                    spec.seed = cx.run_seed.wrapping_mul(31).wrapping_add(i as u64);
                    let done = &done;
                    s.spawn(move || client::run(&spec, deadline, stop, done))
                })
                .collect();
            let series = sample(&done, &handles);
            let results: Vec<Result<ClientResult>> = handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("a client thread panicked")))
                })
                .collect();
            (results, series)
        });
        let elapsed = start.elapsed().as_secs_f64();
        let results: Vec<ClientResult> = results.into_iter().collect::<Result<_>>()?;
        let conn = client::open(&self.spec)?;
        let balances = schema::balances(&conn)?;
        schema::check(&balances)?;
        Ok(self.output(&results, series, elapsed, balances.history_rows))
    }

    fn cleanup(&mut self, _dir: &Path) -> Result<()> {
        remove_db(&self.spec.db)
    }
}

impl SqliteOltp {
    fn output(
        &self,
        results: &[ClientResult],
        series: Vec<f64>,
        elapsed: f64,
        rows: i64,
    ) -> RunOutput {
        let mut lat = new_histogram();
        for r in results {
            let _ = lat.add(&r.lat);
        }
        let transactions: u64 = results.iter().map(|r| r.transactions).sum();
        let failed: u64 = results.iter().map(|r| r.failed).sum();
        let mut metrics = vec![
            m::TPS.value(transactions as f64 / elapsed.max(1e-9)),
            m::TRANSACTIONS.value(transactions as f64),
            m::FAILED_TRANSACTIONS.value(failed as f64),
            m::ELAPSED_S.value(elapsed),
            m::HISTORY_ROWS.value(rows as f64),
        ];
        if let Some(s) = self.init_seconds {
            metrics.push(m::INIT_SECONDS.value(s));
        }
        metrics.extend(latency_metrics(&LAT, &Labels::new(), &lat));
        RunOutput {
            metrics,
            series: vec![Series::new(&m::TPS, 1.0, series)],
            histograms: vec![Hist::new(&LAT, lat)],
            warnings: Vec::new(),
        }
    }
}

/// Committed transactions per second until every client has finished.
fn sample<T>(done: &AtomicU64, handles: &[std::thread::ScopedJoinHandle<'_, T>]) -> Vec<f64> {
    let mut values = Vec::new();
    let mut last = 0;
    let mut tick = Instant::now() + Duration::from_secs(1);
    loop {
        while Instant::now() < tick {
            if handles.iter().all(|h| h.is_finished()) {
                return values;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let now = done.load(Ordering::Relaxed);
        values.push(now.saturating_sub(last) as f64);
        last = now;
        tick += Duration::from_secs(1);
    }
}
