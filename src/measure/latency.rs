//! HDR latency histograms: creation with fixed bounds, so that recording
//! never allocates, the metrics the catalogue derives from each histogram
//! (mean, percentiles, max), and [`Counts`], what the I/O engine's hot
//! loops record into.

use hdrhistogram::Histogram;

use super::output::Metric;
use crate::metric::{HistDef, Labels};

pub use crate::metric::histogram::{new_histogram, MAX_NS};

/// Counts in the buckets of an HDR histogram of latencies from 1 ns to
/// [`MAX_NS`] with `sigfig` significant digits, for the hot loops: a
/// record is a leading-zero count, two shifts and an increment, where the
/// `hdrhistogram` crate's also checks its range, saturates the count and
/// keeps the minimum, maximum and total (two records per operation were
/// 2% of a 4 KiB pread loop on tmpfs). [`Counts::histogram`] turns the
/// counts into that histogram exactly: each bucket's count recorded at the
/// bucket's lowest value, which lands in the same bucket, so counts,
/// total, minimum and maximum (read as their buckets' equivalents, as the
/// crate reads them) are what recording every value would have given.
#[derive(Debug, Clone)]
pub struct Counts {
    counts: Vec<u64>,
    sigfig: u8,
    /// log2 of half the sub-buckets of a bucket.
    half: u32,
    /// Values below this many sub-buckets fall in bucket 0.
    mask: u64,
    /// 64 less the bits of the largest value of bucket 0.
    lz_base: u32,
    /// Where a value beyond the buckets is counted: [`MAX_NS`]'s bucket.
    top: usize,
}

impl Counts {
    /// Empty counts in the buckets of `Histogram::new_with_bounds(1,
    /// MAX_NS, sigfig)` (1 to 5 digits).
    pub fn new(sigfig: u8) -> Counts {
        let h = histogram(sigfig);
        // As the crate: single-unit resolution up to 2 × 10^sigfig, in a
        // power of two of sub-buckets.
        let magnitude = f64::from(2 * 10u32.pow(u32::from(sigfig))).log2().ceil() as u32;
        let mut c = Counts {
            counts: vec![0; h.distinct_values()],
            sigfig,
            half: magnitude - 1,
            mask: (1u64 << magnitude) - 1,
            lz_base: 64 - magnitude,
            top: 0,
        };
        c.top = c.index(MAX_NS);
        c
    }

    /// The bucket of `v` (the crate's `index_for`).
    #[inline(always)]
    fn index(&self, v: u64) -> usize {
        let bucket = self.lz_base - (v | self.mask).leading_zeros();
        let sub = (v >> bucket) as usize;
        ((bucket as usize + 1) << self.half) + sub - (1 << self.half)
    }

    /// Counts a latency of `ns` (at least 1), as `saturating_record` does:
    /// beyond the last bucket, in [`MAX_NS`]'s.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        let mut i = self.index(ns.max(1));
        if i >= self.counts.len() {
            i = self.top;
        }
        self.counts[i] += 1;
    }

    /// Forgets every count.
    pub fn clear(&mut self) {
        self.counts.fill(0);
    }

    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.counts.iter().all(|&c| c == 0)
    }

    /// The lowest value of bucket `i` (the crate's `value_for`).
    fn value_of(&self, i: usize) -> u64 {
        let half = 1usize << self.half;
        let (bucket, sub) = match (i >> self.half).checked_sub(1) {
            Some(b) => (b, (i & (half - 1)) + half),
            None => (0, i & (half - 1)),
        };
        (sub as u64) << bucket
    }

    /// The histogram these counts stand for.
    pub fn histogram(&self) -> Histogram<u64> {
        let mut h = histogram(self.sigfig);
        for (i, &c) in self.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            h.saturating_record_n(self.value_of(i), c);
        }
        h
    }
}

fn histogram(sigfig: u8) -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, sigfig).expect("constant bounds are valid")
}

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

    #[test]
    fn counts_are_the_histogram_of_every_value_recorded() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut values: Vec<u64> = vec![
            0,
            1,
            2,
            2047,
            2048,
            2049,
            4095,
            4096,
            MAX_NS,
            MAX_NS + 1,
            u64::MAX,
        ];
        for _ in 0..100_000 {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            // Every magnitude from 1 ns to beyond an hour.
            values.push(x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> (x % 64));
        }
        for sigfig in [2, 3] {
            let mut c = Counts::new(sigfig);
            let mut h = histogram(sigfig);
            assert!(c.is_empty());
            for &v in &values {
                c.record(v);
                h.saturating_record(v.max(1));
            }
            let got = c.histogram();
            assert_eq!(got, h, "sigfig {sigfig}");
            assert_eq!(
                (got.min(), got.max(), got.len()),
                (h.min(), h.max(), h.len())
            );
            assert_eq!(got.mean(), h.mean());
            assert_eq!(got.value_at_quantile(0.999), h.value_at_quantile(0.999));
            c.clear();
            assert!(c.is_empty() && c.histogram().is_empty());
        }
    }
}
