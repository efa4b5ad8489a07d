//! The clock of the I/O engine's hot loops: each operation is timed from a
//! [`Stamp`] before it to one after it. Where the kernel itself keeps
//! time by the CPU's time-stamp counter (clocksource `tsc`: invariant and
//! synchronised across CPUs, or the kernel would not use it), a stamp is
//! one `rdtsc`, as fio's default `clocksource=cpu` is; elsewhere it is
//! CLOCK_MONOTONIC. `clock_gettime` through the vDSO reads the same
//! counter and scales it under a sequence lock: two of them per operation
//! were 2.4% of a 4 KiB pread loop on tmpfs, the counter alone a third of
//! that.
//!
//! The counter is scaled to nanoseconds by a ratio measured once per
//! process against CLOCK_MONOTONIC over [`CALIBRATION`]: each end of that
//! span is the tightest of several (monotonic, counter, monotonic)
//! brackets, so that a preemption between two reads (a busy host) widens
//! a bracket that is then not used rather than skewing the ratio. The
//! ratio is good to about 10⁻⁵ (a 50 ns bracket over 20 ms), well inside
//! the 10⁻³ of the latency histograms.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the counter is measured against CLOCK_MONOTONIC.
pub const CALIBRATION: Duration = Duration::from_millis(20);

/// A moment on the [`Clock`]: counter ticks, or monotonic nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Stamp(u64);

/// The hot loops' clock: cheap stamps, their differences in nanoseconds,
/// and the stamps of `Instant`s (deadlines, the run's epoch).
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    source: Source,
    /// Nanoseconds per tick (1 for the monotonic source).
    ns_per_tick: f64,
    /// `ns_per_tick` in fixed point, 2^-52 ns per unit (as precise as the
    /// float, for any counter of more than a tick per 4 µs): a difference
    /// of stamps in nanoseconds is one integer multiply and a shift on the
    /// hot path (the float conversion and its saturating checks were
    /// ~20 instructions, about 0.5% of a 4 KiB pread from tmpfs).
    ns_per_tick_fixed: u64,
    /// One instant and its stamp, to convert between the two.
    anchor: (Instant, Stamp),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Tsc,
    Monotonic,
}

static NS_PER_TICK: OnceLock<Option<f64>> = OnceLock::new();

impl Clock {
    /// The counter where the kernel keeps time by it (calibrated on first
    /// use in the process, [`CALIBRATION`] long), CLOCK_MONOTONIC
    /// otherwise.
    pub fn new() -> Clock {
        match *NS_PER_TICK.get_or_init(calibrate) {
            Some(r) => Clock::with(Source::Tsc, r),
            None => Clock::monotonic(),
        }
    }

    /// CLOCK_MONOTONIC alone.
    pub fn monotonic() -> Clock {
        Clock::with(Source::Monotonic, 1.0)
    }

    fn with(source: Source, ns_per_tick: f64) -> Clock {
        let mut c = Clock {
            source,
            ns_per_tick,
            ns_per_tick_fixed: (ns_per_tick * FIXED_ONE).round() as u64,
            anchor: (Instant::now(), Stamp(0)),
        };
        let (instant, stamp) = bracketed(|| c.now());
        c.anchor = (instant, stamp);
        c
    }

    /// Whether stamps are the CPU's counter (for the run's facts).
    pub fn is_tsc(&self) -> bool {
        self.source == Source::Tsc
    }

    /// Now.
    #[inline(always)]
    pub fn now(&self) -> Stamp {
        match self.source {
            Source::Tsc => Stamp(tsc()),
            Source::Monotonic => Stamp(monotonic_ns()),
        }
    }

    /// Nanoseconds from `from` to `to`; 0 if `to` is not later.
    #[inline(always)]
    pub fn ns(&self, from: Stamp, to: Stamp) -> u64 {
        let ticks = to.0.saturating_sub(from.0);
        match self.source {
            Source::Tsc => {
                let ns = (u128::from(ticks) * u128::from(self.ns_per_tick_fixed)) >> FRAC_BITS;
                u64::try_from(ns).unwrap_or(u64::MAX)
            }
            Source::Monotonic => ticks,
        }
    }

    /// The stamp of instant `t`.
    pub fn stamp(&self, t: Instant) -> Stamp {
        let (i0, s0) = self.anchor;
        let ticks = |d: Duration| (d.as_nanos() as f64 / self.ns_per_tick) as u64;
        if t >= i0 {
            Stamp(s0.0.saturating_add(ticks(t - i0)))
        } else {
            Stamp(s0.0.saturating_sub(ticks(i0 - t)))
        }
    }

    /// The instant of stamp `s`.
    pub fn instant(&self, s: Stamp) -> Instant {
        let (i0, s0) = self.anchor;
        let d = |ticks: u64| Duration::from_nanos((ticks as f64 * self.ns_per_tick) as u64);
        if s >= s0 {
            i0 + d(s.0 - s0.0)
        } else {
            i0.checked_sub(d(s0.0 - s.0)).unwrap_or(i0)
        }
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

/// Fractional bits of [`Clock`]'s fixed-point `ns_per_tick_fixed`.
const FRAC_BITS: u32 = 52;
/// 1 ns in that fixed point.
const FIXED_ONE: f64 = (1u64 << FRAC_BITS) as f64;

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc() -> u64 {
    // SAFETY: rdtsc has no preconditions; it is used only where the
    // kernel's clocksource is tsc (calibrate), so the CPU has it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn tsc() -> u64 {
    monotonic_ns()
}

#[inline(always)]
fn monotonic_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: t is a valid timespec to fill; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The kernel's current clocksource.
fn kernel_clocksource() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|s| s.trim().to_string())
}

/// Nanoseconds per counter tick, where the kernel keeps time by the counter.
fn calibrate() -> Option<f64> {
    if !cfg!(target_arch = "x86_64") || kernel_clocksource().as_deref() != Some("tsc") {
        return None;
    }
    let (i0, t0) = bracketed(tsc);
    std::thread::sleep(CALIBRATION);
    let (i1, t1) = bracketed(tsc);
    let ns = (i1 - i0).as_nanos() as f64;
    let ticks = t1.saturating_sub(t0) as f64;
    (ticks > 0.0 && ns > 0.0).then(|| ns / ticks)
}

/// A reading of `read` and the instant it was taken at: the midpoint of
/// the tightest of 16 (instant, read, instant) brackets.
fn bracketed<T: Copy>(read: impl Fn() -> T) -> (Instant, T) {
    let mut best: Option<(Duration, Instant, T)> = None;
    for _ in 0..16 {
        let a = Instant::now();
        let v = read();
        let b = Instant::now();
        let width = b - a;
        if best.as_ref().map_or(true, |(w, _, _)| width < *w) {
            best = Some((width, a + width / 2, v));
        }
    }
    let (_, at, v) = best.expect("16 brackets");
    (at, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_measure_what_the_monotonic_clock_does() {
        for clock in [Clock::new(), Clock::monotonic()] {
            let (i0, s0) = (Instant::now(), clock.now());
            std::thread::sleep(Duration::from_millis(30));
            let (s1, i1) = (clock.now(), Instant::now());
            let ns = clock.ns(s0, s1) as f64;
            let want = (i1 - i0).as_nanos() as f64;
            // Within 1% (the instants bracket the stamps).
            assert!((ns / want - 1.0).abs() < 0.01, "{ns} against {want}");
            assert_eq!(clock.ns(s1, s0), 0);
        }
    }

    /// The fixed-point difference is the float product to within a
    /// nanosecond (and the float's own precision over hours).
    #[test]
    fn differences_in_fixed_point_match_the_ratio() {
        for ns_per_tick in [0.1, 0.2857, 0.4166666, 1.0, 1.37] {
            let clock = Clock::with(Source::Tsc, ns_per_tick);
            for ticks in [0u64, 1, 3, 1000, 3_500, 1 << 20, 1 << 33, 1 << 45, 1 << 52] {
                let want = ticks as f64 * ns_per_tick;
                let got = clock.ns(Stamp(5), Stamp(5 + ticks)) as f64;
                assert!(
                    (got - want).abs() <= 1.0 + want * 1e-14,
                    "{ns_per_tick} {ticks}: {got} {want}"
                );
            }
            assert!(clock.ns(Stamp(0), Stamp(u64::MAX)) > 0);
        }
    }

    #[test]
    fn instants_and_stamps_convert_both_ways() {
        let clock = Clock::new();
        let t = Instant::now() + Duration::from_secs(3);
        let back = clock.instant(clock.stamp(t));
        let off = if back > t { back - t } else { t - back };
        assert!(off < Duration::from_micros(1), "{off:?}");
        let earlier = Instant::now() - Duration::from_millis(5);
        let s = clock.stamp(earlier);
        assert!(s < clock.now());
        assert!(clock.ns(s, clock.now()) >= 5_000_000);
    }

    #[test]
    fn the_counter_is_used_where_the_kernel_keeps_time_by_it() {
        let clock = Clock::new();
        assert_eq!(
            clock.is_tsc(),
            cfg!(target_arch = "x86_64") && kernel_clocksource().as_deref() == Some("tsc")
        );
    }
}
