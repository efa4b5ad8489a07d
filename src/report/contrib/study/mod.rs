//! A study's factors ([`crate::analysis::study`]) in the report: [`tables`]
//! and [`charts`] lay them out and [`sections`] makes them sections of the
//! report's document — a part of its own after the overview figure (the
//! outline places it), and in the summary `storlab show` prints under the
//! last variant of each swept workload ([`Sweeps`], a contributor).

pub mod charts;
pub mod sections;
pub mod tables;

use super::{Context, Contributor};
use crate::analysis::model::WorkloadReport;
use crate::analysis::study::Study;
use crate::report::document::Section;

/// The contributor: a swept workload table's study in the summary
/// `storlab show` prints, under its last variant's lines (the study sums
/// up every variant).
pub struct Sweeps;

impl Contributor for Sweeps {
    fn summary(&self, cx: Context, w: &WorkloadReport) -> Vec<Section> {
        study_after(cx, w)
            .map(sections::summary)
            .unwrap_or_default()
    }
}

/// The study of `w`'s workload table when `w` is its last variant in the
/// report.
fn study_after<'a>(cx: Context<'a>, w: &WorkloadReport) -> Option<&'a Study> {
    let family = &cx.analysis.stored_workload(&w.name)?.family;
    let last = cx.analysis.last_of_family(family)?;
    (last.name == w.name)
        .then(|| cx.analysis.study(family))
        .flatten()
}

#[cfg(test)]
mod tests;
