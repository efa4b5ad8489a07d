//! Rank 0's part in every run, MPI or not: check that the target is still
//! the filesystem provisioned, order the run, remount and drop caches
//! between the ranks' preparation and their start, take part in it like
//! every rank ([`crate::ranks::turn::take_part`]), check the target again,
//! decide the run's status and record it. A run stopped by SIGINT/SIGTERM
//! is `interrupted` whatever step it was in — preparing, running or
//! cleaning up — so that `--resume` runs it again.

use std::path::Path;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};

use super::vigil::Vigil;
use super::Campaign;
use crate::experiment::{sweep, Experiment, Remount};
use crate::host::now_rfc3339;
use crate::measure::telemetry;
use crate::measure::RunOutput;
use crate::plan::PlannedRun;
use crate::ranks::protocol::{Instruction, RunOrder};
use crate::ranks::turn::{take_part, Member};
use crate::report::format::format_value;
use crate::store::write::CampaignIds;
use crate::store::{run_text, RankRow, RunRecord};
use crate::targets::health::degraded;
use crate::warning::{Warning, WarningKind};

/// A run as rank 0 concluded it.
struct Conducted {
    record: RunRecord,
    output: Option<RunOutput>,
    ranks: Vec<RankRow>,
}

impl Campaign<'_, '_> {
    /// Executes and records one run.
    pub(super) fn one(&mut self, pr: &PlannedRun) -> Result<()> {
        let exp = std::sync::Arc::clone(&self.exp);
        let exp = &*exp;
        let label = label(exp, pr);
        self.s
            .printer
            .run_started(pr.position as usize, self.total, &label);
        let mut run = self.execute(pr);
        let value = run
            .output
            .as_ref()
            .and_then(|o| primary_value(exp, pr.workload, o))
            .map(|(v, _)| v);
        let margin = super::search::margin_of(exp, pr.workload, run.output.as_ref());
        let describe = describe(exp, pr, &run.record, run.output.as_ref());
        label_variant(exp, pr, run.output.as_mut(), &mut run.ranks);
        let stored = self
            .s
            .store
            .record_run_ranks(&run.record, run.output.as_ref(), &run.ranks);
        if let Err(e) = stored {
            return Err(self.keep_uncommitted(e, &run, &label));
        }
        let record = run.record;
        self.outcome.runs += 1;
        self.outcome.failed_runs += usize::from(record.status == "failed");
        if record.status == "ok" {
            self.note_value(pr, value);
        }
        if !pr.warmup {
            self.last_s
                .insert((pr.target, pr.workload), record.duration_s);
        }
        if record.status != "interrupted" {
            self.push_margin(pr, margin);
        }
        self.s.printer.run_finished(
            pr.position as usize,
            self.total,
            &label,
            &describe,
            super::search::paced(exp, pr),
        );
        Ok(())
    }

    /// A run the store did not take: printed in full on stderr and written
    /// into the space reserved beside the store, which the next storlab
    /// command commits. The campaign stops here (it can be resumed).
    fn keep_uncommitted(
        &mut self,
        e: anyhow::Error,
        run: &Conducted,
        label: &str,
    ) -> anyhow::Error {
        let text = run_text(&run.record, run.output.as_ref(), &run.ranks)
            .unwrap_or_else(|x| format!("(it cannot be written out either: {x:#})"));
        errln!("storlab: the store could not take run `{label}`: {e:#}");
        errln!("storlab: the run, in full:\n{text}");
        let id = self.ids.campaign;
        let db = self.s.store.path().display().to_string();
        match self.s.store.spool_run(&text) {
            Ok(path) => anyhow!(
                "the store {db} could not take a run ({e:#}); the run is printed above and kept in {}, which the next storlab command on this store commits; make room, then continue with `storlab run --resume {id}`",
                path.display()
            ),
            Err(se) => anyhow!(
                "the store {db} could not take a run ({e:#}), and it could not be kept beside the store either ({se:#}); the run is printed above in full; make room, then continue with `storlab run --resume {id}`"
            ),
        }
    }

    /// Carries out one planned run on every rank; never fails: a failure
    /// anywhere is a recorded run.
    fn execute(&mut self, pr: &PlannedRun) -> Conducted {
        let exp = std::sync::Arc::clone(&self.exp);
        let (exp, team, stop) = (&*exp, self.s.team, self.s.stop);
        let mut record = new_record(&self.ids, pr, team.size());
        let t0 = Instant::now();
        let target = &exp.targets[pr.target].name;
        let order = self.lab.verify(pr.target, target).and_then(|()| {
            let dir = self.lab.workdirs[pr.target]
                .as_ref()
                .context("the target's working directory is gone")?
                .for_workload(&exp.workloads[exp.files_of(pr.workload)].slug)?;
            let device = self.lab.targets[pr.target].device().map(Path::to_path_buf);
            if let (Some(dev), true) = (&device, team.is_multi()) {
                bail!(
                    "a block target runs on one process: the ranks of an MPI run cannot share the raw device {}",
                    dev.display()
                );
            }
            Ok(RunOrder {
                target: pr.target,
                workload: pr.workload,
                dir,
                run_seed: run_seed(pr) ^ replica_seed(exp.plan.replica),
                position: pr.position,
                device,
            })
        });
        let order = match order {
            Ok(o) => o,
            Err(e) => {
                record.status = "failed";
                record.error = Some(format!("{e:#}"));
                return Conducted {
                    record,
                    output: None,
                    ranks: Vec::new(),
                };
            }
        };
        team.instruct(&Instruction::Run(order.clone()));
        let (mut remounted, mut dropped) = (false, false);
        let serving = self.lab.serving(pr.target);
        let (lab, root) = (&mut *self.lab, self.root);
        // The target's state as the run begins: after a remount, which
        // restarts what a remount restarts (a VM disk's daemon).
        let mut before = None;
        let journal = lab.journal.clone();
        let watch = lab.watch(pr.target);
        let layers = lab.layers(pr.target);
        let mut between = || -> Result<()> {
            if exp.plan.remount == Remount::BetweenRuns {
                lab.remount(pr.target)?;
                remounted = true;
            }
            if exp.plan.drop_caches && root {
                dropped = crate::host::drop_caches().is_ok();
            }
            before = Some(lab.targets[pr.target].health());
            Ok(())
        };
        let member = Member {
            team,
            exp,
            stop,
            journal: &journal,
            watch,
            layers,
        };
        let vigil = Vigil::start(serving);
        let done = take_part(&member, &order, &mut between).expect("rank 0 concludes every run");
        let fault = vigil.end();
        record.remounted = remounted;
        record.caches_dropped = dropped;
        record.duration_s = t0.elapsed().as_secs_f64();
        record.status = done.status;
        record.error = done.error;
        let mut output = done.output;
        // The layers first: the telemetry's checks read them.
        match (output.as_mut(), &done.layers) {
            (Some(out), Some(readings)) => crate::measure::layers::conclude(readings, out),
            (Some(out), None) => crate::measure::layers::figures::unread(out),
            (None, _) => {}
        }
        if let (Some(out), Some(recording)) = (output.as_mut(), &done.telemetry) {
            telemetry::conclude(recording, out);
        }
        let after = self.lab.targets[pr.target].health();
        let before = before.unwrap_or_default();
        if let (Some(out), Some(w)) = (output.as_mut(), degraded(&before, &after)) {
            out.warnings
                .push(Warning::new(WarningKind::DegradedTarget, w));
        }
        // A daemon it relied on died or stopped: it did not measure the
        // target asked for, and what it said (an I/O error) follows from
        // it. The target's own daemon degrades it; a server the workload
        // started for this run fails this run alone.
        if let Some(fault) = fault {
            let why = if fault.degrades {
                self.lab.degrade(pr.target, target, &fault.words)
            } else {
                fault.words
            };
            record.error = Some(match record.error.take() {
                Some(e) => format!("{why} (the run: {e})"),
                None => why,
            });
            record.status = "failed";
            output = None;
        }
        // A target that went away during the run was not what it measured.
        else if let Err(e) = self.lab.verify(pr.target, target) {
            record.status = "failed";
            record.error = Some(format!("{e:#}"));
            output = None;
        }
        // Any rank's interrupt stops the campaign; and whatever a run's
        // steps said, one cut short by a signal is interrupted.
        if record.status == "interrupted" {
            stop.raise();
        }
        if stop.is_raised() {
            record.status = "interrupted";
        }
        Conducted {
            record,
            output,
            ranks: done.ranks,
        }
    }
}

/// A variant's swept values (its target's, then its workload's) become
/// labels on every metric, series and histogram it records, its ranks'
/// metrics too.
fn label_variant(
    exp: &Experiment,
    pr: &PlannedRun,
    out: Option<&mut RunOutput>,
    ranks: &mut [RankRow],
) {
    let target = sweep::labels(&exp.targets[pr.target].factors);
    let labels = target.with_all(&sweep::labels(&exp.workloads[pr.workload].factors));
    if labels.is_empty() {
        return;
    }
    if let Some(out) = out {
        out.add_labels(&labels);
    }
    for row in ranks {
        for m in &mut row.metrics {
            m.labels = std::mem::take(&mut m.labels).with_all(&labels);
        }
    }
}

fn label(exp: &Experiment, pr: &PlannedRun) -> String {
    let kind = if pr.warmup { "warm-up" } else { "rep" };
    format!(
        "{} on {} ({kind} {})",
        exp.workloads[pr.workload].name, exp.targets[pr.target].name, pr.repetition
    )
}

/// The run's figure of the workload's primary metric, as the file asked
/// for it: a matrix's `primary_test` geometric mean (`reread 290.3
/// MiB/s`), else the kind's primary over the whole run; with its text.
pub(super) fn primary_value(exp: &Experiment, w: usize, out: &RunOutput) -> Option<(f64, String)> {
    let wl = &exp.workloads[w];
    let primary = wl.kind.primary();
    let labels = wl.config.verdict_labels();
    if labels.is_empty() {
        let v = out.metric(primary)?;
        return Some((v, format_value(v, primary.unit)));
    }
    let v = out.labelled(primary, &labels)?;
    let part: Vec<&str> = labels.iter().map(|(_, v)| v).collect();
    Some((
        v,
        format!("{} {}", part.join(" "), format_value(v, primary.unit)),
    ))
}

fn describe(exp: &Experiment, pr: &PlannedRun, rec: &RunRecord, out: Option<&RunOutput>) -> String {
    let text = out
        .and_then(|o| primary_value(exp, pr.workload, o))
        .map(|(_, text)| text)
        .unwrap_or_else(|| "no primary metric".into());
    match (rec.status, &rec.error) {
        ("interrupted", Some(e)) => format!("interrupted ({e})"),
        ("interrupted", None) => format!("interrupted ({text}, not used)"),
        (_, Some(e)) => format!("FAILED: {e}"),
        _ => text,
    }
}

fn new_record(ids: &CampaignIds, pr: &PlannedRun, ranks: usize) -> RunRecord {
    RunRecord {
        campaign: ids.campaign,
        target: ids.targets[pr.target],
        workload: ids.workloads[pr.workload],
        repetition: pr.repetition,
        round: pr.round,
        position: pr.position,
        warmup: pr.warmup,
        status: "ok",
        error: None,
        started_at: now_rfc3339(),
        duration_s: 0.0,
        caches_dropped: false,
        remounted: false,
        ranks: ranks as u32,
    }
}

/// The seed a planned run's workload gets (`RunContext::run_seed`): public
/// so that simulations of mock campaigns draw what a real one would. A
/// replica's runs mix in [`replica_seed`].
pub fn run_seed(pr: &PlannedRun) -> u64 {
    u64::from(pr.position) * 0x9E37 + u64::from(pr.round)
}

/// What a replica's number adds to its runs' seeds (nothing for the first
/// campaign): a replica draws its own noise where a workload draws any (the
/// mock), as a real host would.
pub fn replica_seed(replica: u32) -> u64 {
    u64::from(replica).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::catalogue::GEOMEAN_BW_BYTES_PER_S;
    use crate::workload::matrix::grid::{test_labels, Test};

    // Seed 004's example judges the re-reader (`primary_test = "reread"`);
    // its progress lines printed every run's mean over all tests (191.6
    // MiB/s for the first) and the adaptive plan counted that figure.
    #[test]
    fn a_run_is_described_by_the_primary_the_file_names() {
        let src = |primary: &str| {
            format!(
                "name = \"e\"\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"/tmp\"\n\
                 [[workload]]\nname = \"m\"\nkind = \"matrix\"\n{primary}"
            )
        };
        let out = RunOutput {
            metrics: vec![
                GEOMEAN_BW_BYTES_PER_S.value(100.0 * 1048576.0),
                GEOMEAN_BW_BYTES_PER_S.labelled(test_labels(Test::Reread), 300.0 * 1048576.0),
            ],
            ..RunOutput::default()
        };
        let named =
            crate::experiment::parse_experiment("e.toml", &src("primary_test = \"reread\"\n"))
                .unwrap();
        let (v, text) = primary_value(&named, 0, &out).unwrap();
        assert_eq!(
            (v, text.as_str()),
            (300.0 * 1048576.0, "reread 300.0 MiB/s")
        );
        let all = crate::experiment::parse_experiment("e.toml", &src("")).unwrap();
        let (v, text) = primary_value(&all, 0, &out).unwrap();
        assert_eq!((v, text.as_str()), (100.0 * 1048576.0, "100.0 MiB/s"));
    }
}
