//! The steady-state sentences of the methodology: per `io` workload that
//! asked for steady state, how many measured runs reached it and how soon,
//! from the `ss_reached` and `ss_time_s` metrics each run stored.

use crate::metric::catalogue::{SS_REACHED, SS_TIME_S};
use crate::stats::summarize;
use crate::store::stored::SteadyRequest;
use crate::store::{CampaignData, RunData};

/// The figures of the runs the steady-state sentences read
/// (`crate::analysis::figures`).
pub const FIGURES: &[&crate::metric::MetricDef] = &[&SS_REACHED, &SS_TIME_S];

/// One sentence per workload with steady-state runs; none otherwise.
pub fn methodology_lines(c: &CampaignData) -> Vec<String> {
    c.workloads
        .iter()
        .filter_map(|w| {
            let runs: Vec<&RunData> = c.runs_of_workload(&w.name).filter(|r| judged(r)).collect();
            (!runs.is_empty()).then(|| workload_line(&w.name, &w.steady(), c, &runs))
        })
        .collect()
}

/// A measured run that recorded whether it reached steady state.
fn judged(r: &RunData) -> bool {
    !r.warmup && r.status == "ok" && r.metric(&SS_REACHED).is_some()
}

fn workload_line(name: &str, asked: &SteadyRequest, c: &CampaignData, runs: &[&RunData]) -> String {
    let per_target: Vec<String> = c
        .targets
        .iter()
        .filter_map(|t| {
            let mine: Vec<&RunData> = runs
                .iter()
                .copied()
                .filter(|r| r.target == t.name)
                .collect();
            (!mine.is_empty()).then(|| format!("{}: {}", t.name, tally(&mine, "median")))
        })
        .collect();
    let split = if per_target.len() > 1 {
        format!(" — {}", per_target.join("; "))
    } else {
        String::new()
    };
    format!(
        "Steady state for {name} ({}) was reached in {}{split}.",
        setting(asked),
        tally(runs, "a median of"),
    )
}

/// `5 of 6 measured runs, a median of 7 s into measurement`.
fn tally(runs: &[&RunData], median: &str) -> String {
    let times: Vec<f64> = runs
        .iter()
        .filter(|r| r.metric(&SS_REACHED).is_some_and(|m| m.value == 1.0))
        .filter_map(|r| r.metric(&SS_TIME_S).map(|m| m.value))
        .collect();
    let head = format!("{} of {} measured runs", times.len(), runs.len());
    match summarize(&times) {
        Some(s) => format!("{head}, {median} {} s into measurement", s.median),
        None => head,
    }
}

/// `bw:20% over 3 s windows, judged after 5 s, runtime 30 s at most`, from
/// the stored parameters.
fn setting(asked: &SteadyRequest) -> String {
    let criterion = asked
        .criterion
        .as_deref()
        .unwrap_or(crate::metric::catalogue::DEFAULT_STEADY_CRITERION);
    let window = asked.window_s.unwrap_or_default();
    let ramp = asked
        .ramp_s
        .filter(|r| *r > 0.0)
        .map(|r| format!(", judged after {r} s"))
        .unwrap_or_default();
    let runtime = asked
        .runtime_s
        .map(|r| format!(", runtime {r} s at most"))
        .unwrap_or_default();
    format!("{criterion} over {window} s windows{ramp}{runtime}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::metric::MetricDef;
    use crate::store::{CampaignRow, TargetRow, WorkloadRow};

    fn run(id: i64, target: &str, workload: &str, steady_after: Option<f64>) -> RunData {
        let mut metrics: Vec<(&MetricDef, f64)> = Vec::new();
        if workload == "steady" {
            metrics.push((&SS_REACHED, steady_after.map_or(0.0, |_| 1.0)));
            if let Some(t) = steady_after {
                metrics.push((&SS_TIME_S, t));
            }
        }
        RunData::of_test(id, target, workload, &metrics)
    }

    fn campaign(runs: Vec<RunData>) -> CampaignData {
        let target = |id, name: &str| TargetRow {
            id,
            name: name.into(),
            kind: "dir".into(),
            baseline: id == 1,
            params: json!({}),
            facts: json!({}),
            family: name.into(),
            factors: Vec::new(),
        };
        let workload = |id, name: &str, params| WorkloadRow {
            id,
            name: name.into(),
            kind: "io".into(),
            primary_metric: "bw_bytes_per_s".into(),
            params,
            family: name.into(),
            factors: Vec::new(),
            compare_levels: Vec::new(),
        };
        CampaignData {
            campaign: CampaignRow::finished("c", runs.len()),
            environment: json!({}),
            experiment: json!({}),
            targets: vec![target(1, "a"), target(2, "b")],
            workloads: vec![
                workload(
                    1,
                    "steady",
                    json!({"ss": "bw:20%", "ss_dur": 3.0, "ss_ramp": 2.0, "runtime": 30.0}),
                ),
                workload(2, "plain", json!({"runtime": 30.0})),
            ],
            runs,
            stops: Vec::new(),
            facts: Default::default(),
            pair_cache: Default::default(),
            columns: Default::default(),
            replicas: Vec::new(),
        }
    }

    #[test]
    fn each_steady_workload_gets_a_sentence_with_counts_and_medians() {
        let c = campaign(vec![
            run(1, "a", "steady", Some(4.0)),
            run(2, "b", "steady", None),
            run(3, "a", "steady", Some(9.0)),
            run(4, "b", "steady", Some(30.0)),
            run(5, "a", "plain", None),
        ]);
        assert_eq!(
            methodology_lines(&c),
            ["Steady state for steady (bw:20% over 3 s windows, judged after 2 s, runtime 30 s at most) was reached in 3 of 4 measured runs, a median of 9 s into measurement — a: 2 of 2 measured runs, median 6.5 s into measurement; b: 1 of 2 measured runs, median 30 s into measurement."]
        );
    }

    #[test]
    fn warmups_and_failed_runs_are_left_out() {
        let mut warm = run(1, "a", "steady", Some(4.0));
        warm.warmup = true;
        let mut failed = run(2, "a", "steady", None);
        failed.status = "failed".into();
        assert!(methodology_lines(&campaign(vec![warm, failed])).is_empty());
    }
}
