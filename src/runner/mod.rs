//! Executes a plan: provisions targets ([`lab`]), runs every planned run
//! through the one run lifecycle ([`conduct`], then [`crate::ranks::turn`]
//! on every rank — a plain run is a team of one), records each run the
//! moment it ends, and tears everything down — on success, on error, and
//! when SIGINT/SIGTERM raise the stop flag. Under MPI this is rank 0: it
//! provisions and records, and each run is carried out by every rank.

mod clients;
mod conduct;
mod footprint;
mod lab;
mod preflight;
pub mod roots;
mod search;
mod vigil;

pub use conduct::run_seed;
pub use preflight::{refusals, refuse};

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Result};

use crate::experiment::Experiment;
use crate::host::is_root;
use crate::plan::PlannedRun;
use crate::process::StopFlag;
use crate::progress::Printer;
use crate::provision::facts::path_facts;
use crate::ranks::Team;
use crate::stats::RoundValue;
use crate::store::write::CampaignIds;
use crate::store::{DoneRun, Store};
use lab::Lab;

/// How a campaign ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub campaign: i64,
    pub interrupted: bool,
    /// `max_time` stopped it before its plan was done.
    pub timed_out: bool,
    pub runs: usize,
    pub failed_runs: usize,
}

/// What a campaign runs with: the experiment, the store it records into,
/// the flag that stops it, where it reports progress, and the ranks that
/// carry out each run (one without MPI).
pub struct Session<'a> {
    pub exp: &'a Experiment,
    pub store: &'a mut Store,
    pub stop: &'a StopFlag,
    pub printer: &'a mut Printer,
    pub team: &'a Team,
    /// The user's `--tag KEY=VALUE`, recorded with a new campaign.
    pub tags: &'a [(String, String)],
    /// For `storlab replicate`: the replica the new campaign is.
    pub replica: Option<&'a crate::store::Replica>,
}

/// Runs a new campaign and records it in the session's store.
pub fn run_campaign(s: Session<'_>) -> Result<Outcome> {
    search::refuse_under_mpi(s.exp, s.team)?;
    let lab = Lab::new(s.exp, s.team)?;
    let ids = s
        .store
        .begin_campaign(s.exp, &crate::host::environment(), planned_runs(s.exp))?;
    let provenance = crate::provenance::collect(s.exp, s.tags);
    s.store.record_provenance(ids.campaign, &provenance)?;
    if let Some(replica) = s.replica {
        s.store.record_replica(ids.campaign, replica)?;
    }
    drive(s, lab, ids, Vec::new())
}

/// Continues a killed or interrupted campaign: provisions again and runs only
/// what is missing, so that it ends with exactly the planned runs. Fails
/// while another process still runs it.
pub fn resume_campaign(s: Session<'_>, ids: CampaignIds) -> Result<Outcome> {
    s.store.lock_campaign(ids.campaign)?;
    search::refuse_under_mpi(s.exp, s.team)?;
    let lab = Lab::new(s.exp, s.team)?;
    let removed = s.store.reopen_campaign(ids.campaign)?;
    if removed > 0 {
        s.printer.note(&format!(
            "{removed} interrupted run(s) of campaign {} will run again",
            ids.campaign
        ));
    }
    let done = s
        .store
        .done_runs_with(ids.campaign, &search::figures(s.exp))?;
    drive(s, lab, ids, done)
}

/// How many of the store's newest finished campaigns the ETA learns from.
pub const PAST_CAMPAIGNS: usize = 200;

/// Whether the plan decides its rounds as it goes (until decided,
/// until_ci) rather than counting them out.
fn plan_decides(exp: &Experiment) -> bool {
    !matches!(
        exp.plan.repetitions,
        crate::experiment::Repetitions::Fixed(_)
    )
}

/// Runs of the plan: exact for fixed repetitions, the upper bound for
/// adaptive ones and capacity searches.
fn planned_runs(exp: &Experiment) -> usize {
    let pairs = crate::plan::pairs(exp).len();
    let per_pair = (exp.plan.warmup + exp.plan.repetitions.max()) as usize;
    pairs * per_pair + search::planned_probes(exp) * per_pair
}

fn drive<'a>(
    s: Session<'a>,
    mut lab: Lab<'a>,
    ids: CampaignIds,
    done: Vec<DoneRun>,
) -> Result<Outcome> {
    if let Err(e) = s
        .store
        .reserve_spool(ids.campaign)
        .and_then(|()| lab.provision(s.exp))
    {
        if !s.stop.is_raised() {
            s.store.finish_campaign(ids.campaign, "failed")?;
            return Err(e);
        }
        // A signal cut a provisioning command short: what was provisioned
        // is undone and the campaign can be resumed.
        s.printer
            .note(&format!("interrupted while provisioning: {e:#}"));
        return end_interrupted(s.store, lab, ids.campaign);
    }
    record_facts(s.exp, s.store, &lab, &ids)?;
    let root = is_root();
    if s.exp.plan.drop_caches && !root {
        s.printer.note(
            "not running as root: page caches are not dropped between runs (recorded on every run)",
        );
    }
    let past = s.store.past_timings(PAST_CAMPAIGNS).unwrap_or_default();
    let load = crate::estimate::Load::now();
    let estimate = crate::estimate::Estimate::of(s.exp, &past, root, load);
    if let Some(note) = estimate.left_out_note() {
        s.printer.note(&note);
    }
    let decides = plan_decides(s.exp);
    // Runs recorded before a resume count against max_time.
    let prior: f64 = done.iter().map(|d| d.duration_s).sum();
    let rounds_end = (s.exp.plan.max_time)
        .filter(|_| decides)
        .map(|m| m.saturating_sub(crate::params::units::saturating_secs(prior)));
    s.printer.start(planned_runs(s.exp), &estimate, rounds_end);
    let mut c = Campaign::new(s, &mut lab, ids, done, root);
    let result = c.run_all();
    let (outcome, store, printer) = (c.outcome.clone(), c.s.store, c.s.printer);
    printer.finish();
    let errors = lab.teardown();
    result?;
    let status = if outcome.interrupted {
        "interrupted"
    } else {
        "finished"
    };
    if !outcome.interrupted && !outcome.timed_out && decides {
        store.planned_as_run(outcome.campaign)?;
    }
    store.finish_campaign(outcome.campaign, status)?;
    store.release_spool();
    if !errors.is_empty() {
        bail!(
            "campaign {} recorded, but teardown failed: {}",
            outcome.campaign,
            errors.join("; ")
        );
    }
    Ok(outcome)
}

/// Tears down and records a campaign interrupted before its first run.
fn end_interrupted(store: &mut Store, mut lab: Lab, campaign: i64) -> Result<Outcome> {
    let errors = lab.teardown();
    store.finish_campaign(campaign, "interrupted")?;
    store.release_spool();
    if !errors.is_empty() {
        bail!(
            "campaign {campaign} recorded, but teardown failed: {}",
            errors.join("; ")
        );
    }
    Ok(Outcome {
        campaign,
        interrupted: true,
        timed_out: false,
        runs: 0,
        failed_runs: 0,
    })
}

/// Each target's facts, once it is provisioned.
fn record_facts(
    exp: &Experiment,
    store: &mut Store,
    lab: &Lab<'_>,
    ids: &CampaignIds,
) -> Result<()> {
    for (i, spec) in exp.targets.iter().enumerate() {
        let mut facts = match lab.targets[i].device() {
            None => path_facts(lab.targets[i].root()),
            Some(_) => serde_json::json!({}),
        };
        facts["kind"] = serde_json::json!(spec.kind.name());
        if let serde_json::Value::Object(extra) = lab.targets[i].facts() {
            for (k, v) in extra {
                facts[k] = v;
            }
        }
        store.set_target_facts(ids.targets[i], &facts)?;
    }
    Ok(())
}

/// A run's place by row ids: target, workload, warm-up, repetition.
type Key = (i64, i64, bool, u32);

/// The state of a campaign's round loop.
struct Campaign<'a, 'l> {
    s: Session<'a>,
    /// The experiment, with the probes of its capacity searches added as
    /// they are made.
    exp: Arc<Experiment>,
    lab: &'l mut Lab<'a>,
    ids: CampaignIds,
    root: bool,
    /// Runs already recorded (resume): their primary value.
    done: HashMap<Key, DoneRun>,
    /// Each probe pair's runs' margins past its search's target.
    margins: HashMap<(usize, usize), Vec<f64>>,
    /// Primary values of each pair's successful measured runs, with their
    /// rounds: what the plan's sequencer decides from.
    values: HashMap<(usize, usize), Vec<RoundValue>>,
    position: u32,
    /// Each pair's last measured run's duration, in seconds: what the
    /// next round is expected to take.
    last_s: HashMap<(usize, usize), f64>,
    started: Instant,
    prior_s: f64,
    total: usize,
    outcome: Outcome,
}

enum Halt {
    Interrupted,
    TimeUp,
}

impl<'a, 'l> Campaign<'a, 'l> {
    fn new(
        s: Session<'a>,
        lab: &'l mut Lab<'a>,
        ids: CampaignIds,
        done: Vec<DoneRun>,
        root: bool,
    ) -> Self {
        let prior_s = done.iter().map(|d| d.duration_s).sum();
        let done = done
            .into_iter()
            .map(|d| ((d.target, d.workload, d.warmup, d.repetition), d))
            .collect();
        let exp = Arc::new(s.exp.clone());
        let mut ids = ids;
        // Probes are added to the experiment again as the searches replay.
        ids.workloads.truncate(exp.workloads.len());
        let outcome = Outcome {
            campaign: ids.campaign,
            interrupted: false,
            timed_out: false,
            runs: 0,
            failed_runs: 0,
        };
        let total = planned_runs(s.exp);
        Campaign {
            exp,
            s,
            lab,
            ids,
            root,
            done,
            margins: HashMap::new(),
            values: HashMap::new(),
            position: 0,
            last_s: HashMap::new(),
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

    /// Whether a measured round of `pairs` would end past `max_time`, as
    /// long as each pair's last run took: a round cut short leaves runs
    /// that no other target's run pairs with. A pair without a run yet
    /// counts nothing (the first round always starts).
    fn round_overruns(&self, pairs: &[(usize, usize)]) -> bool {
        let round: f64 = pairs.iter().filter_map(|p| self.last_s.get(p)).sum();
        self.s.exp.plan.max_time.is_some_and(|m| {
            self.prior_s + self.started.elapsed().as_secs_f64() + round > m.as_secs_f64()
        })
    }

    fn run_all(&mut self) -> Result<()> {
        let groups = crate::plan::groups(&self.exp);
        let searches = crate::plan::searches(&self.exp);
        let all = groups.iter().map(|g| (g, false));
        let all: Vec<_> = all.chain(searches.iter().map(|g| (g, true))).collect();
        for (g, &(group, search)) in all.iter().enumerate() {
            let halt = match search {
                false => self.run_group(group)?,
                true => self.run_search(group)?,
            };
            match halt {
                None => {}
                Some(Halt::Interrupted) => {
                    self.outcome.interrupted = true;
                    return Ok(());
                }
                Some(Halt::TimeUp) => {
                    self.outcome.timed_out = true;
                    for (later, _) in &all[g + 1..] {
                        for &(t, w) in *later {
                            self.s
                                .store
                                .set_pair_stop(&self.ids, t, w, "time", 0, None)?;
                        }
                    }
                    self.s
                        .printer
                        .note("max_time reached: no further runs were started");
                    return Ok(());
                }
            }
        }
        // Interrupted in its last run: interrupted all the same, and resumable.
        self.outcome.interrupted = self.s.stop.is_raised();
        Ok(())
    }

    /// Warm-up rounds, then the measured rounds the plan's sequencer asks
    /// for ([`crate::rounds`]) until it asks for none.
    fn run_group(&mut self, group: &[(usize, usize)]) -> Result<Option<Halt>> {
        let mut round = 0;
        for rep in 1..=self.exp.plan.warmup {
            round += 1;
            if let Some(h) = self.run_round(group, round, rep, true)? {
                return Ok(Some(h));
            }
        }
        let exp = Arc::clone(&self.exp);
        let mut sequencer = crate::rounds::for_plan(&exp, group);
        let mut rep = 0;
        loop {
            let next = sequencer.next(&crate::rounds::Seen {
                rounds: rep,
                values: &self.values,
            });
            for ((t, w), stop) in next.stopped {
                self.s
                    .store
                    .set_pair_stop(&self.ids, t, w, stop.reason(), rep, stop.ci_pct())?;
                // Decided: the time left drops the rounds it may have had.
                self.s.printer.pair_done((t, w));
            }
            if next.run.is_empty() {
                return Ok(None);
            }
            if self.round_overruns(&next.run) {
                self.stopped_on_time(&next.run)?;
                return Ok(Some(Halt::TimeUp));
            }
            rep += 1;
            round += 1;
            if let Some(h) = self.run_round(&next.run, round, rep, false)? {
                if matches!(h, Halt::TimeUp) {
                    self.stopped_on_time(&next.run)?;
                }
                return Ok(Some(h));
            }
        }
    }

    /// Records that `pairs` stopped because `max_time` was reached.
    fn stopped_on_time(&mut self, pairs: &[(usize, usize)]) -> Result<()> {
        for &(t, w) in pairs {
            let v: Vec<f64> = self
                .values
                .get(&(t, w))
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .map(|r| r.value)
                .collect();
            self.s.store.set_pair_stop(
                &self.ids,
                t,
                w,
                "time",
                v.len() as u32,
                crate::rounds::ci_pct(&v),
            )?;
        }
        Ok(())
    }

    fn run_round(
        &mut self,
        pairs: &[(usize, usize)],
        round: u32,
        rep: u32,
        warmup: bool,
    ) -> Result<Option<Halt>> {
        let exp = Arc::clone(&self.exp);
        for mut pr in crate::plan::round_runs(&exp, pairs, round, rep, warmup) {
            pr.position = self.position;
            self.position += 1;
            let key = (
                self.ids.targets[pr.target],
                self.ids.workloads[pr.workload],
                pr.warmup,
                pr.repetition,
            );
            if let Some(done) = self.done.remove(&key) {
                self.s.printer.run_skipped(search::paced(&exp, &pr));
                self.note_value(&pr, done.primary);
                self.note_margin(&pr, &done);
                continue;
            }
            if self.s.stop.is_raised() {
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
        if let (false, Some(value)) = (pr.warmup, value) {
            self.values
                .entry((pr.target, pr.workload))
                .or_default()
                .push(RoundValue {
                    round: pr.round,
                    value,
                });
        }
    }
}
