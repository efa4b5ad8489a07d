//! The roots a campaign takes software from (`root = "debian:trixie"` on a
//! target, on pgbench's server), made ready before anything is provisioned:
//! built once into the cache where they are not there yet, checked, held
//! until the campaign ends (so that `storlab cleanup --roots` leaves them
//! alone), and the variants named by the release each one runs.

use std::collections::BTreeSet;

use anyhow::Result;

use crate::experiment::releases::name_by_release;
use crate::experiment::Experiment;
use crate::process::StopFlag;
use crate::provision::journal::Journal;
use crate::provision::root::{Root, RootNeed};

/// The roots of a campaign, held while it runs.
pub struct Roots {
    pub held: Vec<Root>,
}

/// Every root the experiment's targets and workloads take software from,
/// the host's included (its release names the host's variants).
pub fn needs(exp: &Experiment) -> BTreeSet<RootNeed> {
    let targets = exp.targets.iter().filter_map(|t| t.config.root());
    let workloads = exp.workloads.iter().filter_map(|w| w.config.root());
    targets.chain(workloads).collect()
}

/// Makes every root of `exp` ready — building into the cache what is not
/// there, journaled so that a killed build is undone by `storlab cleanup`
/// — and names the variants by release.
pub fn prepare(exp: &mut Experiment, stop: &StopFlag) -> Result<Roots> {
    let journal = Journal::for_campaign(crate::provision::resource::Kinds::NONE);
    let mut held = Vec::new();
    for need in needs(exp) {
        match Root::obtain(&need.spec, need.software, &journal, stop) {
            Ok(root) => held.push(root),
            // The host's programs are the kind's own preflight's to judge;
            // without them the host's variants keep their names.
            Err(_) if need.spec.is_host() => {}
            Err(e) => return Err(e.context(format!("root \"{}\"", need.spec))),
        }
    }
    journal.finish()?;
    name_by_release(exp, |spec, software| {
        held.iter()
            .find(|r| r.spec == *spec && r.software == software)
            .map(Root::release)
    });
    Ok(Roots { held })
}

/// Names the variants of `exp` by the release of each root that is ready
/// without building (the host, a tree, a cached root): what `check` shows
/// and what a resumed campaign's stored names are matched with.
pub fn name_ready(exp: &mut Experiment) {
    let ready: Vec<Root> = needs(exp)
        .into_iter()
        .filter_map(|n| Root::ready(&n.spec, n.software))
        .collect();
    name_by_release(exp, |spec, software| {
        ready
            .iter()
            .find(|r| r.spec == *spec && r.software == software)
            .map(Root::release)
    });
}

/// The Debian roots `exp` needs that are not in the cache yet: what a
/// first run builds.
pub fn to_build(exp: &Experiment) -> Vec<RootNeed> {
    needs(exp)
        .into_iter()
        .filter(|n| {
            matches!(n.spec, crate::provision::root::RootSpec::Debian { .. })
                && Root::ready(&n.spec, n.software).is_none()
        })
        .collect()
}
