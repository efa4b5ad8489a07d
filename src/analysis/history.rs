//! The history of one experiment: its campaigns over time (or ordered by a
//! tag, such as the Gluster release), per workload, target and metric the
//! mean with its interval, the change from the previous campaign with its
//! significance, and where a step began ([`crate::stats::changepoint`]).
//!
//! Only campaigns that ran the same workloads are one series: they share
//! the experiment's name and a fingerprint of their resolved workloads
//! (names, kinds, every parameter). Campaigns of the same name that ran
//! other workloads, or lack the tag the series is ordered by, are left out
//! and listed with the reason.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::Serialize;

use super::capacity;
use super::model::{self, TargetStats, LEVEL};
use super::verdict::{Outcome, Verdict};
use crate::experiment::sweep::family_of;
use crate::metric::{Direction, MetricKey, Unit};
use crate::stats::capacity::{Found, Knee};
use crate::stats::changepoint::{pettitt, ChangePoint};
use crate::stats::{compare_runs, equivalence_runs, Analysis, Design, DEFAULT_ALPHA};
use crate::store::CampaignData;

/// How the campaigns are ordered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// By start time.
    Date,
    /// By the value of this tag (or version / host fact), numbers compared
    /// as numbers (`9.2 < 10.3`).
    Tag(String),
}

impl Order {
    /// `date` or `tag:NAME`.
    pub fn parse(text: &str) -> anyhow::Result<Order> {
        match text.split_once(':') {
            None if text == "date" => Ok(Order::Date),
            Some(("tag", name)) if !name.is_empty() => Ok(Order::Tag(name.to_string())),
            _ => {
                anyhow::bail!("--by takes `date` or `tag:NAME` (such as tag:gluster), not `{text}`")
            }
        }
    }
}

/// One campaign of the series.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub campaign: i64,
    pub started_at: String,
    pub tags: BTreeMap<String, String>,
    /// Versions that differ from the previous campaign's: program → (before, now).
    pub version_changes: BTreeMap<String, (String, String)>,
    /// What the axis says: the tag's value, or the date.
    pub label: String,
}

/// One metric of one workload on one target over the campaigns.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub workload: String,
    pub target: String,
    pub metric: String,
    pub unit: Unit,
    pub direction: Direction,
    /// One per campaign of the history that measured it; `change` is
    /// against the previous entry.
    pub entries: Vec<Entry>,
    pub step: Step,
}

impl Series {
    /// The verdict of the `i`th entry against the one before it; `None`
    /// for the first, or one not compared.
    pub fn verdict(&self, i: usize) -> Option<Verdict> {
        let (before, e) = (self.entries.get(i.checked_sub(1)?)?, self.entries.get(i)?);
        Outcome::of(&e.stats)?;
        Some(Verdict {
            workload: self.workload.clone(),
            primary: true,
            metric: self.metric.clone(),
            unit: self.unit,
            direction: self.direction,
            baseline_label: format!("campaign {}", before.campaign),
            baseline: before.stats.clone(),
            candidate_label: format!("campaign {}", e.campaign),
            candidate: e.stats.clone(),
            family: family_of(&self.workload).to_string(),
            exploratory: false,
            parts: None,
            kind: crate::analysis::verdict::Kind::Mean,
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub campaign: i64,
    /// Values, summary, interval; comparison and verdict against the previous entry.
    pub stats: TargetStats,
}

/// The change-point test's answer for a series.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    /// A significant step: it began at `campaign`.
    Found {
        campaign: i64,
        /// Percent change of the mean after the step against before it.
        change_pct: f64,
        /// "slower" (a regression) or "faster" (an improvement).
        word: &'static str,
        test: ChangePoint,
    },
    /// No significant step; the most likely split and its p-value.
    None { test: ChangePoint },
    /// Fewer than two campaigns with runs.
    Untested,
}

#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub experiment: String,
    pub fingerprint: String,
    pub order: Order,
    pub points: Vec<Point>,
    /// (campaign, why it is not in the series).
    pub left_out: Vec<(i64, String)>,
    /// (campaign, its replicas): replicas are one configuration, their
    /// runs pooled into the first campaign's entry.
    pub pooled: Vec<(i64, Vec<i64>)>,
    pub series: Vec<Series>,
}

/// The fingerprint of a campaign's resolved workloads (12 hex digits).
pub fn fingerprint(c: &CampaignData) -> String {
    use sha1::{Digest, Sha1};
    // A capacity search's probes are the rates it happened to try: the
    // searched workload says what ran.
    let probes: Vec<String> = c.probes().into_iter().map(|(name, _)| name).collect();
    let mut workloads: Vec<_> = c
        .workloads
        .iter()
        .filter(|w| !probes.contains(&w.name))
        .map(|w| serde_json::json!([w.name, w.kind, w.params]))
        .collect();
    workloads.sort_by_key(|w| w.to_string());
    let digest = Sha1::digest(serde_json::Value::Array(workloads).to_string().as_bytes());
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// The history of `campaigns` (all of one experiment name): the series
/// of those sharing the latest one's workloads, in `order`, on the named
/// metrics (every workload's primary when empty).
///
/// A campaign loaded with its replicas (`CampaignData::replicas`) is one
/// configuration: its replicas' runs join its own, one entry in each
/// series (they ran the same experiment, so no change between them is a
/// change of the configuration).
pub fn build(campaigns: Vec<CampaignData>, order: Order, metrics: &[String]) -> Option<History> {
    let mut pooled = Vec::new();
    let campaigns: Vec<CampaignData> = campaigns
        .into_iter()
        .map(|mut c| {
            let replicas = std::mem::take(&mut c.replicas);
            if !replicas.is_empty() {
                pooled.push((
                    c.campaign.id,
                    replicas.iter().map(|r| r.campaign.id).collect(),
                ));
            }
            c.runs.extend(replicas.into_iter().flat_map(|r| r.runs));
            c
        })
        .collect();
    let latest = campaigns.iter().max_by_key(|c| c.campaign.id)?;
    let (experiment, print) = (latest.campaign.name.clone(), fingerprint(latest));
    let mut left_out = Vec::new();
    let mut kept = Vec::new();
    for c in campaigns {
        let why = if fingerprint(&c) != print {
            Some(format!(
                "ran other workloads (fingerprint {})",
                fingerprint(&c)
            ))
        } else if let Order::Tag(name) = &order {
            c.facts
                .get(name)
                .is_none()
                .then(|| format!("has no `{name}`"))
        } else {
            None
        };
        match why {
            Some(w) => left_out.push((c.campaign.id, w)),
            None => kept.push(c),
        }
    }
    sort(&mut kept, &order);
    let points = points(&kept, &order);
    let series = all_series(&kept, metrics);
    Some(History {
        experiment,
        fingerprint: print,
        order,
        points,
        left_out,
        pooled,
        series,
    })
}

fn sort(cs: &mut [CampaignData], order: &Order) {
    cs.sort_by(|a, b| {
        let by_time =
            (&a.campaign.started_at, a.campaign.id).cmp(&(&b.campaign.started_at, b.campaign.id));
        match order {
            Order::Date => by_time,
            Order::Tag(name) => version_cmp(
                a.facts.get(name).unwrap_or(""),
                b.facts.get(name).unwrap_or(""),
            )
            .then(by_time),
        }
    });
}

/// Compares `9.2` and `10.3` as versions: runs of digits as numbers.
pub fn version_cmp(a: &str, b: &str) -> Ordering {
    fn parts(s: &str) -> Vec<Result<u64, String>> {
        let mut out = Vec::new();
        let mut cur = String::new();
        for ch in s.chars() {
            if !cur.is_empty() && ch.is_ascii_digit() != cur.chars().all(|c| c.is_ascii_digit()) {
                out.push(std::mem::take(&mut cur));
            }
            cur.push(ch);
        }
        out.push(cur);
        out.into_iter()
            .filter(|p| !p.is_empty())
            .map(|p| p.parse::<u64>().map_err(|_| p))
            .collect()
    }
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(&pb) {
        let o = match (x, y) {
            (Ok(x), Ok(y)) => x.cmp(y),
            (Err(x), Err(y)) => x.cmp(y),
            (Ok(_), Err(_)) => Ordering::Greater,
            (Err(_), Ok(_)) => Ordering::Less,
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    pa.len().cmp(&pb.len())
}

fn points(cs: &[CampaignData], order: &Order) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        let p = &c.facts.provenance;
        let mut version_changes = BTreeMap::new();
        if let Some(prev) = i.checked_sub(1).map(|j| &cs[j].facts.provenance) {
            for (k, v) in &p.versions {
                match prev.versions.get(k) {
                    Some(old) if old != v => {
                        version_changes.insert(k.clone(), (old.clone(), v.clone()));
                    }
                    _ => {}
                }
            }
        }
        let label = match order {
            Order::Tag(name) => c.facts.get(name).unwrap_or_default().to_string(),
            // `2026-11-23T02:48:11…` → `11-23 02:48`
            Order::Date => c
                .campaign
                .started_at
                .chars()
                .skip(5)
                .take(11)
                .collect::<String>()
                .replacen('T', " ", 1),
        };
        out.push(Point {
            campaign: c.campaign.id,
            started_at: c.campaign.started_at.clone(),
            tags: p.tags.clone(),
            version_changes,
            label,
        });
    }
    out
}

fn all_series(cs: &[CampaignData], metrics: &[String]) -> Vec<Series> {
    let Some(last) = cs.last() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let probes: Vec<String> = last.probes().into_iter().map(|(name, _)| name).collect();
    let searched: Vec<String> = last.searches().into_iter().map(|(name, _)| name).collect();
    for w in last.workloads.iter().filter(|w| !probes.contains(&w.name)) {
        if searched.contains(&w.name) {
            if metrics.is_empty() || metrics.iter().any(|m| m == CAPACITY) {
                out.extend(
                    last.targets
                        .iter()
                        .filter_map(|t| capacity_series(cs, &w.name, &t.name)),
                );
            }
            continue;
        }
        let names: Vec<String> = if metrics.is_empty() {
            vec![w.primary_metric.clone()]
        } else {
            metrics.to_vec()
        };
        for t in &last.targets {
            for name in &names {
                let key = MetricKey::plain(name);
                if let Some(s) = series(cs, &w.name, &t.name, &key) {
                    out.push(s);
                }
            }
        }
    }
    judge_changes(&mut out, metrics.is_empty());
    out
}

/// Judges each campaign's changes from the previous one as one family per
/// metric — the primary metrics together when none was named — as
/// `storlab compare` judges the rows of the same two campaigns: a history
/// of many workloads and targets does not call a change that chance
/// explains at that many comparisons.
fn judge_changes(series: &mut [Series], primary: bool) {
    let mut families: Vec<(i64, String)> = Vec::new();
    for s in series.iter() {
        let metric = if primary {
            String::new()
        } else {
            s.metric.clone()
        };
        for e in s.entries.iter().skip(1) {
            if !families.contains(&(e.campaign, metric.clone())) {
                families.push((e.campaign, metric.clone()));
            }
        }
    }
    for (campaign, metric) in families {
        let members: Vec<(&mut TargetStats, Direction)> = series
            .iter_mut()
            .filter(|s| primary || s.metric == metric)
            .flat_map(|s| {
                let direction = s.direction;
                s.entries
                    .iter_mut()
                    .skip(1)
                    .filter(move |e| e.campaign == campaign)
                    .map(move |e| (&mut e.stats, direction))
            })
            .collect();
        model::family::judge(members);
    }
}

fn series(cs: &[CampaignData], w: &str, t: &str, key: &MetricKey) -> Option<Series> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut unit_dir = None;
    let mut prev: Option<&CampaignData> = None;
    for c in cs {
        let names = [t.to_string()];
        let m = model::metric(c, w, key, &names, t);
        let Some(s) = m.targets.first().filter(|s| !s.values.is_empty()) else {
            continue;
        };
        unit_dir.get_or_insert((m.unit, m.direction));
        let sides = prev.map(|p| {
            (
                model::round_values(p, w, t, key),
                model::round_values(c, w, t, key),
                analysis(p, c),
            )
        });
        let cmp = sides
            .as_ref()
            .and_then(|(a, b, x)| compare_runs(a, b, Design::Unpaired, *x, LEVEL));
        let mut stats = model::target_stats(t, s.values.clone(), cmp, m.direction);
        if let Some((a, b, x)) = &sides {
            stats.judge_margin(equivalence_runs(
                a,
                b,
                Design::Unpaired,
                *x,
                c.margin_pct(w),
            ));
        }
        entries.push(Entry {
            campaign: c.campaign.id,
            stats,
        });
        prev = Some(c);
    }
    let (unit, direction) = unit_dir?;
    let step = step(&entries, direction);
    Some(Series {
        workload: w.to_string(),
        target: t.to_string(),
        metric: key.to_string(),
        unit,
        direction,
        entries,
        step,
    })
}

/// The metric name of a searched workload's series: its capacity.
pub const CAPACITY: &str = "capacity";

/// The capacity searched workload `w` found on target `t` in each
/// campaign whose search found it between two probes, each against the
/// one before.
fn capacity_series(cs: &[CampaignData], w: &str, t: &str) -> Option<Series> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut unit = None;
    let mut prev: Option<Knee> = None;
    for c in cs {
        let found = capacity::searches(c)
            .into_iter()
            .filter(|s| s.workload == w)
            .find_map(|s| {
                let k = s.targets.into_iter().find(|x| x.target == t)?.knee?;
                Some((s.unit, k))
            });
        let Some((u, knee)) = found.filter(|(_, k)| k.found == Found::Between) else {
            continue;
        };
        unit.get_or_insert(u);
        let cmp = prev
            .as_ref()
            .and_then(|p| crate::stats::capacity::compare(p, &knee, capacity::LEVEL));
        entries.push(Entry {
            campaign: c.campaign.id,
            stats: capacity::knee_stats(t, &knee, cmp, Vec::new()),
        });
        prev = Some(knee);
    }
    let direction = Direction::HigherIsBetter;
    Some(Series {
        workload: w.to_string(),
        target: t.to_string(),
        metric: CAPACITY.to_string(),
        unit: unit?,
        direction,
        step: step(&entries, direction),
        entries,
    })
}

fn analysis(a: &CampaignData, b: &CampaignData) -> Analysis {
    match (model::plan_analysis(a), model::plan_analysis(b)) {
        (Analysis::Ratio, Analysis::Ratio) => Analysis::Ratio,
        _ => Analysis::Means,
    }
}

fn step(entries: &[Entry], direction: Direction) -> Step {
    let groups: Vec<Vec<f64>> = entries.iter().map(|e| e.stats.values.clone()).collect();
    let Some(test) = pettitt(&groups) else {
        return Step::Untested;
    };
    if test.p_value >= DEFAULT_ALPHA {
        return Step::None { test };
    }
    let before: Vec<f64> = groups[..test.at].iter().flatten().copied().collect();
    let after: Vec<f64> = groups[test.at..].iter().flatten().copied().collect();
    let change_pct = 100.0 * (centre(&after) / centre(&before) - 1.0);
    let up = change_pct > 0.0;
    let better = match direction {
        Direction::HigherIsBetter => up,
        Direction::LowerIsBetter => !up,
    };
    Step::Found {
        campaign: entries[test.at].campaign,
        change_pct,
        word: if better { "faster" } else { "slower" },
        test,
    }
}

/// The geometric mean of positive values (the ratio scale), else the mean.
fn centre(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    if xs.iter().all(|x| *x > 0.0) {
        (xs.iter().map(|x| x.ln()).sum::<f64>() / n).exp()
    } else {
        xs.iter().sum::<f64>() / n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::RoundValue;

    /// A series of two campaigns whose values are `before` then `after`.
    fn two_campaigns(target: &str, before: &[f64], after: &[f64]) -> Series {
        let rounds = RoundValue::in_rounds;
        let cmp = compare_runs(
            &rounds(before),
            &rounds(after),
            Design::Unpaired,
            Analysis::Ratio,
            LEVEL,
        );
        Series {
            workload: "w".into(),
            target: target.into(),
            metric: "tps".into(),
            unit: Unit::TransactionsPerSec,
            direction: Direction::HigherIsBetter,
            entries: vec![
                Entry {
                    campaign: 1,
                    stats: model::target_stats(
                        target,
                        before.to_vec(),
                        None,
                        Direction::HigherIsBetter,
                    ),
                },
                Entry {
                    campaign: 2,
                    stats: model::target_stats(
                        target,
                        after.to_vec(),
                        cmp,
                        Direction::HigherIsBetter,
                    ),
                },
            ],
            step: Step::Untested,
        }
    }

    #[test]
    fn a_campaigns_changes_are_judged_as_one_family_as_compare_judges_them() {
        // Alone, p ≈ 0.033 calls the second series faster; beside a series
        // that did not move, its adjusted p (twice that) does not.
        let mut series = vec![
            two_campaigns("a", &[58.0, 52.0, 65.0], &[60.0, 50.0, 59.0]),
            two_campaigns("b", &[54.0, 51.0, 57.5], &[64.0, 61.0, 71.0]),
        ];
        let alone = series[1].entries[1].stats.verdict;
        assert_eq!(alone, Some(crate::stats::Verdict::Better), "{series:?}");
        judge_changes(&mut series, true);
        let judged = &series[1].entries[1].stats;
        let correction = judged.correction.expect("judged in a family");
        assert_eq!(correction.comparisons, 2);
        assert!(correction.chance, "{correction:?}");
        assert_eq!(
            judged.verdict,
            Some(crate::stats::Verdict::NoSignificantDifference)
        );
        assert!(series[0].entries[0].stats.correction.is_none());
    }

    #[test]
    fn versions_order_by_their_numbers() {
        assert_eq!(version_cmp("9.2", "10.3"), Ordering::Less);
        assert_eq!(version_cmp("10.3", "10.3"), Ordering::Equal);
        assert_eq!(version_cmp("11.0rc1", "11.0"), Ordering::Greater);
        let mut v = vec!["10.3", "3.12", "6.0", "9.2"];
        v.sort_by(|a, b| version_cmp(a, b));
        assert_eq!(v, ["3.12", "6.0", "9.2", "10.3"]);
    }

    #[test]
    fn order_is_date_or_a_tag() {
        assert_eq!(Order::parse("date").unwrap(), Order::Date);
        assert_eq!(
            Order::parse("tag:gluster").unwrap(),
            Order::Tag("gluster".into())
        );
        assert!(Order::parse("tag:").is_err());
        assert!(Order::parse("version")
            .unwrap_err()
            .to_string()
            .contains("tag:NAME"));
    }
}
