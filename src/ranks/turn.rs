//! One run on every rank at once. Each rank prepares in its own `rank-K`
//! directory (or rank 0 alone in `shared`, for a workload that says
//! `shared = true`); they agree that all prepared; rank 0 remounts and drops
//! its caches (each host's first rank drops its own); they agree again, meet
//! at a barrier, run, and send rank 0 their reports; then each cleans up its
//! own directory (rank 0 the shared one) and says how that went. Rank 0
//! concludes: the run's status, its merged figures and a row per rank.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};

use super::merge::{merge, RankRun};
use super::protocol::{RankReport, RunOrder, WireOutput};
use super::Team;
use crate::experiment::Experiment;
use crate::measure::{RunOutput, StopFlag};
use crate::store::write::RankRow;
use crate::workload::{RunContext, Workload, WorkloadKind};

/// What rank 0 records of a run carried out by every rank.
#[derive(Debug)]
pub struct Concluded {
    pub status: &'static str,
    pub error: Option<String>,
    pub output: Option<RunOutput>,
    pub ranks: Vec<RankRow>,
}

/// The metric holding a rank's measured duration, for IOR's aggregate.
pub fn span_metric(kind: WorkloadKind) -> Option<&'static crate::metric::MetricDef> {
    kind.entry().span_metric
}

/// This rank's part of one run. `between` runs after every rank prepared
/// (rank 0: remount and drop caches). Returns the conclusion on rank 0.
pub fn take_part(
    team: &Team,
    exp: &Experiment,
    order: &RunOrder,
    stop: &StopFlag,
    between: &mut dyn FnMut() -> Result<()>,
) -> Option<Concluded> {
    let spec = &exp.workloads[order.workload];
    // With a shared directory only rank 0 lays out and removes the files.
    let owner = !spec.shared || team.is_root();
    let dir = match spec.shared {
        true => order.dir.join("shared"),
        false => order.dir.join(format!("rank-{}", team.rank())),
    };
    let mut workload = spec.config.build();
    let prepared = owner
        .then(|| prepare(workload.as_mut(), &dir).err())
        .flatten();
    let mut report = RankReport {
        rank: team.rank(),
        host: team.host(team.rank()).to_string(),
        status: "skipped".into(),
        error: None,
        done_s: None,
        output: None,
    };
    let mut failed = team.failures(prepared.map(|e| format!("{e:#}")));
    if failed.is_empty() {
        failed = team.failures(between().err().map(|e| format!("{e:#}")));
    }
    match failed.iter().find(|(r, _)| *r == team.rank()) {
        Some((_, e)) => {
            report.status = "failed".into();
            report.error = Some(e.clone());
        }
        None if failed.is_empty() => {
            team.barrier();
            run(
                workload.as_mut(),
                &dir,
                order,
                &exp.targets[order.target].name,
                team.rank(),
                stop,
                &mut report,
            );
        }
        None => {}
    }
    let reports = team.gather(&report);
    let cleaned = owner
        .then(|| cleanup(workload.as_mut(), &dir).err())
        .flatten();
    let cleanups: Vec<Option<String>> = team.gather(&cleaned.map(|e| format!("{e:#}")));
    team.is_root()
        .then(|| conclude(spec.kind, reports, cleanups))
}

fn prepare(w: &mut dyn Workload, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    w.prepare(dir).context("preparing the run")
}

/// The measured run, timed from the start barrier.
fn run(
    w: &mut dyn Workload,
    dir: &Path,
    order: &RunOrder,
    target: &str,
    rank: usize,
    stop: &StopFlag,
    report: &mut RankReport,
) {
    let cx = RunContext {
        stop: stop.clone(),
        // Each rank its own random pattern.
        run_seed: order.run_seed ^ (rank as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        position: order.position,
        target: target.to_string(),
    };
    let t0 = Instant::now();
    let out = w.run(dir, &cx);
    report.done_s = Some(t0.elapsed().as_secs_f64());
    match out.and_then(|o| WireOutput::from_output(&o)) {
        Ok(o) => {
            report.status = if stop.is_raised() {
                "interrupted"
            } else {
                "ok"
            }
            .into();
            report.output = Some(o);
        }
        Err(e) => {
            report.status = "failed".into();
            report.error = Some(format!("{e:#}"));
        }
    }
}

fn cleanup(w: &mut dyn Workload, dir: &Path) -> Result<()> {
    w.cleanup(dir).context("cleaning up after the run")?;
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", dir.display()))
        }
        _ => Ok(()),
    }
}

/// Rank 0's conclusion from every rank's report and cleanup.
fn conclude(
    kind: WorkloadKind,
    reports: Vec<RankReport>,
    cleanups: Vec<Option<String>>,
) -> Concluded {
    let mut runs = Vec::new();
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for (mut r, cleaned) in reports.into_iter().zip(cleanups) {
        if let (Some(e), "ok" | "interrupted") = (&cleaned, r.status.as_str()) {
            r.status = "failed".into();
            r.error = Some(e.clone());
        }
        let output = match r.output.take().map(WireOutput::into_output).transpose() {
            Ok(o) => o,
            Err(e) => {
                r.status = "failed".into();
                r.error = Some(format!("{e:#}"));
                None
            }
        };
        if let Some(e) = &r.error {
            errors.push(format!("rank {} on {}: {e}", r.rank, r.host));
        }
        rows.push(RankRow {
            rank: r.rank as u32,
            host: r.host.clone(),
            status: r.status.clone(),
            error: r.error.clone(),
            done_s: r.done_s,
            metrics: output
                .as_ref()
                .map(|o| o.metrics.clone())
                .unwrap_or_default(),
        });
        if let (Some(output), Some(done_s)) = (output, r.done_s) {
            runs.push(RankRun {
                rank: r.rank,
                done_s,
                output,
            });
        }
    }
    let status = if !errors.is_empty() {
        "failed"
    } else if rows.iter().any(|r| r.status == "interrupted") {
        "interrupted"
    } else {
        "ok"
    };
    Concluded {
        status,
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        output: (status != "failed").then(|| merge(&runs, span_metric(kind))),
        ranks: rows,
    }
}
