//! What the system did during a workload's runs, from their telemetry:
//! which devices and processes were watched, the per-run telemetry
//! figures of each target (mean and interval, compared with the baseline
//! like any metric), each device's means as iostat shows them, one
//! measured run's course per target, and the validity checks' warnings.
//! `None` for a workload none of whose runs recorded telemetry
//! (`[plan] telemetry = false`). The report lays it out
//! (`crate::report::contrib::telemetry`).

use std::collections::{BTreeSet, HashMap};

use super::course::{first_run, Course};
use super::model::{self, TargetStats, MIN_RUNS};
use crate::fact::catalogue as f;
use crate::metric::catalogue as m;
use crate::metric::labels::{DEVICE, PROCESS};
use crate::metric::{Labels, MetricDef, MetricKey, Unit};
use crate::stats::summary::mean;
use crate::stats::{Interval, Summary};
use crate::store::keyed::SameKeys;
use crate::store::{CampaignData, RunData};

/// The per-run telemetry figures, in the order of the table. A figure
/// appears once unlabelled (the devices at the bottom of the chain, the
/// host) and once per `device` or `process` label the runs recorded.
const FIGURES: &[&MetricDef] = &[
    &m::DEV_READ_RATIO,
    &m::WRITE_AMPLIFICATION,
    &m::DEV_WRITE_BYTES_PER_TX,
    &m::DEV_READ_BYTES,
    &m::DEV_WRITE_BYTES,
    &m::DEV_READ_BW_BYTES_PER_S,
    &m::DEV_WRITE_BW_BYTES_PER_S,
    &m::DEV_UTIL_PCT,
    &m::DEV_QUEUE_DEPTH,
    &m::DEV_AWAIT_NS,
    &m::CPU_BUSY_PCT,
    &m::CPU_IOWAIT_PCT,
    &m::CPU_STEAL_PCT,
    &m::CPU_OTHERS_PCT,
    &m::CPU_KERNEL_PCT,
    &m::PROC_CPU_PCT,
    &m::PROC_BUSIEST_THREAD_PCT,
    &m::MEM_PAGE_CACHE_MAX_BYTES,
    &m::MEM_DIRTY_MAX_BYTES,
    &m::MEM_WRITEBACK_MAX_BYTES,
    &m::MEM_DIRTY_END_BYTES,
    &m::MEM_AVAILABLE_BYTES,
    &m::PSI_IO_SOME_AVG_PCT,
    &m::PSI_IO_FULL_AVG_PCT,
    &m::PSI_MEMORY_SOME_AVG_PCT,
    &m::PSI_CPU_SOME_AVG_PCT,
    &m::ARC_HITS,
    &m::ARC_MISSES,
    &m::TELEMETRY_CPU_PCT,
];

/// The columns of the devices table: a device figure and its heading.
pub const DEVICE_COLUMNS: &[(&MetricDef, &str)] = &[
    (&m::DEV_READ_BYTES, "read"),
    (&m::DEV_WRITE_BYTES, "written"),
    (&m::DEV_READ_BW_BYTES_PER_S, "read/s"),
    (&m::DEV_WRITE_BW_BYTES_PER_S, "written/s"),
    (&m::DEV_UTIL_PCT, "util"),
    (&m::DEV_QUEUE_DEPTH, "queue depth"),
    (&m::DEV_AWAIT_NS, "await"),
];

/// A workload's telemetry.
#[derive(Debug, Clone)]
pub struct Telemetry {
    pub workload: String,
    /// Per target whose runs were watched, in the report's order.
    pub watched: Vec<Watched>,
    /// The targets whose runs recorded telemetry, in the report's order.
    pub present: Vec<String>,
    /// The baseline target, and whether it is among them (the others are
    /// then compared with it).
    pub baseline: String,
    pub compared: bool,
    /// The figures of the host, the processes and the devices at the
    /// bottom of each chain: per present target its statistics, compared
    /// with the baseline's.
    pub figures: Vec<Figure>,
    /// Each device of each target's chain: the mean per run of each of
    /// [`DEVICE_COLUMNS`] (`None`: not recorded).
    pub devices: Vec<DeviceMeans>,
    /// Per target, its first measured run that recorded telemetry.
    pub courses: Vec<Course>,
    /// The validity checks' warnings on the workload's measured runs:
    /// `run 3 (a, rep 3): page cache: …`.
    pub warnings: Vec<String>,
}

/// What a target's runs watched.
#[derive(Debug, Clone, PartialEq)]
pub struct Watched {
    pub target: String,
    /// The device chain, top to bottom (`None`: no block device).
    pub devices: Option<String>,
    /// The serving processes watched beside storlab.
    pub processes: Vec<String>,
}

/// One telemetry figure over the present targets.
#[derive(Debug, Clone)]
pub struct Figure {
    pub key: MetricKey,
    pub unit: Unit,
    /// Per present target (in [`Telemetry::present`]'s order).
    pub stats: Vec<Option<Shown>>,
}

/// A target's telemetry figure as its table shows it, of its
/// [`TargetStats`]: the mean and its interval, the values themselves when
/// too few for one, and the difference from the baseline. The whole
/// statistics of every figure (2,000 variants × 30 figures × 2 targets)
/// were a fifth of a report's memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub summary: Option<Summary>,
    pub ci: Option<Interval>,
    pub ci_clipped: bool,
    /// The values, when fewer than [`MIN_RUNS`]: no interval.
    pub few: Option<Vec<f64>>,
    /// The % difference from the baseline and its interval.
    pub diff: Option<(f64, Interval)>,
    /// Compared on too few runs: no difference is given.
    pub too_few: bool,
}

impl Shown {
    pub fn of(t: &TargetStats) -> Shown {
        Shown {
            summary: t.summary,
            ci: t.ci,
            ci_clipped: t.ci_clipped,
            few: (t.values.len() < MIN_RUNS).then(|| t.values.clone()),
            diff: t.comparison.as_ref().map(|c| (c.diff_pct, c.diff_pct_ci)),
            too_few: t.too_few,
        }
    }
}

/// One device of a target's chain.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceMeans {
    pub target: String,
    pub device: String,
    pub means: Vec<Option<f64>>,
}

/// The figures the telemetry reads of each run itself: whether it
/// recorded telemetry. The others it reads per pair
/// ([`figures_read`]).
pub const RUN_FIGURES: &[&MetricDef] = &[&m::TELEMETRY_CPU_PCT];

/// The names of the figures the telemetry's statistics and devices read,
/// per pair and key (with any labels).
pub fn figures_read() -> impl Iterator<Item = &'static str> {
    (FIGURES.iter().map(|d| d.name)).chain(DEVICE_COLUMNS.iter().map(|(d, _)| d.name))
}

/// The measured runs of `w` that recorded telemetry.
pub fn watched_runs<'a>(c: &'a CampaignData, w: &str) -> Vec<&'a RunData> {
    c.runs_of_workload(w)
        .filter(|r| !r.warmup && r.status == "ok")
        .filter(|r| recorded(r))
        .collect()
}

fn recorded(r: &RunData) -> bool {
    r.metric(RUN_FIGURES[0]).is_some()
}

/// The telemetry of workload `w` over `targets` (the report's order)
/// against `baseline`; `None` when none of its runs recorded any.
pub fn telemetry(
    c: &CampaignData,
    w: &str,
    targets: &[String],
    baseline: &str,
) -> Option<Telemetry> {
    let runs = watched_runs(c, w);
    if runs.is_empty() {
        return None;
    }
    let present: Vec<String> = targets
        .iter()
        .filter(|t| runs.iter().any(|r| &r.target == *t))
        .cloned()
        .collect();
    Some(Telemetry {
        workload: w.to_string(),
        watched: targets
            .iter()
            .filter_map(|t| runs.iter().find(|r| &r.target == t))
            .map(|r| watched(r))
            .collect(),
        compared: present.iter().any(|t| t == baseline),
        baseline: baseline.to_string(),
        figures: figures(c, w, &runs, targets, &present, baseline),
        devices: devices(c, w, &runs, targets),
        courses: targets
            .iter()
            .filter_map(|t| first_run(c, w, t, recorded))
            .map(Course::of)
            .collect(),
        warnings: c
            .runs_of_workload(w)
            .filter(|r| !r.warmup)
            .flat_map(|r| {
                r.warnings
                    .iter()
                    .map(move |x| format!("run {} ({}, rep {}): {x}", r.id, r.target, r.repetition))
            })
            .collect(),
        present,
    })
}

/// The devices and the serving processes a run watched.
fn watched(r: &RunData) -> Watched {
    Watched {
        target: r.target.clone(),
        devices: r.facts.get(f::TELEMETRY_DEVICES.name).map(String::from),
        processes: r
            .facts
            .keys()
            .filter_map(|k| k.strip_prefix(f::TELEMETRY_PROCESS.name))
            .map(String::from)
            .collect(),
    }
}

/// The unlabelled and per-process figures, in [`FIGURES`]' order: a single
/// device's figures are in [`devices`], a matrix cell's in the matrix.
fn figures(
    c: &CampaignData,
    w: &str,
    runs: &[&RunData],
    targets: &[String],
    present: &[String],
    baseline: &str,
) -> Vec<Figure> {
    let keys: BTreeSet<&MetricKey> = c
        .keys_recorded(w, runs)
        .into_iter()
        .filter(|k| k.labels.iter().all(|(l, _)| l == PROCESS.key))
        .collect();
    let mut out = Vec::new();
    for def in FIGURES {
        for key in keys.iter().filter(|k| k.name == def.name) {
            let report = model::metric(c, w, key, targets, baseline);
            out.push(Figure {
                key: (*key).clone(),
                unit: report.unit,
                stats: present
                    .iter()
                    .map(|t| {
                        report
                            .targets
                            .iter()
                            .find(|x| &x.target == t)
                            .map(Shown::of)
                    })
                    .collect(),
            });
        }
    }
    out
}

/// Each device of each target's chain, as `iostat -x` shows it: per run,
/// the mean over the measured runs of what it read and wrote, how busy it
/// was, its mean queue and the mean time a request took. `runs` are those
/// of workload `w` of campaign `c`.
pub fn devices(
    c: &CampaignData,
    w: &str,
    runs: &[&RunData],
    targets: &[String],
) -> Vec<DeviceMeans> {
    let mut out = Vec::new();
    for t in targets {
        let mine: Vec<&RunData> = runs.iter().copied().filter(|r| &r.target == t).collect();
        let devices: BTreeSet<&str> = c
            .keys_recorded(w, &mine)
            .into_iter()
            .filter_map(|k| k.labels.get(&DEVICE))
            .collect();
        let mut columns = device_columns(&mine, &devices);
        // The figures read per pair, not into the runs.
        for (i, d) in devices.iter().enumerate() {
            for (j, (def, _)) in DEVICE_COLUMNS.iter().enumerate() {
                let key = MetricKey::new(def.name, Labels::new().with(&DEVICE, *d));
                if let Some(values) = c.held_values(w, t, &key, &mine) {
                    columns[i * DEVICE_COLUMNS.len() + j] = values;
                }
            }
        }
        for (i, d) in devices.iter().enumerate() {
            let means = (0..DEVICE_COLUMNS.len())
                .map(|j| {
                    let values = &columns[i * DEVICE_COLUMNS.len() + j];
                    (!values.is_empty()).then(|| mean(values))
                })
                .collect();
            out.push(DeviceMeans {
                target: t.clone(),
                device: d.to_string(),
                means,
            });
        }
    }
    out
}

/// The values of each device's [`DEVICE_COLUMNS`] over `runs`, in run
/// order (device `i`, column `j` at `i * DEVICE_COLUMNS.len() + j`), in one
/// pass over each run's figures: a key of the campaign is matched once,
/// and found again by its address; a run with the very keys of a run
/// before takes its figures to the same places, found for that run.
fn device_columns(runs: &[&RunData], devices: &BTreeSet<&str>) -> Vec<Vec<f64>> {
    let devices: Vec<&str> = devices.iter().copied().collect();
    let mut columns = vec![Vec::new(); devices.len() * DEVICE_COLUMNS.len()];
    let mut place: HashMap<*const MetricKey, Option<usize>> = HashMap::new();
    let mut known = SameKeys::default();
    let mut places: Vec<Vec<Option<usize>>> = Vec::new();
    for r in runs {
        let (slot, new) = known.slot(&r.metrics);
        if places.len() <= slot {
            places.resize_with(slot + 1, Vec::new);
        }
        if new {
            places[slot].clear();
            for (key, _) in r.metrics.shared() {
                places[slot].push(
                    *place.entry(std::sync::Arc::as_ptr(key)).or_insert_with(|| {
                        let i = devices
                            .iter()
                            .position(|d| key.labels.get(&DEVICE) == Some(*d))?;
                        let j = DEVICE_COLUMNS.iter().position(|(def, _)| {
                            key.name == def.name
                                && **key
                                    == MetricKey::new(
                                        def.name,
                                        Labels::new().with(&DEVICE, devices[i]),
                                    )
                        })?;
                        Some(i * DEVICE_COLUMNS.len() + j)
                    }),
                );
            }
        }
        for ((_, v), at) in r.metrics.shared().zip(&places[slot]) {
            if let Some(at) = at {
                columns[*at].push(v.value);
            }
        }
    }
    columns
}
