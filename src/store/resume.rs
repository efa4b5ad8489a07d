//! What resuming a campaign and adaptive plans need from the store: the runs
//! already done with their primary value, why pairs stopped, and reopening a
//! killed campaign.

use std::collections::HashMap;

use anyhow::{bail, Context, Result};
use rusqlite::params;

use super::read::PairStop;
use super::write::CampaignIds;
use super::Store;

/// A run already recorded: its place in the plan and its primary value.
#[derive(Debug, Clone, PartialEq)]
pub struct DoneRun {
    pub target: i64,
    pub workload: i64,
    pub warmup: bool,
    pub repetition: u32,
    pub primary: Option<f64>,
    pub duration_s: f64,
    /// The run failed.
    pub failed: bool,
    /// The metrics asked for by name ([`Store::done_runs_with`]), as
    /// the primary: with the run's variant labels only.
    pub figures: Vec<(String, f64)>,
}

/// A stored campaign to resume: its experiment as written and its row ids.
#[derive(Debug, Clone)]
pub struct Resumable {
    pub source: String,
    pub origin: String,
    pub status: String,
    pub target_names: Vec<String>,
    pub workload_names: Vec<String>,
    /// Each workload's parameters as resolved when the campaign began
    /// (a fio job's text among them).
    pub workload_params: Vec<serde_json::Value>,
    pub ids: CampaignIds,
}

impl Store {
    pub fn resumable(&self, campaign: i64) -> Result<Resumable> {
        let (source, origin, status): (String, String, String) = self
            .conn
            .query_row(
                "SELECT experiment_source, origin, status FROM campaigns WHERE id = ?1",
                [campaign],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .with_context(|| format!("reading campaign {campaign}"))?;
        if status == "finished" {
            bail!("campaign {campaign} has finished; there is nothing to resume");
        }
        let rows = |table: &str| -> Result<Vec<(i64, String)>> {
            let mut st = self.conn.prepare(&format!(
                "SELECT id, name FROM {table} WHERE campaign_id = ?1 ORDER BY position"
            ))?;
            let v = st
                .query_map([campaign], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(v)
        };
        let (targets, workloads) = (rows("targets")?, rows("workloads")?);
        let mut st = self.conn.prepare(
            "SELECT params_json FROM workloads WHERE campaign_id = ?1 ORDER BY position",
        )?;
        let workload_params = st
            .query_map([campaign], |r| r.get::<_, String>(0))?
            .map(|p| Ok(serde_json::from_str(&p?)?))
            .collect::<Result<Vec<serde_json::Value>>>()?;
        Ok(Resumable {
            source,
            origin,
            status,
            target_names: targets.iter().map(|t| t.1.clone()).collect(),
            workload_names: workloads.iter().map(|w| w.1.clone()).collect(),
            workload_params,
            ids: CampaignIds {
                campaign,
                targets: targets.iter().map(|t| t.0).collect(),
                workloads: workloads.iter().map(|w| w.0).collect(),
            },
        })
    }

    /// Removes runs cut short by a signal (partial, never used in statistics)
    /// so that a resumed campaign runs them again; marks it running.
    pub fn reopen_campaign(&mut self, campaign: i64) -> Result<usize> {
        let tx = self.conn.transaction()?;
        // Tables refer to each other (a rank's metrics to its rank row):
        // check the keys once every row is gone, not table by table.
        tx.execute_batch("PRAGMA defer_foreign_keys = ON")?;
        let sub = "SELECT id FROM runs WHERE campaign_id = ?1 AND status = 'interrupted'";
        // Every table of a run's rows, those a later schema adds among
        // them (telemetry's run_facts): a list here would miss the next.
        let tables: Vec<String> = tx
            .prepare(
                "SELECT m.name FROM sqlite_master m WHERE m.type = 'table' \
                 AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'run_id')",
            )?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for table in tables {
            tx.execute(
                &format!("DELETE FROM {table} WHERE run_id IN ({sub})"),
                [campaign],
            )?;
        }
        let removed = tx.execute(
            "DELETE FROM runs WHERE campaign_id = ?1 AND status = 'interrupted'",
            [campaign],
        )?;
        tx.execute("DELETE FROM pair_stops WHERE campaign_id = ?1", [campaign])?;
        tx.execute(
            "UPDATE campaigns SET status = 'running', finished_at = NULL WHERE id = ?1",
            [campaign],
        )?;
        tx.commit()?;
        Ok(removed)
    }

    /// Every ok or failed run of a campaign, with its primary metric (the
    /// value labelled with nothing but the run's variant factors).
    pub fn done_runs(&self, campaign: i64) -> Result<Vec<DoneRun>> {
        self.done_runs_with(campaign, &[])
    }

    /// [`Store::done_runs`], with the metrics `names` of each run too (what
    /// a capacity search judges its probes by).
    pub fn done_runs_with(&self, campaign: i64, names: &[&str]) -> Result<Vec<DoneRun>> {
        let experiment: String = self.conn.query_row(
            "SELECT experiment_json FROM campaigns WHERE id = ?1",
            [campaign],
            |r| r.get(0),
        )?;
        let experiment = serde_json::from_str(&experiment).unwrap_or(serde_json::Value::Null);
        let (targets, workloads) = self.variants(campaign, &experiment)?;
        let wanted: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let list = serde_json::to_string(&wanted)?;
        // (run, name, labels, value, is the primary)
        type Figure = (String, String, f64, bool);
        let mut figures: HashMap<i64, Vec<Figure>> = HashMap::new();
        let mut st = self.conn.prepare(
            "SELECT m.run_id, m.name, m.labels, m.value, m.name = w.primary_metric FROM metrics m
             JOIN runs r ON r.id = m.run_id JOIN workloads w ON w.id = r.workload_id
             WHERE r.campaign_id = ?1 AND (m.name = w.primary_metric
                OR m.name IN (SELECT value FROM json_each(?2)))",
        )?;
        let rows = st.query_map(params![campaign, list], |r| {
            Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        })?;
        for row in rows {
            let (run, figure): (i64, Figure) = row?;
            figures.entry(run).or_default().push(figure);
        }
        let mut st = self.conn.prepare(
            "SELECT r.id, r.target_id, r.workload_id, r.warmup, r.repetition, r.duration_s, r.status = 'failed'
             FROM runs r WHERE r.campaign_id = ?1 AND r.status IN ('ok', 'failed') ORDER BY r.id",
        )?;
        let rows = st.query_map([campaign], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                DoneRun {
                    target: r.get(1)?,
                    workload: r.get(2)?,
                    warmup: r.get(3)?,
                    repetition: r.get(4)?,
                    primary: None,
                    duration_s: r.get(5)?,
                    failed: r.get(6)?,
                    figures: Vec::new(),
                },
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (run, mut done) = row?;
            let t = targets.iter().find(|t| t.id == done.target);
            let w = workloads.iter().find(|w| w.id == done.workload);
            let want = super::read::run_factors(t, w).to_json_text();
            for (name, labels, value, primary) in figures.remove(&run).unwrap_or_default() {
                if labels != want {
                    continue;
                }
                if primary {
                    done.primary = Some(value);
                }
                if wanted.contains(&name) {
                    done.figures.push((name, value));
                }
            }
            out.push(done);
        }
        Ok(out)
    }

    pub fn set_pair_stop(
        &mut self,
        ids: &CampaignIds,
        target: usize,
        workload: usize,
        reason: &str,
        measured: u32,
        ci_pct: Option<f64>,
    ) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO pair_stops (campaign_id, target_id, workload_id, reason, measured_runs, ci_pct) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![ids.campaign, ids.targets[target], ids.workloads[workload], reason, measured, ci_pct],
        )?;
        Ok(())
    }

    /// Why each pair of a campaign stopped taking runs.
    pub fn pair_stops(&self, campaign: i64) -> Result<Vec<PairStop>> {
        let mut st = self.conn.prepare(
            "SELECT t.name, w.name, p.reason, p.measured_runs, p.ci_pct FROM pair_stops p
             JOIN targets t ON t.id = p.target_id JOIN workloads w ON w.id = p.workload_id
             WHERE p.campaign_id = ?1 ORDER BY w.position, t.position",
        )?;
        let rows = st.query_map([campaign], |r| {
            Ok(PairStop {
                target: r.get(0)?,
                workload: r.get(1)?,
                reason: r.get(2)?,
                measured_runs: r.get(3)?,
                ci_pct: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}
