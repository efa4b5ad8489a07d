//! How the campaign's comparisons were made, for the report's methodology:
//! which tests its comparisons used (paired, unpaired, on means), why some
//! used means, how its primary comparisons were judged as one family, and
//! what the steady-state detector found. The plan, the runs and why each
//! pair stopped are the campaign's own ([`super::about`]).

use super::model::{plan_analysis, Report};
use crate::stats::{Analysis, Method};
use crate::store::CampaignData;

/// The comparisons of a campaign, counted by how they were made.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Methods {
    /// Comparisons by Student's paired t on the per-round log ratios.
    pub paired: usize,
    /// By Welch's t on the logs.
    pub unpaired: usize,
    /// By Welch's t on the means.
    pub means: usize,
    /// The plan asked for means (`analysis = "means"`).
    pub plan_means: bool,
    /// The (workload, metric) compared by means for values at or below
    /// zero, which have no logarithm.
    pub means_metrics: Vec<(String, String)>,
    /// The primary-metric comparisons judged as one family, and how many
    /// of them chance could explain; `None` without a family.
    pub family: Option<(usize, usize)>,
    /// Whether some primary comparison is inconclusive (has a count of
    /// runs that would settle it).
    pub open: bool,
    /// What the steady-state detector found ([`super::steady`]).
    pub steady: Vec<String>,
}

/// How campaign `c`'s comparisons (its `model`) were made.
pub fn methods(c: &CampaignData, r: &Report) -> Methods {
    let used = |method: Method| count(r, |m| m == method);
    let primary = || r.workloads.iter().filter_map(|w| w.primary_metric());
    let corrections: Vec<_> = primary()
        .flat_map(|m| &m.targets)
        .filter_map(|t| t.correction)
        .collect();
    Methods {
        paired: used(Method::PairedLog),
        unpaired: used(Method::WelchLog),
        means: used(Method::WelchMeans),
        plan_means: plan_analysis(c) == Analysis::Means,
        means_metrics: r
            .workloads
            .iter()
            .flat_map(|w| {
                w.metrics
                    .iter()
                    .filter(|m| m.analysis == Analysis::Means)
                    .map(move |m| (w.name.clone(), m.name.clone()))
            })
            .collect(),
        family: corrections.first().map(|f| {
            (
                f.comparisons,
                corrections.iter().filter(|c| c.chance).count(),
            )
        }),
        open: primary().any(|m| m.targets.iter().any(|t| t.settle.is_some())),
        steady: super::steady::methodology_lines(c),
    }
}

/// How many comparisons of the model used a method `f` accepts.
fn count(r: &Report, f: impl Fn(Method) -> bool) -> usize {
    r.workloads
        .iter()
        .flat_map(|w| &w.metrics)
        .flat_map(|m| &m.targets)
        .filter_map(|t| t.comparison.as_ref())
        .filter(|c| f(c.method))
        .count()
}
