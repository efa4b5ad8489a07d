//! Steady state, as fio's `steadystate` (`ss`), `ss_dur` and `ss_ramp`: a
//! time-based run ends early once the per-second throughput over a rolling
//! window of `ss_dur` seconds meets a criterion; `runtime` stays the upper
//! bound.
//!
//! The criteria are fio's (steadystate.c), on the window's samples y₀…yₙ₋₁
//! taken once a second:
//!
//! * `iops` / `bw` (range): the largest deviation max|yᵢ − ȳ| from the
//!   window mean, "all individual measurements within the limit of the mean";
//! * `iops_slope` / `bw_slope`: the least-squares slope of y over x = 0…n−1
//!   seconds, in absolute value.
//!
//! A limit is a percentage of the window mean (`bw:20%`: every sample within
//! ±20% of the mean; `bw_slope:1%`: the slope below 1% of the mean per
//! second) or, as fio also accepts, an absolute value: operations/s for
//! `iops`, bytes/s written as a size (`10M`) for `bw`. As in fio the run is
//! steady when the criterion is strictly below the limit. `ss_ramp` counts
//! from the start of measurement (after `ramp_time`, where fio resets its
//! clock too); samples before it are not judged. `ss_dur` alone judges
//! fio's default criterion, `iops_slope:0.01%`; `steadystate` without
//! `ss_dur` is refused (fio would silently ignore it).
//!
//! Here: the parameters and their checks; `criterion.rs` holds the pure
//! criterion, `detector.rs` the state the sampler feeds. The sampler and the
//! run-local stop the jobs obey live in `io/mod.rs` and `io/job.rs`.

mod criterion;
mod detector;

use std::time::Duration;

pub use self::criterion::{Criterion, DEFAULT_CRITERION};
pub use self::detector::Detector;
use crate::params::{declare, Fault};

declare! {
    /// fio's steady-state parameters, part of an `io` workload's.
    pub struct SteadyParams {
        steadystate: string => "end a time-based run at steady state, as fio: iops|iops_slope|bw|bw_slope:LIMIT, LIMIT a percentage of the window mean (\"20%\") or absolute (IOPS; bytes/s as a size); needs runtime and ss_dur",
        ss: string => "alias of steadystate, as in fio",
        ss_dur: duration => "steady-state window, whole seconds (one sample a second); alone it judges fio's default iops_slope:0.01%",
        ss_ramp: duration => "measured time before steady-state samples are judged (counted after ramp_time)",
    }
}

/// A workload's steady-state settings, checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadySpec {
    pub criterion: Criterion,
    /// Window length in samples (seconds).
    pub window: usize,
    /// Samples (seconds) after the start of measurement that are not judged.
    pub skip: usize,
}

impl SteadyParams {
    /// The `steadystate` text and the key it was written under (`ss` is fio's alias).
    fn criterion_text(&self) -> Option<(&'static str, &str)> {
        self.steadystate
            .as_deref()
            .map(|s| ("steadystate", s))
            .or_else(|| self.ss.as_deref().map(|s| ("ss", s)))
    }

    /// Checks the steady-state parameters against each other and `runtime`.
    pub fn validate(&self, runtime: Option<Duration>) -> Result<(), Fault> {
        if self.steadystate.is_some() && self.ss.is_some() {
            return Err(("ss", "give steadystate or its alias ss, not both".into()));
        }
        let text = self.criterion_text();
        let Some(dur) = self.ss_dur else {
            return match (text, self.ss_ramp) {
                (Some((key, _)), _) => Err((key, format!("{key} needs ss_dur, the window steady state is judged over (e.g. ss_dur = \"30s\")"))),
                (None, Some(_)) => Err(("ss_ramp", "ss_ramp needs steadystate and ss_dur".into())),
                (None, None) => Ok(()),
            };
        };
        let key = text.map(|(k, _)| k).unwrap_or("ss_dur");
        Criterion::parse(text.map(|(_, t)| t).unwrap_or(DEFAULT_CRITERION))
            .map_err(|e| (key, e))?;
        let Some(runtime) = runtime else {
            return Err((key, format!("{key} needs runtime (a time-based run): runtime is the upper bound of a run that does not reach steady state")));
        };
        if dur.subsec_nanos() != 0 || dur.as_secs() < 2 {
            return Err((
                "ss_dur",
                "ss_dur must be a whole number of seconds, at least 2 (throughput is sampled once a second)".into(),
            ));
        }
        let ramp = self.ss_ramp.unwrap_or_default();
        if ramp.saturating_add(dur) > runtime {
            return Err((
                "ss_dur",
                format!(
                    "ss_ramp + ss_dur ({} s) exceed runtime ({} s): steady state could never be judged",
                    (ramp.saturating_add(dur)).as_secs_f64(),
                    runtime.as_secs_f64()
                ),
            ));
        }
        Ok(())
    }

    /// The checked settings, or `None` when the workload does not ask for
    /// steady state (or its parameters are invalid, which validation refuses).
    pub fn spec(&self) -> Option<SteadySpec> {
        let dur = self.ss_dur?;
        let text = self
            .criterion_text()
            .map(|(_, t)| t)
            .unwrap_or(DEFAULT_CRITERION);
        let criterion = Criterion::parse(text).ok()?;
        Some(SteadySpec {
            criterion,
            window: dur.as_secs() as usize,
            skip: self.ss_ramp.unwrap_or_default().as_secs_f64().ceil() as usize,
        })
    }
}
