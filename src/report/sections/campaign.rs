//! The campaign's own sections: what ran, the headline verdicts and the
//! environment as a spec table.

use crate::analysis::about::About;
use crate::analysis::model::WorkloadReport;
use crate::analysis::CampaignAnalysis;
use crate::fact::Environment;
use crate::metric::Unit;
use crate::report::document::Section;
use crate::report::format::format_value;
use crate::report::table::Table;
use crate::report::verdict::{words, Form};

/// The title of the campaign's report.
pub fn title(c: &About) -> String {
    format!("{} — campaign {}", c.campaign.name, c.campaign.id)
}

/// The description and what ran, under the title.
pub fn intro(c: &About) -> Section {
    let k = &c.campaign;
    let mut s = Section::untitled(1);
    if !k.description.is_empty() {
        s.text(k.description.clone());
    }
    s.text(format!(
        "Started {}, {}: {} of {} planned runs ok, {} failed.",
        k.started_at, k.status, k.runs_ok, k.planned_runs, k.runs_failed
    ));
    s
}

/// One line per statement of the headline (a comparison of a primary
/// metric, or a sweep's alike ones), then the sentences `more` adds on
/// each workload (what the verdicts rest on: read cells that came from
/// memory) as notes under them, not among them.
pub fn headline_section(
    a: &CampaignAnalysis,
    more: impl Fn(&WorkloadReport) -> Vec<String>,
) -> Section {
    let mut s = Section::untitled(1).with_class("headline");
    s.list(
        a.headline
            .iter()
            .map(|x| words(x, Form::Headline))
            .collect(),
    );
    for note in a.model.workloads.iter().flat_map(more) {
        s.text(note);
    }
    s
}

pub fn environment_section(c: &About) -> Section {
    let mut s = Section::new(2, "Environment");
    let mut t = environment_table(&c.environment);
    for row in crate::report::provenance::provenance_rows(c) {
        t.push(row);
    }
    s.table(t);
    s
}

/// The environment as a spec table, as the seeds typed it by hand.
fn environment_table(e: &Environment) -> Table {
    let e = e.clone();
    let mut t = Table::new(&["", ""], &[false, false]);
    let cpu = e.cpu_model.map(|m| {
        let count = e.cpu_count.map_or("null".to_string(), |n| n.to_string());
        format!("{m} ({count} CPUs)")
    });
    let rows = [
        ("Host", e.hostname),
        ("CPU", cpu),
        (
            "Memory",
            e.memory_bytes.map(|b| format_value(b, Unit::Bytes)),
        ),
        ("Kernel", e.kernel),
        ("Distribution", e.distribution),
        ("storlab", e.storlab_version),
        ("Run as root", e.root.map(|b| b.to_string())),
    ];
    for (k, v) in rows {
        t.push(vec![k.into(), v.unwrap_or_else(|| "unknown".into())]);
    }
    t
}
