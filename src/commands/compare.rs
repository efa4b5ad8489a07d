//! `storlab compare`: targets within a campaign against its baseline, or
//! the same targets and workloads in two campaigns (two releases, two
//! hosts; either may be imported) — after saying what differs between them
//! — and the release gate (`--fail-on-regression`, `--baseline-tag`).

use std::process::ExitCode;

use anyhow::{bail, Result};

use super::{EXIT_INVALID, EXIT_REGRESSION};
use crate::analysis::about::About;
use crate::analysis::comparison::{across, within, Across, Metrics, Refusal};
use crate::analysis::verdict::{judge, Judged, Verdict};
use crate::cli::{CaveatedRegressions, CompareArgs, Global, InconclusiveComparisons};
use crate::report::render::terminal;
use crate::report::verdict::{words, Form};
use crate::report::{json, outline};
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

pub fn compare(g: &Global, req: &CompareArgs) -> Result<ExitCode> {
    let db = g.db.as_path();
    if let Some(p) = req.fail_on_regression {
        if !p.is_finite() || p < 0.0 {
            bail!("--fail-on-regression takes a percentage of 0 or more, such as 5");
        }
    }
    let store = Store::open_for_reading(db)?;
    let Some((first, second)) = sides(&store, req)? else {
        return within_campaign(&store, req);
    };
    if req.baseline.is_some() {
        bail!("--baseline picks a target within one campaign; across campaigns the first (or --baseline-tag's) is the baseline");
    }
    let Some(x) = paired(&first, &second, &req.metric, req.allow_different)? else {
        return Ok(ExitCode::from(EXIT_INVALID));
    };
    if req.format.json() {
        outln!("{}", crate::foreign::to_json_pretty(&json::across(&x))?);
    } else {
        crate::console::to_stdout_styled(&terminal::summary(
            &outline::compared_across(&x),
            crate::console::columns(),
        ));
    }
    Ok(gate(
        &x.rows,
        req.fail_on_regression,
        req.caveated_regressions,
        req.inconclusive,
    ))
}

/// The two campaigns of a comparison across campaigns, baseline first;
/// `None` for a comparison within one campaign.
fn sides(store: &Store, req: &CompareArgs) -> Result<Option<(CampaignData, CampaignData)>> {
    if let Some(tag) = req.baseline_tag.as_deref() {
        if req.b.is_some() {
            bail!("with --baseline-tag, give at most one campaign (the candidate; the latest when omitted)");
        }
        let candidate = store.load_campaign(store.resolve_campaign(req.a.as_deref())?)?;
        let wanted = crate::provenance::parse_tag(tag)?;
        let matching = store.campaigns_matching(std::slice::from_ref(&wanted))?;
        // Chosen among the store's rows, and only the one chosen is read: a
        // tag that years of nightly campaigns carry reads one campaign.
        let chosen = store
            .list_campaigns()?
            .into_iter()
            .filter(|c| matching.contains(&c.id) && c.id != candidate.campaign.id)
            .filter(|c| c.name == candidate.campaign.name)
            .max_by(|a, b| (&a.started_at, a.id).cmp(&(&b.started_at, b.id)));
        let Some(base) = chosen.map(|c| store.load_campaign(c.id)).transpose()? else {
            bail!(
                "no other campaign of `{}` carries {tag} (`storlab list --where {tag}` lists the campaigns that do)",
                candidate.campaign.name
            );
        };
        return Ok(Some((base, candidate)));
    }
    let Some(b) = req.b.as_deref() else {
        return Ok(None);
    };
    let first = store.load_campaign(store.resolve_campaign(req.a.as_deref())?)?;
    let second = store.load_campaign(store.resolve_campaign(Some(b))?)?;
    Ok(Some((first, second)))
}

fn within_campaign(store: &Store, req: &CompareArgs) -> Result<ExitCode> {
    if req.allow_different || !req.metric.is_empty() {
        bail!("--allow-different and --metric apply to comparisons across campaigns (compare A B)");
    }
    // The verdicts are the summary's (`show`'s): the runs are read for the
    // figures its sections declare, not every figure a run recorded.
    let asked = crate::analysis::campaign::Options {
        baseline: req.baseline.clone(),
        summary_only: true,
        ..Default::default()
    };
    let id = store.resolve_campaign(req.a.as_deref())?;
    let first = super::query::read_for(store, id, &asked)?;
    let rows = within(&first, req.baseline.as_deref())?;
    let replicas = match first.replicas.is_empty() {
        true => None,
        false => crate::analysis::analyse(&first, &asked)?.replicas,
    };
    if req.format.json() {
        let doc = json::within(&About::of(&first), &rows, replicas.as_ref());
        outln!("{}", crate::foreign::to_json_pretty(&doc)?);
    } else {
        let doc = outline::compared_within(first.campaign.id, &rows, replicas.as_ref());
        crate::console::to_stdout_styled(&terminal::summary(&doc, crate::console::columns()));
    }
    Ok(gate(
        &rows,
        req.fail_on_regression,
        req.caveated_regressions,
        req.inconclusive,
    ))
}

/// The release gate: exit 1 when a primary metric regressed beyond `pct`;
/// a regression whose verdict carries a caveat fails it too unless
/// `caveated` is `warn`; an inconclusive comparison whose interval reaches
/// a regression beyond `pct` fails it under `inconclusive` `fail`. Each
/// regression is printed with its caveats.
fn gate(
    rows: &[Verdict],
    pct: Option<f64>,
    caveated: CaveatedRegressions,
    inconclusive: InconclusiveComparisons,
) -> ExitCode {
    let Some(pct) = pct else {
        return ExitCode::SUCCESS;
    };
    let judged = judge(
        rows,
        pct,
        caveated == CaveatedRegressions::Warn,
        inconclusive,
    );
    if inconclusive != InconclusiveComparisons::Pass {
        for r in &judged.unsure {
            errln!(
                "inconclusive, may hide a regression beyond {pct}% (--inconclusive {}): {}",
                inconclusive.word(),
                words(*r, Form::Gate)
            );
        }
    }
    let unsure_failing = inconclusive == InconclusiveComparisons::Fail && !judged.unsure.is_empty();
    for r in &judged.failing {
        errln!("regression: {}", words(*r, Form::Gate));
    }
    for r in &judged.waived {
        errln!(
            "regression, caveated, not failing the gate (--caveated-regressions warn): {}",
            words(*r, Form::Gate)
        );
    }
    let caveated_failing = judged.failing.iter().filter(|r| r.caveated()).count();
    if caveated_failing > 0 {
        errln!(
            "caveated regressions above: {caveated_failing}; they fail the gate all the same (--caveated-regressions fail, the default): a measurement that may be wrong does not clear a release. Fix what the caveat names, or pass --caveated-regressions warn to let them pass"
        );
    }
    if unsure_failing {
        errln!(
            "inconclusive comparisons above: {}; they fail the gate (--inconclusive fail): more runs would show whether they regressed",
            judged.unsure.len()
        );
    }
    if !judged.fails() {
        errln!("{}", words(&judged, Form::Gate));
    }
    ExitCode::from(gate_status(&judged))
}

/// The exit status of a judged gate: [`EXIT_REGRESSION`] when it fails
/// (docs/cli.md, "The regression gate"), else 0.
fn gate_status(judged: &Judged) -> u8 {
    match judged.fails() {
        true => EXIT_REGRESSION,
        false => 0,
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::analysis::verdict::tests::{halved, unsure};
    use crate::cli::{Cli, Command};

    // docs/cli.md: an inconclusive comparison whose interval reaches a
    // regression beyond PCT fails the gate (exit 1) under `--inconclusive
    // fail`; under `warn`, the default, and `pass` the gate passes (exit
    // 0); a regression fails it under every policy.
    #[test]
    fn the_gate_exit_status_follows_the_inconclusive_policy() {
        use InconclusiveComparisons::{Fail, Pass, Warn};
        let v = unsure();
        let rows = std::slice::from_ref(&v);
        assert_eq!(gate_status(&judge(rows, 5.0, false, Fail)), 1);
        assert_eq!(EXIT_REGRESSION, 1);
        assert_eq!(gate_status(&judge(rows, 5.0, false, Warn)), 0);
        assert_eq!(gate_status(&judge(rows, 5.0, false, Pass)), 0);
        // Its interval stays within 20% on the bad side: nothing to hide.
        assert_eq!(gate_status(&judge(rows, 20.0, false, Fail)), 0);
        let regressed = [halved("clean", &[])];
        for policy in [Fail, Warn, Pass] {
            assert_eq!(gate_status(&judge(&regressed, 5.0, false, policy)), 1);
        }
        // The default policy, as the command line parses it: warn.
        let cli = Cli::try_parse_from(["storlab", "compare", "--fail-on-regression", "5"]).unwrap();
        let Command::Compare(args) = cli.command else {
            panic!("not compare");
        };
        let default = judge(rows, 5.0, false, args.inconclusive);
        assert_eq!((args.inconclusive, gate_status(&default)), (Warn, 0));
        let cli = Cli::try_parse_from([
            "storlab",
            "compare",
            "--fail-on-regression",
            "5",
            "--inconclusive",
            "fail",
        ])
        .unwrap();
        let Command::Compare(args) = cli.command else {
            panic!("not compare");
        };
        assert_eq!(gate_status(&judge(rows, 5.0, false, args.inconclusive)), 1);
    }
}
