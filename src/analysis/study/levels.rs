//! Comparisons within a target across a factor's levels, when asked
//! (`compare_levels = ["compress"]`, or `--compare-levels`): every level
//! against the first one written, on the same target with every other
//! swept value the same, by the same statistics as the comparisons with
//! the baseline (on the ratio scale, paired by round where the plan made
//! rounds) — gzip against none on the disk and on Gluster, for each file
//! size. A factor's level comparisons are one family
//! ([`crate::analysis::model::family`]).

use serde::Serialize;

use super::{arrange, choose_column, Level, Pair, Pivot};
use crate::analysis::model::family;
use crate::analysis::model::{compared, plan_analysis, round_values, target_stats};
use crate::experiment::sweep::release_pair;
use crate::metric::MetricKey;
use crate::stats::RoundValue;
use crate::store::CampaignData;

/// One factor's levels compared: cells hold each level's figures and its
/// comparison with `base` on the same target and other values.
#[derive(Debug, Clone, Serialize)]
pub struct LevelStudy {
    pub factor: String,
    /// The level the others are compared with: the first written.
    pub base: Level,
    /// The levels compared with it, in the order written.
    #[serde(skip)]
    pub others: Vec<Level>,
    /// Two releases of one program (`Gluster 11.1`, `Gluster 10.3`): the
    /// other level and the base as a verdict names them ("Gluster 11.1
    /// against 10.3"), never by the suite a root came from.
    #[serde(skip)]
    pub releases: Option<(String, String)>,
    pub pivot: Pivot,
}

/// Compares the levels of `factor` among `pairs`, laid out like the
/// study's primary pivot (by another factor when `factor` is its column).
pub(crate) fn compare(
    c: &CampaignData,
    pairs: &[Pair],
    keys: &[String],
    factor: &str,
    primary: &Pivot,
) -> Option<LevelStudy> {
    let base = pairs.iter().find_map(|p| p.value_of(factor))?.clone();
    let group = |p: &Pair| -> String {
        let others: Vec<String> = p
            .factors
            .iter()
            .filter(|f| f.0.key != factor)
            .map(|f| format!("{}={}", f.0.key, f.0.value))
            .collect();
        format!("{}\u{1f}{}", p.target.family, others.join("\u{1f}"))
    };
    let is_base = |p: &Pair| p.value_of(factor).is_some_and(|f| f.value == base.value);
    let others: Vec<Pair> = pairs
        .iter()
        .filter(|p| p.value_of(factor).is_some() && !is_base(p))
        .cloned()
        .collect();
    // A column only of a factor every compared pair has: a target's own
    // sweep (zfs's recordsize) would leave out the targets without it
    // (ext4, prewarm against none, in seed 001).
    let column = choose_column(pairs, keys, Some(factor))
        .filter(|k| others.iter().all(|p| p.value_of(k).is_some()));
    let (metric, unit, direction) = (primary.metric.clone(), primary.unit, primary.direction);
    let mut pivot = arrange(&others, column.as_deref(), &[], |p| {
        let b = pairs.iter().find(|b| is_base(b) && group(b) == group(p))?;
        let (base, level) = (rounds(c, b), rounds(c, p));
        let margin = c.margin_pct(&p.workload.name);
        let judged = compared(c, &base, &level, plan_analysis(c), margin);
        let values = level.iter().map(|r| r.value).collect();
        let mut stats = target_stats(
            &p.target.name,
            values,
            judged.map(|j| j.comparison),
            direction,
        );
        stats.judge_margin(judged.and_then(|j| j.margin));
        Some((stats, metric.clone(), unit, direction))
    })?;
    // The levels' comparisons are one family.
    let cells = pivot
        .rows
        .iter_mut()
        .flat_map(|r| r.cells.iter_mut().flatten());
    family::judge(cells.map(|t| (t, direction)).collect());
    let mut levels: Vec<Level> = Vec::new();
    for f in others.iter().filter_map(|p| p.value_of(factor)) {
        if !levels.iter().any(|l| l.value == f.value) {
            levels.push(Level {
                value: f.value.clone(),
                text: f.text.clone(),
            });
        }
    }
    let releases = match levels.as_slice() {
        [one] => release_pair(&one.text, &base.text),
        _ => None,
    };
    Some(LevelStudy {
        factor: factor.to_string(),
        base: Level {
            value: base.value,
            text: base.text,
        },
        others: levels,
        releases,
        pivot,
    })
}

/// The primary metric of a pair's measured, successful runs, by round.
fn rounds(c: &CampaignData, p: &Pair) -> Vec<RoundValue> {
    let key = MetricKey::plain(&p.workload.primary_metric);
    round_values(c, &p.workload.name, &p.target.name, &key)
}
