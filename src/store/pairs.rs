//! A campaign's runs aggregated per pair (workload × target), in one pass
//! over them: each pair's runs, each of its figures' measured values as a
//! column (round and value, in run order), and how many measured runs
//! carry each kind of warning. The model, the telemetry figures and the
//! latency curves ask for a pair's figure once per metric and target;
//! finding it by scanning every run and looking the figure up in each made
//! a report of 10^5 runs quadratic (20 s in those scans). The aggregate is
//! made the first time it is asked for and kept beside the runs
//! ([`CampaignData::pair_cache`]); a campaign whose runs were added or
//! removed since gets it made anew. Columns hold the very values of the
//! runs, in their order: every figure computed from them is the one the
//! runs give, to the last digit (`crate::report::every_row_tests`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::pair_cache::{Cell, Pair, Pairs};
use super::read::{CampaignData, RunData};
use crate::metric::MetricKey;
use crate::warning::WarningKind;

impl Pairs {
    fn of(runs: &[RunData], experiment: &serde_json::Value) -> Pairs {
        let mut slots: Vec<(String, String)> = Vec::new();
        let mut slot_of: HashMap<(&str, &str), usize> = HashMap::new();
        let mut kinds: Vec<BTreeMap<WarningKind, usize>> = Vec::new();
        let mut pairs: Vec<Pair> = Vec::new();
        let mut parts: Vec<Parts> = Vec::new();
        let mut workloads: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, r) in runs.iter().enumerate() {
            match workloads.get_mut(r.workload.as_str()) {
                Some(w) => w.push(i),
                None => {
                    workloads.insert(r.workload.clone(), vec![i]);
                }
            }
            let slot = *slot_of
                .entry((r.workload.as_str(), r.target.as_str()))
                .or_insert_with(|| {
                    slots.push((r.workload.clone(), r.target.clone()));
                    kinds.push(BTreeMap::new());
                    pairs.push(Pair::default());
                    parts.push(Parts::default());
                    slots.len() - 1
                });
            let p = &mut pairs[slot];
            p.runs.push(i);
            if r.warmup || r.status != "ok" {
                continue;
            }
            p.measured += 1;
            for (key, v) in r.metrics.shared() {
                parts[slot].push(
                    key,
                    Placed {
                        run: i as u32,
                        round: r.round,
                        value: v.value,
                    },
                );
            }
            for (n, w) in r.warnings.iter().enumerate() {
                // Each kind once per run.
                if !r.warnings[..n].iter().any(|x| x.kind == w.kind) {
                    *kinds[slot].entry(w.kind).or_default() += 1;
                }
            }
        }
        for ((p, k), part) in pairs.iter_mut().zip(kinds).zip(parts) {
            p.kinds = k.into_iter().collect();
            p.columns = part.columns();
        }
        Pairs {
            runs: runs.len(),
            index: slots.into_iter().zip(pairs).collect(),
            workloads,
            margins: super::stored::margins(experiment),
        }
    }

    fn get(&self, workload: &str, target: &str) -> Option<&Pair> {
        self.index.get(&(workload.to_string(), target.to_string()))
    }
}

/// One pair's figures as they are gathered: a part per key `Arc`. Keys
/// are shared among the runs read from the store and come in the same
/// order in every run, so each is found by its address where the last one
/// was found, without hashing or comparing names.
#[derive(Default)]
struct Parts {
    keys: Vec<Arc<MetricKey>>,
    cells: Vec<Vec<Placed>>,
    cursor: usize,
}

/// A cell and the index of its run: as small as the cell itself (16
/// bytes, a campaign's every figure is one), and made into it in place.
#[derive(Clone, Copy)]
struct Placed {
    run: u32,
    round: u32,
    value: f64,
}

impl Parts {
    fn push(&mut self, key: &Arc<MetricKey>, cell: Placed) {
        let n = self.keys.len();
        let found = (0..n)
            .map(|k| (self.cursor + k) % n)
            .find(|&i| Arc::ptr_eq(&self.keys[i], key));
        let i = found.unwrap_or_else(|| {
            self.keys.push(key.clone());
            self.cells.push(Vec::new());
            n
        });
        self.cells[i].push(cell);
        self.cursor = i + 1;
    }

    /// The columns by key. Keys equal by name and labels but not shared
    /// (runs made one by one, as tests make them) are one column, put
    /// back in run order.
    fn columns(self) -> BTreeMap<Arc<MetricKey>, Vec<Cell>> {
        let mut merged: BTreeMap<Arc<MetricKey>, Vec<Placed>> = BTreeMap::new();
        for (key, cells) in self.keys.into_iter().zip(self.cells) {
            let column = merged.entry(key).or_default();
            if column.is_empty() {
                *column = cells;
            } else {
                column.extend(cells);
                column.sort_by_key(|c| c.run);
            }
        }
        merged
            .into_iter()
            .map(|(k, cells)| {
                let mut column: Vec<Cell> = cells.into_iter().map(|c| (c.round, c.value)).collect();
                column.shrink_to_fit();
                (k, column)
            })
            .collect()
    }
}

impl CampaignData {
    /// The aggregate, made now if it was not (or for other runs).
    pub(super) fn pairs<R>(&self, f: impl FnOnce(&Pairs) -> R) -> R {
        let made = || Pairs::of(&self.runs, &self.experiment);
        match self.pair_cache.0.get_or_init(made) {
            p if p.runs == self.runs.len() => f(p),
            // Runs were added or removed after the aggregate was made.
            _ => f(&made()),
        }
    }

    /// Every run of `workload` on `target`, in run order.
    pub fn runs_of<'a>(
        &'a self,
        workload: &str,
        target: &str,
    ) -> impl Iterator<Item = &'a RunData> + 'a {
        let ids: Vec<usize> = self.pairs(|p| {
            p.get(workload, target)
                .map(|p| p.runs.clone())
                .unwrap_or_default()
        });
        ids.into_iter().map(move |i| &self.runs[i])
    }

    /// Every run of `workload`, on every target, in run order.
    pub fn runs_of_workload<'a>(
        &'a self,
        workload: &str,
    ) -> impl Iterator<Item = &'a RunData> + 'a {
        let ids: Vec<usize> =
            self.pairs(|p| p.workloads.get(workload).cloned().unwrap_or_default());
        ids.into_iter().map(move |i| &self.runs[i])
    }

    /// The measured runs of `workload` on `target`: successful, not
    /// warm-up, in run order.
    pub fn measured_runs_of<'a>(
        &'a self,
        workload: &str,
        target: &str,
    ) -> impl Iterator<Item = &'a RunData> + 'a {
        self.runs_of(workload, target)
            .filter(|r| !r.warmup && r.status == "ok")
    }

    /// Figure `key` of the measured runs of `workload` on `target` that
    /// recorded it: (round, value) in run order.
    pub fn column(&self, workload: &str, target: &str, key: &MetricKey) -> Vec<Cell> {
        self.pairs(|p| {
            p.get(workload, target)
                .and_then(|p| p.columns.get(key))
                .cloned()
                .unwrap_or_default()
        })
    }

    /// The measured runs of `workload` on `target`, and how many of them
    /// carry a warning of each kind (in kind order).
    pub fn warned_runs(&self, workload: &str, target: &str) -> (usize, Vec<(WarningKind, usize)>) {
        self.pairs(|p| match p.get(workload, target) {
            Some(p) => (p.measured, p.kinds.clone()),
            None => (0, Vec::new()),
        })
    }
}
