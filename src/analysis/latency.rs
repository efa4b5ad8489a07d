//! Latency percentile curves per workload and target, from the stored HDR
//! histograms of every measured run, merged exactly (never averaged). Open-loop
//! runs store the service latency (`service_lat`, from issue) beside the
//! response latency (`lat`, from the scheduled start); both get a curve.

use anyhow::Result;

use crate::metric::catalogue::{LAT, SERVICE_LAT};
use crate::metric::histogram::new_histogram;
use crate::metric::{HistDef, MetricKey};
use crate::store::CampaignData;

/// Percentiles drawn on latency charts.
pub const CURVE_PERCENTILES: &[f64] = &[50.0, 90.0, 99.0, 99.9, 99.99];

/// The histograms drawn: response latency, and service latency where stored.
pub const CURVE_HISTOGRAMS: &[&HistDef] = &[&LAT, &SERVICE_LAT];

#[derive(Debug, Clone)]
pub struct Curve {
    pub workload: String,
    pub target: String,
    /// The histogram: `lat` or `service_lat`.
    pub hist: &'static HistDef,
    /// (percentile, latency in ns), plus the maximum as percentile 100.
    pub points: Vec<(f64, f64)>,
    pub count: u64,
}

/// One merged curve per workload (of those `of` takes), target and
/// histogram of [`CURVE_HISTOGRAMS`] recorded.
pub fn curves(c: &CampaignData, of: impl Fn(&str) -> bool) -> Result<Vec<Curve>> {
    let mut out = Vec::new();
    for w in c.workloads.iter().filter(|w| of(&w.name)) {
        for t in &c.targets {
            for &hist in CURVE_HISTOGRAMS {
                out.extend(curve(c, &w.name, &t.name, hist)?);
            }
        }
    }
    Ok(out)
}

/// The merged curve of one histogram of one workload on one target, if recorded.
fn curve(
    c: &CampaignData,
    workload: &str,
    target: &str,
    hist: &'static HistDef,
) -> Result<Option<Curve>> {
    let key = MetricKey::plain(hist.name);
    // Made at the first histogram found: an empty one of these bounds is
    // 256 KB to allocate and zero, for each of thousands of pairs that
    // recorded none.
    let mut merged = None;
    for r in c.measured_runs_of(workload, target) {
        if let Some(h) = r.histograms.get(&key).map(|h| h.decode()).transpose()? {
            merged
                .get_or_insert_with(new_histogram)
                .add(&h)
                .map_err(|e| anyhow::anyhow!("merging histograms of run {}: {e:?}", r.id))?;
        }
    }
    let Some(merged) = merged.filter(|m| !m.is_empty()) else {
        return Ok(None);
    };
    let mut points: Vec<(f64, f64)> = CURVE_PERCENTILES
        .iter()
        .map(|&p| (p, merged.value_at_percentile(p) as f64))
        .collect();
    points.push((100.0, merged.max() as f64));
    Ok(Some(Curve {
        workload: workload.to_string(),
        target: target.to_string(),
        hist,
        points,
        count: merged.len(),
    }))
}

/// Percentile → "nines" (90 → 1, 99 → 2, 99.9 → 3), the x axis of latency charts.
pub fn nines(p: f64) -> f64 {
    if p >= 100.0 {
        return 5.0;
    }
    -(1.0 - p / 100.0).log10()
}
