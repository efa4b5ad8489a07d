//! A stored campaign analysed once: [`analyse`] turns the campaign's data
//! into a [`CampaignAnalysis`], which the report, `storlab show`,
//! `compare` and the JSON summary lay out without computing a figure of
//! their own.
//!
//! To add what a new feature finds (where the reads came from, a
//! capacity, replicas that agree), add a field here computed in
//! [`analyse`] by a module of its own beside the others; a finding that
//! judges one side against another is a [`Verdict`] (or a field of one),
//! worded where every verdict is.

use anyhow::Result;

use super::chosen;
use super::model::{self, Report};
use super::study::{self, Study};
use super::verdict::{self, Statement, Verdict};
use crate::store::CampaignData;

/// What a reader asked of the analysis beyond the campaign.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A target to compare against in place of the campaign's baseline.
    pub baseline: Option<String>,
    /// Swept parameters whose levels to compare on each target, beside
    /// those the experiment names.
    pub compare_levels: Vec<String>,
}

/// Everything the campaign's runs say, computed once.
#[derive(Debug, Clone, Default)]
pub struct CampaignAnalysis {
    /// Each workload's statistics per metric and target, against the
    /// baseline, and the campaign's warnings.
    pub model: Report,
    /// Every verdict: each target against the baseline on every metric
    /// compared, with its caveats.
    pub verdicts: Vec<Verdict>,
    /// What the headline says of the primary metrics' verdicts.
    pub headline: Vec<Statement>,
    /// Each swept workload table's study (factors, pivots, curves, level
    /// comparisons).
    pub studies: Vec<Study>,
}

/// The analysis of campaign `c`.
pub fn analyse(c: &CampaignData, options: &Options) -> Result<CampaignAnalysis> {
    study::check_levels(c, &options.compare_levels)?;
    let model = model::build(c, options.baseline.as_deref(), &chosen::choose)?;
    Ok(CampaignAnalysis {
        verdicts: verdict::verdicts(&model),
        headline: verdict::headline(&model),
        studies: study::studies(c, &model, &options.compare_levels),
        model,
    })
}

impl CampaignAnalysis {
    /// The verdict on `target` against the baseline on metric `metric`
    /// (its compact name) of `workload`; `None` when it was not compared.
    pub fn verdict(&self, workload: &str, metric: &str, target: &str) -> Option<&Verdict> {
        self.verdicts
            .iter()
            .find(|v| v.workload == workload && v.metric == metric && v.candidate.target == target)
    }

    /// The study of workload table `family`.
    pub fn study(&self, family: &str) -> Option<&Study> {
        self.studies.iter().find(|s| s.family == family)
    }
}
