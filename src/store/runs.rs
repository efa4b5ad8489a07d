//! Reading a campaign's runs with everything they recorded, compactly: the
//! campaign's dictionary of keys (schema v8) is read once, each key made
//! once per variant with the variant's factors taken off its labels
//! ([`super::variants`]), and every run's figures point at those shared
//! keys ([`Keyed`]). One pass over each table, in run order; nothing is
//! parsed per row but the value.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use anyhow::Result;
use rusqlite::{params, Row};

use super::columns::{Column, Columns};
use super::keyed::{Gather, Keyed, RunFacts};
use super::parts::{Drawn, Parts};
use super::read::{
    run_factors, CampaignData, HistData, MetricValue, RankData, RunData, SeriesData, TargetRow,
    WorkloadRow,
};
use super::{schema, Store};
use crate::metric::{Direction, Labels, MetricKey, Unit};
use crate::warning::{Warning, WarningKind};

/// A key of the campaign's dictionary as stored.
struct StoredKey {
    /// Its catalogue name, one copy per name ([`Dictionary::named`]).
    name: Arc<str>,
    /// Its labels as stored (a JSON object), parsed when a run's figure
    /// of it is first read: at 2,000 variants a report reads 100
    /// variants' telemetry of the 70,000 keys named, and parsing and
    /// freeing the others' labels was a tenth of its time.
    labels: Box<str>,
    unit: Unit,
    direction: Direction,
}

/// The campaign's keys, and each as a variant's runs read it.
struct Dictionary {
    keys: HashMap<i64, StoredKey>,
    /// The ids of each name's keys (a few dozen names, 94,000 keys at
    /// 2,000 variants).
    named: HashMap<Arc<str>, Vec<i64>>,
    /// Labels every figure of variant `i` carries (its factors).
    factors: Vec<Labels>,
    made: HashMap<(i64, usize), Arc<MetricKey>>,
    /// Every key made, once: variants' keys are the same once their
    /// factors are taken off (2,000 variants' `ops_per_s` is one key, not
    /// 2,000 copies of its name and labels: 85 MB at 10^5 runs).
    interned: HashSet<Arc<MetricKey>>,
    /// Per variant, the keys made, at their id's distance from the
    /// smallest id of the variant's first keys.
    dense: Vec<Dense>,
}

/// A key as a variant's runs read it, with its unit and direction.
type Made = (Arc<MetricKey>, Unit, Direction);

/// One variant's keys made, by id: those within [`DENSE_SPAN`] of the
/// first id the variant read (each variant's keys are written together,
/// a few dozen ids apart); others are found by hashing.
#[derive(Default)]
struct Dense {
    first: i64,
    table: Vec<Option<Made>>,
}

/// How far a variant's table reaches from its first key id: a table per
/// variant (thousands of variants), each as long as that variant's keys
/// lie apart.
const DENSE_SPAN: usize = 1 << 12;

impl Dense {
    /// The slot of key `id`, if it is within reach.
    fn slot(&mut self, id: i64) -> Option<&mut Option<Made>> {
        if self.table.is_empty() {
            self.first = id;
        }
        if id < self.first {
            // A smaller id than the first: move the table up to it, if
            // it still fits.
            let shift = usize::try_from(self.first - id).ok()?;
            if shift + self.table.len() > DENSE_SPAN {
                return None;
            }
            self.table.splice(0..0, std::iter::repeat(None).take(shift));
            self.first = id;
        }
        let i = usize::try_from(id - self.first)
            .ok()
            .filter(|&i| i < DENSE_SPAN)?;
        if self.table.len() <= i {
            self.table.resize(i + 1, None);
        }
        Some(&mut self.table[i])
    }
}

impl Dictionary {
    /// The keys of `campaign`; with `named`, only those the runs between
    /// its run ids may be read with: the figures of its names, the series
    /// and histograms (their keys have no direction), and what the runs'
    /// ranks recorded. At 2,000 variants the campaign has 94,000 keys and
    /// the summary reads 18,000: parsing and freeing the others' labels
    /// was 13% of `show`.
    fn read(
        store: &Store,
        campaign: i64,
        factors: Vec<Labels>,
        named: Option<(&[String], (i64, i64))>,
    ) -> Result<Dictionary> {
        const EVERY: &str =
            "SELECT id, name, labels, unit, direction FROM metric_keys WHERE campaign_id = ?1";
        let mut st;
        let mut rows = match named {
            None => {
                st = store.conn.prepare(EVERY)?;
                st.query(params![campaign])?
            }
            Some((names, (first, last))) => {
                st = store.conn.prepare(&format!(
                    "{EVERY} AND (direction = '' OR name IN (SELECT value FROM json_each(?2))
                     OR id IN (SELECT key_id FROM rank_metric_values WHERE run_id BETWEEN ?3 AND ?4))"
                ))?;
                let names = serde_json::to_string(names)?;
                st.query(params![campaign, names, first, last])?
            }
        };
        let mut keys = HashMap::new();
        let mut by_name: HashMap<Arc<str>, Vec<i64>> = HashMap::new();
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let name = r.get_ref(1)?.as_str()?;
            let name = match by_name.get_key_value(name) {
                Some((n, _)) => n.clone(),
                None => Arc::from(name),
            };
            by_name.entry(name.clone()).or_default().push(id);
            let labels = Box::from(r.get_ref(2)?.as_str()?);
            let unit = unit(r, 3)?;
            let direction =
                Direction::parse(&r.get::<_, String>(4)?).unwrap_or(Direction::HigherIsBetter);
            keys.insert(
                id,
                StoredKey {
                    name,
                    labels,
                    unit,
                    direction,
                },
            );
        }
        Ok(Dictionary {
            keys,
            named: by_name,
            factors,
            made: HashMap::new(),
            interned: HashSet::new(),
            dense: Vec::new(),
        })
    }

    /// The ids of the keys named `names` (with any labels), in id order.
    fn ids_named(&self, names: &[String]) -> Vec<i64> {
        let mut ids: Vec<i64> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        for n in names.iter().filter(|n| seen.insert(n.as_str())) {
            ids.extend(self.named.get(n.as_str()).into_iter().flatten());
        }
        ids.sort_unstable();
        ids
    }

    /// The ids of the keys named `names` (with any labels) that the runs
    /// of a variant `wanted` (by index) may have recorded, in id order:
    /// those whose labels do not contradict its factors (a run's figures
    /// carry its variant's factors as labels when storlab ran it; a store
    /// written otherwise may have keys without them). A report of 2,000
    /// variants lays out 100, and reads their telemetry only.
    fn ids_of(&self, names: &[String], wanted: &[bool]) -> Vec<i64> {
        let ids = self.ids_named(names);
        if wanted.iter().all(|w| *w) {
            return ids;
        }
        let mut chosen: Vec<&Labels> = (self.factors.iter().zip(wanted))
            .filter(|(_, w)| **w)
            .map(|(f, _)| f)
            .collect();
        chosen.sort_unstable();
        chosen.dedup();
        let mut factors: Vec<&str> = (self.factors.iter())
            .flat_map(|f| f.iter().map(|(n, _)| n))
            .collect();
        factors.sort_unstable();
        factors.dedup();
        // Decided once per distinct set of factor labels (a variant's).
        let mut decided: HashMap<Vec<(&str, &str)>, bool> = HashMap::new();
        ids.into_iter()
            .filter(|id| {
                let Some(k) = self.keys.get(id) else {
                    return false;
                };
                // Read in place, not parsed into labels; a key whose
                // labels are not read so (escapes, which storlab never
                // writes, or no JSON object) is kept, for the read to
                // parse them or say what is wrong.
                let Ok(labels) = serde_json::from_str::<BTreeMap<&str, &str>>(&k.labels) else {
                    return true;
                };
                let theirs: Vec<(&str, &str)> = labels
                    .into_iter()
                    .filter(|(n, _)| factors.contains(n))
                    .collect();
                *decided.entry(theirs).or_insert_with_key(|theirs| {
                    (chosen.iter())
                        .any(|f| (theirs.iter()).all(|(n, v)| f.value(n).map_or(true, |x| x == *v)))
                })
            })
            .collect()
    }

    /// Key `id` as the runs of `variant` read it, with its unit and direction.
    /// Asked once per stored figure (millions for 10^5 runs): a key made
    /// is found again by its place in a table per variant, without hashing.
    /// `None` for a key not in the dictionary; an error for labels that
    /// do not parse.
    fn key(&mut self, id: i64, variant: usize) -> rusqlite::Result<Option<Made>> {
        if self.dense.len() <= variant {
            self.dense.resize_with(variant + 1, Dense::default);
        }
        if let Some(Some(made)) = self.dense[variant].slot(id) {
            return Ok(Some(made.clone()));
        }
        let Some(stored) = self.keys.get(&id) else {
            return Ok(None);
        };
        let key = match self.made.get(&(id, variant)) {
            Some(key) => key.clone(),
            None => {
                let labels =
                    Labels::from_json_text(&stored.labels).map_err(|e| bad_column(2, e))?;
                let key = MetricKey::new(&stored.name, labels.without(&self.factors[variant]));
                let key = match self.interned.get(&key) {
                    Some(k) => k.clone(),
                    None => {
                        let k = Arc::new(key);
                        self.interned.insert(k.clone());
                        k
                    }
                };
                self.made.insert((id, variant), key.clone());
                key
            }
        };
        let made = (key, stored.unit, stored.direction);
        if let Some(slot) = self.dense[variant].slot(id) {
            *slot = Some(made.clone());
        }
        Ok(Some(made))
    }
}

/// Ids the store gave, written as numbers: nothing to quote.
fn id_list(ids: &[i64]) -> String {
    ids.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What seeking a row in the (run, key) index costs against stepping to
/// the next: SQLite seeks every key asked for in every run, where reading
/// a run's rows in that index steps over each it recorded. Measured on a
/// store of 10^5 runs of 39 figures each (`sqlite3`, the figures read
/// run by run, as the series are): 20 keys sought 0.58 s, the same 20 kept from
/// every row 0.43 s, 3 keys sought 0.12 s.
const SEEK_COST: usize = 3;

/// Whether the rows of keys `ids`, of which a run records about
/// `per_run`, are best sought in each run: when they are few beside what
/// a run records. Otherwise every row is read and those of the keys kept
/// (a key per variant, thousands of variants: a seek per run and key was
/// most of a report's time).
fn sought(ids: &[i64], per_run: usize) -> bool {
    ids.len() * SEEK_COST <= per_run
}

/// The condition keeping the rows of keys `ids` (a table aliased `v`,
/// read run by run), each sought in each run or kept from every row
/// ([`sought`]). The rows come in the same order either way.
fn key_filter(ids: &[i64], sought: bool) -> String {
    // A unary + keeps SQLite from using the index for the key.
    let index = if sought { "" } else { "+" };
    format!(" AND {index}v.key_id IN ({})", id_list(ids))
}

/// Key ids to keep, looked up by their place: a campaign's keys are a
/// run of ids. Keeping the rows of thousands of keys (2,000 variants'
/// figures) in SQL, by a list SQLite searches for every row, took twice
/// as long as reading every row (0.70 against 0.33 s at 10^5 runs).
struct KeySet {
    first: i64,
    kept: Vec<bool>,
}

impl KeySet {
    fn of(ids: &[i64]) -> KeySet {
        let first = ids.iter().copied().min().unwrap_or(0);
        let mut kept = Vec::new();
        for &id in ids {
            let at = (id - first) as usize;
            if kept.len() <= at {
                kept.resize(at + 1, false);
            }
            kept[at] = true;
        }
        KeySet { first, kept }
    }

    fn has(&self, id: i64) -> bool {
        id >= self.first && self.kept.get((id - self.first) as usize) == Some(&true)
    }
}

/// Rows gathered run by run into each run's [`Keyed`]: a run's rows are
/// gathered, then made into its `Keyed`; a run whose rows came apart has
/// the later ones added to it.
struct PerRun<V> {
    out: Vec<Keyed<V>>,
    gather: Gather<V>,
    /// The run gathered, and its variant.
    at: Option<(usize, usize)>,
}

impl<V> PerRun<V> {
    fn new(runs: usize) -> Self {
        PerRun {
            out: (0..runs).map(|_| Keyed::new()).collect(),
            gather: Gather::default(),
            at: None,
        }
    }

    /// A row of run `i` (of `variant`).
    fn push(&mut self, i: usize, variant: usize, key: Arc<MetricKey>, value: V) {
        if self.at.map(|(g, _)| g) != Some(i) {
            self.flush();
            self.at = Some((i, variant));
        }
        self.gather.push(key, value);
    }

    fn flush(&mut self) {
        if let Some((g, variant)) = self.at.take() {
            self.out[g].absorb(self.gather.take(variant));
        }
    }

    fn finish(mut self) -> Vec<Keyed<V>> {
        self.flush();
        self.out
    }
}

/// Each run's place among the runs read, by its id: looked up for every
/// row read (millions at 10^5 runs). A campaign's run ids are mostly a
/// run of numbers (campaigns run at once interleave theirs): a table over
/// the ids when it is at most four times the runs, a map otherwise.
enum Places {
    Table { first: i64, at: Vec<u32> },
    Map(HashMap<i64, usize>),
}

impl Places {
    /// The places of runs of ids `ids`, in order.
    fn of(ids: impl Iterator<Item = i64> + Clone) -> Places {
        let (mut n, mut first, mut last) = (0usize, i64::MAX, i64::MIN);
        for id in ids.clone() {
            (n, first, last) = (n + 1, first.min(id), last.max(id));
        }
        let span = last
            .checked_sub(first)
            .and_then(|s| usize::try_from(s).ok());
        match span {
            Some(span) if span < 4 * n && u32::try_from(n).is_ok() => {
                let mut at = vec![u32::MAX; span + 1];
                for (i, id) in ids.enumerate() {
                    at[(id - first) as usize] = i as u32;
                }
                Places::Table { first, at }
            }
            _ => Places::Map(ids.enumerate().map(|(i, id)| (id, i)).collect()),
        }
    }

    fn get(&self, id: i64) -> Option<usize> {
        match self {
            Places::Table { first, at } => {
                let i = *at.get(usize::try_from(id.checked_sub(*first)?).ok()?)?;
                (i != u32::MAX).then_some(i as usize)
            }
            Places::Map(m) => m.get(&id).copied(),
        }
    }
}

/// The runs of a campaign being read: each run's place and variant.
struct Reading<'a> {
    store: &'a Store,
    campaign: i64,
    /// The first and last run id read.
    range: (i64, i64),
    index: Places,
    variant: Vec<usize>,
    dictionary: Dictionary,
}

impl Store {
    /// Every run of `campaign` in order, with its figures, series,
    /// histograms, warnings, facts and ranks; the variants' factors taken
    /// off the keys into [`RunData::factors`].
    pub(super) fn runs(
        &self,
        campaign: i64,
        targets: &[TargetRow],
        workloads: &[WorkloadRow],
        parts: &Parts,
    ) -> Result<(Vec<RunData>, Columns)> {
        self.runs_between(campaign, targets, workloads, (i64::MIN, i64::MAX), parts)
    }

    /// The runs of campaign `c` (read by [`Store::load_campaign_head`]) a
    /// chunk of at most `size` at a time, in order: what an export streams,
    /// holding one chunk in memory however many runs the campaign has.
    pub fn each_run_chunk(
        &self,
        c: &CampaignData,
        size: usize,
        mut f: impl FnMut(&[RunData]) -> Result<()>,
    ) -> Result<()> {
        let id = c.campaign.id;
        for range in self.run_id_chunks(id, size.max(1))? {
            f(&self
                .runs_between(id, &c.targets, &c.workloads, range, &Parts::all())?
                .0)?;
        }
        Ok(())
    }

    /// The first and last run id of each chunk of `size` runs of `campaign`.
    fn run_id_chunks(&self, campaign: i64, size: usize) -> Result<Vec<(i64, i64)>> {
        let mut st = self
            .conn
            .prepare("SELECT id FROM runs WHERE campaign_id = ?1 ORDER BY id")?;
        let mut rows = st.query([campaign])?;
        let (mut chunks, mut first, mut n) = (Vec::new(), None, 0);
        let mut last = 0;
        while let Some(r) = rows.next()? {
            last = r.get(0)?;
            first.get_or_insert(last);
            n += 1;
            if n == size {
                chunks.push((first.take().unwrap_or(last), last));
                n = 0;
            }
        }
        if let Some(f) = first {
            chunks.push((f, last));
        }
        Ok(chunks)
    }

    /// The runs of `campaign` whose ids lie in `range` (both ends in).
    fn runs_between(
        &self,
        campaign: i64,
        targets: &[TargetRow],
        workloads: &[WorkloadRow],
        range: (i64, i64),
        parts: &Parts,
    ) -> Result<(Vec<RunData>, Columns)> {
        let name = |id: i64, rows: &HashMap<i64, &str>| {
            rows.get(&id).map(|n| n.to_string()).unwrap_or_default()
        };
        let tnames: HashMap<i64, &str> = targets.iter().map(|t| (t.id, t.name.as_str())).collect();
        let wnames: HashMap<i64, &str> =
            workloads.iter().map(|w| (w.id, w.name.as_str())).collect();
        // Each pair's variant, by the pair's ids.
        let mut pairs: HashMap<(i64, i64), usize> = HashMap::new();
        let mut factors: Vec<Labels> = Vec::new();
        let mut shared: Vec<Arc<Labels>> = Vec::new();
        let mut variant = Vec::new();
        let mut st = self.conn.prepare(
            "SELECT r.id, r.target_id, r.workload_id, r.repetition, r.round, r.position, r.warmup, r.status, r.error,
                    r.started_at, r.duration_s, r.caches_dropped, r.remounted, r.ranks
             FROM runs r WHERE r.campaign_id = ?1 AND r.id BETWEEN ?2 AND ?3 ORDER BY r.id",
        )?;
        // Counted first: a vector grown run by run held up to twice the
        // runs (10^5 runs, 40 MB at the peak).
        let count: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM runs WHERE campaign_id = ?1 AND id BETWEEN ?2 AND ?3",
            params![campaign, range.0, range.1],
            |r| r.get(0),
        )?;
        let mut runs = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        let mut rows = st.query(params![campaign, range.0, range.1])?;
        while let Some(r) = rows.next()? {
            let pair: (i64, i64) = (r.get(1)?, r.get(2)?);
            let v = *pairs.entry(pair).or_insert_with(|| {
                let t = targets.iter().find(|t| t.id == pair.0);
                let w = workloads.iter().find(|w| w.id == pair.1);
                factors.push(run_factors(t, w));
                shared.push(Arc::new(factors[factors.len() - 1].clone()));
                factors.len() - 1
            });
            variant.push(v);
            runs.push(RunData {
                id: r.get(0)?,
                target: name(pair.0, &tnames),
                workload: name(pair.1, &wnames),
                repetition: r.get(3)?,
                round: r.get(4)?,
                position: r.get(5)?,
                warmup: r.get(6)?,
                status: r.get(7)?,
                error: r.get(8)?,
                started_at: r.get(9)?,
                duration_s: r.get(10)?,
                caches_dropped: r.get(11)?,
                remounted: r.get(12)?,
                ranks: r.get(13)?,
                factors: shared[v].clone(),
                ..Default::default()
            });
        }
        let index = Places::of(runs.iter().map(|r| r.id));
        let bounds = (
            runs.first().map_or(0, |r| r.id),
            runs.last().map_or(-1, |r| r.id),
        );
        // The dictionary holds the keys of the figures read either way.
        let named: Option<Vec<String>> =
            (parts.metrics.as_ref()).map(|m| m.iter().chain(&parts.columns).cloned().collect());
        let mut reading = Reading {
            store: self,
            campaign,
            range,
            index,
            variant,
            dictionary: Dictionary::read(
                self,
                campaign,
                factors,
                named.as_deref().map(|n| (n, bounds)),
            )?,
        };
        reading.metrics(&mut runs, parts.metrics.as_deref())?;
        let wanted = reading.wanted(&runs, parts.columns_of.as_deref());
        let columns = reading.columns(&runs, &parts.columns, &wanted)?;
        if parts.series {
            reading.series(&mut runs, None)?;
        }
        if parts.histograms {
            reading.histograms(&mut runs)?;
        }
        if parts.warnings {
            reading.warnings(&mut runs)?;
        }
        if parts.facts {
            reading.facts(&mut runs)?;
        }
        if parts.ranks {
            reading.ranks(&mut runs)?;
        }
        Ok((runs, columns))
    }
}

impl Store {
    /// Reads into campaign `c` (read without series) the series `drawn`
    /// asks for; the runs' other series stay empty.
    pub fn read_series(&self, c: &mut CampaignData, drawn: &Drawn) -> Result<()> {
        let mut pairs: HashMap<(&str, &str), usize> = HashMap::new();
        let mut factors: Vec<Labels> = Vec::new();
        let mut variant = Vec::with_capacity(c.runs.len());
        for r in &c.runs {
            let pair = (r.target.as_str(), r.workload.as_str());
            let v = *pairs.entry(pair).or_insert_with(|| {
                let t = c.targets.iter().find(|t| t.name == pair.0);
                let w = c.workloads.iter().find(|w| w.name == pair.1);
                factors.push(run_factors(t, w));
                factors.len() - 1
            });
            variant.push(v);
        }
        let campaign = c.campaign.id;
        let bounds = (
            c.runs.first().map_or(0, |r| r.id),
            c.runs.last().map_or(-1, |r| r.id),
        );
        // Series' keys only (they have no direction): at 2,000 variants
        // the campaign has 94,000 keys, and parsing every one's labels
        // again was a tenth of a report's time.
        let series_keys = Some((&[][..], bounds));
        let mut reading = Reading {
            store: self,
            campaign,
            range: (i64::MIN, i64::MAX),
            index: Places::of(c.runs.iter().map(|r| r.id)),
            variant,
            dictionary: Dictionary::read(self, campaign, factors, series_keys)?,
        };
        let wanted = reading.wanted(&c.runs, drawn.of.as_deref());
        reading.series(&mut c.runs, Some((drawn, &wanted)))
    }
}

/// The place among variant `v`'s columns of `key`'s, made (to hold `runs`
/// values) if it has none yet.
fn column_of(
    per_variant: &mut Vec<Vec<Column>>,
    v: usize,
    key: Arc<MetricKey>,
    unit: Unit,
    direction: Direction,
    runs: usize,
) -> usize {
    if per_variant.len() <= v {
        per_variant.resize_with(v + 1, Vec::new);
    }
    let mine = &mut per_variant[v];
    match mine.iter().position(|c| c.key == key) {
        Some(at) => at,
        None => {
            mine.push(Column {
                key,
                unit,
                direction,
                values: Vec::with_capacity(runs),
            });
            mine.len() - 1
        }
    }
}

/// Runs `f` on every row of `sql` (the campaign `?1`, run ids from `?2`
/// to `?3`: `between`; whose first column is a run id) with the index of
/// that run in `index`; rows of runs not there are left. A run's index is
/// looked up once for its rows in a row (millions of figures, 10^5 runs).
/// Apart from [`Reading`], so that `f` may change the reading's other
/// fields (its dictionary).
fn each_row(
    store: &Store,
    campaign: i64,
    index: &Places,
    sql: &str,
    between: (i64, i64),
    mut f: impl FnMut(usize, &Row<'_>) -> rusqlite::Result<()>,
) -> Result<()> {
    let mut st = store.conn.prepare(sql)?;
    let mut rows = st.query(params![campaign, between.0, between.1])?;
    let mut last: Option<(i64, usize)> = None;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let i = match last {
            Some((l, i)) if l == id => i,
            _ => match index.get(id) {
                Some(i) => {
                    last = Some((id, i));
                    i
                }
                None => continue,
            },
        };
        f(i, r)?;
    }
    Ok(())
}

impl Reading<'_> {
    /// Per variant (a pair), whether it is one of the workloads `of`
    /// (every one when `None`), told by its first run of `runs`.
    fn wanted(&self, runs: &[RunData], of: Option<&[String]>) -> Vec<bool> {
        let Some(names) = of else {
            return vec![true; self.dictionary.factors.len()];
        };
        let mut wanted = vec![None; self.dictionary.factors.len()];
        for (r, &v) in runs.iter().zip(&self.variant) {
            wanted[v].get_or_insert_with(|| names.contains(&r.workload));
        }
        wanted.into_iter().map(|w| w.unwrap_or(false)).collect()
    }

    /// The rows of `table` (one keyed by run and key) the campaign's first
    /// run in the range has: about what each run records.
    fn per_run(&self, table: &str) -> Result<usize> {
        let n: i64 = self.store.conn.query_row(
            &format!(
                "SELECT COUNT(*) FROM {table} WHERE run_id = (SELECT MIN(id) FROM runs WHERE campaign_id = ?1 AND id BETWEEN ?2 AND ?3)"
            ),
            params![self.campaign, self.range.0, self.range.1],
            |r| r.get(0),
        )?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Runs `f` on every row of `sql` (the campaign `?1`, run ids from
    /// `?2` to `?3`: `between`; whose first column is a run id) with the
    /// index of that run; rows of runs not read are left.
    fn each(
        &self,
        sql: &str,
        between: (i64, i64),
        f: impl FnMut(usize, &Row<'_>) -> rusqlite::Result<()>,
    ) -> Result<()> {
        each_row(self.store, self.campaign, &self.index, sql, between, f)
    }

    /// Rows of `(run_id, key_id, …)` of `sql` (the campaign `?1`, run
    /// ids from `?2` to `?3`: `between`) gathered per run into `Keyed`
    /// values made by `value`, those of the keys in `keep` only when
    /// given ([`PerRun`]).
    fn keyed<V>(
        &mut self,
        sql: &str,
        runs: usize,
        keep: Option<&KeySet>,
        between: (i64, i64),
        mut value: impl FnMut(&Row<'_>, Unit, Direction) -> rusqlite::Result<V>,
    ) -> Result<Vec<Keyed<V>>> {
        let mut out = PerRun::new(runs);
        let (variants, dictionary) = (&self.variant, &mut self.dictionary);
        each_row(
            self.store,
            self.campaign,
            &self.index,
            sql,
            between,
            |i, r| {
                let id: i64 = r.get(1)?;
                if keep.is_some_and(|k| !k.has(id)) {
                    return Ok(());
                }
                let variant = variants[i];
                if let Some((key, unit, direction)) = dictionary.key(id, variant)? {
                    out.push(i, variant, key, value(r, unit, direction)?);
                }
                Ok(())
            },
        )?;
        Ok(out.finish())
    }

    /// The runs' figures; only those of `names` when given: along the
    /// index by key ([`schema::FIGURES_BY_KEY`]) when the store has it,
    /// else every row of the campaign's runs is read and theirs kept.
    fn metrics(&mut self, runs: &mut [RunData], names: Option<&[String]>) -> Result<()> {
        let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
            return Ok(());
        };
        let bounds = (first.id, last.id);
        let ids = names.map(|n| self.dictionary.ids_named(n));
        let values = match ids {
            Some(ids) if ids.is_empty() => return Ok(()),
            Some(ids) if schema::has_index(&self.store.conn, schema::FIGURES_BY_KEY)? => {
                self.metrics_by_key(runs.len(), &ids, bounds)?
            }
            ids => {
                // Along the (run, key) index from the first run to the
                // last (rows of other campaigns' runs between them are
                // left by `place`).
                const ALONG: &str = "SELECT v.run_id, v.key_id, v.value FROM metric_values v WHERE v.run_id BETWEEN ?2 AND ?3";
                let keep = ids.as_deref().map(KeySet::of);
                self.keyed(
                    ALONG,
                    runs.len(),
                    keep.as_ref(),
                    bounds,
                    |r, unit, direction| {
                        Ok(MetricValue {
                            value: r.get(2)?,
                            unit,
                            direction,
                        })
                    },
                )?
            }
        };
        for (run, m) in runs.iter_mut().zip(values) {
            run.metrics = m;
        }
        Ok(())
    }

    /// The figures of keys `ids` of the runs between `bounds`, read key by
    /// key along [`schema::FIGURES_BY_KEY`] and put back in run order.
    fn metrics_by_key(
        &mut self,
        runs: usize,
        ids: &[i64],
        bounds: (i64, i64),
    ) -> Result<Vec<Keyed<MetricValue>>> {
        let sql = format!(
            "SELECT v.run_id, v.key_id, v.value FROM metric_values v INDEXED BY {}
             WHERE v.key_id IN ({}) AND v.run_id BETWEEN ?2 AND ?3",
            schema::FIGURES_BY_KEY,
            id_list(ids)
        );
        // (run, key, value), key by key; each key's runs in order.
        let mut read: Vec<(usize, i64, f64)> = Vec::new();
        self.each(&sql, bounds, |i, r| {
            read.push((i, r.get(1)?, r.get(2)?));
            Ok(())
        })?;
        // Run by run, each run's keys in the order read (a stable counting
        // sort: no comparisons of 10^6 rows).
        let mut start = vec![0usize; runs + 1];
        for &(i, _, _) in &read {
            start[i + 1] += 1;
        }
        for i in 0..runs {
            start[i + 1] += start[i];
        }
        let mut ordered = vec![(0usize, 0i64, 0f64); read.len()];
        for row in read {
            let at = &mut start[row.0];
            ordered[*at] = row;
            *at += 1;
        }
        let mut out = PerRun::new(runs);
        for (i, id, value) in ordered {
            let variant = self.variant[i];
            if let Some((key, unit, direction)) = self.dictionary.key(id, variant)? {
                out.push(
                    i,
                    variant,
                    key,
                    MetricValue {
                        value,
                        unit,
                        direction,
                    },
                );
            }
        }
        Ok(out.finish())
    }

    /// The figures of `names` (with any labels) of `runs`, per pair and
    /// key ([`Columns`]): key by key along [`schema::FIGURES_BY_KEY`] when
    /// the store has it, else along the (run, key) index.
    /// Only the runs of the variants `wanted` (by index) are read.
    fn columns(&mut self, runs: &[RunData], names: &[String], wanted: &[bool]) -> Result<Columns> {
        let mut out = Columns::of_names(names);
        let (Some(first), Some(end)) = (runs.first(), runs.last()) else {
            return Ok(out);
        };
        let ids = self.dictionary.ids_of(names, wanted);
        if ids.is_empty() {
            return Ok(out);
        }
        let (sql, keep) = match schema::has_index(&self.store.conn, schema::FIGURES_BY_KEY)? {
            true => (
                format!(
                    "SELECT v.run_id, v.key_id, v.value FROM metric_values v INDEXED BY {}
                     WHERE v.key_id IN ({}) AND v.run_id BETWEEN ?2 AND ?3",
                    schema::FIGURES_BY_KEY,
                    id_list(&ids)
                ),
                None,
            ),
            false => (
                "SELECT v.run_id, v.key_id, v.value FROM metric_values v WHERE v.run_id BETWEEN ?2 AND ?3".to_string(),
                Some(KeySet::of(&ids)),
            ),
        };
        // Per variant (a pair), its columns; per (key, variant), its
        // column there. Rows come key by key, so the key read last and
        // its few variants' columns are looked up first.
        let mut per_variant: Vec<Vec<Column>> = Vec::new();
        // A column holds at most its variant's runs: made that long once,
        // not grown (120,000 columns at 2,000 variants).
        let mut runs_of = Vec::new();
        for &v in &self.variant {
            if runs_of.len() <= v {
                runs_of.resize(v + 1, 0);
            }
            runs_of[v] += 1;
        }
        let mut found: HashMap<(i64, usize), Option<usize>> = HashMap::new();
        let mut last: (i64, Vec<(usize, Option<usize>)>) = (i64::MIN, Vec::new());
        let (variant, dictionary) = (&self.variant, &mut self.dictionary);
        let between = (first.id, end.id);
        each_row(
            self.store,
            self.campaign,
            &self.index,
            &sql,
            between,
            |i, r| {
                let (id, v) = (r.get::<_, i64>(1)?, variant[i]);
                if keep.as_ref().is_some_and(|k| !k.has(id)) || !wanted[v] {
                    return Ok(());
                }
                if last.0 != id {
                    last = (id, Vec::new());
                }
                let at = match last.1.iter().find(|(x, _)| *x == v) {
                    Some(&(_, at)) => at,
                    None => {
                        let at = match found.get(&(id, v)) {
                            Some(&at) => at,
                            None => {
                                let at = dictionary.key(id, v)?.map(|(key, unit, direction)| {
                                    column_of(&mut per_variant, v, key, unit, direction, runs_of[v])
                                });
                                found.insert((id, v), at);
                                at
                            }
                        };
                        last.1.push((v, at));
                        at
                    }
                };
                if let Some(at) = at {
                    per_variant[v][at].values.push((r.get(0)?, r.get(2)?));
                }
                Ok(())
            },
        )?;
        // Each variant's pair, named by its first run.
        let mut named = vec![false; per_variant.len()];
        for r in runs.iter().enumerate() {
            let v = variant[r.0];
            if v < named.len() && !named[v] {
                named[v] = true;
                let columns = std::mem::take(&mut per_variant[v]);
                out.pair_mut(&r.1.workload, &r.1.target).extend(columns);
            }
        }
        Ok(out)
    }

    /// The runs' series; only those `drawn` asks for when given.
    /// With `drawn`, the named series of the variants `wanted` (by index)
    /// only.
    fn series(&mut self, runs: &mut [RunData], drawn: Option<(&Drawn, &[bool])>) -> Result<()> {
        let mut sql = "SELECT v.run_id, v.key_id, v.interval_s, v.values_f64 FROM runs r JOIN series_values v ON v.run_id = r.id WHERE r.campaign_id = ?1 AND r.id BETWEEN ?2 AND ?3".to_string();
        if let Some((d, wanted)) = drawn {
            let ids = self.dictionary.ids_of(&d.named, wanted);
            let keys = key_filter(&ids, sought(&ids, self.per_run("series_values")?));
            // Two selects, each led by the (run, key) index.
            let whole = id_list(&d.whole);
            sql = format!(
                "SELECT v.run_id, v.key_id, v.interval_s, v.values_f64 FROM series_values v WHERE v.run_id IN ({whole})
                 UNION ALL {sql}{keys} AND v.run_id NOT IN ({whole})"
            );
        }
        let values = self.keyed(&sql, runs.len(), None, self.range, |r, unit, _| {
            let bytes = r.get_ref(3)?.as_blob()?;
            Ok(SeriesData {
                unit,
                interval_s: r.get(2)?,
                values: super::migrate_v8::unpack(bytes),
            })
        })?;
        for (run, s) in runs.iter_mut().zip(values) {
            run.series = s;
        }
        Ok(())
    }

    fn histograms(&mut self, runs: &mut [RunData]) -> Result<()> {
        let sql = "SELECT v.run_id, v.key_id, v.count, v.hdr_v2 FROM runs r JOIN histogram_values v ON v.run_id = r.id WHERE r.campaign_id = ?1 AND r.id BETWEEN ?2 AND ?3";
        let values = self.keyed(sql, runs.len(), None, self.range, |r, _, _| {
            Ok(HistData {
                count: r.get::<_, i64>(2)?.max(0) as u64,
                hdr_v2: r.get(3)?,
            })
        })?;
        for (run, h) in runs.iter_mut().zip(values) {
            run.histograms = h;
        }
        Ok(())
    }

    fn warnings(&self, runs: &mut [RunData]) -> Result<()> {
        let sql = "SELECT w.run_id, t.kind, t.message FROM runs r JOIN run_warnings w ON w.run_id = r.id
                   JOIN warning_texts t ON t.id = w.text_id WHERE r.campaign_id = ?1 AND r.id BETWEEN ?2 AND ?3 ORDER BY w.rowid";
        self.each(sql, self.range, |i, r| {
            let kind: String = r.get(1)?;
            // A kind a newer storlab wrote reads as a note.
            let kind = WarningKind::from_name(&kind).unwrap_or(WarningKind::Note);
            runs[i]
                .warnings
                .push(Warning::new(kind, r.get::<_, String>(2)?));
            Ok(())
        })
    }

    fn facts(&self, runs: &mut [RunData]) -> Result<()> {
        // The campaign's fact texts once, each run's by id: no text is
        // read or hashed per run.
        let mut texts: HashMap<i64, (Arc<str>, Arc<str>)> = HashMap::new();
        let mut st = self
            .store
            .conn
            .prepare("SELECT id, name, value FROM fact_texts WHERE campaign_id = ?1")?;
        let mut rows = st.query([self.campaign])?;
        while let Some(r) = rows.next()? {
            let (name, value): (String, String) = (r.get(1)?, r.get(2)?);
            texts.insert(r.get(0)?, (Arc::from(name), Arc::from(value)));
        }
        // Along the (run, fact) key from the first run read to the last,
        // not sought run by run through a join (rows of other campaigns'
        // runs between them are left by `place`), as the figures are.
        let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
            return Ok(());
        };
        const ALONG: &str =
            "SELECT v.run_id, v.fact_id FROM run_fact_values v WHERE v.run_id BETWEEN ?2 AND ?3";
        // Each run's fact ids; runs that recorded the same share them.
        let mut rows: Vec<(usize, i64)> = Vec::new();
        self.each(ALONG, (first.id, last.id), |i, r| {
            rows.push((i, r.get(1)?));
            Ok(())
        })?;
        rows.sort_by_key(|&(i, _)| i);
        let mut shared: HashMap<Vec<i64>, RunFacts> = HashMap::new();
        let mut ids: Vec<i64> = Vec::new();
        for run in rows.chunk_by(|a, b| a.0 == b.0) {
            ids.clear();
            ids.extend(run.iter().map(|&(_, id)| id));
            ids.sort_unstable();
            let facts = match shared.get(ids.as_slice()) {
                Some(f) => f.clone(),
                None => {
                    let mut f = RunFacts::new();
                    for (name, value) in ids.iter().filter_map(|id| texts.get(id)) {
                        f.insert(name.clone(), value.clone());
                    }
                    shared.insert(ids.clone(), f.clone());
                    f
                }
            };
            runs[run[0].0].facts = facts;
        }
        Ok(())
    }

    fn ranks(&mut self, runs: &mut [RunData]) -> Result<()> {
        let sql = "SELECT k.run_id, k.rank, k.host, k.status, k.error, k.done_s FROM runs r JOIN run_ranks k ON k.run_id = r.id WHERE r.campaign_id = ?1 AND r.id BETWEEN ?2 AND ?3 ORDER BY k.run_id, k.rank";
        self.each(sql, self.range, |i, r| {
            runs[i].per_rank.push(RankData {
                rank: r.get(1)?,
                host: r.get(2)?,
                status: r.get(3)?,
                error: r.get(4)?,
                done_s: r.get(5)?,
                metrics: Keyed::new(),
            });
            Ok(())
        })?;
        let sql = "SELECT v.run_id, v.rank, v.key_id, v.value FROM runs r JOIN rank_metric_values v ON v.run_id = r.id WHERE r.campaign_id = ?1 AND r.id BETWEEN ?2 AND ?3";
        let mut st = self.store.conn.prepare(sql)?;
        let mut rows = st.query(params![self.campaign, self.range.0, self.range.1])?;
        while let Some(r) = rows.next()? {
            let Some(i) = self.index.get(r.get::<_, i64>(0)?) else {
                continue;
            };
            let Some((key, unit, direction)) = self.dictionary.key(r.get(2)?, self.variant[i])?
            else {
                continue;
            };
            let rank: u32 = r.get(1)?;
            let value = MetricValue {
                value: r.get(3)?,
                unit,
                direction,
            };
            if let Some(k) = runs[i].per_rank.iter_mut().find(|k| k.rank == rank) {
                k.metrics.insert(key, value);
            }
        }
        Ok(())
    }
}

/// A unit from its stored text at `at`.
fn unit(r: &Row<'_>, at: usize) -> rusqlite::Result<Unit> {
    let text: String = r.get(at)?;
    Unit::parse(&text).ok_or_else(|| {
        bad_column(
            at,
            format!(
                "unit `{text}` is none storlab writes; was the store written by another program?"
            ),
        )
    })
}

fn bad_column(at: usize, why: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(at, rusqlite::types::Type::Text, why.into())
}

#[cfg(test)]
mod tests {
    use super::Places;

    /// A run's place is found by its id in a table over dense ids and in a
    /// map over sparse ones; an id of no run read has none.
    #[test]
    fn a_run_is_found_by_its_id_whether_the_ids_are_dense_or_sparse() {
        let dense = [10, 11, 13, 14];
        let sparse = [5, 1_000, 1_000_000, i64::MAX];
        for ids in [&dense[..], &sparse[..]] {
            let places = Places::of(ids.iter().copied());
            assert_eq!(
                matches!(places, Places::Table { .. }),
                ids == dense,
                "{ids:?}"
            );
            for (i, &id) in ids.iter().enumerate() {
                assert_eq!(places.get(id), Some(i), "{id} of {ids:?}");
            }
            for id in [i64::MIN, 0, 12, 15, 999, i64::MAX - 1] {
                assert_eq!(places.get(id), None, "{id} of {ids:?}");
            }
        }
        assert_eq!(Places::of(std::iter::empty()).get(0), None);
    }
}
