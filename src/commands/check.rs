//! `storlab check EXPERIMENT`: validate and print the planned runs, with
//! an estimate: the workloads' own, or, when the store holds a finished
//! campaign of the same experiment, what that one took ([`measured`]).

mod measured;

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

use super::EXIT_INVALID;
use crate::experiment::Experiment;
use crate::params::units::format_seconds;
use crate::plan::plan;

use self::measured::Measured;

pub fn check(db: &Path, file: Option<&Path>) -> Result<ExitCode> {
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
    // A store that cannot be read leaves the workloads' own estimates.
    let measured = Measured::of(db, &exp.name).ok().flatten();
    let mut total = Duration::ZERO;
    for r in &runs {
        let w = &exp.workloads[r.workload];
        let t = &exp.targets[r.target];
        let kind = if r.warmup { "warm-up" } else { "measured" };
        let each = measured
            .as_ref()
            .and_then(|m| m.run(&w.name, &t.name))
            .unwrap_or_else(|| w.config.estimate());
        total = total.saturating_add(each);
        outln!(
            "  {:>4}  round {:>2}  {:<20} on {:<16} {kind} rep {}  ~{}",
            r.position + 1,
            r.round,
            w.name,
            t.name,
            r.repetition,
            format_seconds(each.as_secs_f64())
        );
    }
    let own = format_seconds(exp.estimate().as_secs_f64());
    match &measured {
        None => outln!("{} runs, estimated {own}", runs.len()),
        Some(m) => {
            let outside = Duration::from_secs_f64(m.outside_s);
            outln!(
                "{} runs, estimated {} as campaign {} of this experiment in {} went: its runs as measured, and {} outside them (provisioning, cache drops, remounts, teardown); the workloads' own estimate is {own}",
                runs.len(),
                format_seconds(total.saturating_add(outside).as_secs_f64()),
                m.campaign,
                db.display(),
                format_seconds(m.outside_s),
            );
        }
    }
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
