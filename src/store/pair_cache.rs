//! Where a campaign keeps its runs aggregated per pair ([`super::pairs`]
//! makes the aggregate): the data, apart from the runs it is made of.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::warning::WarningKind;

/// A measured value of a figure and the round of its run.
pub type Cell = (u32, f64);

/// One pair's runs, its measured runs and their warnings.
#[derive(Debug, Default)]
pub(super) struct Pair {
    /// Indices into the campaign's runs, in run order: shared with each
    /// reader of the pair's runs, not copied for it (a pair of 10^5 runs
    /// was copied for every figure asked of it).
    pub(super) runs: Arc<[usize]>,
    /// Of these, the measured runs (successful, not warm-up), shared
    /// alike.
    pub(super) measured: Arc<[usize]>,
    /// How many of the measured runs carry each kind of warning.
    pub(super) kinds: Vec<(WarningKind, usize)>,
}

/// The aggregate of a campaign of `runs` runs.
#[derive(Debug)]
pub struct Pairs {
    pub(super) runs: usize,
    pub(super) index: HashMap<(String, String), Pair>,
    /// Each workload's runs (indices into the campaign's runs), in run
    /// order, over every target.
    pub(super) workloads: HashMap<String, Arc<[usize]>>,
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
