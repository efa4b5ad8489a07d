//! `storlab history [EXPERIMENT]`: the campaigns of one experiment in
//! order, with the change from one to the next and where a step began.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};

use crate::report::history::{build, History, Order, Step};
use crate::report::sections::{diff_text, mean_ci_text, p_text};
use crate::report::table::Table;
use crate::store::Store;

/// What `storlab history` was asked.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub experiment: Option<&'a str>,
    pub by: &'a str,
    pub metrics: &'a [String],
    pub json: bool,
}

pub fn history(db: &Path, req: Request<'_>) -> Result<ExitCode> {
    let order = Order::parse(req.by)?;
    let store = Store::open_existing(db)?;
    let all = store.list_campaigns()?;
    let name = match req.experiment {
        Some(n) => n.to_string(),
        None => match all.last() {
            Some(c) => c.name.clone(),
            None => bail!("the store holds no campaigns; run one first (`storlab run`)"),
        },
    };
    let ids: Vec<i64> = all
        .iter()
        .filter(|c| c.name == name)
        .map(|c| c.id)
        .collect();
    if ids.is_empty() {
        let names: std::collections::BTreeSet<&str> = all.iter().map(|c| c.name.as_str()).collect();
        bail!(
            "no campaign of an experiment named `{name}`; the store has {}",
            names.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    let campaigns = ids
        .iter()
        .map(|&id| store.load_campaign(id))
        .collect::<Result<Vec<_>>>()?;
    let Some(h) = build(campaigns, order, req.metrics) else {
        bail!("no campaign of `{name}` to show");
    };
    if req.json {
        outln!("{}", serde_json::to_string_pretty(&h)?);
    } else {
        out!("{}", text(&h));
    }
    Ok(ExitCode::SUCCESS)
}

/// The history as terminal text: one table per series, then its step.
pub fn text(h: &History) -> String {
    let mut out = format!(
        "history of `{}` (workloads {}): {} campaign(s)\n",
        h.experiment,
        h.fingerprint,
        h.points.len()
    );
    for (id, why) in &h.left_out {
        out.push_str(&format!("left out: campaign {id} {why}\n"));
    }
    for s in &h.series {
        out.push_str(&format!(
            "\n{} on {}: {} ({})\n",
            s.workload,
            s.target,
            s.metric,
            s.direction.as_str()
        ));
        let mut t = Table::new(
            &[
                "campaign",
                "at",
                "tags",
                "changed",
                "runs",
                "mean ± 95% CI",
                "change from previous [95% CI]",
                "p",
                "verdict",
            ],
            &[true, false, false, false, true, true, true, true, false],
        );
        for e in &s.entries {
            let point = h.points.iter().find(|p| p.campaign == e.campaign);
            let tags = point
                .map(|p| {
                    p.tags
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            let changed = point
                .map(|p| {
                    p.version_changes
                        .iter()
                        .map(|(k, (a, b))| format!("{k}: {a} → {b}"))
                        .collect::<Vec<_>>()
                        .join("; ")
                })
                .unwrap_or_default();
            let verdict = e.stats.verdict.map(|v| v.word(s.direction)).unwrap_or("—");
            t.push(vec![
                e.campaign.to_string(),
                point.map(|p| p.label.clone()).unwrap_or_default(),
                tags,
                changed,
                e.stats.values.len().to_string(),
                mean_ci_text(&e.stats, s.unit),
                if e.stats.comparison.is_some() {
                    diff_text(&e.stats)
                } else {
                    "—".into()
                },
                if e.stats.comparison.is_some() {
                    p_text(&e.stats)
                } else {
                    "—".into()
                },
                verdict.to_string(),
            ]);
        }
        out.push_str(&t.render_text());
        out.push_str(&step_text(&s.step));
    }
    out
}

fn step_text(step: &Step) -> String {
    match step {
        Step::Found { campaign, change_pct, word, test } => format!(
            "step: {} began at campaign {campaign}: {change_pct:+.1}% after it against before ({word}; Pettitt K = {}, p = {:.4})\n",
            if *word == "slower" { "a regression" } else { "an improvement" },
            test.k,
            test.p_value
        ),
        Step::None { test } => format!(
            "no step: the series scatters without a significant change of level (Pettitt p = {:.3})\n",
            test.p_value
        ),
        Step::Untested => "no change-point test: fewer than two campaigns measured it\n".into(),
    }
}
