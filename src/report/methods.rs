//! The methodology's account of how targets were compared: which analysis
//! each comparison used and why, and what the verdicts mean.

use super::model::{plan_analysis, Report, MIN_EFFECT_PCT, RESOLUTION_PCT};
use crate::stats::{Analysis, Method};
use crate::store::CampaignData;

/// Sentences for the methodology list; none when nothing was compared.
pub fn comparison_lines(c: &CampaignData, r: &Report) -> Vec<String> {
    let used = |method: Method| count(r, |m| m == method);
    let (paired, unpaired, means) = (
        used(Method::PairedLog),
        used(Method::WelchLog),
        used(Method::WelchMeans),
    );
    if paired + unpaired + means == 0 {
        return Vec::new();
    }
    let mut lines = Vec::new();
    if paired + unpaired > 0 {
        lines.push(RATIO.to_string());
    }
    let order = c.experiment["plan"]["order"]
        .as_str()
        .unwrap_or("interleaved");
    if paired > 0 {
        lines.push(paired_text(order));
    }
    if unpaired > 0 {
        lines.push(match order {
            "sequential" => "Runs are not paired (sequential order: each pair's repetitions ran back to back, not in shared rounds): the test is Welch's t on the logs.".to_string(),
            _ => format!("{unpaired} comparison(s) had fewer than two rounds with a run on both sides and use Welch's t on the logs instead of pairs."),
        });
    }
    if means > 0 {
        lines.push(means_text(c, r));
    }
    lines.push(format!(
        "A difference is called faster or slower when p < 0.05 and it is at least {MIN_EFFECT_PCT}%. A workload's verdict, and the regression gate of `storlab compare --fail-on-regression`, concern its primary metric; the differences of its other metrics are exploratory: they are not corrected for the number of metrics compared, and about one in twenty of them can pass p < 0.05 by chance."
    ));
    let open = r
        .workloads
        .iter()
        .filter_map(|w| w.primary_metric())
        .any(|m| m.targets.iter().any(|t| t.settle.is_some()));
    if open {
        lines.push(format!("For an inconclusive comparison the report estimates how many runs would measure the difference to ±{RESOLUTION_PCT}%, from the spread seen so far (the interval narrows as 1/√n); with two or three runs that spread is itself rough, so the count is a guide."));
    }
    lines
}

const RATIO: &str = "Each target is compared with the baseline on the ratio scale: the % difference is the ratio of the geometric means of their runs, and its interval is exp of a Student-t interval of the mean log ratio, so it never reaches -100% (T. Kalibera & R. Jones, \"Rigorous benchmarking in reasonable time\", ISMM 2013).";

fn paired_text(order: &str) -> String {
    let within = match order {
        "randomized" => "the order within each round was shuffled, so neither target systematically ran first",
        _ => "within a round the targets always ran in the same order (interleaved), so a drift fast enough to differ between neighbouring runs is not cancelled; order = \"randomized\" shuffles each round",
    };
    format!("Runs are paired by round: every target ran once per round, so a drift over the campaign (a neighbour's load, writeback, a warming cache) shifts both runs of a round alike and cancels in their ratio; the test is Student's paired t on the per-round log ratios. {}{}.", within[..1].to_uppercase(), &within[1..])
}

/// Why some comparisons used Welch's t on the means.
fn means_text(c: &CampaignData, r: &Report) -> String {
    const FIELLER: &str = "Welch's t-test on the arithmetic means, with Fieller's interval for the % difference (unbounded when the baseline's mean is not told apart from zero)";
    if plan_analysis(c) == Analysis::Means {
        return format!(
            "As the plan asks (analysis = \"means\"), targets are compared by {FIELLER}."
        );
    }
    let metrics: Vec<String> = r
        .workloads
        .iter()
        .flat_map(|w| {
            w.metrics
                .iter()
                .filter(|m| m.analysis == Analysis::Means)
                .map(move |m| format!("{} {}", w.name, m.name))
        })
        .collect();
    format!(
        "{} had values at or below zero, which have no logarithm: they are compared by {FIELLER}.",
        metrics.join(", ")
    )
}

/// How many comparisons in the report used a method `f` accepts.
fn count(r: &Report, f: impl Fn(Method) -> bool) -> usize {
    r.workloads
        .iter()
        .flat_map(|w| &w.metrics)
        .flat_map(|m| &m.targets)
        .filter_map(|t| t.comparison.as_ref())
        .filter(|c| f(c.method))
        .count()
}
