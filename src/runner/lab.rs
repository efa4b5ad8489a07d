//! A campaign's laboratory: its targets provisioned, a working directory
//! on each, and what each target was right after provisioning (its
//! [`Identity`]), so that a run never measures a filesystem that replaced
//! the target behind storlab's back. A target standing on another (`on`)
//! is provisioned after it, its image in that one's working directory,
//! remounted with it as one stack, and torn down before it. Under MPI
//! across hosts, the targets' client mounts on the other hosts
//! ([`super::clients`]) are made after provisioning and undone first.
//! Everything is journaled before it is created and torn down on drop,
//! also on errors and interrupts.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};

use crate::experiment::Experiment;
use crate::measure::layers::Stack;
use crate::measure::telemetry::{self, Backing, Watch};
use crate::params::units::format_bytes;
use crate::process::watch;
use crate::provision::facts::space;
use crate::provision::identity::Identity;
use crate::provision::journal::Journal;
use crate::provision::workdir::Workdir;
use crate::ranks::Team;
use crate::targets::Target;

use super::clients::Clients;
use super::preflight;

/// Provisioned targets and their working directories, torn down on drop.
pub(super) struct Lab<'t> {
    pub journal: Journal,
    team: &'t Team,
    /// The targets' mounts on the other hosts of an MPI job.
    clients: Clients,
    pub targets: Vec<Box<dyn Target>>,
    /// Each target's working directory, by target index.
    pub workdirs: Vec<Option<Workdir>>,
    /// What each target's root was after provisioning or its last remount.
    identities: Vec<Option<Identity>>,
    /// Why a target takes no more runs (it was lost), if it does not.
    lost: Vec<Option<String>>,
    /// What each target stands on (`on`), by index.
    under: Vec<Option<usize>>,
    /// What each target's daemons serve it as: the name it was built with
    /// (its kind's daemons) and its runs (a workload's server, by the
    /// target's name in the file: [`watch::runs_on`]).
    serves: Vec<Vec<String>>,
    /// Why each target was degraded (a daemon it relied on died or
    /// stopped), said again when its teardown fails.
    degraded: Vec<Option<String>>,
    /// Targets in the order they were (or began to be) provisioned.
    provisioned: Vec<usize>,
    /// Clients writing into each target at once (MPI ranks).
    writers: u64,
    /// What telemetry watches on each target (none when it is off).
    watches: Vec<Option<Watch>>,
    /// The layers of each target's stack whose counters its runs read
    /// (none when `caches` or telemetry is off).
    layers: Vec<Option<Arc<Stack>>>,
    /// The block tracer the watches share, stopped at teardown.
    tracer: Option<std::sync::Arc<telemetry::blocktrace::Tracer>>,
}

impl<'t> Lab<'t> {
    pub fn new(exp: &Experiment, team: &'t Team) -> Result<Lab<'t>> {
        let journal = Journal::for_campaign(crate::targets::RESOURCES);
        let targets: Vec<Box<dyn Target>> = exp
            .targets
            .iter()
            .map(|t| t.config.build(&t.slug, &journal))
            .collect();
        preflight::refuse(preflight::judge(exp, &targets, team))?;
        let n = targets.len();
        Ok(Lab {
            clients: Clients::new(&journal),
            journal,
            team,
            targets,
            workdirs: (0..n).map(|_| None).collect(),
            identities: vec![None; n],
            lost: vec![None; n],
            under: exp.targets.iter().map(|t| t.on).collect(),
            serves: exp
                .targets
                .iter()
                .map(|t| vec![t.slug.clone(), watch::runs_on(&t.name)])
                .collect(),
            degraded: vec![None; n],
            provisioned: Vec::new(),
            writers: team.size() as u64,
            watches: Vec::new(),
            layers: Vec::new(),
            tracer: None,
        })
    }

    /// Provisions every target in dependency order, each with its working
    /// directory, which holds the images of the targets standing on it.
    pub fn provision(&mut self, exp: &Experiment) -> Result<()> {
        let _phase = crate::provision::cmd::Provisioning::begin();
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
            let root = self.targets[i].root();
            // A raw device's room is checked against its size by the io
            // workload; the working directory beside it holds no data.
            if self.targets[i].device().is_none() {
                check_space(exp, i, root, self.writers)?;
            }
            let wd = Workdir::create(root, &spec.slug, &self.journal)
                .with_context(|| format!("target `{}`", spec.name))?;
            self.workdirs[i] = Some(wd);
            self.identities[i] = Some(Identity::of(root)?);
        }
        // What backs a target is found once: its devices and daemons stay
        // (a remount's new FUSE client is looked up when each run starts).
        self.watches = (0..self.targets.len())
            .map(|i| {
                exp.plan.telemetry.then(|| {
                    Watch::of_target(
                        self.targets[i].root(),
                        self.backing_of(i),
                        exp.plan.block_trace,
                    )
                    .with_trace_max_rate(exp.plan.block_trace_max_rate)
                })
            })
            .collect();
        telemetry::share_campaign(&mut self.watches);
        self.layers = self.stacks(exp);
        self.watch_caches(exp)?;
        // Attached once for the campaign: bpftrace takes seconds to attach.
        self.tracer = telemetry::share_block_tracer(&mut self.watches);
        self.clients.mount(&self.targets, self.team)
    }

    /// What backs target `i` and every target beneath it: a VM disk's
    /// image and daemon, and the Gluster volume's bricks and processes
    /// under it, so that its runs see the chain down to the disk.
    fn backing_of(&self, i: usize) -> Backing {
        let mut backing = self.targets[i].backing();
        let mut at = self.under[i];
        while let Some(c) = at {
            let below = self.targets[c].backing();
            backing.paths.extend(below.paths);
            backing.serving.extend(below.serving);
            backing.zfs |= below.zfs;
            at = self.under[c];
        }
        backing
    }

    /// Each target's layers, each standing on the stack of the target
    /// below it; none for a target with `caches = false` or when
    /// telemetry is off. With ranks on several hosts, each reads through
    /// its own page cache and client, which rank 0 cannot read: every
    /// layer is "not measured".
    fn stacks(&self, exp: &Experiment) -> Vec<Option<Arc<Stack>>> {
        let mut all: Vec<Option<Stack>> = vec![None; self.targets.len()];
        for i in exp.provision_order() {
            let below = self.under[i].and_then(|c| all[c].as_ref());
            all[i] = Some(self.targets[i].layers(below));
        }
        let hosts = self.team.other_hosts();
        all.into_iter()
            .enumerate()
            .map(|(i, s)| {
                let on = exp.plan.telemetry && exp.targets[i].caches;
                let s = s.filter(|_| on)?;
                Some(Arc::new(match hosts.is_empty() {
                    true => s,
                    false => s.not_measured(&format!(
                        "ranks on {} hosts read through each host's own caches; only this host's counters can be read",
                        hosts.len() + 1
                    )),
                }))
            })
            .collect()
    }

    /// Readies the counters of every target whose layers are read, and of
    /// each target under one.
    fn watch_caches(&mut self, exp: &Experiment) -> Result<()> {
        let mut wanted = vec![false; self.targets.len()];
        for i in (0..self.targets.len()).filter(|&i| self.layers[i].is_some()) {
            let mut at = Some(i);
            while let Some(t) = at {
                wanted[t] = true;
                at = self.under[t];
            }
        }
        for (i, _) in wanted.iter().enumerate().filter(|(_, w)| **w) {
            self.targets[i].watch_caches().with_context(|| {
                format!(
                    "target `{}`: readying its caches' counters (caches = false turns them off)",
                    exp.targets[i].name
                )
            })?;
        }
        Ok(())
    }

    /// The layers target `t`'s runs read, if any.
    pub fn layers(&self, t: usize) -> Option<Arc<Stack>> {
        self.layers.get(t).cloned().flatten()
    }

    /// What telemetry watches on target `t` during a run, if anything.
    pub fn watch(&self, t: usize) -> Option<Watch> {
        self.watches.get(t).cloned().flatten()
    }

    /// Target `t` and every target beneath it, by index.
    fn chain(&self, t: usize) -> Vec<usize> {
        let mut chain = vec![t];
        while let Some(c) = self.under[*chain.last().expect("never empty")] {
            chain.push(c);
        }
        chain
    }

    /// The names the daemons serving target `t`'s runs serve: its own and
    /// those of every target beneath it.
    pub fn serving(&self, t: usize) -> Vec<String> {
        self.chain(t)
            .into_iter()
            .flat_map(|i| self.serves[i].clone())
            .collect()
    }

    /// Stops target `t` for good: a daemon it relies on died or stopped.
    pub fn degrade(&mut self, t: usize, name: &str, fault: &str) -> String {
        let why = format!("target `{name}` is degraded, so it takes no more runs: {fault}");
        self.lost[t] = Some(why.clone());
        self.degraded[t] = Some(format!("target `{name}` was degraded: {fault}"));
        why
    }

    /// Fails, and stops target `t` for good, when its root is no longer the
    /// filesystem provisioned (unmounted or replaced behind storlab's back)
    /// or a daemon it relies on died or stopped; fails while a target it
    /// stands on is lost.
    pub fn verify(&mut self, t: usize, name: &str) -> Result<()> {
        if let Some(why) = self.chain(t).iter().find_map(|&i| self.lost[i].as_ref()) {
            bail!("not run: {why}");
        }
        match super::vigil::fault_now(&self.serving(t)) {
            Some(f) if f.degrades => bail!(self.degrade(t, name, &f.words)),
            Some(f) => bail!("not run: {}", f.words),
            None => {}
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
    /// runs must find. A target in a stack takes the whole stack with it:
    /// what stands on its bottom lets go (top first), the bottom is
    /// remounted, and each takes hold again (bottom first), so that no
    /// cache of the stack survives.
    pub fn remount(&mut self, t: usize) -> Result<()> {
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
                // A release that fails half-way is taken hold of again too.
                released.push(i);
                self.targets[i]
                    .release()
                    .context("letting go of what stands on the target, to remount it")?;
            }
            self.targets[bottom]
                .remount()
                .context("remounting before the run")?;
            self.identities[bottom] = Some(Identity::of(self.targets[bottom].root())?);
            Ok(())
        };
        let result = remounted();
        // What was let go of is taken again even when the remount failed,
        // so that the next runs find the stack as it was; storlab mounted
        // it, so what it is now is what they must find.
        let mut failed = Vec::new();
        for &i in stack.iter().filter(|i| released.contains(i)) {
            let held = self.targets[i].hold().and_then(|()| {
                self.identities[i] = Some(Identity::of(self.targets[i].root())?);
                Ok(())
            });
            if let Err(e) = held {
                failed.push(format!("{e:#}"));
            }
        }
        match (result, failed.is_empty()) {
            (result, true) => result,
            (Ok(()), false) => Err(anyhow::anyhow!(
                "taking hold again of what stands on the target: {}",
                failed.join("; ")
            )),
            (Err(e), false) => Err(anyhow::anyhow!(
                "{e:#}; and taking hold again of what stands on the target failed: {}",
                failed.join("; ")
            )),
        }
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
    /// order (what stands on a target goes first), then whatever else the
    /// journal still holds (directories a workload journaled). A target
    /// whose upper floors could not be undone stays, for `storlab cleanup`,
    /// rather than be pulled from under them.
    pub fn teardown(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        if let Some(t) = self.tracer.take() {
            t.stop();
        }
        if let Err(e) = self.clients.unmount(self.team) {
            errors.push(format!("{e:#}"));
        }
        let mut stuck = vec![false; self.targets.len()];
        while let Some(i) = self.provisioned.pop() {
            if (0..self.targets.len()).any(|j| stuck[j] && self.stands_on(j, i)) {
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
                errors.push(match &self.degraded[i] {
                    Some(why) => format!("{e:#} ({why})"),
                    None => format!("{e:#}"),
                });
            }
        }
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

/// Refuses to start when the workloads would not fit on the target. Most
/// workloads remove their files after each run, so the largest one counts,
/// once per client (MPI rank) writing at the same time; those that keep
/// their files from run to run (a PostgreSQL cluster initialised once, one
/// per scale and settings of a sweep) count together, beside it. Plus 1/64 (at least
/// 1 MiB) for the filesystem's own metadata. Sizes near 2^64 saturate
/// rather than wrap.
fn check_space(exp: &Experiment, target: usize, root: &Path, clients: u64) -> Result<()> {
    let spec = &exp.targets[target];
    // Variants sharing one set of kept files count once.
    let (largest, kept) = super::footprint::written_at_once(exp, target, clients);
    let needed = largest.saturating_add((largest / 64).max(1 << 20));
    if let Some((_, free)) = space(root) {
        if needed > free {
            let kept = match kept {
                0 => String::new(),
                k => format!(
                    ", {} of it kept from run to run until the campaign ends (a PostgreSQL cluster initialised once per workload and scale: reinit = \"each-run\" keeps one at a time)",
                    format_bytes(k as f64)
                ),
            };
            bail!(
                "target `{}`: a workload writes up to {}{kept} (with metadata, {}) but only {} is free at {}; {} is missing (lower `size`, or make room)",
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
