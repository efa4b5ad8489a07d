//! The metric catalogue: every metric storlab records, declared once with
//! its name (stable snake_case), unit, direction, how values of concurrent
//! parts (threads, MPI ranks) merge into one, whether reports show it as a
//! headline figure, and what it means. Workloads name catalogue entries by
//! constant; the store, the MPI merge, the reports and the exports read
//! unit, direction and merge rule from here and never from a name.
//!
//! A value carries [`Labels`] (the matrix cell, the smallfiles operation,
//! …) rather than structure packed into its name. Across repeated runs
//! every metric is summarised alike (mean and interval over the runs); the
//! latency histograms ([`HistDef`]) merge exactly everywhere.
//!
//! [`catalogue`] holds the declarations, [`format`] a value in its unit
//! for people (the analysis' sentences and every renderer), [`labels`] the label keys and the
//! compact names reports show, [`layer`] the layers of a target's stack
//! that reads pass through, [`reference`] renders `docs/metrics.md`, and
//! [`legacy`] reads the names of schema-v3 stores, which packed labels into
//! names: it is the only place that takes a metric name apart.

pub mod catalogue;
pub mod format;
pub mod histogram;
pub mod labels;
pub mod layer;
pub mod legacy;
pub mod matrix;
pub mod reference;
mod unit;

use serde::{Deserialize, Serialize};

pub use catalogue::ALL;
pub use labels::{compact_name, Labels, MetricKey};
pub use unit::{Family, Unit, UNITS};

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::HigherIsBetter => "higher",
            Direction::LowerIsBetter => "lower",
        }
    }

    pub fn parse(s: &str) -> Option<Direction> {
        match s {
            "higher" => Some(Direction::HigherIsBetter),
            "lower" => Some(Direction::LowerIsBetter),
            _ => None,
        }
    }
}

/// How the values of parts that ran at once (threads, MPI ranks, after
/// IOR and mdtest) make the value of the whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// Amounts and CPU seconds: the parts' sum.
    Sum,
    /// Peaks, percentiles, the slowest part's time: the largest.
    Max,
    /// Means and ratios of parts that did the same work: their mean.
    Mean,
    /// A rate over the run: IOR's aggregate, the parts' total amount (rate
    /// × own measured span) over the window from the earliest start to the
    /// last end. A labelled value with a same-labelled `elapsed_s` (a
    /// phase) is the total over the slowest part's phase; without either,
    /// the sum of the rates.
    Rate,
    /// Rates of parts running side by side: their sum.
    SumOfRates,
    /// A per-operation figure: the parts' values weighted by their value of
    /// another metric with the same labels.
    WeightedBy(&'static MetricDef),
}

/// One metric of the catalogue.
#[derive(Debug, PartialEq, Eq)]
pub struct MetricDef {
    pub name: &'static str,
    pub unit: Unit,
    pub direction: Direction,
    pub merge: Merge,
    /// Shown in reports beside the primary metric, in catalogue order.
    pub headline: bool,
    pub help: &'static str,
    /// How prose and charts name it (`throughput`, `p99 latency`); empty
    /// where the stored name is the only one (tables and exports always
    /// keep the stored name).
    pub human: &'static str,
}

impl MetricDef {
    /// The definition with the name prose and charts give it.
    pub const fn called(self, human: &'static str) -> MetricDef {
        MetricDef { human, ..self }
    }
}

/// How a stored metric is named in prose and charts: the catalogue's human
/// name; for a part's figure named `{part}_{metric}` (a matrix test's
/// `reread_geomean_bw_bytes_per_s`), the part and the metric's human name
/// (`reread throughput (geometric mean)`); else the stored name.
pub fn human_name(stored: &str) -> String {
    let human = |name: &str| {
        lookup(name)
            .filter(|d| !d.human.is_empty())
            .map(|d| d.human)
    };
    if let Some(h) = human(stored) {
        return h.to_string();
    }
    let part = stored
        .match_indices('_')
        .find_map(|(i, _)| Some((&stored[..i], human(&stored[i + 1..])?)));
    match part {
        Some((part, h)) => format!("{} {h}", part.replace('_', " ")),
        None => stored.to_string(),
    }
}

/// A latency histogram (nanoseconds, HDR, merged exactly) and the metrics
/// derived from it: `{name}_mean_ns`, percentiles, `{name}_max_ns`.
#[derive(Debug, PartialEq)]
pub struct HistDef {
    pub name: &'static str,
    pub help: &'static str,
    pub mean: &'static MetricDef,
    /// (percentile, its metric), ascending.
    pub percentiles: [(f64, &'static MetricDef); 4],
    pub max: &'static MetricDef,
}

impl HistDef {
    /// Every metric derived from this histogram.
    pub fn metrics(&self) -> impl Iterator<Item = &'static MetricDef> + '_ {
        std::iter::once(self.mean)
            .chain(self.percentiles.iter().map(|(_, m)| *m))
            .chain(std::iter::once(self.max))
    }

    /// The unit of its samples.
    pub fn unit(&self) -> Unit {
        Unit::Nanoseconds
    }
}

/// The catalogue entry of a metric name.
pub fn lookup(name: &str) -> Option<&'static MetricDef> {
    ALL.iter().copied().find(|d| d.name == name)
}

/// The catalogue entry of a histogram name.
pub fn lookup_hist(name: &str) -> Option<&'static HistDef> {
    catalogue::HISTOGRAMS
        .iter()
        .copied()
        .find(|h| h.name == name)
}

/// The headline metrics, in the order reports show them.
pub fn headlines() -> impl Iterator<Item = &'static MetricDef> {
    ALL.iter().copied().filter(|d| d.headline)
}

#[cfg(test)]
mod human_name_tests {
    use super::human_name;

    // Seed 004's headline read "reread_geomean_bw_bytes_per_s".
    #[test]
    fn a_parts_figure_is_named_by_its_part_and_the_metric() {
        assert_eq!(
            human_name("geomean_bw_bytes_per_s"),
            "throughput (geometric mean)"
        );
        assert_eq!(
            human_name("reread_geomean_bw_bytes_per_s"),
            "reread throughput (geometric mean)"
        );
        assert_eq!(human_name("no_such_metric"), "no_such_metric");
    }
}
