//! Writing campaigns and runs. Each run is one transaction, committed as soon
//! as the run ends.

use anyhow::{Context, Result};
use rusqlite::params;
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
        tx.execute(
            "INSERT INTO runs (campaign_id, target_id, workload_id, repetition, round, position, warmup, status, error,
                started_at, duration_s, caches_dropped, remounted, ranks)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                r.campaign, r.target, r.workload, r.repetition, r.round, r.position, r.warmup, r.status, r.error,
                r.started_at, r.duration_s, r.caches_dropped, r.remounted, r.ranks
            ],
        )?;
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

    pub fn finish_campaign(&mut self, campaign: i64, status: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE campaigns SET status = ?1, finished_at = ?2 WHERE id = ?3",
            params![status, now_rfc3339(), campaign],
        )?;
        Ok(())
    }
}

fn insert_rank(tx: &rusqlite::Transaction<'_>, run: i64, row: &RankRow) -> Result<()> {
    tx.execute(
        "INSERT INTO run_ranks (run_id, rank, host, status, error, done_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![run, row.rank, row.host, row.status, row.error, row.done_s],
    )?;
    for m in row.metrics.iter().filter(|m| m.value.is_finite()) {
        tx.execute(
            "INSERT OR REPLACE INTO rank_metrics (run_id, rank, name, labels, value, unit, direction) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![run, row.rank, m.name(), m.labels.to_json_text(), m.value, m.unit().as_str(), m.direction().as_str()],
        )?;
    }
    Ok(())
}

fn insert_output(tx: &rusqlite::Transaction<'_>, run: i64, out: &RunOutput) -> Result<()> {
    for m in out.metrics.iter().filter(|m| m.value.is_finite()) {
        tx.execute(
            "INSERT OR REPLACE INTO metrics (run_id, name, labels, value, unit, direction) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![run, m.name(), m.labels.to_json_text(), m.value, m.unit().as_str(), m.direction().as_str()],
        )?;
    }
    for s in &out.series {
        tx.execute(
            "INSERT OR REPLACE INTO series (run_id, name, labels, unit, interval_s, values_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![run, s.def.name, s.labels.to_json_text(), s.def.unit.as_str(), s.interval_s, serde_json::to_string(&s.values)?],
        )?;
    }
    for h in &out.histograms {
        let mut bytes = Vec::new();
        hdrhistogram::serialization::V2Serializer::new()
            .serialize(&h.hist, &mut bytes)
            .map_err(|e| anyhow::anyhow!("serializing histogram {}: {e:?}", h.def.name))?;
        tx.execute(
            "INSERT OR REPLACE INTO histograms (run_id, name, labels, unit, count, hdr_v2) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![run, h.def.name, h.labels.to_json_text(), h.def.unit().as_str(), h.hist.len() as i64, bytes],
        )?;
    }
    for w in &out.warnings {
        tx.execute(
            "INSERT INTO warnings (run_id, kind, message) VALUES (?1, ?2, ?3)",
            params![run, w.kind.name(), w.text],
        )?;
    }
    for (name, value) in &out.facts {
        tx.execute(
            "INSERT OR REPLACE INTO run_facts (run_id, name, value) VALUES (?1, ?2, ?3)",
            params![run, name, value],
        )?;
    }
    Ok(())
}
