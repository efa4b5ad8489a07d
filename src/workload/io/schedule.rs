//! The open-loop schedule of `rate` and `rate_iops`: operation i is due at
//! start + i × period, whatever happened to the operations before it. A job
//! that falls behind issues at once and the delay shows in the response
//! latency (measured from the due time, as pgbench -R does), so a stall is
//! not hidden by the load slowing down (coordinated omission).

use std::time::{Duration, Instant};

use crate::measure::clock::{Clock, Stamp};

/// Picoseconds per operation for the stricter of `rate` (bytes/s) and
/// `rate_iops`; `None` when neither is set (closed loop).
pub fn period_ps(bs: usize, rate_bytes: u64, rate_iops: u64) -> Option<u64> {
    let from_bytes = (rate_bytes > 0).then(|| bs as u128 * 1_000_000_000_000 / rate_bytes as u128);
    let from_iops = (rate_iops > 0).then(|| 1_000_000_000_000u128 / rate_iops as u128);
    let p = from_bytes.into_iter().chain(from_iops).max()?;
    Some(p.clamp(1, u64::MAX as u128) as u64)
}

/// Due times of successive operations, on the job's clock.
#[derive(Debug, Clone)]
pub struct Schedule {
    clock: Clock,
    start: Instant,
    period_ps: u64,
    next: u64,
}

impl Schedule {
    pub fn new(clock: Clock, start: Instant, period_ps: u64) -> Schedule {
        Schedule {
            clock,
            start,
            period_ps,
            next: 0,
        }
    }

    /// When the next operation is due.
    #[inline]
    pub fn due(&self) -> Stamp {
        let ns = self.next as u128 * self.period_ps as u128 / 1000;
        self.clock
            .stamp(self.start + Duration::from_nanos(ns.min(u64::MAX as u128) as u64))
    }

    /// Moves on to the following operation.
    #[inline]
    pub fn advance(&mut self) {
        self.next += 1;
    }
}

/// Asks the kernel for the finest timer slack for this thread, so that
/// sleeps end when asked rather than up to 50 µs later.
pub fn fine_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and only affects the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Spin this long before a due time instead of sleeping (a sleep may overshoot).
const SPIN: Duration = Duration::from_micros(20);

/// Waits until `due` on `clock`: sleeps for most of the wait, spins for
/// the rest.
pub fn wait_until(clock: &Clock, due: Stamp) {
    loop {
        let now = clock.now();
        if now >= due {
            return;
        }
        let left = Duration::from_nanos(clock.ns(now, due));
        if left > SPIN {
            std::thread::sleep(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Running statistics of the schedule lag (issue time minus due time).
#[derive(Debug, Clone, Copy, Default)]
pub struct Lag {
    pub count: u64,
    pub sum_ns: u64,
    pub max_ns: u64,
}

impl Lag {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.sum_ns = self.sum_ns.saturating_add(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    pub fn plus(self, o: Lag) -> Lag {
        Lag {
            count: self.count + o.count,
            sum_ns: self.sum_ns.saturating_add(o.sum_ns),
            max_ns: self.max_ns.max(o.max_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_from_rates() {
        assert_eq!(period_ps(4096, 0, 0), None);
        assert_eq!(period_ps(4096, 0, 1000), Some(1_000_000_000));
        // 4 KiB at 4 MiB/s is 1024 ops/s.
        assert_eq!(period_ps(4096, 4 << 20, 0), Some(976_562_500));
        // Both: the stricter (longer period) wins.
        assert_eq!(period_ps(4096, 4 << 20, 2000), Some(976_562_500));
    }

    #[test]
    fn due_times_do_not_drift() {
        let t0 = Instant::now();
        let clock = Clock::new();
        let mut s = Schedule::new(clock, t0, 333_333_333); // 3000 ops/s
        for _ in 0..3000 {
            s.advance();
        }
        let d = clock.instant(s.due()) - t0;
        assert!((d.as_nanos() as i128 - 1_000_000_000).abs() < 1000, "{d:?}");
    }

    #[test]
    fn lag_statistics() {
        let mut l = Lag::default();
        l.record(10);
        l.record(30);
        assert_eq!((l.count, l.sum_ns, l.max_ns), (2, 40, 30));
    }
}
