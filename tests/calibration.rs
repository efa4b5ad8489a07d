//! Calibrated verdicts: do the comparisons find what is there, and only
//! that? Thousands of simulated campaigns of the `mock` workload (a known
//! truth: noise, a linear drift over the campaign, a per-target factor) go
//! through storlab's own plan, mock model and statistics in-process; two
//! real mock campaigns through the binary check that the simulation is what
//! a campaign records, and what `compare` and its gate then say.
//!
//! What the simulations show (rates over 10000 campaigns of 10 rounds, CV
//! 2%, a drift of 1% of the mean per run; numbers in the tests' comments):
//! the paired analysis keeps the A/A false-positive rate at its nominal 5%
//! under the drift, and finds a true 5% difference in nearly every
//! campaign, where Welch's t on unpaired runs loses it in most (the drift
//! widens its interval). Unpaired Welch does not raise false positives under
//! a drift that hits both targets alike: it is conservative (no false
//! positive at all), because the drift inflates its variance without
//! moving the difference. A fixed `interleaved` order is the exception: one
//! target always runs right after the other, a drift between neighbouring
//! runs is a real offset between them, and the paired analysis (precise
//! enough to see it) calls it; `randomized` rounds do not.

use storlab::analysis::model::call;
use storlab::experiment::{parse_experiment, Experiment};
use storlab::metric::Direction;
use storlab::plan::plan;
use storlab::runner::run_seed;
use storlab::stats::{compare_runs, Analysis, Design, Method, RoundValue, Verdict};
use storlab::workload::mock::{MockParams, Model};

use crate::util::Lab;

/// Simulated campaigns per scenario: the Monte Carlo standard error of a
/// 5% rate is then 0.22 points.
const CAMPAIGNS: u64 = 10000;
/// Rounds per campaign.
const ROUNDS: u32 = 10;
/// Run-to-run noise (coefficient of variation).
const CV: f64 = 0.02;
/// The linear drift: the mean moves by this share of itself per run.
const DRIFT: f64 = 0.01;

/// Two targets `a` (the baseline) and `b`, one mock workload.
fn experiment(order: &str) -> Experiment {
    let src = format!(
        "[plan]\nrepetitions = {ROUNDS}\norder = \"{order}\"\n\
         [[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/nonexistent\"\n\
         [[target]]\nname = \"b\"\nkind = \"dir\"\npath = \"/nonexistent\"\n\
         [[workload]]\nname = \"m\"\nkind = \"mock\"\n"
    );
    parse_experiment("calibration.toml", &src).expect("a valid experiment")
}

/// The two targets' runs of one campaign as the mock would report them.
fn campaign(exp: &Experiment, model: &Model, factor_b: f64) -> [Vec<RoundValue>; 2] {
    let mut sides = [Vec::new(), Vec::new()];
    for pr in plan(exp) {
        let factor = if pr.target == 1 { factor_b } else { 1.0 };
        sides[pr.target].push(RoundValue {
            round: pr.round,
            value: model.value(factor, pr.position, run_seed(&pr)),
        });
    }
    sides
}

/// Share of campaigns in which b is called different from a (`want`:
/// better, worse, or either for `None`), paired and unpaired.
fn rates(order: &str, drift: f64, factor_b: f64, want: Option<Verdict>) -> (f64, f64) {
    let mut exp = experiment(order);
    let (mut paired, mut unpaired) = (0, 0);
    for k in 0..CAMPAIGNS {
        exp.plan.seed = k;
        let [a, b] = campaign(&exp, &crate::util::mock_model(k, CV, drift), factor_b);
        let called = |design: Design, method: Method| -> bool {
            let cmp = compare_runs(&a, &b, design, Analysis::Ratio, 0.95).unwrap();
            assert_eq!(cmp.method, method);
            let v = call(&cmp, Direction::HigherIsBetter);
            match want {
                Some(w) => v == w,
                None => v != Verdict::NoSignificantDifference,
            }
        };
        paired += called(Design::Rounds, Method::PairedLog) as u32;
        unpaired += called(Design::Unpaired, Method::WelchLog) as u32;
    }
    let n = CAMPAIGNS as f64;
    (f64::from(paired) / n, f64::from(unpaired) / n)
}

/// 5% plus two Monte Carlo standard errors: a test at level 5% passes
/// this with probability 0.98 whatever the seed.
fn at_most_five_percent(rate: f64) -> bool {
    rate <= 0.05 + 2.0 * (0.05 * 0.95 / CAMPAIGNS as f64).sqrt()
}

#[test]
fn a_a_campaigns_under_drift_rarely_call_a_difference_when_paired() {
    // Measured: paired 0.0505, unpaired 0 (with no drift: 0.0471, 0.0470).
    let (paired, unpaired) = rates("randomized", DRIFT, 1.0, None);
    assert!(at_most_five_percent(paired), "paired A/A rate {paired}");
    assert!(unpaired <= paired, "unpaired A/A rate {unpaired}");
    let (paired, unpaired) = rates("randomized", 0.0, 1.0, None);
    assert!(at_most_five_percent(paired), "no drift, paired {paired}");
    assert!(
        at_most_five_percent(unpaired),
        "no drift, unpaired {unpaired}"
    );
}

#[test]
fn a_true_five_percent_is_found_in_most_ten_round_campaigns() {
    // Measured: paired 0.995 under the drift, unpaired 0.257 there; 0.998
    // and 0.999 without drift; a true 1/1.05 slower: 0.994 paired.
    let (paired, unpaired) = rates("randomized", DRIFT, 1.05, Some(Verdict::Better));
    assert!(paired >= 0.8, "paired power {paired}");
    assert!(unpaired < 0.8, "unpaired power under drift {unpaired}");
    let (paired, unpaired) = rates("randomized", 0.0, 1.05, Some(Verdict::Better));
    assert!(paired >= 0.8 && unpaired >= 0.8, "{paired} {unpaired}");
    let (worse, _) = rates("randomized", DRIFT, 1.0 / 1.05, Some(Verdict::Worse));
    assert!(worse >= 0.8, "paired power, slower {worse}");
}

// The limit the methodology states: with the order within rounds fixed, a
// drift between neighbouring runs is a real offset of b against a (b runs
// 1% of the mean later, every round), which the paired test is precise
// enough to see. Measured: 0.146.
#[test]
fn a_fixed_interleaved_order_turns_fast_drift_into_an_offset() {
    let (paired, _) = rates("interleaved", DRIFT, 1.0, None);
    assert!(paired > 0.1, "interleaved A/A rate {paired}");
}

/// A campaign file: two directory targets and mock workloads.
fn mock_campaign(lab: &Lab, name: &str, workloads: &str) -> std::path::PathBuf {
    let dirs = ["a", "b"].map(|d| {
        let p = lab.path().join(d);
        std::fs::create_dir_all(&p).unwrap();
        p
    });
    lab.file(
        &format!("{name}.toml"),
        &format!(
            "name = \"{name}\"\n[plan]\nrepetitions = {ROUNDS}\norder = \"randomized\"\nseed = 3\ndrop_caches = false\n\
             [[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[target]]\nname = \"b\"\nkind = \"dir\"\npath = \"{}\"\n{workloads}",
            dirs[0].display(),
            dirs[1].display()
        ),
    )
}

#[test]
fn a_real_a_a_campaign_is_what_the_simulation_draws_and_passes_the_gate() {
    let lab = Lab::new();
    let file = mock_campaign(
        &lab,
        "aa",
        &format!(
            "[[workload]]\nname = \"steady\"\nkind = \"mock\"\nnoise = {CV}\ndrift = {DRIFT}\nseed = 11\n\
             [[workload]]\nname = \"noisy\"\nkind = \"mock\"\nnoise = 0.2\nseed = 12\n"
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    // Every recorded value is the simulation's, run by run.
    let exp = parse_experiment("aa.toml", &std::fs::read_to_string(&file).unwrap()).unwrap();
    let json = lab.export_json();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 40);
    for (pr, run) in plan(&exp).iter().zip(runs) {
        assert_eq!(run["position"], pr.position);
        let params = MockParams::from_params(&exp.workloads[pr.workload].params).unwrap();
        let model = params.model();
        let value = crate::util::value_of(run, "ops_per_s").unwrap();
        // The store keeps the value to the last bit or so (SQLite REAL).
        let drawn = model.value(1.0, pr.position, run_seed(pr));
        assert!((value - drawn).abs() <= 1e-12 * drawn, "{drawn} vs {run}");
    }
    let out = lab.run(&["compare", "--fail-on-regression", "5"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // The steady pair is equivalent within ±5% (-0.4% [-2.8%, +2.1%]); the
    // noisy one (CV 20%) is neither different nor equivalent.
    for (workload, word) in [("steady", "equivalent"), ("noisy", "inconclusive")] {
        let line = stdout.lines().find(|l| l.starts_with(workload)).unwrap();
        assert!(line.split(" ⚠").next().unwrap().ends_with(word), "{line}");
    }
    // The noisy pair is inconclusive: show says how many runs would settle it.
    let out = lab.run(&["show"]);
    let (show, warnings) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let noisy = show
        .lines()
        .find(|l| l.starts_with("noisy  ") && l.contains(" b "))
        .unwrap();
    assert!(noisy.contains("(inconclusive; ±5% needs about "), "{show}");
    // Warnings go to stderr, not into the table: a line per kind, and
    // each in full with --warnings.
    assert!(warnings.contains("\n  inconclusive "), "{warnings}");
    let out = lab.run(&["show", "--warnings"]);
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.contains("warning: inconclusive against the baseline; runs per target that would measure the difference to ±5%: noisy b about "), "{warnings}");
    let md = lab.ok(&["report", "--format", "md"]);
    assert!(md.contains("Runs are paired by round"), "{md}");
    assert!(md.contains("order within each round was shuffled"), "{md}");
}

#[test]
fn a_real_campaign_with_a_slower_target_under_drift_fails_the_gate() {
    let lab = Lab::new();
    let file = mock_campaign(
        &lab,
        "slower",
        &format!(
            "[[workload]]\nname = \"m\"\nkind = \"mock\"\nnoise = {CV}\ndrift = {DRIFT}\nseed = 5\nfactor = {{ b = 0.95 }}\n"
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let out = lab.run(&["compare", "--fail-on-regression", "3"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let line = stdout.lines().find(|l| l.starts_with("m ")).unwrap();
    assert!(
        line.split(" ⚠").next().unwrap().ends_with("slower"),
        "{line}"
    );
    assert!(stderr.contains("regression: m ops_per_s on b"), "{stderr}");
    // A gate wider than the difference passes.
    assert_eq!(
        lab.run(&["compare", "--fail-on-regression", "10"])
            .status
            .code(),
        Some(0)
    );
}

// The A/A study: 100 cells where nothing differs (two identical
// targets, the mock workload swept over 100 seeds, 5 randomized rounds).
// Judged cell by cell at p < 0.05, chance calls some of them faster or
// slower; judged as one family (Benjamini–Hochberg) at most one, and each
// cell its own p alone would have called says it is a chance result.
#[test]
fn a_hundred_cell_a_a_study_makes_at_most_one_call() {
    let lab = Lab::new();
    let seeds: Vec<String> = (1..=100).map(|s| s.to_string()).collect();
    let dirs = ["a", "b"].map(|d| {
        let p = lab.path().join(d);
        std::fs::create_dir_all(&p).unwrap();
        p
    });
    let file = lab.file(
        "aa100.toml",
        &format!(
            "name = \"aa100\"\n[plan]\nrepetitions = 5\norder = \"randomized\"\nseed = 1\ndrop_caches = false\ntelemetry = false\n\
             [[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[target]]\nname = \"b\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nnoise = {CV}\nsweep = {{ seed = [{}] }}\n",
            dirs[0].display(),
            dirs[1].display(),
            seeds.join(", ")
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let json: serde_json::Value =
        serde_json::from_str(&lab.ok(&["compare", "--format", "json"])).unwrap();
    let rows = json["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 100, "{json}");
    let verdict = |r: &serde_json::Value| r["candidate"]["verdict"].as_str().unwrap().to_string();
    let called = rows
        .iter()
        .filter(|r| verdict(r) != "no_significant_difference")
        .count();
    // The cells a test of each alone would call (p < 0.05, at least 1%).
    let alone = rows
        .iter()
        .filter(|r| {
            let c = &r["candidate"]["comparison"];
            c["p_value"].as_f64().unwrap() < 0.05 && c["diff_pct"].as_f64().unwrap().abs() >= 1.0
        })
        .count();
    let chance = rows
        .iter()
        .filter(|r| r["candidate"]["correction"]["chance"] == true)
        .count();
    // Measured (plan seeds 1, 2, 3): 0 called; 5, 3, 3 alone, each marked
    // a chance result among 100.
    assert!(called <= 1, "{called} of 100 A/A cells called");
    assert!(
        alone >= 2,
        "only {alone} cells significant alone: no test of the correction"
    );
    assert_eq!(chance, alone - called);
    for r in rows {
        assert_eq!(r["candidate"]["correction"]["comparisons"], 100, "{r}");
    }
    // The verdict says so where people read it.
    let show = lab.ok(&["report", "--format", "md"]);
    assert!(
        show.contains("significant alone, not among 100 comparisons (Benjamini–Hochberg): chance could explain it"),
        "{show}"
    );
    assert!(show.contains("adjusted over 100"), "{show}");
}
