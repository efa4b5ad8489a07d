//! `storlab history [EXPERIMENT]`: the campaigns of one experiment in
//! order, with the change from one to the next and where a step began;
//! `-o history.html` draws each series.

use std::process::ExitCode;

use anyhow::{bail, Result};

use crate::analysis::history::{build, Order};
use crate::cli::{Global, HistoryArgs};
use crate::report::history_page;
use crate::store::{CampaignData, Parts, Store};

pub fn history(g: &Global, req: &HistoryArgs) -> Result<ExitCode> {
    let db = g.db.as_path();
    let output = req.output.as_deref();
    super::destination::refuse_output_store(output, db)?;
    let order = Order::parse(&req.by)?;
    let store = Store::open_for_reading(db)?;
    let (name, ids) = experiment_campaigns(&store, req.experiment.as_deref())?;
    let campaigns = grouped(&store, &ids, &req.metric)?;
    let Some(h) = build(campaigns, order, &req.metric) else {
        bail!("no campaign of `{name}` to show");
    };
    let html = output.is_some_and(|p| {
        p.extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("html"))
    });
    let text = if html {
        history_page::html(&h)?
    } else if req.format.json() {
        format!("{}\n", crate::foreign::to_json_pretty(&h)?)
    } else {
        // Names, tags and versions come from every store imported.
        crate::foreign::visible_lines(&history_page::text(&h, crate::console::columns()))
            .into_owned()
    };
    super::emit(&text, output, db)?;
    Ok(ExitCode::SUCCESS)
}

/// The experiment's name (the latest campaign's when none is given) and
/// its campaigns' ids.
fn experiment_campaigns(store: &Store, experiment: Option<&str>) -> Result<(String, Vec<i64>)> {
    let all = store.list_campaigns()?;
    let name = match experiment {
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
    Ok((name, ids))
}

/// The campaigns `ids`, each group of replicas loaded once: its first
/// campaign carrying the others (replicas are one configuration).
fn grouped(store: &Store, ids: &[i64], metrics: &[String]) -> Result<Vec<CampaignData>> {
    let load = |id: i64| -> Result<CampaignData> {
        let head = store.load_campaign_head(id)?;
        let parts = figures(&head, metrics);
        store.with_runs(head, &parts)
    };
    let mut campaigns: Vec<CampaignData> = Vec::new();
    let mut seen: Vec<i64> = Vec::new();
    for &id in ids {
        if seen.contains(&id) {
            continue;
        }
        let group: Vec<i64> = store
            .replica_group(id)?
            .into_iter()
            .filter(|g| ids.contains(g))
            .collect();
        seen.extend(&group);
        let mut first = load(group.first().copied().unwrap_or(id))?;
        for &other in group.iter().skip(1) {
            first.replicas.push(load(other)?);
        }
        campaigns.push(first);
    }
    Ok(campaigns)
}

/// The figures a history reads of each run of campaign `c`: those named,
/// else its workloads' primary metrics, and what its capacity searches
/// are judged from. A history of years reads a few figures per run, not
/// everything every run recorded.
fn figures(c: &CampaignData, named: &[String]) -> Parts {
    let mut names: Vec<String> = match named.is_empty() {
        false => named.to_vec(),
        true => c
            .workloads
            .iter()
            .map(|w| w.primary_metric.clone())
            .collect(),
    };
    for (_, spec) in c.searches() {
        names.extend(spec.figures());
    }
    Parts::figures(&names)
}
