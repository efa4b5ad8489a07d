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
/// alternate for the same workload.
pub fn pairs(exp: &Experiment) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (w, wl) in exp.workloads.iter().enumerate() {
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
        Order::Interleaved | Order::Randomized => vec![all],
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
    if exp.plan.order == Order::Randomized {
        let key = u64::from(round) + if warmup { 0 } else { 1 << 32 };
        shuffle(
            &mut runs,
            exp.plan.seed.wrapping_mul(1_000_003).wrapping_add(key),
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
        let runs = plan(&exp("repetitions = 2"));
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
