//! A campaign's laboratory: its targets provisioned, a working directory
//! on each, and what each target was right after provisioning (its
//! [`Identity`]), so that a run never measures a filesystem that replaced
//! the target behind storlab's back; under MPI across hosts, the targets'
//! client mounts on the other hosts ([`super::clients`]). Everything is
//! journaled before it is created and torn down on drop, also on errors
//! and interrupts.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::experiment::Experiment;
use crate::params::units::format_bytes;
use crate::provision::facts::space;
use crate::provision::identity::Identity;
use crate::provision::journal::Journal;
use crate::provision::workdir::Workdir;
use crate::ranks::Team;
use crate::targets::Target;

use super::clients::{refuse_unreachable, Clients};

/// Provisioned targets and their working directories, torn down on drop.
pub(super) struct Lab<'t> {
    pub journal: Journal,
    team: &'t Team,
    /// The targets' mounts on the other hosts of an MPI job.
    clients: Clients,
    pub targets: Vec<Box<dyn Target>>,
    pub workdirs: Vec<Option<Workdir>>,
    /// What each target's root was after provisioning or its last remount.
    identities: Vec<Option<Identity>>,
    /// Why a target takes no more runs (it was lost), if it does not.
    lost: Vec<Option<String>>,
    provisioned: usize,
    /// Clients writing into each target at once (MPI ranks).
    writers: u64,
}

impl<'t> Lab<'t> {
    pub fn new(exp: &Experiment, team: &'t Team) -> Result<Lab<'t>> {
        let journal = Journal::for_campaign();
        let targets: Vec<Box<dyn Target>> = exp
            .targets
            .iter()
            .map(|t| t.config.build(&t.name, &journal))
            .collect();
        refuse_unreachable(exp, &targets, team)?;
        for (t, spec) in targets.iter().zip(&exp.targets) {
            t.preflight()
                .with_context(|| format!("target `{}`", spec.name))?;
        }
        for w in &exp.workloads {
            w.config
                .preflight()
                .with_context(|| format!("workload `{}`", w.name))?;
        }
        let n = targets.len();
        Ok(Lab {
            clients: Clients::new(&journal),
            journal,
            team,
            targets,
            workdirs: Vec::new(),
            identities: vec![None; n],
            lost: vec![None; n],
            provisioned: 0,
            writers: team.size() as u64,
        })
    }

    pub fn provision(&mut self, exp: &Experiment) -> Result<()> {
        let _phase = crate::provision::cmd::Provisioning::begin();
        for (t, spec) in self.targets.iter_mut().zip(&exp.targets) {
            self.provisioned += 1; // a partial provision is torn down too
            t.provision()
                .with_context(|| format!("provisioning target `{}`", spec.name))?;
        }
        for (i, spec) in exp.targets.iter().enumerate() {
            let root = self.targets[i].root();
            // A raw device's room is checked against its size by the io
            // workload; the working directory beside it holds no data.
            if self.targets[i].device().is_none() {
                check_space(exp, i, root, self.writers)?;
            }
            let wd = Workdir::create(root, &spec.name, &self.journal)
                .with_context(|| format!("target `{}`", spec.name))?;
            self.workdirs.push(Some(wd));
            self.identities[i] = Some(Identity::of(root)?);
        }
        self.clients.mount(&self.targets, self.team)
    }

    /// Fails, and stops target `t` for good, when its root is no longer the
    /// filesystem provisioned (unmounted or replaced behind storlab's back).
    pub fn verify(&mut self, t: usize, name: &str) -> Result<()> {
        if let Some(why) = &self.lost[t] {
            bail!("not run: {why}");
        }
        let Some(id) = &self.identities[t] else {
            return Ok(());
        };
        if let Err(e) = id.check() {
            let why = format!("target `{name}` was lost, so it takes no more runs: {e:#}");
            self.lost[t] = Some(why.clone());
            bail!(why);
        }
        Ok(())
    }

    /// Unmounts and mounts target `t` again; what it is now is what later
    /// runs must find.
    pub fn remount(&mut self, t: usize) -> Result<()> {
        self.targets[t]
            .remount()
            .context("remounting before the run")?;
        self.identities[t] = Some(Identity::of(self.targets[t].root())?);
        Ok(())
    }

    /// Removes working directories and undoes provisioning, in reverse
    /// order, then whatever else the journal still holds (directories a
    /// workload journaled).
    pub fn teardown(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        if let Err(e) = self.clients.unmount(self.team) {
            errors.push(format!("{e:#}"));
        }
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
            for kept in self.journal.undo_open() {
                errln!("storlab: {kept}");
            }
            if let Err(e) = self.journal.finish() {
                errors.push(format!("{e:#}"));
            }
        } else if self.journal.exists() {
            errors.push(format!(
                "what could not be undone stays in {}; fix the cause and run `storlab cleanup`",
                self.journal.path().display()
            ));
        } else {
            errors.push("fix the cause and undo the rest by hand".into());
        }
        errors
    }
}

impl Drop for Lab<'_> {
    fn drop(&mut self) {
        for e in self.teardown() {
            errln!("storlab: teardown: {e}");
        }
    }
}

/// Refuses to start when the largest workload would not fit on the target.
/// Workloads remove their files after each run, so the largest one counts,
/// once per client (MPI rank) writing at the same time, plus 1/64 (at least
/// 1 MiB) for the filesystem's own metadata. Sizes near 2^64 saturate
/// rather than wrap.
fn check_space(exp: &Experiment, target: usize, root: &Path, clients: u64) -> Result<()> {
    let spec = &exp.targets[target];
    let largest: u64 = exp
        .workloads
        .iter()
        .filter(|w| w.runs_on(&spec.name))
        .map(|w| w.config.bytes_needed())
        .max()
        .unwrap_or(0)
        .saturating_mul(clients.max(1));
    let needed = largest.saturating_add((largest / 64).max(1 << 20));
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
