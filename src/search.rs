//! The capacity search on one target: which grid point of offered rates
//! it probes next, from the probes judged so far
//! ([`crate::experiment::capacity`] lays out the grid).
//!
//! From the start (point 0) it steps by a coarse step — upwards while
//! probes pass, downwards while they fail — until it holds a passing
//! point below a failing one; then it bisects between the two until they
//! are neighbours, one resolution apart. It ends there, or when a probe
//! passes at the top of the grid (`max_rate`: the capacity is at least
//! that) or fails at its foot. A pure state machine, so that a resumed
//! campaign, which judges the recorded probes again, replays it.

use crate::experiment::capacity::Capacity;

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// A passing and a failing point one grid step apart.
    Resolved,
    /// It passed at the highest point it may probe.
    Top,
    /// It failed at the lowest.
    Foot,
}

impl End {
    /// Why the search's probes stopped, as the store records it.
    pub fn reason(self) -> &'static str {
        match self {
            End::Resolved => "resolved",
            End::Top => "max_rate",
            End::Foot => "foot",
        }
    }
}

/// What the search does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Probe(i64),
    Done(End),
}

/// One target's search.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    coarse: i64,
    top: i64,
    bottom: i64,
    /// The highest passing point below every failing one.
    pub lo: Option<i64>,
    /// The lowest failing point.
    pub hi: Option<i64>,
    /// The points probed, in order.
    pub probed: Vec<i64>,
}

impl Search {
    pub fn new(c: &Capacity) -> Search {
        Search {
            coarse: c.coarse(),
            top: c.top(),
            bottom: c.bottom(),
            lo: None,
            hi: None,
            probed: Vec::new(),
        }
    }

    /// Takes in that the probe at `k` passed (or failed).
    pub fn record(&mut self, k: i64, passed: bool) {
        self.probed.push(k);
        if passed {
            // A pass above a failure is noise: the knee is below the failure.
            if self.hi.map_or(true, |h| k < h) && self.lo.map_or(true, |l| k > l) {
                self.lo = Some(k);
            }
        } else if self.hi.map_or(true, |h| k < h) {
            self.hi = Some(k);
            if self.lo.is_some_and(|l| l >= k) {
                self.lo = None;
            }
        }
    }

    /// The next point to probe, or why the search is done.
    pub fn next(&self) -> Step {
        match (self.lo, self.hi) {
            (None, None) => Step::Probe(0),
            (Some(lo), None) if lo >= self.top => Step::Done(End::Top),
            (Some(lo), None) => Step::Probe((lo + self.coarse).min(self.top)),
            (None, Some(hi)) if hi <= self.bottom => Step::Done(End::Foot),
            (None, Some(hi)) => Step::Probe((hi - self.coarse).max(self.bottom)),
            (Some(lo), Some(hi)) if hi - lo <= 1 => Step::Done(End::Resolved),
            (Some(lo), Some(hi)) => Step::Probe(lo + (hi - lo) / 2),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::capacity::Percentile;
    use crate::metric::catalogue as m;
    use crate::workload::OpenLoop;
    use std::time::Duration;

    fn capacity(max_rate: Option<f64>) -> Capacity {
        Capacity {
            latency: Percentile::P99,
            max: Duration::from_millis(10),
            start: 1000.0,
            max_rate,
            resolution: 0.05,
            open_loop: OpenLoop {
                param: "rate",
                issuers: 1,
                value: 1000.0,
                whole: false,
                achieved: &m::OPS_PER_S,
                served: None,
            },
        }
    }

    /// Runs a search against a system that passes below `knee` (a grid
    /// point), returning the points probed and how it ended.
    fn against(c: &Capacity, knee: f64) -> (Vec<i64>, End, Search) {
        let mut s = Search::new(c);
        loop {
            match s.next() {
                Step::Probe(k) => s.record(k, (k as f64) < knee),
                Step::Done(end) => return (s.probed.clone(), end, s),
            }
        }
    }

    #[test]
    fn a_coarse_sweep_then_bisection_to_neighbours() {
        let c = capacity(None);
        // Passing up to point 21: 0, 16 pass, 32 fails; then 24, 20, 22, 21.
        let (probed, end, s) = against(&c, 21.5);
        assert_eq!(probed, vec![0, 16, 32, 24, 20, 22, 21]);
        assert_eq!((end, s.lo, s.hi), (End::Resolved, Some(21), Some(22)));
        assert_eq!(probed.len() as u32, 3 + c.bisections());
    }

    #[test]
    fn failing_at_the_start_goes_down() {
        let c = capacity(None);
        let (probed, end, s) = against(&c, -20.5);
        assert_eq!(probed, vec![0, -16, -32, -24, -20, -22, -21]);
        assert_eq!((end, s.lo, s.hi), (End::Resolved, Some(-21), Some(-20)));
    }

    #[test]
    fn the_grid_bounds_end_the_search() {
        let c = capacity(Some(4000.0));
        let (probed, end, _) = against(&c, 1e9);
        assert_eq!((probed, end), (vec![0, 16, 28], End::Top));
        assert!(probed_len_within(&c, 1e9));
        let (probed, end, _) = against(&c, -1e9);
        assert_eq!(end, End::Foot);
        assert_eq!(probed.last(), Some(&c.bottom()));
        assert!(probed_len_within(&c, -1e9));
    }

    fn probed_len_within(c: &Capacity, knee: f64) -> bool {
        let n = against(c, knee).0.len() as u32;
        n >= 1 && n <= c.max_probes()
    }

    #[test]
    fn every_search_stays_within_the_probes_check_announces() {
        for max_rate in [None, Some(4000.0), Some(1e6)] {
            let c = capacity(max_rate);
            for knee in -120..200 {
                let n = against(&c, f64::from(knee) + 0.5).0.len() as u32;
                assert!(n <= c.max_probes(), "knee {knee}: {n} > {}", c.max_probes());
            }
        }
    }

    // A noisy pass above a failure does not move the bracket.
    #[test]
    fn a_pass_above_a_failure_is_ignored() {
        let mut s = Search::new(&capacity(None));
        s.record(0, true);
        s.record(16, false);
        s.record(8, true);
        s.record(12, false);
        s.record(14, true);
        assert_eq!((s.lo, s.hi), (Some(8), Some(12)));
        assert_eq!(s.next(), Step::Probe(10));
    }
}

#[cfg(test)]
mod simulation {
    //! The interval checked against a known system: searches on the mock
    //! workload's M/M/1 queue (`crate::workload::mock::queue`).
    use super::*;
    use crate::experiment::capacity::Percentile;
    use crate::metric::catalogue as m;
    use crate::stats::capacity::{knee, margin, Probe};
    use crate::workload::mock::{queue, Model};
    use crate::workload::OpenLoop;
    use std::time::Duration;

    fn capacity(start: f64) -> Capacity {
        Capacity {
            latency: Percentile::P99,
            max: Duration::from_millis(50),
            start,
            max_rate: None,
            resolution: 0.05,
            open_loop: OpenLoop {
                param: "rate",
                issuers: 1,
                value: start,
                whole: false,
                achieved: &m::OPS_PER_S,
                served: None,
            },
        }
    }

    fn run_margin(c: &Capacity, model: &Model, rate: f64, seed: u64) -> f64 {
        let mu = model.value(1.0, 0, seed);
        let out = queue(mu, rate, Duration::from_secs(10));
        let get = |d: &crate::metric::MetricDef| {
            out.iter().find(|x| std::ptr::eq(x.def, d)).unwrap().value
        };
        margin(
            get(&m::LAT_P99_NS),
            c.max.as_secs_f64() * 1e9,
            get(&m::OPS_PER_S),
            rate,
            None,
        )
    }

    /// One search: its knee.
    fn search(c: &Capacity, model: &Model, reps: u64, seed: u64) -> crate::stats::capacity::Knee {
        let mut s = Search::new(c);
        let mut probes = Vec::new();
        let mut n = 0u64;
        while let Step::Probe(k) = s.next() {
            let rate = c.offered_at(k);
            let margins: Vec<f64> = (0..reps)
                .map(|_| {
                    n += 1;
                    run_margin(c, model, rate, seed.wrapping_mul(1_000_003).wrapping_add(n))
                })
                .collect();
            let p = Probe { rate, margins };
            s.record(k, p.passes().unwrap());
            probes.push(p);
        }
        knee(&probes, 0.95).unwrap()
    }

    /// The rate where the mean margin over runs crosses 0.
    fn truth(c: &Capacity, model: &Model) -> f64 {
        let mean = |rate: f64| {
            (0..20000u64)
                .map(|i| run_margin(c, model, rate, i * 7919 + 3))
                .sum::<f64>()
                / 20000.0
        };
        let (mut lo, mut hi) = (100.0, 1000.0);
        for _ in 0..50 {
            let mid = (lo + hi) / 2.0;
            if mean(mid) <= 0.0 {
                lo = mid
            } else {
                hi = mid
            }
        }
        lo
    }

    /// What searches of a known system say of their interval.
    #[derive(Debug)]
    struct Figures {
        /// The share of intervals that hold the truth.
        cover: f64,
        /// The share of groups of five searches whose later four fall at
        /// least three times within the first's interval.
        groups: f64,
        /// The intervals' mean relative width.
        width: f64,
        /// The share of pairs of searches, compared as two targets'
        /// capacities are, found different at p < 0.05 (the same system:
        /// each one is a false positive).
        different: f64,
    }

    /// `searches` searches of a known system at `noise` with `reps` runs
    /// per probe.
    fn check(noise: f64, reps: u64, searches: u64) -> Figures {
        let model = Model {
            value: 1000.0,
            noise,
            drift: 0.0,
            seed: 7,
        };
        let c = capacity(500.0);
        let truth = truth(&c, &model);
        let knees: Vec<_> = (0..searches).map(|i| search(&c, &model, reps, i)).collect();
        let n = knees.len() as f64;
        let share = |hits: usize, of: usize| hits as f64 / of as f64;
        let cover = knees
            .iter()
            .filter(|k| k.interval.unwrap().contains(truth))
            .count();
        let groups = knees
            .chunks_exact(5)
            .filter(|g| {
                let i = g[0].interval.unwrap();
                g[1..].iter().filter(|k| i.contains(k.estimate)).count() >= 3
            })
            .count();
        let different = knees
            .chunks_exact(2)
            .filter(|p| {
                crate::stats::capacity::compare(&p[0], &p[1], 0.95)
                    .is_some_and(|c| c.p_value < 0.05)
            })
            .count();
        let width = knees
            .iter()
            .map(|k| {
                let i = k.interval.unwrap();
                i.high / i.low - 1.0
            })
            .sum::<f64>()
            / n;
        Figures {
            cover: share(cover, knees.len()),
            groups: share(groups, knees.len() / 5),
            width,
            different: share(different, knees.len() / 2),
        }
    }

    // docs/methodology.md gives these figures (`figures` below prints
    // them for more cases).
    #[test]
    fn the_interval_holds_the_knee_and_repeated_searches() {
        let f = check(0.02, 3, 500);
        assert!(f.cover >= 0.9, "{f:?}");
        assert!(f.groups >= 0.85, "{f:?}");
        assert!(f.width < 0.2, "{f:?}");
        assert!(f.different <= 0.1, "{f:?}");
    }

    #[test]
    #[ignore = "prints the simulation's figures"]
    fn figures() {
        for noise in [0.01, 0.02, 0.05] {
            for reps in [1u64, 2, 3, 5] {
                println!("noise {noise} reps {reps}: {:?}", check(noise, reps, 2000));
            }
        }
    }
}
