//! A study's factors, as the seeds tabulated them by hand: for each
//! workload table whose variants or targets were swept, a pivot of the
//! primary metric (rows: targets and the other swept values, columns: one
//! swept value, cells: mean ± 95% CI and the % difference from the
//! baseline), the same for each headline metric (seed 000's "time to
//! create the database"), comparisons of a factor's levels on each target
//! when asked (`compare_levels`: gzip against none), and the data of the
//! curve and heat map charts. Pure functions of the stored campaign and
//! its report model; the report lays them out
//! ([`crate::report::contrib::study`]).

pub mod levels;

use serde::Serialize;

use std::collections::{BTreeMap, HashMap, HashSet};

use super::by_name::ByName;
use super::model::{Report, TargetStats, WorkloadReport};
use crate::experiment::sweep::{variant_name, Factor, Scale};
use crate::metric::{Direction, Unit};
use crate::store::{CampaignData, TargetRow, WorkloadRow};

pub use levels::LevelStudy;

/// One factor's values across a study, in order: numerically for numbers,
/// as first met (the order written) for words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    pub key: String,
    pub scale: Scale,
    pub levels: Vec<Level>,
    /// Whether the workload sweeps it (else a target does).
    pub of_workload: bool,
    /// Where each level lies on a chart's x axis: its number for a
    /// numeric factor, its position for words.
    #[serde(skip)]
    pub positions: Vec<f64>,
    /// A log axis: sizes and counts, all positive.
    #[serde(skip)]
    pub log: bool,
    /// Each level's place in `levels`, by its value: found for each of
    /// thousands of pairs. Ordered, so that two equal axes print alike.
    #[serde(skip)]
    place: BTreeMap<String, usize>,
}

/// A factor's value: as labelled (base units) and as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Level {
    pub value: String,
    pub text: String,
}

impl Axis {
    pub fn index(&self, value: &str) -> Option<usize> {
        self.place.get(value).copied()
    }

    /// Where each level lies on a chart's x axis: its number for a numeric
    /// factor, its position for words.
    fn positions(&self) -> Vec<f64> {
        let numbers: Option<Vec<f64>> = self
            .levels
            .iter()
            .map(|l| l.value.parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect();
        match numbers {
            Some(n) if self.scale.is_numeric() => n,
            _ => (0..self.levels.len()).map(|i| i as f64).collect(),
        }
    }

    /// A log axis for sizes and counts that are all positive.
    fn is_log(&self) -> bool {
        self.scale.is_logarithmic()
            && self.scale.is_numeric()
            && self.levels.len() > 1
            && self
                .levels
                .iter()
                .all(|l| l.value.parse::<f64>().is_ok_and(|v| v > 0.0))
    }
}

/// A row of a pivot: one target (with the values of the factors that are
/// not the column), a cell per column.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub label: String,
    /// The label for a chart's legend: when every row is a variant of one
    /// target table, only its factors' values (`mount_options=[],
    /// preallocation=off`, keys without a dotted prefix where that leaves
    /// them distinct), the table's name being in the title; else `label`.
    pub short: String,
    /// The target of the row's cells (the first, when a target factor is
    /// the column): its colour in charts.
    pub target: String,
    pub cells: Vec<Option<TargetStats>>,
}

/// A metric laid out by one factor: `None` as the column means a single
/// column (nothing left to spread across).
#[derive(Debug, Clone, Serialize)]
pub struct Pivot {
    pub metric: String,
    pub unit: Unit,
    pub direction: Direction,
    pub column: Option<Axis>,
    pub rows: Vec<Row>,
}

impl Pivot {
    pub fn width(&self) -> usize {
        self.column.as_ref().map_or(1, |c| c.levels.len())
    }
}

/// Values of two workload factors on one target: a heat map's matrix.
#[derive(Debug, Clone, Serialize)]
pub struct Grid {
    pub x: Axis,
    pub y: Axis,
    /// Per target: `cells[y][x]`, the primary metric's mean.
    pub maps: Vec<(String, Vec<Vec<Option<f64>>>)>,
}

/// Everything the report shows about one swept workload table.
#[derive(Debug, Clone, Serialize)]
pub struct Study {
    /// The `[[workload]]` table.
    pub family: String,
    pub kind: String,
    /// Every swept key, the workload's first.
    pub factors: Vec<String>,
    pub baseline: String,
    pub primary: Pivot,
    /// The catalogue's other headline metrics the runs recorded.
    pub headlines: Vec<Pivot>,
    pub levels: Vec<LevelStudy>,
    pub grid: Option<Grid>,
}

/// A target–workload pair of a study, with every factor it stands for.
#[derive(Debug, Clone)]
pub(crate) struct Pair<'a> {
    pub target: &'a TargetRow,
    pub workload: &'a WorkloadRow,
    /// The target's factors, then the workload's.
    pub factors: Vec<(Factor, bool)>,
}

impl Pair<'_> {
    pub fn value_of(&self, key: &str) -> Option<&Factor> {
        self.factors.iter().find(|f| f.0.key == key).map(|f| &f.0)
    }

    /// `target[other target factors] · k=v,…` without the factors in
    /// `except`.
    pub fn label(&self, except: &[&str]) -> String {
        let keep = |f: &&(Factor, bool)| !except.contains(&f.0.key.as_str());
        let target: Vec<Factor> = self
            .factors
            .iter()
            .filter(|f| !f.1)
            .filter(keep)
            .map(|f| f.0.clone())
            .collect();
        let workload: Vec<String> = self
            .factors
            .iter()
            .filter(|f| f.1)
            .filter(keep)
            .map(|f| format!("{}={}", f.0.key, f.0.text))
            .collect();
        let head = variant_name(&self.target.family, &target);
        if workload.is_empty() {
            head
        } else {
            format!("{head} · {}", workload.join(","))
        }
    }

    /// Every factor not in `except`, `key=value, …`, each key without a
    /// dotted prefix (`gluster.`, `performance.`) where no other key of
    /// the pair ends the same.
    pub fn short(&self, except: &[&str]) -> String {
        let shown: Vec<&Factor> = (self.factors.iter())
            .map(|f| &f.0)
            .filter(|f| !except.contains(&f.key.as_str()))
            .collect();
        crate::experiment::sweep::short_text(&shown)
    }
}

/// The studies of a campaign: one per workload table with a factor, its
/// own or its targets'. `compare` adds factors to compare the levels of
/// (a command-line flag) to those the experiment names.
pub fn studies(c: &CampaignData, r: &Report, compare: &[String]) -> Vec<Study> {
    let mut families: Vec<&str> = Vec::new();
    for w in &c.workloads {
        if !families.contains(&w.family.as_str()) {
            families.push(&w.family);
        }
    }
    families
        .into_iter()
        .filter_map(|f| study(c, r, f, compare))
        .collect()
}

/// Refuses a factor to compare the levels of that the campaign did not
/// sweep (a command-line flag; the experiment's own are checked when it
/// is read).
pub fn check_levels(c: &CampaignData, keys: &[String]) -> anyhow::Result<()> {
    let mut swept: Vec<&str> = Vec::new();
    let factors = c.targets.iter().flat_map(|t| &t.factors);
    for f in factors.chain(c.workloads.iter().flat_map(|w| &w.factors)) {
        if !swept.contains(&f.key.as_str()) {
            swept.push(&f.key);
        }
    }
    let Some(k) = keys.iter().find(|k| !swept.contains(&k.as_str())) else {
        return Ok(());
    };
    let known = match swept.is_empty() {
        true => "it swept nothing".to_string(),
        false => format!("it swept {}", swept.join(", ")),
    };
    anyhow::bail!(
        "--compare-levels {k}: campaign {} did not sweep `{k}` ({known})",
        c.campaign.id
    )
}

/// The pairs of a workload table that ran, in the report's order.
pub(crate) fn pairs<'a>(c: &'a CampaignData, r: &Report, family: &str) -> Vec<Pair<'a>> {
    let mut out = Vec::new();
    for w in c.workloads.iter().filter(|w| w.family == family) {
        let Some(wr) = r.workloads.iter().find(|x| x.name == w.name) else {
            continue;
        };
        let Some(m) = wr.primary_metric() else {
            continue;
        };
        for ts in &m.targets {
            let Some(t) = c.targets.iter().find(|t| t.name == ts.target) else {
                continue;
            };
            let factors = t
                .factors
                .iter()
                .map(|f| (f.clone(), false))
                .chain(w.factors.iter().map(|f| (f.clone(), true)))
                .collect();
            out.push(Pair {
                target: t,
                workload: w,
                factors,
            });
        }
    }
    out
}

pub fn study(c: &CampaignData, r: &Report, family: &str, compare: &[String]) -> Option<Study> {
    let pairs = pairs(c, r, family);
    let keys = factor_keys(&pairs);
    if keys.is_empty() {
        return None;
    }
    let first = pairs.first()?;
    let column = choose_column(&pairs, &keys, None);
    let workloads = Workloads::of(r);
    let metric_of = |name: &str| {
        let name = name.to_string();
        let workloads = &workloads;
        move |p: &Pair| cell(workloads, p, &name)
    };
    let primary_name = &first.workload.primary_metric;
    let primary = arrange(&pairs, column.as_deref(), &[], metric_of(primary_name))?;
    let headlines = headline_names(&workloads, &pairs, primary_name)
        .iter()
        .filter_map(|m| {
            let by_column = arrange(&pairs, column.as_deref(), &[], metric_of(m))?;
            match column.as_deref() {
                // Measured once per target, in whichever variant ran first
                // (pgbench -i of a cluster every transaction count shares):
                // one column, not a value under one level of the sweep.
                Some(k) if once_per_row(&by_column) => arrange(&pairs, None, &[k], metric_of(m)),
                _ => Some(by_column),
            }
        })
        .collect();
    let mut asked: Vec<&String> = first.workload.compare_levels.iter().collect();
    for k in compare {
        if !asked.contains(&k) {
            asked.push(k);
        }
    }
    let levels = asked
        .into_iter()
        .filter(|k| keys.contains(k))
        .filter_map(|k| levels::compare(c, &pairs, &keys, k, &primary))
        .collect();
    Some(Study {
        family: family.to_string(),
        kind: first.workload.kind.clone(),
        grid: grid(&pairs, &primary),
        factors: keys,
        baseline: r.baseline.clone(),
        primary,
        headlines,
        levels,
    })
}

/// Every factor key of the pairs, the workload's first, in order.
fn factor_keys(pairs: &[Pair]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for of_workload in [true, false] {
        for p in pairs {
            for (f, w) in &p.factors {
                if *w == of_workload && !keys.contains(&f.key) {
                    keys.push(f.key.clone());
                }
            }
        }
    }
    keys
}

/// The factor across the columns: the workload's first numeric one (its
/// curve reads as the seeds' graphs), else its first, else the targets'
/// in the same order; never `except`.
pub(crate) fn choose_column(
    pairs: &[Pair],
    keys: &[String],
    except: Option<&str>,
) -> Option<String> {
    let of = |k: &str| {
        pairs
            .iter()
            .find_map(|p| p.factors.iter().find(|f| f.0.key == k))
    };
    let candidates: Vec<(&String, Scale, bool)> = keys
        .iter()
        .filter(|k| Some(k.as_str()) != except)
        .filter_map(|k| of(k).map(|(f, w)| (k, f.scale, *w)))
        .collect();
    let pick = |workload: bool, numeric: bool| {
        candidates
            .iter()
            .find(|c| c.2 == workload && (!numeric || c.1.is_numeric()))
            .map(|c| c.0.clone())
    };
    pick(true, true)
        .or_else(|| pick(true, false))
        .or_else(|| pick(false, true))
        .or_else(|| pick(false, false))
}

/// The axis of factor `key` over the pairs.
pub(crate) fn axis(pairs: &[Pair], key: &str) -> Option<Axis> {
    let mut levels: Vec<Level> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut scale = Scale::Category;
    let mut of_workload = false;
    for p in pairs {
        let Some((f, w)) = p.factors.iter().find(|f| f.0.key == key) else {
            continue;
        };
        (scale, of_workload) = (f.scale, *w);
        if seen.insert(&f.value) {
            levels.push(Level {
                value: f.value.clone(),
                text: f.text.clone(),
            });
        }
    }
    if levels.is_empty() {
        return None;
    }
    if scale.is_numeric() {
        let num = |l: &Level| l.value.parse::<f64>().unwrap_or(f64::NAN);
        levels.sort_by(|a, b| num(a).total_cmp(&num(b)));
    }
    let mut axis = Axis {
        key: key.to_string(),
        scale,
        levels,
        of_workload,
        positions: Vec::new(),
        log: false,
        place: BTreeMap::new(),
    };
    for (i, l) in axis.levels.iter().enumerate() {
        axis.place.entry(l.value.clone()).or_insert(i);
    }
    axis.positions = axis.positions();
    axis.log = axis.is_log();
    Some(axis)
}

/// Lays out `cell` of every pair: a row per distinct label (the pair
/// without the column factor and those in `except`), a column per value of
/// the column factor. `None` when no pair has a cell.
pub(crate) fn arrange(
    pairs: &[Pair],
    column: Option<&str>,
    except: &[&str],
    cell: impl Fn(&Pair) -> Option<(TargetStats, String, Unit, Direction)>,
) -> Option<Pivot> {
    let column = column.and_then(|k| axis(pairs, k));
    let width = column.as_ref().map_or(1, |a| a.levels.len());
    let mut hidden: Vec<&str> = except.to_vec();
    if let Some(a) = &column {
        hidden.push(&a.key);
    }
    // Each label's row, by the label: a sweep of thousands of variants
    // has thousands.
    let mut rows: Vec<Row> = Vec::new();
    let mut row_of: HashMap<String, usize> = HashMap::new();
    let mut meta = None;
    for p in pairs {
        let Some((stats, metric, unit, direction)) = cell(p) else {
            continue;
        };
        meta.get_or_insert((metric, unit, direction));
        let col = match &column {
            Some(a) => p.value_of(&a.key).and_then(|f| a.index(&f.value)),
            None => Some(0),
        };
        let Some(col) = col else {
            continue;
        };
        let label = p.label(&hidden);
        let at = match row_of.get(&label) {
            Some(&i) => i,
            None => {
                row_of.insert(label.clone(), rows.len());
                rows.push(Row {
                    label,
                    short: p.short(&hidden),
                    target: p.target.name.clone(),
                    cells: vec![None; width],
                });
                rows.len() - 1
            }
        };
        rows[at].cells[col] = Some(stats);
    }
    let (metric, unit, direction) = meta?;
    // A target's rows together, as the seeds' tables: in the order of
    // the campaign's targets, the rest as met.
    let by_target = ByName::of_list(pairs, |p| &p.target.name);
    let first = |r: &Row| by_target.of(&r.target, pairs).next();
    let order = |r: &Row| first(r).map(|p| p.target.id);
    rows.sort_by_key(order);
    let family = |r: &Row| first(r).map(|p| p.target.family.as_str());
    let one_table = rows.windows(2).all(|w| family(&w[0]) == family(&w[1]));
    for r in &mut rows {
        if !one_table || r.short.is_empty() {
            r.short = r.label.clone();
        }
    }
    Some(Pivot {
        metric,
        unit,
        direction,
        column,
        rows,
    })
}

/// The report's workloads, found by name (the first of a name) for each
/// pair: thousands of them in a sweep of thousands of variants.
struct Workloads<'a> {
    list: &'a [WorkloadReport],
    by_name: ByName,
}

impl<'a> Workloads<'a> {
    fn of(r: &'a Report) -> Self {
        Workloads {
            list: &r.workloads,
            by_name: ByName::of_list(&r.workloads, |w| &w.name),
        }
    }

    fn get(&self, name: &str) -> Option<&WorkloadReport> {
        self.by_name.of(name, self.list).next()
    }
}

/// A pair's figures of metric `name` (without labels) from the report.
fn cell(
    workloads: &Workloads,
    p: &Pair,
    name: &str,
) -> Option<(TargetStats, String, Unit, Direction)> {
    let w = workloads.get(&p.workload.name)?;
    let m = w
        .metrics
        .iter()
        .find(|m| m.key.name == name && m.key.labels.is_empty())?;
    let t = m.targets.iter().find(|t| t.target == p.target.name)?;
    Some((t.clone(), m.name.clone(), m.unit, m.direction))
}

/// Whether every row of a pivot with several columns has one value only.
fn once_per_row(p: &Pivot) -> bool {
    p.width() > 1
        && p.rows
            .iter()
            .all(|r| r.cells.iter().filter(|c| c.is_some()).count() == 1)
}

/// The report's other unlabelled metrics of these pairs (the headlines),
/// in the report's order.
fn headline_names(workloads: &Workloads, pairs: &[Pair], primary: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in pairs {
        let Some(w) = workloads.get(&p.workload.name) else {
            continue;
        };
        for m in w.metrics.iter().filter(|m| m.key.labels.is_empty()) {
            if m.key.name != primary && !out.contains(&m.key.name) {
                out.push(m.key.name.clone());
            }
        }
    }
    out
}

/// A heat map's matrices when the workload sweeps exactly two factors:
/// the column's and one other, per target.
fn grid(pairs: &[Pair], primary: &Pivot) -> Option<Grid> {
    let x = primary.column.clone().filter(|a| a.of_workload)?;
    let workload_keys: Vec<&str> = pairs
        .first()?
        .workload
        .factors
        .iter()
        .map(|f| f.key.as_str())
        .collect();
    if workload_keys.len() != 2 {
        return None;
    }
    let other = workload_keys.iter().find(|k| **k != x.key)?;
    let y = axis(pairs, other)?;
    let mut maps: Vec<(String, Vec<Vec<Option<f64>>>)> = Vec::new();
    for p in pairs {
        let (Some(fx), Some(fy)) = (p.value_of(&x.key), p.value_of(&y.key)) else {
            continue;
        };
        let (Some(i), Some(j)) = (x.index(&fx.value), y.index(&fy.value)) else {
            continue;
        };
        let name = &p.target.name;
        if !maps.iter().any(|m| &m.0 == name) {
            maps.push((
                name.clone(),
                vec![vec![None; x.levels.len()]; y.levels.len()],
            ));
        }
        let mean = primary
            .rows
            .iter()
            .filter(|r| r.label == p.label(&[x.key.as_str()]))
            .find_map(|r| r.cells[i].as_ref())
            .and_then(|s| s.summary.map(|s| s.mean));
        let map = maps
            .iter_mut()
            .find(|m| &m.0 == name)
            .expect("pushed above");
        map.1[j][i] = mean;
    }
    Some(Grid { x, y, maps })
}
