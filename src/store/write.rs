//! Writing campaigns and runs. Each run is one transaction, committed as soon
//! as the run ends.

use anyhow::{Context, Result};
use rusqlite::{params, OptionalExtension};
use serde_json::Value;

use hdrhistogram::serialization::Serializer;

use super::Store;
use crate::experiment::Experiment;
use crate::host::now_rfc3339;
use crate::measure::{Metric, RunOutput};

/// Row ids of a campaign just begun.
#[derive(Debug, Clone)]
pub struct CampaignIds {
    pub campaign: i64,
    pub targets: Vec<i64>,
    pub workloads: Vec<i64>,
}

/// Where a run stands in the plan and what happened around it.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub campaign: i64,
    pub target: i64,
    pub workload: i64,
    pub repetition: u32,
    pub round: u32,
    pub position: u32,
    pub warmup: bool,
    pub status: &'static str,
    pub error: Option<String>,
    pub started_at: String,
    pub duration_s: f64,
    pub caches_dropped: bool,
    pub remounted: bool,
    /// MPI ranks that ran it at once (1 without MPI).
    pub ranks: u32,
}

/// One rank's part of a multi-client run.
#[derive(Debug, Clone)]
pub struct RankRow {
    pub rank: u32,
    pub host: String,
    /// `ok`, `failed`, `interrupted`, or `skipped` (another rank failed first).
    pub status: String,
    pub error: Option<String>,
    /// Seconds from the start barrier to the end of this rank's run.
    pub done_s: Option<f64>,
    pub metrics: Vec<Metric>,
}

impl Store {
    /// Records a new campaign with its targets and workloads.
    pub fn begin_campaign(
        &mut self,
        exp: &Experiment,
        env: &Value,
        planned_runs: usize,
    ) -> Result<CampaignIds> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO campaigns (name, description, origin, status, started_at, storlab_version, planned_runs,
                experiment_source, experiment_json, environment_json)
             VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                exp.name,
                exp.description,
                exp.origin,
                now_rfc3339(),
                crate::VERSION,
                planned_runs as i64,
                exp.source,
                exp.to_json().to_string(),
                env.to_string()
            ],
        )?;
        let campaign = tx.last_insert_rowid();
        super::provenance::assign_uuid(&tx, campaign)?;
        let baseline = exp.baseline();
        let mut targets = Vec::new();
        for (i, t) in exp.targets.iter().enumerate() {
            tx.execute(
                "INSERT INTO targets (campaign_id, position, name, kind, baseline, params_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![campaign, i as i64, t.name, t.kind.name(), i == baseline, t.params.to_json().to_string()],
            )?;
            targets.push(tx.last_insert_rowid());
        }
        let mut workloads = Vec::new();
        for (i, w) in exp.workloads.iter().enumerate() {
            tx.execute(
                "INSERT INTO workloads (campaign_id, position, name, kind, primary_metric, params_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![campaign, i as i64, w.name, w.kind.name(), w.kind.primary().name, w.params.to_json().to_string()],
            )?;
            workloads.push(tx.last_insert_rowid());
        }
        // Locked before anyone can see it, so that it is never shown as
        // interrupted nor resumed while it starts.
        let lock = super::lock::take_or_refuse(&self.path, campaign)?;
        tx.commit().context("committing the new campaign")?;
        self.locks.push(lock);
        Ok(CampaignIds {
            campaign,
            targets,
            workloads,
        })
    }

    /// The row of workload `w` of `exp`, a variant made while the campaign
    /// runs (a capacity search's probe): made if the campaign has none of
    /// that name yet, with the campaign's stored experiment brought up to
    /// `exp`, so that the variant's family and factors read back as a
    /// swept one's.
    pub fn add_workload(&mut self, campaign: i64, exp: &Experiment, w: usize) -> Result<i64> {
        let spec = &exp.workloads[w];
        let tx = self.conn.transaction()?;
        let known: Option<i64> = tx
            .query_row(
                "SELECT id FROM workloads WHERE campaign_id = ?1 AND name = ?2",
                params![campaign, spec.name],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = known {
            return Ok(id);
        }
        let position: i64 = tx.query_row(
            "SELECT COUNT(*) FROM workloads WHERE campaign_id = ?1",
            [campaign],
            |r| r.get(0),
        )?;
        tx.execute(
            "INSERT INTO workloads (campaign_id, position, name, kind, primary_metric, params_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![campaign, position, spec.name, spec.kind.name(), spec.kind.primary().name, spec.params.to_json().to_string()],
        )?;
        let id = tx.last_insert_rowid();
        tx.execute(
            "UPDATE campaigns SET experiment_json = ?1 WHERE id = ?2",
            params![exp.to_json().to_string(), campaign],
        )?;
        tx.commit()
            .with_context(|| format!("recording workload `{}`", spec.name))?;
        Ok(id)
    }

    pub fn set_target_facts(&mut self, target: i64, facts: &Value) -> Result<()> {
        self.conn.execute(
            "UPDATE targets SET facts_json = ?1 WHERE id = ?2",
            params![facts.to_string(), target],
        )?;
        Ok(())
    }

    /// Stores one finished (or failed) run with everything it measured.
    pub fn record_run(&mut self, r: &RunRecord, out: Option<&RunOutput>) -> Result<i64> {
        self.record_run_ranks(r, out, &[])
    }

    /// Stores a run with its per-rank rows, all in one transaction.
    pub fn record_run_ranks(
        &mut self,
        r: &RunRecord,
        out: Option<&RunOutput>,
        ranks: &[RankRow],
    ) -> Result<i64> {
        let tx = self.conn.transaction()?;
        tx.prepare_cached(
            "INSERT INTO runs (campaign_id, target_id, workload_id, repetition, round, position, warmup, status, error,
                started_at, duration_s, caches_dropped, remounted, ranks)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?
        .execute(params![
                r.campaign, r.target, r.workload, r.repetition, r.round, r.position, r.warmup, r.status, r.error,
                r.started_at, r.duration_s, r.caches_dropped, r.remounted, r.ranks
            ])?;
        let run = tx.last_insert_rowid();
        if let Some(out) = out {
            insert_output(&tx, run, out)?;
        }
        for row in ranks {
            insert_rank(&tx, run, row)?;
        }
        tx.commit().context("committing a run to the store")?;
        Ok(run)
    }

    /// Sets a campaign's planned runs to those it ran: a plan that decided
    /// its rounds as it went (until decided, until_ci) planned what it
    /// ran, not its `max`.
    pub fn planned_as_run(&mut self, campaign: i64) -> Result<()> {
        self.conn.execute(
            "UPDATE campaigns SET planned_runs = (SELECT COUNT(*) FROM runs WHERE campaign_id = ?1) WHERE id = ?1",
            [campaign],
        )?;
        Ok(())
    }

    pub fn finish_campaign(&mut self, campaign: i64, status: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE campaigns SET status = ?1, finished_at = ?2 WHERE id = ?3",
            params![status, now_rfc3339(), campaign],
        )?;
        Ok(())
    }
}

fn insert_rank(tx: &rusqlite::Transaction<'_>, run: i64, row: &RankRow) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO run_ranks (run_id, rank, host, status, error, done_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![run, row.rank, row.host, row.status, row.error, row.done_s])?;
    for m in row.metrics.iter().filter(|m| m.value.is_finite()) {
        let key = metric_key(tx, run, m)?;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO rank_metric_values (run_id, rank, key_id, value) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![run, row.rank, key, m.value])?;
    }
    Ok(())
}

/// The id of a key in the campaign of `run`'s dictionary, added if new.
fn key_id(
    tx: &rusqlite::Transaction<'_>,
    run: i64,
    name: &str,
    labels: &str,
    unit: &str,
    direction: &str,
) -> Result<i64> {
    let campaign = "(SELECT campaign_id FROM runs WHERE id = ?1)";
    tx.prepare_cached(&format!(
        "INSERT OR IGNORE INTO metric_keys (campaign_id, name, labels, unit, direction) VALUES ({campaign}, ?2, ?3, ?4, ?5)"
    ))?
    .execute(params![run, name, labels, unit, direction])?;
    let id = tx
        .prepare_cached(&format!(
            "SELECT id FROM metric_keys WHERE campaign_id = {campaign} AND name = ?2 AND labels = ?3 AND unit = ?4 AND direction = ?5"
        ))?
        .query_row(params![run, name, labels, unit, direction], |r| r.get(0))?;
    Ok(id)
}

fn metric_key(tx: &rusqlite::Transaction<'_>, run: i64, m: &Metric) -> Result<i64> {
    let labels = m.labels.to_json_text();
    key_id(
        tx,
        run,
        m.name(),
        &labels,
        m.unit().as_str(),
        m.direction().as_str(),
    )
}

/// The id of a text in a dictionary of the campaign of `run` (`warning_texts`
/// with its kind and message, `fact_texts` with its name and value).
fn text_id(
    tx: &rusqlite::Transaction<'_>,
    run: i64,
    table: &str,
    columns: (&str, &str),
    values: (&str, &str),
) -> Result<i64> {
    let (a, b) = columns;
    let campaign = "(SELECT campaign_id FROM runs WHERE id = ?1)";
    tx.prepare_cached(&format!(
        "INSERT OR IGNORE INTO {table} (campaign_id, {a}, {b}) VALUES ({campaign}, ?2, ?3)"
    ))?
    .execute(params![run, values.0, values.1])?;
    let id = tx
        .prepare_cached(&format!(
            "SELECT id FROM {table} WHERE campaign_id = {campaign} AND {a} = ?2 AND {b} = ?3"
        ))?
        .query_row(params![run, values.0, values.1], |r| r.get(0))?;
    Ok(id)
}

fn insert_output(tx: &rusqlite::Transaction<'_>, run: i64, out: &RunOutput) -> Result<()> {
    for m in out.metrics.iter().filter(|m| m.value.is_finite()) {
        let key = metric_key(tx, run, m)?;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO metric_values (run_id, key_id, value) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![run, key, m.value])?;
    }
    for s in &out.series {
        let labels = s.labels.to_json_text();
        let key = key_id(tx, run, s.def.name, &labels, s.def.unit.as_str(), "")?;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO series_values (run_id, key_id, interval_s, values_f64) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![run, key, s.interval_s, super::migrate_v8::pack(&s.values)])?;
    }
    for h in &out.histograms {
        let mut bytes = Vec::new();
        hdrhistogram::serialization::V2Serializer::new()
            .serialize(&h.hist, &mut bytes)
            .map_err(|e| anyhow::anyhow!("serializing histogram {}: {e:?}", h.def.name))?;
        let labels = h.labels.to_json_text();
        let key = key_id(tx, run, h.def.name, &labels, h.def.unit().as_str(), "")?;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO histogram_values (run_id, key_id, count, hdr_v2) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![run, key, h.hist.len() as i64, bytes])?;
    }
    for w in &out.warnings {
        let text = text_id(
            tx,
            run,
            "warning_texts",
            ("kind", "message"),
            (w.kind.name(), &w.text),
        )?;
        tx.prepare_cached("INSERT INTO run_warnings (run_id, text_id) VALUES (?1, ?2)")?
            .execute(params![run, text])?;
    }
    // One value per fact name: the last one given, as before.
    let facts: std::collections::BTreeMap<&str, &str> = out
        .facts
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    for (name, value) in facts {
        let fact = text_id(tx, run, "fact_texts", ("name", "value"), (name, value))?;
        tx.prepare_cached("INSERT INTO run_fact_values (run_id, fact_id) VALUES (?1, ?2)")?
            .execute(params![run, fact])?;
    }
    Ok(())
}
