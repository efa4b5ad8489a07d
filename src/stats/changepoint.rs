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
//!
//! Ranks tie where a step is preceded by a smaller one: campaigns 1–2 at
//! 80 ms, campaign 3 at 190 ms (a loaded host), 4–5 at 1 s give K = 54 at
//! both splits, since campaign 3 lies above 1–2 and below 4–5 either way.
//! Among splits with the same K the step is placed where the two sides'
//! means differ most, weighted as a t statistic is (n₁n₂/T · Δ², on the log
//! scale when every value is positive): the split after campaign 3 here.

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
    let scaled: Vec<f64> = if values.iter().all(|v| *v > 0.0) {
        values.iter().map(|v| v.ln()).collect()
    } else {
        values.clone()
    };
    // U at every split from one sorted copy: moving value x_t from after
    // the split to before it changes U by V_t = Σ_j sgn(x_j − x_t), the
    // values above x_t less those below, so U_t = V_1 + … + V_t: O(T log T)
    // where the pairs' double sum at each split was O(T²) per campaign
    // (a history of 1,000 campaigns × 100 runs had not answered in 12
    // minutes). The sums are of integers: exactly the double sum's.
    let u_at = split_statistics(&values);
    let prefix: Vec<f64> = std::iter::once(0.0)
        .chain(scaled.iter().scan(0.0, |acc, v| {
            *acc += v;
            Some(*acc)
        }))
        .collect();
    // (group after the split, K, size of the shift)
    let mut best: Option<(usize, f64, f64)> = None;
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
        let u = u_at[end - 1].abs();
        let shift = mean_shift(end, t_len - end, &prefix);
        let better = match best {
            Some((_, k, _)) if u > k + 1e-9 => true,
            Some((_, k, s)) => (u - k).abs() <= 1e-9 && shift > s,
            None => true,
        };
        if better {
            best = Some((g + 1, u, shift));
        }
    }
    let (at, k, _) = best?;
    let t = t_len as f64;
    let p = (2.0 * (-6.0 * k * k / (t.powi(3) + t.powi(2))).exp()).min(1.0);
    Some(ChangePoint { at, k, p_value: p })
}

/// `U_t = Σ_{i ≤ t} Σ_{j > t} sgn(x_j − x_i)` for every t (0-based: the
/// split after `values[t]`). A value that compares with nothing (NaN)
/// counts neither above nor below, as in the double sum.
fn split_statistics(values: &[f64]) -> Vec<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let mut u = 0i64;
    values
        .iter()
        .map(|&x| {
            if !x.is_nan() {
                let below = sorted.partition_point(|&y| y < x);
                let above = n - sorted.partition_point(|&y| y <= x);
                u += above as i64 - below as i64;
            }
            u as f64
        })
        .collect()
}

/// n₁n₂/T · (mean after − mean before)²: how far apart two sides lie,
/// weighted by how much of the series each holds; `prefix` holds the
/// running sums of the (scaled) values.
fn mean_shift(n_before: usize, n_after: usize, prefix: &[f64]) -> f64 {
    let (n1, n2) = (n_before as f64, n_after as f64);
    let total = prefix[n_before + n_after];
    let before = prefix[n_before];
    let d = (total - before) / n2 - before / n1;
    n1 * n2 / (n1 + n2) * d * d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Σ over pairs of sgn(after − before), as Pettitt writes U.
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

    #[test]
    fn every_splits_statistic_is_the_double_sums() {
        // Ties, repeats and a NaN among pseudo-random values.
        let mut x = 12345u64;
        let mut values: Vec<f64> = (0..300)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) % 40) as f64
            })
            .collect();
        values[17] = f64::NAN;
        let fast = split_statistics(&values);
        for t in 0..values.len() {
            assert_eq!(
                fast[t],
                mann_whitney_u(&values[..=t], &values[t + 1..]),
                "split {t}"
            );
        }
    }

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
    fn a_smaller_step_before_the_big_one_does_not_take_its_place() {
        // CI's loaded host: campaign 3 slept 50 ms but took ~190 ms; every
        // run of it lies above campaigns 1–2, so K ties at both splits.
        let groups = vec![
            vec![80.0, 79.0, 81.0],
            vec![81.0, 80.0, 82.0],
            vec![130.0, 170.0, 260.0],
            vec![1000.0, 1010.0, 990.0],
            vec![1005.0, 995.0, 1000.0],
        ];
        let cp = pettitt(&groups).unwrap();
        assert_eq!((cp.at, cp.k), (3, 54.0), "{cp:?}");
        // Where the smaller step is the larger shift, it is the step.
        let groups = vec![
            vec![80.0, 79.0, 81.0],
            vec![81.0, 80.0, 82.0],
            vec![700.0, 800.0, 900.0],
            vec![1000.0, 1010.0, 990.0],
            vec![1005.0, 995.0, 1000.0],
        ];
        assert_eq!(pettitt(&groups).unwrap().at, 2);
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
