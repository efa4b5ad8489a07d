//! A change-point test for a series of campaigns: did the measured values
//! step to another level at some campaign (a regression or an improvement
//! that began there and stayed), or do they only scatter?
//!
//! Pettitt's test (A. N. Pettitt, "A non-parametric approach to the
//! change-point problem", Applied Statistics 28(2), 1979, pp. 126–135), a
//! Mann–Whitney statistic maximised over the split point: for the run
//! values x₁…x_T in campaign order,
//!
//! ```text
//! U_t = Σ_{i ≤ t} Σ_{j > t} sgn(x_j − x_i),   K = max_t |U_t|,
//! p ≈ 2 · exp(−6 K² / (T³ + T²))               (capped at 1)
//! ```
//!
//! It makes no assumption on the distribution (ranks only), and a single
//! odd campaign in the middle of a series moves U far less than a step
//! does, so a spike is not called a step. Splits are only tried between
//! campaigns (a step begins at a campaign, not within one), which makes the
//! approximate p-value, derived for every split, conservative. With three
//! runs per campaign, a clean step after three of five campaigns gives
//! p ≈ 0.015; with two runs per campaign it cannot reach 0.05, which the
//! history says rather than calling a step.

use serde::Serialize;

/// Where the series stepped, if it did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangePoint {
    /// Index of the first group (campaign) after the step.
    pub at: usize,
    /// Pettitt's K at that split.
    pub k: f64,
    /// Approximate two-sided p-value of "no change anywhere".
    pub p_value: f64,
}

/// Pettitt's test on `groups` (the runs of each campaign, in order),
/// splitting only between groups. `None` with fewer than two non-empty
/// groups.
pub fn pettitt(groups: &[Vec<f64>]) -> Option<ChangePoint> {
    let values: Vec<f64> = groups.iter().flatten().copied().collect();
    let t_len = values.len();
    let mut best: Option<(usize, f64)> = None;
    let mut end = 0;
    for (g, group) in groups
        .iter()
        .enumerate()
        .take(groups.len().saturating_sub(1))
    {
        end += group.len();
        if end == 0 || end == t_len {
            continue;
        }
        let u = mann_whitney_u(&values[..end], &values[end..]);
        let better = match best {
            Some((_, k)) => u.abs() > k,
            None => true,
        };
        if better {
            best = Some((g + 1, u.abs()));
        }
    }
    let (at, k) = best?;
    let t = t_len as f64;
    let p = (2.0 * (-6.0 * k * k / (t.powi(3) + t.powi(2))).exp()).min(1.0);
    Some(ChangePoint { at, k, p_value: p })
}

/// Σ over pairs of sgn(after − before).
fn mann_whitney_u(before: &[f64], after: &[f64]) -> f64 {
    let mut u = 0.0;
    for x in before {
        for y in after {
            u += match y.partial_cmp(x) {
                Some(std::cmp::Ordering::Greater) => 1.0,
                Some(std::cmp::Ordering::Less) => -1.0,
                _ => 0.0,
            };
        }
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(levels: &[f64]) -> Vec<Vec<f64>> {
        levels
            .iter()
            .map(|l| vec![l * 0.99, *l, l * 1.01])
            .collect()
    }

    #[test]
    fn a_step_at_the_fourth_of_five_campaigns_is_found_there() {
        let cp = pettitt(&series(&[100.0, 101.0, 99.0, 70.0, 71.0])).unwrap();
        assert_eq!(cp.at, 3);
        assert_eq!(cp.k, 54.0);
        // 2·exp(−6·54²/(15³+15²)) = 2·exp(−4.86)
        assert!((cp.p_value - 2.0 * (-6.0f64 * 2916.0 / 3600.0).exp()).abs() < 1e-12);
        assert!(cp.p_value < 0.05);
    }

    #[test]
    fn one_odd_campaign_is_not_a_step() {
        let cp = pettitt(&series(&[100.0, 101.0, 70.0, 99.0, 100.5])).unwrap();
        assert!(cp.p_value > 0.05, "{cp:?}");
    }

    #[test]
    fn noise_without_a_step_is_not_significant() {
        let groups = vec![
            vec![100.0, 97.0, 103.0],
            vec![99.0, 104.0, 96.0],
            vec![101.0, 98.0, 102.0],
            vec![97.5, 103.5, 100.5],
            vec![102.5, 96.5, 99.5],
        ];
        assert!(pettitt(&groups).unwrap().p_value > 0.5);
    }

    #[test]
    fn too_few_campaigns_give_no_test() {
        assert_eq!(pettitt(&[vec![1.0, 2.0]]), None);
        assert_eq!(pettitt(&[]), None);
        assert_eq!(pettitt(&[vec![], vec![1.0]]), None);
    }

    #[test]
    fn two_runs_per_campaign_cannot_call_a_step() {
        let groups: Vec<Vec<f64>> = [100.0, 100.0, 100.0, 70.0, 70.0]
            .iter()
            .map(|l| vec![*l, l * 1.01])
            .collect();
        let cp = pettitt(&groups).unwrap();
        assert_eq!(cp.at, 3);
        assert!(cp.p_value > 0.05);
    }
}
