//! `storlab compare`: targets within a campaign against its baseline, or
//! the same targets and workloads in two campaigns (two releases, two
//! hosts; either may be imported) — after saying what differs between them
//! — and the release gate (`--fail-on-regression`, `--baseline-tag`).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use serde_json::json;

use super::EXIT_INVALID;
use crate::analysis::comparison::{
    across, across_json, side_json, within, Across, Metrics, Refusal, Row,
};
use crate::report::sections::comparisons::{across_table, table};
use crate::store::{CampaignData, Store};

/// The comparison of campaign `second` against `first` for `compare` and
/// `report A B`; `None` when it is refused for differing workloads, which
/// has been said on stderr (exit 2).
pub(super) fn paired(
    first: &CampaignData,
    second: &CampaignData,
    metrics: &[String],
    allow_different: bool,
) -> Result<Option<Across>> {
    match across(
        first,
        second,
        &Metrics::from_names(metrics),
        allow_different,
    ) {
        Ok(x) => Ok(Some(x)),
        Err(Refusal::Different(why)) => {
            errln!("error: {why}");
            Ok(None)
        }
        Err(e) => bail!("{e}"),
    }
}

/// What `storlab compare` was asked.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub a: Option<&'a str>,
    pub b: Option<&'a str>,
    pub baseline: Option<&'a str>,
    pub gate: Option<f64>,
    pub baseline_tag: Option<&'a str>,
    pub allow_different: bool,
    pub metrics: &'a [String],
    pub json: bool,
}

pub fn compare(db: &Path, req: Request<'_>) -> Result<ExitCode> {
    if let Some(p) = req.gate {
        if !p.is_finite() || p < 0.0 {
            bail!("--fail-on-regression takes a percentage of 0 or more, such as 5");
        }
    }
    let store = Store::open_for_reading(db)?;
    let Some((first, second)) = sides(&store, &req)? else {
        return within_campaign(&store, &req);
    };
    if req.baseline.is_some() {
        bail!("--baseline picks a target within one campaign; across campaigns the first (or --baseline-tag's) is the baseline");
    }
    let (a, b) = (first.campaign.id, second.campaign.id);
    let Some(x) = paired(&first, &second, req.metrics, req.allow_different)? else {
        return Ok(ExitCode::from(EXIT_INVALID));
    };
    if req.json {
        let doc = across_json(&first, &second, &x);
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", x.differences.text(a, b));
        for c in &x.caveats {
            outln!("caveat: {c}");
        }
        outln!();
        crate::console::to_stdout_styled(
            &across_table(&x.rows, a, b).render_text_within(crate::console::columns()),
        );
    }
    Ok(gate(&x.rows, req.gate))
}

/// The two campaigns of a comparison across campaigns, baseline first;
/// `None` for a comparison within one campaign.
fn sides(store: &Store, req: &Request<'_>) -> Result<Option<(CampaignData, CampaignData)>> {
    if let Some(tag) = req.baseline_tag {
        if req.b.is_some() {
            bail!("with --baseline-tag, give at most one campaign (the candidate; the latest when omitted)");
        }
        let candidate = store.load_campaign(store.resolve_campaign(req.a)?)?;
        let wanted = crate::provenance::parse_tag(tag)?;
        let found = store
            .campaigns_matching(std::slice::from_ref(&wanted))?
            .into_iter()
            .filter(|&id| id != candidate.campaign.id)
            .map(|id| store.load_campaign(id))
            .collect::<Result<Vec<_>>>()?;
        let Some(base) = found
            .into_iter()
            .filter(|c| c.campaign.name == candidate.campaign.name)
            .max_by_key(|c| (c.campaign.started_at.clone(), c.campaign.id))
        else {
            bail!(
                "no other campaign of `{}` carries {tag} (`storlab list --where {tag}` lists the campaigns that do)",
                candidate.campaign.name
            );
        };
        return Ok(Some((base, candidate)));
    }
    let Some(b) = req.b else {
        return Ok(None);
    };
    let first = store.load_campaign(store.resolve_campaign(req.a)?)?;
    let second = store.load_campaign(store.resolve_campaign(Some(b))?)?;
    Ok(Some((first, second)))
}

fn within_campaign(store: &Store, req: &Request<'_>) -> Result<ExitCode> {
    if req.allow_different || !req.metrics.is_empty() {
        bail!("--allow-different and --metric apply to comparisons across campaigns (compare A B)");
    }
    let first = store.load_campaign(store.resolve_campaign(req.a)?)?;
    let rows = within(&first, req.baseline)?;
    if req.json {
        let doc = json!({ "campaign": side_json(&first), "rows": rows });
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        crate::console::to_stdout_styled(
            &table(&rows).render_text_within(crate::console::columns()),
        );
    }
    Ok(gate(&rows, req.gate))
}

/// The release gate: exit 1 when a primary metric regressed beyond `pct`.
fn gate(rows: &[Row], pct: Option<f64>) -> ExitCode {
    let Some(pct) = pct else {
        return ExitCode::SUCCESS;
    };
    let regressions: Vec<&Row> = rows
        .iter()
        .filter(|r| r.primary && r.regressed(pct))
        .collect();
    for r in &regressions {
        let c = r.candidate.comparison.as_ref();
        errln!(
            "regression: {} {} on {}: {:+.1}% against {} (p {:.4})",
            r.workload,
            r.metric,
            r.candidate_label,
            c.map(|c| c.diff_pct).unwrap_or(f64::NAN),
            r.baseline_label,
            c.map(|c| c.p_value).unwrap_or(f64::NAN)
        );
    }
    if regressions.is_empty() {
        errln!("no primary metric is significantly worse by more than {pct}%");
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
