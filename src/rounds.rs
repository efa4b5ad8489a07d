//! When a target–workload pair has had enough runs: a fixed count, or —
//! for adaptive plans — once the 95% CI half-width of its primary metric is
//! within the asked share of its mean (after `min` runs, at most `max`).
//! Pure decisions, so that resuming a campaign replays them exactly.

use crate::experiment::Repetitions;
use crate::stats::{mean_ci, summarize};

/// Why a pair took no more runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// A fixed number of repetitions was planned and done.
    Fixed,
    /// The interval became narrow enough.
    Width(f64),
    /// `max` runs without reaching the width.
    Max(Option<f64>),
}

impl Stop {
    pub fn reason(self) -> &'static str {
        match self {
            Stop::Fixed => "fixed",
            Stop::Width(_) => "width",
            Stop::Max(_) => "max",
        }
    }

    pub fn ci_pct(self) -> Option<f64> {
        match self {
            Stop::Fixed => None,
            Stop::Width(w) => Some(w),
            Stop::Max(w) => w,
        }
    }
}

/// The 95% CI half-width as a percentage of the mean, when defined.
pub fn ci_pct(values: &[f64]) -> Option<f64> {
    let s = summarize(values)?;
    let ci = mean_ci(values, 0.95)?;
    if s.mean == 0.0 {
        return None;
    }
    Some(100.0 * ci.half_width() / s.mean.abs())
}

/// Decides after a pair's `runs`-th measured run (`values`: its primary
/// metric over the successful ones) whether it needs another.
pub fn decide(reps: Repetitions, runs: u32, values: &[f64]) -> Option<Stop> {
    match reps {
        Repetitions::Fixed(n) => (runs >= n).then_some(Stop::Fixed),
        Repetitions::Adaptive {
            min,
            max,
            until_ci_pct,
        } => {
            if runs < min {
                return None;
            }
            let width = ci_pct(values);
            match width {
                Some(w) if w <= until_ci_pct => Some(Stop::Width(w)),
                _ if runs >= max => Some(Stop::Max(width)),
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADAPTIVE: Repetitions = Repetitions::Adaptive {
        min: 3,
        max: 5,
        until_ci_pct: 2.0,
    };

    #[test]
    fn fixed_plans_stop_at_their_count() {
        assert_eq!(decide(Repetitions::Fixed(3), 2, &[1.0, 1.0]), None);
        assert_eq!(
            decide(Repetitions::Fixed(3), 3, &[1.0, 1.0, 1.0]),
            Some(Stop::Fixed)
        );
    }

    #[test]
    fn adaptive_plans_stop_on_width_or_max() {
        let quiet = [100.0, 100.1, 99.9];
        assert_eq!(decide(ADAPTIVE, 2, &quiet[..2]), None, "never before min");
        assert!(matches!(decide(ADAPTIVE, 3, &quiet), Some(Stop::Width(w)) if w < 2.0));
        let noisy = [100.0, 130.0, 80.0, 120.0];
        assert_eq!(decide(ADAPTIVE, 4, &noisy), None);
        assert!(
            matches!(decide(ADAPTIVE, 5, &[100.0, 130.0, 80.0, 120.0, 90.0]), Some(Stop::Max(Some(w))) if w > 2.0)
        );
        // Failed runs leave too few values for an interval: go on until max.
        assert_eq!(decide(ADAPTIVE, 3, &[100.0]), None);
        assert!(matches!(
            decide(ADAPTIVE, 5, &[100.0]),
            Some(Stop::Max(None))
        ));
    }
}
