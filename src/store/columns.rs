//! Figures read as columns, not into the runs: per pair (workload ×
//! target) and key, each run's value in run order, with the key's unit
//! and direction. A report shows statistics of every telemetry figure of
//! every pair (30 of a run's 39 figures); gathering those into each run's
//! figures, only for the analysis to gather them back per pair, was a
//! third of reading a campaign of 10^5 runs
//! ([`crate::store::Parts::columns`]).
//!
//! A figure read so is not in its runs' [`crate::store::RunData::metrics`]:
//! [`CampaignData::column`](crate::store::CampaignData::column) and the
//! telemetry's readers look here for the names [`Columns::holds`].

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::keyed::distinct_keys;
use super::read::{CampaignData, RunData};
use crate::metric::{Direction, MetricKey, Unit};

/// Figures of some names, read per pair and key.
#[derive(Debug, Clone, Default)]
pub struct Columns {
    /// The catalogue names read so (with any labels).
    names: BTreeSet<String>,
    /// Per workload, per target (in the order first read), its keys (in
    /// the order first read).
    workloads: HashMap<String, Vec<(String, Vec<Column>)>>,
}

/// One key of a pair: what each of its runs that recorded it recorded.
#[derive(Debug, Clone)]
pub struct Column {
    pub key: Arc<MetricKey>,
    pub unit: Unit,
    pub direction: Direction,
    /// (run id, value), in run order.
    pub values: Vec<(i64, f64)>,
}

impl Column {
    /// Of `runs` (run id and what goes with it, in run order), those
    /// that recorded this figure, each with its value.
    pub fn at<'a, T: 'a>(
        &'a self,
        runs: impl IntoIterator<Item = (i64, T)> + 'a,
    ) -> impl Iterator<Item = (T, f64)> + 'a {
        let mut next = 0;
        runs.into_iter().filter_map(move |(id, t)| {
            while next < self.values.len() && self.values[next].0 < id {
                next += 1;
            }
            match self.values.get(next) {
                Some(&(at, v)) if at == id => Some((t, v)),
                _ => None,
            }
        })
    }
}

impl Columns {
    /// Columns of `names`, none read yet.
    pub(super) fn of_names(names: &[String]) -> Columns {
        Columns {
            names: names.iter().cloned().collect(),
            workloads: HashMap::new(),
        }
    }

    /// Whether figures named `name` are read here, not into the runs.
    pub fn holds(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The columns of `workload` on `target`, in the order first read.
    pub fn of(&self, workload: &str, target: &str) -> &[Column] {
        (self.workloads.get(workload).into_iter().flatten())
            .find(|(t, _)| t == target)
            .map_or(&[], |(_, c)| c.as_slice())
    }

    /// Column `key` of `workload` on `target`.
    pub fn get(&self, workload: &str, target: &str, key: &MetricKey) -> Option<&Column> {
        self.of(workload, target).iter().find(|c| *c.key == *key)
    }

    /// The columns of a pair, to be filled as rows are read.
    pub(super) fn pair_mut(&mut self, workload: &str, target: &str) -> &mut Vec<Column> {
        let targets = self.workloads.entry(workload.to_string()).or_default();
        let at = match targets.iter().position(|(t, _)| t == target) {
            Some(at) => at,
            None => {
                targets.push((target.to_string(), Vec::new()));
                targets.len() - 1
            }
        };
        &mut targets[at].1
    }
}

/// A campaign's figures wherever they were read, in the runs or in the
/// columns: what a reader of figures the report reads per pair asks.
impl CampaignData {
    /// The keys of the figures `runs` (of `workload`) recorded.
    pub fn keys_recorded<'a>(
        &'a self,
        workload: &str,
        runs: &[&'a RunData],
    ) -> BTreeSet<&'a MetricKey> {
        let mut keys = distinct_keys(runs.iter().map(|r| &r.metrics));
        for t in &self.targets {
            let ids: Vec<i64> = (runs.iter())
                .filter(|r| r.target == t.name)
                .map(|r| r.id)
                .collect();
            for column in self.columns.of(workload, &t.name) {
                if column.at(ids.iter().map(|&id| (id, ()))).next().is_some() {
                    keys.insert(&*column.key);
                }
            }
        }
        keys
    }

    /// Figure `key` of those of `runs` (of `workload` on `target`, in run
    /// order) that recorded it, when the columns hold its name; `None`
    /// when the runs do.
    pub fn held_values(
        &self,
        workload: &str,
        target: &str,
        key: &MetricKey,
        runs: &[&RunData],
    ) -> Option<Vec<f64>> {
        if !self.columns.holds(&key.name) {
            return None;
        }
        let column = self.columns.get(workload, target, key);
        let ids = runs.iter().map(|r| (r.id, ()));
        Some(column.map_or(Vec::new(), |c| c.at(ids).map(|(_, v)| v).collect()))
    }

    /// The unit and direction figure `key` was stored with by `workload`'s
    /// runs (its first target's that recorded it).
    pub fn stored_unit(&self, workload: &str, key: &MetricKey) -> Option<(Unit, Direction)> {
        if !self.columns.holds(&key.name) {
            return (self.runs_of_workload(workload))
                .find_map(|r| r.metrics.get(key).map(|m| (m.unit, m.direction)));
        }
        self.targets.iter().find_map(|t| {
            let column = self.columns.get(workload, &t.name, key)?;
            Some((column.unit, column.direction))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_gives_the_values_of_the_runs_asked_that_recorded_it() {
        let c = Column {
            key: Arc::new(MetricKey::plain("x")),
            unit: Unit::Percent,
            direction: Direction::LowerIsBetter,
            values: vec![(2, 20.0), (5, 50.0), (6, 60.0), (9, 90.0)],
        };
        let asked = [(1, 'a'), (2, 'b'), (6, 'c'), (7, 'd'), (9, 'e'), (11, 'f')];
        let got: Vec<(char, f64)> = c.at(asked).collect();
        assert_eq!(got, vec![('b', 20.0), ('c', 60.0), ('e', 90.0)]);
        assert_eq!(c.at(Vec::<(i64, ())>::new()).count(), 0);
    }

    #[test]
    fn a_pairs_columns_are_found_by_workload_and_target() {
        let mut cs = Columns::of_names(&["x".to_string()]);
        assert!(cs.holds("x") && !cs.holds("y"));
        for (w, t, v) in [("w1", "a", 1.0), ("w1", "b", 2.0), ("w2", "a", 3.0)] {
            cs.pair_mut(w, t).push(Column {
                key: Arc::new(MetricKey::plain("x")),
                unit: Unit::Percent,
                direction: Direction::LowerIsBetter,
                values: vec![(1, v)],
            });
        }
        let x = MetricKey::plain("x");
        assert_eq!(cs.get("w1", "b", &x).unwrap().values, vec![(1, 2.0)]);
        assert_eq!(cs.get("w2", "a", &x).unwrap().values, vec![(1, 3.0)]);
        assert!(cs.get("w2", "b", &x).is_none());
        assert!(cs.of("w3", "a").is_empty());
    }
}
