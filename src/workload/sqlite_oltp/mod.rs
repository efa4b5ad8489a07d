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
use super::{Configure, RunContext, Workload, WorkloadConfig};
use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, RunOutput, Series};
use crate::metric::catalogue::{self as m, LAT};
use crate::metric::Labels;
use crate::params::{declare, Fault, Params};

/// The database file inside the workload's directory.
pub const DB_FILE: &str = "oltp.db";

declare! {
    /// The parameters of a `sqlite-oltp` workload.
    pub struct SqliteOltpParams {
        scale: int(i64, 1, 10_000) = "1" => "as pgbench -s: 1 = 1 branch, 10 tellers, 100,000 accounts",
        clients: int(usize, 1, 1024) = "1" => "threads, each with its own connection",
        duration: duration = "10s" => "run length",
        journal_mode: one_of(&["delete", "truncate", "persist", "memory", "wal", "off"]) = "wal" => "SQLite's PRAGMA journal_mode",
        synchronous: one_of(&["off", "normal", "full", "extra"]) = "full" => "SQLite's PRAGMA synchronous",
        busy_timeout: duration = "5s" => "how long a client waits for the write lock before the transaction counts as failed",
    }
}

impl Configure for SqliteOltpParams {
    type Config = SqliteOltpParams;

    fn configure(self, _: &Path, _: &mut Params) -> Result<SqliteOltpParams, Fault> {
        if self.duration.is_zero() {
            return Err(("duration", "duration must be longer than 0".into()));
        }
        Ok(self)
    }
}

impl WorkloadConfig for SqliteOltpParams {
    fn estimate(&self) -> Duration {
        let scale = self.scale as u64;
        self.duration
            .saturating_add(Duration::from_millis(500 + 500 * scale))
    }

    /// Building the tables; the run lasts `duration`.
    fn estimate_io(&self) -> Duration {
        Duration::from_millis(500 + 500 * self.scale as u64)
    }

    fn bytes_needed(&self) -> u64 {
        (64 << 20) + self.scale as u64 * (24 << 20)
    }

    fn build(&self) -> Box<dyn Workload> {
        Box::new(SqliteOltp::new(self))
    }
}

pub struct SqliteOltp {
    spec: ClientSpec,
    clients: usize,
    duration: Duration,
    init_seconds: Option<f64>,
}

impl SqliteOltp {
    pub fn new(p: &SqliteOltpParams) -> SqliteOltp {
        SqliteOltp {
            spec: ClientSpec {
                db: PathBuf::new(),
                journal_mode: p.journal_mode.clone(),
                synchronous: p.synchronous.clone(),
                busy_timeout: p.busy_timeout,
                scale: p.scale,
                seed: 0,
            },
            clients: p.clients,
            duration: p.duration,
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
    fn prepare(&mut self, dir: &Path, _cx: &RunContext) -> Result<()> {
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
            ..Default::default()
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
