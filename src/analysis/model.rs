//! The report model: everything a report shows, computed once from the
//! store — per workload and metric, each target's summary and interval and,
//! against the baseline, the % difference with its interval, p-value and
//! verdict (on the ratio scale, paired by round where the plan made rounds:
//! [`crate::stats::analysis`]), and for an inconclusive one how many runs
//! would settle it; plus the warnings a careful reviewer would raise, once
//! per campaign. Renderers (terminal, Markdown, HTML) only lay this out.

use serde::Serialize;

pub mod family;

use self::family::Correction;
use crate::metric::{self, Direction, MetricKey, Unit};
use crate::stats::{
    judge, mad_outliers, mean_ci, runs_for_half_width, runs_to_resolve, summarize, t_quantile,
    verdict, Analysis, Comparison, Design, Interval, Judged, Looks, Margin, Outcome, RoundValue,
    Summary, Verdict, DEFAULT_ALPHA, DEFAULT_THRESHOLD,
};
use crate::store::keyed::distinct_keys;
use crate::store::{CampaignData, RunData, WorkloadRow};
use crate::warning::{Warning, WarningKind};

/// The precision, in %, a reviewer asks of a result: an interval wider
/// than ±this is imprecise, and the report says how many runs would
/// narrow it to this.
pub const RESOLUTION_PCT: f64 = 5.0;
/// Fewer measured runs than this make an interval unreliable.
pub const MIN_RUNS: usize = 3;
/// Outliers are only looked for among at least this many runs.
pub const MIN_OUTLIER_RUNS: usize = 5;
/// Confidence level of every interval.
pub const LEVEL: f64 = 0.95;
/// Differences smaller than this (in %) are not called faster or slower even
/// when significant: an equivalence margin, so that run-to-run drift of a
/// busy host is not reported as a finding.
pub const MIN_EFFECT_PCT: f64 = 1.0;

#[derive(Debug, Clone, Serialize)]
pub struct TargetStats {
    pub target: String,
    pub values: Vec<f64>,
    pub summary: Option<Summary>,
    /// Student t interval of the mean; for values that cannot be negative
    /// its lower bound is clipped at 0 (`ci_clipped`).
    pub ci: Option<Interval>,
    /// The Student interval reached below zero, impossible for these
    /// values, and was clipped there.
    pub ci_clipped: bool,
    /// Indices into `values` of MAD outliers.
    pub outliers: Vec<usize>,
    /// Against the baseline target; `None` for the baseline itself.
    pub comparison: Option<Comparison>,
    /// The test of a difference: better, worse, or no significant
    /// difference (judged in the comparison's family).
    pub verdict: Option<Verdict>,
    /// The tests of equivalence within the workload's margin (two one-sided
    /// tests, [`crate::stats::equivalence`]): `None` where no ratio exists.
    pub margin: Option<Margin>,
    /// The whole interval lies within ±margin (judged in the comparison's
    /// family): any difference is smaller than the margin.
    pub equivalent: bool,
    /// How the comparison ends: different, equivalent or inconclusive
    /// (`None` without a comparison, or with too few runs). Equivalence
    /// is judged first ([`crate::stats::verdict`]).
    pub outcome: Option<Outcome>,
    /// For an inconclusive comparison: what would settle it.
    pub settle: Option<Settle>,
    /// How the comparison fared in its family of comparisons (a study's
    /// cells, a campaign's workloads): `None` when it was the only one.
    pub correction: Option<Correction>,
    /// Compared with the baseline on fewer than [`MIN_RUNS`] runs (pairs
    /// when paired): no interval, no verdict; the values say what there is.
    pub too_few: bool,
    /// The validity warnings of the runs these figures (and, against the
    /// baseline, the baseline's) rest on: the verdict carries them, as
    /// marks (`crate::report::text::caveat_marks`) in the verdict lines,
    /// the overview figure and the tables.
    pub caveats: Vec<Caveat>,
}

/// A validity warning ([`WarningKind::is_caveat`]) of runs a verdict rests
/// on: its kind, the target whose runs carry it, in how many of them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Caveat {
    pub kind: WarningKind,
    pub target: String,
    pub runs: usize,
    pub of: usize,
    /// For [`WarningKind::ServedByDifferentLayers`]: the layer each side
    /// read most from ([`crate::analysis::reads::apart`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served: Option<Apart>,
}

/// The layers the two sides of a verdict read most from, with the share
/// each served (whole percent).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Apart {
    pub candidate: String,
    pub candidate_from: String,
    pub candidate_pct: u32,
    pub baseline: String,
    pub baseline_from: String,
    pub baseline_pct: u32,
}

/// The caveats of `workload`'s measured runs on `target`, by kind.
pub fn caveats_of(c: &CampaignData, workload: &str, target: &str) -> Vec<Caveat> {
    let (of, counts) = c.warned_runs(workload, target);
    WarningKind::ALL
        .into_iter()
        .filter(|k| k.is_caveat())
        .filter_map(|kind| {
            let (_, runs) = counts.iter().find(|(k, _)| *k == kind)?;
            Some(Caveat {
                kind,
                target: target.to_string(),
                runs: *runs,
                of,
                served: None,
            })
        })
        .collect()
}

/// How many runs would measure an inconclusive difference to ±`pct` %.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settle {
    pub pct: f64,
    /// Runs per target (pairs of runs when paired by round), estimated from
    /// the observed spread; `None` when more than
    /// [`crate::stats::resolve::MAX_RUNS`] would be needed.
    pub runs: Option<usize>,
    /// Runs compared now (pairs when paired).
    pub now: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricReport {
    /// The metric as people read it: its compact name, label values first
    /// (`write_geomean_bw_bytes_per_s`).
    pub name: String,
    pub key: MetricKey,
    pub unit: Unit,
    pub direction: Direction,
    /// How this metric's targets were compared (means when a value was not
    /// positive, or when the plan asked).
    pub analysis: Analysis,
    /// A secondary metric: its verdicts are exploratory; the workload's
    /// verdict and the regression gate are about the primary metric.
    pub exploratory: bool,
    pub targets: Vec<TargetStats>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadReport {
    pub name: String,
    pub kind: String,
    pub primary: String,
    /// The primary metric first, then the catalogue's headline metrics
    /// present (and a kind's own summary metrics).
    pub metrics: Vec<MetricReport>,
}

impl WorkloadReport {
    pub fn primary_metric(&self) -> Option<&MetricReport> {
        self.metrics.first()
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub baseline: String,
    pub targets: Vec<String>,
    pub workloads: Vec<WorkloadReport>,
    pub warnings: Vec<Warning>,
}

/// What a workload kind chooses to summarise beyond the stored primary
/// metric and the catalogue's headline ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chosen {
    /// The metric the verdict and the gate concern, in place of the
    /// workload's stored primary (a matrix's `primary_test`).
    pub primary: Option<MetricKey>,
    /// Metrics shown and compared beside it (each test's geometric mean).
    pub beside: Vec<MetricKey>,
}

/// Builds the model for a campaign; `baseline` overrides the stored one,
/// `choose` says what a workload kind summarises of its own. Called once,
/// by `analysis::campaign::judge`, which every output of a campaign starts
/// from.
pub(super) fn build(
    c: &CampaignData,
    baseline: Option<&str>,
    choose: &dyn Fn(&WorkloadRow) -> Chosen,
) -> anyhow::Result<Report> {
    let baseline = match baseline {
        Some(b) if c.targets.iter().any(|t| t.name == b) => b.to_string(),
        Some(b) => anyhow::bail!(
            "campaign {} has no target `{b}`; its targets are: {}",
            c.campaign.id,
            c.targets
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => c
            .targets
            .iter()
            .find(|t| t.baseline)
            .or(c.targets.first())
            .map(|t| t.name.clone())
            .unwrap_or_default(),
    };
    let targets: Vec<String> = c.targets.iter().map(|t| t.name.clone()).collect();
    let mut workloads: Vec<WorkloadReport> = c
        .workloads
        .iter()
        .map(|w| workload(c, w, choose(w), &targets, &baseline))
        .collect();
    family::control(&mut workloads);
    let warnings = warnings(c, &workloads);
    Ok(Report {
        baseline,
        targets,
        workloads,
        warnings,
    })
}

/// The figures of its runs the model of `w` reads (with any labels): the
/// kind's chosen primary metric, else the stored one, the catalogue's
/// headlines and what the kind chose beside them — [`workload`]'s keys
/// before it knows which the runs recorded (`crate::analysis::figures`).
pub fn figures(w: &WorkloadRow, chosen: &Chosen) -> Vec<String> {
    (chosen.primary.iter().cloned())
        .chain([MetricKey::plain(&w.primary_metric)])
        .chain(beside(w, &chosen.beside))
        .map(|k| k.name)
        .collect()
}

/// The keys the model of `w` summarises beside its primary metric: the
/// catalogue's headlines (but the stored primary) and what the kind chose.
fn beside<'a>(w: &'a WorkloadRow, chosen: &'a [MetricKey]) -> impl Iterator<Item = MetricKey> + 'a {
    (metric::headlines())
        .filter(|d| d.name != w.primary_metric)
        .map(|d| MetricKey::plain(d.name))
        .chain(chosen.iter().cloned())
}

fn workload(
    c: &CampaignData,
    w: &WorkloadRow,
    chosen: Chosen,
    targets: &[String],
    baseline: &str,
) -> WorkloadReport {
    let name = w.name.as_str();
    let recorded = distinct_keys(c.runs_of_workload(name).map(|r| &r.metrics));
    let present = |m: &MetricKey| recorded.contains(m);
    let primary = chosen
        .primary
        .filter(present)
        .unwrap_or_else(|| MetricKey::plain(&w.primary_metric));
    let mut keys = vec![primary.clone()];
    keys.extend(beside(w, &chosen.beside));
    let mut metrics: Vec<MetricReport> = Vec::new();
    for key in keys.iter().filter(|m| present(m)) {
        if metrics.iter().any(|m| &m.key == key) {
            continue;
        }
        let mut report = metric(c, name, key, targets, baseline);
        report.exploratory = *key != primary;
        metrics.push(report);
    }
    WorkloadReport {
        name: name.into(),
        kind: w.kind.clone(),
        primary: primary.compact(),
        metrics,
    }
}

/// How the campaign's runs can be compared: paired by round unless the
/// plan ran each pair's repetitions back to back.
pub fn design(c: &CampaignData) -> Design {
    match c.plan().sequential() {
        true => Design::Unpaired,
        false => Design::Rounds,
    }
}

/// `candidate` against the baseline's runs `base` as the campaign's plan
/// lets them be compared: paired by round where it made rounds, and, for a
/// plan that ran until decided, with the error spent over the rounds it
/// could have stopped at ([`crate::stats::sequential`]).
/// Its tests of equivalence are at `margin_pct`, the workload's margin.
pub fn compared(
    c: &CampaignData,
    base: &[RoundValue],
    candidate: &[RoundValue],
    analysis: Analysis,
    margin_pct: f64,
) -> Option<Judged> {
    let looks = c
        .plan()
        .looks(MIN_RUNS as u32)
        .unwrap_or(Looks::once(MIN_RUNS as u32));
    judge(
        base,
        candidate,
        design(c),
        analysis,
        LEVEL,
        looks,
        margin_pct,
    )
}

/// The analysis the campaign's plan asks for (ratio unless it says means).
pub fn plan_analysis(c: &CampaignData) -> Analysis {
    Analysis::from_word(c.plan().analysis.as_deref())
}

/// One metric's measured values on a target, with their rounds.
pub fn round_values(
    c: &CampaignData,
    workload: &str,
    target: &str,
    key: &MetricKey,
) -> Vec<RoundValue> {
    c.column(workload, target, key)
        .into_iter()
        .map(|(round, value)| RoundValue { round, value })
        .collect()
}

/// Statistics of one metric over each target, compared with the baseline
/// (marked primary; [`workload`] marks the secondary ones exploratory).
pub fn metric(
    c: &CampaignData,
    workload: &str,
    key: &MetricKey,
    targets: &[String],
    baseline: &str,
) -> MetricReport {
    let (unit, direction) = unit_and_direction(c, workload, key);
    let ran: Vec<&String> = targets
        .iter()
        .filter(|t| c.runs_of(workload, t).next().is_some())
        .collect();
    let runs: Vec<Vec<RoundValue>> = ran
        .iter()
        .map(|t| round_values(c, workload, t, key))
        .collect();
    let analysis = plan_analysis(c).for_values(runs.iter().flatten().map(|r| &r.value));
    // The baseline's column, read once: it is among those read when the
    // baseline ran the workload.
    let base = match ran.iter().position(|t| *t == baseline) {
        Some(i) => runs[i].clone(),
        None => round_values(c, workload, baseline, key),
    };
    let margin_pct = c.margin_pct(workload);
    let stats = ran
        .iter()
        .zip(runs)
        .map(|(t, values)| {
            let judged = match *t == baseline {
                true => None,
                false => compared(c, &base, &values, analysis, margin_pct),
            };
            let comparison = judged.map(|j| j.comparison);
            // A baseline that did not run this workload (a capacity
            // search's probe at a rate only this target took) leaves
            // nothing to compare: no verdict, and not for too few runs.
            let too_few = *t != baseline
                && comparison.is_none()
                && !values.is_empty()
                && !base.is_empty()
                && (values.len() < MIN_RUNS || base.len() < MIN_RUNS);
            let values = values.iter().map(|r| r.value).collect();
            let mut stats = target_stats(t, values, comparison, direction);
            stats.too_few |= too_few;
            stats.judge_margin(judged.and_then(|j| j.margin));
            stats.caveats = caveats_of(c, workload, t);
            if *t != baseline {
                stats.caveats.extend(caveats_of(c, workload, baseline));
            }
            stats
        })
        .collect();
    MetricReport {
        name: key.compact(),
        key: key.clone(),
        unit,
        direction,
        analysis,
        exploratory: false,
        targets: stats,
    }
}

/// A metric's unit and direction as stored with the workload's runs, else
/// as the catalogue declares them.
fn unit_and_direction(c: &CampaignData, workload: &str, key: &MetricKey) -> (Unit, Direction) {
    match (c.stored_unit(workload, key), metric::lookup(&key.name)) {
        (Some(m), _) => m,
        (None, Some(d)) => (d.unit, d.direction),
        (None, None) => (Unit::Flag, Direction::HigherIsBetter),
    }
}

/// One target's figures, and its verdict against the baseline if compared.
pub fn target_stats(
    target: &str,
    values: Vec<f64>,
    comparison: Option<Comparison>,
    direction: Direction,
) -> TargetStats {
    let (ci, ci_clipped) = match values.len() < MIN_RUNS {
        true => (None, false),
        false => clipped_ci(&values),
    };
    // One rule for small n: below the minimum, no interval and no verdict.
    let too_few = comparison.as_ref().is_some_and(|c| c.n < MIN_RUNS);
    let comparison = comparison.filter(|_| !too_few);
    let verdict = comparison.as_ref().map(|c| call(c, direction));
    TargetStats {
        target: target.into(),
        summary: summarize(&values),
        ci,
        ci_clipped,
        outliers: mad_outliers(&values, DEFAULT_THRESHOLD),
        settle: comparison
            .as_ref()
            .zip(verdict)
            .and_then(|(c, v)| settle(c, v != Verdict::NoSignificantDifference, RESOLUTION_PCT)),
        outcome: comparison
            .as_ref()
            .zip(verdict)
            .map(|(_, v)| three(v, false)),
        verdict,
        margin: None,
        equivalent: false,
        comparison,
        values,
        correction: None,
        too_few,
        caveats: Vec::new(),
    }
}

impl TargetStats {
    /// Judges equivalence on its own tests `margin` (a family judges it
    /// again on the adjusted p: [`family`]), and what would settle the
    /// comparison when it is neither different nor equivalent.
    pub fn judge_margin(&mut self, margin: Option<Margin>) {
        self.margin = margin.filter(|_| self.comparison.is_some());
        let p = self.margin.map_or(f64::NAN, |m| m.p_value());
        self.decide(self.verdict, p);
    }

    /// Decides the comparison on the difference's `verdict` and the
    /// equivalence p-value `p_equivalent` (its own or its family's).
    pub fn decide(&mut self, verdict: Option<Verdict>, p_equivalent: f64) {
        self.verdict = verdict;
        self.equivalent = self.comparison.is_some() && p_equivalent < DEFAULT_ALPHA;
        let decided =
            self.equivalent || verdict.is_some_and(|v| v != Verdict::NoSignificantDifference);
        self.outcome = verdict
            .filter(|_| self.comparison.is_some() && !self.too_few)
            .map(|v| three(v, self.equivalent));
        let pct = self.margin.map_or(RESOLUTION_PCT, |m| m.pct);
        self.settle = self
            .comparison
            .as_ref()
            .and_then(|c| settle(c, decided, pct));
    }
}

/// The Student interval of the mean of `values`, its lower bound clipped at
/// 0 when no value is negative (a throughput, a time, a count cannot be);
/// true when it was clipped.
fn clipped_ci(values: &[f64]) -> (Option<Interval>, bool) {
    match mean_ci(values, LEVEL) {
        Some(ci) if ci.low < 0.0 && values.iter().all(|v| *v >= 0.0) => {
            (Some(Interval { low: 0.0, ..ci }), true)
        }
        ci => (ci, false),
    }
}

/// The outcome of a comparison whose test of a difference says `v`,
/// equivalent or not.
pub(super) fn three(v: Verdict, equivalent: bool) -> Outcome {
    match (equivalent, v) {
        (true, _) => Outcome::Equivalent,
        (false, Verdict::NoSignificantDifference) => Outcome::Inconclusive,
        (false, _) => Outcome::Different,
    }
}

/// What would settle an inconclusive comparison (one neither different
/// nor equivalent): runs that would measure it to ±`pct` %. `None` when
/// it is `decided`, or already measured to ±`pct`.
pub fn settle(c: &Comparison, decided: bool, pct: f64) -> Option<Settle> {
    if decided {
        return None;
    }
    let runs = runs_to_resolve(c, pct);
    if runs.is_some_and(|n| n <= c.n) {
        return None;
    }
    Some(Settle {
        pct,
        runs,
        now: c.n,
    })
}

/// The verdict: significant at α = 0.05 and at least [`MIN_EFFECT_PCT`].
pub fn call(c: &Comparison, direction: Direction) -> Verdict {
    call_at(c, direction, c.p_value)
}

/// The verdict judged on `p` in place of the comparison's own p-value (its
/// family's adjusted one: [`family`]).
pub fn call_at(c: &Comparison, direction: Direction, p: f64) -> Verdict {
    if c.diff_pct.abs() < MIN_EFFECT_PCT {
        return Verdict::NoSignificantDifference;
    }
    let judged = Comparison { p_value: p, ..*c };
    verdict(&judged, direction, DEFAULT_ALPHA)
}

/// Half-width of a target's Student interval relative to its mean, in %,
/// and the runs that would narrow it to ±[`RESOLUTION_PCT`]; `None` with
/// fewer than two runs or a zero mean.
pub fn precision(t: &TargetStats) -> Option<(f64, Option<usize>)> {
    let s = t.summary.filter(|s| s.n >= 2 && s.mean != 0.0)?;
    let n = s.n as f64;
    let se = s.stddev / n.sqrt() / s.mean.abs();
    let half = t_quantile(1.0 - (1.0 - LEVEL) / 2.0, n - 1.0) * se;
    let runs = runs_for_half_width(se, s.n, n - 1.0, RESOLUTION_PCT / 100.0, LEVEL);
    Some((100.0 * half, runs))
}

fn warnings(c: &CampaignData, workloads: &[WorkloadReport]) -> Vec<Warning> {
    let failed = c.runs.iter().filter(|r| r.status != "ok").map(|r| {
        let why = r.error.as_deref().unwrap_or("interrupted");
        (
            r,
            Warning::new(WarningKind::RunFailed, format!("{}: {why}", r.status)),
        )
    });
    let mut out = said_once(failed);
    let undropped = c.runs.iter().filter(|r| !r.caches_dropped).count();
    if undropped > 0 {
        out.push(Warning::new(WarningKind::CachesNotDropped, format!("caches were not dropped before {undropped} of {} runs: reads may have come from the page cache", c.runs.len())));
    }
    out.extend(summarised(workloads));
    let per_run = c
        .runs
        .iter()
        .flat_map(|r| r.warnings.iter().map(move |w| (r, w.clone())));
    out.extend(said_once(per_run));
    out
}

/// Per-run messages, each said once: a message that several runs of one
/// workload on one target share — word for word, or but for its figures
/// (`16.2 MiB` in one run, `16.3 MiB` in the next) — becomes one line with
/// their count and ids, in the order the messages first appeared.
fn said_once<'a>(messages: impl Iterator<Item = (&'a RunData, Warning)>) -> Vec<Warning> {
    struct Group<'g> {
        key: (&'g str, &'g str, WarningKind, String),
        text: String,
        ids: Vec<i64>,
        same_figures: bool,
    }
    let mut groups: Vec<Group<'a>> = Vec::new();
    // Each group's place in `groups` by its key: one lookup a message, not
    // a pass over every group of every pair.
    let mut place: std::collections::HashMap<(&str, &str, WarningKind, String), usize> =
        std::collections::HashMap::new();
    for (r, w) in messages {
        let key = (
            r.workload.as_str(),
            r.target.as_str(),
            w.kind,
            without_figures(&w.text),
        );
        match place.get(&key).map(|&i| &mut groups[i]) {
            Some(g) => {
                g.ids.push(r.id);
                g.same_figures &= g.text == w.text;
            }
            None => {
                place.insert(key.clone(), groups.len());
                groups.push(Group {
                    key,
                    text: w.text,
                    ids: vec![r.id],
                    same_figures: true,
                });
            }
        }
    }
    groups
        .into_iter()
        .map(|g| {
            let (workload, target, kind, _) = g.key;
            let text = g.text;
            let line = match g.ids.as_slice() {
                [id] => format!("run {id} ({workload} on {target}): {text}"),
                ids => {
                    let list: Vec<String> = ids.iter().map(i64::to_string).collect();
                    let figures = if g.same_figures {
                        String::new()
                    } else {
                        format!(" (figures of run {})", ids[0])
                    };
                    format!(
                        "runs {} ({workload} on {target}, {} runs): {text}{figures}",
                        list.join(", "),
                        ids.len()
                    )
                }
            };
            Warning::new(kind, line)
        })
        .collect()
}

/// `text` with every number replaced by `#`, so that messages that differ
/// only in a measured figure are told alike.
fn without_figures(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        let numeric = c.is_ascii_digit() || (in_number && c == '.');
        if numeric && !in_number {
            out.push('#');
        } else if !numeric {
            out.push(c);
        }
        in_number = numeric;
    }
    out
}

/// The warnings about the primary metrics' statistics, one line per kind
/// of problem with every pair it concerns listed.
fn summarised(workloads: &[WorkloadReport]) -> Vec<Warning> {
    let (mut few, mut open, mut imprecise, mut outliers, mut first) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for w in workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        let compared = m.targets.iter().any(|t| t.comparison.is_some());
        for t in &m.targets {
            let n = t.values.len();
            if n < MIN_RUNS {
                few.push(format!("{} on {} ({n})", w.name, t.target));
            }
            if let Some(s) = &t.settle {
                open.push(format!(
                    "{} {} {} ({} now)",
                    w.name,
                    t.target,
                    runs_text(s.runs),
                    s.now
                ));
            }
            if !compared {
                imprecise.extend(imprecise_text(&w.name, t));
            }
            let first_apart = first_run_text(&w.name, m, t);
            outliers.extend(
                outlier_texts(&w.name, m, t)
                    .into_iter()
                    .filter(|(i, _)| !(*i == 0 && first_apart.is_some()))
                    .map(|(_, text)| text),
            );
            first.extend(first_apart);
        }
    }
    let mut out = Vec::new();
    let mut push = |kind: WarningKind, items: Vec<String>, head: String| {
        if !items.is_empty() {
            out.push(Warning::new(kind, format!("{head}: {}", items.join("; "))));
        }
    };
    push(
        WarningKind::FewRuns,
        few,
        format!("too few measured runs for an interval (at least {MIN_RUNS} needed)"),
    );
    push(
        WarningKind::Inconclusive,
        open,
        format!(
            "inconclusive against the baseline; runs per target that would measure the difference to ±{RESOLUTION_PCT}%"
        ),
    );
    push(
        WarningKind::Imprecise,
        imprecise,
        format!("imprecise: the 95% interval of the mean is wider than ±{RESOLUTION_PCT}%"),
    );
    push(
        WarningKind::Outlier,
        outliers,
        "outliers (modified z-score above 3.5)".to_string(),
    );
    push(
        WarningKind::FirstRunApart,
        first,
        format!(
            "the first measured run stands apart from the others, which agree within ±{:.0}%: the target's state likely changed after it (a fresh filesystem or cache, space not yet reused, work left behind by the runs that followed); `warmup = 1` in [plan] runs one unmeasured first",
            FIRST_RUN_REST_SPREAD * 100.0
        ),
    );
    out
}

/// How far the first run must lie from the median of the others (as a
/// ratio, either way) to be called apart from them.
const FIRST_RUN_RATIO: f64 = 1.5;

/// How closely the other runs must agree (each within this fraction of
/// their median) for the first one to be told apart from noise.
const FIRST_RUN_REST_SPREAD: f64 = 0.25;

/// `w on t run 1 of 3 (ops_per_s = 95.6k ops/s; the others 22.3k ops/s, ×4.29)` when
/// t's first measured run lies outside the others' range and more than
/// [`FIRST_RUN_RATIO`] from their median while they agree closely — a
/// first-run effect, which the MAD rule misses with few runs (the first
/// run would also pull a mean and its interval far from where the rest
/// sit).
/// Whether the first measured run of `t` stands apart from the others
/// (the warning [`WarningKind::FirstRunApart`] says so).
pub fn first_run_apart(m: &MetricReport, t: &TargetStats) -> bool {
    first_run_text("", m, t).is_some()
}

/// Whether `t`'s interval is wider than ±[`RESOLUTION_PCT`] (the warning
/// [`WarningKind::Imprecise`] says so where nothing was compared).
pub fn imprecise(t: &TargetStats) -> bool {
    imprecise_text("", t).is_some()
}

fn first_run_text(workload: &str, m: &MetricReport, t: &TargetStats) -> Option<String> {
    let (&x, rest) = t.values.split_first()?;
    if rest.len() < 2 {
        return None;
    }
    let mid = crate::stats::summary::median(rest)?;
    let agree = rest
        .iter()
        .all(|&v| (v - mid).abs() <= FIRST_RUN_REST_SPREAD * mid.abs());
    let ratio = x / mid;
    let outside = rest.iter().all(|&v| v < x) || rest.iter().all(|&v| v > x);
    let apart = !(1.0 / FIRST_RUN_RATIO..=FIRST_RUN_RATIO).contains(&ratio);
    (mid > 0.0 && x > 0.0 && agree && outside && apart).then(|| {
        let value = |v| crate::metric::format::format_value(v, m.unit);
        format!(
            "{workload} on {} run 1 of {} ({} = {}; the others {}, ×{ratio:.2})",
            t.target,
            t.values.len(),
            m.name,
            value(x),
            value(mid)
        )
    })
}

/// `about 9`, or `more than 10000`.
pub fn runs_text(runs: Option<usize>) -> String {
    match runs {
        Some(n) => format!("about {n}"),
        None => format!("more than {}", crate::stats::resolve::MAX_RUNS),
    }
}

/// `w on t ±7.2% (about 9 runs would give ±5%)` when t's interval is wider
/// than ±[`RESOLUTION_PCT`].
fn imprecise_text(workload: &str, t: &TargetStats) -> Option<String> {
    let (half, runs) = precision(t)?;
    (half > RESOLUTION_PCT).then(|| {
        format!(
            "{workload} on {} ±{half:.1}% ({} runs would give ±{RESOLUTION_PCT}%)",
            t.target,
            runs_text(runs)
        )
    })
}

/// Runs of `t` that are MAD outliers, as `w on t run 3 of 6 (x = …)`,
/// each with its index among t's values.
fn outlier_texts(workload: &str, m: &MetricReport, t: &TargetStats) -> Vec<(usize, String)> {
    let n = t.values.len();
    // MAD needs a few runs to mean anything, and a run 0.3% off a very
    // steady median is not worth a warning.
    let median = t.summary.map(|s| s.median).unwrap_or(0.0);
    t.outliers
        .iter()
        .filter(|_| n >= MIN_OUTLIER_RUNS)
        .filter(|&&i| (t.values[i] - median).abs() > 0.01 * median.abs())
        .map(|&i| {
            let text = format!(
                "{workload} on {} run {} of {n} ({} = {})",
                t.target,
                i + 1,
                m.name,
                crate::metric::format::format_value(t.values[i], m.unit)
            );
            (i, text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::stats::Method;
    use crate::store::{CampaignRow, MetricValue, TargetRow};

    /// A campaign of targets `a` (baseline) and `b`, workload `w` with
    /// primary metric `tps` (and `lat` beside it), one run per
    /// (target, round, tps) given.
    fn campaign(plan: serde_json::Value, runs: &[(&str, u32, f64)]) -> CampaignData {
        let run = |(i, &(target, round, tps)): (usize, &(&str, u32, f64))| {
            let metric = |value, direction| MetricValue {
                value,
                unit: Unit::Flag,
                direction,
            };
            RunData {
                id: i as i64 + 1,
                target: target.into(),
                workload: "w".into(),
                repetition: round,
                round,
                position: i as u32,
                warmup: false,
                status: "ok".into(),
                error: None,
                started_at: String::new(),
                duration_s: 1.0,
                caches_dropped: true,
                remounted: false,
                metrics: BTreeMap::from([
                    (
                        MetricKey::plain("tps"),
                        metric(tps, Direction::HigherIsBetter),
                    ),
                    (
                        MetricKey::plain("lat_mean_ns"),
                        metric(1e9 / tps, Direction::LowerIsBetter),
                    ),
                ])
                .into(),
                series: Default::default(),
                histograms: Default::default(),
                warnings: Vec::new(),
                facts: Default::default(),
                ranks: 1,
                per_rank: Vec::new(),
                ..Default::default()
            }
        };
        let target = |id, name: &str| TargetRow {
            id,
            name: name.into(),
            kind: "dir".into(),
            baseline: id == 1,
            params: json!({}),
            facts: json!({}),
            ..Default::default()
        };
        CampaignData {
            campaign: CampaignRow::finished("c", runs.len()),
            environment: json!({}),
            experiment: json!({ "plan": plan }),
            targets: vec![target(1, "a"), target(2, "b")],
            workloads: vec![WorkloadRow {
                id: 1,
                name: "w".into(),
                kind: "pgbench".into(),
                primary_metric: "tps".into(),
                params: json!({}),
                ..Default::default()
            }],
            runs: runs.iter().enumerate().map(run).collect(),
            stops: Vec::new(),
            facts: Default::default(),
            pair_cache: Default::default(),
            columns: Default::default(),
            replicas: Vec::new(),
        }
    }

    fn build_plain(c: &CampaignData, baseline: Option<&str>) -> anyhow::Result<Report> {
        build(c, baseline, &|_| Chosen::default())
    }

    /// Both targets drift up a round at a time; b is 3% faster in each.
    const DRIFTING: &[(&str, u32, f64)] = &[
        ("a", 1, 100.0),
        ("b", 1, 103.4),
        ("a", 2, 104.9),
        ("b", 2, 107.6),
        ("a", 3, 110.3),
        ("b", 3, 113.9),
    ];

    fn primary(r: &Report) -> &MetricReport {
        r.workloads[0].primary_metric().unwrap()
    }

    // Reference: the rules of stats::analysis (whose methods have SciPy
    // references) applied to the plan stored with the campaign.
    #[test]
    fn the_plan_decides_pairing_and_the_analysis() {
        let method = |plan| {
            let r = build_plain(&campaign(plan, DRIFTING), None).unwrap();
            primary(&r).targets[1].comparison.unwrap().method
        };
        assert_eq!(method(json!({"order": "interleaved"})), Method::PairedLog);
        assert_eq!(method(json!({"order": "randomized"})), Method::PairedLog);
        assert_eq!(
            method(json!({})),
            Method::PairedLog,
            "a store before the choice"
        );
        assert_eq!(method(json!({"order": "sequential"})), Method::WelchLog);
        let means = json!({"order": "interleaved", "analysis": "means"});
        assert_eq!(method(means), Method::WelchMeans);

        let mut zero = DRIFTING.to_vec();
        zero[0].2 = 0.0;
        let r = build_plain(&campaign(json!({}), &zero), None).unwrap();
        assert_eq!(primary(&r).analysis, Analysis::Means);
        assert_eq!(
            primary(&r).targets[1].comparison.unwrap().method,
            Method::WelchMeans
        );
    }

    // Caveats travel with the verdict: a baseline whose runs synced with no
    // flush reaching a device makes b's verdict carry it, by kind.
    #[test]
    fn a_verdict_carries_the_caveats_of_the_runs_it_rests_on() {
        let mut c = campaign(json!({}), DRIFTING);
        for r in c.runs.iter_mut().filter(|r| r.target == "a") {
            r.warnings.push(Warning::new(
                WarningKind::DurabilityNotMeasured,
                "durability not measured: 10 syncs, no flush reached a device",
            ));
        }
        c.runs[1].warnings.push(Warning::note("fio said: hello"));
        let r = build_plain(&c, None).unwrap();
        let b = &primary(&r).targets[1];
        assert_eq!(b.verdict, Some(Verdict::Better));
        assert_eq!(
            b.caveats,
            [Caveat {
                kind: WarningKind::DurabilityNotMeasured,
                target: "a".into(),
                runs: 3,
                of: 3,
                served: None,
            }]
        );
    }

    // One rule for small n: two rounds of b clearly faster (paired p 0.02
    // at n = 2 before the rule) give no interval and no verdict, only the
    // values; a third round gives both.
    #[test]
    fn below_three_runs_there_is_no_interval_and_no_verdict() {
        let two = &DRIFTING[..4];
        let r = build_plain(&campaign(json!({}), two), None).unwrap();
        let (a, b) = (&primary(&r).targets[0], &primary(&r).targets[1]);
        assert!(a.ci.is_none() && b.ci.is_none(), "{a:?}");
        assert!(
            b.too_few && b.comparison.is_none() && b.verdict.is_none(),
            "{b:?}"
        );
        assert_eq!(b.values, [103.4, 107.6]);
        let r = build_plain(&campaign(json!({}), DRIFTING), None).unwrap();
        let b = &primary(&r).targets[1];
        assert!(!b.too_few && b.ci.is_some());
        assert_eq!(b.verdict, Some(Verdict::Better));
    }

    /// The quick experiment's smallfiles on an ext4 directory, twice on a
    /// fresh clone: the first round's run 2-4x the later ones.
    #[test]
    fn a_first_run_apart_from_agreeing_others_is_said_and_noise_is_not() {
        let warned = |runs: &[(&str, u32, f64)]| -> Vec<String> {
            let r = build_plain(&campaign(json!({}), runs), None).unwrap();
            r.warnings
                .iter()
                .filter(|w| w.kind == WarningKind::FirstRunApart)
                .map(|w| w.text.clone())
                .collect()
        };
        let fresh = [
            ("a", 1, 95589.0),
            ("b", 1, 161205.0),
            ("b", 2, 158080.0),
            ("a", 2, 21370.0),
            ("a", 3, 23184.0),
            ("b", 3, 178010.0),
        ];
        let said = warned(&fresh);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("w on a run 1 of 3 (tps = 95.6k; the others 22.3k, ×4.29)"),
            "{said:?}"
        );
        assert!(!said[0].contains("w on b"), "{said:?}");
        // Slower first (a cold cache) is said too.
        let mut cold = fresh;
        cold[0].2 = 9000.0;
        assert!(warned(&cold)[0].contains(", ×0.40)"));
        // Others that disagree among themselves, a first run inside their
        // range, or one only 30% off: nothing to tell apart.
        for (i, v) in [(4, 40000.0), (0, 22000.0), (0, 29000.0)] {
            let mut noisy = fresh;
            noisy[i].2 = v;
            assert!(warned(&noisy).is_empty(), "{noisy:?}");
        }
        assert!(warned(DRIFTING).is_empty());
    }

    #[test]
    fn secondary_metrics_are_exploratory() {
        let r = build_plain(&campaign(json!({}), DRIFTING), None).unwrap();
        let flags: Vec<(&str, bool)> = r.workloads[0]
            .metrics
            .iter()
            .map(|m| (m.name.as_str(), m.exploratory))
            .collect();
        assert_eq!(flags, [("tps", false), ("lat_mean_ns", true)]);
    }

    // Reference: SciPy 1.17.1 stats.t.interval(0.95, 2, loc=4, scale=
    // stats.sem([1, 1, 10])) = [-8.91, 16.91]; values that cannot be
    // negative keep [0, 16.91].
    #[test]
    fn intervals_of_non_negative_values_are_clipped_at_zero() {
        let t = target_stats("a", vec![1.0, 1.0, 10.0], None, Direction::HigherIsBetter);
        let ci = t.ci.unwrap();
        assert!(t.ci_clipped && ci.low == 0.0 && (ci.high - 16.90795818924839).abs() < 1e-9);
        let t = target_stats("a", vec![-1.0, 1.0, 2.0], None, Direction::HigherIsBetter);
        assert!(!t.ci_clipped && t.ci.unwrap().low < 0.0);
        let t = target_stats("a", vec![10.0, 10.5, 9.5], None, Direction::HigherIsBetter);
        assert!(!t.ci_clipped && t.ci.unwrap().low > 0.0);
    }

    // Reference: stats::resolve's rule; the drift that pairing removes
    // leaves the unpaired comparison inconclusive, with a count to settle.
    #[test]
    fn only_inconclusive_pairs_say_how_many_runs_would_settle_them() {
        let paired = build_plain(&campaign(json!({}), DRIFTING), None).unwrap();
        let t = &primary(&paired).targets[1];
        assert_eq!((t.verdict, t.settle), (Some(Verdict::Better), None));

        let c = campaign(json!({"order": "sequential"}), DRIFTING);
        let unpaired = build_plain(&c, None).unwrap();
        let t = &primary(&unpaired).targets[1];
        assert_eq!(t.verdict, Some(Verdict::NoSignificantDifference));
        let settle = t.settle.unwrap();
        assert_eq!((settle.pct, settle.now), (RESOLUTION_PCT, 3));
        assert!(settle.runs.unwrap() > 3, "{settle:?}");
        let lines: Vec<&String> = unpaired
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::Inconclusive)
            .map(|w| &w.text)
            .collect();
        assert_eq!(lines.len(), 1, "{:?}", unpaired.warnings);
        assert!(lines[0].ends_with(&format!("w b {} (3 now)", runs_text(settle.runs))));
    }

    #[test]
    fn warnings_list_every_pair_once_per_kind() {
        let two_runs = &DRIFTING[..4];
        let r = build_plain(&campaign(json!({"order": "sequential"}), two_runs), None).unwrap();
        let few: Vec<&String> = r
            .warnings
            .iter()
            .filter(|w| w.kind == WarningKind::FewRuns)
            .map(|w| &w.text)
            .collect();
        assert_eq!(few.len(), 1, "{:?}", r.warnings);
        assert!(few[0].ends_with(": w on a (2); w on b (2)"), "{}", few[0]);
    }

    #[test]
    fn messages_that_differ_only_in_figures_are_alike() {
        let a = "the kernel reports 16.2 MiB, storlab's own size; job 3";
        let b = "the kernel reports 16.3 MiB, storlab's own size; job 3";
        assert_eq!(without_figures(a), without_figures(b));
        assert_eq!(
            without_figures(a),
            "the kernel reports # MiB, storlab's own size; job #"
        );
        assert_ne!(without_figures("disk full"), without_figures("disk busy"));
        // A full stop after a number ends the sentence, not the number.
        assert_eq!(without_figures("took 3 s."), "took # s.");
    }

    #[test]
    fn a_warning_every_run_gives_is_said_once_with_its_count() {
        let mut c = campaign(
            json!({}),
            &[
                ("a", 1, 10.0),
                ("b", 1, 20.0),
                ("a", 2, 11.0),
                ("b", 2, 21.0),
            ],
        );
        for r in &mut c.runs {
            r.warnings
                .push(Warning::note(format!("peak {}.0 MiB not recorded", r.id)));
            r.warnings.push(Warning::note("fio said: note"));
        }
        c.runs[3].status = "failed".into();
        c.runs[3].error = Some("disk full".into());
        let said = said_once(
            c.runs
                .iter()
                .flat_map(|r| r.warnings.iter().map(move |w| (r, w.clone()))),
        );
        let said: Vec<&str> = said.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(
            said,
            [
                "runs 1, 3 (w on a, 2 runs): peak 1.0 MiB not recorded (figures of run 1)",
                "runs 1, 3 (w on a, 2 runs): fio said: note",
                "runs 2, 4 (w on b, 2 runs): peak 2.0 MiB not recorded (figures of run 2)",
                "runs 2, 4 (w on b, 2 runs): fio said: note",
            ]
        );
        let r = build_plain(&c, None).unwrap();
        assert!(
            r.warnings.iter().any(|w| w.kind == WarningKind::RunFailed
                && w.text == "run 4 (w on b): failed: disk full"),
            "{:?}",
            r.warnings
        );
    }
}
