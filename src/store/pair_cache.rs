//! Where a campaign keeps its runs aggregated per pair ([`super::pairs`]
//! makes the aggregate): the data, apart from the runs it is made of.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use crate::metric::MetricKey;
use crate::warning::WarningKind;

/// A measured value of a figure and the round of its run.
pub type Cell = (u32, f64);

/// One pair's runs and measured figures.
#[derive(Debug, Default)]
pub(super) struct Pair {
    /// Indices into the campaign's runs, in run order.
    pub(super) runs: Vec<usize>,
    /// Each figure of the pair's measured runs (successful, not warm-up).
    /// Keyed by the keys the runs share (a key per figure, not per pair).
    pub(super) columns: BTreeMap<Arc<MetricKey>, Vec<Cell>>,
    /// Measured runs, and how many of them carry each kind of warning.
    pub(super) measured: usize,
    pub(super) kinds: Vec<(WarningKind, usize)>,
}

/// The aggregate of a campaign of `runs` runs.
#[derive(Debug)]
pub struct Pairs {
    pub(super) runs: usize,
    pub(super) index: HashMap<(String, String), Pair>,
    /// Each workload's runs (indices into the campaign's runs), in run
    /// order, over every target.
    pub(super) workloads: HashMap<String, Vec<usize>>,
    /// Each workload's equivalence margin as the experiment gives it
    /// (`super::stored::margins`).
    pub(super) margins: HashMap<String, Option<f64>>,
}

/// Where a campaign's data keeps its [`Pairs`]: empty until asked for, and
/// empty again in a clone (which may then be edited).
#[derive(Default)]
pub struct PairCache(pub(super) OnceLock<Pairs>);

impl Clone for PairCache {
    fn clone(&self) -> Self {
        PairCache::default()
    }
}

impl std::fmt::Debug for PairCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PairCache")
    }
}
