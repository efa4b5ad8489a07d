//! Reading campaigns back: the one source of every report and statistic.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use hdrhistogram::Histogram;
use rusqlite::{OptionalExtension, Row};
use serde_json::Value;

use super::{variants, Store};
use crate::experiment::sweep::Factor;
use crate::metric::{Direction, Labels, MetricDef, MetricKey, Unit};
use crate::warning::{Warning, WarningKind};

#[derive(Debug, Clone, serde::Serialize)]
pub struct CampaignRow {
    pub id: i64,
    pub name: String,
    pub description: String,
    pub origin: String,
    pub status: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub storlab_version: String,
    pub planned_runs: i64,
    pub runs_ok: i64,
    pub runs_failed: i64,
}

#[cfg(test)]
impl CampaignRow {
    /// A finished campaign `name` of `runs` runs, all ok: what the report's
    /// unit tests build their campaigns around.
    pub fn finished(name: &str, runs: usize) -> CampaignRow {
        CampaignRow {
            id: 1,
            name: name.into(),
            description: String::new(),
            origin: String::new(),
            status: "finished".into(),
            started_at: String::new(),
            finished_at: None,
            storlab_version: String::new(),
            planned_runs: runs as i64,
            runs_ok: runs as i64,
            runs_failed: 0,
        }
    }
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TargetRow {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub baseline: bool,
    pub params: Value,
    pub facts: Value,
    /// The `[[target]]` table it is a variant of (its own name if none).
    pub family: String,
    /// Its swept values, the labels of every metric of its runs.
    pub factors: Vec<Factor>,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct WorkloadRow {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub primary_metric: String,
    pub params: Value,
    /// The `[[workload]]` table it is a variant of (its own name if none).
    pub family: String,
    /// Its swept values, the labels of every metric of its runs.
    pub factors: Vec<Factor>,
    /// Factors whose levels the report compares on every target.
    pub compare_levels: Vec<String>,
}

/// One stored value of a metric, with its unit and direction as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricValue {
    pub value: f64,
    pub unit: Unit,
    pub direction: Direction,
}

/// Values of a run's metric keyed by catalogue name and labels.
pub type Metrics = BTreeMap<MetricKey, MetricValue>;

#[derive(Debug, Clone)]
pub struct SeriesData {
    pub unit: Unit,
    pub interval_s: f64,
    pub values: Vec<f64>,
}

/// A stored latency histogram: its sample count and its HdrHistogram V2
/// encoding (nanoseconds), decoded on demand.
#[derive(Debug, Clone)]
pub struct HistData {
    pub count: u64,
    pub hdr_v2: Vec<u8>,
}

impl HistData {
    pub fn decode(&self) -> Result<Histogram<u64>> {
        hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut self.hdr_v2.as_slice())
            .map_err(|e| anyhow::anyhow!("decoding a stored histogram: {e:?}"))
    }
}

#[derive(Debug, Clone, Default)]
pub struct RunData {
    pub id: i64,
    pub target: String,
    pub workload: String,
    pub repetition: u32,
    pub round: u32,
    pub position: u32,
    pub warmup: bool,
    pub status: String,
    pub error: Option<String>,
    pub started_at: String,
    pub duration_s: f64,
    pub caches_dropped: bool,
    pub remounted: bool,
    pub metrics: Metrics,
    pub series: BTreeMap<MetricKey, SeriesData>,
    pub histograms: BTreeMap<MetricKey, HistData>,
    pub warnings: Vec<Warning>,
    /// What the run was measured with (`pg_server_version`, …).
    pub facts: BTreeMap<String, String>,
    /// MPI ranks that ran it at once (1 without MPI).
    pub ranks: u32,
    /// Each rank's part of a multi-client run, in rank order.
    pub per_rank: Vec<RankData>,
    /// The swept values of the run's target and workload variants: stored
    /// as labels on every metric, series and histogram, and taken off the
    /// keys above when read, so that a variant's metrics read as any
    /// run's ([`RunData::labels_of`] puts them back).
    pub factors: Labels,
}

impl RunData {
    /// A key's labels as stored: its own and the run's factors.
    pub fn labels_of(&self, key: &MetricKey) -> Labels {
        key.labels.clone().with_all(&self.factors)
    }

    /// The run's overall value of `def` (without labels).
    pub fn metric(&self, def: &MetricDef) -> Option<&MetricValue> {
        self.metrics.get(&MetricKey::plain(def.name))
    }
}

/// One rank's part of a multi-client run.
#[derive(Debug, Clone)]
pub struct RankData {
    pub rank: u32,
    pub host: String,
    pub status: String,
    pub error: Option<String>,
    /// Seconds from the start barrier to the end of this rank's run.
    pub done_s: Option<f64>,
    pub metrics: Metrics,
}

/// Everything stored about one campaign.
#[derive(Debug, Clone)]
pub struct CampaignData {
    pub campaign: CampaignRow,
    pub environment: Value,
    pub experiment: Value,
    pub targets: Vec<TargetRow>,
    pub workloads: Vec<WorkloadRow>,
    pub runs: Vec<RunData>,
    /// Why each pair stopped taking runs (fixed, width, max, time).
    pub stops: Vec<PairStop>,
    /// UUID, versions, host facts, tags, import record (schema v6).
    pub facts: super::CampaignFacts,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PairStop {
    pub target: String,
    pub workload: String,
    pub reason: String,
    pub measured_runs: u32,
    pub ci_pct: Option<f64>,
}

const CAMPAIGN_COLS: &str = "c.id, c.name, c.description, c.origin, c.status, c.started_at, c.finished_at, c.storlab_version, c.planned_runs,
    (SELECT COUNT(*) FROM runs r WHERE r.campaign_id = c.id AND r.status = 'ok'),
    (SELECT COUNT(*) FROM runs r WHERE r.campaign_id = c.id AND r.status = 'failed')";

fn campaign_row(r: &Row<'_>) -> rusqlite::Result<CampaignRow> {
    Ok(CampaignRow {
        id: r.get(0)?,
        name: r.get(1)?,
        description: r.get(2)?,
        origin: r.get(3)?,
        status: r.get(4)?,
        started_at: r.get(5)?,
        finished_at: r.get(6)?,
        storlab_version: r.get(7)?,
        planned_runs: r.get(8)?,
        runs_ok: r.get(9)?,
        runs_failed: r.get(10)?,
    })
}

fn json_col(text: String) -> Value {
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

impl Store {
    pub fn list_campaigns(&self) -> Result<Vec<CampaignRow>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {CAMPAIGN_COLS} FROM campaigns c ORDER BY c.id"
        ))?;
        let rows = st
            .query_map([], campaign_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows.into_iter().map(|c| self.with_live_status(c)).collect())
    }

    fn with_live_status(&self, mut c: CampaignRow) -> CampaignRow {
        c.status = self.live_status(c.id, c.status);
        c
    }

    /// Resolves a campaign given by id or name (the latest of that name);
    /// `None` means the latest campaign in the store.
    pub fn resolve_campaign(&self, which: Option<&str>) -> Result<i64> {
        let found: Option<i64> = match which {
            None => self
                .conn
                .query_row("SELECT MAX(id) FROM campaigns", [], |r| r.get(0))?,
            Some(w) => match w.parse::<i64>() {
                Ok(id) => self
                    .conn
                    .query_row("SELECT id FROM campaigns WHERE id = ?1", [id], |r| r.get(0))
                    .optional()?,
                Err(_) => self.conn.query_row(
                    "SELECT MAX(id) FROM campaigns WHERE name = ?1",
                    [w],
                    |r| r.get(0),
                )?,
            },
        };
        match (found, which) {
            (Some(id), _) => Ok(id),
            (None, None) => bail!(
                "the store {} holds no campaign yet; run one with `storlab run`",
                self.path.display()
            ),
            (None, Some(w)) => bail!(
                "no campaign `{w}` in {}; `storlab list` shows the campaigns",
                self.path.display()
            ),
        }
    }

    pub fn load_campaign(&self, id: i64) -> Result<CampaignData> {
        let campaign = self
            .conn
            .query_row(
                &format!("SELECT {CAMPAIGN_COLS} FROM campaigns c WHERE c.id = ?1"),
                [id],
                campaign_row,
            )
            .with_context(|| format!("reading campaign {id}"))?;
        let campaign = self.with_live_status(campaign);
        let (environment, experiment): (String, String) = self.conn.query_row(
            "SELECT environment_json, experiment_json FROM campaigns WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let experiment = json_col(experiment);
        let (targets, workloads) = self.variants(id, &experiment)?;
        let mut runs = self.runs(id)?;
        strip_factors(&mut runs, &targets, &workloads);
        Ok(CampaignData {
            campaign,
            environment: json_col(environment),
            experiment,
            targets,
            workloads,
            runs,
            stops: self.pair_stops(id)?,
            facts: self.campaign_facts(id)?,
        })
    }

    /// A campaign's targets and workloads with their variants' families
    /// and factors, from the experiment stored with it.
    pub(super) fn variants(
        &self,
        campaign: i64,
        experiment: &Value,
    ) -> Result<(Vec<TargetRow>, Vec<WorkloadRow>)> {
        let mut targets = self.targets(campaign)?;
        let mut workloads = self.workloads(campaign)?;
        for t in &mut targets {
            let v = variants::variant(experiment, "targets", &t.name);
            (t.family, t.factors) = (v.family, v.factors);
        }
        for w in &mut workloads {
            let v = variants::variant(experiment, "workloads", &w.name);
            (w.family, w.factors, w.compare_levels) = (v.family, v.factors, v.compare_levels);
        }
        Ok((targets, workloads))
    }

    fn targets(&self, campaign: i64) -> Result<Vec<TargetRow>> {
        let mut st = self.conn.prepare(
            "SELECT id, name, kind, baseline, params_json, facts_json FROM targets WHERE campaign_id = ?1 ORDER BY position",
        )?;
        let rows = st.query_map([campaign], |r| {
            Ok(TargetRow {
                id: r.get(0)?,
                name: r.get(1)?,
                kind: r.get(2)?,
                baseline: r.get(3)?,
                params: json_col(r.get(4)?),
                facts: json_col(r.get(5)?),
                family: String::new(),
                factors: Vec::new(),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn workloads(&self, campaign: i64) -> Result<Vec<WorkloadRow>> {
        let mut st = self.conn.prepare(
            "SELECT id, name, kind, primary_metric, params_json FROM workloads WHERE campaign_id = ?1 ORDER BY position",
        )?;
        let rows = st.query_map([campaign], |r| {
            Ok(WorkloadRow {
                id: r.get(0)?,
                name: r.get(1)?,
                kind: r.get(2)?,
                primary_metric: r.get(3)?,
                params: json_col(r.get(4)?),
                family: String::new(),
                factors: Vec::new(),
                compare_levels: Vec::new(),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn runs(&self, campaign: i64) -> Result<Vec<RunData>> {
        let mut st = self.conn.prepare(
            "SELECT r.id, t.name, w.name, r.repetition, r.round, r.position, r.warmup, r.status, r.error, r.started_at,
                    r.duration_s, r.caches_dropped, r.remounted, r.ranks
             FROM runs r JOIN targets t ON t.id = r.target_id JOIN workloads w ON w.id = r.workload_id
             WHERE r.campaign_id = ?1 ORDER BY r.id",
        )?;
        let mut runs = st
            .query_map([campaign], |r| {
                Ok(RunData {
                    id: r.get(0)?,
                    target: r.get(1)?,
                    workload: r.get(2)?,
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
                    metrics: BTreeMap::new(),
                    series: BTreeMap::new(),
                    histograms: BTreeMap::new(),
                    warnings: Vec::new(),
                    facts: BTreeMap::new(),
                    ranks: r.get(13)?,
                    per_rank: Vec::new(),
                    factors: Labels::new(),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let index: BTreeMap<i64, usize> = runs.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
        self.attach_metrics(campaign, &index, &mut runs)?;
        self.attach_series(campaign, &index, &mut runs)?;
        self.attach_histograms(campaign, &index, &mut runs)?;
        self.attach_warnings(campaign, &index, &mut runs)?;
        self.attach_facts(campaign, &index, &mut runs)?;
        self.attach_ranks(campaign, &index, &mut runs)?;
        Ok(runs)
    }

    /// Runs `f` on every row of `sql` (whose first column is a run id of
    /// `campaign`) with the index of that run in `runs`.
    fn each_run_row(
        &self,
        sql: &str,
        campaign: i64,
        index: &BTreeMap<i64, usize>,
        mut f: impl FnMut(usize, &Row<'_>) -> rusqlite::Result<()>,
    ) -> Result<()> {
        let mut st = self.conn.prepare(sql)?;
        let mut rows = st.query([campaign])?;
        while let Some(r) = rows.next()? {
            if let Some(&i) = index.get(&r.get::<_, i64>(0)?) {
                f(i, r)?;
            }
        }
        Ok(())
    }

    fn attach_metrics(
        &self,
        campaign: i64,
        index: &BTreeMap<i64, usize>,
        runs: &mut [RunData],
    ) -> Result<()> {
        let sql = "SELECT m.run_id, m.name, m.labels, m.value, m.unit, m.direction FROM metrics m JOIN runs r ON r.id = m.run_id WHERE r.campaign_id = ?1";
        self.each_run_row(sql, campaign, index, |i, r| {
            let (key, value) = metric_row(r, 1)?;
            runs[i].metrics.insert(key, value);
            Ok(())
        })
    }

    fn attach_series(
        &self,
        campaign: i64,
        index: &BTreeMap<i64, usize>,
        runs: &mut [RunData],
    ) -> Result<()> {
        let sql = "SELECT s.run_id, s.name, s.labels, s.unit, s.interval_s, s.values_json FROM series s JOIN runs r ON r.id = s.run_id WHERE r.campaign_id = ?1";
        self.each_run_row(sql, campaign, index, |i, r| {
            let values: Vec<Option<f64>> =
                serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or_default();
            let values = values.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect();
            let series = SeriesData {
                unit: unit(r, 3)?,
                interval_s: r.get(4)?,
                values,
            };
            runs[i].series.insert(key(r, 1)?, series);
            Ok(())
        })
    }

    fn attach_histograms(
        &self,
        campaign: i64,
        index: &BTreeMap<i64, usize>,
        runs: &mut [RunData],
    ) -> Result<()> {
        let sql = "SELECT h.run_id, h.name, h.labels, h.count, h.hdr_v2 FROM histograms h JOIN runs r ON r.id = h.run_id WHERE r.campaign_id = ?1";
        self.each_run_row(sql, campaign, index, |i, r| {
            let hist = HistData {
                count: r.get::<_, i64>(3)?.max(0) as u64,
                hdr_v2: r.get(4)?,
            };
            runs[i].histograms.insert(key(r, 1)?, hist);
            Ok(())
        })
    }

    fn attach_warnings(
        &self,
        campaign: i64,
        index: &BTreeMap<i64, usize>,
        runs: &mut [RunData],
    ) -> Result<()> {
        let sql = "SELECT w.run_id, w.kind, w.message FROM warnings w JOIN runs r ON r.id = w.run_id WHERE r.campaign_id = ?1 ORDER BY w.rowid";
        self.each_run_row(sql, campaign, index, |i, r| {
            let kind: String = r.get(1)?;
            let text: String = r.get(2)?;
            // A kind a newer storlab wrote reads as a note.
            let kind = WarningKind::from_name(&kind).unwrap_or(WarningKind::Note);
            runs[i].warnings.push(Warning::new(kind, text));
            Ok(())
        })
    }

    fn attach_facts(
        &self,
        campaign: i64,
        index: &BTreeMap<i64, usize>,
        runs: &mut [RunData],
    ) -> Result<()> {
        let sql = "SELECT f.run_id, f.name, f.value FROM run_facts f JOIN runs r ON r.id = f.run_id WHERE r.campaign_id = ?1";
        self.each_run_row(sql, campaign, index, |i, r| {
            runs[i].facts.insert(r.get(1)?, r.get(2)?);
            Ok(())
        })
    }

    fn attach_ranks(
        &self,
        campaign: i64,
        index: &BTreeMap<i64, usize>,
        runs: &mut [RunData],
    ) -> Result<()> {
        let sql = "SELECT k.run_id, k.rank, k.host, k.status, k.error, k.done_s FROM run_ranks k JOIN runs r ON r.id = k.run_id WHERE r.campaign_id = ?1 ORDER BY k.run_id, k.rank";
        self.each_run_row(sql, campaign, index, |i, r| {
            runs[i].per_rank.push(RankData {
                rank: r.get(1)?,
                host: r.get(2)?,
                status: r.get(3)?,
                error: r.get(4)?,
                done_s: r.get(5)?,
                metrics: BTreeMap::new(),
            });
            Ok(())
        })?;
        let sql = "SELECT m.run_id, m.rank, m.name, m.labels, m.value, m.unit, m.direction FROM rank_metrics m JOIN runs r ON r.id = m.run_id WHERE r.campaign_id = ?1";
        self.each_run_row(sql, campaign, index, |i, r| {
            let rank: u32 = r.get(1)?;
            let (key, value) = metric_row(r, 2)?;
            if let Some(k) = runs[i].per_rank.iter_mut().find(|k| k.rank == rank) {
                k.metrics.insert(key, value);
            }
            Ok(())
        })
    }
}

/// A metric's key from the columns `name, labels` at `at`.
fn key(r: &Row<'_>, at: usize) -> rusqlite::Result<MetricKey> {
    let name: String = r.get(at)?;
    let text: String = r.get(at + 1)?;
    let labels = Labels::from_json_text(&text).map_err(|e| bad_column(at + 1, e))?;
    Ok(MetricKey::new(&name, labels))
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

/// A metric from the columns `name, labels, value, unit, direction` at `at`.
fn metric_row(r: &Row<'_>, at: usize) -> rusqlite::Result<(MetricKey, MetricValue)> {
    let direction =
        Direction::parse(&r.get::<_, String>(at + 4)?).unwrap_or(Direction::HigherIsBetter);
    let value = MetricValue {
        value: r.get(at + 2)?,
        unit: unit(r, at + 3)?,
        direction,
    };
    Ok((key(r, at)?, value))
}

fn bad_column(at: usize, why: String) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(at, rusqlite::types::Type::Text, why.into())
}

/// The labels every metric of a run of `target` × `workload` carries.
pub(super) fn run_factors(target: Option<&TargetRow>, workload: Option<&WorkloadRow>) -> Labels {
    let t = target.map(|t| t.factors.as_slice()).unwrap_or_default();
    let w = workload.map(|w| w.factors.as_slice()).unwrap_or_default();
    variants::run_labels(t, w)
}

/// Takes each run's factors off its metric, series and histogram keys
/// (and its ranks' metrics) into [`RunData::factors`].
fn strip_factors(runs: &mut [RunData], targets: &[TargetRow], workloads: &[WorkloadRow]) {
    for r in runs {
        let t = targets.iter().find(|t| t.name == r.target);
        let w = workloads.iter().find(|w| w.name == r.workload);
        let factors = run_factors(t, w);
        if factors.is_empty() {
            continue;
        }
        r.metrics = variants::strip(std::mem::take(&mut r.metrics), &factors);
        r.series = variants::strip(std::mem::take(&mut r.series), &factors);
        r.histograms = variants::strip(std::mem::take(&mut r.histograms), &factors);
        for k in &mut r.per_rank {
            k.metrics = variants::strip(std::mem::take(&mut k.metrics), &factors);
        }
        r.factors = factors;
    }
}
