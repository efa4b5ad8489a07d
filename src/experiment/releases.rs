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
use super::sweep::variant_name;
use crate::provision::root::{RootSpec, Software};

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
        for (j, f) in t.factors.iter().enumerate() {
            let sw = match f.key.strip_suffix(".root") {
                Some(family) => software_of_family(family, exp),
                None if f.key == "root" => root_below(exp, i),
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

/// The software of target `i`'s own `root`, or, for a kind without one,
/// of the target it stands on (whose `root` factor it carries, unprefixed
/// where its own kind has no such parameter).
fn root_below(exp: &Experiment, i: usize) -> Option<Software> {
    let mut at = Some(i);
    while let Some(t) = at.map(|i| &exp.targets[i]) {
        if let Some(r) = t.config.root() {
            return Some(r.software);
        }
        at = t.on;
    }
    None
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::parse_experiment;

    fn exp(roots: &str) -> Experiment {
        let text = format!(
            "[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"/tmp\"\n\
             [[workload]]\nname = \"oltp\"\nkind = \"pgbench\"\n\
             sweep = {{ root = [{roots}], transactions = [10, 20] }}\n"
        );
        parse_experiment("t.toml", &text).unwrap()
    }

    fn names(e: &Experiment) -> Vec<&str> {
        e.workloads.iter().map(|w| w.name.as_str()).collect()
    }

    #[test]
    fn root_variants_are_named_and_labelled_by_the_release_they_run() {
        let mut e = exp("\"host\", \"debian:trixie\"");
        assert_eq!(names(&e)[2], "oltp[root=debian:trixie,transactions=10]");
        let n = name_by_release(&mut e, |spec, sw| {
            assert_eq!(sw, Software::Postgres);
            Some(match spec {
                RootSpec::Host => "PostgreSQL 15.18".to_string(),
                _ => "PostgreSQL 17.12".to_string(),
            })
        });
        assert_eq!(n, 4);
        assert_eq!(
            names(&e),
            [
                "oltp[PostgreSQL 15.18,transactions=10]",
                "oltp[PostgreSQL 15.18,transactions=20]",
                "oltp[PostgreSQL 17.12,transactions=10]",
                "oltp[PostgreSQL 17.12,transactions=20]"
            ]
        );
        let f = &e.workloads[2].factors[0];
        assert_eq!(
            (f.key.as_str(), f.value.as_str()),
            ("root", "PostgreSQL 17.12")
        );
        assert_eq!(
            crate::experiment::sweep::short_text(
                &e.workloads[2].factors.iter().collect::<Vec<_>>()
            ),
            "PostgreSQL 17.12, transactions=10"
        );
    }

    #[test]
    fn a_release_two_roots_share_keeps_their_origins_and_an_unknown_one_its_spec() {
        let mut e = exp("\"host\", \"debian:trixie\", \"debian:sid\"");
        name_by_release(&mut e, |spec, _| match spec {
            RootSpec::Debian { suite } if suite == "sid" => None,
            _ => Some("PostgreSQL 17.12".to_string()),
        });
        let n = names(&e);
        assert_eq!(n[0], "oltp[PostgreSQL 17.12 (host),transactions=10]");
        assert_eq!(
            n[2],
            "oltp[PostgreSQL 17.12 (debian:trixie),transactions=10]"
        );
        assert_eq!(n[4], "oltp[root=debian:sid,transactions=10]");
    }
}
