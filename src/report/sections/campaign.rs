//! The campaign's own sections: what ran, the headline verdicts, the
//! environment and the targets as spec tables.

use serde_json::Value;

use crate::metric::Unit;
use crate::report::document::Section;
use crate::report::format::format_value;
use crate::report::model::Report;
use crate::report::table::Table;
use crate::report::text::{diff_text, p_text, settle_text};
use crate::stats::Verdict;
use crate::store::CampaignData;

/// The title of the campaign's report.
pub fn title(c: &CampaignData) -> String {
    format!("{} — campaign {}", c.campaign.name, c.campaign.id)
}

/// The description and what ran, under the title.
pub fn intro(c: &CampaignData) -> Section {
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

/// One line per comparison of a primary metric.
pub fn headline_section(r: &Report) -> Section {
    let mut s = Section::untitled(1).with_class("headline");
    s.list(headline(r));
    s
}

pub fn environment_section(c: &CampaignData) -> Section {
    let mut s = Section::new(2, "Environment");
    s.table(environment_table(&c.environment));
    s
}

pub fn targets_section(c: &CampaignData, baseline: &str) -> Section {
    let mut s = Section::new(2, "Targets");
    s.table(targets_table(c, baseline));
    s
}

/// The environment as a spec table, as the seeds typed it by hand.
fn environment_table(env: &Value) -> Table {
    let mut t = Table::new(&["", ""], &[false, false]);
    let rows = [
        ("Host", env["hostname"].as_str().map(String::from)),
        (
            "CPU",
            env["cpu_model"]
                .as_str()
                .map(|m| format!("{m} ({} CPUs)", env["cpu_count"])),
        ),
        (
            "Memory",
            env["memory_bytes"]
                .as_f64()
                .map(|b| format_value(b, Unit::Bytes)),
        ),
        ("Kernel", env["kernel"].as_str().map(String::from)),
        (
            "Distribution",
            env["distribution"].as_str().map(String::from),
        ),
        ("storlab", env["storlab_version"].as_str().map(String::from)),
        ("Run as root", env["root"].as_bool().map(|b| b.to_string())),
    ];
    for (k, v) in rows {
        t.push(vec![k.into(), v.unwrap_or_else(|| "unknown".into())]);
    }
    t
}

/// Each target's recorded facts.
fn targets_table(c: &CampaignData, baseline: &str) -> Table {
    let mut t = Table::new(
        &[
            "target",
            "kind",
            "filesystem",
            "mount options",
            "device",
            "size",
            "free",
        ],
        &[false, false, false, false, false, true, true],
    );
    for tg in &c.targets {
        let f = &tg.facts;
        let dev = &f["block_device"];
        let device = if dev.is_object() {
            let rot = match dev["rotational"].as_bool() {
                Some(true) => "rotational",
                Some(false) => "non-rotational",
                None => "?",
            };
            format!(
                "{} {} ({rot}, scheduler {})",
                dev["name"].as_str().unwrap_or("?"),
                dev["model"].as_str().unwrap_or("?"),
                dev["scheduler"].as_str().unwrap_or("?")
            )
        } else {
            f["mount_source"].as_str().unwrap_or("none").to_string()
        };
        let name = if tg.name == baseline {
            format!("{} (baseline)", tg.name)
        } else {
            tg.name.clone()
        };
        t.push(vec![
            name,
            tg.kind.clone(),
            f["fs_type"].as_str().unwrap_or("?").into(),
            f["mount_options"].as_str().unwrap_or("?").into(),
            device,
            f["size_bytes"]
                .as_f64()
                .map(|b| format_value(b, Unit::Bytes))
                .unwrap_or_default(),
            f["free_bytes"]
                .as_f64()
                .map(|b| format_value(b, Unit::Bytes))
                .unwrap_or_default(),
        ]);
    }
    t
}

/// A one-line verdict per non-baseline target on the primary metric.
fn headline(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    for w in &r.workloads {
        let Some(m) = w.primary_metric() else {
            continue;
        };
        for t in m.targets.iter().filter(|t| t.comparison.is_some()) {
            let mut line = match t.verdict {
                Some(v) if v != Verdict::NoSignificantDifference => format!(
                    "{}: {} is {} than {} by {} ({}, p {})",
                    w.name,
                    t.target,
                    v.word(m.direction),
                    r.baseline,
                    diff_text(t),
                    m.name,
                    p_text(t)
                ),
                _ => format!(
                    "{}: no significant difference between {} and {} ({} {}, p {})",
                    w.name,
                    t.target,
                    r.baseline,
                    m.name,
                    diff_text(t),
                    p_text(t)
                ),
            };
            if let Some(more) = settle_text(t) {
                line.push_str(&format!("; {more}"));
            }
            out.push(line);
        }
    }
    out
}
