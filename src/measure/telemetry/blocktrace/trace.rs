//! What one run traced: the dumps of its first and last marks subtracted
//! (the run's counts), and per interval between consecutive marks the
//! latency percentiles and busy time of each device, so that a long run
//! keeps a few numbers per second rather than every dump. A timed request
//! stands for the 2^shift requests of its sample ([`super::sampling`]):
//! histograms weigh it so.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::buckets::midpoint;
use super::dump::{Buckets, DevOp, Dump};
use crate::measure::latency::new_histogram;

/// The percentiles kept per interval.
pub const WINDOW_PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

/// One interval between two marks.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub seconds: f64,
    /// Per device and operation: requests timed, and the latency at
    /// [`WINDOW_PERCENTILES`], ns.
    pub latency: BTreeMap<DevOp, (u64, [f64; 3])>,
    /// Per device: the sum of its requests' times (the sample's, weighed), ns.
    pub busy: BTreeMap<u64, f64>,
}

/// A run's trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// `bpftrace v0.17.0`.
    pub version: String,
    /// Everything counted between the first mark and the last.
    pub total: Dump,
    /// Seconds from the first mark to the last.
    pub seconds: f64,
    pub windows: Vec<Window>,
}

/// Builds a [`Trace`] from dumps as they come.
#[derive(Debug, Default)]
pub struct Builder {
    first: Option<Dump>,
    last: Option<Dump>,
    windows: Vec<Window>,
    /// A completion count that went down from one dump to the next: the
    /// maps were cleared during the run, and their difference means nothing.
    backwards: Option<String>,
}

impl Builder {
    pub fn add(&mut self, d: Dump) {
        match &self.last {
            None => self.first = Some(d.clone()),
            Some(prev) => {
                if self.backwards.is_none() {
                    self.backwards = went_back(prev, &d);
                }
                self.windows.push(window(&d.since(prev), prev.ns));
            }
        }
        self.last = Some(d);
    }

    /// The trace, once there were two marks; why none.
    pub fn build(self, version: &str) -> Result<Trace, String> {
        if let Some(why) = self.backwards {
            return Err(why);
        }
        let Some((first, last)) = self.first.zip(self.last).filter(|(f, l)| l.seq > f.seq) else {
            return Err("bpftrace printed fewer than two marks' counts for the run".into());
        };
        Ok(Trace {
            version: version.to_string(),
            seconds: last.ns.saturating_sub(first.ns) as f64 / 1e9,
            total: last.since(&first),
            windows: self.windows,
        })
    }
}

/// Why `later`'s counts are not `earlier`'s plus what came between: a
/// count of timed requests that went down.
fn went_back(earlier: &Dump, later: &Dump) -> Option<String> {
    let (before, after) = (earlier.timed(), later.timed());
    let (&(dev, op), &was) = before
        .iter()
        .find(|(k, &v)| after.get(k).copied().unwrap_or(0) < v)?;
    let now = after.get(&(dev, op)).copied().unwrap_or(0);
    Some(format!(
        "the tracer's counts went down during the run (device {}:{}, {} requests timed at mark {}, {now} at mark {}): they were cleared, and the run's requests are unknown",
        dev >> 20,
        dev & 0xfffff,
        was,
        earlier.seq,
        later.seq
    ))
}

fn window(d: &Dump, start_ns: u64) -> Window {
    let timed = d.timed();
    let latency = histograms(&d.latency)
        .into_iter()
        .map(|(k, h)| {
            let p = WINDOW_PERCENTILES.map(|q| h.value_at_percentile(q) as f64);
            (k, (timed.get(&k).copied().unwrap_or(0), p))
        })
        .collect();
    Window {
        seconds: d.ns.saturating_sub(start_ns) as f64 / 1e9,
        latency,
        busy: busy(&d.latency),
    }
}

/// Per device and operation, the HDR histogram of its buckets (each
/// bucket's count at its midpoint, a sampled request weighing 2^shift).
pub fn histograms(b: &Buckets) -> BTreeMap<DevOp, Histogram<u64>> {
    let mut out: BTreeMap<DevOp, Histogram<u64>> = BTreeMap::new();
    for (&(dev, op, w, shift, m), &n) in b {
        out.entry((dev, op))
            .or_insert_with(new_histogram)
            .saturating_record_n(midpoint(shift, m).max(1), n << w);
    }
    out
}

/// Per device, the sum of its requests' times (each bucket at its
/// midpoint, weighed), ns: within 0.2% of the sample's own sum.
pub fn busy(b: &Buckets) -> BTreeMap<u64, f64> {
    let mut out = BTreeMap::new();
    for (&(dev, _, w, shift, m), &n) in b {
        *out.entry(dev).or_insert(0.0) += midpoint(shift, m) as f64 * (n << w) as f64;
    }
    out
}

/// Per device, the shifts its timed requests were sampled at (0: every
/// request timed).
pub fn shifts(b: &Buckets) -> BTreeMap<u64, std::collections::BTreeSet<u32>> {
    let mut out: BTreeMap<u64, std::collections::BTreeSet<u32>> = BTreeMap::new();
    for &(dev, _, w, _, _) in b.keys() {
        out.entry(dev).or_default().insert(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::buckets::bucket;
    use super::*;

    fn dump(seq: u64, ns: u64, times: &[u64]) -> Dump {
        let mut d = Dump {
            seq,
            ns,
            ..Dump::default()
        };
        for &t in times {
            let (s, m) = bucket(t);
            *d.latency.entry((1, 0, 0, s, m)).or_insert(0) += 1;
        }
        d
    }

    #[test]
    fn a_trace_is_the_last_dump_less_the_first_with_each_second_apart() {
        let mut b = Builder::default();
        // Before the run: one slow request, which the run must not count.
        b.add(dump(0, 1_000_000_000, &[50_000_000]));
        let second: Vec<u64> = (1..=1000).map(|i| 100_000 + i).collect();
        let mut cumulative = vec![50_000_000];
        cumulative.extend(&second);
        b.add(dump(1, 2_000_000_000, &cumulative));
        cumulative.extend([2_000_000u64; 10]);
        b.add(dump(2, 2_500_000_000, &cumulative));
        let t = b.build("bpftrace v0").expect("two marks");
        assert_eq!(t.seconds, 1.5);
        let h = &histograms(&t.total.latency)[&(1, 0)];
        assert_eq!(h.len(), 1010);
        assert!(h.max() < 2_010_000, "{}", h.max());
        assert_eq!(t.windows.len(), 2);
        assert_eq!(t.windows[0].seconds, 1.0);
        let (n, p) = t.windows[0].latency[&(1, 0)];
        assert_eq!(n, 1000);
        assert!((p[0] / 100_500.0 - 1.0).abs() < 0.003, "{p:?}");
        let (n, p) = t.windows[1].latency[&(1, 0)];
        assert_eq!(n, 10);
        assert!((p[1] / 2e6 - 1.0).abs() < 0.003, "{p:?}");
        assert!((t.windows[1].busy[&1] / 20e6 - 1.0).abs() < 0.002);
    }

    #[test]
    fn a_sampled_request_weighs_as_the_requests_it_stands_for() {
        let mut d = Dump::default();
        // 100 fast requests timed whole, then 20 slow ones at 1 in 8.
        let (s, m) = bucket(1_000);
        d.latency.insert((1, 0, 0, s, m), 100);
        let (s, m) = bucket(1_000_000);
        d.latency.insert((1, 0, 3, s, m), 20);
        let h = &histograms(&d.latency)[&(1, 0)];
        assert_eq!(h.len(), 260);
        // 160 of 260 are slow: the median is slow.
        assert!(h.value_at_quantile(0.5) > 900_000);
        assert_eq!(d.timed()[&(1, 0)], 120);
        assert_eq!(
            shifts(&d.latency)[&1].iter().copied().collect::<Vec<_>>(),
            [0, 3]
        );
    }

    #[test]
    fn one_mark_is_no_trace() {
        let mut b = Builder::default();
        b.add(dump(0, 1, &[]));
        assert!(b.build("v").is_err());
    }

    #[test]
    fn counts_cleared_during_the_run_are_refused_not_subtracted() {
        // What a uprobe firing for both the mark and the reset did: each
        // dump held one second's counts, and the last (a short second)
        // less the first came to nothing.
        let mut b = Builder::default();
        b.add(dump(0, 1_000_000_000, &[100_000; 5000]));
        b.add(dump(1, 2_000_000_000, &[100_000; 4000]));
        b.add(dump(2, 2_100_000_000, &[100_000; 30]));
        let why = b.build("v").expect_err("cleared counts");
        assert!(why.contains("went down during the run"), "{why}");
        assert!(
            why.contains("5000 requests timed at mark 0, 4000 at mark 1"),
            "{why}"
        );
    }
}
