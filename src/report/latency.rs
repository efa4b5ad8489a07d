//! Latency percentile curves per workload and target, from the stored HDR
//! histograms of every measured run, merged exactly (never averaged).

use anyhow::Result;

use crate::measure::latency::new_histogram;
use crate::store::{CampaignData, Store};

/// Percentiles drawn on latency charts.
pub const CURVE_PERCENTILES: &[f64] = &[50.0, 90.0, 99.0, 99.9, 99.99];

#[derive(Debug, Clone)]
pub struct Curve {
    pub workload: String,
    pub target: String,
    /// (percentile, latency in ns), plus the maximum as percentile 100.
    pub points: Vec<(f64, f64)>,
    pub count: u64,
}

/// One merged curve per workload and target that recorded a `lat` histogram.
pub fn curves(store: &Store, c: &CampaignData) -> Result<Vec<Curve>> {
    let mut out = Vec::new();
    for w in &c.workloads {
        for t in &c.targets {
            let mut merged = new_histogram();
            for r in c.runs.iter().filter(|r| {
                r.workload == w.name && r.target == t.name && !r.warmup && r.status == "ok"
            }) {
                if let Some(h) = store.histogram(r.id, "lat")? {
                    merged.add(&h).map_err(|e| {
                        anyhow::anyhow!("merging histograms of run {}: {e:?}", r.id)
                    })?;
                }
            }
            if merged.is_empty() {
                continue;
            }
            let mut points: Vec<(f64, f64)> = CURVE_PERCENTILES
                .iter()
                .map(|&p| (p, merged.value_at_percentile(p) as f64))
                .collect();
            points.push((100.0, merged.max() as f64));
            out.push(Curve {
                workload: w.name.clone(),
                target: t.name.clone(),
                points,
                count: merged.len(),
            });
        }
    }
    Ok(out)
}

/// Percentile → "nines" (90 → 1, 99 → 2, 99.9 → 3), the x axis of latency charts.
pub fn nines(p: f64) -> f64 {
    if p >= 100.0 {
        return 5.0;
    }
    -(1.0 - p / 100.0).log10()
}
