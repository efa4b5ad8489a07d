//! Executes a plan: provisions targets, runs every planned run with its
//! per-run hooks (prepare, remount, cache drop, run, cleanup), records each
//! run the moment it ends, and tears everything down — on success, on
//! error, and when SIGINT/SIGTERM raise the stop flag.

use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::experiment::units::format_bytes;
use crate::experiment::{Experiment, Remount};
use crate::measure::{RunOutput, StopFlag};
use crate::plan::{plan, PlannedRun};
use crate::progress::Printer;
use crate::report::format::format_value;
use crate::store::write::{now_rfc3339, CampaignIds};
use crate::store::{RunRecord, Store};
use crate::target::facts::{path_facts, space};
use crate::target::journal::Journal;
use crate::target::tmpfs::is_root;
use crate::target::workdir::Workdir;
use crate::target::Target;
use crate::workload::RunContext;

/// How a campaign ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub campaign: i64,
    pub interrupted: bool,
    pub runs: usize,
    pub failed_runs: usize,
}

/// Provisioned targets and their working directories, torn down on drop.
struct Lab {
    journal: Journal,
    targets: Vec<Box<dyn Target>>,
    workdirs: Vec<Option<Workdir>>,
    provisioned: usize,
}

impl Lab {
    fn new(exp: &Experiment) -> Result<Lab> {
        let journal = Journal::for_campaign();
        let targets: Vec<Box<dyn Target>> = exp
            .targets
            .iter()
            .map(|t| t.kind.build(&t.name, &t.params, &journal))
            .collect();
        for (t, spec) in targets.iter().zip(&exp.targets) {
            t.preflight()
                .with_context(|| format!("target `{}`", spec.name))?;
        }
        Ok(Lab {
            journal,
            targets,
            workdirs: Vec::new(),
            provisioned: 0,
        })
    }

    fn provision(&mut self, exp: &Experiment) -> Result<()> {
        for (t, spec) in self.targets.iter_mut().zip(&exp.targets) {
            self.provisioned += 1; // a partial provision is torn down too
            t.provision()
                .with_context(|| format!("provisioning target `{}`", spec.name))?;
        }
        for (i, spec) in exp.targets.iter().enumerate() {
            check_space(exp, i, self.targets[i].root())?;
            let wd = Workdir::create(self.targets[i].root())
                .with_context(|| format!("target `{}`", spec.name))?;
            self.workdirs.push(Some(wd));
        }
        Ok(())
    }

    /// Removes working directories and undoes provisioning, in reverse order.
    fn teardown(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        for wd in self.workdirs.iter_mut().rev().filter_map(Option::take) {
            if let Err(e) = wd.remove() {
                errors.push(format!("{e:#}"));
            }
        }
        for t in self.targets[..self.provisioned].iter_mut().rev() {
            if let Err(e) = t.teardown() {
                errors.push(format!("{e:#}"));
            }
        }
        self.provisioned = 0;
        if errors.is_empty() {
            if let Err(e) = self.journal.finish() {
                errors.push(format!("{e:#}"));
            }
        } else {
            errors.push(format!(
                "what could not be undone stays in {}; fix the cause and run `storlab cleanup`",
                self.journal.path().display()
            ));
        }
        errors
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for e in self.teardown() {
            eprintln!("storlab: teardown: {e}");
        }
    }
}

/// Refuses to start when the workloads would not fit on the target.
fn check_space(exp: &Experiment, target: usize, root: &std::path::Path) -> Result<()> {
    let spec = &exp.targets[target];
    let needed: u64 = exp
        .workloads
        .iter()
        .filter(|w| w.runs_on(&spec.name))
        .map(|w| w.kind.bytes_needed(&w.params))
        .sum();
    if let Some((_, free)) = space(root) {
        if needed > free {
            bail!(
                "target `{}`: the workloads write up to {} but only {} is free at {}; {} is missing (lower `size`, or make room)",
                spec.name,
                format_bytes(needed as f64),
                format_bytes(free as f64),
                root.display(),
                format_bytes((needed - free) as f64)
            );
        }
    }
    Ok(())
}

/// Runs a whole campaign and records it in `store`.
pub fn run_campaign(
    exp: &Experiment,
    store: &mut Store,
    stop: &StopFlag,
    printer: &mut Printer,
) -> Result<Outcome> {
    let mut lab = Lab::new(exp)?;
    let runs = plan(exp);
    let ids = store.begin_campaign(exp, &crate::host::environment(), runs.len())?;
    if let Err(e) = lab.provision(exp) {
        store.finish_campaign(ids.campaign, "failed")?;
        return Err(e);
    }
    for (i, spec) in exp.targets.iter().enumerate() {
        let mut facts = path_facts(lab.targets[i].root());
        facts["kind"] = serde_json::json!(spec.kind.name());
        if let serde_json::Value::Object(extra) = lab.targets[i].facts() {
            for (k, v) in extra {
                facts[k] = v;
            }
        }
        store.set_target_facts(ids.targets[i], &facts)?;
    }
    let root = is_root();
    if exp.plan.drop_caches && !root {
        printer.note(
            "not running as root: page caches are not dropped between runs (recorded on every run)",
        );
    }
    let estimate = exp.estimate();
    printer.start(runs.len(), estimate);
    let mut outcome = Outcome {
        campaign: ids.campaign,
        interrupted: false,
        runs: 0,
        failed_runs: 0,
    };
    for pr in &runs {
        if stop.is_raised() {
            outcome.interrupted = true;
            break;
        }
        let label = label(exp, pr);
        printer.run_started(pr.position as usize, runs.len(), &label);
        let (record, out) = execute(exp, &mut lab, &ids, pr, stop, root);
        store.record_run(&record, out.as_ref())?;
        outcome.runs += 1;
        outcome.failed_runs += usize::from(record.status != "ok");
        let weight = exp.workloads[pr.workload]
            .kind
            .estimate(&exp.workloads[pr.workload].params);
        printer.run_finished(
            pr.position as usize,
            runs.len(),
            &label,
            &describe(exp, pr, &record, out.as_ref()),
            weight,
        );
    }
    outcome.interrupted |= stop.is_raised();
    printer.finish();
    let errors = lab.teardown();
    let status = if outcome.interrupted {
        "interrupted"
    } else {
        "finished"
    };
    store.finish_campaign(ids.campaign, status)?;
    if !errors.is_empty() {
        bail!(
            "campaign {} recorded, but teardown failed: {}",
            ids.campaign,
            errors.join("; ")
        );
    }
    Ok(outcome)
}

fn label(exp: &Experiment, pr: &PlannedRun) -> String {
    let kind = if pr.warmup { "warm-up" } else { "rep" };
    format!(
        "{} on {} ({kind} {})",
        exp.workloads[pr.workload].name, exp.targets[pr.target].name, pr.repetition
    )
}

fn describe(exp: &Experiment, pr: &PlannedRun, rec: &RunRecord, out: Option<&RunOutput>) -> String {
    if let Some(e) = &rec.error {
        return format!("FAILED: {e}");
    }
    let primary = exp.workloads[pr.workload].kind.primary();
    let value = out.and_then(|o| o.metric(primary.name));
    let text = value
        .map(|v| format_value(v, primary.unit))
        .unwrap_or_else(|| "no primary metric".into());
    if rec.status == "interrupted" {
        format!("interrupted ({text}, not used)")
    } else {
        text
    }
}

/// Executes one planned run; never fails: a failure is a recorded run.
fn execute(
    exp: &Experiment,
    lab: &mut Lab,
    ids: &CampaignIds,
    pr: &PlannedRun,
    stop: &StopFlag,
    root: bool,
) -> (RunRecord, Option<RunOutput>) {
    let mut rec = RunRecord {
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
    };
    let t0 = Instant::now();
    let result = run_hooks(exp, lab, pr, stop, root, &mut rec);
    rec.duration_s = t0.elapsed().as_secs_f64();
    match result {
        Ok(out) => {
            if stop.is_raised() {
                rec.status = "interrupted";
            }
            (rec, Some(out))
        }
        Err(e) => {
            rec.status = "failed";
            rec.error = Some(format!("{e:#}"));
            (rec, None)
        }
    }
}

fn run_hooks(
    exp: &Experiment,
    lab: &mut Lab,
    pr: &PlannedRun,
    stop: &StopFlag,
    root: bool,
    rec: &mut RunRecord,
) -> Result<RunOutput> {
    let spec = &exp.workloads[pr.workload];
    let workdir = lab.workdirs[pr.target]
        .as_ref()
        .context("the target's working directory is gone")?;
    let dir = workdir.for_workload(&spec.name)?;
    let mut workload = spec.kind.build(&spec.params);
    workload.prepare(&dir).context("preparing the run")?;
    if exp.plan.remount == Remount::BetweenRuns {
        lab.targets[pr.target]
            .remount()
            .context("remounting before the run")?;
        rec.remounted = true;
    }
    if exp.plan.drop_caches && root {
        rec.caches_dropped = crate::host::drop_caches().is_ok();
    }
    let cx = RunContext {
        stop: stop.clone(),
        run_seed: u64::from(pr.position) * 0x9E37 + u64::from(pr.round),
    };
    let out = workload.run(&dir, &cx);
    let cleaned = workload.cleanup(&dir).context("cleaning up after the run");
    let out = out?;
    cleaned?;
    Ok(out)
}
