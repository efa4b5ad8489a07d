//! What a workload kind or a feature adds to the report: its own table of
//! the summary metrics (which metrics those are, and the one its verdict
//! concerns, is the analysis' choice: [`crate::analysis::chosen`]), lines
//! under the summary `storlab show` prints, and sections under the
//! workload's own in the report — all laid out from the campaign's
//! analysis, like every other section; what a contributor shows is
//! computed in [`crate::analysis`] (a field of its `CampaignAnalysis`). The matrix contributes its per-test geometric means and its
//! file size × record size maps; telemetry what the system did during a
//! workload's runs;
//! attribution where its latency went, the device or above it; reads
//! where its reads came from, layer by layer.
//!
//! To add one (sweep pivots and curves, telemetry panels…): a module here
//! with a unit struct implementing [`Contributor`], listed in
//! [`CONTRIBUTORS`]. Every method has a default that adds nothing, and each
//! decides for itself which workloads it concerns (by kind, by the
//! parameters or by what the runs recorded).

pub mod attribution;
pub mod matrix;
pub mod reads;
pub mod study;
pub mod telemetry;

use super::document::Section;
use super::table::Table;
use crate::analysis::model::WorkloadReport;
use crate::analysis::CampaignAnalysis;

/// What a contributor reads: the campaign's analysis.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub analysis: &'a CampaignAnalysis,
}

pub trait Contributor: Sync {
    /// The table of `w`'s summary metrics, in place of the standard one
    /// (targets as rows, metrics as columns).
    fn values_table(&self, _cx: Context, _w: &WorkloadReport) -> Option<Table> {
        None
    }

    /// Sections `storlab run` and `storlab show` print for `w` under the
    /// summary table.
    fn summary(&self, _cx: Context, _w: &WorkloadReport) -> Vec<Section> {
        Vec::new()
    }

    /// Sentences the headline adds under `w`'s verdicts (what a reader
    /// must know before trusting them, such as a matrix's share of read
    /// cells that came from memory).
    fn headline(&self, _cx: Context, _w: &WorkloadReport) -> Vec<String> {
        Vec::new()
    }

    /// Sections of the report under `w`'s own (level 3 and below).
    fn sections(&self, _cx: Context, _w: &WorkloadReport) -> Vec<Section> {
        Vec::new()
    }
}

/// Every contributor, in the order their sections appear.
pub static CONTRIBUTORS: &[&dyn Contributor] = &[
    &matrix::Matrix,
    &study::Sweeps,
    &telemetry::Telemetries,
    &attribution::Attributions,
    &reads::Reads,
];

/// A summary section `title` listing `lines`; none when there are none.
pub fn listed(title: &str, lines: Vec<String>) -> Vec<Section> {
    if lines.is_empty() {
        return Vec::new();
    }
    let mut s = Section::new(3, title);
    s.list(lines);
    vec![s]
}

/// The first contributor's table of `w`'s summary metrics, if any.
pub fn values_table(cx: Context, w: &WorkloadReport) -> Option<Table> {
    CONTRIBUTORS.iter().find_map(|k| k.values_table(cx, w))
}

/// Every contributor's summary sections of `w`.
pub fn summary(cx: Context, w: &WorkloadReport) -> Vec<Section> {
    CONTRIBUTORS.iter().flat_map(|k| k.summary(cx, w)).collect()
}

/// Every contributor's headline sentences on `w`.
pub fn headline(cx: Context, w: &WorkloadReport) -> Vec<String> {
    CONTRIBUTORS
        .iter()
        .flat_map(|k| k.headline(cx, w))
        .collect()
}

/// Every contributor's report sections of `w`.
pub fn sections(cx: Context, w: &WorkloadReport) -> Vec<Section> {
    CONTRIBUTORS
        .iter()
        .flat_map(|k| k.sections(cx, w))
        .collect()
}
