//! One run on every rank at once — the one run lifecycle, which a plain
//! run goes through as a team of one. Each rank prepares in its own
//! directory (a team of one in the workload's directory itself; under MPI
//! `rank-K`, or rank 0 alone in `shared` for a workload that says
//! `shared = true`); they agree that all prepared; rank 0 remounts and
//! drops its caches (each host's first rank drops its own); they agree
//! again, meet at a barrier, run, and send rank 0 their reports; then each
//! cleans up its own directory (rank 0 the shared one) and says how that
//! went. Rank 0 concludes: the run's status, its figures (merged over the
//! ranks under MPI) and a row per rank.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::merge::{merge, RankRun};
use super::protocol::{RankReport, RunOrder, WireOutput};
use super::Team;
use crate::experiment::{Experiment, WorkloadSpec};
use crate::measure::layers::{Readings, Stack};
use crate::measure::telemetry::{DeviceProbe, Recorder, Recording, Watch};
use crate::measure::RunOutput;
use crate::process::StopFlag;
use crate::provision::journal::Journal;
use crate::store::write::RankRow;
use crate::workload::{RunContext, Workload, WorkloadKind};

/// What rank 0 records of a run carried out by every rank.
#[derive(Debug)]
pub struct Concluded {
    pub status: &'static str,
    pub error: Option<String>,
    pub output: Option<RunOutput>,
    /// A row per rank under MPI; none for a team of one.
    pub ranks: Vec<RankRow>,
    /// Rank 0's telemetry of the measured run, when it watched one.
    pub telemetry: Option<Recording>,
    /// The target's layer counters before and after the run, when read.
    pub layers: Option<Readings>,
}

/// What a rank brings to every run of a campaign.
pub struct Member<'a> {
    pub team: &'a Team,
    pub exp: &'a Experiment,
    pub stop: &'a StopFlag,
    /// Where a workload journals what it creates outside its directory.
    pub journal: &'a Journal,
    /// What rank 0's telemetry watches during the run (none elsewhere,
    /// or when telemetry is off).
    pub watch: Option<Watch>,
    /// The layers of the target's stack whose counters rank 0 reads
    /// before and after the run (none elsewhere, or when off).
    pub layers: Option<Arc<Stack>>,
}

/// The metric holding a rank's measured duration, for IOR's aggregate.
pub fn span_metric(kind: WorkloadKind) -> Option<&'static crate::metric::MetricDef> {
    kind.entry().span_metric
}

/// This rank's part of one run. `between` runs after every rank prepared
/// (rank 0: remount and drop caches). Returns the conclusion on rank 0.
pub fn take_part(
    m: &Member<'_>,
    order: &RunOrder,
    between: &mut dyn FnMut() -> Result<()>,
) -> Option<Concluded> {
    let team = m.team;
    let spec = &m.exp.workloads[order.workload];
    // With a shared directory only rank 0 lays out and removes the files.
    let owner = !spec.shared || team.is_root();
    let dir = run_dir(team, spec, order);
    let cx = RunContext {
        stop: m.stop.clone(),
        // Each rank its own random pattern.
        run_seed: order.run_seed ^ (team.rank() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        position: order.position,
        target: m.exp.targets[order.target].name.clone(),
        journal: m.journal.clone(),
        devices: m
            .watch
            .as_ref()
            .and_then(|w| DeviceProbe::of_chain(&w.chain)),
        // Other ranks read too: a phase's counters would count theirs.
        layers: m.layers.clone().filter(|_| !team.is_multi()),
    };
    let mut workload = spec.config.build();
    // The run's collection from the campaign's block tracer opens before
    // the files are laid out (a tracer of its own would take seconds to
    // attach: then too the run follows them as closely as without it, and
    // every rank passes the start barrier together); it counts only from
    // the run's first sample.
    let watch = m.watch.clone();
    let tracing = watch.as_ref().map(Watch::start_tracing);
    let prepared = owner
        .then(|| prepare(workload.as_mut(), &dir, order, team, &cx).err())
        .flatten();
    let mut report = RankReport {
        rank: team.rank(),
        host: team.host(team.rank()).to_string(),
        status: "skipped".into(),
        error: None,
        done_s: None,
        output: None,
    };
    let (mut output, mut telemetry, mut begun) = (None, None, None);
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
            // Read before the start barrier, after every rank prepared:
            // no rank reads the target between the two readings but the
            // run's.
            begun = m.layers.as_ref().map(|s| s.begin());
            team.barrier();
            let recorder = watch
                .zip(tracing)
                .map(|(w, t)| Recorder::start_traced(w.with_serving(workload.serving(&dir)), t));
            output = run(workload.as_mut(), &dir, &cx, &mut report);
            telemetry = recorder.map(Recorder::stop);
        }
        None => {}
    }
    // Every rank has reported: the run is over everywhere.
    let parts = collect(team, report, output);
    let layers = begun.map(|b| b.end());
    let cleaned = owner
        .then(|| cleanup(workload.as_mut(), &dir, team).err())
        .flatten();
    let cleanups: Vec<Option<String>> = team.gather(&cleaned.map(|e| format!("{e:#}")));
    team.is_root().then(|| Concluded {
        telemetry,
        layers,
        ..conclude(spec.kind, parts, cleanups, team.is_multi())
    })
}

/// Where this rank runs: a team of one in the workload's directory, which
/// lasts for the campaign (a PostgreSQL cluster kept across runs lives
/// there); under MPI a directory per rank, or one shared by all.
fn run_dir(team: &Team, spec: &WorkloadSpec, order: &RunOrder) -> PathBuf {
    match (team.is_multi(), spec.shared) {
        (false, _) => order.dir.clone(),
        (true, true) => order.dir.join("shared"),
        (true, false) => order.dir.join(format!("rank-{}", team.rank())),
    }
}

fn prepare(
    w: &mut dyn Workload,
    dir: &Path,
    order: &RunOrder,
    team: &Team,
    cx: &RunContext,
) -> Result<()> {
    if team.is_multi() {
        make_rank_dir(dir)?;
    }
    if let Some(dev) = &order.device {
        w.use_device(dev)?;
    }
    w.prepare(dir, cx).context("preparing the run")
}

/// A rank's directory (or the shared one), inside the run's directory
/// that rank 0 made on the target. On another host that directory is
/// there only if the target's filesystem is mounted there at the same
/// path: one made anew would be on that host's own disk, and the rank
/// would measure it instead of the target.
fn make_rank_dir(dir: &Path) -> Result<()> {
    let run_dir = dir.parent().unwrap_or(dir);
    if !run_dir.is_dir() {
        bail!(
            "{} does not exist on {}: the target's filesystem is not mounted there at the same path; mount it on every host (a `dir` target), or use a target storlab mounts on every host (`gluster`, `nfs`)",
            run_dir.display(),
            crate::host::hostname()
        );
    }
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            Err(e).with_context(|| format!("creating {}", dir.display()))
        }
        _ => Ok(()),
    }
}

/// The measured run, timed from the start barrier.
fn run(
    w: &mut dyn Workload,
    dir: &Path,
    cx: &RunContext,
    report: &mut RankReport,
) -> Option<RunOutput> {
    let t0 = Instant::now();
    let out = w.run(dir, cx);
    report.done_s = Some(t0.elapsed().as_secs_f64());
    match out {
        Ok(o) => {
            report.status = if cx.stop.is_raised() {
                "interrupted"
            } else {
                "ok"
            }
            .into();
            Some(o)
        }
        Err(e) => {
            report.status = "failed".into();
            report.error = Some(format!("{e:#}"));
            None
        }
    }
}

/// On rank 0 every rank's report with its output, in rank order; nothing
/// elsewhere. A team of one keeps its output as it is: nothing is encoded.
fn collect(
    team: &Team,
    mut report: RankReport,
    output: Option<RunOutput>,
) -> Vec<(RankReport, Option<RunOutput>)> {
    if !team.is_multi() {
        return vec![(report, output)];
    }
    match output.as_ref().map(WireOutput::from_output).transpose() {
        Ok(wire) => report.output = wire,
        Err(e) => {
            report.status = "failed".into();
            report.error = Some(format!("{e:#}"));
        }
    }
    team.gather(&report)
        .into_iter()
        .map(
            |mut r| match r.output.take().map(WireOutput::into_output).transpose() {
                Ok(o) => (r, o),
                Err(e) => {
                    r.status = "failed".into();
                    r.error = Some(format!("{e:#}"));
                    (r, None)
                }
            },
        )
        .collect()
}

fn cleanup(w: &mut dyn Workload, dir: &Path, team: &Team) -> Result<()> {
    w.cleanup(dir).context("cleaning up after the run")?;
    if !team.is_multi() {
        return Ok(()); // the workload's own directory goes with the working directory
    }
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", dir.display()))
        }
        _ => Ok(()),
    }
}

/// Rank 0's conclusion from every rank's report and cleanup. A team of one
/// keeps its output as is and stores no per-rank rows.
fn conclude(
    kind: WorkloadKind,
    parts: Vec<(RankReport, Option<RunOutput>)>,
    cleanups: Vec<Option<String>>,
    multi: bool,
) -> Concluded {
    let mut runs = Vec::new();
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    for ((mut r, output), cleaned) in parts.into_iter().zip(cleanups) {
        if let (Some(e), "ok" | "interrupted") = (&cleaned, r.status.as_str()) {
            r.status = "failed".into();
            r.error = Some(e.clone());
        }
        if let Some(e) = &r.error {
            errors.push(match multi {
                true => format!("rank {} on {}: {e}", r.rank, r.host),
                false => e.clone(),
            });
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
        if let (Some(output), Some(done_s), None) = (output, r.done_s, &r.error) {
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
    let output = match (status, multi) {
        ("failed", _) => None,
        (_, true) => Some(merge(&runs, span_metric(kind))),
        (_, false) => runs.pop().map(|r| r.output),
    };
    Concluded {
        status,
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        output,
        ranks: if multi { rows } else { Vec::new() },
        telemetry: None,
        layers: None,
    }
}
