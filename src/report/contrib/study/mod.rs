//! A study's factors ([`crate::analysis::study`]) in the report: [`tables`]
//! and [`charts`] lay them out and [`sections`] makes them sections of the
//! report's document, under the last variant of each swept workload
//! ([`Sweeps`], a contributor).

pub mod charts;
pub mod sections;
pub mod tables;

use anyhow::Result;

use super::{Context, Contributor};
use crate::analysis::model::WorkloadReport;
use crate::analysis::study::{study, Study};
use crate::report::document::Section;

/// The contributor: a swept workload table's study, under its last
/// variant's sections (the study sums up every variant), in the summary
/// `storlab show` prints and in the report.
pub struct Sweeps;

impl Contributor for Sweeps {
    fn summary(&self, cx: Context, w: &WorkloadReport) -> Result<Vec<Section>> {
        Ok(study_after(cx, w)
            .map(|s| sections::summary(&s))
            .unwrap_or_default())
    }

    fn sections(&self, cx: Context, w: &WorkloadReport) -> Result<Vec<Section>> {
        Ok(study_after(cx, w)
            .map(|s| vec![sections::report(&s)])
            .unwrap_or_default())
    }
}

/// The study of `w`'s workload table when `w` is its last variant in the
/// report.
fn study_after(cx: Context, w: &WorkloadReport) -> Option<Study> {
    let c = cx.campaign;
    let family = &c.workloads.iter().find(|x| x.name == w.name)?.family;
    let last = cx.model.workloads.iter().rev().find(|x| {
        c.workloads
            .iter()
            .any(|y| y.name == x.name && &y.family == family)
    })?;
    (last.name == w.name)
        .then(|| study(c, cx.model, family, cx.compare_levels))
        .flatten()
}

#[cfg(test)]
mod tests;
