//! `storlab compare [A] [B] [--fail-on-regression PCT]`: the release gate.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};

use crate::report::compare::{between, table, within};
use crate::store::Store;

pub fn compare(
    db: &Path,
    a: Option<&str>,
    b: Option<&str>,
    baseline: Option<&str>,
    gate: Option<f64>,
) -> Result<ExitCode> {
    if let Some(p) = gate {
        if !p.is_finite() || p < 0.0 {
            bail!("--fail-on-regression takes a percentage of 0 or more, such as 5");
        }
    }
    let store = Store::open_existing(db)?;
    let first = store.load_campaign(store.resolve_campaign(a)?)?;
    let rows = match b {
        None => within(&first, baseline)?,
        Some(b) => {
            if baseline.is_some() {
                bail!("--baseline picks a target within one campaign; with two campaigns, A is the baseline");
            }
            let second = store.load_campaign(store.resolve_campaign(Some(b))?)?;
            let rows = between(&first, &second);
            if rows.is_empty() {
                bail!(
                    "campaigns {} and {} share no target–workload pair (matched by name)",
                    first.campaign.id,
                    second.campaign.id
                );
            }
            rows
        }
    };
    out!("{}", table(&rows).render_text());
    let Some(pct) = gate else {
        return Ok(ExitCode::SUCCESS);
    };
    let regressions: Vec<_> = rows.iter().filter(|r| r.regressed(pct)).collect();
    for r in &regressions {
        let d = r
            .candidate
            .comparison
            .as_ref()
            .map(|c| c.diff_pct)
            .unwrap_or(f64::NAN);
        errln!(
            "regression: {} {} on {}: {:+.1}% against {} (p {:.4})",
            r.workload,
            r.metric,
            r.candidate_label,
            d,
            r.baseline_label,
            r.candidate
                .comparison
                .as_ref()
                .map(|c| c.p_value)
                .unwrap_or(f64::NAN)
        );
    }
    if regressions.is_empty() {
        errln!("no primary metric is significantly worse by more than {pct}%");
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::FAILURE)
    }
}
