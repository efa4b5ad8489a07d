//! A campaign's replicas side by side (`storlab replicate`): per primary
//! comparison, each replica's verdict with its effect, and whether they
//! agree ([`crate::analysis::replicas`]).

use crate::analysis::replicas::{Agreement, Replicas};
use crate::report::document::Section;
use crate::report::format::Notation;
use crate::report::table::{Table, Tone};
use crate::report::verdict::{words, Form};

/// The section, for a campaign with replicas.
pub fn section(r: &Replicas) -> Section {
    let mut s = Section::new(2, "Replicas");
    let [agree, consistent, apart, conflict] = r.counts();
    let ids: Vec<String> = r.campaigns.iter().map(i64::to_string).collect();
    s.text(format!(
        "Campaigns {} ran the same experiment (`storlab replicate`); each column gives a replica's effect with the interval its verdict was judged by, in one notation. Of {} {}, the replicas agree on {agree}, are consistent on {consistent} (no replica different where another is equivalent or different the other way, but not all decided), apart on {apart} (the same outcome, intervals that do not overlap) and conflict on {conflict}.",
        ids.join(", "),
        r.comparisons.len(),
        match r.comparisons.len() {
            1 => "comparison",
            _ => "comparisons",
        }
    ));
    s.table(table(r));
    s
}

/// A row per comparison: each replica's verdict, then their agreement.
fn table(r: &Replicas) -> Table {
    let mut header = vec!["workload".to_string(), "target".to_string()];
    header.extend(r.campaigns.iter().map(|c| format!("campaign {c}")));
    header.push("replicas".into());
    let names: Vec<&str> = header.iter().map(String::as_str).collect();
    let right = vec![false; names.len()];
    let mut t = Table::new(&names, &right);
    let last = names.len() - 1;
    let notation = notation(r);
    for c in &r.comparisons {
        let mut row = vec![c.workload.clone(), c.target.clone()];
        row.extend(c.each.iter().map(|v| {
            v.as_ref()
                .map_or("—".to_string(), |v| words(v, Form::Replica(notation)))
        }));
        row.push(words(c, Form::Word));
        t.push(row);
        let tone = match c.agreement {
            Agreement::Agree => Tone::Same,
            Agreement::Consistent | Agreement::Apart => Tone::Unsure,
            Agreement::Conflict => Tone::Worse,
        };
        t.tones.insert((t.rows.len() - 1, last), tone);
    }
    let columns: Vec<String> = r
        .campaigns
        .iter()
        .map(|c| format!("campaign {c}"))
        .collect();
    let wrap: Vec<&str> = columns
        .iter()
        .map(String::as_str)
        .chain(["replicas"])
        .collect();
    t.may_wrap(&wrap);
    t
}

/// One notation for every replica's effect and interval: ratios when any
/// is ×2 or more from the baseline either way, else percentages.
fn notation(r: &Replicas) -> Notation {
    let pcts: Vec<f64> = r
        .comparisons
        .iter()
        .flat_map(|c| c.each.iter().flatten())
        .filter_map(|v| v.candidate.comparison.as_ref())
        .flat_map(|c| [c.diff_pct, c.diff_pct_ci.low, c.diff_pct_ci.high])
        .collect();
    Notation::of(&pcts)
}
