//! Comparisons for `storlab compare` and `storlab report A B`: the targets
//! of one campaign against its baseline, or the same target–workload pairs
//! in two campaigns (two releases, two hosts) matched by name — after what
//! differs between them, refused when their workloads ran differently
//! unless allowed ([`across`]); and the regression gate.

use std::collections::BTreeSet;

use super::about::About;
use super::campaign::judge;
use super::chosen;
use super::differences::{differences, Differences};
use super::model::family;
use super::model::{self, LEVEL};
use super::verdict::Verdict;
use crate::experiment::sweep::family_of;
use crate::metric::labels::DEVICE;
use crate::metric::MetricKey;
use crate::stats::{compare_runs, equivalence_runs, Analysis, Design};
use crate::store::CampaignData;
use crate::warning::Warning;

/// Every non-baseline target against the baseline, on primary metrics:
/// the campaign's own verdicts on means ([`judge`]), as its report gives
/// them.
pub fn within(c: &CampaignData, baseline: Option<&str>) -> anyhow::Result<Vec<Verdict>> {
    let mut rows = judge(c, baseline)?.verdicts;
    rows.retain(|v| v.primary && v.kind.is_mean());
    Ok(rows)
}

/// Which metrics a comparison across campaigns covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metrics {
    /// Each workload's primary metric.
    Primary,
    /// Every metric measured on both sides (each label set apart).
    All,
    /// These catalogue names, with any labels.
    Named(Vec<String>),
}

impl Metrics {
    /// As `--metric` names them: none for the primary, `all`, or names.
    pub fn from_names(names: &[String]) -> Metrics {
        if names.is_empty() {
            Metrics::Primary
        } else if names.iter().any(|n| n == "all") {
            Metrics::All
        } else {
            Metrics::Named(names.to_vec())
        }
    }
}

/// A comparison across two campaigns: what differs between them, the
/// caveats it carries and its rows, `b` against `a` (the baseline); both
/// campaigns as stored, and each one's own warnings (a noisy host,
/// outliers: what makes either side less trustworthy).
#[derive(Debug, Clone)]
pub struct Across {
    pub baseline: About,
    pub candidate: About,
    pub differences: Differences,
    pub caveats: Vec<String>,
    pub rows: Vec<Verdict>,
    /// Each campaign's warnings, the baseline's first, with its id.
    pub warnings: Vec<(i64, Warning)>,
}

/// Why two campaigns were not compared.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Their workloads ran with different parameters (and that was not
    /// allowed): the sentence names each parameter with both values.
    Different(String),
    /// No target–workload pair has a metric measured on both sides.
    NothingShared(String),
    /// A campaign's data could not be analysed (a histogram that does not
    /// decode).
    Broken(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Different(s) | Refusal::NothingShared(s) | Refusal::Broken(s) => {
                f.write_str(s)
            }
        }
    }
}

/// Campaign `b` against campaign `a` on the chosen metrics, after what
/// differs between them: refused when their workloads' parameters differ
/// unless `allow_different` (then it is the first caveat).
pub fn across(
    a: &CampaignData,
    b: &CampaignData,
    which: &Metrics,
    allow_different: bool,
) -> Result<Across, Refusal> {
    let (ia, ib) = (a.campaign.id, b.campaign.id);
    let diff = differences(a, b);
    let mut caveats = Vec::new();
    if !diff.workload_params.is_empty() {
        let what = diff.workload_text(ia, ib);
        if !allow_different {
            return Err(Refusal::Different(format!(
                "campaigns {ia} and {ib} ran their workloads differently — {what}; a difference in their results would mix that change with the storage's. Compare campaigns of the same workloads, or pass --allow-different to compare anyway (it is printed as a caveat)"
            )));
        }
        caveats.push(format!(
            "the workloads differ ({what}): differences below include that change"
        ));
    }
    let rows = between_on(a, b, which);
    if rows.is_empty() {
        return Err(Refusal::NothingShared(format!(
            "campaigns {ia} and {ib} share no target–workload pair with a metric measured on both sides (matched by name)"
        )));
    }
    let mut warnings = Vec::new();
    for c in [a, b] {
        let m = judge(c, None).map_err(|e| Refusal::Broken(format!("{e:#}")))?;
        warnings.extend(m.model.warnings.into_iter().map(|w| (c.campaign.id, w)));
    }
    Ok(Across {
        baseline: About::of(a),
        candidate: About::of(b),
        differences: diff,
        caveats,
        rows,
        warnings,
    })
}

/// The same workload and target in campaign `a` (baseline) and `b`, on
/// the chosen metrics.
pub fn between_on(a: &CampaignData, b: &CampaignData, which: &Metrics) -> Vec<Verdict> {
    let mut rows = Vec::new();
    for w in &a.workloads {
        if !b.workloads.iter().any(|x| x.name == w.name) {
            continue;
        }
        for t in a
            .targets
            .iter()
            .filter(|t| b.targets.iter().any(|x| x.name == t.name))
        {
            // The primary metric a workload kind chose (a matrix's primary_test).
            let primary = chosen::choose(w)
                .primary
                .unwrap_or_else(|| MetricKey::plain(&w.primary_metric));
            for (ka, kb) in keys(a, b, &w.name, &t.name, &primary, which) {
                if let Some(mut row) = pair(a, b, &w.name, &t.name, &ka, &kb) {
                    row.primary = ka == primary;
                    row.exploratory = !row.primary;
                    rows.push(row);
                }
            }
        }
    }
    judge_families(&mut rows);
    rows
}

/// The rows' families: the primary metrics', and each other metric's.
fn judge_families(rows: &mut [Verdict]) {
    let mut names: Vec<Option<String>> = Vec::new();
    for r in rows.iter() {
        let name = (!r.primary).then(|| r.metric.clone());
        if !names.contains(&name) {
            names.push(name);
        }
    }
    for name in names {
        let members = rows
            .iter_mut()
            .filter(|r| (!r.primary).then(|| r.metric.clone()) == name)
            .map(|r| (&mut r.candidate, r.direction))
            .collect();
        family::judge(members);
    }
}

/// The metric keys measured for `workload` on `target` in both campaigns
/// that `which` selects, the primary first: each as `a` and as `b` has it.
/// They differ only in a loop device's name ([`loop_devices`]).
fn keys(
    a: &CampaignData,
    b: &CampaignData,
    workload: &str,
    target: &str,
    primary: &MetricKey,
    which: &Metrics,
) -> Vec<(MetricKey, MetricKey)> {
    if *which == Metrics::Primary {
        return vec![(primary.clone(), primary.clone())];
    }
    let (ka, kb) = (measured(a, workload, target), measured(b, workload, target));
    let renamed = loop_devices(&ka, &kb);
    let mut keys: Vec<(MetricKey, MetricKey)> = kb
        .iter()
        .map(|k| (as_in_a(k, renamed.as_ref()), k.clone()))
        .filter(|(k, _)| ka.contains(k))
        .filter(|(k, _)| match which {
            Metrics::Named(names) => names.contains(&k.name),
            _ => true,
        })
        .collect();
    keys.sort_by_key(|(k, _)| (k != primary, k.clone()));
    keys
}

/// The metric keys of a workload on a target, over its measured runs.
fn measured(c: &CampaignData, workload: &str, target: &str) -> BTreeSet<MetricKey> {
    c.runs_of(workload, target)
        .filter(|r| !r.warmup)
        .flat_map(|r| r.metrics.keys().cloned())
        .collect()
}

/// The kernel numbers loop devices in the order they are attached, so a
/// target's image is `loop0` in one campaign and `loop3` in the next when
/// other loop devices came first, on another host or beside another
/// campaign. Where each campaign measured exactly one loop device for a
/// workload on a target, and they differ, `(b's name, a's name)`: that
/// device's metrics are compared as one.
fn loop_devices(ka: &BTreeSet<MetricKey>, kb: &BTreeSet<MetricKey>) -> Option<(String, String)> {
    let only_loop = |keys: &BTreeSet<MetricKey>| -> Option<String> {
        let mut loops: BTreeSet<&str> = keys
            .iter()
            .filter_map(|k| k.labels.get(&DEVICE))
            .filter(|d| is_loop(d))
            .collect();
        let only = loops.pop_first()?;
        loops.is_empty().then(|| only.to_string())
    };
    let (la, lb) = (only_loop(ka)?, only_loop(kb)?);
    (la != lb).then_some((lb, la))
}

fn is_loop(device: &str) -> bool {
    device
        .strip_prefix("loop")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// `b`'s key under the name campaign `a` gave its loop device.
fn as_in_a(key: &MetricKey, renamed: Option<&(String, String)>) -> MetricKey {
    match renamed {
        Some((lb, la)) if key.labels.get(&DEVICE) == Some(lb.as_str()) => {
            MetricKey::new(&key.name, key.labels.clone().with(&DEVICE, la))
        }
        _ => key.clone(),
    }
}

/// One metric of one workload and target, `b` (measured as `kb`) against
/// `a` (as `ka`).
fn pair(
    a: &CampaignData,
    b: &CampaignData,
    w: &str,
    t: &str,
    ka: &MetricKey,
    kb: &MetricKey,
) -> Option<Verdict> {
    let names = [t.to_string()];
    let ma = model::metric(a, w, ka, &names, t);
    let mb = model::metric(b, w, kb, &names, t);
    let (sa, sb) = (ma.targets.first()?, mb.targets.first()?);
    if sa.values.is_empty() && sb.values.is_empty() {
        return None;
    }
    let (ra, rb) = (
        model::round_values(a, w, t, ka),
        model::round_values(b, w, t, kb),
    );
    let analysis = between_analysis(a, b);
    let cmp = compare_runs(&ra, &rb, Design::Unpaired, analysis, LEVEL);
    let mut candidate = model::target_stats(t, sb.values.clone(), cmp, ma.direction);
    candidate.judge_margin(equivalence_runs(
        &ra,
        &rb,
        Design::Unpaired,
        analysis,
        b.margin_pct(w),
    ));
    // The verdict carries the caveats of both campaigns' runs, each side
    // named by its campaign.
    for (side, c) in [(sb, b), (sa, a)] {
        candidate
            .caveats
            .extend(side.caveats.iter().map(|x| model::Caveat {
                target: format!("{t} @ campaign {}", c.campaign.id),
                ..x.clone()
            }));
    }
    let metric = match (ka.labels.get(&DEVICE), kb.labels.get(&DEVICE)) {
        (Some(da), Some(db)) if da != db => {
            format!("{} ({db} in campaign {})", ka.compact(), b.campaign.id)
        }
        _ => ka.compact(),
    };
    Some(Verdict {
        workload: w.to_string(),
        primary: false,
        metric,
        unit: ma.unit,
        direction: ma.direction,
        baseline_label: format!("{t} @ campaign {}", a.campaign.id),
        baseline: sa.clone(),
        candidate_label: format!("{t} @ campaign {}", b.campaign.id),
        candidate,
        family: family_of(w).to_string(),
        exploratory: false,
        parts: None,
        kind: crate::analysis::verdict::Kind::Mean,
    })
}

/// Two campaigns are compared by their means if either plan asked so; their
/// runs share no rounds, so never paired.
fn between_analysis(a: &CampaignData, b: &CampaignData) -> Analysis {
    match (model::plan_analysis(a), model::plan_analysis(b)) {
        (Analysis::Ratio, Analysis::Ratio) => Analysis::Ratio,
        _ => Analysis::Means,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Labels;

    fn keys(devices: &[&str]) -> BTreeSet<MetricKey> {
        devices
            .iter()
            .map(|d| MetricKey::new("dev_write_bytes", Labels::new().with(&DEVICE, d)))
            .chain([MetricKey::plain("bw_bytes_per_s")])
            .collect()
    }

    #[test]
    fn a_targets_only_loop_device_pairs_across_campaigns_whatever_its_number() {
        let renamed = loop_devices(&keys(&["loop0", "vda"]), &keys(&["loop3", "vda"]));
        assert_eq!(renamed, Some(("loop3".into(), "loop0".into())));
        let (a, b) = (
            MetricKey::new("dev_write_bytes", Labels::new().with(&DEVICE, "loop0")),
            MetricKey::new("dev_write_bytes", Labels::new().with(&DEVICE, "loop3")),
        );
        assert_eq!(as_in_a(&b, renamed.as_ref()), a);
        let vda = MetricKey::new("dev_write_bytes", Labels::new().with(&DEVICE, "vda"));
        assert_eq!(as_in_a(&vda, renamed.as_ref()), vda);
        // The same name, two loop devices (a pool of two images), or none:
        // nothing to pair by position, so nothing renamed.
        assert_eq!(loop_devices(&keys(&["loop0"]), &keys(&["loop0"])), None);
        assert_eq!(
            loop_devices(&keys(&["loop0", "loop1"]), &keys(&["loop2", "loop3"])),
            None
        );
        assert_eq!(loop_devices(&keys(&["vda"]), &keys(&["loop3"])), None);
        assert!(is_loop("loop12") && !is_loop("loop") && !is_loop("loopx1") && !is_loop("vda"));
    }
}
