//! What `run` refuses before it provisions anything, and why: a target
//! kind this host cannot make (no NFS client in the kernel, no zpool, no
//! gluster), a program a workload needs that is not installed, root that a
//! provisioning target needs, a target other MPI hosts cannot reach, more
//! memory or image space than the host has ([`super::capacity`]). One
//! judgement for both commands: `run` stops at it, `check` lists it, so
//! that a file `check` passes is one this host runs.

use anyhow::{anyhow, Error};

use crate::experiment::Experiment;
use crate::provision::journal::Journal;
use crate::ranks::Team;
use crate::targets::Target;

use super::clients::refuse_unreachable;

/// Every reason `run` would refuse `exp` on this host, for `targets` built
/// from it: each target's and each workload's, not only the first.
pub(super) fn judge(exp: &Experiment, targets: &[Box<dyn Target>], team: &Team) -> Vec<Error> {
    let mut out = Vec::new();
    if let Err(e) = refuse_unreachable(exp, targets, team) {
        out.push(e);
    }
    for (t, spec) in targets.iter().zip(&exp.targets) {
        if let Err(e) = t.preflight() {
            out.push(e.context(format!("target `{}`", spec.name)));
        }
    }
    for w in &exp.workloads {
        if let Err(e) = w.config.preflight() {
            out.push(e.context(format!("workload `{}`", w.name)));
        }
    }
    let here = (0..team.size())
        .filter(|&r| team.host(r) == team.host(team.rank()))
        .count();
    out.extend(super::footprint::refusals(
        exp,
        team.size() as u64,
        here as u64,
    ));
    out
}

/// What `run` would refuse, judged without provisioning anything: the
/// targets are built against a journal that nothing is written to (their
/// preflight only looks).
pub fn refusals(exp: &Experiment) -> Vec<Error> {
    let journal = Journal::at(
        std::env::temp_dir().join("storlab-check-unused.journal"),
        crate::targets::RESOURCES,
    );
    let targets: Vec<Box<dyn Target>> = exp
        .targets
        .iter()
        .map(|t| t.config.build(&t.slug, &journal))
        .collect();
    judge(exp, &targets, &Team::single())
}

/// The refusals as `run` reports them: all of them, in one error.
pub fn refuse(all: Vec<Error>) -> anyhow::Result<()> {
    match all.len() {
        0 => Ok(()),
        1 => Err(all.into_iter().next().expect("one refusal")),
        n => Err(anyhow!(
            "{n} reasons not to run here: {}",
            all.iter()
                .map(|e| format!("{e:#}"))
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
}
