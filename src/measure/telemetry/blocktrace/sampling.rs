//! How many of a device's requests are timed: 1 in 2^shift, the shift
//! chosen at every sample from the device's request rate over the last
//! interval (/proc/diskstats) so that about [`TIMED_PER_S`] requests a
//! second are timed — every request of a device slower than that — and
//! handed to bpftrace through a uprobe ([`super::storlab_block_trace_rate`]).
//! The shift goes up as soon as the rate asks for it and down only once
//! the rate is below half the least its shift was chosen for, so that a
//! rate near a boundary does not change it every second.
//!
//! What it costs and what it leaves: a timed request costs about 0.6 µs of
//! BPF time here, one outside the sample about 0.1 µs (the tracepoints and
//! the hash test), so a device at 70k requests/s pays 4k × 0.6 + 70k × 0.1
//! ≈ 10 ms a second of CPU where timing every request cost 56 ms. The
//! percentiles of a sample of n requests are those of the whole within a
//! rank error of ±1.96·√(q(1−q)/n) (95%): at 4,096 a second over a 10 s
//! run, p99 within its 98.97th–99.03rd percentiles and p99.9 within the
//! 99.89th–99.91st ([`rank_interval`], stated in each run's `block_trace`
//! fact).

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::script::kernel_dev;
use crate::measure::telemetry::sample::Sample;

/// Requests timed per second per device, at most (about).
pub const TIMED_PER_S: f64 = 4096.0;
/// The shift a device starts a campaign at (every request timed), until
/// its first rate ([`FIRST_RATE`] into its first run).
pub const START: u32 = 0;
/// When a run's sampler first measures its devices' rates, after its
/// first sample (then at every sample).
pub const FIRST_RATE: std::time::Duration = std::time::Duration::from_millis(100);
/// The largest shift (1 in 4,096 requests).
pub const MAX: u32 = 12;

/// The shift for a device completing `per_s` requests a second, whose
/// shift is `now`.
pub fn shift_for(per_s: f64, now: u32) -> u32 {
    let want = if per_s <= TIMED_PER_S {
        0
    } else {
        ((per_s / TIMED_PER_S).log2().ceil() as u32).min(MAX)
    };
    // Down only once the rate is under half of the least that `now` is
    // chosen for (2^(now-1) × TIMED_PER_S).
    if want < now && per_s > TIMED_PER_S * f64::from(1u32 << (now - 1)) / 2.0 {
        return now;
    }
    want
}

/// Each traced device's shift as bpftrace has it (by kernel number).
static SHIFTS: Mutex<BTreeMap<u64, u32>> = Mutex::new(BTreeMap::new());

fn shifts() -> std::sync::MutexGuard<'static, BTreeMap<u64, u32>> {
    SHIFTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A tracer started on `devices` with every shift at [`START`].
pub fn started(devices: &[(u32, u32)]) {
    let mut s = shifts();
    for &(a, b) in devices {
        s.insert(kernel_dev(a, b), START);
    }
}

/// The device's shift now (0 where no tracer traces it).
pub fn current(major: u32, minor: u32) -> u32 {
    shifts()
        .get(&kernel_dev(major, minor))
        .copied()
        .unwrap_or(0)
}

/// The traced device with the most requests a second between two samples,
/// and the requests a second of all the traced devices together: every
/// request of every traced device passes both tracepoints, so a stack
/// (a loop device over the disk) pays them once per layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fastest {
    pub major: u32,
    pub minor: u32,
    pub per_s: f64,
    /// All the traced devices' requests a second.
    pub total_per_s: f64,
}

impl Fastest {
    /// Whether the traced devices together complete more than `max`
    /// requests a second (`[plan] block_trace_max_rate`; 0: any rate).
    pub fn too_fast(&self, max: u64) -> bool {
        max > 0 && self.total_per_s > max as f64
    }

    /// Why tracing stopped `at` into a run, the traced devices being
    /// faster than `max` requests a second together.
    pub fn why(&self, max: u64, at: std::time::Duration) -> String {
        let who = if self.total_per_s > self.per_s {
            format!(
                "the traced devices completed {:.0} requests a second together (device {}:{} {:.0})",
                self.total_per_s, self.major, self.minor, self.per_s
            )
        } else {
            format!(
                "device {}:{} completed {:.0} requests a second",
                self.major, self.minor, self.per_s
            )
        };
        format!(
            "{who}, more than [plan] block_trace_max_rate = {max}, above which the block tracepoints' own cost per request exceeds run-to-run noise (4.6% of throughput at 317,000 4 KiB reads a second on a loop device over tmpfs; each layer of a stack passes them, so a loop device over a disk pays them twice per I/O: docs/benchmarks.md), so storlab stopped tracing {:.1} s into a run, for the rest of the campaign (block_trace_max_rate = 0 traces at any rate)",
            at.as_secs_f64()
        )
    }
}

/// Sets each traced device's shift from its requests between samples `a`
/// and `b`; devices no tracer traces are left alone. Returns the fastest
/// traced device.
pub fn follow(a: &Sample, b: &Sample) -> Option<Fastest> {
    let dt = b.t - a.t;
    if dt <= 0.0 {
        return None;
    }
    let mut fastest: Option<Fastest> = None;
    let mut total = 0.0;
    let mut s = shifts();
    for (&(major, minor), y) in &b.disks {
        let Some(x) = a.disks.get(&(major, minor)) else {
            continue;
        };
        let dev = kernel_dev(major, minor);
        let Some(now) = s.get_mut(&dev) else {
            continue;
        };
        let requests = (y.reads + y.writes).saturating_sub(x.reads + x.writes);
        let per_s = requests as f64 / dt;
        let next = shift_for(per_s, *now);
        if next != *now {
            *now = next;
            super::storlab_block_trace_rate(dev, u64::from(next));
        }
        total += per_s;
        if fastest.map_or(true, |f| per_s > f.per_s) {
            fastest = Some(Fastest {
                major,
                minor,
                per_s,
                total_per_s: 0.0,
            });
        }
    }
    fastest.map(|f| Fastest {
        total_per_s: total,
        ..f
    })
}

/// The percentiles between which the sample's `q`-th percentile (0..1)
/// lies with 95% confidence, from `n` timed requests (normal
/// approximation of the binomial rank).
pub fn rank_interval(q: f64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let half = 1.96 * (q * (1.0 - q) / n as f64).sqrt();
    ((q - half).max(0.0), (q + half).min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::telemetry::sample::Disk;

    /// A loop device over a disk passes the tracepoints once per layer:
    /// two traced devices at 70,000 requests a second each are 140,000
    /// together, above the default 120,000, though neither is alone.
    #[test]
    fn the_rate_limit_counts_every_traced_device() {
        let (a, b) = ((250u32, 9001u32), (250u32, 9002u32));
        started(&[a, b]);
        let at = |t: f64, n: u64| Sample {
            t,
            disks: [a, b]
                .into_iter()
                .map(|d| {
                    (
                        d,
                        Disk {
                            writes: n,
                            ..Default::default()
                        },
                    )
                })
                .collect(),
            ..Default::default()
        };
        let f = follow(&at(1.0, 0), &at(2.0, 70_000)).expect("traced devices");
        assert_eq!((f.per_s, f.total_per_s), (70_000.0, 140_000.0));
        assert!(f.too_fast(120_000) && !f.too_fast(150_000) && !f.too_fast(0));
        let why = f.why(120_000, std::time::Duration::from_millis(100));
        assert!(
            why.starts_with(
                "the traced devices completed 140000 requests a second together (device 250:900"
            ),
            "{why}"
        );
        assert!(
            why.contains("more than [plan] block_trace_max_rate = 120000"),
            "{why}"
        );
        // One device alone is named alone.
        let one = Fastest {
            total_per_s: 70_000.0,
            ..f
        };
        assert!(one
            .why(1, std::time::Duration::ZERO)
            .starts_with("device 250:900"));
    }

    #[test]
    fn slow_devices_are_timed_whole_and_fast_ones_a_few_thousand_a_second() {
        assert_eq!(shift_for(0.0, START), 0);
        assert_eq!(shift_for(4000.0, START), 0);
        assert_eq!(shift_for(70_000.0, 0), 5);
        assert_eq!(shift_for(1e9, 0), MAX);
        // 70k/s at 1 in 32 is 2,188 timed a second; from 1 in 32 down
        // only under 32k/s (where 1 in 8 is chosen).
        assert_eq!(shift_for(40_000.0, 5), 5);
        assert_eq!(shift_for(33_000.0, 5), 5);
        assert_eq!(shift_for(30_000.0, 5), 3);
        assert_eq!(shift_for(3_000.0, 5), 0);
    }

    #[test]
    fn the_rank_interval_narrows_with_the_sample() {
        let (lo, hi) = rank_interval(0.99, 40_960);
        assert!(
            (lo - 0.98904).abs() < 1e-4 && (hi - 0.99096).abs() < 1e-4,
            "{lo} {hi}"
        );
        assert_eq!(rank_interval(0.5, 0), (0.0, 1.0));
    }
}
