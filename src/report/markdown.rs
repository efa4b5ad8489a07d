//! The Markdown report: the seeds' tables, with intervals.

use super::markup::{Markdown, Markup};
use super::matrix;
use super::model::Report;
use super::ranks::{ranks_section, ranks_sentence};
use super::sections::{
    diff_table, environment_table, facts_table, headline, methodology, stops_table, targets_table,
    values_table,
};
use super::study::document::{blocks, Block};
use super::study::Study;
use crate::store::CampaignData;

pub fn render(c: &CampaignData, r: &Report, studies: &[Study]) -> String {
    let md = Markdown;
    let k = &c.campaign;
    let mut out = md.heading(1, &format!("{} — campaign {}", k.name, k.id));
    if !k.description.is_empty() {
        out.push_str(&md.paragraph(&k.description));
    }
    out.push_str(&md.paragraph(&format!(
        "Started {}, {}: {} of {} planned runs ok, {} failed.",
        k.started_at, k.status, k.runs_ok, k.planned_runs, k.runs_failed
    )));
    out.push_str(&md.list(&headline(r)));
    out.push_str(&md.heading(2, "Environment"));
    out.push_str(&md.table(&environment_table(&c.environment)));
    out.push_str(&md.heading(2, "Targets"));
    out.push_str(&md.table(&targets_table(c, &r.baseline)));
    out.push_str(&md.heading(2, "Methodology"));
    out.push_str(&md.list(&methodology(c, r)));
    if let Some(s) = ranks_sentence(c) {
        out.push_str(&md.paragraph(&s));
    }
    if c.stops.iter().any(|s| s.reason != "fixed") {
        out.push_str(&md.table(&stops_table(c)));
    }
    if !studies.is_empty() {
        out.push_str(&md.heading(2, "Factors"));
    }
    for s in studies {
        for b in blocks(s) {
            out.push_str(&match b {
                Block::Heading(t) => md.heading(3, &t),
                Block::Note(t) => md.paragraph(&t),
                Block::Table(t) => md.table(&t),
                Block::Curve(_) | Block::HeatMaps(_) => String::new(),
            });
        }
    }
    for w in &r.workloads {
        out.push_str(&md.heading(2, &format!("{} ({})", w.name, w.kind)));
        out.push_str(&md.paragraph(&format!(
            "Mean ± 95% CI over measured runs; primary metric {}.",
            w.primary
        )));
        let values = matrix::summary_table(w, &r.baseline);
        out.push_str(&md.table(&values.unwrap_or_else(|| values_table(w, &r.baseline))));
        let diffs = diff_table(w);
        if !diffs.rows.is_empty() {
            out.push_str(&md.paragraph(&format!("Difference from the baseline {}:", r.baseline)));
            out.push_str(&md.table(&diffs));
        }
        let facts = facts_table(c, &w.name);
        if !facts.rows.is_empty() {
            out.push_str(&md.paragraph("Measured with:"));
            out.push_str(&md.table(&facts));
        }
        out.push_str(&matrix::markdown_section(c, r, w));
        out.push_str(&ranks_section(&md, c, &w.name));
    }
    if !r.warnings.is_empty() {
        out.push_str(&md.heading(2, "Warnings"));
        out.push_str(&md.list(&r.warnings));
    }
    out
}
