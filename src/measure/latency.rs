//! HDR latency histograms: creation with fixed bounds, so that recording
//! never allocates, and the metrics the catalogue derives from each
//! histogram (mean, percentiles, max).

use hdrhistogram::Histogram;

use super::output::Metric;
use crate::metric::{HistDef, Labels};

pub use crate::metric::histogram::{new_histogram, MAX_NS};

/// The metrics of histogram `def` with `labels`: mean, percentiles, max;
/// nothing when it is empty.
pub fn latency_metrics(def: &'static HistDef, labels: &Labels, h: &Histogram<u64>) -> Vec<Metric> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut out = vec![def.mean.labelled(labels.clone(), h.mean())];
    for (q, m) in &def.percentiles {
        out.push(m.labelled(labels.clone(), h.value_at_percentile(*q) as f64));
    }
    out.push(def.max.labelled(labels.clone(), h.max() as f64));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::catalogue::{LAT, LAT_MAX_NS, LAT_P50_NS, LAT_P99_NS};

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let m = latency_metrics(&LAT, &Labels::new(), &h);
        let get = |d| m.iter().find(|x| std::ptr::eq(x.def, d)).unwrap().value;
        assert!((get(&LAT_P50_NS) - 500_000.0).abs() / 500_000.0 < 0.002);
        assert!((get(&LAT_P99_NS) - 990_000.0).abs() / 990_000.0 < 0.002);
        assert!((get(&LAT_MAX_NS) - 1_000_000.0).abs() / 1e6 < 0.002);
        assert!(latency_metrics(&LAT, &Labels::new(), &new_histogram()).is_empty());
    }
}
