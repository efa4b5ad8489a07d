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
//! `jobs` array (job sections in order, `numjobs` clones expanded).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde_json::Value;

use crate::measure::latency::{latency_metrics, new_histogram};
use crate::measure::{Hist, Metric, RunOutput};
use crate::metric::catalogue::{self as m, LAT, READ_LAT, SYNC_LAT, TRIM_LAT, WRITE_LAT};
use crate::metric::labels::JOB;
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

/// The first JSON object in fio's stdout (notes may precede it).
pub fn parse(stdout: &str) -> Option<Value> {
    let start = stdout
        .match_indices('{')
        .map(|(i, _)| i)
        .find(|&i| i == 0 || stdout[..i].ends_with('\n'))?;
    let mut stream = serde_json::Deserializer::from_str(&stdout[start..]).into_iter::<Value>();
    stream.next()?.ok().filter(|v| v.get("jobs").is_some())
}

/// Lines of stdout that are not the JSON: fio's own notes and errors.
pub fn notes(stdout: &str) -> String {
    let end = stdout
        .match_indices('{')
        .map(|(i, _)| i)
        .find(|&i| i == 0 || stdout[..i].ends_with('\n'))
        .unwrap_or(stdout.len());
    stdout[..end].to_string()
}

/// `job `name` (#N): error 28 (No space left on device)` for each failed job.
pub fn job_errors(v: &Value) -> Vec<String> {
    jobs(v)
        .iter()
        .enumerate()
        .filter_map(|(i, j)| {
            let code = j.get("error").and_then(Value::as_i64).unwrap_or(0);
            (code != 0).then(|| {
                let os = std::io::Error::from_raw_os_error(code as i32).to_string();
                let text = os.split(" (os error").next().unwrap_or(&os);
                format!("job `{}` (#{i}): error {code} ({text})", name(j))
            })
        })
        .collect()
}

fn jobs(v: &Value) -> &[Value] {
    v.get("jobs")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn name(j: &Value) -> &str {
    j.get("jobname").and_then(Value::as_str).unwrap_or("?")
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
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

    /// From a JSON+ latency object (`clat_ns`, `sync.lat_ns`).
    fn from_json(v: Option<&Value>) -> Lat {
        let mut lat = Lat::empty();
        let Some(v) = v else {
            return lat;
        };
        lat.n = num(v, "N") as u64;
        lat.mean = num(v, "mean");
        if lat.n > 0 {
            lat.min = num(v, "min");
        }
        lat.max = num(v, "max");
        if let Some(bins) = v.get("bins").and_then(Value::as_object) {
            for (value, count) in bins {
                let (Ok(ns), Some(count)) = (value.parse::<u64>(), count.as_u64()) else {
                    continue;
                };
                let _ = lat.hist.record_n(ns.clamp(1, MAX_NS), count);
            }
        }
        lat
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
    fn from_json(j: &Value) -> Job {
        let dirs: Vec<(Totals, Lat)> = DIRECTIONS
            .iter()
            .map(|d| {
                let v = j.get(*d).unwrap_or(&Value::Null);
                let totals = Totals {
                    bytes: num(v, "io_bytes"),
                    ios: num(v, "total_ios"),
                };
                (totals, Lat::from_json(v.get("clat_ns")))
            })
            .collect();
        let dir_runtime_ms = DIRECTIONS
            .iter()
            .map(|d| num(j.get(*d).unwrap_or(&Value::Null), "runtime"))
            .fold(0.0, f64::max);
        let runtime_ms = match num(j, "job_runtime") {
            r if r > 0.0 => r,
            _ => dir_runtime_ms,
        };
        let runtime_s = runtime_ms / 1e3;
        Job {
            group: j.get("groupid").and_then(Value::as_i64).unwrap_or(0),
            runtime_s,
            cpu_user_s: num(j, "usr_cpu") / 100.0 * runtime_s,
            cpu_sys_s: num(j, "sys_cpu") / 100.0 * runtime_s,
            dirs,
            sync: Lat::from_json(j.get("sync").and_then(|s| s.get("lat_ns"))),
        }
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

/// The run's metrics and histograms from fio's JSON+ document.
pub fn to_run_output(v: &Value) -> RunOutput {
    let jobs: Vec<Job> = jobs(v).iter().map(Job::from_json).collect();
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
    let mut out = RunOutput {
        metrics,
        ..Default::default()
    };
    out.histograms.push(Hist::new(&LAT, all.hist));
    if sync.n > 0 {
        out.histograms.push(Hist::new(&SYNC_LAT, sync.hist));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(name: &str, group: i64, bins: Value, n: u64, mean: f64, max: f64) -> Value {
        json!({
            "jobname": name, "groupid": group, "error": 0, "job_runtime": 2000,
            "usr_cpu": 10.0, "sys_cpu": 50.0,
            "read": {"io_bytes": n * 4096, "total_ios": n, "runtime": 2000,
                     "clat_ns": {"N": n, "mean": mean, "max": max, "min": 1, "bins": bins}},
            "write": {"io_bytes": 0, "total_ios": 0, "runtime": 0,
                      "clat_ns": {"N": 0, "mean": 0.0, "max": 0, "min": 0}},
            "trim": {"io_bytes": 0, "total_ios": 0},
            "sync": {"total_ios": 0, "lat_ns": {"N": 0, "mean": 0.0, "max": 0, "min": 0}}
        })
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
        let doc = json!({"jobs": [
            job("a", 0, json!({"1000": 100}), 100, 1000.0, 1000.0),
            job("b", 0, json!({"9000": 300}), 300, 9000.0, 9000.0),
        ]});
        let out = to_run_output(&doc);
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
        let doc = json!({"jobs": [job("a", 0, json!({"9216": 10}), 10, 9000.0, 9100.0)]});
        let out = to_run_output(&doc);
        assert_eq!(get(&out, &m::LAT_P99_NS), 9100.0);
        assert_eq!(get(&out, &m::LAT_MAX_NS), 9100.0);
    }

    #[test]
    fn stonewalled_groups_add_up() {
        let doc = json!({"jobs": [
            job("a", 0, json!({"1000": 100}), 100, 1000.0, 1000.0),
            job("b", 1, json!({"1000": 100}), 100, 1000.0, 1000.0),
        ]});
        let out = to_run_output(&doc);
        assert_eq!(get(&out, &m::ELAPSED_S), 4.0);
        assert_eq!(get(&out, &m::IOPS), 50.0);
    }

    #[test]
    fn json_is_found_after_notes_and_errors_are_named() {
        let text =
            "note: something\n{\n \"jobs\": [{\"jobname\": \"x\", \"error\": 28}]\n}\ntrailing\n";
        let v = parse(text).unwrap();
        assert_eq!(notes(text), "note: something\n");
        let errors = job_errors(&v);
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors[0],
            "job `x` (#0): error 28 (No space left on device)"
        );
        assert!(parse("fio: failed\n").is_none());
    }
}
