//! Reading campaigns back: the one source of every report and statistic.

use anyhow::{bail, Context, Result};
use hdrhistogram::Histogram;
use rusqlite::{OptionalExtension, Row};
use serde_json::Value;

use super::keyed::{Keyed, RunFacts};
use super::parts::Parts;
use super::{variants, Store};
use crate::experiment::sweep::Factor;
use crate::metric::{Direction, Labels, MetricDef, MetricKey, Unit};
use crate::warning::Warning;

#[derive(Debug, Clone, Default, serde::Serialize)]
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
pub type Metrics = Keyed<MetricValue>;

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
    pub series: Keyed<SeriesData>,
    pub histograms: Keyed<HistData>,
    pub warnings: Vec<Warning>,
    /// What the run was measured with (`pg_server_version`, …).
    pub facts: RunFacts,
    /// MPI ranks that ran it at once (1 without MPI).
    pub ranks: u32,
    /// Each rank's part of a multi-client run, in rank order.
    pub per_rank: Vec<RankData>,
    /// The swept values of the run's target and workload variants: stored
    /// as labels on every metric, series and histogram, and taken off the
    /// keys above when read, so that a variant's metrics read as any
    /// run's ([`RunData::labels_of`] puts them back). One per variant,
    /// shared by its runs.
    pub factors: std::sync::Arc<Labels>,
}

impl RunData {
    /// A key's labels as stored: its own and the run's factors.
    pub fn labels_of(&self, key: &MetricKey) -> Labels {
        key.labels.clone().with_all(&self.factors)
    }

    /// The run's overall value of `def` (without labels).
    pub fn metric(&self, def: &MetricDef) -> Option<&MetricValue> {
        self.metrics.plain(def.name)
    }

    /// For tests: an ok, measured run `id` of `workload` on `target`,
    /// round and repetition 1, with the plain `metrics` given.
    #[cfg(test)]
    pub fn of_test(
        id: i64,
        target: &str,
        workload: &str,
        metrics: &[(&MetricDef, f64)],
    ) -> RunData {
        let metrics: std::collections::BTreeMap<MetricKey, MetricValue> = metrics
            .iter()
            .map(|(def, value)| {
                (
                    MetricKey::plain(def.name),
                    MetricValue {
                        value: *value,
                        unit: def.unit,
                        direction: def.direction,
                    },
                )
            })
            .collect();
        RunData {
            id,
            target: target.into(),
            workload: workload.into(),
            repetition: 1,
            round: 1,
            status: "ok".into(),
            duration_s: 1.0,
            caches_dropped: true,
            metrics: metrics.into(),
            ranks: 1,
            ..Default::default()
        }
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
    /// The runs grouped by pair, made when first asked for
    /// ([`CampaignData::runs_of`]).
    pub pair_cache: super::pair_cache::PairCache,
    /// The figures read per pair and key, not into the runs
    /// ([`super::Parts::columns`]).
    pub columns: super::Columns,
    /// The other campaigns of its group of replicas (`storlab
    /// replicate`), oldest first, when loaded with them
    /// ([`Store::with_replicas`]); each has none of its own.
    pub replicas: Vec<CampaignData>,
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
        self.load_campaign_with(id, &Parts::all())
    }

    /// A campaign with only the `parts` of its runs a reader needs (a
    /// history: one figure of each run).
    pub fn load_campaign_with(&self, id: i64, parts: &Parts) -> Result<CampaignData> {
        self.with_runs(self.load_campaign_head(id)?, parts)
    }

    /// Campaign `head` ([`Store::load_campaign_head`]) with the `parts`
    /// of its runs read.
    pub fn with_runs(&self, mut head: CampaignData, parts: &Parts) -> Result<CampaignData> {
        (head.runs, head.columns) =
            self.runs(head.campaign.id, &head.targets, &head.workloads, parts)?;
        Ok(head)
    }

    /// Campaign `data` with the other campaigns of its group of replicas,
    /// each read with `parts`.
    pub fn with_replicas(&self, mut data: CampaignData, parts: &Parts) -> Result<CampaignData> {
        for id in self.replica_group(data.campaign.id)? {
            if id != data.campaign.id {
                data.replicas.push(self.load_campaign_with(id, parts)?);
            }
        }
        Ok(data)
    }

    /// A campaign without its runs (`runs` empty): what a stream of its
    /// runs ([`Store::each_run_chunk`]) is read with.
    pub fn load_campaign_head(&self, id: i64) -> Result<CampaignData> {
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
        Ok(CampaignData {
            campaign,
            environment: json_col(environment),
            experiment,
            targets,
            workloads,
            runs: Vec::new(),
            stops: self.pair_stops(id)?,
            facts: self.campaign_facts(id)?,
            pair_cache: Default::default(),
            columns: Default::default(),
            replicas: Vec::new(),
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
        let (target_entries, workload_entries) = (
            variants::entries(experiment, "targets"),
            variants::entries(experiment, "workloads"),
        );
        for t in &mut targets {
            let v = variants::variant(&target_entries, &t.name);
            (t.family, t.factors) = (v.family, v.factors);
        }
        for w in &mut workloads {
            let v = variants::variant(&workload_entries, &w.name);
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
}

/// The labels every metric of a run of `target` × `workload` carries.
pub(super) fn run_factors(target: Option<&TargetRow>, workload: Option<&WorkloadRow>) -> Labels {
    let t = target.map(|t| t.factors.as_slice()).unwrap_or_default();
    let w = workload.map(|w| w.factors.as_slice()).unwrap_or_default();
    variants::run_labels(t, w)
}
