//! Sequential plans that look after every round: thousands of simulated
//! campaigns of the `mock` workload (a known truth), each run round by
//! round through storlab's own plan (`plan::round_runs`, the order and
//! positions a real campaign gets), mock model and sequencer
//! (`rounds::UntilDecided`, which stops a workload once its comparison is
//! different or equivalent), then judged as the report judges it. Two
//! real campaigns through the binary check that the simulation is what a
//! campaign records, and where it stops.
//!
//! The numbers of docs/methodology.md ("What a sequential plan costs")
//! are this module's, printed by
//!
//! ```text
//! cargo test --release --test integration sequential:: -- --nocapture --test-threads 1
//! ```

use std::collections::HashMap;

use storlab::analysis::verdict::Outcome;
use storlab::experiment::{parse_experiment, Experiment};
use storlab::plan::round_runs;
use storlab::rounds::{Pair, Seen, Sequencer, UntilDecided};
use storlab::runner::run_seed;
use storlab::stats::RoundValue;
use storlab::workload::mock::Model;

use crate::util::{dir_target, mock_model, Lab};

/// Simulated campaigns per scenario: the Monte Carlo standard error of a
/// 5% rate is then 0.22 points.
const CAMPAIGNS: u64 = 10000;
/// Run-to-run noise (coefficient of variation).
const CV: f64 = 0.02;

/// Two targets `a` (the baseline) and `b`, one mock workload, the default
/// plan unless `plan` says more.
fn experiment(plan: &str) -> Experiment {
    let src = format!(
        "[plan]\n{plan}\n\
         [[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/nonexistent\"\n\
         [[target]]\nname = \"b\"\nkind = \"dir\"\npath = \"/nonexistent\"\n\
         [[workload]]\nname = \"m\"\nkind = \"mock\"\n"
    );
    parse_experiment("sequential.toml", &src).expect("a valid experiment")
}

/// How one simulated campaign ended.
#[derive(Debug, Clone, Copy)]
struct Ended {
    outcome: Option<Outcome>,
    /// Measured rounds it ran.
    rounds: u32,
}

/// One campaign, round by round as the runner runs it: `b` is `factor_b`
/// times `a`.
fn campaign(exp: &Experiment, model: &Model, factor_b: f64) -> Ended {
    let group: Vec<Pair> = storlab::plan::pairs(exp);
    let (min, max) = match exp.plan.repetitions {
        storlab::experiment::Repetitions::Decided { min, max } => (min, max),
        r => (r.min(), r.max()),
    };
    let mut seq = UntilDecided::new(exp, &group, min, max);
    let mut values: HashMap<Pair, Vec<RoundValue>> = HashMap::new();
    let (mut rounds, mut position) = (0, 0);
    loop {
        let next = seq.next(&Seen {
            rounds,
            values: &values,
        });
        if next.run.is_empty() {
            let outcome = seq.outcomes(&Seen {
                rounds,
                values: &values,
            })[0];
            return Ended { outcome, rounds };
        }
        rounds += 1;
        for mut pr in round_runs(exp, &next.run, rounds, rounds, false) {
            pr.position = position;
            position += 1;
            let factor = if pr.target == 1 { factor_b } else { 1.0 };
            values
                .entry((pr.target, pr.workload))
                .or_default()
                .push(RoundValue {
                    round: pr.round,
                    value: model.value(factor, pr.position, run_seed(&pr)),
                });
        }
    }
}

/// Rates over [`CAMPAIGNS`] campaigns.
#[derive(Debug, Clone, Copy, Default)]
struct Rates {
    different: f64,
    equivalent: f64,
    inconclusive: f64,
    mean_rounds: f64,
}

fn rates(plan: &str, drift: f64, factor_b: f64) -> Rates {
    let mut exp = experiment(plan);
    let mut r = Rates::default();
    for k in 0..CAMPAIGNS {
        exp.plan.seed = k;
        let ended = campaign(&exp, &mock_model(k, CV, drift), factor_b);
        match ended.outcome {
            Some(Outcome::Better | Outcome::Worse) => r.different += 1.0,
            Some(Outcome::Equivalent) => r.equivalent += 1.0,
            _ => r.inconclusive += 1.0,
        }
        r.mean_rounds += f64::from(ended.rounds);
    }
    let n = CAMPAIGNS as f64;
    Rates {
        different: r.different / n,
        equivalent: r.equivalent / n,
        inconclusive: r.inconclusive / n,
        mean_rounds: r.mean_rounds / n,
    }
}

/// 5% plus two Monte Carlo standard errors: a procedure at level 5% passes
/// this with probability 0.98 whatever the seed.
fn at_most_five_percent(rate: f64) -> bool {
    rate <= 0.05 + 2.0 * (0.05 * 0.95 / CAMPAIGNS as f64).sqrt()
}

fn print(name: &str, r: Rates) {
    println!(
        "{name:<44} different {:>6.2}%  equivalent {:>6.2}%  inconclusive {:>6.2}%  rounds {:.2}",
        100.0 * r.different,
        100.0 * r.equivalent,
        100.0 * r.inconclusive,
        r.mean_rounds
    );
}

const DEFAULT: &str = "repetitions = { min = 3, max = 10, until = \"decided\" }";
const ORDERS: [(&str, &str); 2] = [
    (
        "balanced",
        "repetitions = { until = \"decided\" }\norder = \"balanced\"",
    ),
    (
        "randomized",
        "repetitions = { until = \"decided\" }\norder = \"randomized\"",
    ),
];

// Identical targets, looked at after every round from the third to the
// tenth: "different" at most 5% of the time, with or without a drift of
// 1% of the mean per run, in balanced and randomized rounds.
#[test]
fn identical_targets_are_rarely_called_different() {
    for (order, plan) in ORDERS {
        for drift in [0.0, 0.01] {
            let r = rates(plan, drift, 1.0);
            print(&format!("A/A, {order}, drift {drift}"), r);
            assert!(at_most_five_percent(r.different), "{order} {drift}: {r:?}");
            assert!(r.equivalent > 0.5, "A/A mostly decided equivalent: {r:?}");
        }
    }
}

// Targets 10% apart are called equivalent within ±5% at most 5% of the
// time; so are targets exactly at the margin (5% apart, either way),
// the hardest case for the equivalence call.
#[test]
fn targets_a_margin_apart_or_more_are_rarely_called_equivalent() {
    for (name, factor) in [
        ("10% apart", 1.10),
        ("at the margin, +5%", 1.05),
        ("at the margin, -5%", 0.95),
    ] {
        let r = rates(DEFAULT, 0.0, factor);
        print(name, r);
        assert!(at_most_five_percent(r.equivalent), "{name}: {r:?}");
    }
    let r = rates(DEFAULT, 0.01, 1.10);
    print("10% apart, drift 0.01", r);
    assert!(at_most_five_percent(r.equivalent), "{r:?}");
    assert!(r.different > 0.95, "10% apart found: {r:?}");
}

// What a sequential plan costs and buys against fixed ones: the rounds it
// takes and how often it decides, for differences from none to 20%
// (printed for docs/methodology.md; the assertions are the claims made
// there).
#[test]
fn what_a_sequential_plan_costs() {
    let mut table = Vec::new();
    for factor in [1.0, 1.02, 1.03, 1.05, 1.10, 1.20] {
        let seq = rates(DEFAULT, 0.0, factor);
        print(&format!("×{factor}: until decided, 3–10 rounds"), seq);
        let fixed = |n: u32| {
            let plan = format!("repetitions = {{ min = {n}, max = {n}, until = \"decided\" }}");
            let r = rates(&plan, 0.0, factor);
            print(&format!("×{factor}: fixed {n} rounds"), r);
            r
        };
        let three = fixed(3);
        fixed(5);
        fixed(7);
        let ten = fixed(10);
        table.push((factor, seq, three, ten));
    }
    for (factor, seq, three, ten) in table {
        // Never more rounds than the fixed plan of its max, and it decides
        // at least as often as three fixed rounds.
        assert!(seq.mean_rounds <= 10.0 && three.mean_rounds == 3.0 && ten.mean_rounds == 10.0);
        assert!(
            seq.inconclusive <= three.inconclusive + 0.01,
            "×{factor}: {seq:?} against {three:?}"
        );
    }
}

// A real campaign until decided: a clear difference stops at 3
// rounds, a noisy equivalence takes more, the stops are stored as
// decided, and every recorded value is what the simulation draws.
#[test]
fn a_real_campaign_stops_each_workload_once_decided() {
    let lab = Lab::new();
    let file = lab.file(
        "seq.toml",
        &format!(
            "name = \"seq\"\n[plan]\nrepetitions = {{ until = \"decided\" }}\ndrop_caches = false\ntelemetry = false\n{}{}\
             [[workload]]\nname = \"clear\"\nkind = \"mock\"\nnoise = 0.01\nseed = 3\nfactor = {{ b = 1.5 }}\n\
             [[workload]]\nname = \"same\"\nkind = \"mock\"\nnoise = {CV}\nseed = 4\n",
            dir_target(&lab, "a"),
            dir_target(&lab, "b")
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let stops = crate::util::stops(&export);
    let of = |w: &str| stops.iter().filter(|s| s.0 == w).collect::<Vec<_>>();
    assert_eq!(of("clear").len(), 2, "{stops:?}");
    assert!(
        of("clear").iter().all(|s| s.1 == "decided" && s.2 == 3),
        "{stops:?}"
    );
    let same = of("same");
    assert!(
        same.iter()
            .all(|s| s.1 == "decided" && s.2 > 3 && s.2 <= 10 && s.2 == same[0].2),
        "{stops:?}"
    );
    // The runs are the simulation's: replay the campaign in-process.
    let exp = parse_experiment("seq.toml", &std::fs::read_to_string(&file).unwrap()).unwrap();
    let runs = export["runs"].as_array().unwrap();
    assert_eq!(runs.len() as u64, 2 * 3 + 2 * same[0].2);
    let mut by_position: Vec<&serde_json::Value> = runs.iter().collect();
    by_position.sort_by_key(|r| r["position"].as_u64());
    let mut position = 0;
    for round in 1..=same[0].2 as u32 {
        let pairs: Vec<Pair> = storlab::plan::pairs(&exp)
            .into_iter()
            .filter(|p| round <= 3 || p.1 == 1)
            .collect();
        for mut pr in round_runs(&exp, &pairs, round, round, false) {
            pr.position = position;
            let run = by_position[position as usize];
            position += 1;
            assert_eq!(run["workload"], exp.workloads[pr.workload].name, "{run}");
            assert_eq!(run["target"], exp.targets[pr.target].name, "{run}");
            assert_eq!(run["round"], round, "{run}");
        }
    }
}
