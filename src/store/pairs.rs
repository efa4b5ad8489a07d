//! A campaign's runs aggregated per pair (workload × target), in one pass
//! over them: each pair's runs, and how many measured runs carry each
//! kind of warning. The model, the telemetry figures and the latency
//! curves ask for a pair's figure once per metric and target; finding it
//! by scanning every run and looking the figure up in each made a report
//! of 10^5 runs quadratic (20 s in those scans). The aggregate is made the
//! first time it is asked for and kept beside the runs
//! ([`CampaignData::pair_cache`]); a campaign whose runs were added or
//! removed since gets it made anew. A pair's figure is read from its runs
//! when asked for ([`CampaignData::column`]), found in each run where it
//! was in the run before: the runs of a pair share their keys. A copy of
//! every figure as columns (63 MB at 10^5 runs) was a fifth of a report's
//! memory. Columns are the very values of the runs, in their order: every
//! figure computed from them is the one the runs give, to the last digit
//! (`crate::report::every_row_tests`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::keyed::Seek;
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
        // Each pair's runs, and its measured runs.
        let mut runs_of: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
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
                    runs_of.push(Default::default());
                    slots.len() - 1
                });
            runs_of[slot].0.push(i);
            if !measured(r) {
                continue;
            }
            runs_of[slot].1.push(i);
            for (n, w) in r.warnings.iter().enumerate() {
                // Each kind once per run.
                if !r.warnings[..n].iter().any(|x| x.kind == w.kind) {
                    *kinds[slot].entry(w.kind).or_default() += 1;
                }
            }
        }
        for ((p, k), (all, measured)) in pairs.iter_mut().zip(kinds).zip(runs_of) {
            p.kinds = k.into_iter().collect();
            p.runs = all.into();
            p.measured = measured.into();
        }
        Pairs {
            runs: runs.len(),
            index: slots.into_iter().zip(pairs).collect(),
            workloads: workloads.into_iter().map(|(w, r)| (w, r.into())).collect(),
            margins: super::stored::margins(experiment),
        }
    }

    fn get(&self, workload: &str, target: &str) -> Option<&Pair> {
        self.index.get(&(workload.to_string(), target.to_string()))
    }
}

/// A run whose figures are measurements: successful, not warm-up.
fn measured(r: &RunData) -> bool {
    !r.warmup && r.status == "ok"
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
        let ids = self.pairs(|p| p.get(workload, target).map(|p| p.runs.clone()));
        self.at(ids.unwrap_or_default())
    }

    /// Every run of `workload`, on every target, in run order.
    pub fn runs_of_workload<'a>(
        &'a self,
        workload: &str,
    ) -> impl Iterator<Item = &'a RunData> + 'a {
        self.at(self.pairs(|p| p.workloads.get(workload).cloned().unwrap_or_default()))
    }

    /// The runs at places `ids`, in their order.
    fn at(&self, ids: Arc<[usize]>) -> impl Iterator<Item = &RunData> + '_ {
        (0..ids.len()).map(move |k| &self.runs[ids[k]])
    }

    /// The measured runs of `workload` on `target`: successful, not
    /// warm-up, in run order.
    pub fn measured_runs_of<'a>(
        &'a self,
        workload: &str,
        target: &str,
    ) -> impl Iterator<Item = &'a RunData> + 'a {
        let ids = self.pairs(|p| p.get(workload, target).map(|p| p.measured.clone()));
        self.at(ids.unwrap_or_default())
    }

    /// Figure `key` of the measured runs of `workload` on `target` that
    /// recorded it: (round, value) in run order.
    pub fn column(&self, workload: &str, target: &str, key: &MetricKey) -> Vec<Cell> {
        self.pairs(|p| {
            let Some(p) = p.get(workload, target) else {
                return Vec::new();
            };
            if self.columns.holds(&key.name) {
                let Some(c) = self.columns.get(workload, target, key) else {
                    return Vec::new();
                };
                let runs = p
                    .measured
                    .iter()
                    .map(|&i| (self.runs[i].id, self.runs[i].round));
                return c.at(runs).collect();
            }
            let mut seek = Seek::new(key);
            (p.measured.iter().map(|&i| &self.runs[i]))
                .filter_map(|r| Some((r.round, seek.get(&r.metrics)?.value)))
                .collect()
        })
    }

    /// The measured runs of `workload` on `target`, and how many of them
    /// carry a warning of each kind (in kind order).
    pub fn warned_runs(&self, workload: &str, target: &str) -> (usize, Vec<(WarningKind, usize)>) {
        self.pairs(|p| match p.get(workload, target) {
            Some(p) => (p.measured.len(), p.kinds.clone()),
            None => (0, Vec::new()),
        })
    }
}
