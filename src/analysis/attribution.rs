//! Where a workload's latency went: the workload's percentiles beside each
//! traced device's (the block layer's own request times, `dev_lat`), and
//! a [`Finding`] naming the place — the device, above it, the page cache,
//! or device requests that were not on the workload's path at all — with
//! the figures it rests on; the report puts it into words where it words
//! every verdict (`crate::report::verdict::words`).
//!
//! Both sides are HDR histograms merged exactly over a pair's measured
//! runs. The finding compares the p99 at the workload with the p99 of the
//! data requests (reads, writes, discards) of the device at the top of the
//! target's chain that was sent any — the device the workload's requests
//! reach first; a lower device's time is part of it. The rules, in order:
//!
//! - traced, but no data request reached any device: the page cache
//!   (buffered writes that stayed dirty count too);
//! - every run warned that the page cache served its reads: the page
//!   cache, with the few requests the devices got;
//! - the workload synced (`sync_lat`) and the device was sent flushes:
//!   its writes went to the page cache and its fsyncs waited for the
//!   device. An fsync is several requests in series (data, journal,
//!   flush), so its p99 is set beside the device's, not divided by it;
//! - the device's p99 above [`OFF_PATH`] × the workload's: the device's
//!   requests took longer than any operation waited, so they were not on
//!   its path (write-back, read-ahead, another process on a shared disk);
//! - at least [`DEVICE_SHARE`] of the workload's p99: the device;
//! - less: above the device, naming the busiest process watched when it
//!   used at least [`BUSY_PCT`] of a core (a FUSE daemon, storlab's own
//!   engine at the limit of its core), else the other processes' share of
//!   the host's CPU when a run was warned of a noisy host.

use std::collections::BTreeMap;

use anyhow::Result;
use hdrhistogram::Histogram;

use super::course::Course;
use crate::fact::catalogue as facts;
use crate::metric::catalogue::{self as m, DEV_LAT, LAT, SYNC_LAT};
use crate::metric::histogram::new_histogram;
use crate::metric::labels::{DEVICE, OP, PROCESS};
use crate::metric::MetricKey;
use crate::store::RunData;
use crate::warning::WarningKind;

/// The figures of its runs (beside their latency histograms) a pair's
/// attribution reads: each device's requests, each process's CPU, and the
/// other processes' share of the host (`crate::analysis::figures`).
pub const FIGURES: &[&crate::metric::MetricDef] =
    &[&m::DEV_REQUESTS, &m::PROC_CPU_PCT, &m::CPU_OTHERS_PCT];

/// The share of the workload's p99 a device's p99 must reach for the time
/// to be the device's.
pub const DEVICE_SHARE: f64 = 0.5;
/// A device p99 this many times the workload's was not waited for.
pub const OFF_PATH: f64 = 1.5;
/// A process at or above this share of one core (%) is named.
pub const BUSY_PCT: f64 = 50.0;

/// Device operations, in the order rows list them.
pub const OPS: &[&str] = &["read", "write", "flush", "discard"];
/// The operations that move data: the ones the workload's reads and
/// writes become.
const DATA_OPS: &[&str] = &["read", "write", "discard"];

/// Percentiles of a merged histogram, in ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub count: u64,
}

impl Percentiles {
    /// Percentiles whose p99 is `p99` (ns), for tests.
    #[cfg(test)]
    pub fn with_p99(p99: f64) -> Percentiles {
        Percentiles {
            p50: p99 / 2.0,
            p99,
            p999: p99,
            max: p99,
            count: 10,
        }
    }

    /// `None` for an empty histogram.
    pub fn of(h: &Histogram<u64>) -> Option<Percentiles> {
        (!h.is_empty()).then(|| Percentiles {
            p50: h.value_at_percentile(50.0) as f64,
            p99: h.value_at_percentile(99.0) as f64,
            p999: h.value_at_percentile(99.9) as f64,
            max: h.max() as f64,
            count: h.len(),
        })
    }
}

/// One device's requests of one operation over a pair's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceOp {
    pub device: String,
    pub op: String,
    /// Requests counted at issue, summed over the runs.
    pub requests: f64,
    /// Their times; `None` when none was timed.
    pub latency: Option<Percentiles>,
}

/// Where the time went, as decided by the rules above.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    PageCache,
    Device,
    AboveDevice,
    OffPath,
}

/// The rule that decided, with the figures it was decided on.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    /// Traced, but no data request reached any device.
    NoDeviceRequests,
    /// Every run was warned that the page cache served its reads; `top`
    /// was sent only a few data requests.
    CachedReads { top: Top },
    /// The workload synced and `top` was sent flushes: its writes went to
    /// the page cache, its fsyncs waited for the device.
    FsyncsWaited { top: Top, synced: Synced },
    /// `top`'s p99 above [`OFF_PATH`] × the workload's.
    OffPath { top: Top },
    /// `top`'s p99 at least [`DEVICE_SHARE`] of the workload's.
    Device { top: Top },
    /// Less: the time was spent above the device, for `why` where it is
    /// known.
    AboveDevice { top: Top, why: Option<Why> },
}

/// Why a workload waited above its device.
#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    /// A process used `pct`% of a core, at least [`BUSY_PCT`]: a FUSE
    /// daemon, storlab's own engine at the limit of its core. `process`
    /// may be a group's label (`kernel threads`, `other targets`).
    Busy { process: String, pct: f64 },
    /// Other processes used `pct`% of the host's CPU, where a run was
    /// warned of a noisy host.
    OthersCpu { pct: f64 },
}

impl Finding {
    pub fn place(&self) -> Place {
        match self {
            Finding::NoDeviceRequests | Finding::CachedReads { .. } => Place::PageCache,
            Finding::FsyncsWaited { .. } | Finding::Device { .. } => Place::Device,
            Finding::OffPath { .. } => Place::OffPath,
            Finding::AboveDevice { .. } => Place::AboveDevice,
        }
    }
}

/// One workload on one target: both sides and what they show.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribution {
    pub workload: String,
    pub target: String,
    pub at_workload: Percentiles,
    /// Devices top of the chain first, then their operations in [`OPS`]'
    /// order; operations no request of came are left out.
    pub devices: Vec<DeviceOp>,
    pub finding: Finding,
    /// The pair's first measured run, whose p99 per second the report
    /// draws at the workload and at each device.
    pub course: Option<Course>,
}

impl Attribution {
    pub fn place(&self) -> Place {
        self.finding.place()
    }
}

/// The attribution of `workload` on `target` over a campaign's `runs`
/// (all, or the pair's); `None` when its runs recorded no latency
/// histogram or no device was traced.
pub fn attribution<'a>(
    runs: impl IntoIterator<Item = &'a RunData>,
    workload: &str,
    target: &str,
) -> Result<Option<Attribution>> {
    let runs: Vec<&RunData> = runs
        .into_iter()
        .filter(|r| r.workload == workload && r.target == target && !r.warmup && r.status == "ok")
        .collect();
    let Some(at_workload) = Percentiles::of(&merged(&runs, &MetricKey::plain(LAT.name))?) else {
        return Ok(None);
    };
    let devices = device_ops(&runs)?;
    if devices.is_empty() {
        return Ok(None);
    }
    let top = top_device(&runs, &devices);
    let every_run_cached = runs
        .iter()
        .all(|r| r.warnings.iter().any(|w| w.kind == WarningKind::PageCache));
    let flushes = devices
        .iter()
        .filter(|d| d.op == "flush" && top.as_ref().is_some_and(|t| t.device == d.device))
        .map(|d| (d.requests, d.latency))
        .next();
    let synced = Percentiles::of(&merged(&runs, &MetricKey::plain(SYNC_LAT.name))?)
        .zip(flushes)
        .filter(|(_, (n, _))| *n > 0.0)
        .map(|(at_workload, (flushes, latency))| Synced {
            at_workload,
            flushes,
            runs: runs.len(),
            flush_p99: latency.map(|l| l.p99),
        });
    let finding = finding(&Evidence {
        at_workload,
        top: top.as_ref(),
        every_run_cached,
        synced,
        busiest: busiest(&runs),
        others_cpu: others_cpu(&runs),
    });
    Ok(Some(Attribution {
        workload: workload.into(),
        target: target.into(),
        at_workload,
        devices,
        finding,
        course: runs.first().map(|r| Course::of(r)),
    }))
}

/// The data requests of the device nearest the workload that got any.
#[derive(Debug, Clone, PartialEq)]
pub struct Top {
    pub device: String,
    pub requests: f64,
    pub latency: Percentiles,
}

/// What the finding is decided from.
#[derive(Debug, Clone)]
pub struct Evidence<'a> {
    pub at_workload: Percentiles,
    /// `None`: no data request reached a traced device.
    pub top: Option<&'a Top>,
    pub every_run_cached: bool,
    /// The workload's fsyncs, where it made some and the top device was
    /// sent flushes.
    pub synced: Option<Synced>,
    /// The process that used the most CPU (% of one core).
    pub busiest: Option<(String, f64)>,
    /// The host's CPU other processes used (%), where a run was warned
    /// of a noisy host.
    pub others_cpu: Option<f64>,
}

/// A syncing workload's fsyncs and the flushes its device was sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Synced {
    pub at_workload: Percentiles,
    /// Over the pair's `runs` measured runs.
    pub flushes: f64,
    pub runs: usize,
    /// The flushes' p99 (ns), where they were timed.
    pub flush_p99: Option<f64>,
}

/// What the rules above decide from `e`.
pub fn finding(e: &Evidence) -> Finding {
    let Some(top) = e.top.cloned() else {
        return Finding::NoDeviceRequests;
    };
    if e.every_run_cached {
        return Finding::CachedReads { top };
    }
    if let Some(synced) = e.synced {
        return Finding::FsyncsWaited { top, synced };
    }
    let ratio = top.latency.p99 / e.at_workload.p99;
    if ratio > OFF_PATH {
        return Finding::OffPath { top };
    }
    if ratio >= DEVICE_SHARE {
        return Finding::Device { top };
    }
    let why = match &e.busiest {
        Some((p, pct)) if *pct >= BUSY_PCT => Some(Why::Busy {
            process: p.clone(),
            pct: *pct,
        }),
        _ => e.others_cpu.map(|pct| Why::OthersCpu { pct }),
    };
    Finding::AboveDevice { top, why }
}

/// Every (device, operation) the runs counted or timed, devices in chain
/// order.
fn device_ops(runs: &[&RunData]) -> Result<Vec<DeviceOp>> {
    let mut requests: BTreeMap<(String, String), f64> = BTreeMap::new();
    for r in runs {
        for (k, v) in r.metrics.iter() {
            if k.name != m::DEV_REQUESTS.name {
                continue;
            }
            if let (Some(d), Some(op)) = (k.labels.get(&DEVICE), k.labels.get(&OP)) {
                *requests.entry((d.into(), op.into())).or_default() += v.value;
            }
        }
    }
    let order = chain_order(runs);
    let rank = |d: &str| order.iter().position(|x| x == d).unwrap_or(order.len());
    let mut keys: Vec<&(String, String)> = requests.keys().collect();
    keys.sort_by_key(|(d, op)| {
        let o = OPS.iter().position(|x| x == op).unwrap_or(OPS.len());
        (rank(d), d.clone(), o)
    });
    let mut out = Vec::new();
    for (d, op) in keys {
        let key = MetricKey::new(
            DEV_LAT.name,
            crate::metric::Labels::new().with(&DEVICE, d).with(&OP, op),
        );
        let latency = Percentiles::of(&merged(runs, &key)?);
        let n = requests[&(d.clone(), op.clone())];
        if n > 0.0 || latency.is_some() {
            out.push(DeviceOp {
                device: d.clone(),
                op: op.clone(),
                requests: n,
                latency,
            });
        }
    }
    // A device traced but sent nothing still says so: keep its read row.
    for d in requests.keys().map(|(d, _)| d) {
        if !out.iter().any(|x| &x.device == d) {
            out.push(DeviceOp {
                device: d.clone(),
                op: "read".into(),
                requests: 0.0,
                latency: None,
            });
        }
    }
    out.sort_by_key(|x| {
        let o = OPS.iter().position(|y| *y == x.op).unwrap_or(OPS.len());
        (rank(&x.device), x.device.clone(), o)
    });
    Ok(out)
}

/// The devices of the chain, top first, as the runs' `telemetry_devices`
/// fact lists them (`loop2, vda (under loop2)`).
fn chain_order(runs: &[&RunData]) -> Vec<String> {
    runs.iter()
        .find_map(|r| r.facts.get(facts::TELEMETRY_DEVICES.name))
        .map(|s| {
            s.split(", ")
                .map(|d| d.split(" (under ").next().unwrap_or(d).to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The first device in chain order with data requests, its data requests'
/// times merged.
fn top_device(runs: &[&RunData], devices: &[DeviceOp]) -> Option<Top> {
    let mut seen: Vec<&str> = Vec::new();
    for d in devices {
        if !seen.contains(&d.device.as_str()) {
            seen.push(&d.device);
        }
    }
    seen.into_iter().find_map(|dev| {
        let data: Vec<&DeviceOp> = devices
            .iter()
            .filter(|x| x.device == dev && DATA_OPS.contains(&x.op.as_str()))
            .collect();
        let requests: f64 = data.iter().map(|x| x.requests).sum();
        if requests <= 0.0 {
            return None;
        }
        let mut h = new_histogram();
        for x in &data {
            let key = MetricKey::new(
                DEV_LAT.name,
                crate::metric::Labels::new()
                    .with(&DEVICE, dev)
                    .with(&OP, &x.op),
            );
            let _ = merged(runs, &key).map(|m| h.add(&m));
        }
        Some(Top {
            device: dev.to_string(),
            requests,
            latency: Percentiles::of(&h)?,
        })
    })
}

/// The process with the highest mean CPU over the runs (% of one core).
fn busiest(runs: &[&RunData]) -> Option<(String, f64)> {
    let mut sums: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in runs {
        for (k, v) in r.metrics.iter() {
            if k.name == m::PROC_CPU_PCT.name {
                if let Some(p) = k.labels.get(&PROCESS) {
                    sums.entry(p.into()).or_default().push(v.value);
                }
            }
        }
    }
    sums.into_iter()
        .map(|(p, v)| (p, v.iter().sum::<f64>() / v.len() as f64))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The mean of the host's CPU other processes used, when a run was
/// warned of a noisy host.
fn others_cpu(runs: &[&RunData]) -> Option<f64> {
    let noisy = runs
        .iter()
        .any(|r| r.warnings.iter().any(|w| w.kind == WarningKind::NoisyHost));
    let v: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.metric(&m::CPU_OTHERS_PCT).map(|x| x.value))
        .collect();
    (noisy && !v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The histogram `key` of every run, merged.
fn merged(runs: &[&RunData], key: &MetricKey) -> Result<Histogram<u64>> {
    let mut out = new_histogram();
    for r in runs {
        if let Some(h) = r.histograms.get(key) {
            out.add(&h.decode()?)
                .map_err(|e| anyhow::anyhow!("merging histograms of run {}: {e:?}", r.id))?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
