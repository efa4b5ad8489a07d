//! fio's JSON+ output → storlab metrics.
//!
//! Completion latency (`clat_ns`) comes with its histogram buckets in JSON+
//! (`bins`: bucket value in ns → count). The buckets of every job and
//! direction are summed into one HDR histogram, so the run's percentiles are
//! those of all its I/Os together — never an average of per-job
//! percentiles. Mean and max are exact: the count-weighted mean and the
//! largest max fio reports. Run time is the sum over reporting groups
//! (stonewalled phases) of their longest job; bandwidth and IOPS are the
//! run's bytes and I/Os over it, as fio's group summary computes them.
//! Each job's own figures are labelled `job` = N, N its place in fio's
//! `jobs` array (job sections in order, `numjobs` clones expanded); each
//! device of `disk_util` gives `disk_*` figures labelled `device`.
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
    /// Absent when no block device lies under the job's files (tmpfs).
    #[serde(default)]
    pub disk_util: Vec<DiskUtil>,
}

#[derive(Debug, Deserialize)]
pub struct JobJson {
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

/// One direction's totals.
#[derive(Default)]
struct Totals {
    bytes: f64,
    ios: f64,
}

/// One job's figures.
struct Job {
    group: i64,
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

    /// `bw_bytes_per_s`, `iops`, `bytes` and `lat_*` labelled `job` = i.
    fn metrics(&self, i: usize) -> Vec<Metric> {
        let job = Labels::new().with(&JOB, i);
        let t = self.runtime_s.max(1e-9);
        let mut out = vec![
            m::BW_BYTES_PER_S.labelled(job.clone(), self.bytes() / t),
            m::IOPS.labelled(job.clone(), self.ios() / t),
            m::BYTES.labelled(job.clone(), self.bytes()),
        ];
        out.extend(self.lat().metrics(&LAT, &job));
        out
    }
}

/// The run's metrics and histograms from fio's JSON+ report, with fio's
/// version as the run's fact `fio_version`.
pub fn to_run_output(report: &FioReport) -> Result<RunOutput> {
    let jobs = report
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| Job::from_json(j, i))
        .collect::<Result<Vec<Job>>>()?;
    let mut groups: BTreeMap<i64, f64> = BTreeMap::new();
    for j in &jobs {
        let g = groups.entry(j.group).or_default();
        *g = g.max(j.runtime_s);
    }
    let elapsed = groups.values().sum::<f64>().max(1e-9);
    let mut dirs: Vec<(Totals, Lat)> = DIRECTIONS
        .iter()
        .map(|_| (Totals::default(), Lat::empty()))
        .collect();
    let (mut sync, mut user, mut sys) = (Lat::empty(), 0.0, 0.0);
    for j in &jobs {
        for ((total, lat), (jt, jl)) in dirs.iter_mut().zip(&j.dirs) {
            total.bytes += jt.bytes;
            total.ios += jt.ios;
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
    ];
    metrics.extend(all.metrics(&LAT, &none));
    let active = dirs.iter().filter(|(t, _)| t.ios > 0.0).count();
    if active > 1 {
        for ((bw, hist), (t, l)) in DIRECTION_METRICS.iter().zip(&dirs) {
            if t.ios > 0.0 {
                metrics.push(bw.value(t.bytes / elapsed));
                metrics.extend(l.metrics(hist, &none));
            }
        }
    }
    metrics.extend(sync.metrics(&SYNC_LAT, &none));
    for (i, j) in jobs.iter().enumerate() {
        metrics.extend(j.metrics(i));
    }
    for d in &report.disk_util {
        metrics.extend(disk_metrics(d));
    }
    let mut out = RunOutput {
        metrics,
        facts: vec![("fio_version".to_string(), report.version.clone())],
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

    fn run_output(jobs: Vec<Value>) -> RunOutput {
        to_run_output(&parse(&stdout(jobs)).unwrap().unwrap()).unwrap()
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
    fn stonewalled_groups_add_up() {
        let out = run_output(vec![
            job("a", 0, json!({"1000": 100}), 100, 1000.0, 1000.0),
            job("b", 1, json!({"1000": 100}), 100, 1000.0, 1000.0),
        ]);
        assert_eq!(get(&out, &m::ELAPSED_S), 4.0);
        assert_eq!(get(&out, &m::IOPS), 50.0);
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
        let err = to_run_output(&report).unwrap_err().to_string();
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
        let out = to_run_output(&report).unwrap();
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
