//! `storlab check EXPERIMENT`: validate and print the planned runs.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use super::EXIT_INVALID;
use crate::experiment::Experiment;
use crate::params::units::format_seconds;
use crate::plan::plan;

pub fn check(file: Option<&Path>) -> Result<ExitCode> {
    let exp = match super::experiment_file::load(file, crate::host::is_root()) {
        Ok(e) => e,
        Err(e) => {
            super::experiment_file::refuse(&e);
            return Ok(ExitCode::from(EXIT_INVALID));
        }
    };
    let runs = plan(&exp);
    let shown = exp.origin.clone();
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
    for line in variants_text(&exp) {
        outln!("{line}");
    }
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

/// The variants of each swept target and workload: how many, of which
/// values, and (for workloads) each one's estimated run time and runs.
fn variants_text(exp: &Experiment) -> Vec<String> {
    let mut out = Vec::new();
    let runs_per_pair = exp.plan.repetitions.min() + exp.plan.warmup;
    let mut families: Vec<&str> = Vec::new();
    for t in exp.targets.iter().filter(|t| !t.factors.is_empty()) {
        if families.contains(&t.family.as_str()) {
            continue;
        }
        families.push(&t.family);
        let variants: Vec<_> = exp
            .targets
            .iter()
            .filter(|x| x.family == t.family)
            .collect();
        let on =
            t.on.map(|c| format!(", on {}", exp.targets[c].family))
                .unwrap_or_default();
        out.push(format!(
            "  target {} ({}{on}): {} variants",
            t.family,
            t.kind.name(),
            variants.len()
        ));
        for v in variants {
            out.push(format!("      {}", v.name));
        }
    }
    families.clear();
    for w in exp.workloads.iter().filter(|w| !w.factors.is_empty()) {
        if families.contains(&w.family.as_str()) {
            continue;
        }
        families.push(&w.family);
        let variants: Vec<_> = exp
            .workloads
            .iter()
            .filter(|x| x.family == w.family)
            .collect();
        out.push(format!(
            "  workload {} ({}): {} variants",
            w.family,
            w.kind.name(),
            variants.len()
        ));
        for v in variants {
            let pairs = exp.targets.iter().filter(|t| v.runs_on(t)).count() as u32;
            out.push(format!(
                "      {:<40} ~{} per run, {} runs",
                v.name,
                format_seconds(v.config.estimate().as_secs_f64()),
                pairs * runs_per_pair
            ));
        }
    }
    if !out.is_empty() {
        out.insert(0, "variants:".into());
    }
    out
}
