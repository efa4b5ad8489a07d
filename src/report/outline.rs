//! The one outline of every report: builds the [`Document`] of a campaign
//! from the store — the model once, the latency curves from the stored
//! histograms, the common sections, and what each workload kind or feature
//! contributes — in reading order. Any error in the data surfaces here.

use anyhow::Result;

use super::contrib::{self, Context};
use super::document::{Document, Section};
use super::latency::curves;
use super::model;
use super::ranks;
use super::sections::{campaign, methodology, percentiles, series, summary, workload};
use crate::store::CampaignData;

/// The document of campaign `c`; `baseline` overrides its stored baseline.
pub fn build(c: &CampaignData, baseline: Option<&str>) -> Result<Document> {
    let model = model::build(c, baseline, &|w| contrib::summary_metrics(c, w))?;
    let cx = Context {
        campaign: c,
        model: &model,
    };
    let curves = curves(c)?;
    let mut summary = vec![summary::section(c, &model)];
    let mut body = vec![
        campaign::intro(c),
        campaign::headline_section(&model),
        campaign::environment_section(c),
        campaign::targets_section(c, &model.baseline),
        methodology::section(c, &model),
    ];
    for w in &model.workloads {
        summary.extend(contrib::summary(cx, w)?);
        body.push(workload::section(
            c,
            &model,
            w,
            contrib::values_table(cx, w),
        ));
        body.extend(contrib::sections(cx, w)?);
        body.extend(series::section(c, w));
        body.extend(percentiles::section(c, w, &curves));
        body.extend(ranks::report_section(c, &w.name));
    }
    summary.extend(ranks::summary_sections(c));
    let mut warnings = Section::new(2, "Warnings").with_class("warnings");
    warnings.list(model.warnings.clone());
    body.push(warnings);
    body.retain(|s| !s.is_empty());
    Ok(Document {
        title: campaign::title(c),
        summary,
        body,
        warnings: model.warnings,
    })
}
