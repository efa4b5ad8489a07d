//! HDR latency histograms: creation with fixed bounds, so that recording
//! never allocates, and the percentile metrics every report shows.

use hdrhistogram::Histogram;

use super::output::Metric;

/// Highest trackable latency: one hour in nanoseconds.
pub const MAX_NS: u64 = 3_600_000_000_000;

/// A histogram for latencies in nanoseconds with three significant digits.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, 3).expect("constant bounds are valid")
}

/// The percentiles reported for every latency histogram.
pub const PERCENTILES: &[(&str, f64)] =
    &[("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p999", 99.9)];

/// `{prefix}_mean_ns`, `{prefix}_p50_ns` … `{prefix}_max_ns`; nothing when empty.
pub fn latency_metrics(prefix: &str, h: &Histogram<u64>) -> Vec<Metric> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut out = vec![Metric::lower(format!("{prefix}_mean_ns"), h.mean(), "ns")];
    for (label, q) in PERCENTILES {
        let v = h.value_at_percentile(*q) as f64;
        out.push(Metric::lower(format!("{prefix}_{label}_ns"), v, "ns"));
    }
    out.push(Metric::lower(
        format!("{prefix}_max_ns"),
        h.max() as f64,
        "ns",
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let m = latency_metrics("lat", &h);
        let get = |n: &str| m.iter().find(|x| x.name == n).unwrap().value;
        assert!((get("lat_p50_ns") - 500_000.0).abs() / 500_000.0 < 0.002);
        assert!((get("lat_p99_ns") - 990_000.0).abs() / 990_000.0 < 0.002);
        assert!((get("lat_max_ns") - 1_000_000.0).abs() / 1e6 < 0.002);
        assert!(latency_metrics("lat", &new_histogram()).is_empty());
    }
}
