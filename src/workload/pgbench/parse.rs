//! Parsing of pgbench's text output: the summary on stdout (tps, latency,
//! transactions, failures, skipped and late transactions and the schedule
//! lag of rate-limited runs, per-statement latencies from `-r`), the
//! progress lines (`-P`) on stderr, and the per-step times `pgbench -i`
//! prints at its end. Pure functions over text, tested on output captured
//! from real pgbench runs (`testdata/`); nothing here runs a program.

use anyhow::{bail, Result};

/// What one pgbench run reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub tps: f64,
    pub transactions: u64,
    pub failed: u64,
    pub latency_avg_ms: Option<f64>,
    pub latency_stddev_ms: Option<f64>,
    pub connection_ms: Option<f64>,
    /// With `-R` and `-L`: transactions skipped for starting too late.
    pub skipped: Option<u64>,
    /// With `-L`: transactions above the latency limit.
    pub late: Option<u64>,
    /// With `-R`: the schedule lag's mean and maximum.
    pub lag_avg_ms: Option<f64>,
    pub lag_max_ms: Option<f64>,
    pub statements: Vec<Statement>,
}

/// One line of `-r`'s per-statement report.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// 1-based position in the script.
    pub index: usize,
    pub latency_ms: f64,
    pub failures: u64,
    pub text: String,
}

/// One `-P` progress line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub at_s: f64,
    pub tps: f64,
    pub latency_ms: f64,
}

/// Parses the summary pgbench prints on stdout at the end of a run.
pub fn summary(stdout: &str) -> Result<Summary> {
    let mut s = Summary::default();
    let mut tps = None;
    let mut in_statements = false;
    for line in stdout.lines() {
        if in_statements {
            if let Some(st) = statement(line, s.statements.len() + 1) {
                s.statements.push(st);
                continue;
            }
            in_statements = false;
        }
        if let Some(rest) = line.strip_prefix("tps = ") {
            // pgbench 14+: one line "(without initial connection time)";
            // older: "including" and "excluding connections establishing".
            if !rest.contains("including") {
                tps = first_number(rest);
            }
        } else if let Some(rest) = line.strip_prefix("number of transactions actually processed: ")
        {
            s.transactions = first_number(rest).unwrap_or(0.0) as u64;
        } else if let Some(rest) = line.strip_prefix("number of failed transactions: ") {
            s.failed = first_number(rest).unwrap_or(0.0) as u64;
        } else if let Some(rest) = line.strip_prefix("latency average = ") {
            s.latency_avg_ms = first_number(rest);
        } else if let Some(rest) = line.strip_prefix("latency stddev = ") {
            s.latency_stddev_ms = first_number(rest);
        } else if let Some(rest) = line.strip_prefix("initial connection time = ") {
            s.connection_ms = first_number(rest);
        } else if let Some(rest) = line.strip_prefix("number of transactions skipped: ") {
            s.skipped = first_number(rest).map(|v| v as u64);
        } else if let Some(rest) = line.strip_prefix("number of transactions above the ") {
            // `5.0 ms latency limit: 372/498 (74.699%)`
            let count = rest.split_once(": ").and_then(|(_, n)| first_number(n));
            s.late = count.map(|v| v as u64);
        } else if let Some(rest) = line.strip_prefix("rate limit schedule lag: avg ") {
            // `1.467 (max 4.998) ms`
            s.lag_avg_ms = first_number(rest);
            let max = rest.split_once("(max ").and_then(|(_, m)| first_number(m));
            s.lag_max_ms = max;
        } else if line.starts_with("statement latencies in milliseconds") {
            in_statements = true;
        }
    }
    match tps {
        Some(t) => s.tps = t,
        None => bail!("pgbench printed no `tps = ` line"),
    }
    Ok(s)
}

/// One step of `pgbench -i`, as its closing line names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitStep {
    Drop,
    Tables,
    Generate,
    Vacuum,
    PrimaryKeys,
    ForeignKeys,
}

/// The steps' times from the line `pgbench -i` ends with (PostgreSQL 13+):
/// `done in 0.86 s (drop tables 0.01 s, create tables 0.03 s, client-side
/// generate 0.40 s, vacuum 0.15 s, primary keys 0.18 s).` — empty when
/// there is no such line.
pub fn init_steps(stderr: &str) -> Vec<(InitStep, f64)> {
    let Some(line) = stderr.lines().rev().find(|l| l.starts_with("done in ")) else {
        return Vec::new();
    };
    let Some((_, inner)) = line.split_once('(') else {
        return Vec::new();
    };
    let inner = inner.trim_end_matches(['.', ')']);
    inner
        .split(", ")
        .filter_map(|part| {
            let (name, secs) = part.trim().rsplit_once(' ')?.0.rsplit_once(' ')?;
            let step = match name {
                "drop tables" => InitStep::Drop,
                "create tables" => InitStep::Tables,
                "client-side generate" | "server-side generate" => InitStep::Generate,
                "vacuum" => InitStep::Vacuum,
                "primary keys" => InitStep::PrimaryKeys,
                "foreign keys" => InitStep::ForeignKeys,
                _ => return None,
            };
            Some((step, secs.parse().ok()?))
        })
        .collect()
}

/// `         0.035           0  UPDATE …` (pgbench 15: latency, failures,
/// text) or `         0.035  UPDATE …` (before 15: latency, text).
fn statement(line: &str, index: usize) -> Option<Statement> {
    if !line.starts_with(' ') {
        return None;
    }
    let trimmed = line.trim_start();
    let (lat, rest) = trimmed.split_once(char::is_whitespace)?;
    let latency_ms: f64 = lat.parse().ok()?;
    let rest = rest.trim_start();
    let (failures, text) = match rest.split_once(char::is_whitespace) {
        Some((f, t)) if f.parse::<u64>().is_ok() => (f.parse().unwrap_or(0), t.trim_start()),
        _ => (0, rest),
    };
    Some(Statement {
        index,
        latency_ms,
        failures,
        text: text.to_string(),
    })
}

/// Parses `progress: 1.0 s, 6849.8 tps, lat 0.286 ms stddev 0.713, 0 failed`.
pub fn progress_line(line: &str) -> Option<Progress> {
    let rest = line.strip_prefix("progress: ")?;
    let mut parts = rest.split(", ");
    let at_s = first_number(parts.next()?)?;
    let tps = first_number(parts.next()?.strip_suffix(" tps")?)?;
    let latency_ms = first_number(parts.next()?.strip_prefix("lat ")?)?;
    Some(Progress {
        at_s,
        tps,
        latency_ms,
    })
}

/// Every progress line in pgbench's stderr, in order.
pub fn progress(stderr: &str) -> Vec<Progress> {
    stderr.lines().filter_map(progress_line).collect()
}

/// The leading number of `text` (`"0.315 ms"` → 0.315, `"18841/18841"` → 18841).
fn first_number(text: &str) -> Option<f64> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(text.len());
    text[..end].parse().ok()
}

/// A stable snake_case slug of a statement's first words, for its label.
pub fn slug(text: &str) -> String {
    let words: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(3)
        .map(str::to_ascii_lowercase)
        .collect();
    words.join("_")
}

#[cfg(test)]
mod tests {
    use super::*;

    const DURATION_OUT: &str = include_str!("testdata/pg15_duration_prepared.stdout");
    const DURATION_ERR: &str = include_str!("testdata/pg15_duration_prepared.stderr");
    const SELECT_ONLY_OUT: &str = include_str!("testdata/pg15_transactions_select_only.stdout");
    const INIT_ERR: &str = include_str!("testdata/pg15_init.stderr");

    #[test]
    fn a_time_based_tpcb_run_with_per_statement_latencies() {
        let s = summary(DURATION_OUT).unwrap();
        assert_eq!(s.tps, 6283.843907);
        assert_eq!(s.transactions, 18841);
        assert_eq!(s.failed, 0);
        assert_eq!(s.latency_avg_ms, Some(0.315));
        assert_eq!(s.latency_stddev_ms, Some(0.766));
        assert_eq!(s.connection_ms, Some(5.414));
        assert_eq!(s.statements.len(), 11);
        let update = &s.statements[5];
        assert_eq!(update.index, 6);
        assert_eq!(update.latency_ms, 0.035);
        assert!(update.text.starts_with("UPDATE pgbench_accounts SET"));
        assert_eq!(slug(&update.text), "update_pgbench_accounts");
        assert_eq!(s.statements[0].text, r"\set aid random(1, 100000 * :scale)");
    }

    #[test]
    fn a_transaction_count_run_without_stddev() {
        let s = summary(SELECT_ONLY_OUT).unwrap();
        assert_eq!(s.transactions, 500);
        assert_eq!(s.tps, 17140.898183);
        assert_eq!(s.latency_stddev_ms, None);
        assert_eq!(s.statements.len(), 2);
        assert_eq!(s.statements[1].latency_ms, 0.364);
    }

    #[test]
    fn progress_lines_become_a_series() {
        let p = progress(DURATION_ERR);
        assert_eq!(p.len(), 3);
        assert_eq!(
            p[0],
            Progress {
                at_s: 1.0,
                tps: 6849.8,
                latency_ms: 0.286
            }
        );
        assert_eq!(p[2].tps, 5715.2);
        assert!(progress(INIT_ERR).is_empty());
    }

    #[test]
    fn older_pgbench_reports_excluding_connections() {
        let old = "number of transactions actually processed: 5000/5000\n\
                   latency average = 12.624 ms\n\
                   tps = 792.155433 (including connections establishing)\n\
                   tps = 792.381217 (excluding connections establishing)\n\
                   statement latencies in milliseconds:\n\
                   \x20        0.003  \\set aid random(1, 100000 * :scale)\n\
                   \x20        0.331  BEGIN;\n";
        let s = summary(old).unwrap();
        assert_eq!(s.tps, 792.381217);
        assert_eq!(s.transactions, 5000);
        assert_eq!(s.statements.len(), 2);
        assert_eq!(s.statements[1].text, "BEGIN;");
        assert_eq!(s.statements[1].failures, 0);
    }

    #[test]
    fn output_without_tps_is_an_error_not_a_panic() {
        assert!(summary("").is_err());
        assert!(summary("tps = garbage").is_err());
        assert_eq!(progress_line("progress: x"), None);
    }

    #[test]
    fn a_rate_limited_run_with_a_latency_limit() {
        let s = summary(include_str!("testdata/pg15_rate_latency_limit.stdout")).unwrap();
        assert_eq!(s.transactions, 669);
        assert_eq!(s.skipped, Some(124));
        assert_eq!(s.late, Some(190));
        assert_eq!(s.lag_avg_ms, Some(1.94));
        assert_eq!(s.lag_max_ms, Some(19.305));
        assert_eq!(s.tps, 167.883466);
        let closed = summary(DURATION_OUT).unwrap();
        assert_eq!(
            (closed.skipped, closed.late, closed.lag_max_ms),
            (None, None, None)
        );
    }

    #[test]
    fn init_reports_each_step() {
        use InitStep::*;
        assert_eq!(
            init_steps(INIT_ERR),
            vec![
                (Drop, 0.0),
                (Tables, 0.0),
                (Generate, 0.11),
                (Vacuum, 0.07),
                (PrimaryKeys, 0.04)
            ]
        );
        let server = init_steps(include_str!("testdata/pg15_init_server_side.stderr"));
        assert_eq!(server[2], (Generate, 0.39));
        assert_eq!(server[5], (ForeignKeys, 0.03));
        assert!(init_steps("creating tables...\n").is_empty());
        assert!(init_steps("done in garbage").is_empty());
    }
}
