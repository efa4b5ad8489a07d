//! Executes a plan: provisions targets, runs every planned run with its
//! per-run hooks (prepare, remount, cache drop, run, cleanup), records each
//! run the moment it ends, and tears everything down — on success, on
//! error, and when SIGINT/SIGTERM raise the stop flag. Under MPI this is
//! rank 0: it provisions and records, and each run is carried out by every
//! rank through [`crate::ranks::turn`].

use std::collections::HashMap;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::experiment::{sweep, Experiment, Remount};
use crate::host::{is_root, now_rfc3339};
use crate::measure::{RunOutput, StopFlag};
use crate::params::units::format_bytes;
use crate::plan::PlannedRun;
use crate::progress::Printer;
use crate::provision::facts::{path_facts, space};
use crate::provision::journal::Journal;
use crate::provision::workdir::Workdir;
use crate::ranks::protocol::{Instruction, RunOrder};
use crate::ranks::Team;
use crate::report::format::format_value;
use crate::store::write::CampaignIds;
use crate::store::{DoneRun, RankRow, RunRecord, Store};
use crate::targets::Target;
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
/// A target standing on another is provisioned after it, its image in that
/// one's working directory, and torn down before it.
struct Lab {
    journal: Journal,
    targets: Vec<Box<dyn Target>>,
    workdirs: Vec<Option<Workdir>>,
    /// What each target stands on (`on`), by index.
    under: Vec<Option<usize>>,
    /// Targets in the order they were (or began to be) provisioned.
    provisioned: Vec<usize>,
    /// Clients writing into each target at once (MPI ranks).
    clients: u64,
}

impl Lab {
    fn new(exp: &Experiment, clients: usize) -> Result<Lab> {
        let journal = Journal::for_campaign();
        let targets: Vec<Box<dyn Target>> = exp
            .targets
            .iter()
            .map(|t| t.config.build(&t.slug, &journal))
            .collect();
        for (t, spec) in targets.iter().zip(&exp.targets) {
            t.preflight()
                .with_context(|| format!("target `{}`", spec.name))?;
        }
        for w in &exp.workloads {
            w.config
                .preflight()
                .with_context(|| format!("workload `{}`", w.name))?;
        }
        Ok(Lab {
            journal,
            workdirs: exp.targets.iter().map(|_| None).collect(),
            under: exp.targets.iter().map(|t| t.on).collect(),
            targets,
            provisioned: Vec::new(),
            clients: clients as u64,
        })
    }

    /// Provisions every target in dependency order, each with its working
    /// directory, which holds the images of the targets standing on it.
    fn provision(&mut self, exp: &Experiment) -> Result<()> {
        for i in exp.provision_order() {
            let spec = &exp.targets[i];
            if let Some(c) = spec.on {
                let dir = self.workdirs[c]
                    .as_ref()
                    .map(|w| w.path().to_path_buf())
                    .context("the target below has no working directory")?;
                self.targets[i].stand_on(&dir)?;
            }
            self.provisioned.push(i); // a partial provision is torn down too
            self.targets[i]
                .provision()
                .with_context(|| format!("provisioning target `{}`", spec.name))?;
            check_space(exp, i, self.targets[i].root(), self.clients)?;
            let wd = Workdir::create(self.targets[i].root(), &spec.slug)
                .with_context(|| format!("target `{}`", spec.name))?;
            self.workdirs[i] = Some(wd);
        }
        Ok(())
    }

    /// Unmounts and mounts target `t` again. A target in a stack takes the
    /// whole stack with it: what stands on its bottom lets go (top first),
    /// the bottom is remounted, and each takes hold again (bottom first),
    /// so that no cache of the stack survives.
    fn remount(&mut self, t: usize) -> Result<()> {
        let mut bottom = t;
        while let Some(c) = self.under[bottom] {
            bottom = c;
        }
        let stack: Vec<usize> = self
            .provisioned
            .iter()
            .copied()
            .filter(|&i| self.stands_on(i, bottom))
            .collect();
        let mut released = Vec::new();
        let mut remounted = || -> Result<()> {
            for &i in stack.iter().rev() {
                self.targets[i].release()?;
                released.push(i);
            }
            self.targets[bottom].remount()
        };
        let result = remounted();
        // What was let go of is taken again even when the remount failed,
        // so that the next runs find the stack as it was.
        for &i in stack.iter().filter(|i| released.contains(i)) {
            if let Err(e) = self.targets[i].hold() {
                let e = e.context("taking hold again of what stands on the target");
                return Err(match result {
                    Err(first) => first.context(format!("{e:#}")),
                    Ok(()) => e,
                });
            }
        }
        result
    }

    /// Whether `i` stands on `bottom`, directly or through others.
    fn stands_on(&self, i: usize, bottom: usize) -> bool {
        let mut at = self.under[i];
        while let Some(c) = at {
            if c == bottom {
                return true;
            }
            at = self.under[c];
        }
        false
    }

    /// Removes working directories and undoes provisioning, in reverse
    /// order: what stands on a target goes first. A target whose upper
    /// floors could not be undone stays, for `storlab cleanup`, rather
    /// than be pulled from under them.
    fn teardown(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        let mut stuck = vec![false; self.targets.len()];
        while let Some(i) = self.provisioned.pop() {
            let above = (0..self.targets.len()).any(|j| stuck[j] && self.stands_on(j, i));
            if above {
                stuck[i] = true;
                continue;
            }
            let mut undo = || -> Result<()> {
                if let Some(wd) = self.workdirs[i].take() {
                    wd.remove()?;
                }
                self.targets[i].teardown()
            };
            if let Err(e) = undo() {
                stuck[i] = true;
                errors.push(format!("{e:#}"));
            }
        }
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

/// Refuses to start when the largest workload would not fit on the target.
/// Workloads remove their files after each run, so the largest one counts,
/// once per client (MPI rank) writing at the same time, plus 1/64 (at least
/// 1 MiB) for the filesystem's own metadata.
fn check_space(
    exp: &Experiment,
    target: usize,
    root: &std::path::Path,
    clients: u64,
) -> Result<()> {
    let spec = &exp.targets[target];
    let largest: u64 = exp
        .workloads
        .iter()
        .filter(|w| w.runs_on(spec))
        .map(|w| w.config.bytes_needed())
        .max()
        .unwrap_or(0)
        * clients.max(1);
    let needed = largest + (largest / 64).max(1 << 20);
    if let Some((_, free)) = space(root) {
        if needed > free {
            bail!(
                "target `{}`: a workload writes up to {} (with metadata, {}) but only {} is free at {}; {} is missing (lower `size`, or make room)",
                spec.name,
                format_bytes(largest as f64),
                format_bytes(needed as f64),
                format_bytes(free as f64),
                root.display(),
                format_bytes((needed - free) as f64)
            );
        }
    }
    Ok(())
}

/// Runs a new campaign and records it in `store`.
pub fn run_campaign(
    exp: &Experiment,
    store: &mut Store,
    stop: &StopFlag,
    printer: &mut Printer,
) -> Result<Outcome> {
    run_campaign_on(exp, store, stop, printer, &Team::single())
}

/// Runs a new campaign with every run on each of `team`'s ranks.
pub fn run_campaign_on(
    exp: &Experiment,
    store: &mut Store,
    stop: &StopFlag,
    printer: &mut Printer,
    team: &Team,
) -> Result<Outcome> {
    let lab = Lab::new(exp, team.size())?;
    let ids = store.begin_campaign(exp, &crate::host::environment(), planned_runs(exp))?;
    drive(exp, store, lab, ids, Vec::new(), stop, printer, team)
}

/// Continues a killed or interrupted campaign: provisions again and runs only
/// what is missing, so that it ends with exactly the planned runs.
pub fn resume_campaign(
    exp: &Experiment,
    store: &mut Store,
    ids: CampaignIds,
    stop: &StopFlag,
    printer: &mut Printer,
    team: &Team,
) -> Result<Outcome> {
    let lab = Lab::new(exp, team.size())?;
    let removed = store.reopen_campaign(ids.campaign)?;
    if removed > 0 {
        printer.note(&format!(
            "{removed} interrupted run(s) of campaign {} will run again",
            ids.campaign
        ));
    }
    let done = store.done_runs(ids.campaign)?;
    drive(exp, store, lab, ids, done, stop, printer, team)
}

/// Runs of the plan: exact for fixed repetitions, the upper bound for adaptive ones.
fn planned_runs(exp: &Experiment) -> usize {
    let pairs = crate::plan::pairs(exp).len();
    pairs * (exp.plan.warmup + exp.plan.repetitions.max()) as usize
}

#[allow(clippy::too_many_arguments)]
fn drive(
    exp: &Experiment,
    store: &mut Store,
    mut lab: Lab,
    ids: CampaignIds,
    done: Vec<DoneRun>,
    stop: &StopFlag,
    printer: &mut Printer,
    team: &Team,
) -> Result<Outcome> {
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
    printer.start(planned_runs(exp), exp.estimate());
    let mut c = Campaign::new(exp, store, &mut lab, ids, done, stop, printer, root, team);
    let result = c.run_all();
    let outcome = c.outcome.clone();
    printer.finish();
    let errors = lab.teardown();
    result?;
    let status = if outcome.interrupted {
        "interrupted"
    } else {
        "finished"
    };
    store.finish_campaign(outcome.campaign, status)?;
    if !errors.is_empty() {
        bail!(
            "campaign {} recorded, but teardown failed: {}",
            outcome.campaign,
            errors.join("; ")
        );
    }
    Ok(outcome)
}

type Key = (usize, usize, bool, u32);

/// The state of a campaign's round loop.
struct Campaign<'a> {
    exp: &'a Experiment,
    store: &'a mut Store,
    lab: &'a mut Lab,
    ids: CampaignIds,
    stop: &'a StopFlag,
    printer: &'a Printer,
    root: bool,
    /// The ranks every run is carried out on (one without MPI).
    team: &'a Team,
    /// Runs already recorded (resume): their primary value.
    done: HashMap<Key, Option<f64>>,
    /// Primary values of each pair's successful measured runs.
    values: HashMap<(usize, usize), Vec<f64>>,
    position: u32,
    started: Instant,
    prior_s: f64,
    total: usize,
    outcome: Outcome,
}

enum Halt {
    Interrupted,
    TimeUp,
}

impl<'a> Campaign<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        exp: &'a Experiment,
        store: &'a mut Store,
        lab: &'a mut Lab,
        ids: CampaignIds,
        done: Vec<DoneRun>,
        stop: &'a StopFlag,
        printer: &'a Printer,
        root: bool,
        team: &'a Team,
    ) -> Self {
        let index = |v: &[i64], id: i64| v.iter().position(|x| *x == id);
        let prior_s = done.iter().map(|d| d.duration_s).sum();
        let done = done
            .iter()
            .filter_map(|d| {
                Some((
                    (
                        index(&ids.targets, d.target)?,
                        index(&ids.workloads, d.workload)?,
                        d.warmup,
                        d.repetition,
                    ),
                    d.primary,
                ))
            })
            .collect();
        let outcome = Outcome {
            campaign: ids.campaign,
            interrupted: false,
            runs: 0,
            failed_runs: 0,
        };
        let total = planned_runs(exp);
        Campaign {
            exp,
            store,
            lab,
            ids,
            stop,
            printer,
            root,
            team,
            done,
            values: HashMap::new(),
            position: 0,
            started: Instant::now(),
            prior_s,
            total,
            outcome,
        }
    }

    fn time_up(&self) -> bool {
        self.exp
            .plan
            .max_time
            .is_some_and(|m| self.prior_s + self.started.elapsed().as_secs_f64() >= m.as_secs_f64())
    }

    fn run_all(&mut self) -> Result<()> {
        let groups = crate::plan::groups(self.exp);
        for (g, group) in groups.iter().enumerate() {
            match self.run_group(group)? {
                None => {}
                Some(Halt::Interrupted) => {
                    self.outcome.interrupted = true;
                    return Ok(());
                }
                Some(Halt::TimeUp) => {
                    for later in &groups[g + 1..] {
                        for &(t, w) in later {
                            self.store.set_pair_stop(&self.ids, t, w, "time", 0, None)?;
                        }
                    }
                    self.printer
                        .note("max_time reached: no further runs were started");
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Warm-up rounds, then measured rounds until every pair has stopped.
    fn run_group(&mut self, group: &[(usize, usize)]) -> Result<Option<Halt>> {
        let mut round = 0;
        for rep in 1..=self.exp.plan.warmup {
            round += 1;
            if let Some(h) = self.run_round(group, round, rep, true)? {
                return Ok(Some(h));
            }
        }
        let mut active: Vec<(usize, usize)> = group.to_vec();
        let mut rep = 0;
        while !active.is_empty() {
            rep += 1;
            round += 1;
            if let Some(h) = self.run_round(&active, round, rep, false)? {
                if matches!(h, Halt::TimeUp) {
                    for &(t, w) in &active {
                        let v = self.values.get(&(t, w)).cloned().unwrap_or_default();
                        self.store.set_pair_stop(
                            &self.ids,
                            t,
                            w,
                            "time",
                            v.len() as u32,
                            crate::rounds::ci_pct(&v),
                        )?;
                    }
                }
                return Ok(Some(h));
            }
            let mut still = Vec::new();
            for &(t, w) in &active {
                let v = self.values.get(&(t, w)).cloned().unwrap_or_default();
                match crate::rounds::decide(self.exp.plan.repetitions, rep, &v) {
                    Some(s) => {
                        self.store
                            .set_pair_stop(&self.ids, t, w, s.reason(), rep, s.ci_pct())?
                    }
                    None => still.push((t, w)),
                }
            }
            active = still;
        }
        Ok(None)
    }

    fn run_round(
        &mut self,
        pairs: &[(usize, usize)],
        round: u32,
        rep: u32,
        warmup: bool,
    ) -> Result<Option<Halt>> {
        for mut pr in crate::plan::round_runs(self.exp, pairs, round, rep, warmup) {
            pr.position = self.position;
            self.position += 1;
            let key = (pr.target, pr.workload, pr.warmup, pr.repetition);
            if let Some(&value) = self.done.get(&key) {
                self.note_value(&pr, value);
                continue;
            }
            if self.stop.is_raised() {
                return Ok(Some(Halt::Interrupted));
            }
            if self.time_up() {
                return Ok(Some(Halt::TimeUp));
            }
            self.one(&pr)?;
        }
        Ok(None)
    }

    fn note_value(&mut self, pr: &PlannedRun, value: Option<f64>) {
        if let (false, Some(v)) = (pr.warmup, value) {
            self.values
                .entry((pr.target, pr.workload))
                .or_default()
                .push(v);
        }
    }

    /// Executes and records one run.
    fn one(&mut self, pr: &PlannedRun) -> Result<()> {
        let exp = self.exp;
        let label = label(exp, pr);
        self.printer
            .run_started(pr.position as usize, self.total, &label);
        let (record, mut out, mut ranks) = if self.team.is_multi() {
            execute_on_team(
                exp, self.lab, &self.ids, pr, self.stop, self.root, self.team,
            )
        } else {
            let (record, out) = execute(exp, self.lab, &self.ids, pr, self.stop, self.root);
            (record, out, Vec::new())
        };
        let describe = describe(exp, pr, &record, out.as_ref());
        let primary = exp.workloads[pr.workload].kind.primary();
        let value = out.as_ref().and_then(|o| o.metric(primary));
        label_variant(exp, pr, out.as_mut(), &mut ranks);
        self.store.record_run_ranks(&record, out.as_ref(), &ranks)?;
        self.outcome.runs += 1;
        self.outcome.failed_runs += usize::from(record.status != "ok");
        if record.status == "ok" {
            self.note_value(pr, value);
        }
        let spec = &exp.workloads[pr.workload];
        self.printer.run_finished(
            pr.position as usize,
            self.total,
            &label,
            &describe,
            spec.config.estimate(),
        );
        Ok(())
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

fn describe(exp: &Experiment, pr: &PlannedRun, rec: &RunRecord, out: Option<&RunOutput>) -> String {
    if let Some(e) = &rec.error {
        return format!("FAILED: {e}");
    }
    let primary = exp.workloads[pr.workload].kind.primary();
    let value = out.and_then(|o| o.metric(primary));
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
    let mut rec = new_record(ids, pr, 1);
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
/// so that simulations of mock campaigns draw what a real one would.
pub fn run_seed(pr: &PlannedRun) -> u64 {
    u64::from(pr.position) * 0x9E37 + u64::from(pr.round)
}

/// Executes one planned run on every rank of `team`; never fails: a failure
/// on any rank is a recorded run. A rank interrupted by a signal stops the
/// campaign here too.
fn execute_on_team(
    exp: &Experiment,
    lab: &mut Lab,
    ids: &CampaignIds,
    pr: &PlannedRun,
    stop: &StopFlag,
    root: bool,
    team: &Team,
) -> (RunRecord, Option<RunOutput>, Vec<RankRow>) {
    let mut rec = new_record(ids, pr, team.size());
    let t0 = Instant::now();
    let spec = &exp.workloads[pr.workload];
    let dir = lab.workdirs[pr.target]
        .as_ref()
        .context("the target's working directory is gone")
        .and_then(|w| w.for_workload(&spec.slug));
    let dir = match dir {
        Ok(d) => d,
        Err(e) => {
            rec.status = "failed";
            rec.error = Some(format!("{e:#}"));
            return (rec, None, Vec::new());
        }
    };
    let order = RunOrder {
        target: pr.target,
        workload: pr.workload,
        dir,
        run_seed: run_seed(pr),
        position: pr.position,
    };
    team.instruct(&Instruction::Run(order.clone()));
    let (mut remounted, mut dropped) = (false, false);
    let mut between = || -> Result<()> {
        if exp.plan.remount == Remount::BetweenRuns {
            lab.remount(pr.target)
                .context("remounting before the run")?;
            remounted = true;
        }
        if exp.plan.drop_caches && root {
            dropped = crate::host::drop_caches().is_ok();
        }
        Ok(())
    };
    let done = crate::ranks::turn::take_part(team, exp, &order, stop, &mut between)
        .expect("rank 0 concludes every run");
    rec.remounted = remounted;
    rec.caches_dropped = dropped;
    rec.duration_s = t0.elapsed().as_secs_f64();
    rec.status = done.status;
    rec.error = done.error;
    if rec.status == "interrupted" || (rec.status == "ok" && stop.is_raised()) {
        rec.status = "interrupted";
        stop.raise();
    }
    (rec, done.output, done.ranks)
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
    let dir = workdir.for_workload(&spec.slug)?;
    let mut workload = spec.config.build();
    workload.prepare(&dir).context("preparing the run")?;
    if exp.plan.remount == Remount::BetweenRuns {
        lab.remount(pr.target)
            .context("remounting before the run")?;
        rec.remounted = true;
    }
    if exp.plan.drop_caches && root {
        rec.caches_dropped = crate::host::drop_caches().is_ok();
    }
    let cx = RunContext {
        stop: stop.clone(),
        run_seed: run_seed(pr),
        position: pr.position,
        target: exp.targets[pr.target].name.clone(),
    };
    let out = workload.run(&dir, &cx);
    let cleaned = workload.cleanup(&dir).context("cleaning up after the run");
    let out = out?;
    cleaned?;
    Ok(out)
}
