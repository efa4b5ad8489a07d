//! Replicas side by side: a campaign and the others of its group (`storlab
//! replicate` runs the same experiment again into the same store), each
//! comparison of a primary metric as every replica judged it, and whether
//! they agree.
//!
//! Replicas **agree** on a comparison when every one reached the same
//! outcome (faster, slower or equivalent) and their intervals overlap;
//! they **conflict** when one calls it different where another calls it
//! equivalent, or different the other way — the failure a reader who
//! reruns a campaign must never meet; they are **apart** when they agree
//! in outcome but their intervals do not overlap (the effect's size did
//! not replicate); otherwise they are **consistent**: no conflict, but not
//! all decided (some inconclusive, or with too few runs).

use serde::Serialize;

use super::model::Report;
use super::verdict::{primary_verdicts, Outcome, Verdict};

/// A campaign's group of replicas, compared.
#[derive(Debug, Clone, Serialize)]
pub struct Replicas {
    /// The group's campaigns, oldest first (the one analysed among them).
    pub campaigns: Vec<i64>,
    /// Every primary comparison any replica made, in the analysed
    /// campaign's order.
    pub comparisons: Vec<Replicated>,
}

/// One comparison as each replica judged it.
#[derive(Debug, Clone, Serialize)]
pub struct Replicated {
    pub workload: String,
    pub metric: String,
    /// The candidate target (against the group's baseline).
    pub target: String,
    /// Each replica's verdict, in [`Replicas::campaigns`]' order; `None`
    /// where that replica did not compare it.
    pub each: Vec<Option<Verdict>>,
    pub agreement: Agreement,
}

/// Whether replicas agree on a comparison (module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Agreement {
    Agree,
    Consistent,
    Apart,
    Conflict,
}

impl Agreement {
    /// The agreement of replicas whose verdicts are `each`.
    pub fn of(each: &[Option<Verdict>]) -> Agreement {
        let judged: Vec<&Verdict> = each.iter().flatten().collect();
        let outcomes: Vec<Outcome> = judged.iter().filter_map(|v| v.outcome()).collect();
        let has = |o: Outcome| outcomes.contains(&o);
        let different = has(Outcome::Better) || has(Outcome::Worse);
        if (has(Outcome::Better) && has(Outcome::Worse)) || (different && has(Outcome::Equivalent))
        {
            return Agreement::Conflict;
        }
        let decided = outcomes.len() == each.len() && outcomes.iter().all(|o| o.decided());
        if !decided || outcomes.windows(2).any(|w| w[0] != w[1]) {
            return Agreement::Consistent;
        }
        let intervals = judged.iter().filter_map(|v| v.candidate.comparison);
        let (low, high) = intervals.fold((f64::NEG_INFINITY, f64::INFINITY), |(l, h), c| {
            (l.max(c.diff_pct_ci.low), h.min(c.diff_pct_ci.high))
        });
        match low <= high {
            true => Agreement::Agree,
            false => Agreement::Apart,
        }
    }
}

/// The replicas of a group whose campaigns are `campaigns` (oldest first)
/// with their analysed models `models`, in the same order; `analysed` is
/// the campaign whose comparisons come first. `None` for a group of one.
pub fn compare(campaigns: &[i64], models: &[&Report], analysed: i64) -> Option<Replicas> {
    if campaigns.len() < 2 {
        return None;
    }
    let verdicts: Vec<Vec<Verdict>> = models.iter().map(|m| primary_verdicts(m)).collect();
    let key = |v: &Verdict| {
        (
            v.workload.clone(),
            v.metric.clone(),
            v.candidate.target.clone(),
        )
    };
    let first = campaigns.iter().position(|c| *c == analysed).unwrap_or(0);
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for v in verdicts[first].iter().chain(verdicts.iter().flatten()) {
        if !keys.contains(&key(v)) {
            keys.push(key(v));
        }
    }
    let comparisons = keys
        .into_iter()
        .map(|k| {
            let each: Vec<Option<Verdict>> = verdicts
                .iter()
                .map(|vs| vs.iter().find(|v| key(v) == k).cloned())
                .collect();
            Replicated {
                agreement: Agreement::of(&each),
                workload: k.0,
                metric: k.1,
                target: k.2,
                each,
            }
        })
        .collect();
    Some(Replicas {
        campaigns: campaigns.to_vec(),
        comparisons,
    })
}

impl Replicas {
    /// How many comparisons came out each way: agree, consistent, apart,
    /// conflict.
    pub fn counts(&self) -> [usize; 4] {
        let n = |a: Agreement| self.comparisons.iter().filter(|c| c.agreement == a).count();
        [
            n(Agreement::Agree),
            n(Agreement::Consistent),
            n(Agreement::Apart),
            n(Agreement::Conflict),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{target_stats, MetricReport, WorkloadReport, LEVEL};
    use crate::metric::{Direction, MetricKey, Unit};
    use crate::stats::{paired_log, Analysis, Design, RoundValue};

    /// A campaign's model: `b` against `a` on workload `w`, `b` being
    /// `factor` times `a` with a small wobble, over `n` rounds, its
    /// equivalence judged at ±5%.
    fn model(factor: f64, wobble: f64, n: usize) -> Report {
        let a: Vec<f64> = (0..n).map(|i| 100.0 + (i as f64).sin()).collect();
        let b: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(i, x)| x * factor * (1.0 + wobble * (i as f64 * 2.3).cos()))
            .collect();
        let higher = Direction::HigherIsBetter;
        let mut t = target_stats("b", b.clone(), paired_log(&a, &b, LEVEL), higher);
        t.judge_margin(crate::stats::equivalence_runs(
            &RoundValue::in_rounds(&a),
            &RoundValue::in_rounds(&b),
            Design::Rounds,
            Analysis::Ratio,
            5.0,
        ));
        Report {
            baseline: "a".into(),
            targets: vec!["a".into(), "b".into()],
            workloads: vec![WorkloadReport {
                name: "w".into(),
                kind: "mock".into(),
                primary: "ops".into(),
                metrics: vec![MetricReport {
                    name: "ops".into(),
                    key: MetricKey::plain("ops"),
                    unit: Unit::OpsPerSec,
                    direction: higher,
                    analysis: Analysis::Ratio,
                    exploratory: false,
                    targets: vec![target_stats("a", a, None, higher), t],
                }],
            }],
            warnings: Vec::new(),
        }
    }

    fn agreement(models: &[Report]) -> Agreement {
        let refs: Vec<&Report> = models.iter().collect();
        let ids: Vec<i64> = (1..=models.len() as i64).collect();
        let r = compare(&ids, &refs, 1).unwrap();
        assert_eq!(r.comparisons.len(), 1);
        assert_eq!(r.comparisons[0].each.len(), models.len());
        r.comparisons[0].agreement
    }

    #[test]
    fn replicas_agree_conflict_or_stand_apart() {
        let faster = || model(1.2, 0.001, 5);
        let same = || model(1.0, 0.001, 5);
        let unsure = || model(1.03, 0.05, 3);
        let outcome = |m: &Report| primary_verdicts(m)[0].outcome().unwrap();
        assert_eq!(outcome(&faster()), Outcome::Better);
        assert_eq!(outcome(&same()), Outcome::Equivalent);
        assert_eq!(outcome(&model(0.8, 0.001, 5)), Outcome::Worse);
        assert_eq!(outcome(&unsure()), Outcome::Inconclusive);
        assert_eq!(agreement(&[faster(), faster(), faster()]), Agreement::Agree);
        assert_eq!(agreement(&[same(), same()]), Agreement::Agree);
        assert_eq!(agreement(&[faster(), unsure()]), Agreement::Consistent);
        assert_eq!(agreement(&[faster(), same()]), Agreement::Conflict);
        assert_eq!(
            agreement(&[faster(), model(0.8, 0.001, 5)]),
            Agreement::Conflict
        );
        // Faster in both, by 20% and by 50%, each measured tightly.
        assert_eq!(
            agreement(&[faster(), model(1.5, 0.001, 5)]),
            Agreement::Apart
        );
        assert_eq!(compare(&[1], &[&faster()], 1).map(|r| r.counts()), None);
    }
}
