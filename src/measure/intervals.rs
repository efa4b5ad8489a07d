//! Latency over time: one HDR histogram per second of a thread's measured
//! run, merged exactly across threads, from which per-second percentiles
//! are drawn (fio's `log_hist_msec` in spirit). An operation belongs to the
//! second in which it completed, so a stall shows in the second it ended.
//!
//! The hot path counts into the current second's buckets ([`Counts`])
//! after one comparison of [`Stamp`]s; at each second boundary the second
//! is kept sparsely (its non-empty buckets only) and cleared, so a long run
//! holds a few kilobytes per second rather than a full histogram each.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::clock::{Clock, Stamp};
use super::latency::{Counts, MAX_NS};

/// Two significant digits: percentiles within 1 %, small histograms.
const SIGFIG: u8 = 2;

/// One second's non-empty buckets: (a value of the bucket, count).
pub type Sparse = Vec<(u64, u64)>;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, SIGFIG).expect("constant bounds are valid")
}

/// One thread's per-second latency histograms.
#[derive(Debug, Clone)]
pub struct Intervals {
    clock: Clock,
    epoch: Instant,
    /// The end of the current second, on the clock.
    next: Stamp,
    current: Counts,
    seconds: Vec<Sparse>,
}

impl Intervals {
    /// Seconds counted from `epoch`, the start of measurement, on `clock`.
    pub fn new(clock: Clock, epoch: Instant) -> Intervals {
        Intervals {
            clock,
            epoch,
            next: clock.stamp(epoch + Duration::from_secs(1)),
            current: Counts::new(SIGFIG),
            seconds: Vec::new(),
        }
    }

    /// Records a latency of `ns` for an operation that completed `at`.
    #[inline(always)]
    pub fn record(&mut self, at: Stamp, ns: u64) {
        if self.crosses(at) {
            self.roll(at);
        }
        self.count(ns);
    }

    /// Whether an operation that completed `at` belongs to a later second
    /// than the current one: [`Intervals::roll`] to it before counting it.
    #[inline(always)]
    pub fn crosses(&self, at: Stamp) -> bool {
        at >= self.next
    }

    /// Counts a latency of `ns` in the current second (what `record` does
    /// once the second is right), for callers that count in batches.
    #[inline(always)]
    pub fn count(&mut self, ns: u64) {
        self.current.record(ns);
    }

    /// Closes the seconds that ended by `at`.
    pub fn roll(&mut self, at: Stamp) {
        while at >= self.next {
            self.seconds.push(sparse(&self.current.histogram()));
            self.current.clear();
            let second = self.seconds.len() as u64 + 1;
            self.next = self.clock.stamp(self.epoch + Duration::from_secs(second));
        }
    }

    /// The completed seconds so far; the current, partial second is left out
    /// (the throughput series counts whole seconds only).
    pub fn finish(mut self, end: Instant) -> Vec<Sparse> {
        // In instants, exactly: an `end` at a second's boundary closes it.
        while end >= self.epoch + Duration::from_secs(self.seconds.len() as u64 + 1) {
            self.seconds.push(sparse(&self.current.histogram()));
            self.current.clear();
        }
        self.seconds
    }
}

fn sparse(h: &Histogram<u64>) -> Sparse {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// Merges the threads' seconds: second i of the result holds second i of
/// every thread.
pub fn merge(threads: &[&[Sparse]], seconds: usize) -> Vec<Histogram<u64>> {
    (0..seconds)
        .map(|i| {
            let mut h = histogram();
            for (value, count) in threads.iter().filter_map(|t| t.get(i)).flatten() {
                h.saturating_record_n(*value, *count);
            }
            h
        })
        .collect()
}

/// Percentile `q` of each second; NaN for a second in which no operation
/// completed (nothing to take a percentile of).
pub fn percentile_series(seconds: &[Histogram<u64>], q: f64) -> Vec<f64> {
    seconds
        .iter()
        .map(|h| {
            if h.is_empty() {
                f64::NAN
            } else {
                h.value_at_percentile(q) as f64
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_land_in_the_second_they_completed() {
        let t0 = Instant::now();
        let clock = Clock::new();
        let instant = |ms: u64| t0 + Duration::from_millis(ms);
        let at = |ms: u64| clock.stamp(instant(ms));
        let mut a = Intervals::new(clock, t0);
        let mut b = Intervals::new(clock, t0);
        for ms in 0..1000 {
            a.record(at(ms), 1000);
        }
        a.record(at(1500), 200_000_000);
        for ms in (0..1000).step_by(10) {
            b.record(at(1000 + ms), 2000);
        }
        // Second 2 of a is empty: a stall with no completion.
        a.record(at(3100), 5000);
        let a = a.finish(instant(3500));
        let b = b.finish(instant(3500));
        assert_eq!(a.len(), 3);
        let merged = merge(&[&a, &b], 3);
        assert_eq!(merged[0].len(), 1000);
        assert_eq!(merged[1].len(), 101);
        let p50 = percentile_series(&merged, 50.0);
        let max = percentile_series(&merged, 100.0);
        assert!((p50[0] - 1000.0).abs() <= 10.0);
        assert!((p50[1] - 2000.0).abs() <= 20.0);
        assert!((max[1] / 200e6 - 1.0).abs() < 0.01, "{}", max[1]);
        assert!(p50[2].is_nan());
    }
}
