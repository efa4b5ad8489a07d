//! fio's JSON+ output → storlab metrics.
//!
//! Completion latency (`clat_ns`) comes with its histogram buckets in JSON+
//! (`bins`: bucket value in ns → count). The buckets of every job and
//! direction are summed into one HDR histogram, so the run's percentiles are
//! those of all its I/Os together — never an average of per-job
//! percentiles. Mean and max are exact: the count-weighted mean and the
//! largest max fio reports.
//!
//! Rates are fio's own (its "Run status group" summary): a reporting
//! group's rate in a direction is its bytes over its longest job's run time
//! in that direction (`runtime`, never `job_runtime`, which fio sums over
//! the jobs of a `group_reporting` group). Groups that ran at the same time
//! (`new_group` without `stonewall`) are one phase: the phase lasted as
//! long as its longest group. Stonewalled phases ran one after another, so
//! the run's time is the sum of its phases' ([`super::phases`] says which
//! group ran in which phase). `bw_bytes_per_s` and `iops` are the run's
//! bytes and I/Os over that time; `read_bw_bytes_per_s` and the other
//! directions are each direction's bytes over the time that direction ran
//! (the sum over phases of its longest group's run time in it).
//! Each entry of fio's `jobs` array keeps its own figures, labelled `job` =
//! N, N its place in that array (a clone of `numjobs`, or a whole group
//! under `group_reporting`), at fio's rate for it; each device of
//! `disk_util` gives `disk_*` figures labelled `device`.
//!
//! The JSON is read into typed structs: a field storlab reads that fio did
//! not write is an error naming it (`jobs[1].read: missing field
//! io_bytes`), so that a change in fio's output never shows as zeros.

use std::collections::BTreeMap;

use anyhow::{anyhow, Result};
use hdrhistogram::Histogram;
use serde::Deserialize;

use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, Metric, RunOutput};
use crate::metric::catalogue::{self as m, LAT, READ_LAT, SYNC_LAT, TRIM_LAT, WRITE_LAT};
use crate::metric::labels::{DEVICE, JOB};
use crate::metric::{HistDef, Labels, MetricDef};
use crate::warning::Warning;

use super::jobfile::JobInfo;
use super::phases;

/// Highest latency the histograms hold (one hour in ns); longer is clamped.
const MAX_NS: u64 = 3_600_000_000_000;

const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// Each direction's throughput and latency metrics, in [`DIRECTIONS`] order.
const DIRECTION_METRICS: [(&MetricDef, &HistDef); 3] = [
    (&m::READ_BW_BYTES_PER_S, &READ_LAT),
    (&m::WRITE_BW_BYTES_PER_S, &WRITE_LAT),
    (&m::TRIM_BW_BYTES_PER_S, &TRIM_LAT),
];

/// fio's JSON+ document, the parts storlab reads. Every field is required
/// unless fio itself leaves it out in a normal run (said at the field).
#[derive(Debug, Deserialize)]
pub struct FioReport {
    #[serde(rename = "fio version")]
    pub version: String,
    pub jobs: Vec<JobJson>,
    /// Options of every job, as fio echoes them (flags left out).
    #[serde(rename = "global options", default)]
    pub global_options: BTreeMap<String, serde_json::Value>,
    /// Absent when no block device lies under the job's files (tmpfs).
    #[serde(default)]
    pub disk_util: Vec<DiskUtil>,
}

#[derive(Debug, Deserialize)]
pub struct JobJson {
    pub jobname: String,
    pub groupid: i64,
    /// Milliseconds.
    pub job_runtime: f64,
    /// Percent of the job's run time.
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    pub read: DirJson,
    pub write: DirJson,
    pub trim: DirJson,
    pub sync: SyncJson,
    /// The job's own options, as fio echoes them (flags left out).
    #[serde(rename = "job options", default)]
    pub options: BTreeMap<String, serde_json::Value>,
}

impl JobJson {
    /// The job's option `key` (its own, else the global one) as text.
    fn option<'a>(&'a self, report: &'a FioReport, key: &str) -> Option<&'a str> {
        self.options
            .get(key)
            .or_else(|| report.global_options.get(key))
            .and_then(|v| v.as_str())
    }

    /// The syncs the job made: fio's counted fsync/fdatasync calls, one
    /// for `end_fsync` or `fsync_on_close` (which fio does not count) when
    /// it wrote, and every write with `sync` (O_SYNC/O_DSYNC).
    fn syncs(&self, report: &FioReport) -> u64 {
        let on = |k: &str| self.option(report, k).is_some_and(|v| v != "0");
        let wrote = self.write.total_ios > 0;
        let at_end = u64::from(wrote && (on("end_fsync") || on("fsync_on_close")));
        let o_sync = match self.option(report, "sync") {
            Some("1" | "sync" | "dsync") => self.write.total_ios,
            _ => 0,
        };
        self.sync.total_ios + at_end + o_sync
    }
}

#[derive(Debug, Deserialize)]
pub struct DirJson {
    pub io_bytes: u64,
    pub total_ios: u64,
    /// Milliseconds.
    pub runtime: f64,
    pub clat_ns: LatJson,
}

#[derive(Debug, Deserialize)]
pub struct SyncJson {
    pub total_ios: u64,
    pub lat_ns: LatJson,
}

/// A latency object (`clat_ns`, `sync.lat_ns`).
#[derive(Debug, Deserialize)]
pub struct LatJson {
    #[serde(rename = "N")]
    pub n: u64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Bucket value in ns → count; JSON+ leaves it out when N is 0.
    pub bins: Option<BTreeMap<String, u64>>,
}

/// One device's figures over the run, from its /proc/diskstats.
#[derive(Debug, Deserialize)]
pub struct DiskUtil {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    /// Milliseconds.
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    /// Percent of the run the device was busy.
    pub util: f64,
}

/// Where fio's JSON starts in its stdout: the first line that opens an
/// object (notes may precede it).
fn json_start(stdout: &str) -> Option<usize> {
    stdout
        .match_indices('{')
        .map(|(i, _)| i)
        .find(|&i| i == 0 || stdout[..i].ends_with('\n'))
}

/// The text of the first JSON value in fio's stdout, if there is one.
fn json_text(stdout: &str) -> Option<&str> {
    let start = json_start(stdout)?;
    let mut stream =
        serde_json::Deserializer::from_str(&stdout[start..]).into_iter::<serde::de::IgnoredAny>();
    stream.next()?.ok()?;
    Some(&stdout[start..start + stream.byte_offset()])
}

/// fio's JSON+ report in `stdout`: `None` when fio printed no JSON, an
/// error naming the first field storlab needs that is missing or mistyped.
pub fn parse(stdout: &str) -> Option<Result<FioReport>> {
    let text = json_text(stdout)?;
    let de = &mut serde_json::Deserializer::from_str(text);
    Some(serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        anyhow!(
            "fio's JSON+ output does not have what storlab reads at `{path}`: {}; storlab reads fio 3.x's --output-format=json+",
            e.inner()
        )
    }))
}

/// Each job's name and error code, all a failure message needs: read
/// leniently, since a failed fio may print a partial report.
#[derive(Debug, Deserialize)]
struct Statuses {
    jobs: Vec<Status>,
}

#[derive(Debug, Deserialize)]
struct Status {
    #[serde(default)]
    jobname: String,
    #[serde(default)]
    error: i32,
}

/// Lines of stdout that are not the JSON: fio's own notes and errors.
pub fn notes(stdout: &str) -> String {
    stdout[..json_start(stdout).unwrap_or(stdout.len())].to_string()
}

/// `job `name` (#N): error 28 (No space left on device)` for each failed
/// job in fio's stdout.
pub fn job_errors(stdout: &str) -> Vec<String> {
    let Some(statuses) = json_text(stdout).and_then(|t| serde_json::from_str::<Statuses>(t).ok())
    else {
        return Vec::new();
    };
    statuses
        .jobs
        .iter()
        .enumerate()
        .filter(|(_, j)| j.error != 0)
        .map(|(i, j)| {
            let os = std::io::Error::from_raw_os_error(j.error).to_string();
            let text = os.split(" (os error").next().unwrap_or(&os);
            format!("job `{}` (#{i}): error {} ({text})", j.jobname, j.error)
        })
        .collect()
}

/// A latency distribution: exact count, mean, min and max, and the buckets.
struct Lat {
    n: u64,
    mean: f64,
    min: f64,
    max: f64,
    hist: Histogram<u64>,
}

impl Lat {
    fn empty() -> Lat {
        Lat {
            n: 0,
            mean: 0.0,
            min: f64::INFINITY,
            max: 0.0,
            hist: new_histogram(),
        }
    }

    /// From a JSON+ latency object (`clat_ns`, `sync.lat_ns`) at `path`.
    fn from_json(v: &LatJson, path: &str) -> Result<Lat> {
        let mut lat = Lat::empty();
        lat.n = v.n;
        lat.mean = v.mean;
        if lat.n > 0 {
            lat.min = v.min;
        }
        lat.max = v.max;
        let bins = match (&v.bins, v.n) {
            (Some(b), _) => b,
            (None, 0) => return Ok(lat),
            (None, _) => {
                return Err(anyhow!(
                    "fio's output has no `{path}.bins` for {} latencies: storlab reads --output-format=json+",
                    v.n
                ))
            }
        };
        for (value, &count) in bins {
            let ns: u64 = value.parse().map_err(|_| {
                anyhow!("fio's output has a bucket `{value}` in `{path}.bins` that is not a number of ns")
            })?;
            let _ = lat.hist.record_n(ns.clamp(1, MAX_NS), count);
        }
        Ok(lat)
    }

    fn merge(&mut self, other: &Lat) {
        let n = self.n + other.n;
        if n > 0 {
            self.mean = (self.mean * self.n as f64 + other.mean * other.n as f64) / n as f64;
        }
        self.n = n;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        let _ = self.hist.add(&other.hist);
    }

    /// The metrics of histogram `def`: percentiles from the buckets, mean
    /// and max exact. A bucket's value may lie past the exact extremes fio
    /// saw; percentiles are kept within them.
    fn metrics(&self, def: &'static HistDef, labels: &Labels) -> Vec<Metric> {
        if self.n == 0 {
            return Vec::new();
        }
        let mut out = latency_metrics(def, labels, &self.hist);
        if out.is_empty() {
            // No buckets (fio without JSON+): the exact figures alone.
            out.push(def.mean.labelled(labels.clone(), self.mean));
            out.push(def.max.labelled(labels.clone(), self.max));
        }
        for x in &mut out {
            x.value = x.value.clamp(self.min.min(self.max), self.max);
            if std::ptr::eq(x.def, def.mean) {
                x.value = self.mean;
            } else if std::ptr::eq(x.def, def.max) {
                x.value = self.max;
            }
        }
        out
    }
}

/// One direction's totals and the time it ran (fio's `runtime`: the
/// longest job's, for a group).
#[derive(Default, Clone, Copy)]
struct Totals {
    bytes: f64,
    ios: f64,
    runtime_s: f64,
}

impl Totals {
    /// Adds `other` as fio adds a job to its group: bytes and I/Os summed,
    /// the longer run time kept.
    fn add(&mut self, other: &Totals) {
        self.bytes += other.bytes;
        self.ios += other.ios;
        self.runtime_s = self.runtime_s.max(other.runtime_s);
    }
}

/// The time a set of directions ran: the longest of them (a mixed job's
/// directions run together), or `fallback` when none did I/O.
fn io_time(dirs: &[Totals], fallback: f64) -> f64 {
    match dirs.iter().map(|t| t.runtime_s).fold(0.0, f64::max) {
        t if t > 0.0 => t,
        _ => fallback,
    }
}

/// One entry of fio's `jobs` array: a job, or a `group_reporting` group.
struct Job {
    group: i64,
    /// fio's `job_runtime` (summed over a group's jobs), for CPU time only.
    runtime_s: f64,
    cpu_user_s: f64,
    cpu_sys_s: f64,
    dirs: Vec<(Totals, Lat)>,
    sync: Lat,
}

impl Job {
    fn from_json(j: &JobJson, i: usize) -> Result<Job> {
        let sides = [&j.read, &j.write, &j.trim];
        let mut dirs = Vec::new();
        for (d, side) in DIRECTIONS.iter().zip(sides) {
            let totals = Totals {
                bytes: side.io_bytes as f64,
                ios: side.total_ios as f64,
                runtime_s: side.runtime / 1e3,
            };
            let lat = Lat::from_json(&side.clat_ns, &format!("jobs[{i}].{d}.clat_ns"))?;
            dirs.push((totals, lat));
        }
        let dir_runtime_ms = sides.iter().map(|s| s.runtime).fold(0.0, f64::max);
        // A job that ended at once reports 0; its directions still say how long.
        let runtime_ms = match j.job_runtime {
            r if r > 0.0 => r,
            _ => dir_runtime_ms,
        };
        let runtime_s = runtime_ms / 1e3;
        Ok(Job {
            group: j.groupid,
            runtime_s,
            cpu_user_s: j.usr_cpu / 100.0 * runtime_s,
            cpu_sys_s: j.sys_cpu / 100.0 * runtime_s,
            dirs,
            sync: Lat::from_json(&j.sync.lat_ns, &format!("jobs[{i}].sync.lat_ns"))?,
        })
    }

    fn bytes(&self) -> f64 {
        self.dirs.iter().map(|(t, _)| t.bytes).sum()
    }

    fn ios(&self) -> f64 {
        self.dirs.iter().map(|(t, _)| t.ios).sum()
    }

    fn lat(&self) -> Lat {
        let mut all = Lat::empty();
        for (_, l) in &self.dirs {
            all.merge(l);
        }
        all
    }

    fn totals(&self) -> Vec<Totals> {
        self.dirs.iter().map(|(t, _)| *t).collect()
    }

    /// `bw_bytes_per_s`, `iops`, `bytes` and `lat_*` labelled `job` = i,
    /// over the time the entry did I/O, as fio rates it.
    fn metrics(&self, i: usize) -> Vec<Metric> {
        let job = Labels::new().with(&JOB, i);
        let t = io_time(&self.totals(), self.runtime_s).max(1e-9);
        let mut out = vec![
            m::BW_BYTES_PER_S.labelled(job.clone(), self.bytes() / t),
            m::IOPS.labelled(job.clone(), self.ios() / t),
            m::BYTES.labelled(job.clone(), self.bytes()),
        ];
        out.extend(self.lat().metrics(&LAT, &job));
        out
    }
}

/// The run's time and each direction's, from its entries' totals and the
/// phase each reporting group ran in.
struct Timing {
    elapsed_s: f64,
    /// In [`DIRECTIONS`] order.
    dir_s: Vec<f64>,
}

impl Timing {
    fn of(jobs: &[Job], phase_of: &BTreeMap<i64, usize>) -> Timing {
        // Each group as fio's summary has it: bytes summed, longest run.
        let mut groups: BTreeMap<i64, (Vec<Totals>, f64)> = BTreeMap::new();
        for j in jobs {
            let (dirs, longest) = groups
                .entry(j.group)
                .or_insert_with(|| (vec![Totals::default(); DIRECTIONS.len()], 0.0));
            for (d, t) in dirs.iter_mut().zip(j.totals()) {
                d.add(&t);
            }
            *longest = f64::max(*longest, j.runtime_s);
        }
        // Groups of one phase ran together: the longest decides.
        let mut phases: BTreeMap<usize, (f64, Vec<f64>)> = BTreeMap::new();
        for (g, (dirs, longest)) in &groups {
            let phase = phases
                .entry(phase_of.get(g).copied().unwrap_or(usize::MAX))
                .or_insert_with(|| (0.0, vec![0.0; DIRECTIONS.len()]));
            phase.0 = phase.0.max(io_time(dirs, *longest));
            for (p, d) in phase.1.iter_mut().zip(dirs) {
                *p = p.max(d.runtime_s);
            }
        }
        let mut t = Timing {
            elapsed_s: 0.0,
            dir_s: vec![0.0; DIRECTIONS.len()],
        };
        for (elapsed, dirs) in phases.values() {
            t.elapsed_s += elapsed;
            for (total, d) in t.dir_s.iter_mut().zip(dirs) {
                *total += d;
            }
        }
        t
    }
}

/// The phase of each reporting group, and a warning when the job file could
/// not say (then every group is taken to have run alone, one after another).
fn group_phases(report: &FioReport, jobs: &[JobInfo]) -> (BTreeMap<i64, usize>, Option<String>) {
    let entries: Vec<(&str, i64)> = report
        .jobs
        .iter()
        .map(|j| (j.jobname.as_str(), j.groupid))
        .collect();
    match phases::assign(jobs, &entries) {
        Ok(p) => (p, None),
        Err(why) => {
            let alone: BTreeMap<i64, usize> = entries
                .iter()
                .map(|&(_, g)| g)
                .collect::<std::collections::BTreeSet<i64>>()
                .into_iter()
                .enumerate()
                .map(|(i, g)| (g, i))
                .collect();
            let warning = (alone.len() > 1).then(|| {
                format!("storlab could not tell which of fio's reporting groups ran at the same time ({why}); the run's time counts them one after another, so its rates may be low")
            });
            (alone, warning)
        }
    }
}

/// The run's metrics and histograms from fio's JSON+ report, with fio's
/// version as the run's fact `fio_version`. `jobs` are the job file's jobs
/// (what fio ran), which say which reporting groups ran at the same time.
pub fn to_run_output(report: &FioReport, jobs: &[JobInfo]) -> Result<RunOutput> {
    let entries = report
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| Job::from_json(j, i))
        .collect::<Result<Vec<Job>>>()?;
    let (phase_of, warning) = group_phases(report, jobs);
    let timing = Timing::of(&entries, &phase_of);
    let elapsed = timing.elapsed_s.max(1e-9);
    let mut dirs: Vec<(Totals, Lat)> = DIRECTIONS
        .iter()
        .map(|_| (Totals::default(), Lat::empty()))
        .collect();
    let (mut sync, mut user, mut sys) = (Lat::empty(), 0.0, 0.0);
    for j in &entries {
        for ((total, lat), (jt, jl)) in dirs.iter_mut().zip(&j.dirs) {
            total.add(jt);
            lat.merge(jl);
        }
        sync.merge(&j.sync);
        user += j.cpu_user_s;
        sys += j.cpu_sys_s;
    }
    let bytes: f64 = dirs.iter().map(|(t, _)| t.bytes).sum();
    let ios: f64 = dirs.iter().map(|(t, _)| t.ios).sum();
    let mut all = Lat::empty();
    for (_, l) in &dirs {
        all.merge(l);
    }
    let none = Labels::new();
    let mut metrics = vec![
        m::BW_BYTES_PER_S.value(bytes / elapsed),
        m::IOPS.value(ios / elapsed),
        m::BYTES.value(bytes),
        m::READ_BYTES.value(dirs[0].0.bytes),
        m::WRITE_BYTES.value(dirs[1].0.bytes),
        m::OPS.value(ios),
        m::ELAPSED_S.value(elapsed),
        m::CPU_USER_S.value(user),
        m::CPU_SYS_S.value(sys),
        m::SYNCS.value(report.jobs.iter().map(|j| j.syncs(report)).sum::<u64>() as f64),
    ];
    metrics.extend(all.metrics(&LAT, &none));
    let active = dirs.iter().filter(|(t, _)| t.ios > 0.0).count();
    if active > 1 {
        for (((bw, hist), (t, l)), secs) in DIRECTION_METRICS.iter().zip(&dirs).zip(&timing.dir_s) {
            if t.ios > 0.0 {
                metrics.push(bw.value(t.bytes / secs.max(1e-9)));
                metrics.extend(l.metrics(hist, &none));
            }
        }
    }
    metrics.extend(sync.metrics(&SYNC_LAT, &none));
    for (i, j) in entries.iter().enumerate() {
        metrics.extend(j.metrics(i));
    }
    for d in &report.disk_util {
        metrics.extend(disk_metrics(d));
    }
    let mut out = RunOutput {
        metrics,
        facts: vec![("fio_version".to_string(), report.version.clone())],
        warnings: warning.into_iter().map(Warning::note).collect(),
        ..Default::default()
    };
    out.histograms.push(Hist::new(&LAT, all.hist));
    if sync.n > 0 {
        out.histograms.push(Hist::new(&SYNC_LAT, sync.hist));
    }
    Ok(out)
}

/// What a device under the job's files did during the run, as fio read it
/// from /proc/diskstats (ticks in seconds), labelled with its name.
fn disk_metrics(d: &DiskUtil) -> Vec<Metric> {
    let device = Labels::new().with(&DEVICE, &d.name);
    let s = |ms: u64| ms as f64 / 1e3;
    [
        (&m::DISK_UTIL_PCT, d.util),
        (&m::DISK_READ_IOS, d.read_ios as f64),
        (&m::DISK_WRITE_IOS, d.write_ios as f64),
        (&m::DISK_READ_MERGES, d.read_merges as f64),
        (&m::DISK_WRITE_MERGES, d.write_merges as f64),
        (&m::DISK_READ_TICKS_S, s(d.read_ticks)),
        (&m::DISK_WRITE_TICKS_S, s(d.write_ticks)),
        (&m::DISK_IN_QUEUE_S, s(d.in_queue)),
    ]
    .into_iter()
    .map(|(def, v)| def.labelled(device.clone(), v))
    .collect()
}

#[cfg(test)]
mod against_fio;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn job(name: &str, group: i64, bins: Value, n: u64, mean: f64, max: f64) -> Value {
        json!({
            "jobname": name, "groupid": group, "error": 0, "job_runtime": 2000,
            "usr_cpu": 10.0, "sys_cpu": 50.0,
            "read": {"io_bytes": n * 4096, "total_ios": n, "runtime": 2000,
                     "clat_ns": {"N": n, "mean": mean, "max": max, "min": 1, "bins": bins}},
            "write": {"io_bytes": 0, "total_ios": 0, "runtime": 0,
                      "clat_ns": {"N": 0, "mean": 0.0, "max": 0, "min": 0}},
            "trim": {"io_bytes": 0, "total_ios": 0, "runtime": 0,
                     "clat_ns": {"N": 0, "mean": 0.0, "max": 0, "min": 0}},
            "sync": {"total_ios": 0, "lat_ns": {"N": 0, "mean": 0.0, "max": 0, "min": 0}}
        })
    }

    /// fio's stdout for `jobs`, as fio 3.33 lays it out.
    fn stdout(jobs: Vec<Value>) -> String {
        serde_json::to_string_pretty(&json!({"fio version": "fio-3.33", "jobs": jobs})).unwrap()
    }

    /// The run output of `jobs` run from the job file `text`.
    fn run_output_of(text: &str, jobs: Vec<Value>) -> RunOutput {
        let report = parse(&stdout(jobs)).unwrap().unwrap();
        to_run_output(&report, &super::super::jobfile::jobs(text)).unwrap()
    }

    fn run_output(jobs: Vec<Value>) -> RunOutput {
        run_output_of("[a]\n[b]\n", jobs)
    }

    fn get(out: &RunOutput, def: &MetricDef) -> f64 {
        out.metric(def)
            .unwrap_or_else(|| panic!("no metric {}", def.name))
    }

    fn of_job(out: &RunOutput, def: &MetricDef, i: usize) -> f64 {
        out.labelled(def, &Labels::new().with(&JOB, i))
            .unwrap_or_else(|| panic!("no metric {} of job {i}", def.name))
    }

    #[test]
    fn percentiles_are_merged_from_buckets_not_averaged() {
        // Job 0: 100 I/Os at 1 µs; job 1: 300 I/Os at 9 µs. Averaging the
        // jobs' medians would say 5 µs; the merged median is 9 µs.
        let out = run_output(vec![
            job("a", 0, json!({"1000": 100}), 100, 1000.0, 1000.0),
            job("b", 0, json!({"9000": 300}), 300, 9000.0, 9000.0),
        ]);
        let p50 = get(&out, &m::LAT_P50_NS);
        assert!((p50 - 9000.0).abs() / 9000.0 < 0.002, "{p50}");
        let p90 = get(&out, &m::LAT_P90_NS);
        assert!((p90 - 9000.0).abs() / 9000.0 < 0.002, "{p90}");
        assert_eq!(get(&out, &m::LAT_MEAN_NS), 7000.0);
        assert_eq!(get(&out, &m::LAT_MAX_NS), 9000.0);
        assert_eq!(of_job(&out, &m::LAT_P50_NS, 0).round(), 1000.0);
        assert_eq!(out.histograms[0].hist.len(), 400);
        // Both jobs ran 2 s in one group: 400 I/Os over 2 s.
        assert_eq!(get(&out, &m::IOPS), 200.0);
        assert_eq!(get(&out, &m::BW_BYTES_PER_S), 200.0 * 4096.0);
        assert_eq!(of_job(&out, &m::IOPS, 1), 150.0);
        assert!((get(&out, &m::CPU_SYS_S) - 2.0).abs() < 1e-9);
        assert!(out.metric(&m::READ_BW_BYTES_PER_S).is_none());
    }

    #[test]
    fn percentiles_stay_within_the_exact_extremes() {
        // fio's bucket value (9216) lies past the largest latency it saw.
        let out = run_output(vec![job("a", 0, json!({"9216": 10}), 10, 9000.0, 9100.0)]);
        assert_eq!(get(&out, &m::LAT_P99_NS), 9100.0);
        assert_eq!(get(&out, &m::LAT_MAX_NS), 9100.0);
    }

    #[test]
    fn stonewalled_groups_add_up_and_concurrent_groups_overlap() {
        let jobs = || {
            vec![
                job("a", 0, json!({"1000": 100}), 100, 1000.0, 1000.0),
                job("b", 1, json!({"1000": 100}), 100, 1000.0, 1000.0),
            ]
        };
        let out = run_output_of("[a]\n[b]\nstonewall\n", jobs());
        assert_eq!(get(&out, &m::ELAPSED_S), 4.0);
        assert_eq!(get(&out, &m::IOPS), 50.0);
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        let out = run_output_of("[a]\n[b]\nnew_group\n", jobs());
        assert_eq!(get(&out, &m::ELAPSED_S), 2.0);
        assert_eq!(get(&out, &m::IOPS), 100.0);
        // A job file that does not match: groups counted one after
        // another, said so.
        let out = run_output_of("[x]\n", jobs());
        assert_eq!(get(&out, &m::ELAPSED_S), 4.0);
        assert!(
            out.warnings[0].text.contains("could not tell"),
            "{:?}",
            out.warnings
        );
    }

    #[test]
    fn a_group_reporting_entry_is_rated_over_its_run_time_not_the_sum_of_its_jobs() {
        // fio sums `job_runtime` over the 4 jobs of the group (8 s); each
        // direction's `runtime` is the longest job's (2 s).
        let mut merged = job("a", 0, json!({"1000": 400}), 400, 1000.0, 1000.0);
        merged["job_runtime"] = json!(8000);
        let out = run_output_of("[a]\nnumjobs=4\ngroup_reporting\n", vec![merged]);
        assert_eq!(get(&out, &m::ELAPSED_S), 2.0);
        assert_eq!(get(&out, &m::IOPS), 200.0);
        assert_eq!(of_job(&out, &m::IOPS, 0), 200.0);
        // CPU: fio's percentages are of the summed job_runtime.
        assert!((get(&out, &m::CPU_SYS_S) - 4.0).abs() < 1e-9);
    }

    #[test]
    fn json_is_found_after_notes_and_errors_are_named() {
        let text =
            "note: something\n{\n \"jobs\": [{\"jobname\": \"x\", \"error\": 28}]\n}\ntrailing\n";
        assert_eq!(notes(text), "note: something\n");
        let errors = job_errors(text);
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors[0],
            "job `x` (#0): error 28 (No space left on device)"
        );
        assert!(parse("fio: failed\n").is_none());
        // A partial report is no report.
        assert!(parse(text).unwrap().is_err());
    }

    #[test]
    fn a_missing_field_is_an_error_naming_it_not_a_zero() {
        let mut second = job("b", 0, json!({"1000": 10}), 10, 1000.0, 1000.0);
        second["read"].as_object_mut().unwrap().remove("io_bytes");
        let text = stdout(vec![
            job("a", 0, json!({"1000": 10}), 10, 1000.0, 1000.0),
            second,
        ]);
        let err = parse(&text).unwrap().unwrap_err().to_string();
        assert!(err.contains("`jobs[1].read`"), "{err}");
        assert!(err.contains("missing field `io_bytes`"), "{err}");

        let mut renamed = job("a", 0, json!({"1000": 10}), 10, 1000.0, 1000.0);
        let lat = renamed["read"]["clat_ns"].as_object_mut().unwrap();
        let n = lat.remove("N").unwrap();
        lat.insert("count".into(), n);
        let err = parse(&stdout(vec![renamed]))
            .unwrap()
            .unwrap_err()
            .to_string();
        assert!(err.contains("`jobs[0].read.clat_ns`"), "{err}");
        assert!(err.contains("missing field `N`"), "{err}");

        let err = parse(r#"{"jobs": []}"#).unwrap().unwrap_err().to_string();
        assert!(err.contains("missing field `fio version`"), "{err}");

        // Latencies without buckets (plain JSON, not JSON+): no percentiles
        // to give, said so.
        let mut plain = job("a", 0, json!({}), 10, 1000.0, 1000.0);
        plain["read"]["clat_ns"]
            .as_object_mut()
            .unwrap()
            .remove("bins");
        let report = parse(&stdout(vec![plain])).unwrap().unwrap();
        let err = to_run_output(&report, &[]).unwrap_err().to_string();
        assert!(err.contains("`jobs[0].read.clat_ns.bins`"), "{err}");
    }

    #[test]
    fn the_version_and_disk_figures_are_kept() {
        let mut doc = json!({
            "fio version": "fio-3.33",
            "jobs": [job("a", 0, json!({"1000": 10}), 10, 1000.0, 1000.0)],
            "disk_util": [{"name": "loop3", "read_ios": 10, "write_ios": 2,
                "read_merges": 1, "write_merges": 0, "read_ticks": 1500,
                "write_ticks": 20, "in_queue": 1520, "util": 87.5}]
        });
        let report = parse(&doc.to_string()).unwrap().unwrap();
        let out = to_run_output(&report, &[]).unwrap();
        assert_eq!(
            out.facts,
            vec![("fio_version".to_string(), "fio-3.33".to_string())]
        );
        let loop3 = Labels::new().with(&DEVICE, "loop3");
        let disk = |def: &MetricDef| out.labelled(def, &loop3).unwrap();
        assert_eq!(disk(&m::DISK_UTIL_PCT), 87.5);
        assert_eq!(disk(&m::DISK_READ_IOS), 10.0);
        assert_eq!(disk(&m::DISK_READ_TICKS_S), 1.5);
        assert_eq!(disk(&m::DISK_IN_QUEUE_S), 1.52);
        // A device entry missing a figure is an error too.
        doc["disk_util"][0].as_object_mut().unwrap().remove("util");
        let err = parse(&doc.to_string()).unwrap().unwrap_err().to_string();
        assert!(err.contains("`disk_util[0]`"), "{err}");
    }
}
