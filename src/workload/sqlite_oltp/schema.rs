//! pgbench's schema and initial data in SQLite (scale 1 = 1 branch, 10
//! tellers, 100,000 accounts, all balances 0, fillers padded as PostgreSQL
//! pads char(n)), and TPC-B's consistency check: the sums of account,
//! teller and branch balances all equal the sum of the history's deltas.

use anyhow::{bail, Context, Result};
use rusqlite::Connection;

pub const ACCOUNTS_PER_BRANCH: i64 = 100_000;
pub const TELLERS_PER_BRANCH: i64 = 10;

const SCHEMA: &str = "
CREATE TABLE pgbench_branches (bid INTEGER PRIMARY KEY, bbalance INTEGER NOT NULL, filler CHAR(88));
CREATE TABLE pgbench_tellers (tid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, tbalance INTEGER NOT NULL, filler CHAR(84));
CREATE TABLE pgbench_accounts (aid INTEGER PRIMARY KEY, bid INTEGER NOT NULL, abalance INTEGER NOT NULL, filler CHAR(84));
CREATE TABLE pgbench_history (tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime TEXT, filler CHAR(22));
";

/// Creates the tables and loads `scale` branches' worth of rows in one
/// transaction.
pub fn load(conn: &mut Connection, scale: i64) -> Result<()> {
    conn.execute_batch(SCHEMA)
        .context("creating pgbench's tables")?;
    let tx = conn.transaction()?;
    {
        let mut b = tx.prepare("INSERT INTO pgbench_branches VALUES (?1, 0, ?2)")?;
        let mut t = tx.prepare("INSERT INTO pgbench_tellers VALUES (?1, ?2, 0, ?3)")?;
        let mut a = tx.prepare("INSERT INTO pgbench_accounts VALUES (?1, ?2, 0, ?3)")?;
        let (f88, f84) = (" ".repeat(88), " ".repeat(84));
        for bid in 1..=scale {
            b.execute(rusqlite::params![bid, f88])?;
        }
        for tid in 1..=scale * TELLERS_PER_BRANCH {
            t.execute(rusqlite::params![
                tid,
                (tid - 1) / TELLERS_PER_BRANCH + 1,
                f84
            ])?;
        }
        for aid in 1..=scale * ACCOUNTS_PER_BRANCH {
            a.execute(rusqlite::params![
                aid,
                (aid - 1) / ACCOUNTS_PER_BRANCH + 1,
                f84
            ])?;
        }
    }
    tx.commit().context("loading pgbench's rows")
}

/// The four sums TPC-B keeps equal, and the history's row count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balances {
    pub accounts: i64,
    pub tellers: i64,
    pub branches: i64,
    pub history: i64,
    pub history_rows: i64,
}

pub fn balances(conn: &Connection) -> Result<Balances> {
    let sum = |sql: &str| -> Result<i64> {
        conn.query_row(sql, [], |r| r.get(0))
            .with_context(|| format!("running `{sql}`"))
    };
    Ok(Balances {
        accounts: sum("SELECT COALESCE(SUM(abalance), 0) FROM pgbench_accounts")?,
        tellers: sum("SELECT COALESCE(SUM(tbalance), 0) FROM pgbench_tellers")?,
        branches: sum("SELECT COALESCE(SUM(bbalance), 0) FROM pgbench_branches")?,
        history: sum("SELECT COALESCE(SUM(delta), 0) FROM pgbench_history")?,
        history_rows: sum("SELECT COUNT(*) FROM pgbench_history")?,
    })
}

/// Fails unless the four sums agree.
pub fn check(b: &Balances) -> Result<()> {
    if b.accounts != b.history || b.tellers != b.history || b.branches != b.history {
        bail!(
            "TPC-B consistency violated: accounts {} tellers {} branches {} history {}",
            b.accounts,
            b.tellers,
            b.branches,
            b.history
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_database_balances_and_a_broken_one_does_not() {
        let mut c = Connection::open_in_memory().unwrap();
        load(&mut c, 1).unwrap();
        let b = balances(&c).unwrap();
        assert_eq!(b.history_rows, 0);
        check(&b).unwrap();
        let n: i64 = c
            .query_row("SELECT COUNT(*) FROM pgbench_accounts", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 100_000);
        c.execute("UPDATE pgbench_tellers SET tbalance = 5 WHERE tid = 3", [])
            .unwrap();
        assert!(check(&balances(&c).unwrap()).is_err());
    }
}
