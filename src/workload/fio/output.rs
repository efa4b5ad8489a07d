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
//! Each job's own figures are kept under `job<N>_`, N its place in fio's
//! `jobs` array (job sections in order, `numjobs` clones expanded).

use std::collections::BTreeMap;

use anyhow::{anyhow, Result};
use hdrhistogram::Histogram;
use serde::Deserialize;

use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, Metric, RunOutput};

/// Highest latency the histograms hold (one hour in ns); longer is clamped.
const MAX_NS: u64 = 3_600_000_000_000;

const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// fio's JSON+ document, the parts storlab reads. Every field is required
/// unless fio itself leaves it out in a normal run (said at the field): a
/// change in fio's output is an error naming the field, never a zero.
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
            (None, _) => return Err(anyhow!(
                "fio's output has no `{path}.bins` for {} latencies: storlab reads --output-format=json+",
                v.n
            )),
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

    /// `{prefix}_mean_ns`, percentiles from the buckets, `{prefix}_max_ns`.
    /// A bucket's value may lie past the exact extremes fio saw; percentiles
    /// are kept within them.
    fn metrics(&self, prefix: &str) -> Vec<Metric> {
        if self.n == 0 {
            return Vec::new();
        }
        let mut m = latency_metrics(prefix, &self.hist);
        for x in &mut m {
            x.value = x.value.clamp(self.min.min(self.max), self.max);
        }
        let exact = [("mean", self.mean), ("max", self.max)];
        for (label, value) in exact {
            let name = format!("{prefix}_{label}_ns");
            match m.iter_mut().find(|x| x.name == name) {
                Some(x) => x.value = value,
                None => m.push(Metric::lower(name, value, "ns")),
            }
        }
        m
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

    /// `job<i>_bw_bytes_per_s`, `_iops`, `_bytes`, `_lat_*`.
    fn metrics(&self, i: usize) -> Vec<Metric> {
        let p = format!("job{i}");
        let t = self.runtime_s.max(1e-9);
        let mut m = vec![
            Metric::higher(format!("{p}_bw_bytes_per_s"), self.bytes() / t, "bytes/s"),
            Metric::higher(format!("{p}_iops"), self.ios() / t, "ops/s"),
            Metric::higher(format!("{p}_bytes"), self.bytes(), "bytes"),
        ];
        m.extend(self.lat().metrics(&format!("{p}_lat")));
        m
    }
}

/// The run's metrics and histograms from fio's JSON+ report, with fio's
/// version and the devices of `disk_util` as the run's facts.
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
    let mut m = vec![
        Metric::higher("bw_bytes_per_s", bytes / elapsed, "bytes/s"),
        Metric::higher("iops", ios / elapsed, "ops/s"),
        Metric::higher("bytes", bytes, "bytes"),
        Metric::higher("ops", ios, "ops"),
        Metric::lower("elapsed_s", elapsed, "s"),
        Metric::lower("cpu_user_s", user, "s"),
        Metric::lower("cpu_sys_s", sys, "s"),
    ];
    m.extend(all.metrics("lat"));
    let active = dirs.iter().filter(|(t, _)| t.ios > 0.0).count();
    if active > 1 {
        for (d, (t, l)) in DIRECTIONS.iter().zip(&dirs) {
            if t.ios > 0.0 {
                m.push(Metric::higher(
                    format!("{d}_bw_bytes_per_s"),
                    t.bytes / elapsed,
                    "bytes/s",
                ));
                m.extend(l.metrics(&format!("{d}_lat")));
            }
        }
    }
    m.extend(sync.metrics("sync_lat"));
    for (i, j) in jobs.iter().enumerate() {
        m.extend(j.metrics(i));
    }
    let mut facts = vec![("fio_version".to_string(), report.version.clone())];
    for (i, d) in report.disk_util.iter().enumerate() {
        m.extend(disk_metrics(i, d));
        facts.push((format!("disk{i}"), d.name.clone()));
    }
    let mut out = RunOutput {
        metrics: m,
        facts,
        ..Default::default()
    };
    out.histograms.push(Hist {
        name: "lat".into(),
        unit: "ns",
        hist: all.hist,
    });
    if sync.n > 0 {
        out.histograms.push(Hist {
            name: "sync_lat".into(),
            unit: "ns",
            hist: sync.hist,
        });
    }
    Ok(out)
}

/// `disk<i>_…`: what the i-th device under the job's files did during the
/// run, as fio read it from /proc/diskstats (ticks in seconds). Its name
/// is the run's fact `disk<i>`.
fn disk_metrics(i: usize, d: &DiskUtil) -> Vec<Metric> {
    let p = format!("disk{i}");
    let s = |ms: u64| ms as f64 / 1e3;
    vec![
        Metric::lower(format!("{p}_util_pct"), d.util, "%"),
        Metric::higher(format!("{p}_read_ios"), d.read_ios as f64, "ops"),
        Metric::higher(format!("{p}_write_ios"), d.write_ios as f64, "ops"),
        Metric::higher(format!("{p}_read_merges"), d.read_merges as f64, "ops"),
        Metric::higher(format!("{p}_write_merges"), d.write_merges as f64, "ops"),
        Metric::lower(format!("{p}_read_ticks_s"), s(d.read_ticks), "s"),
        Metric::lower(format!("{p}_write_ticks_s"), s(d.write_ticks), "s"),
        Metric::lower(format!("{p}_in_queue_s"), s(d.in_queue), "s"),
    ]
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

    fn get(out: &RunOutput, name: &str) -> f64 {
        out.metric(name)
            .unwrap_or_else(|| panic!("no metric {name}"))
    }

    #[test]
    fn percentiles_are_merged_from_buckets_not_averaged() {
        // Job 0: 100 I/Os at 1 µs; job 1: 300 I/Os at 9 µs. Averaging the
        // jobs' medians would say 5 µs; the merged median is 9 µs.
        let out = run_output(vec![
            job("a", 0, json!({"1000": 100}), 100, 1000.0, 1000.0),
            job("b", 0, json!({"9000": 300}), 300, 9000.0, 9000.0),
        ]);
        let p50 = get(&out, "lat_p50_ns");
        assert!((p50 - 9000.0).abs() / 9000.0 < 0.002, "{p50}");
        let p90 = get(&out, "lat_p90_ns");
        assert!((p90 - 9000.0).abs() / 9000.0 < 0.002, "{p90}");
        assert_eq!(get(&out, "lat_mean_ns"), 7000.0);
        assert_eq!(get(&out, "lat_max_ns"), 9000.0);
        assert_eq!(get(&out, "job0_lat_p50_ns").round(), 1000.0);
        assert_eq!(out.histograms[0].hist.len(), 400);
        // Both jobs ran 2 s in one group: 400 I/Os over 2 s.
        assert_eq!(get(&out, "iops"), 200.0);
        assert_eq!(get(&out, "bw_bytes_per_s"), 200.0 * 4096.0);
        assert_eq!(get(&out, "job1_iops"), 150.0);
        assert!((get(&out, "cpu_sys_s") - 2.0).abs() < 1e-9);
        assert!(out.metric("read_bw_bytes_per_s").is_none());
    }

    #[test]
    fn percentiles_stay_within_the_exact_extremes() {
        // fio's bucket value (9216) lies past the largest latency it saw.
        let out = run_output(vec![job("a", 0, json!({"9216": 10}), 10, 9000.0, 9100.0)]);
        assert_eq!(get(&out, "lat_p99_ns"), 9100.0);
        assert_eq!(get(&out, "lat_max_ns"), 9100.0);
    }

    #[test]
    fn stonewalled_groups_add_up() {
        let out = run_output(vec![
            job("a", 0, json!({"1000": 100}), 100, 1000.0, 1000.0),
            job("b", 1, json!({"1000": 100}), 100, 1000.0, 1000.0),
        ]);
        assert_eq!(get(&out, "elapsed_s"), 4.0);
        assert_eq!(get(&out, "iops"), 50.0);
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

        let no_version = r#"{"jobs": []}"#;
        let err = parse(no_version).unwrap().unwrap_err().to_string();
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
            vec![
                ("fio_version".to_string(), "fio-3.33".to_string()),
                ("disk0".to_string(), "loop3".to_string())
            ]
        );
        assert_eq!(get(&out, "disk0_util_pct"), 87.5);
        assert_eq!(get(&out, "disk0_read_ios"), 10.0);
        assert_eq!(get(&out, "disk0_read_ticks_s"), 1.5);
        assert_eq!(get(&out, "disk0_in_queue_s"), 1.52);
        // A device entry missing a figure is an error too.
        doc["disk_util"][0].as_object_mut().unwrap().remove("util");
        let err = parse(&doc.to_string()).unwrap().unwrap_err().to_string();
        assert!(err.contains("`disk_util[0]`"), "{err}");
    }
}
