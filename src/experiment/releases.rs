//! Variants named by the release they run. A swept `root` (`sweep = {
//! root = ["host", "debian:trixie"] }`) makes variants whose factor says
//! where the software came from; once each root is ready, the factor says
//! what it *is* — the version its programs report, `Gluster 10.3` and
//! `Gluster 11.1` — as its label and in the variant's name
//! (`gluster[Gluster 11.1]`), on the target itself and on every target
//! standing on it (`vm[gluster.root=…]` carries it). Two roots reporting
//! the same release keep their origin beside it (`Gluster 11.1
//! (debian:trixie)`), so that names stay apart.

use std::collections::BTreeMap;

use super::schema::Experiment;
use super::sweep::{variant_name, Factor};
use crate::provision::root::{RootSpec, Software};

/// A factor key that sweeps a root: `root`, or `F.root` carried from
/// target table `F`.
pub fn is_root_key(key: &str) -> bool {
    key == "root" || key.ends_with(".root")
}

/// Renames every root factor of `exp` by the release `release` says its
/// root runs (`Gluster 11.1`), and every variant with one; a root whose
/// release is not known (not built yet) keeps its text. Returns how many
/// factors were renamed.
pub fn name_by_release(
    exp: &mut Experiment,
    release: impl Fn(&RootSpec, Software) -> Option<String>,
) -> usize {
    let software_of_family = |family: &str, exp: &Experiment| {
        exp.targets
            .iter()
            .find(|t| t.family == family)
            .and_then(|t| t.config.root())
            .map(|r| r.software)
    };
    // Every root factor: where it is, its root and software.
    let mut found: Vec<(bool, usize, usize, RootSpec, Software)> = Vec::new();
    for (i, t) in exp.targets.iter().enumerate() {
        let own = t.config.root().map(|r| r.software);
        for (j, f) in t.factors.iter().enumerate() {
            let sw = match f.key.strip_suffix(".root") {
                Some(family) => software_of_family(family, exp),
                None if f.key == "root" => own,
                None => None,
            };
            if let (Some(sw), Ok(spec)) = (sw, RootSpec::parse(&f.value)) {
                found.push((true, i, j, spec, sw));
            }
        }
    }
    for (i, w) in exp.workloads.iter().enumerate() {
        let own = w.config.root().map(|r| r.software);
        for (j, f) in w.factors.iter().enumerate() {
            if let (true, Some(sw), Ok(spec)) = (f.key == "root", own, RootSpec::parse(&f.value)) {
                found.push((false, i, j, spec, sw));
            }
        }
    }
    let texts = release_texts(&found, &release);
    let mut renamed = 0;
    for (is_target, i, j, spec, sw) in &found {
        let Some(text) = texts.get(&(spec.clone(), *sw)) else {
            continue;
        };
        let f = match is_target {
            true => &mut exp.targets[*i].factors[*j],
            false => &mut exp.workloads[*i].factors[*j],
        };
        f.text = text.clone();
        f.value = text.clone();
        renamed += 1;
    }
    if renamed > 0 {
        rename_variants(exp);
    }
    renamed
}

/// The text of each root's release; the origin beside it where two roots
/// of one software report the same release.
fn release_texts(
    found: &[(bool, usize, usize, RootSpec, Software)],
    release: &impl Fn(&RootSpec, Software) -> Option<String>,
) -> BTreeMap<(RootSpec, Software), String> {
    let mut texts: BTreeMap<(RootSpec, Software), String> = BTreeMap::new();
    for (_, _, _, spec, sw) in found {
        if let Some(r) = release(spec, *sw) {
            texts.insert((spec.clone(), *sw), r);
        }
    }
    let same: Vec<(RootSpec, Software)> = texts
        .iter()
        .filter(|((s, sw), t)| {
            texts
                .iter()
                .any(|((s2, sw2), t2)| s2 != s && sw2 == sw && t2 == *t)
        })
        .map(|(k, _)| k.clone())
        .collect();
    for key in same {
        if let Some(t) = texts.get_mut(&key) {
            *t = format!("{t} ({})", key.0);
        }
    }
    texts
}

/// Names every variant anew from its factors, and what named the old
/// names (a workload's `targets`).
fn rename_variants(exp: &mut Experiment) {
    let mut renames: BTreeMap<String, String> = BTreeMap::new();
    for t in &mut exp.targets {
        let new = variant_name(&t.family, &t.factors);
        renames.insert(std::mem::replace(&mut t.name, new.clone()), new);
    }
    for w in &mut exp.workloads {
        w.name = variant_name(&w.family, &w.factors);
        for t in &mut w.only_targets {
            if let Some(new) = renames.get(t) {
                *t = new.clone();
            }
        }
    }
}

/// Whether a factor reads alone in a variant's name and a row's label:
/// a root factor named by its release (`Gluster 11.1`), where every other
/// factor, and a root not yet named (`root=debian:trixie`), reads
/// `key=value`.
pub fn reads_alone(f: &Factor) -> bool {
    is_root_key(&f.key)
        && Software::ALL
            .iter()
            .any(|s| f.text.starts_with(&format!("{} ", s.display())))
}
