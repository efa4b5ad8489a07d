//! Error control across a family of comparisons: the Benjamini–Hochberg
//! step-up procedure (Y. Benjamini and Y. Hochberg, "Controlling the false
//! discovery rate: a practical and powerful approach to multiple testing",
//! JRSS B 57, 1995).
//!
//! A study of 100 cells judged one by one at α = 0.05 calls about five of
//! them different when nothing differs. Adjusted p-values make the family
//! the unit: a comparison is significant when its adjusted p is below α,
//! which keeps the expected share of chance results among the differences
//! called at or below α — and when nothing differs at all (an A/A study),
//! the chance of calling anything at or below α, as a per-family (Holm,
//! Bonferroni) correction would.
//!
//! ```text
//! p_(1) ≤ … ≤ p_(m)   the family's p-values in order
//! q_(i) = min over j ≥ i of min(1, m · p_(j) / j)
//! ```
//!
//! This is SciPy's `scipy.stats.false_discovery_control(p, method='bh')`
//! and R's `p.adjust(p, "BH")`. Why BH rather than Holm is in
//! docs/methodology.md.

use super::verdict::{outcome, Outcome};

/// The Benjamini–Hochberg adjusted p-values of `p`, in `p`'s order. A NaN
/// p-value (no comparison) stays NaN and does not count in the family.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let m = order.len() as f64;
    let mut out = vec![f64::NAN; p.len()];
    let mut running = 1.0_f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        let q = (m * p[i] / (rank + 1) as f64).clamp(0.0, 1.0);
        running = running.min(q);
        out[i] = running;
    }
    out
}

/// The outcomes of a family of comparisons, each given as its p-values of
/// a difference and of equivalence: each kind adjusted over the family
/// ([`benjamini_hochberg`]), then [`outcome`]. So a hundred cells where
/// nothing differs are rarely called different, and a hundred cells a
/// margin apart rarely equivalent.
pub fn outcomes(p: &[(f64, f64)], alpha: f64) -> Vec<Outcome> {
    let different = benjamini_hochberg(&p.iter().map(|x| x.0).collect::<Vec<_>>());
    let equivalent = benjamini_hochberg(&p.iter().map(|x| x.1).collect::<Vec<_>>());
    different
        .into_iter()
        .zip(equivalent)
        .map(|(d, e)| outcome(d, e, alpha))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::assert_close;

    fn check(p: &[f64], expected: &[f64]) {
        let q = benjamini_hochberg(p);
        assert_eq!(q.len(), expected.len());
        for (a, e) in q.iter().zip(expected) {
            assert_close(*a, *e);
        }
    }

    // References: SciPy 1.17.1,
    // scipy.stats.false_discovery_control([0.01,0.04,0.03,0.005,0.2], method='bh')
    // scipy.stats.false_discovery_control([0.036,0.4,0.5,0.6,0.7,0.8,0.9,0.95], method='bh')
    // scipy.stats.false_discovery_control([0.001,0.002,0.003,0.004,0.9], method='bh')
    #[test]
    fn agrees_with_scipy() {
        check(
            &[0.01, 0.04, 0.03, 0.005, 0.2],
            &[0.025, 0.05, 0.05, 0.025, 0.2],
        );
        // Seed 000's pivot: p 0.036 in one of 8 cells is 0.288 in the family.
        check(
            &[0.036, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95],
            &[0.288, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95],
        );
        check(
            &[0.001, 0.002, 0.003, 0.004, 0.9],
            &[0.005, 0.005, 0.005, 0.005, 0.9],
        );
    }

    // The BH references above: p 0.04 alone among five is adjusted to
    // 0.05 and decides nothing; 0.01 to 0.025 decides.
    #[test]
    fn outcomes_adjust_each_kind_over_the_family() {
        let p = [
            (0.01, 1.0),
            (0.04, 1.0),
            (0.03, 0.001),
            (0.005, 0.9),
            (0.2, f64::NAN),
        ];
        assert_eq!(
            outcomes(&p, 0.05),
            [
                Outcome::Different,
                Outcome::Inconclusive,
                Outcome::Equivalent,
                Outcome::Different,
                Outcome::Inconclusive
            ]
        );
        assert!(outcomes(&[], 0.05).is_empty());
    }

    #[test]
    fn one_comparison_is_its_own_family_and_nan_is_left_out() {
        check(&[0.03], &[0.03]);
        let q = benjamini_hochberg(&[0.02, f64::NAN, 0.04]);
        assert!(q[1].is_nan());
        assert_close(q[0], 0.04);
        assert_close(q[2], 0.04);
        assert!(benjamini_hochberg(&[]).is_empty());
    }
}
