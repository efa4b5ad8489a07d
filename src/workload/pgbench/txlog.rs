//! pgbench's per-transaction log (`-l`) made into latency figures: one HDR
//! histogram over every logged transaction of every client and thread
//! (exact merging: each line is recorded once), its percentiles and
//! maximum, per-second percentile series, and for rate-limited runs the
//! service latency (the logged latency, which pgbench measures from the
//! scheduled start, less the schedule lag).
//!
//! A line is `client_id transaction_no time script_no time_epoch time_us
//! [schedule_lag] [retries]`, times in microseconds, `time` being
//! `skipped` or `failed` for transactions that have none. pgbench writes
//! one file per thread (`PREFIX.PID`, `PREFIX.PID.1`, …); [`read_dir`]
//! reads them all. Reading streams line by line: a long run's log is never
//! held in memory, and the per-second histograms are kept sparse.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use hdrhistogram::Histogram;

use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, Metric, Series};
use crate::metric::catalogue::{self as m, LAT, SERVICE_LAT};
use crate::metric::{Labels, MetricDef};

/// The per-second series drawn from the log: (percentile, its metric).
static SERIES: [(f64, &MetricDef); 3] = [
    (50.0, &m::LAT_P50_NS),
    (99.0, &m::LAT_P99_NS),
    (99.9, &m::LAT_P999_NS),
];

/// Everything read from one run's transaction log.
#[derive(Debug)]
pub struct TxLog {
    /// Microseconds since the epoch at which the measured run started: the
    /// origin of the per-second series.
    origin_us: u64,
    /// Whether the run was rate-limited: lines carry the schedule lag.
    rated: bool,
    lat: Histogram<u64>,
    service: Histogram<u64>,
    /// Second of completion → (bucket of `lat` → count): the sparse
    /// per-second histograms.
    seconds: HashMap<u64, BTreeMap<u64, u64>>,
    last_end_us: u64,
    pub logged: u64,
    pub skipped: u64,
    pub failed: u64,
}

impl TxLog {
    /// An empty log of a run that started at `origin_us` (µs since the
    /// epoch); `rated` when it ran with `-R`.
    pub fn new(origin_us: u64, rated: bool) -> TxLog {
        TxLog {
            origin_us,
            rated,
            lat: new_histogram(),
            service: new_histogram(),
            seconds: HashMap::new(),
            last_end_us: origin_us,
            logged: 0,
            skipped: 0,
            failed: 0,
        }
    }

    /// Reads one thread's file; `name` is for messages.
    pub fn add(&mut self, reader: impl BufRead, name: &str) -> Result<()> {
        for (i, line) in reader.lines().enumerate() {
            let line = line.with_context(|| format!("reading {name}"))?;
            if line.trim().is_empty() {
                continue;
            }
            self.add_line(&line)
                .with_context(|| format!("{name}:{}: `{line}`", i + 1))?;
        }
        Ok(())
    }

    fn add_line(&mut self, line: &str) -> Result<()> {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if f.len() < 6 {
            bail!("a pgbench log line has at least 6 fields");
        }
        match f[2] {
            "skipped" => self.skipped += 1,
            "failed" => self.failed += 1,
            time => {
                let time_us: u64 = number(time, "time")?;
                let end_us = number::<u64>(f[4], "time_epoch")? * 1_000_000
                    + number::<u64>(f[5], "time_us")?;
                let lag_us = match (self.rated, f.get(6)) {
                    (true, Some(lag)) => Some(number::<u64>(lag, "schedule_lag")?),
                    (true, None) => bail!("a rate-limited run's log line has no schedule lag"),
                    (false, _) => None,
                };
                self.record(time_us, lag_us, end_us);
            }
        }
        Ok(())
    }

    fn record(&mut self, time_us: u64, lag_us: Option<u64>, end_us: u64) {
        let ns = time_us.saturating_mul(1000);
        self.lat.saturating_record(ns);
        if let Some(lag) = lag_us {
            self.service
                .saturating_record(time_us.saturating_sub(lag).saturating_mul(1000));
        }
        let second = end_us.saturating_sub(self.origin_us) / 1_000_000;
        let bucket = self.lat.lowest_equivalent(ns);
        *self
            .seconds
            .entry(second)
            .or_default()
            .entry(bucket)
            .or_default() += 1;
        self.last_end_us = self.last_end_us.max(end_us);
        self.logged += 1;
    }

    /// The latency histograms: response latency, and service latency for a
    /// rate-limited run; none when nothing completed.
    pub fn histograms(&self) -> Vec<Hist> {
        let mut out = Vec::new();
        if !self.lat.is_empty() {
            out.push(Hist::new(&LAT, self.lat.clone()));
        }
        if self.rated && !self.service.is_empty() {
            out.push(Hist::new(&SERVICE_LAT, self.service.clone()));
        }
        out
    }

    /// Percentiles and maximum of the latency (its mean is pgbench's own,
    /// over every transaction, sampled or not), the service latency's
    /// figures, and how many transactions the log held.
    pub fn metrics(&self) -> Vec<Metric> {
        let none = Labels::new();
        let mut out: Vec<Metric> = latency_metrics(&LAT, &none, &self.lat)
            .into_iter()
            .filter(|x| !std::ptr::eq(x.def, LAT.mean))
            .collect();
        if self.rated {
            out.extend(latency_metrics(&SERVICE_LAT, &none, &self.service));
        }
        out.push(m::LOGGED_TRANSACTIONS.value(self.logged as f64));
        out
    }

    /// Per whole second from the origin: latency percentiles of the
    /// transactions that completed in it (NaN for a second without any).
    /// The second the last transaction ended in is left out unless whole.
    pub fn series(&self) -> Vec<Series> {
        let whole = (self.last_end_us.saturating_sub(self.origin_us) / 1_000_000) as usize;
        if whole == 0 || self.logged == 0 {
            return Vec::new();
        }
        let mut columns: Vec<Vec<f64>> = vec![Vec::with_capacity(whole); SERIES.len()];
        let mut h = new_histogram();
        for second in 0..whole as u64 {
            h.reset();
            for (bucket, count) in self.seconds.get(&second).into_iter().flatten() {
                h.saturating_record_n(*bucket, *count);
            }
            for (column, (q, _)) in columns.iter_mut().zip(&SERIES) {
                column.push(if h.is_empty() {
                    f64::NAN
                } else {
                    h.value_at_percentile(*q) as f64
                });
            }
        }
        columns
            .into_iter()
            .zip(&SERIES)
            .map(|(values, (_, def))| Series::new(def, 1.0, values))
            .collect()
    }
}

fn number<T: std::str::FromStr>(text: &str, field: &str) -> Result<T> {
    text.parse()
        .map_err(|_| anyhow::anyhow!("`{text}` is not a number ({field})"))
}

/// The files pgbench wrote with `--log-prefix PREFIX`: `PREFIX.PID` and
/// `PREFIX.PID.N`, in name order.
pub fn files(prefix: &Path) -> Result<Vec<PathBuf>> {
    let dir = prefix.parent().unwrap_or(Path::new("."));
    let stem = prefix
        .file_name()
        .map(|n| format!("{}.", n.to_string_lossy()))
        .unwrap_or_default();
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        if entry.file_name().to_string_lossy().starts_with(&stem) {
            found.push(entry.path());
        }
    }
    found.sort();
    Ok(found)
}

/// Reads every file of the log written with `--log-prefix PREFIX`.
pub fn read_dir(prefix: &Path, origin_us: u64, rated: bool) -> Result<TxLog> {
    let mut log = TxLog::new(origin_us, rated);
    let files = files(prefix)?;
    if files.is_empty() {
        bail!("pgbench wrote no transaction log at {}.*", prefix.display());
    }
    for path in files {
        let f =
            std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()))?;
        log.add(std::io::BufReader::new(f), &path.display().to_string())?;
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLOSED: [&str; 2] = [
        include_str!("testdata/log_closed/pgbench_log.29285"),
        include_str!("testdata/log_closed/pgbench_log.29285.1"),
    ];
    const RATE: [&str; 2] = [
        include_str!("testdata/log_rate/pgbench_log.29192"),
        include_str!("testdata/log_rate/pgbench_log.29192.1"),
    ];

    /// (time µs, lag µs, end µs) of every completed transaction.
    fn lines(texts: &[&str]) -> Vec<(u64, Option<u64>, u64)> {
        texts
            .iter()
            .flat_map(|t| t.lines())
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let time = f[2].parse().ok()?;
                let end = f[4].parse::<u64>().unwrap() * 1_000_000 + f[5].parse::<u64>().unwrap();
                Some((time, f.get(6).map(|x| x.parse().unwrap()), end))
            })
            .collect()
    }

    fn origin(rows: &[(u64, Option<u64>, u64)]) -> u64 {
        rows.iter().map(|(t, _, e)| e - t).min().unwrap()
    }

    fn read(texts: &[&str], origin: u64, rated: bool) -> TxLog {
        let mut log = TxLog::new(origin, rated);
        for (i, t) in texts.iter().enumerate() {
            log.add(t.as_bytes(), &format!("file{i}")).unwrap();
        }
        log
    }

    /// The nearest-rank percentile as HdrHistogram defines it.
    fn exact(sorted: &[u64], p: f64) -> u64 {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank - 1]
    }

    fn value(metrics: &[Metric], def: &MetricDef) -> f64 {
        metrics
            .iter()
            .find(|x| std::ptr::eq(x.def, def))
            .unwrap_or_else(|| panic!("no {}", def.name))
            .value
    }

    #[test]
    fn percentiles_agree_with_a_direct_computation_over_the_same_log() {
        let rows = lines(&CLOSED);
        assert_eq!(rows.len(), 2000);
        let log = read(&CLOSED, origin(&rows), false);
        assert_eq!((log.logged, log.skipped, log.failed), (2000, 0, 0));
        let mut sorted: Vec<u64> = rows.iter().map(|r| r.0 * 1000).collect();
        sorted.sort_unstable();
        let metrics = log.metrics();
        let h = &log.histograms()[0].hist;
        for (p, def) in LAT.percentiles {
            let want = exact(&sorted, p);
            // Exact at the histogram's precision: the same bucket.
            assert_eq!(
                value(&metrics, def),
                h.highest_equivalent(want) as f64,
                "p{p}: exact {want}"
            );
            let rel = (value(&metrics, def) - want as f64).abs() / want as f64;
            assert!(rel < 1e-3, "p{p}: {rel}");
        }
        let max = *sorted.last().unwrap();
        assert_eq!(
            value(&metrics, &m::LAT_MAX_NS),
            h.highest_equivalent(max) as f64
        );
        assert_eq!(value(&metrics, &m::LOGGED_TRANSACTIONS), 2000.0);
        assert!(metrics
            .iter()
            .all(|x| !std::ptr::eq(x.def, &m::LAT_MEAN_NS)));
        assert!(
            log.histograms().len() == 1,
            "no service latency closed-loop"
        );
    }

    #[test]
    fn the_threads_files_merge_exactly() {
        let rows = lines(&CLOSED);
        let both = read(&CLOSED, origin(&rows), false);
        let mut merged = read(&CLOSED[..1], origin(&rows), false).lat;
        merged
            .add(read(&CLOSED[1..], origin(&rows), false).lat)
            .unwrap();
        assert_eq!(both.lat, merged);
    }

    #[test]
    fn per_second_percentiles_cover_the_whole_seconds() {
        let rows = lines(&RATE);
        let o = origin(&rows);
        let log = read(&RATE, o, true);
        let series = log.series();
        let whole = ((rows.iter().map(|r| r.2).max().unwrap() - o) / 1_000_000) as usize;
        assert!(whole >= 3, "a 4 s run: {whole} whole seconds");
        assert_eq!(series.len(), 3);
        assert!(series.iter().all(|s| s.values.len() == whole));
        // Each second's p99, directly.
        for (i, got) in series[1].values.iter().enumerate() {
            let mut second: Vec<u64> = rows
                .iter()
                .filter(|r| (r.2 - o) / 1_000_000 == i as u64)
                .map(|r| r.0 * 1000)
                .collect();
            second.sort_unstable();
            assert_eq!(
                *got,
                log.lat.highest_equivalent(exact(&second, 99.0)) as f64,
                "second {i}"
            );
        }
        // A log under a second long has no whole second.
        let closed = lines(&CLOSED);
        assert!(read(&CLOSED, origin(&closed), false).series().is_empty());
    }

    #[test]
    fn a_rate_limited_log_counts_skipped_and_gives_service_latency() {
        let rows = lines(&RATE);
        let log = read(&RATE, origin(&rows), true);
        // The summary of this run (testdata/pg15_rate_latency_limit.stdout):
        // 669 processed, 124 skipped, 190 above the 10 ms limit.
        assert_eq!((log.logged, log.skipped), (669, 124));
        let late = rows.iter().filter(|r| r.0 > 10_000).count();
        assert_eq!(late, 190);
        let mut service: Vec<u64> = rows.iter().map(|r| (r.0 - r.1.unwrap()) * 1000).collect();
        service.sort_unstable();
        let metrics = log.metrics();
        let want = exact(&service, 99.0);
        assert_eq!(
            value(&metrics, &m::SERVICE_LAT_P99_NS),
            log.service.highest_equivalent(want) as f64
        );
        assert_eq!(log.histograms().len(), 2);
        assert!(value(&metrics, &m::SERVICE_LAT_MAX_NS) <= value(&metrics, &m::LAT_MAX_NS));
    }

    #[test]
    fn malformed_lines_are_errors_naming_file_and_line() {
        let mut log = TxLog::new(0, false);
        let err = log
            .add("0 1 100 0 1 2\n0 2 abc 0 1 2\n".as_bytes(), "f")
            .unwrap_err();
        assert!(format!("{err:#}").contains("f:2"), "{err:#}");
        let mut rated = TxLog::new(0, true);
        assert!(rated.add("0 1 100 0 1 2\n".as_bytes(), "g").is_err());
        assert!(TxLog::new(0, false).add("1 2 3\n".as_bytes(), "h").is_err());
    }

    #[test]
    fn the_files_of_a_prefix_are_found_and_read() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("pgbench_log");
        assert!(read_dir(&prefix, 0, false).is_err(), "no files: an error");
        std::fs::write(dir.path().join("pgbench_log.7"), CLOSED[0]).unwrap();
        std::fs::write(dir.path().join("pgbench_log.7.1"), CLOSED[1]).unwrap();
        std::fs::write(dir.path().join("other"), "x").unwrap();
        let rows = lines(&CLOSED);
        let log = read_dir(&prefix, origin(&rows), false).unwrap();
        assert_eq!(log.logged, 2000);
    }
}
