//! Sides named by the release they ran. Where a verdict's candidate and
//! baseline are variants of one target table that differ only in the
//! release a swept `root` gave them (`gl[Gluster 11.1]` against
//! `gl[Gluster 10.3]`), the verdict names its sides by release — "Gluster
//! 11.1 against 10.3", the other swept values they share said once
//! (`Gluster 11.1 on vm[preallocation=off] against 10.3`) — never by the
//! suite a root came from. The labels are the verdict's own
//! (`candidate_label`, `baseline_label`), which every wording of it uses.

use crate::experiment::sweep::{reads_alone, release_pair, variant_name, Factor};
use crate::store::{CampaignData, TargetRow};

use super::verdict::{Statement, Verdict};

/// Names the sides of `verdicts`, and of the headline's, by release where
/// they differ only in it.
pub fn name_sides(c: &CampaignData, verdicts: &mut [Verdict], headline: &mut [Statement]) {
    let each = verdicts
        .iter_mut()
        .chain(headline.iter_mut().flat_map(|s| match s {
            Statement::One(v) => std::slice::from_mut(v.as_mut()),
            Statement::Alike(a) => a.members.as_mut_slice(),
        }));
    for v in each {
        if let Some((candidate, baseline)) =
            sides(&c.targets, &v.candidate.target, &v.baseline.target)
        {
            v.candidate_label = candidate;
            v.baseline_label = baseline;
        }
    }
}

/// The labels of `candidate` against `baseline` when they are variants of
/// one table differing only in their release.
fn sides(targets: &[TargetRow], candidate: &str, baseline: &str) -> Option<(String, String)> {
    let row = |name: &str| targets.iter().find(|t| t.name == name);
    let (a, b) = (row(candidate)?, row(baseline)?);
    if a.family != b.family || a.factors.len() != b.factors.len() {
        return None;
    }
    let differ: Vec<(&Factor, &Factor)> = a
        .factors
        .iter()
        .zip(&b.factors)
        .filter(|(x, y)| x.key != y.key || x.value != y.value)
        .collect();
    let [(x, y)] = differ.as_slice() else {
        return None;
    };
    if x.key != y.key || !reads_alone(x) || !reads_alone(y) {
        return None;
    }
    let (cand, base) = release_pair(&x.text, &y.text)?;
    Some((with_shared(a, &x.key, cand), base))
}

/// `release on TABLE[shared values]`, or the release alone when nothing
/// else was swept.
fn with_shared(t: &TargetRow, release_key: &str, release: String) -> String {
    let shared: Vec<Factor> = t
        .factors
        .iter()
        .filter(|f| f.key != release_key)
        .cloned()
        .collect();
    match shared.is_empty() {
        true => release,
        false => format!("{release} on {}", variant_name(&t.family, &shared)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::sweep::factor;

    fn target(name: &str, family: &str, factors: Vec<Factor>) -> TargetRow {
        TargetRow {
            name: name.into(),
            family: family.into(),
            factors,
            ..Default::default()
        }
    }

    #[test]
    fn sides_that_differ_only_in_release_are_named_by_it() {
        let disk = |release: &str, prealloc: &str| {
            vec![
                factor("gluster.root", release),
                factor("preallocation", prealloc),
            ]
        };
        let c = vec![
            target(
                "gl[Gluster 10.3]",
                "gl",
                vec![factor("root", "Gluster 10.3")],
            ),
            target(
                "gl[Gluster 11.1]",
                "gl",
                vec![factor("root", "Gluster 11.1")],
            ),
            target("vm-a", "vm", disk("Gluster 10.3", "off")),
            target("vm-b", "vm", disk("Gluster 11.1", "off")),
            target("vm-c", "vm", disk("Gluster 11.1", "full")),
        ];
        assert_eq!(
            sides(&c, "gl[Gluster 11.1]", "gl[Gluster 10.3]"),
            Some(("Gluster 11.1".into(), "10.3".into()))
        );
        assert_eq!(
            sides(&c, "vm-b", "vm-a"),
            Some((
                "Gluster 11.1 on vm[preallocation=off]".into(),
                "10.3".into()
            ))
        );
        assert_eq!(sides(&c, "vm-c", "vm-a"), None, "two values differ");
        assert_eq!(sides(&c, "vm-a", "gl[Gluster 10.3]"), None, "two tables");
    }
}
