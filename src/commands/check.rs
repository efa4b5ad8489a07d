//! `storlab check EXPERIMENT`: validate and print the planned runs.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::EXIT_INVALID;
use crate::experiment;
use crate::params::units::format_seconds;
use crate::plan::plan;

pub fn check(file: &Path) -> Result<ExitCode> {
    let exp = match experiment::load(file) {
        Ok(e) => e,
        Err(e) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(EXIT_INVALID));
        }
    };
    let runs = plan(&exp);
    let shown = match file.to_str() {
        Some("-") => experiment::STDIN.into(),
        _ => file.display().to_string(),
    };
    outln!("{shown}: valid experiment `{}`", exp.name);
    outln!(
        "targets: {}",
        exp.targets
            .iter()
            .map(|t| format!("{} ({})", t.name, t.kind.name()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    outln!("baseline: {}", exp.targets[exp.baseline()].name);
    for r in &runs {
        let w = &exp.workloads[r.workload];
        let kind = if r.warmup { "warm-up" } else { "measured" };
        outln!(
            "  {:>4}  round {:>2}  {:<20} on {:<16} {kind} rep {}  ~{}",
            r.position + 1,
            r.round,
            w.name,
            exp.targets[r.target].name,
            r.repetition,
            format_seconds(w.config.estimate().as_secs_f64())
        );
    }
    outln!(
        "{} runs, estimated {}",
        runs.len(),
        format_seconds(exp.estimate().as_secs_f64())
    );
    Ok(ExitCode::SUCCESS)
}
