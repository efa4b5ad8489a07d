//! Every verdict as data: one comparison of a candidate against its
//! baseline on one metric ([`Verdict`]), how it came out ([`Outcome`]),
//! the caveats it carries, and what the headline says of a campaign's
//! verdicts ([`Statement`]: each on its own, or alike ones of a sweep said
//! once). Nothing here is worded: `crate::report::verdict::words` is the
//! one function that puts a verdict into words, in every output
//! (terminal, Markdown, HTML, JSON, the release gate).
//!
//! Where the next kinds of verdict plug in, without a new place to word
//! them:
//! - a new outcome (equivalent within a margin, inconclusive: #46) is a
//!   variant of [`Outcome`], decided in [`Outcome::of`] from the
//!   candidate's figures; `words` gives it its word once, and every form
//!   follows;
//! - agreeing replicas (#46) are a field of [`Verdict`] beside `candidate`
//!   (each replica's comparison), worded by the same function;
//! - a caveat that no run warning carries (two sides served by different
//!   cache layers: #42) is a [`Caveat`] of its own kind in
//!   `candidate.caveats`: every form marks it as it marks the others;
//! - a verdict on another figure than a metric's mean (a capacity within a
//!   latency target, with its interval: #43) is a [`Verdict`] whose
//!   candidate and baseline figures hold that estimate and interval, its
//!   kind a field beside `metric` that `words` reads to say "sustains";
//! - sides named otherwise than by their target (a software release, "Gluster
//!   11.1 against 10.3": #44) are the labels `candidate_label` and
//!   `baseline_label`, which every sentence names the sides by.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::model::{target_stats, MetricReport, Report, TargetStats, WorkloadReport};
pub use super::model::{Caveat, Settle};
use crate::cli::InconclusiveComparisons;
use crate::experiment::sweep::family_of;
use crate::metric::{Direction, Unit};
use crate::stats::{Outcome as Three, Verdict as Call};

/// How a comparison came out: the one classification every output words.
/// Three outcomes (#46): different (better or worse), equivalent within
/// the workload's margin, or inconclusive — neither yet, which is not
/// "the same".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Significantly better than the baseline (faster, whatever the
    /// metric's direction), and not within the equivalence margin.
    Better,
    /// Significantly worse (slower).
    Worse,
    /// The whole interval within ±margin of the baseline: any difference
    /// is smaller than the margin.
    Equivalent,
    /// Neither different nor equivalent: more runs would say which.
    Inconclusive,
    /// Fewer runs than a verdict needs on either side: no interval, no
    /// verdict; the values say what there is.
    TooFew,
}

impl Outcome {
    /// The outcome of a target's figures against its baseline; `None`
    /// when it was not compared (the baseline itself, or a side with no
    /// value). Equivalence is judged first (`crate::stats::verdict`).
    pub fn of(t: &TargetStats) -> Option<Outcome> {
        if t.too_few {
            return Some(Outcome::TooFew);
        }
        t.comparison.as_ref()?;
        Some(match (t.outcome?, t.verdict?) {
            (Three::Equivalent, _) => Outcome::Equivalent,
            (Three::Different, Call::Better) => Outcome::Better,
            (Three::Different, Call::Worse) => Outcome::Worse,
            _ => Outcome::Inconclusive,
        })
    }

    /// A difference the verdict calls (better or worse).
    pub fn significant(self) -> bool {
        matches!(self, Outcome::Better | Outcome::Worse)
    }

    /// Different or equivalent: what a sequential plan runs until.
    pub fn decided(self) -> bool {
        matches!(self, Outcome::Better | Outcome::Worse | Outcome::Equivalent)
    }

    /// The three outcomes' word for it: different, equivalent or
    /// inconclusive (`None` without a verdict).
    pub fn three(self) -> Option<Three> {
        match self {
            Outcome::Better | Outcome::Worse => Some(Three::Different),
            Outcome::Equivalent => Some(Three::Equivalent),
            Outcome::Inconclusive => Some(Three::Inconclusive),
            Outcome::TooFew => None,
        }
    }
}

/// One comparison judged: the candidate's figures against the baseline's
/// on one metric of one workload, within a campaign (a target against the
/// baseline target) or across two (a target against itself in the
/// baseline campaign). Serialized as `storlab compare --format json`
/// writes each row.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub workload: String,
    /// The workload's primary metric (the one the headline and the gate
    /// judge).
    pub primary: bool,
    /// The metric as people read it (compact name, label values first).
    pub metric: String,
    pub unit: Unit,
    pub direction: Direction,
    /// The baseline side as sentences name it (`ext4`, `d @ campaign 1`).
    pub baseline_label: String,
    pub baseline: TargetStats,
    /// The candidate side as sentences name it.
    pub candidate_label: String,
    /// The candidate's figures with the comparison, its family's
    /// correction, what would settle it and its caveats.
    pub candidate: TargetStats,
    /// The workload's family: its name without a sweep's values.
    #[serde(skip)]
    pub family: String,
    /// A secondary metric: the verdict is exploratory.
    #[serde(skip)]
    pub exploratory: bool,
    /// The verdicts on the parts of this metric (a matrix's tests) when
    /// the significant ones point both ways.
    #[serde(skip)]
    pub parts: Option<Parts>,
    /// What the sides' figures are: a metric's mean (left out of the
    /// JSON), or a capacity.
    #[serde(skip_serializing_if = "Kind::is_mean")]
    pub kind: Kind,
}

/// What a verdict compares.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The mean of a metric over the runs.
    Mean,
    /// The highest offered rate that keeps the latency percentile
    /// `latency` (`p99`) within `max_ns`, with its interval
    /// ([`super::capacity`]).
    Capacity { latency: String, max_ns: f64 },
}

impl Kind {
    pub fn is_mean(&self) -> bool {
        *self == Kind::Mean
    }
}

/// The parts of a primary metric (the same metric with other labels: a
/// matrix's tests) on one target, when they disagree in direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    /// The label that tells the parts apart (`test`).
    pub by: String,
    pub each: Vec<Part>,
}

/// One part's comparison: `reread +20.0% faster`.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// Its label values (`reread`), or `all` for the metric without them.
    pub label: String,
    pub diff_pct: f64,
    pub outcome: Outcome,
}

impl Verdict {
    /// The verdict on `t` against the baseline `base` (the campaign's
    /// baseline target) on metric `m` of workload `w`; `None` when `t` was
    /// not compared.
    pub fn within(
        w: &WorkloadReport,
        m: &MetricReport,
        t: &TargetStats,
        base: &TargetStats,
    ) -> Option<Verdict> {
        Outcome::of(t)?;
        Some(Verdict {
            workload: w.name.clone(),
            primary: !m.exploratory,
            metric: m.name.clone(),
            unit: m.unit,
            direction: m.direction,
            baseline_label: base.target.clone(),
            baseline: base.clone(),
            candidate_label: t.target.clone(),
            candidate: t.clone(),
            family: family_of(&w.name).to_string(),
            exploratory: m.exploratory,
            parts: None,
            kind: Kind::Mean,
        })
    }

    /// How it came out; none for a row without a comparison (across
    /// campaigns, a side without values).
    pub fn outcome(&self) -> Option<Outcome> {
        Outcome::of(&self.candidate)
    }

    /// Significantly worse by more than `pct` percent: the test of a
    /// difference says worse (in its family), whether or not the whole
    /// interval lies within the equivalence margin — the gate's `pct` is a
    /// margin of its own.
    pub fn regressed(&self, pct: f64) -> bool {
        let Some(c) = &self.candidate.comparison else {
            return false;
        };
        self.candidate.verdict == Some(Call::Worse)
            && Outcome::of(&self.candidate) != Some(Outcome::TooFew)
            && c.diff_pct.abs() > pct
    }

    /// Inconclusive, with an interval that reaches a regression of more
    /// than `pct` percent: it may hide one.
    pub fn may_hide_regression(&self, pct: f64) -> bool {
        let Some(c) = &self.candidate.comparison else {
            return false;
        };
        let reach = match self.direction {
            Direction::HigherIsBetter => -c.diff_pct_ci.low,
            Direction::LowerIsBetter => c.diff_pct_ci.high,
        };
        self.outcome() == Some(Outcome::Inconclusive) && reach > pct
    }

    /// Whether the verdict rests on runs (of either side) that carry a
    /// validity warning: page cache, durability not measured, working set
    /// in RAM, unflushed writes, CPU-bound, degraded target, noisy host.
    pub fn caveated(&self) -> bool {
        !self.candidate.caveats.is_empty()
    }

    /// A plain equivalent or inconclusive verdict (its outcome): no chance
    /// call in its family, no parts that disagree. A sweep's plain ones of
    /// one outcome are said together.
    fn plain(&self) -> Option<Outcome> {
        let o = self
            .outcome()
            .filter(|o| matches!(o, Outcome::Equivalent | Outcome::Inconclusive))?;
        let plain = !self.candidate.correction.is_some_and(|f| f.chance) && self.parts.is_none();
        plain.then_some(o)
    }
}

/// The verdicts of a campaign: every non-baseline target against the
/// baseline, on every metric compared (primary metrics first within each
/// workload, as the model orders them).
pub fn verdicts(r: &Report) -> Vec<Verdict> {
    let mut out = Vec::new();
    for w in &r.workloads {
        for m in &w.metrics {
            let base = base_of(r, m);
            out.extend(
                m.targets
                    .iter()
                    .filter_map(|t| Verdict::within(w, m, t, &base)),
            );
        }
    }
    out
}

/// The verdicts of a campaign's primary metrics, each with the parts of
/// its metric that disagree.
pub fn primary_verdicts(r: &Report) -> Vec<Verdict> {
    let mut out = Vec::new();
    for w in &r.workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        let base = base_of(r, m);
        for t in &m.targets {
            if let Some(mut v) = Verdict::within(w, m, t, &base) {
                v.parts = parts(w, m, &t.target);
                out.push(v);
            }
        }
    }
    out
}

/// The baseline's figures on metric `m`; none when it did not run.
fn base_of(r: &Report, m: &MetricReport) -> TargetStats {
    match m.targets.iter().find(|t| t.target == r.baseline) {
        Some(t) => t.clone(),
        None => target_stats(&r.baseline, Vec::new(), None, m.direction),
    }
}

/// The release gate's judgement (`storlab compare --fail-on-regression
/// PCT`) of a comparison's rows: the primary metrics significantly worse
/// by more than `pct`, those that fail it and those let pass (caveated
/// ones, when caveated regressions only warn).
#[derive(Debug)]
pub struct Judged<'a> {
    pub pct: f64,
    pub failing: Vec<&'a Verdict>,
    pub waived: Vec<&'a Verdict>,
    /// Primary comparisons whose verdict carries a validity caveat.
    pub caveated: usize,
    /// Inconclusive primary comparisons whose interval reaches a
    /// regression beyond `pct`, and what the gate does with them.
    pub unsure: Vec<&'a Verdict>,
    pub inconclusive: InconclusiveComparisons,
}

impl Judged<'_> {
    /// Whether the gate fails: a regression that is not waived, or, under
    /// `--inconclusive fail`, an inconclusive comparison that may hide one.
    pub fn fails(&self) -> bool {
        let unsure_fail = self.inconclusive == InconclusiveComparisons::Fail;
        !self.failing.is_empty() || (unsure_fail && !self.unsure.is_empty())
    }
}

/// The gate's judgement of `rows` at `pct` percent; `waive_caveated` lets
/// a regression whose verdict carries a caveat pass (printed, not failing);
/// `inconclusive` is the policy for those that may hide one.
pub fn judge(
    rows: &[Verdict],
    pct: f64,
    waive_caveated: bool,
    inconclusive: InconclusiveComparisons,
) -> Judged<'_> {
    let (waived, failing) = rows
        .iter()
        .filter(|r| r.primary && r.regressed(pct))
        .partition(|r| waive_caveated && r.caveated());
    Judged {
        pct,
        failing,
        waived,
        caveated: rows.iter().filter(|r| r.primary && r.caveated()).count(),
        unsure: rows
            .iter()
            .filter(|r| r.primary && r.may_hide_regression(pct))
            .collect(),
        inconclusive,
    }
}

/// What a headline says: a verdict on its own, or the plain equivalent
/// (or inconclusive) verdicts of one workload family said once.
#[derive(Debug, Clone)]
pub enum Statement {
    One(Box<Verdict>),
    Alike(Alike),
}

/// Comparisons of one workload family (and primary metric) that came out
/// alike — equivalent, or inconclusive — said in one line where there are
/// at least [`GROUPED`] of them: seed 000's 4 configurations × 4
/// transaction counts read as 12 lines of "inconclusive", one screen
/// before any figure.
#[derive(Debug, Clone)]
pub struct Alike {
    pub family: String,
    /// [`Outcome::Equivalent`] or [`Outcome::Inconclusive`].
    pub outcome: Outcome,
    /// The campaign's baseline target.
    pub baseline: String,
    /// How many comparisons the family made on this metric, these among
    /// them.
    pub of: usize,
    pub members: Vec<Verdict>,
}

/// How many comparisons of one workload family alike the headline says in
/// one line instead of one each.
pub const GROUPED: usize = 3;

/// The headline of a campaign: a statement per comparison of a primary
/// metric, in the model's order, a family's plain ones together (at the
/// first one's place) where there are at least [`GROUPED`] of them.
pub fn headline(r: &Report) -> Vec<Statement> {
    let verdicts = primary_verdicts(r);
    // Per table and metric, how many verdicts, and those of each plain
    // outcome in their order: gathered in one pass, not one per verdict.
    let mut of_key: HashMap<(&str, &str), usize> = HashMap::new();
    let mut alike: HashMap<(&str, &str, Outcome), Vec<&Verdict>> = HashMap::new();
    for x in &verdicts {
        let (family, metric) = (x.family.as_str(), x.metric.as_str());
        *of_key.entry((family, metric)).or_default() += 1;
        if let Some(o) = x.plain() {
            alike.entry((family, metric, o)).or_default().push(x);
        }
    }
    let mut out = Vec::new();
    let mut said: HashSet<(&str, &str, Outcome)> = HashSet::new();
    for v in &verdicts {
        let (family, metric) = (v.family.as_str(), v.metric.as_str());
        let group = (v.plain())
            .map(|o| (family, metric, o))
            .filter(|g| alike.get(g).map_or(0, Vec::len) >= GROUPED);
        let Some(g) = group else {
            out.push(Statement::One(Box::new(v.clone())));
            continue;
        };
        if !said.insert(g) {
            continue;
        }
        out.push(Statement::Alike(Alike {
            family: family.to_string(),
            outcome: g.2,
            baseline: r.baseline.clone(),
            of: of_key.get(&(family, metric)).copied().unwrap_or(0),
            members: alike
                .get(&g)
                .into_iter()
                .flatten()
                .map(|x| (*x).clone())
                .collect(),
        }));
    }
    out
}

/// The verdict on each part of the primary metric `m` (the same metric
/// with other labels: a matrix's tests) for `target`, when the significant
/// ones do not all point the same way; `None` otherwise.
fn parts(w: &WorkloadReport, m: &MetricReport, target: &str) -> Option<Parts> {
    let of = |p: &MetricReport| p.targets.iter().find(|x| x.target == target).cloned();
    let parts: Vec<(&MetricReport, TargetStats)> = w
        .metrics
        .iter()
        .filter(|p| p.key.name == m.key.name)
        .filter_map(|p| Some((p, of(p)?)))
        .collect();
    let ways: Vec<Outcome> = parts.iter().filter_map(|(_, t)| Outcome::of(t)).collect();
    if !(ways.contains(&Outcome::Better) && ways.contains(&Outcome::Worse)) {
        return None;
    }
    let by = m
        .key
        .labels
        .iter()
        .chain(parts.iter().flat_map(|(p, _)| p.key.labels.iter()))
        .map(|(k, _)| k.to_string())
        .next()
        .unwrap_or_default();
    let each = parts
        .iter()
        .filter(|(p, _)| p.key != m.key)
        .filter_map(|(p, t)| {
            let c = t.comparison.as_ref()?;
            let label = match p.key.labels.is_empty() {
                true => "all".to_string(),
                false => p
                    .key
                    .labels
                    .iter()
                    .map(|(_, v)| v)
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            Some(Part {
                label,
                diff_pct: c.diff_pct,
                outcome: Outcome::of(t).unwrap_or(Outcome::Inconclusive),
            })
        })
        .collect();
    Some(Parts { by, each })
}

/// Verdicts built for tests, here and in the report's.
#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analysis::model::{target_stats, Caveat};
    use crate::cli::InconclusiveComparisons::Warn;
    use crate::metric::{Direction, Unit};
    use crate::warning::WarningKind;

    /// A primary metric on `target` half the baseline's: a clear regression,
    /// with the caveats `kinds`.
    pub(crate) fn halved(target: &str, kinds: &[WarningKind]) -> Verdict {
        let base = [100.0, 101.0, 99.0];
        let worse = [50.0, 50.5, 49.5];
        let cmp = crate::stats::welch(&base, &worse, 0.95);
        let mut candidate = target_stats(target, worse.to_vec(), cmp, Direction::HigherIsBetter);
        candidate.caveats = kinds
            .iter()
            .map(|&kind| Caveat {
                kind,
                target: target.into(),
                runs: 3,
                of: 3,
                served: None,
            })
            .collect();
        Verdict {
            workload: "w".into(),
            primary: true,
            metric: "tps".into(),
            unit: Unit::TransactionsPerSec,
            direction: Direction::HigherIsBetter,
            baseline_label: "base".into(),
            baseline: target_stats("base", base.to_vec(), None, Direction::HigherIsBetter),
            candidate_label: target.into(),
            candidate,
            family: "w".into(),
            exploratory: false,
            parts: None,
            kind: Kind::Mean,
        }
    }

    #[test]
    fn a_caveated_regression_fails_the_gate_unless_told_to_warn() {
        let rows = [
            halved("clean", &[]),
            halved("cached", &[WarningKind::PageCache]),
            halved("unsynced", &[WarningKind::DurabilityNotMeasured]),
        ];
        assert!(rows[0].regressed(5.0) && !rows[0].caveated());
        let fail = judge(&rows, 5.0, false, Warn);
        assert_eq!(fail.failing.len(), 3);
        assert!(fail.waived.is_empty());
        let warn = judge(&rows, 5.0, true, Warn);
        let names = |v: &[&Verdict]| {
            v.iter()
                .map(|r| r.candidate_label.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&warn.failing), ["clean"]);
        assert_eq!(names(&warn.waived), ["cached", "unsynced"]);
        // Only caveated regressions: under warn the gate passes.
        let caveated = &rows[1..];
        assert!(judge(caveated, 5.0, true, Warn).failing.is_empty());
        assert_eq!(judge(caveated, 5.0, false, Warn).failing.len(), 2);
        // Beyond the threshold, nothing is judged either way.
        let none = judge(&rows, 60.0, false, Warn);
        assert!(none.failing.is_empty() && none.waived.is_empty());
    }

    /// An inconclusive comparison, -3.4% [-13.3%, +7.7%] (welch_log of
    /// its runs): it may hide a regression beyond 5% but not beyond 20%.
    pub(crate) fn unsure() -> Verdict {
        let base = [100.0, 108.0, 93.0, 101.0];
        let unsure = [97.0, 104.0, 89.0, 98.5];
        let cmp = crate::stats::welch_log(&base, &unsure, 0.95);
        let higher = Direction::HigherIsBetter;
        Verdict {
            baseline_label: "a".into(),
            baseline: target_stats("a", base.to_vec(), None, higher),
            candidate_label: "b".into(),
            candidate: target_stats("b", unsure.to_vec(), cmp, higher),
            ..halved("b", &[])
        }
    }

    #[test]
    fn an_inconclusive_comparison_that_may_hide_a_regression_is_judged_apart() {
        let v = unsure();
        assert_eq!(v.outcome(), Some(Outcome::Inconclusive));
        assert!(v.may_hide_regression(5.0) && !v.may_hide_regression(20.0));
        assert!(!v.regressed(5.0));
        let rows = std::slice::from_ref(&v);
        let judged = judge(rows, 5.0, false, Warn);
        assert_eq!(judged.unsure.len(), 1);
        assert!(judged.failing.is_empty() && judged.waived.is_empty());
        assert!(judge(rows, 20.0, false, Warn).unsure.is_empty());
    }
}
