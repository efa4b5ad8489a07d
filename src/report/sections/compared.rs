//! What was compared, side by side ([`crate::analysis::setup`]): the
//! targets as columns — their kind, the parameters they asked for, what
//! storlab read back once they were provisioned, the versions of what
//! served them, the device beneath — a value that differs from the
//! baseline's marked; then, per workload kind, its workloads' parameters,
//! those that differ between them marked. The requested differences that
//! are none ([`crate::analysis::requested`]) stand above them.

use crate::analysis::setup::SideBySide;
use crate::analysis::CampaignAnalysis;
use crate::report::document::Section;
use crate::report::table::Table;

/// The section "What was compared": the warnings on requested
/// differences that are none (styled as warnings), then the targets' and
/// the workloads' tables.
pub fn sections(a: &CampaignAnalysis) -> Vec<Section> {
    let baseline = &a.model.baseline;
    let title = "What was compared";
    let mut out = Vec::new();
    if !a.setup.is_empty() {
        let mut w = Section::new(2, title).with_class("warnings");
        w.list(a.setup.iter().map(|w| w.text.clone()).collect());
        out.push(w);
    }
    // The tables folded; the warnings above them (when any) stay open.
    let mut s = match out.is_empty() {
        true => Section::new(2, title),
        false => Section::new(3, "Targets and workloads side by side"),
    }
    .with_class("compared")
    .folded();
    s.text(format!(
        "Targets side by side: what each asked for, what was read back once it was provisioned, versions and devices; a value that differs from the baseline {baseline}'s is marked."
    ));
    s.table(table(&a.compared.targets));
    s.text("Workloads by kind, side by side: their parameters that are not at their defaults or differ between them; a parameter that differs between them is marked.");
    out.push(s);
    // Small tables, laid side by side where the page is wide enough.
    let mut workloads = Section::untitled(3).with_class("side");
    for t in &a.compared.workloads {
        workloads.table(table(t));
    }
    out.push(workloads);
    out
}

/// The columns as a table, the values that differ marked.
fn table(s: &SideBySide) -> Table {
    let mut head = vec![s.corner.clone()];
    head.extend(s.header.iter().cloned());
    let mut t = Table {
        right: vec![false; head.len()],
        header: head,
        ..Table::default()
    };
    for (label, values) in &s.rows {
        let r = t.rows.len();
        let first = &values[0];
        let varies = values.iter().any(|v| v != first);
        for (i, v) in values.iter().enumerate() {
            let differs = match s.against_first {
                true => i > 0 && v != first,
                false => varies,
            };
            if differs {
                t.marked.insert((r, i + 1));
            }
        }
        let mut cells = vec![label.clone()];
        cells.extend(values.iter().map(|v| v.clone().unwrap_or_default()));
        t.push(cells);
    }
    t
}
