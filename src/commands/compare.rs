//! `storlab compare`: targets within a campaign against its baseline, or
//! the same targets and workloads in two campaigns (two releases, two
//! hosts; either may be imported) — after saying what differs between them
//! — and the release gate (`--fail-on-regression`, `--baseline-tag`).

use std::process::ExitCode;

use anyhow::{bail, Result};
use serde_json::json;

use super::EXIT_INVALID;
use crate::analysis::comparison::{
    across, across_json, side_json, within, Across, Metrics, Refusal,
};
use crate::analysis::verdict::Verdict;
use crate::cli::{CaveatedRegressions, CompareArgs, Global, InconclusiveComparisons};
use crate::report::document::{Document, Section};
use crate::report::render::terminal;
use crate::report::sections::comparisons::{across_table, table};
use crate::report::verdict::{words, Form};
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
    let (a, b) = (first.campaign.id, second.campaign.id);
    let Some(x) = paired(&first, &second, &req.metric, req.allow_different)? else {
        return Ok(ExitCode::from(EXIT_INVALID));
    };
    if req.format.json() {
        let doc = across_json(&first, &second, &x);
        outln!("{}", crate::foreign::to_json_pretty(&doc)?);
    } else {
        crate::console::to_stdout_styled(&terminal::summary(
            &across_document(&x, a, b),
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

/// What `compare A B` prints, as a report document for the terminal
/// renderer (fitted to the width, foreign text made visible): what differs
/// and the caveats, then the rows.
fn across_document(x: &Across, a: i64, b: i64) -> Document {
    let mut head = Section::untitled(2);
    head.text(x.differences.text(a, b).trim_end());
    if !x.caveats.is_empty() {
        let caveats: Vec<String> = x.caveats.iter().map(|c| format!("caveat: {c}")).collect();
        head.text(caveats.join("\n"));
    }
    let mut rows = Section::untitled(2);
    rows.table(across_table(&x.rows, a, b));
    Document::terminal_only(
        format!("campaign {b} against campaign {a}"),
        vec![head, rows],
    )
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
    let first = store.load_campaign(store.resolve_campaign(req.a.as_deref())?)?;
    let first = store.with_replicas(first, &crate::store::Parts::terminal())?;
    let rows = within(&first, req.baseline.as_deref())?;
    let replicas = match first.replicas.is_empty() {
        true => None,
        false => {
            let asked = crate::analysis::campaign::Options {
                baseline: req.baseline.clone(),
                ..Default::default()
            };
            crate::analysis::analyse(&first, &asked)?.replicas
        }
    };
    if req.format.json() {
        let doc = json!({ "campaign": side_json(&first), "rows": rows, "replicas": replicas });
        outln!("{}", crate::foreign::to_json_pretty(&doc)?);
    } else {
        let mut section = Section::untitled(2);
        section.table(table(&rows));
        let mut sections = vec![section];
        sections.extend(
            replicas
                .as_ref()
                .map(crate::report::sections::replicas::section),
        );
        let doc = Document::terminal_only(format!("campaign {}", first.campaign.id), sections);
        crate::console::to_stdout_styled(&terminal::summary(&doc, crate::console::columns()));
    }
    Ok(gate(
        &rows,
        req.fail_on_regression,
        req.caveated_regressions,
        req.inconclusive,
    ))
}

/// The regressions of a gate: those that fail it, and those printed but
/// let pass (caveated ones, under [`CaveatedRegressions::Warn`]); and the
/// inconclusive comparisons that may hide one.
#[derive(Debug)]
struct Judged<'a> {
    failing: Vec<&'a Verdict>,
    waived: Vec<&'a Verdict>,
    unsure: Vec<&'a Verdict>,
}

/// The primary metrics of `rows` significantly worse by more than `pct`,
/// split by how `caveated` counts those whose verdict carries a caveat;
/// and those inconclusive whose interval reaches that far.
fn judge(rows: &[Verdict], pct: f64, caveated: CaveatedRegressions) -> Judged<'_> {
    let (waived, failing) = rows
        .iter()
        .filter(|r| r.primary && r.regressed(pct))
        .partition(|r| caveated == CaveatedRegressions::Warn && r.caveated());
    let unsure = rows
        .iter()
        .filter(|r| r.primary && r.may_hide_regression(pct))
        .collect();
    Judged {
        failing,
        waived,
        unsure,
    }
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
    let judged = judge(rows, pct, caveated);
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
    if !judged.failing.is_empty() || unsure_failing {
        return ExitCode::FAILURE;
    }
    errln!("{}", pass_text(rows, pct, &judged, inconclusive));
    ExitCode::SUCCESS
}

/// The line of a gate that passed: what it judged, and what it let pass.
fn pass_text(
    rows: &[Verdict],
    pct: f64,
    judged: &Judged,
    inconclusive: InconclusiveComparisons,
) -> String {
    let caveated = rows.iter().filter(|r| r.primary && r.caveated()).count();
    let waived = judged.waived.len();
    let mut line = format!("no primary metric is significantly worse by more than {pct}%");
    if waived > 0 {
        line = format!("the gate passes: caveated regressions let pass (--caveated-regressions warn): {waived}; no other primary metric is significantly worse by more than {pct}%");
    } else if caveated > 0 {
        line.push_str(&format!(
            "; comparisons carrying a validity caveat: {caveated} (`storlab compare` shows them with their verdicts)"
        ));
    }
    if !judged.unsure.is_empty() {
        line.push_str(&format!(
            "; inconclusive comparisons that may hide a regression beyond {pct}%, let pass (--inconclusive {}): {}",
            inconclusive.word(),
            judged.unsure.len()
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::{target_stats, Caveat};
    use crate::analysis::verdict::Outcome;
    use crate::metric::{Direction, Unit};
    use crate::warning::WarningKind;

    /// A primary metric on `target` half the baseline's: a clear regression,
    /// with the caveats `kinds`.
    fn halved(target: &str, kinds: &[WarningKind]) -> Verdict {
        let base = [100.0, 101.0, 99.0];
        let worse = [50.0, 50.5, 49.5];
        let cmp = crate::stats::welch(&base, &worse, 0.95);
        let mut candidate = target_stats(target, worse.to_vec(), cmp, Direction::HigherIsBetter);
        candidate.caveats = kinds
            .iter()
            .map(|&kind| Caveat {
                kind,
                target: target.into(),
                runs: 3,
                of: 3,
            })
            .collect();
        Verdict {
            workload: "w".into(),
            primary: true,
            metric: "tps".into(),
            unit: Unit::TransactionsPerSec,
            direction: Direction::HigherIsBetter,
            baseline_label: "base".into(),
            baseline: target_stats("base", base.to_vec(), None, Direction::HigherIsBetter),
            candidate_label: target.into(),
            candidate,
            family: "w".into(),
            exploratory: false,
            parts: None,
        }
    }

    #[test]
    fn a_caveated_regression_fails_the_gate_unless_told_to_warn() {
        let rows = [
            halved("clean", &[]),
            halved("cached", &[WarningKind::PageCache]),
            halved("unsynced", &[WarningKind::DurabilityNotMeasured]),
        ];
        assert!(rows[0].regressed(5.0) && !rows[0].caveated());
        let fail = judge(&rows, 5.0, CaveatedRegressions::Fail);
        assert_eq!(fail.failing.len(), 3);
        assert!(fail.waived.is_empty());
        let warn = judge(&rows, 5.0, CaveatedRegressions::Warn);
        let names = |v: &[&Verdict]| {
            v.iter()
                .map(|r| r.candidate_label.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&warn.failing), ["clean"]);
        assert_eq!(names(&warn.waived), ["cached", "unsynced"]);
        // Only caveated regressions: under warn the gate passes.
        let caveated = &rows[1..];
        assert!(judge(caveated, 5.0, CaveatedRegressions::Warn)
            .failing
            .is_empty());
        assert_eq!(
            judge(caveated, 5.0, CaveatedRegressions::Fail)
                .failing
                .len(),
            2
        );
        // Beyond the threshold, nothing is judged either way.
        let none = judge(&rows, 60.0, CaveatedRegressions::Fail);
        assert!(none.failing.is_empty() && none.waived.is_empty());
    }

    #[test]
    fn a_regression_is_printed_with_its_caveats() {
        let r = halved("zfs", &[WarningKind::DurabilityNotMeasured]);
        let text = words(&r, Form::Gate);
        assert!(
            text.starts_with("w tps on zfs: ÷2.0 against base (p 0.0"),
            "{text}"
        );
        assert!(
            text.ends_with("⚠ durability not measured on zfs (3 of 3 runs)"),
            "{text}"
        );
        let rows = std::slice::from_ref(&r);
        let judged = judge(rows, 60.0, CaveatedRegressions::Fail);
        assert_eq!(
            pass_text(rows, 60.0, &judged, InconclusiveComparisons::Warn),
            "no primary metric is significantly worse by more than 60%; comparisons carrying a validity caveat: 1 (`storlab compare` shows them with their verdicts)"
        );
        let judged = judge(rows, 5.0, CaveatedRegressions::Warn);
        assert!(
            pass_text(rows, 5.0, &judged, InconclusiveComparisons::Warn).starts_with(
                "the gate passes: caveated regressions let pass (--caveated-regressions warn): 1;"
            )
        );
    }

    // An inconclusive comparison (-3.4% [-13.3%, +7.7%]: welch_log of the
    // runs below) may hide a regression beyond 5% but not beyond 20%: the
    // gate's policy decides what it does with it; a clean pass says it.
    #[test]
    fn an_inconclusive_comparison_that_may_hide_a_regression_follows_the_policy() {
        let base = [100.0, 108.0, 93.0, 101.0];
        let unsure = [97.0, 104.0, 89.0, 98.5];
        let cmp = crate::stats::welch_log(&base, &unsure, 0.95);
        let candidate = target_stats("b", unsure.to_vec(), cmp, Direction::HigherIsBetter);
        let base_stats = target_stats("a", base.to_vec(), None, Direction::HigherIsBetter);
        let v = Verdict {
            workload: "w".into(),
            primary: true,
            metric: "tps".into(),
            unit: Unit::TransactionsPerSec,
            direction: Direction::HigherIsBetter,
            baseline_label: "a".into(),
            baseline: base_stats,
            candidate_label: "b".into(),
            candidate,
            family: "w".into(),
            exploratory: false,
            parts: None,
        };
        assert_eq!(v.outcome(), Some(Outcome::Inconclusive));
        assert!(v.may_hide_regression(5.0) && !v.may_hide_regression(20.0));
        assert!(!v.regressed(5.0));
        let rows = std::slice::from_ref(&v);
        let judged = judge(rows, 5.0, CaveatedRegressions::Fail);
        assert_eq!(judged.unsure.len(), 1);
        assert_eq!(
            gate(
                rows,
                Some(5.0),
                CaveatedRegressions::Fail,
                InconclusiveComparisons::Fail
            ),
            ExitCode::FAILURE
        );
        assert_eq!(
            gate(
                rows,
                Some(5.0),
                CaveatedRegressions::Fail,
                InconclusiveComparisons::Warn
            ),
            ExitCode::SUCCESS
        );
        assert!(pass_text(rows, 5.0, &judged, InconclusiveComparisons::Pass).ends_with(
            "; inconclusive comparisons that may hide a regression beyond 5%, let pass (--inconclusive pass): 1"
        ));
        assert_eq!(
            gate(
                rows,
                Some(20.0),
                CaveatedRegressions::Fail,
                InconclusiveComparisons::Fail
            ),
            ExitCode::SUCCESS
        );
    }
}
