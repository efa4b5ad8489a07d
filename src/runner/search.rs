//! A campaign's capacity searches ([`crate::search`]): each step asks
//! every target's search for its next rate, makes that probe (a variant
//! of the workload, added to the campaign's experiment and store as a
//! sweep's variant is), runs the step's probes as one group of the plan
//! — its warm-up, repetitions and order, adaptive or not, exactly as any
//! pair's — and judges each probe from its runs' margins past the target
//! ([`crate::stats::capacity`]). The search ends on each target when it
//! resolved, reached the grid's end, or the plan's `max_time` ran out;
//! the store records why beside the searched pair.

use std::sync::Arc;

use anyhow::{bail, Result};

use super::{Campaign, Halt};
use crate::experiment::capacity::Capacity;
use crate::experiment::Experiment;
use crate::measure::RunOutput;
use crate::plan::PlannedRun;
use crate::ranks::Team;
use crate::report::format::format_value;
use crate::search::{Search, Step};
use crate::stats::capacity::{margin, Probe};
use crate::store::DoneRun;

/// Refuses capacity searches under MPI: their probes are made as the
/// campaign runs, and the other ranks know only the experiment's own
/// workloads.
pub(super) fn refuse_under_mpi(exp: &Experiment, team: &Team) -> Result<()> {
    if team.is_multi() && !crate::plan::searches(exp).is_empty() {
        bail!("a capacity search runs on one process: its probes are made as the campaign runs, which MPI ranks cannot follow; run the experiment without mpirun, or drop `capacity` from its workloads");
    }
    Ok(())
}

/// The search of workload `w`, a probe's: its capacity and the
/// searched workload's index.
fn search_of(exp: &Experiment, w: usize) -> Option<(&Capacity, usize)> {
    let p = exp.workloads[w].probe_of.as_ref()?;
    let s = exp.workloads.iter().position(|x| x.name == p.search)?;
    Some((exp.workloads[s].capacity.as_ref()?, s))
}

/// The metrics a resumed campaign reads back for its searches: each
/// one's latency percentile and achieved rate.
pub(super) fn figures(exp: &Experiment) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for c in exp.workloads.iter().filter_map(|w| w.capacity.as_ref()) {
        let served = c.open_loop.served.map(|d| d.name);
        for name in [
            Some(c.latency.metric().name),
            Some(c.open_loop.achieved.name),
            served,
        ]
        .into_iter()
        .flatten()
        {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The pair whose pace a run counts towards: a probe's runs are its
/// search's.
pub(super) fn paced(exp: &Experiment, pr: &PlannedRun) -> (usize, usize) {
    match search_of(exp, pr.workload) {
        Some((_, s)) => (pr.target, s),
        None => (pr.target, pr.workload),
    }
}

/// The runs the searches may take at most (each target's most probes),
/// in units of one pair's runs.
pub(super) fn planned_probes(exp: &Experiment) -> usize {
    crate::plan::searches(exp)
        .iter()
        .flatten()
        .filter_map(|&(_, w)| exp.workloads[w].capacity.as_ref())
        .map(|c| c.max_probes() as usize)
        .sum()
}

/// How far past its search's target a run of probe `w` was; `None` for
/// a workload that is no probe.
pub(super) fn margin_of(exp: &Experiment, w: usize, out: Option<&RunOutput>) -> Option<f64> {
    let (c, _) = search_of(exp, w)?;
    let offered = exp.workloads[w].probe_of.as_ref()?.offered;
    let get = |def| out.and_then(|o| o.metric(def)).unwrap_or(f64::NAN);
    let served = c.open_loop.served.map(get);
    Some(judge(
        c,
        offered,
        (get(c.latency.metric()), get(c.open_loop.achieved)),
        served,
    ))
}

/// A run's margin from its (latency, achieved) figures.
fn judge(c: &Capacity, offered: f64, (latency, achieved): (f64, f64), served: Option<f64>) -> f64 {
    margin(
        latency,
        c.max.as_secs_f64() * 1e9,
        achieved,
        offered,
        served,
    )
}

impl Campaign<'_, '_> {
    /// Takes in the margin of a measured run of a probe.
    pub(super) fn push_margin(&mut self, pr: &PlannedRun, margin: Option<f64>) {
        if let (false, Some(m)) = (pr.warmup, margin) {
            self.margins
                .entry((pr.target, pr.workload))
                .or_default()
                .push(m);
        }
    }

    /// Takes in the margin of a run recorded before a resume.
    pub(super) fn note_margin(&mut self, pr: &PlannedRun, done: &DoneRun) {
        let exp = Arc::clone(&self.exp);
        let Some((c, _)) = search_of(&exp, pr.workload) else {
            return;
        };
        let get = |name: &str| {
            done.figures
                .iter()
                .find(|(n, _)| n == name)
                .map_or(f64::NAN, |x| x.1)
        };
        let margin = match done.failed {
            true => f64::INFINITY,
            false => judge(
                c,
                exp.workloads[pr.workload]
                    .probe_of
                    .as_ref()
                    .map_or(0.0, |p| p.offered),
                (get(c.latency.metric().name), get(c.open_loop.achieved.name)),
                c.open_loop.served.map(|d| get(d.name)),
            ),
        };
        self.push_margin(pr, Some(margin));
    }

    /// The search of workload `group[0].1` on each of the group's
    /// targets, step by step (module doc).
    pub(super) fn run_search(&mut self, group: &[(usize, usize)]) -> Result<Option<Halt>> {
        let w = group[0].1;
        let Some(c) = self.exp.workloads[w].capacity.clone() else {
            return Ok(None);
        };
        let mut searches: Vec<(usize, Search, bool)> = group
            .iter()
            .map(|&(t, _)| (t, Search::new(&c), false))
            .collect();
        loop {
            let mut step = Vec::new();
            for (i, (t, s, ended)) in searches.iter_mut().enumerate() {
                if *ended {
                    continue;
                }
                match s.next() {
                    Step::Probe(k) => step.push((i, *t, k)),
                    Step::Done(end) => {
                        *ended = true;
                        let probes = s.probed.len() as u32;
                        self.s
                            .store
                            .set_pair_stop(&self.ids, *t, w, end.reason(), probes, None)?;
                        self.s.printer.pair_done((*t, w));
                    }
                }
            }
            if step.is_empty() {
                return Ok(None);
            }
            let mut pairs = Vec::with_capacity(step.len());
            for &(i, t, k) in &step {
                pairs.push((t, self.probe(w, &c, k)?));
                let text = self.progress(&c, w, t, &searches[i].1, k);
                self.s.printer.step(&text);
            }
            if let Some(h) = self.run_group(&pairs)? {
                if matches!(h, Halt::TimeUp) {
                    for &(i, t, _) in &step {
                        let probes = searches[i].1.probed.len() as u32;
                        self.s
                            .store
                            .set_pair_stop(&self.ids, t, w, "time", probes, None)?;
                    }
                }
                return Ok(Some(h));
            }
            for (&(i, t, k), &(_, p)) in step.iter().zip(&pairs) {
                let probe = Probe {
                    rate: c.offered_at(k),
                    margins: self.margins.get(&(t, p)).cloned().unwrap_or_default(),
                };
                searches[i].1.record(k, probe.passes().unwrap_or(false));
            }
        }
    }

    /// The index of the probe of search `w` at grid point `k`: made,
    /// added to the experiment and recorded in the store the first time
    /// a target probes it (or found again when a resumed campaign
    /// replays its searches).
    fn probe(&mut self, w: usize, c: &Capacity, k: i64) -> Result<usize> {
        let spec = self.exp.workloads[w].probe(k).map_err(|(key, why)| {
            anyhow::anyhow!(
                "workload `{}`: the capacity search cannot set `{key}` to probe {}: {why}",
                self.exp.workloads[w].name,
                c.offered_at(k)
            )
        })?;
        if let Some(i) = self.exp.workloads.iter().position(|x| x.name == spec.name) {
            return Ok(i);
        }
        Arc::make_mut(&mut self.exp).workloads.push(spec);
        let i = self.exp.workloads.len() - 1;
        let id = self.s.store.add_workload(self.ids.campaign, &self.exp, i)?;
        self.ids.workloads.push(id);
        Ok(i)
    }

    /// What a step of target `t`'s search probes, and its bracket.
    fn progress(&self, c: &Capacity, w: usize, t: usize, s: &Search, k: i64) -> String {
        let unit = c.open_loop.achieved.unit;
        let rate = |k: i64| format_value(c.offered_at(k), unit);
        let mut bracket = Vec::new();
        if let Some(lo) = s.lo {
            bracket.push(format!("holds at {}", rate(lo)));
        }
        if let Some(hi) = s.hi {
            bracket.push(format!("fails at {}", rate(hi)));
        }
        let bracket = match bracket.is_empty() {
            true => String::new(),
            false => format!(" ({})", bracket.join(", ")),
        };
        format!(
            "capacity of {} on {}: probing {}{bracket}",
            self.exp.workloads[w].name,
            self.exp.targets[t].name,
            rate(k)
        )
    }
}
