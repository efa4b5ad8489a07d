//! Which workloads a report gives sections of their own. Every variant of
//! a workload table gets its own: its results, its differences, what the
//! system did, where its reads came from. A sweep of thousands of values
//! made a page nobody reads (2,000 variants: 40 MB of HTML, 18,000
//! tables) and took most of the report's time. A report lays out at most
//! [`MAX_VARIANTS`] variants of a table, evenly spaced in the sweep's
//! order, the first and the last among them; the study of the table shows
//! every variant's primary metric, and `storlab report --workload NAME`
//! lays out any variant, or every variant of a table. The summary, the
//! verdicts and the studies are of every variant whatever is laid out.

use std::collections::BTreeSet;

use crate::store::WorkloadRow;

/// The most variants of one workload table a report lays out unasked.
pub const MAX_VARIANTS: usize = 100;

/// The workloads a report lays out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaidOut {
    /// The workloads left out; none when every one is laid out.
    left_out: BTreeSet<String>,
    /// Each workload table some of whose variants are left out, in the
    /// campaign's order.
    pub thinned: Vec<Thinned>,
    /// The workloads the reader asked for (`--workload`), by name or
    /// table: only those are laid out.
    pub asked: Vec<String>,
}

/// A workload table of which a report lays out some variants.
#[derive(Debug, Clone, PartialEq)]
pub struct Thinned {
    pub family: String,
    /// Its variants, and those laid out.
    pub variants: usize,
    pub shown: usize,
    /// Its first and last variant.
    pub first: String,
    pub last: String,
}

impl LaidOut {
    /// What a report of `workloads` (the campaign's, in its order) lays
    /// out: those `asked` names (a workload, or every variant of a table)
    /// when any; else at most `max` variants of each table.
    pub fn of(workloads: &[WorkloadRow], asked: &[String], max: usize) -> LaidOut {
        let mut families: Vec<(&str, Vec<&str>)> = Vec::new();
        for w in workloads {
            match families.iter_mut().find(|(f, _)| *f == w.family) {
                Some((_, names)) => names.push(&w.name),
                None => families.push((&w.family, vec![&w.name])),
            }
        }
        let mut out = LaidOut {
            asked: asked.to_vec(),
            ..LaidOut::default()
        };
        for (family, names) in families {
            let shown: Vec<bool> = match asked.is_empty() {
                false => {
                    let all = asked.iter().any(|a| a == family);
                    (names.iter())
                        .map(|n| all || asked.iter().any(|a| a == n))
                        .collect()
                }
                true => evenly(names.len(), max),
            };
            let count = shown.iter().filter(|s| **s).count();
            if count == names.len() {
                continue;
            }
            out.left_out.extend(
                (names.iter().zip(&shown))
                    .filter(|(_, s)| !**s)
                    .map(|(n, _)| n.to_string()),
            );
            out.thinned.push(Thinned {
                family: family.to_string(),
                variants: names.len(),
                shown: count,
                first: names[0].to_string(),
                last: names[names.len() - 1].to_string(),
            });
        }
        out
    }

    /// Refuses names `asked` that are neither a workload of `workloads`
    /// nor a workload table.
    pub fn check(campaign: i64, workloads: &[WorkloadRow], asked: &[String]) -> anyhow::Result<()> {
        let known = |a: &String| workloads.iter().any(|w| w.name == *a || w.family == *a);
        let Some(a) = asked.iter().find(|a| !known(a)) else {
            return Ok(());
        };
        let mut tables: Vec<&str> = workloads.iter().map(|w| w.family.as_str()).collect();
        tables.dedup();
        anyhow::bail!(
            "--workload {a}: campaign {campaign} has no workload or workload table `{a}` (its tables: {}; `storlab show -v {campaign}` names every variant)",
            tables.join(", ")
        )
    }

    /// Whether the report lays out workload `name`.
    pub fn shows(&self, name: &str) -> bool {
        !self.left_out.contains(name)
    }

    /// Whether every workload is laid out.
    pub fn all(&self) -> bool {
        self.left_out.is_empty()
    }

    /// The names of `workloads` laid out, when some are left out: what a
    /// report reads the telemetry and the series of (`None`: every one).
    pub fn only(&self, workloads: &[WorkloadRow]) -> Option<Vec<String>> {
        (!self.all()).then(|| {
            (workloads.iter())
                .filter(|w| self.shows(&w.name))
                .map(|w| w.name.clone())
                .collect()
        })
    }
}

/// Of `n` variants in order, `max` evenly spaced (the first and the last
/// among them); all when there are no more than `max`.
fn evenly(n: usize, max: usize) -> Vec<bool> {
    let mut shown = vec![n <= max; n];
    if n <= max || max == 0 {
        return shown;
    }
    if max == 1 {
        shown[0] = true;
        return shown;
    }
    for k in 0..max {
        // Rounded to the nearest: k (n - 1) / (max - 1).
        let at = (2 * k * (n - 1) + (max - 1)) / (2 * (max - 1));
        shown[at] = true;
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(family: &str, n: usize) -> Vec<WorkloadRow> {
        (0..n)
            .map(|i| WorkloadRow {
                name: format!("{family}[v={i}]"),
                family: family.to_string(),
                ..WorkloadRow::default()
            })
            .collect()
    }

    #[test]
    fn a_table_of_more_variants_than_the_most_is_laid_out_evenly_first_and_last_in() {
        let mut ws = sweep("m", 2000);
        ws.extend(sweep("small", 3));
        let l = LaidOut::of(&ws, &[], 100);
        let shown: Vec<usize> = (0..2000)
            .filter(|i| l.shows(&format!("m[v={i}]")))
            .collect();
        assert_eq!(shown.len(), 100);
        assert_eq!((shown[0], shown[99]), (0, 1999));
        let gaps: BTreeSet<usize> = shown.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps, BTreeSet::from([20, 21]), "evenly spaced");
        assert!((0..3).all(|i| l.shows(&format!("small[v={i}]"))));
        assert_eq!(
            l.thinned,
            vec![Thinned {
                family: "m".into(),
                variants: 2000,
                shown: 100,
                first: "m[v=0]".into(),
                last: "m[v=1999]".into(),
            }]
        );
        assert!(!l.all());
        for (n, max) in [(101, 100), (7, 2), (5, 1), (3, 3)] {
            let shown = evenly(n, max);
            assert_eq!(
                shown.iter().filter(|s| **s).count(),
                max.min(n),
                "{n} {max}"
            );
            assert!(shown[0] && (max == 1 || shown[n - 1]), "{n} {max}");
        }
    }

    #[test]
    fn no_more_variants_than_the_most_are_all_laid_out() {
        let l = LaidOut::of(&sweep("m", 100), &[], 100);
        assert!(l.all() && l.thinned.is_empty());
    }

    #[test]
    fn asked_workloads_are_the_only_ones_laid_out_and_a_table_asks_for_every_variant() {
        let mut ws = sweep("m", 2000);
        ws.extend(sweep("small", 3));
        let l = LaidOut::of(&ws, &["m[v=7]".to_string(), "small".to_string()], 100);
        assert!(l.shows("m[v=7]") && !l.shows("m[v=0]") && !l.shows("m[v=1999]"));
        assert!((0..3).all(|i| l.shows(&format!("small[v={i}]"))));
        assert_eq!(l.thinned.len(), 1);
        assert_eq!((l.thinned[0].variants, l.thinned[0].shown), (2000, 1));
        let every = LaidOut::of(&ws, &["m".to_string()], 100);
        assert!((0..2000).all(|i| every.shows(&format!("m[v={i}]"))));
        assert!(!every.shows("small[v=0]"));
    }
}
