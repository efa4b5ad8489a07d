//! The methodology, written out from the plan, what the runs recorded and
//! how the report compared them.

use crate::analysis::about::{PairStop, Repetitions, StoredPlan};
use crate::analysis::methodology::Methods;
use crate::analysis::model::{LEVEL, MIN_EFFECT_PCT, MIN_RUNS, RESOLUTION_PCT};
use crate::analysis::CampaignAnalysis;
use crate::report::document::Section;
use crate::report::sections::ranks::ranks_sentence;
use crate::report::table::Table;

/// The methodology as sentences, how the ranks of multi-client runs were
/// merged, and why each pair stopped when some stopped early or late.
pub fn section(a: &CampaignAnalysis) -> Section {
    let mut s = Section::new(2, "Methodology");
    s.list(lines(a));
    if let Some(ranks) = ranks_sentence(a) {
        s.text(ranks);
    }
    if a.about.stops.iter().any(|s| s.reason != "fixed") {
        s.table(stops_table(&a.about.stops));
    }
    s
}

/// The methodology, written out from the plan, what the runs recorded and
/// how the report compared them.
fn lines(a: &CampaignAnalysis) -> Vec<String> {
    let plan = &a.about.plan;
    let runs = a.about.runs;
    let measured = runs.measured;
    let warmups = runs.all - measured;
    let dropped = runs.caches_dropped;
    let remounted = runs.remounted;
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
        format!("Page caches were synced and dropped before {dropped} of {} runs; targets were remounted before {remounted} runs.", runs.all),
        format!(
            "Intervals are {:.0}% Student-t intervals of the mean; where such an interval of a metric that cannot be negative reaches below zero, it is clipped at zero and shown as [0, upper].",
            LEVEL * 100.0
        ),
    ];
    lines.extend(comparison_lines(&a.methods, plan));
    lines.extend(a.methods.steady.iter().cloned());
    lines
}

/// The methodology's sentences on how targets were compared: which
/// analysis each comparison used and why, and what the verdicts mean; none
/// when nothing was compared.
fn comparison_lines(m: &Methods, plan: &StoredPlan) -> Vec<String> {
    let order = plan.order.as_str();
    let (paired, unpaired, means) = (m.paired, m.unpaired, m.means);
    if paired + unpaired + means == 0 {
        return Vec::new();
    }
    let mut lines = Vec::new();
    if paired + unpaired > 0 {
        lines.push(RATIO.to_string());
    }
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
        lines.push(means_text(m));
    }
    lines.push(format!(
        "Each comparison ends in one of three outcomes: different — faster or slower, when p < 0.05 and the difference is at least {MIN_EFFECT_PCT}% —, equivalent within the workload's margin (±{RESOLUTION_PCT}% unless it sets equivalence_margin), when the whole interval lies inside ±margin (two one-sided tests; judged first), or inconclusive, neither yet. A workload's verdict, and the regression gate of `storlab compare --fail-on-regression`, concern its primary metric; the differences of its other metrics are exploratory: each metric's comparisons are corrected for their own number, not for the number of metrics compared."
    ));
    lines.push(format!("A difference's interval (\"CI as judged\") is the one its verdict was judged by: {:.0}% for a comparison of a fixed plan judged on its own, wider where the plan looked after every round or the comparison's family adjusted its p-value (below), so that it excludes no difference exactly when the verdict says different and lies inside the margin exactly when it says equivalent.", LEVEL * 100.0));
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
    lines.extend(family_line(m));
    if m.open {
        lines.push(format!("For an inconclusive comparison the report estimates how many runs would measure the difference to ±{RESOLUTION_PCT}%, from the spread seen so far (the interval narrows as 1/√n); with two or three runs that spread is itself rough, so the count is a guide."));
    }
    lines
}

/// How the campaign's primary comparisons were judged as one family, when
/// there were several.
fn family_line(m: &Methods) -> Option<String> {
    let (n, chance) = m.family?;
    Some(format!(
        "The {n} primary-metric comparisons of this campaign (every workload and sweep variant against the baseline) are one family: each verdict is judged on its {} adjusted p-value over the family, which keeps the expected share of chance results among the differences called at or below 5% (and, when nothing differs, the chance of calling anything); each comparison's own p is shown beside it, and its interval is the one it was judged by: at the level its adjusted p implies (1 − γ·p/q for an interval of its own at 1 − γ, own p and adjusted q), so that it excludes no difference exactly when the verdict says different, lies inside the margin exactly when it says equivalent, and does neither when it says inconclusive. {chance} of them would have been called on their own p and are not: at this many comparisons chance could explain them. Each other metric's comparisons are a family of their own.",
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
fn means_text(m: &Methods) -> String {
    const FIELLER: &str = "Welch's t-test on the arithmetic means, with Fieller's interval for the % difference (unbounded when the baseline's mean is not told apart from zero)";
    if m.plan_means {
        return format!(
            "As the plan asks (analysis = \"means\"), targets are compared by {FIELLER}."
        );
    }
    let metrics: Vec<String> = m
        .means_metrics
        .iter()
        .map(|(w, m)| format!("{w} {m}"))
        .collect();
    format!(
        "{} had values at or below zero, which have no logarithm: they are compared by {FIELLER}.",
        metrics.join(", ")
    )
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
fn stops_table(stops: &[PairStop]) -> Table {
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
    for s in stops {
        let why = match s.reason.as_str() {
            "width" => "interval narrow enough",
            "max" => "maximum repetitions",
            "time" => "max_time",
            "decided" => "every comparison decided",
            "alone" => "nothing to compare (minimum rounds)",
            "out_of_reach" => "out of reach: even the maximum would not decide it",
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
