//! A capacity search as the file asks for it: `capacity = { latency =
//! "p99", max = "10ms" }` (and optionally `start`, `max_rate`,
//! `resolution`) in a workload whose kind offers load at a set rate (an
//! `io` job's `rate_iops` or `rate`, pgbench's `rate`, a `fio` job's
//! `rate_iops`).
//!
//! The search moves on a grid of offered rates, `start · (1 +
//! resolution)^k` (rounded to three significant figures, and to what the
//! parameter takes): a coarse sweep steps `k` by [`Capacity::coarse`]
//! (the smallest power of two that at least doubles the rate) until one
//! probe passes and one fails, then bisects between them until they are
//! neighbours on the grid, one resolution apart. Each probe is a variant
//! of the workload, `NAME[rate_iops=2180]`, made as the search reaches
//! it (`WorkloadSpec::probe`): an ordinary workload whose runs are stored,
//! shown and compared as any other's. `crate::search` decides the
//! probes; `crate::stats::capacity` judges them.

use std::time::Duration;

use serde_json::json;

use crate::metric::catalogue as m;
use crate::metric::MetricDef;
use crate::params::{choices, declare, Fault};
use crate::workload::OpenLoop;

choices! {
    /// The latency percentile a capacity is judged on.
    pub enum Percentile { P50 = "p50", P90 = "p90", P99 = "p99", P999 = "p99.9" }
}

impl Percentile {
    /// The metric holding it (response latency, from the scheduled start
    /// of an open-loop operation).
    pub fn metric(self) -> &'static MetricDef {
        match self {
            Percentile::P50 => &m::LAT_P50_NS,
            Percentile::P90 => &m::LAT_P90_NS,
            Percentile::P99 => &m::LAT_P99_NS,
            Percentile::P999 => &m::LAT_P999_NS,
        }
    }
}

declare! {
    /// The `capacity` table's parameters (`resolution`, a percentage, is
    /// read by the parser itself).
    pub struct CapacityParams {
        latency: choice(Percentile) = "p99" => "the latency percentile judged: p50, p90, p99 or p99.9",
        max: duration => "the most that percentile may be at a sustained rate",
        start: float(0.001, 1e12) => "the offered rate (in total, every job's together) the search starts from; the workload's own rate when absent",
        max_rate: float(0.001, 1e12) => "the highest offered rate probed",
    }
}

/// The resolution when the file gives none: the highest passing and the
/// lowest failing rate end 5% apart.
pub const DEFAULT_RESOLUTION: f64 = 0.05;
/// The finest and coarsest resolution accepted.
pub const RESOLUTIONS: (f64, f64) = (0.01, 0.5);
/// Coarse steps upwards from `start` when no `max_rate` bounds them
/// (about 2^10 = 1000 times `start`).
pub const MAX_COARSE_UP: i64 = 10;
/// Coarse steps downwards from `start` (to about 1/8 of it): a start
/// that far above the knee is a file to fix, not a search to go on with.
pub const MAX_COARSE_DOWN: i64 = 3;

/// A capacity search, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    pub latency: Percentile,
    /// The most the percentile may be.
    pub max: Duration,
    /// The offered total at grid point 0.
    pub start: f64,
    pub max_rate: Option<f64>,
    /// Relative width of the final bracket (0.05: 5%).
    pub resolution: f64,
    /// How the workload offers its rate.
    pub open_loop: OpenLoop,
}

/// What makes a workload variant a probe of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOf {
    /// The searched workload's name.
    pub search: String,
    /// Its point on the grid.
    pub k: i64,
    /// The total rate it offers.
    pub offered: f64,
}

impl Capacity {
    /// Checks the parameters against how the kind offers load.
    pub fn new(
        p: CapacityParams,
        resolution: Option<f64>,
        open_loop: OpenLoop,
    ) -> Result<Capacity, Fault> {
        let Some(max) = p.max.filter(|d| !d.is_zero()) else {
            return Err((
                "max",
                "needs `max`, the latency the percentile must stay within, such as \"10ms\"".into(),
            ));
        };
        let own = open_loop.total(open_loop.value);
        let start = match (p.start, own > 0.0) {
            (Some(s), _) => s,
            (None, true) => own,
            (None, false) => {
                return Err((
                    "start",
                    format!(
                        "needs a rate to start from: set the workload's `{}` or capacity's `start` (the offered rate in total)",
                        open_loop.param
                    ),
                ))
            }
        };
        if let Some(top) = p.max_rate.filter(|t| *t <= start) {
            return Err((
                "max_rate",
                format!("max_rate ({top}) must be above the start ({start})"),
            ));
        }
        let resolution = resolution.unwrap_or(DEFAULT_RESOLUTION);
        if !(RESOLUTIONS.0..=RESOLUTIONS.1).contains(&resolution) {
            return Err((
                "resolution",
                format!(
                    "resolution must be between {}% and {}%",
                    RESOLUTIONS.0 * 100.0,
                    RESOLUTIONS.1 * 100.0
                ),
            ));
        }
        Ok(Capacity {
            latency: p.latency,
            max,
            start,
            max_rate: p.max_rate,
            resolution,
            open_loop,
        })
    }

    /// One grid step, on the log scale.
    pub fn step(&self) -> f64 {
        self.resolution.ln_1p()
    }

    /// Grid steps of one coarse step: the smallest power of two that at
    /// least doubles the rate.
    pub fn coarse(&self) -> i64 {
        let mut n = 1;
        while (n as f64) * self.step() < std::f64::consts::LN_2 {
            n *= 2;
        }
        n
    }

    /// Bisections from a coarse bracket to neighbours: log2 of `coarse`.
    pub fn bisections(&self) -> u32 {
        self.coarse().trailing_zeros()
    }

    /// The highest grid point the search may probe.
    pub fn top(&self) -> i64 {
        match self.max_rate {
            Some(r) => ((r / self.start).ln() / self.step() + 1e-9).floor() as i64,
            None => self.coarse() * MAX_COARSE_UP,
        }
    }

    /// The lowest grid point the search may probe.
    pub fn bottom(&self) -> i64 {
        -self.coarse() * MAX_COARSE_DOWN
    }

    /// The parameter's value at grid point `k` (per issuer, rounded to
    /// three significant figures and to what the parameter takes).
    pub fn value_at(&self, k: i64) -> f64 {
        let total = self.start * (k as f64 * self.step()).exp();
        self.open_loop.value_for(significant(total, 3))
    }

    /// The total rate offered at grid point `k`.
    pub fn offered_at(&self, k: i64) -> f64 {
        self.open_loop.total(self.value_at(k))
    }

    /// The most probes the search takes on one target: the coarse steps
    /// to its farther end, the point it starts from, and the bisections.
    pub fn max_probes(&self) -> u32 {
        let up = (self.top().max(0) as f64 / self.coarse() as f64).ceil() as u32;
        let down = MAX_COARSE_DOWN as u32;
        up.max(down) + 1 + self.bisections()
    }

    /// The fewest: the start, one coarse step, and the bisections.
    pub fn min_probes(&self) -> u32 {
        2 + self.bisections()
    }

    /// The capacity as stored with the experiment.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "latency": self.latency.name(),
            "metric": self.latency.metric().name,
            "max_s": self.max.as_secs_f64(),
            "start": self.start,
            "max_rate": self.max_rate,
            "resolution": self.resolution,
            "param": self.open_loop.param,
            "issuers": self.open_loop.issuers,
            "achieved": self.open_loop.achieved.name,
            "served": self.open_loop.served.map(|d| d.name),
        })
    }
}

impl ProbeOf {
    pub fn to_json(&self) -> serde_json::Value {
        json!({"search": self.search, "k": self.k, "offered": self.offered})
    }
}

/// `x` rounded to `digits` significant figures.
fn significant(x: f64, digits: i32) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.log10().floor() as i32);
    (x * scale).round() / scale
}

/// A rate as a variant's name shows it: whole numbers without a point.
pub(super) fn number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// A grid point in a slug: `m3` for −3.
pub(super) fn grid_slug(k: i64) -> String {
    if k < 0 {
        format!("m{}", -k)
    } else {
        k.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capacity(resolution: f64, max_rate: Option<f64>) -> Capacity {
        Capacity {
            latency: Percentile::P99,
            max: Duration::from_millis(10),
            start: 1000.0,
            max_rate,
            resolution,
            open_loop: OpenLoop {
                param: "rate_iops",
                issuers: 4,
                value: 250.0,
                whole: true,
                achieved: &m::IOPS,
                served: None,
            },
        }
    }

    #[test]
    fn the_coarse_step_at_least_doubles_and_bisects_to_one_step() {
        let c = capacity(0.05, None);
        assert_eq!((c.coarse(), c.bisections()), (16, 4));
        assert!(1.05f64.powi(16) >= 2.0 && 1.05f64.powi(8) < 2.0);
        assert_eq!(capacity(0.1, None).coarse(), 8);
        assert_eq!(capacity(0.01, None).coarse(), 128);
        assert_eq!(capacity(0.5, None).coarse(), 2);
    }

    #[test]
    fn grid_points_round_to_what_the_parameter_takes() {
        let c = capacity(0.05, None);
        // 1000 in total over four jobs: 250 each.
        assert_eq!((c.value_at(0), c.offered_at(0)), (250.0, 1000.0));
        // 1000 · 1.05^16 = 2182.9 → 2180 → 545 per job.
        assert_eq!((c.value_at(16), c.offered_at(16)), (545.0, 2180.0));
        assert_eq!(significant(2182.87, 3), 2180.0);
        assert_eq!(significant(0.012345, 3), 0.0123);
    }

    #[test]
    fn max_rate_bounds_the_grid_and_the_probes() {
        let c = capacity(0.05, Some(4000.0));
        // ln 4 / ln 1.05 = 28.4.
        assert_eq!(c.top(), 28);
        // Two coarse steps up (16, 28), or three down; the start; four
        // bisections.
        assert_eq!((c.min_probes(), c.max_probes()), (6, 8));
        let open = capacity(0.05, None);
        assert_eq!(open.top(), 160);
        assert_eq!(open.max_probes(), 15);
    }
}
