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
use super::releases;
use super::replicas::{self, Replicas};
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
    /// The campaign's replicas side by side, when it was loaded with them
    /// (`crate::store::Store::with_replicas`) and has some.
    pub replicas: Option<Replicas>,
}

/// The analysis of campaign `c`.
pub fn analyse(c: &CampaignData, options: &Options) -> Result<CampaignAnalysis> {
    study::check_levels(c, &options.compare_levels)?;
    let model = model::build(c, options.baseline.as_deref(), &chosen::choose)?;
    let mut verdicts = verdict::verdicts(&model);
    let mut headline = verdict::headline(&model);
    releases::name_sides(c, &mut verdicts, &mut headline);
    Ok(CampaignAnalysis {
        verdicts,
        headline,
        studies: study::studies(c, &model, &options.compare_levels),
        replicas: replicas_of(c, &model)?,
        model,
    })
}

/// `c`'s replicas side by side, each analysed against `model`'s baseline.
fn replicas_of(c: &CampaignData, model: &Report) -> Result<Option<Replicas>> {
    if c.replicas.is_empty() {
        return Ok(None);
    }
    let mut members: Vec<(i64, Report)> = Vec::new();
    for r in &c.replicas {
        let m = model::build(r, Some(&model.baseline), &chosen::choose)?;
        members.push((r.campaign.id, m));
    }
    let mut all: Vec<(i64, &Report)> = members.iter().map(|(id, m)| (*id, m)).collect();
    all.push((c.campaign.id, model));
    all.sort_by_key(|(id, _)| *id);
    let ids: Vec<i64> = all.iter().map(|(id, _)| *id).collect();
    let models: Vec<&Report> = all.iter().map(|(_, m)| *m).collect();
    Ok(replicas::compare(&ids, &models, c.campaign.id))
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
