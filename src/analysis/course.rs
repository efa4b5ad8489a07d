//! Runs over time: the series a measured run recorded every interval, as
//! the report charts them — a workload's primary metric (and the series a
//! reader asks for) over every measured run, and one run's course per
//! target for the telemetry and latency panels. Read once from the
//! campaign's data; which runs these are is [`super::drawn`]'s rule, so
//! that only their series are read from the store.

use crate::metric::{MetricKey, Unit};
use crate::store::{CampaignData, RunData, SeriesData};

/// Fewest samples a run's line needs to be drawn over time: one or two
/// points say nothing of a course.
pub const MIN_SAMPLES: usize = 3;

/// One series of one run: a value per interval, in its stored unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub unit: Unit,
    pub interval_s: f64,
    pub values: Vec<f64>,
}

impl From<&SeriesData> for Series {
    fn from(s: &SeriesData) -> Series {
        Series {
            unit: s.unit,
            interval_s: s.interval_s,
            values: s.values.clone(),
        }
    }
}

/// One measured run and every series it recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Course {
    pub run: i64,
    pub target: String,
    pub repetition: u32,
    /// In the order the run stored them.
    pub series: Vec<(MetricKey, Series)>,
}

impl Course {
    pub fn of(r: &RunData) -> Course {
        Course {
            run: r.id,
            target: r.target.clone(),
            repetition: r.repetition,
            series: r
                .series
                .iter()
                .map(|(k, s)| (k.clone(), Series::from(s)))
                .collect(),
        }
    }
}

/// One metric over time, a line per measured run that recorded it at
/// least [`MIN_SAMPLES`] times.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    pub workload: String,
    pub key: MetricKey,
    pub unit: Unit,
    pub runs: Vec<RunLine>,
}

/// One run's line of a [`Timeline`].
#[derive(Debug, Clone, PartialEq)]
pub struct RunLine {
    pub run: i64,
    pub target: String,
    pub repetition: u32,
    /// Its place among its target's measured runs of the workload (0 for
    /// the first): the shade of its target's colour it is drawn in.
    pub nth: usize,
    pub series: Series,
}

/// The measured, successful runs of workload `w`, in the campaign's order.
fn measured<'a>(c: &'a CampaignData, w: &str) -> Vec<&'a RunData> {
    c.runs_of_workload(w)
        .filter(|r| !r.warmup && r.status == "ok")
        .collect()
}

/// Workload `w`'s timelines: its primary metric's (`primary`), then each
/// of `asked` that its runs recorded.
pub fn timelines(
    c: &CampaignData,
    w: &str,
    primary: Option<&MetricKey>,
    asked: &[String],
) -> Vec<Timeline> {
    let runs = measured(c, w);
    let mut keys: Vec<MetricKey> = primary.into_iter().cloned().collect();
    for name in asked {
        let key = MetricKey::plain(name);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .filter_map(|key| timeline(w, &runs, key))
        .collect()
}

fn timeline(w: &str, runs: &[&RunData], key: MetricKey) -> Option<Timeline> {
    let unit = runs
        .iter()
        .find_map(|r| r.series.get(&key).map(|s| s.unit))?;
    let finite = |s: &SeriesData| s.values.iter().filter(|v| v.is_finite()).count();
    let lines: Vec<RunLine> = runs
        .iter()
        .filter_map(|r| Some((*r, r.series.get(&key)?)))
        .filter(|(_, s)| finite(s) >= MIN_SAMPLES)
        .map(|(r, s)| RunLine {
            run: r.id,
            target: r.target.clone(),
            repetition: r.repetition,
            nth: runs
                .iter()
                .filter(|x| x.target == r.target)
                .position(|x| x.id == r.id)
                .unwrap_or(0),
            series: Series::from(s),
        })
        .collect();
    (!lines.is_empty()).then_some(Timeline {
        workload: w.to_string(),
        key,
        unit,
        runs: lines,
    })
}

/// The first measured, successful run of `workload` on `target` that
/// `keep` accepts.
pub fn first_run<'a>(
    c: &'a CampaignData,
    workload: &str,
    target: &str,
    keep: impl Fn(&RunData) -> bool,
) -> Option<&'a RunData> {
    c.measured_runs_of(workload, target).find(|r| keep(r))
}
