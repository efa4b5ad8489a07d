//! Families of comparisons judged as one: a study's cells, a campaign's
//! workloads, a factor's levels, the rows of a comparison across
//! campaigns. Each comparison keeps its own p-value; its verdict is judged
//! on the Benjamini–Hochberg adjusted p-value over its family
//! ([`crate::stats::multiple`]), so that a hundred cells where nothing
//! differs do not yield five "faster" or "slower" by chance. A comparison
//! that its own p would have called, and the family does not, says so: a
//! result chance explains at this many comparisons.
//!
//! The families: a campaign's primary-metric comparisons (every workload,
//! every sweep variant, against the baseline) are one; each secondary
//! metric's comparisons across the campaign another; each level comparison
//! of a study one; a comparison of two campaigns its primary rows and each
//! other metric's rows.

use serde::Serialize;

use super::{call, call_at, TargetStats, WorkloadReport};
use crate::metric::{Direction, MetricKey};
use crate::stats::{benjamini_hochberg, Verdict};

/// The correction, as the report and docs/methodology.md name it.
pub const METHOD: &str = "Benjamini–Hochberg";

/// How a comparison fared in its family.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Correction {
    /// Comparisons judged in the family, this one among them.
    pub comparisons: usize,
    /// The Benjamini–Hochberg adjusted p-value the verdict is judged on.
    pub p_adjusted: f64,
    /// The adjusted p-value of its equivalence within the margin (over
    /// the family's equivalence tests); `None` without such a test.
    pub p_equivalent_adjusted: Option<f64>,
    /// Significant on its own p, not in its family: a chance result at
    /// this many comparisons.
    pub chance: bool,
}

/// Judges `family` as one: every comparison that has a verdict gets the
/// adjusted p-value, its verdict on it, and what would settle it. A family
/// of one is left as it is.
pub fn judge(family: Vec<(&mut TargetStats, Direction)>) {
    let mut judged: Vec<(&mut TargetStats, Direction)> = family
        .into_iter()
        .filter(|(t, _)| t.verdict.is_some() && t.comparison.is_some())
        .collect();
    if judged.len() < 2 {
        return;
    }
    let p: Vec<f64> = judged
        .iter()
        .map(|(t, _)| t.comparison.map_or(f64::NAN, |c| c.p_value))
        .collect();
    let equivalent: Vec<f64> = judged
        .iter()
        .map(|(t, _)| t.margin.map_or(f64::NAN, |m| m.p_value()))
        .collect();
    let comparisons = p.iter().filter(|p| !p.is_nan()).count();
    let adjusted = benjamini_hochberg(&p);
    let adjusted_equivalent = benjamini_hochberg(&equivalent);
    for (((t, direction), q), qe) in judged.iter_mut().zip(adjusted).zip(adjusted_equivalent) {
        let Some(c) = t.comparison else {
            continue;
        };
        if q.is_nan() {
            continue;
        }
        let alone = call(&c, *direction);
        let verdict = call_at(&c, *direction, q);
        t.decide(Some(verdict), qe);
        t.correction = Some(Correction {
            comparisons,
            p_adjusted: q,
            p_equivalent_adjusted: (!qe.is_nan()).then_some(qe),
            chance: alone != Verdict::NoSignificantDifference
                && verdict == Verdict::NoSignificantDifference,
        });
    }
}

/// The families of a campaign's report: its primary metrics', and each
/// secondary metric's across its workloads.
pub fn control(workloads: &mut [WorkloadReport]) {
    type Family<'a> = (Option<MetricKey>, Vec<(&'a mut TargetStats, Direction)>);
    let mut families: Vec<Family> = Vec::new();
    for w in workloads.iter_mut() {
        for m in w.metrics.iter_mut() {
            let key = m.exploratory.then(|| m.key.clone());
            let at = match families.iter().position(|f| f.0 == key) {
                Some(i) => i,
                None => {
                    families.push((key, Vec::new()));
                    families.len() - 1
                }
            };
            let direction = m.direction;
            families[at]
                .1
                .extend(m.targets.iter_mut().map(|t| (t, direction)));
        }
    }
    for (_, family) in families {
        judge(family);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::target_stats;
    use crate::stats::welch_log;

    fn compared(b: &[f64]) -> TargetStats {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let cmp = welch_log(&a, b, 0.95);
        target_stats("b", b.to_vec(), cmp, Direction::HigherIsBetter)
    }

    // A small effect (p 0.0171 alone: SciPy 1.17.1, ttest_ind on the logs,
    // equal_var=False) among 20 null comparisons could be chance; a large one stays called; a family of one is untouched.
    #[test]
    fn a_lone_small_p_among_many_is_called_chance_and_a_large_effect_stays() {
        let small = compared(&[101.5, 102.5, 100.5, 102.0, 101.0]);
        let p = small.comparison.unwrap().p_value;
        assert!(p < 0.05 && p > 0.001, "{p}");
        assert_eq!(small.verdict, Some(Verdict::Better));
        let null = compared(&[100.2, 100.9, 99.1, 100.4, 99.6]);
        let large = compared(&[150.0, 151.0, 149.0, 150.5, 149.5]);
        let mut family = vec![small.clone(), large];
        family.extend(std::iter::repeat_n(null, 20));
        judge(
            family
                .iter_mut()
                .map(|t| (t, Direction::HigherIsBetter))
                .collect(),
        );
        let c = family[0].correction.unwrap();
        assert_eq!(c.comparisons, 22);
        assert!(c.chance && c.p_adjusted > 0.05, "{c:?}");
        assert_eq!(family[0].verdict, Some(Verdict::NoSignificantDifference));
        assert_eq!(family[1].verdict, Some(Verdict::Better));
        assert!(!family[1].correction.unwrap().chance);
        let mut one = [small];
        judge(
            one.iter_mut()
                .map(|t| (t, Direction::HigherIsBetter))
                .collect(),
        );
        assert_eq!(one[0].correction, None);
        assert_eq!(one[0].verdict, Some(Verdict::Better));
    }
}
