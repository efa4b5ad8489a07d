//! One sqlite-oltp client: a thread with its own connection running
//! pgbench's TPC-B-like transaction (BEGIN IMMEDIATE, so that writers queue
//! on the busy timeout instead of failing to upgrade a read lock) until the
//! deadline or the stop flag, recording each transaction's latency.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use rusqlite::{Connection, ErrorCode};

use super::schema::{ACCOUNTS_PER_BRANCH, TELLERS_PER_BRANCH};
use crate::measure::latency::new_histogram;

#[derive(Debug, Clone)]
pub struct ClientSpec {
    pub db: PathBuf,
    pub journal_mode: String,
    pub synchronous: String,
    pub busy_timeout: Duration,
    pub scale: i64,
    pub seed: u64,
}

pub struct ClientResult {
    pub lat: Histogram<u64>,
    pub transactions: u64,
    pub failed: u64,
}

/// Opens a connection configured as the workload says.
pub fn open(spec: &ClientSpec) -> Result<Connection> {
    let conn = Connection::open(&spec.db)
        .with_context(|| format!("opening SQLite database {}", spec.db.display()))?;
    conn.busy_timeout(spec.busy_timeout)?;
    // Both are words checked against fixed lists before anything runs.
    conn.pragma_update(None, "journal_mode", &spec.journal_mode)
        .with_context(|| format!("setting journal_mode = {}", spec.journal_mode))?;
    conn.pragma_update(None, "synchronous", &spec.synchronous)
        .with_context(|| format!("setting synchronous = {}", spec.synchronous))?;
    Ok(conn)
}

/// Runs transactions until `deadline` or `stop`; `done` counts committed ones.
pub fn run(
    spec: &ClientSpec,
    deadline: Instant,
    stop: &AtomicBool,
    done: &AtomicU64,
) -> Result<ClientResult> {
    let conn = open(spec)?;
    let mut rng = SplitMix(spec.seed);
    let mut out = ClientResult {
        lat: new_histogram(),
        transactions: 0,
        failed: 0,
    };
    while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
        let t0 = Instant::now();
        match transaction(&conn, spec.scale, &mut rng) {
            Ok(()) => {
                let _ = out.lat.record((t0.elapsed().as_nanos() as u64).max(1));
                out.transactions += 1;
                done.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if is_busy(&e) => out.failed += 1,
            Err(e) => return Err(e).context("running the TPC-B-like transaction"),
        }
    }
    Ok(out)
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// pgbench's builtin tpcb-like script.
fn transaction(conn: &Connection, scale: i64, rng: &mut SplitMix) -> rusqlite::Result<()> {
    let aid = rng.between(1, ACCOUNTS_PER_BRANCH * scale);
    let bid = rng.between(1, scale);
    let tid = rng.between(1, TELLERS_PER_BRANCH * scale);
    let delta = rng.between(-5000, 5000);
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        conn.prepare_cached("UPDATE pgbench_accounts SET abalance = abalance + ?1 WHERE aid = ?2")?
            .execute([delta, aid])?;
        let _balance: i64 = conn
            .prepare_cached("SELECT abalance FROM pgbench_accounts WHERE aid = ?1")?
            .query_row([aid], |r| r.get(0))?;
        conn.prepare_cached("UPDATE pgbench_tellers SET tbalance = tbalance + ?1 WHERE tid = ?2")?
            .execute([delta, tid])?;
        conn.prepare_cached("UPDATE pgbench_branches SET bbalance = bbalance + ?1 WHERE bid = ?2")?
            .execute([delta, bid])?;
        conn.prepare_cached(
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
             VALUES (?1, ?2, ?3, ?4, strftime('%Y-%m-%d %H:%M:%f', 'now'))",
        )?
        .execute([tid, bid, aid, delta])?;
        conn.execute_batch("COMMIT")
    })();
    if result.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}

/// splitmix64: a seeded generator for pgbench's `random(lo, hi)`.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo + 1) as u64;
        lo + ((self.next() as u128 * span as u128) >> 64) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_within_pgbench_ranges() {
        let mut r = SplitMix(7);
        let mut seen = (i64::MAX, i64::MIN);
        for _ in 0..100_000 {
            let d = r.between(-5000, 5000);
            seen = (seen.0.min(d), seen.1.max(d));
        }
        assert_eq!(seen, (-5000, 5000));
    }
}
