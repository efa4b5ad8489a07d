//! How long a campaign will take: what `check` prints and what the
//! progress ETA starts from. Each target–workload pair's run time is
//! learned from the store's past runs where it has some ([`learned`]):
//! the same workload on the same target as recorded, else the kinds'
//! recorded pace against the model; and modelled per kind where it has
//! none ([`model`]). Provisioning and teardown are learned and modelled
//! the same way. Pure: the past runs are read by the caller.

pub mod learned;
pub mod load;
pub mod model;
#[cfg(test)]
pub mod replay;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::experiment::Experiment;
use crate::store::PastCampaign;
pub use load::Load;

/// Where a number of the estimate comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Basis {
    /// The same workload on the same target, as `runs` past runs took.
    Recorded { runs: usize },
    /// The model, scaled by how past runs of the same kinds compared with
    /// it (`ratio`, from `runs` runs).
    Scaled { runs: usize, ratio: f64 },
    /// The model alone: the store has no run of these kinds.
    Modelled,
}

impl Basis {
    pub fn describe(&self) -> String {
        match self {
            Basis::Recorded { runs } => format!("as {runs} recorded run(s) took"),
            Basis::Scaled { runs, ratio } => {
                format!("model ×{ratio:.2}, learned from {runs} run(s) of these kinds")
            }
            Basis::Modelled => "modelled".into(),
        }
    }
}

/// One pair's estimated run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairEstimate {
    pub per_run: Duration,
    /// How many runs the plan makes of it (warm-up and the minimum of
    /// measured repetitions).
    pub runs: u32,
    pub basis: Basis,
    /// What the first run takes beyond the others (making a PostgreSQL
    /// cluster the others reuse), part of `per_run × runs`.
    pub first_extra: Duration,
    /// A capacity search's fewest and most probes (`runs` counts the
    /// most, each probe a pair's runs).
    pub probes: Option<(u32, u32)>,
    /// The most runs the plan may make of it: `runs`, or for a plan that
    /// adds rounds until decided, warm-up and the most repetitions.
    pub most_runs: u32,
}

/// A campaign's estimate at the host's load and, when that load makes it
/// much longer, on a quiet host too: what `check` gives as a range
/// ("1m10s quiet, up to 2m20s at this load"). A load read at one moment
/// may not last the campaign (the seed examples' runs took 0.5–2× their
/// estimate at `check`'s load from one hour to the next), so a busy host
/// gets both ends. What is learned from the store's runs carries the
/// load they ran at and does not move: a campaign estimated from its own
/// recorded runs gets one figure.
#[derive(Debug, Clone)]
pub struct Span {
    pub at_load: Estimate,
    /// The same on a quiet host, where it is under [`QUIET_SHARE`] of
    /// the estimate at the load.
    pub quiet: Option<Estimate>,
}

/// How much shorter than the estimate at the load a quiet host's must be
/// for a range.
pub const QUIET_SHARE: f64 = 0.85;

impl Span {
    pub fn of(exp: &Experiment, past: &[PastCampaign], root: bool, load: Load) -> Span {
        let at_load = Estimate::of(exp, past, root, load);
        let quiet = load
            .is_busy()
            .then(|| Estimate::of(exp, past, root, load.quiet()))
            .filter(|q| q.total().as_secs_f64() < QUIET_SHARE * at_load.total().as_secs_f64());
        Span { at_load, quiet }
    }

    /// The end of the range that a campaign run on a busy host (`busy`)
    /// or on a quiet one is to be held to: the estimate at the load for a
    /// busy run, the quiet end for a quiet one; the one figure where
    /// there is no range.
    pub fn end(&self, busy: bool) -> &Estimate {
        match (&self.quiet, busy) {
            (Some(q), false) => q,
            _ => &self.at_load,
        }
    }
}

/// A campaign's estimate.
#[derive(Debug, Clone)]
pub struct Estimate {
    /// Provisioning every target, before the first run.
    pub setup: Duration,
    pub setup_basis: Basis,
    /// Per target–workload pair (target, workload index).
    pub pairs: BTreeMap<(usize, usize), PairEstimate>,
    /// Tearing everything down after the last run.
    pub teardown: Duration,
    /// The host's load the modelled parts were scaled to.
    pub load: Load,
    /// What the store's past campaigns hold that cannot be and the
    /// estimate left out (`campaign 3: run 2 of 1e9 s`).
    pub left_out: Vec<String>,
}

impl Estimate {
    /// The estimate of `exp` on this host at `load`, learning from `past`
    /// (newest first). What is learned from past runs carries the load
    /// they ran at; what is modelled is scaled to `load`.
    pub fn of(exp: &Experiment, past: &[PastCampaign], root: bool, load: Load) -> Estimate {
        let pace = load.pace();
        let history = learned::History::new(past);
        let per_pair = exp.plan.repetitions.min() + exp.plan.warmup;
        let most_per_pair = exp.plan.repetitions.max() + exp.plan.warmup;
        let searched = crate::plan::searches(exp).into_iter().flatten();
        let pairs = crate::plan::pairs(exp)
            .into_iter()
            .chain(searched)
            .map(|(t, w)| {
                let probes = exp.workloads[w]
                    .capacity
                    .as_ref()
                    .map(|c| (c.min_probes(), c.max_probes()));
                let runs = per_pair * probes.map_or(1, |p| p.1);
                let most_runs = most_per_pair.saturating_mul(probes.map_or(1, |p| p.1));
                let (per_run, basis) = history.run(exp, t, w, root, pace);
                let first_extra = match basis {
                    Basis::Scaled { ratio, .. } => {
                        learned::scaled(model::first_extra(exp, t, w, 1.0), ratio)
                    }
                    _ => model::first_extra(exp, t, w, pace),
                }
                .min(per_run.saturating_mul(runs));
                (
                    (t, w),
                    PairEstimate {
                        per_run,
                        runs,
                        basis,
                        first_extra,
                        probes,
                        most_runs,
                    },
                )
            })
            .collect();
        let (setup, setup_basis) = history.setup(exp, pace);
        Estimate {
            setup,
            setup_basis,
            pairs,
            teardown: history.teardown(exp, pace),
            load,
            left_out: past
                .iter()
                .flat_map(|c| {
                    c.left_out
                        .iter()
                        .map(move |l| format!("campaign {}: {l}", c.id))
                })
                .collect(),
        }
    }

    /// The runs alone, provisioning and teardown left out.
    pub fn runs(&self) -> Duration {
        self.pairs.values().fold(Duration::ZERO, |sum, p| {
            sum.saturating_add(p.per_run.saturating_mul(p.runs))
        })
    }

    /// The runs alone if every pair takes the most runs its plan allows
    /// (rounds added until decided, every probe of a search).
    pub fn most_runs(&self) -> Duration {
        self.pairs.values().fold(Duration::ZERO, |sum, p| {
            sum.saturating_add(p.per_run.saturating_mul(p.most_runs.max(p.runs)))
        })
    }

    /// The whole campaign, from start to end.
    pub fn total(&self) -> Duration {
        self.setup
            .saturating_add(self.runs())
            .saturating_add(self.teardown)
    }

    /// One run of a pair (zero for a pair the plan does not hold).
    pub fn per_run(&self, target: usize, workload: usize) -> Duration {
        self.pairs
            .get(&(target, workload))
            .map(|p| p.per_run)
            .unwrap_or_default()
    }

    /// A note on what the estimate left out of the store's history, if
    /// anything: how much, and the first of it.
    pub fn left_out_note(&self) -> Option<String> {
        const SHOWN: usize = 2;
        if self.left_out.is_empty() {
            return None;
        }
        let mut said = self.left_out[..self.left_out.len().min(SHOWN)].join(", ");
        if self.left_out.len() > SHOWN {
            said.push_str(&format!(" and {} more", self.left_out.len() - SHOWN));
        }
        Some(format!(
            "the estimate leaves out what the store records but cannot be ({said}): imported or damaged history"
        ))
    }

    /// How many pairs' runs came from each basis: (recorded, scaled, modelled).
    pub fn bases(&self) -> (usize, usize, usize) {
        self.pairs
            .values()
            .fold((0, 0, 0), |(r, s, m), p| match p.basis {
                Basis::Recorded { .. } => (r + 1, s, m),
                Basis::Scaled { .. } => (r, s + 1, m),
                Basis::Modelled => (r, s, m + 1),
            })
    }
}
