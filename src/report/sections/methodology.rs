//! The methodology, written out from the plan, what the runs recorded and
//! how the report compared them.

use crate::analysis::model::{
    plan_analysis, Report, LEVEL, MIN_EFFECT_PCT, MIN_RUNS, RESOLUTION_PCT,
};
use crate::report::document::Section;
use crate::report::sections::ranks::ranks_sentence;
use crate::report::table::Table;
use crate::stats::{Analysis, Method};
use crate::store::stored::Repetitions;
use crate::store::CampaignData;

/// The methodology as sentences, how the ranks of multi-client runs were
/// merged, and why each pair stopped when some stopped early or late.
pub fn section(c: &CampaignData, r: &Report) -> Section {
    let mut s = Section::new(2, "Methodology");
    s.list(lines(c, r));
    if let Some(ranks) = ranks_sentence(c) {
        s.text(ranks);
    }
    if c.stops.iter().any(|s| s.reason != "fixed") {
        s.table(stops_table(c));
    }
    s
}

/// The methodology, written out from the plan, what the runs recorded and
/// how the report compared them.
fn lines(c: &CampaignData, r: &Report) -> Vec<String> {
    let plan = c.plan();
    let runs = &c.runs;
    let measured = runs.iter().filter(|r| !r.warmup).count();
    let warmups = runs.len() - measured;
    let dropped = runs.iter().filter(|r| r.caches_dropped).count();
    let remounted = runs.iter().filter(|r| r.remounted).count();
    let order_text = match plan.order.as_str() {
        "randomized" => format!(
            "in rounds, each round's order shuffled with seed {}",
            plan.seed
        ),
        "sequential" => "sequentially: all repetitions of a pair back to back".to_string(),
        "balanced" => "in balanced rounds: every target–workload pair once per round, the rounds' orders the rows of a Williams design (each pair follows every other equally often)".to_string(),
        _ => "in interleaved rounds: every target–workload pair once per round".to_string(),
    };
    let mut lines = vec![
        repetitions_text(&plan.repetitions, &order_text),
        format!("{measured} measured runs and {warmups} warm-up runs (warm-ups are stored but left out of every statistic) were recorded."),
        format!("Page caches were synced and dropped before {dropped} of {} runs; targets were remounted before {remounted} runs.", runs.len()),
        format!(
            "Intervals are {:.0}% Student-t intervals of the mean; where such an interval of a metric that cannot be negative reaches below zero, it is clipped at zero and shown as [0, upper].",
            LEVEL * 100.0
        ),
    ];
    lines.extend(comparison_lines(c, r));
    lines.extend(crate::analysis::steady::methodology_lines(c));
    lines
}

/// The methodology's sentences on how targets were compared: which
/// analysis each comparison used and why, and what the verdicts mean; none
/// when nothing was compared.
fn comparison_lines(c: &CampaignData, r: &Report) -> Vec<String> {
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
    let plan = c.plan();
    let order = plan.order.as_str();
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
        "Each comparison ends in one of three outcomes: different — faster or slower, when p < 0.05 and the difference is at least {MIN_EFFECT_PCT}% —, equivalent within the workload's margin (±{RESOLUTION_PCT}% unless it sets equivalence_margin), when the whole interval lies inside ±margin (two one-sided tests; judged first), or inconclusive, neither yet. A workload's verdict, and the regression gate of `storlab compare --fail-on-regression`, concern its primary metric; the differences of its other metrics are exploratory: each metric's comparisons are corrected for their own number, not for the number of metrics compared."
    ));
    if let Some(looks) = plan.looks(MIN_RUNS as u32) {
        lines.push(format!(
            "The plan looked at its comparisons after every round from round {} to round {} and stopped each workload once they were decided: so that {} looks keep the error of one, each comparison's interval is a {:.2}% interval and its p-values are multiplied by {} (α spent equally over the looks, bounded by the union bound): together the looks call identical targets different, or targets a margin apart equivalent, at most 5% of the time.",
            looks.first,
            looks.last,
            looks.count(),
            100.0 * looks.level_each(LEVEL),
            looks.count()
        ));
    }
    lines.extend(family_line(r));
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

/// How the campaign's primary comparisons were judged as one family, when
/// there were several.
fn family_line(r: &Report) -> Option<String> {
    let primary: Vec<_> = r
        .workloads
        .iter()
        .filter_map(|w| w.primary_metric())
        .flat_map(|m| &m.targets)
        .filter_map(|t| t.correction)
        .collect();
    let n = primary.first()?.comparisons;
    let chance = primary.iter().filter(|c| c.chance).count();
    Some(format!(
        "The {n} primary-metric comparisons of this campaign (every workload and sweep variant against the baseline) are one family: each verdict is judged on its {} adjusted p-value over the family, which keeps the expected share of chance results among the differences called at or below 5% (and, when nothing differs, the chance of calling anything); each comparison's own p is shown beside it, and its interval is its own 95% interval. {chance} of them would have been called on their own p and are not: at this many comparisons chance could explain them. Each other metric's comparisons are a family of their own.",
        crate::analysis::model::family::METHOD
    ))
}

const RATIO: &str = "Each target is compared with the baseline on the ratio scale: the % difference is the ratio of the geometric means of their runs, and its interval is exp of a Student-t interval of the mean log ratio, so it never reaches -100% (T. Kalibera & R. Jones, \"Rigorous benchmarking in reasonable time\", ISMM 2013).";

fn paired_text(order: &str) -> String {
    let within = match order {
        "randomized" => "the order within each round was shuffled, so neither target systematically ran first",
        "balanced" => "the order within the rounds followed a Williams design, so each target ran first and after each other as often as the rounds allow: what one run leaves behind for the next falls on both sides alike",
        _ => "within a round the targets always ran in the same order (interleaved), so a drift fast enough to differ between neighbouring runs is not cancelled; order = \"balanced\" alternates it",
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

fn repetitions_text(reps: &Repetitions, order_text: &str) -> String {
    match reps {
        Repetitions::Adaptive {
            min,
            max,
            until_ci_pct,
        } => format!(
            "Each target–workload pair ran at least {min} and at most {max} times, {order_text}, adding rounds while the 95% CI half-width of its primary metric was above {until_ci_pct}% of the mean."
        ),
        Repetitions::Fixed(n) => format!("Each target–workload pair was planned {n} times, {order_text}."),
        Repetitions::Decided { min, max } => format!(
            "Each workload ran at least {min} and at most {max} rounds on its targets, {order_text}, adding rounds until every comparison of its primary metric with the baseline was different or equivalent, judged after every round with the error spent over the rounds it could take."
        ),
    }
}

/// Why each pair stopped, for adaptive plans and time limits.
fn stops_table(c: &CampaignData) -> Table {
    let mut t = Table::new(
        &[
            "workload",
            "target",
            "measured runs",
            "stopped on",
            "CI half-width",
        ],
        &[false, false, true, false, true],
    );
    for s in &c.stops {
        let why = match s.reason.as_str() {
            "width" => "interval narrow enough",
            "max" => "maximum repetitions",
            "time" => "max_time",
            _ => "fixed repetitions",
        };
        let ci = s
            .ci_pct
            .map(|p| format!("{p:.2}%"))
            .unwrap_or_else(|| "—".into());
        t.push(vec![
            s.workload.clone(),
            s.target.clone(),
            s.measured_runs.to_string(),
            why.into(),
            ci,
        ]);
    }
    t
}
