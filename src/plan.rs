//! Experiment → ordered runs: warm-up rounds, then measured rounds, in
//! interleaved, randomized (seeded shuffle within each round) or sequential
//! order. Round r runs every target–workload pair once before round r+1.

use crate::experiment::{Experiment, Order};

/// One run to execute, in the order it will execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedRun {
    pub target: usize,
    pub workload: usize,
    /// 1-based repetition among the pair's measured (or warm-up) runs.
    pub repetition: u32,
    /// 1-based round.
    pub round: u32,
    /// 0-based position in the whole campaign.
    pub position: u32,
    pub warmup: bool,
}

/// Every target–workload pair that runs, workload-major so that targets
/// alternate for the same workload. A workload with a capacity search
/// does not run itself: its probes do ([`searches`]).
pub fn pairs(exp: &Experiment) -> Vec<(usize, usize)> {
    every_pair(exp, false)
}

/// The pairs of the workloads with a capacity search, grouped as they
/// search: a workload's targets together (each round of a probe runs
/// every target's current probe once), or with `order = "sequential"`
/// one target after the other.
pub fn searches(exp: &Experiment) -> Vec<Vec<(usize, usize)>> {
    let all = every_pair(exp, true);
    match exp.plan.order {
        Order::Sequential => all.into_iter().map(|p| vec![p]).collect(),
        _ => all
            .chunk_by(|a, b| a.1 == b.1)
            .map(<[(usize, usize)]>::to_vec)
            .collect(),
    }
}

fn every_pair(exp: &Experiment, searched: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (w, wl) in exp.workloads.iter().enumerate() {
        if wl.capacity.is_some() != searched || wl.probe_of.is_some() {
            continue;
        }
        for (t, tg) in exp.targets.iter().enumerate() {
            if wl.runs_on(tg) {
                out.push((t, w));
            }
        }
    }
    out
}

/// Groups of pairs that take their rounds together: all pairs at once for
/// interleaved and randomized orders, one pair at a time for sequential.
pub fn groups(exp: &Experiment) -> Vec<Vec<(usize, usize)>> {
    let all = pairs(exp);
    match exp.plan.order {
        Order::Sequential => all.into_iter().map(|p| vec![p]).collect(),
        Order::Interleaved | Order::Balanced | Order::Randomized => vec![all],
    }
}

/// The runs of one round of `pairs`, in the plan's order (positions are
/// filled in by whoever executes them).
pub fn round_runs(
    exp: &Experiment,
    pairs: &[(usize, usize)],
    round: u32,
    repetition: u32,
    warmup: bool,
) -> Vec<PlannedRun> {
    let mut runs: Vec<PlannedRun> = pairs
        .iter()
        .map(|&(t, w)| PlannedRun {
            target: t,
            workload: w,
            repetition,
            round,
            position: 0,
            warmup,
        })
        .collect();
    if exp.plan.order == Order::Balanced {
        // The runs a verdict compares are one workload's on its targets,
        // which run next to each other: their order turns per round.
        let mut balanced = Vec::with_capacity(runs.len());
        // A capacity search's probes on its targets are compared too.
        let searched = |r: &PlannedRun| match &exp.workloads[r.workload].probe_of {
            Some(p) => p.search.as_str(),
            None => exp.workloads[r.workload].name.as_str(),
        };
        for group in runs.chunk_by(|a, b| searched(a) == searched(b)) {
            let row_of_round = round.saturating_sub(1) as usize + exp.plan.replica as usize;
            let row = williams_row(group.len(), row_of_round);
            balanced.extend(row.iter().map(|&i| group[i]));
        }
        runs = balanced;
    }
    if exp.plan.order == Order::Randomized {
        let key = u64::from(round) + if warmup { 0 } else { 1 << 32 };
        let replica = u64::from(exp.plan.replica).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        shuffle(
            &mut runs,
            exp.plan.seed.wrapping_mul(1_000_003).wrapping_add(key) ^ replica,
        );
    }
    runs
}

/// The runs of a plan with every pair at its minimum repetitions: exactly the
/// campaign for fixed repetitions, the first rounds of an adaptive one.
pub fn plan(exp: &Experiment) -> Vec<PlannedRun> {
    let p = &exp.plan;
    let mut runs = Vec::new();
    for group in groups(exp) {
        let mut round = 0;
        for rep in 1..=p.warmup {
            round += 1;
            runs.extend(round_runs(exp, &group, round, rep, true));
        }
        for rep in 1..=p.repetitions.min() {
            round += 1;
            runs.extend(round_runs(exp, &group, round, rep, false));
        }
    }
    for (i, r) in runs.iter_mut().enumerate() {
        r.position = i as u32;
    }
    runs
}

/// Fisher–Yates with a splitmix64 stream: the same seed, the same order.
/// Row `r` of a Williams design for `n` items: their order in round `r`.
///
/// A run can leave work behind that the next one pays for (a virtual disk
/// still writing out what the last run wrote, a warm or cold cache), so
/// in rounds that always run A before B, B always pays for A. Over a
/// Williams design's rows — `n` for an even `n`, `2n` for an odd one (each
/// row and its reverse) — every item follows every other exactly as often,
/// and takes every place in the round as often: the carry-over falls on
/// every pair alike. Rows repeat after that.
pub fn williams_row(n: usize, r: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    // 0, 1, n−1, 2, n−2, 3, …: the differences between neighbours cover
    // every non-zero step once, which makes the shifted rows balanced.
    let first: Vec<usize> = (0..n)
        .map(|j| {
            if j % 2 == 1 {
                j.div_ceil(2)
            } else {
                (n - j / 2) % n
            }
        })
        .collect();
    let rows = if n % 2 == 0 { n } else { 2 * n };
    let r = r % rows;
    let mut row: Vec<usize> = first.iter().map(|&x| (x + r % n) % n).collect();
    if r >= n {
        row.reverse();
    }
    row
}

fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::parse_experiment;

    fn exp(plan: &str) -> Experiment {
        let src = format!(
            "[plan]\n{plan}\n[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[target]]\nname = \"b\"\nkind = \"dir\"\npath = \"/tmp\"\n\
             [[workload]]\nname = \"w1\"\nkind = \"io\"\n[[workload]]\nname = \"w2\"\nkind = \"io\"\ntargets = [\"b\"]\n"
        );
        parse_experiment("t.toml", &src).unwrap()
    }

    #[test]
    fn interleaved_rounds_run_every_pair_once() {
        let runs = plan(&exp("repetitions = 2\norder = \"interleaved\""));
        let order: Vec<(usize, usize, u32)> = runs
            .iter()
            .map(|r| (r.target, r.workload, r.round))
            .collect();
        assert_eq!(
            order,
            vec![
                (0, 0, 1),
                (1, 0, 1),
                (1, 1, 1),
                (0, 0, 2),
                (1, 0, 2),
                (1, 1, 2)
            ]
        );
    }

    #[test]
    fn sequential_runs_a_pair_back_to_back() {
        let runs = plan(&exp("repetitions = 2\norder = \"sequential\""));
        assert_eq!(
            (
                runs[0].target,
                runs[1].target,
                runs[0].repetition,
                runs[1].repetition
            ),
            (0, 0, 1, 2)
        );
    }

    #[test]
    fn warmup_comes_first_and_is_flagged() {
        let runs = plan(&exp("repetitions = 1\nwarmup = 1"));
        assert_eq!(runs.len(), 6);
        assert!(runs[..3].iter().all(|r| r.warmup));
        assert!(runs[3..].iter().all(|r| !r.warmup));
    }

    /// How often each item follows each other within the rows, and how
    /// often each item takes each place.
    fn carry_over(n: usize, rows: usize) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let mut follows = vec![vec![0; n]; n];
        let mut place = vec![vec![0; n]; n];
        for r in 0..rows {
            let row = williams_row(n, r);
            let mut sorted = row.clone();
            sorted.sort();
            assert_eq!(
                sorted,
                (0..n).collect::<Vec<_>>(),
                "row {r} of {n}: {row:?}"
            );
            for (p, &i) in row.iter().enumerate() {
                place[i][p] += 1;
            }
            for w in row.windows(2) {
                follows[w[0]][w[1]] += 1;
            }
        }
        (follows, place)
    }

    #[test]
    fn williams_rows_balance_what_follows_what_and_every_place() {
        for n in 2..=9 {
            let rows = if n % 2 == 0 { n } else { 2 * n };
            let (follows, place) = carry_over(n, rows);
            let times = rows / n;
            for a in 0..n {
                for b in 0..n {
                    let want = if a == b { 0 } else { times };
                    assert_eq!(follows[a][b], want, "n {n}: {a} then {b}: {follows:?}");
                }
                assert!(place[a].iter().all(|&k| k == times), "n {n}: {place:?}");
            }
        }
        // Interleaved rounds, for contrast, run 0 before 1 every time.
        assert_eq!(williams_row(2, 0), vec![0, 1]);
        assert_eq!(williams_row(2, 1), vec![1, 0]);
        assert_eq!(williams_row(1, 5), vec![0]);
        assert!(williams_row(0, 3).is_empty());
    }

    #[test]
    fn balanced_rounds_follow_the_williams_rows() {
        // The default order.
        let runs = plan(&exp("repetitions = 4"));
        let rounds: Vec<Vec<(usize, usize)>> = runs
            .chunks(3)
            .map(|c| c.iter().map(|r| (r.target, r.workload)).collect())
            .collect();
        // Workload 0 runs on both targets, whose order turns each round;
        // workload 1 runs on target 1 only.
        for (r, round) in rounds.iter().enumerate() {
            let want = if r % 2 == 0 {
                [(0, 0), (1, 0), (1, 1)]
            } else {
                [(1, 0), (0, 0), (1, 1)]
            };
            assert_eq!(round, &want, "round {}", r + 1);
            assert!(runs[r * 3..r * 3 + 3]
                .iter()
                .all(|x| x.round == r as u32 + 1 && x.repetition == r as u32 + 1));
        }
        assert_ne!(rounds[0], rounds[1]);
    }

    // A replica's rounds take another order: balanced ones start a row
    // further, randomized ones are shuffled anew; the first campaign's
    // order is unchanged.
    #[test]
    fn a_replica_runs_its_rounds_in_another_order() {
        let key = |v: &[PlannedRun]| v.iter().map(|r| (r.target, r.workload)).collect::<Vec<_>>();
        for order in ["balanced", "randomized"] {
            let mut e = exp(&format!("repetitions = 8\norder = \"{order}\""));
            let first = key(&plan(&e));
            e.plan.replica = 1;
            let replica = key(&plan(&e));
            assert_ne!(first, replica, "{order}");
            let mut sorted = (first.clone(), replica.clone());
            sorted.0.sort();
            sorted.1.sort();
            assert_eq!(sorted.0, sorted.1, "{order}: the same runs");
        }
        let mut e = exp("repetitions = 2");
        e.plan.replica = 1;
        // Rounds B A, then A B.
        assert_eq!(key(&plan(&e))[..3], [(1, 0), (0, 0), (1, 1)]);
    }

    #[test]
    fn randomized_is_reproducible_per_seed() {
        let a = plan(&exp("repetitions = 8\norder = \"randomized\"\nseed = 1"));
        let b = plan(&exp("repetitions = 8\norder = \"randomized\"\nseed = 1"));
        let c = plan(&exp("repetitions = 8\norder = \"randomized\"\nseed = 2"));
        let key = |v: &[PlannedRun]| v.iter().map(|r| (r.target, r.workload)).collect::<Vec<_>>();
        assert_eq!(key(&a), key(&b));
        assert_ne!(key(&a), key(&c));
    }
}
