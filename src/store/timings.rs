//! How long past campaigns took, as the store recorded it: each run's
//! duration and the gaps around the runs (provisioning before the first,
//! teardown after the last). What estimates learn from; read only.

use anyhow::Result;
use chrono::DateTime;

use super::Store;

/// One past campaign's timings, its runs in the order they ran.
#[derive(Debug, Clone, Default)]
pub struct PastCampaign {
    pub id: i64,
    /// The experiment file's text and where it came from, to read its
    /// configuration again.
    pub source: String,
    pub origin: String,
    pub targets: Vec<PastTarget>,
    pub workloads: Vec<PastWorkload>,
    pub runs: Vec<PastRun>,
    /// Seconds from the campaign's start to its first run's (provisioning).
    pub setup_s: Option<f64>,
    /// Seconds from the last run's end to the campaign's end (teardown).
    pub teardown_s: Option<f64>,
    /// What the store holds of this campaign that cannot be (a run of
    /// 1e9 s, a campaign that ended before it began), left out of the
    /// figures above: one line each, for a note.
    pub left_out: Vec<String>,
}

#[derive(Debug, Clone, Default)]
pub struct PastTarget {
    pub name: String,
    pub kind: String,
    /// The target's parameter rows as stored (`params_json`).
    pub params: String,
}

#[derive(Debug, Clone, Default)]
pub struct PastWorkload {
    pub name: String,
    pub kind: String,
    pub params: String,
}

#[derive(Debug, Clone, Default)]
pub struct PastRun {
    /// Indexes into the campaign's `targets` and `workloads`.
    pub target: usize,
    pub workload: usize,
    pub ok: bool,
    /// The run's own time (prepare, remount, cache drop, run, cleanup).
    pub duration_s: f64,
    /// Seconds between the end of this run and the start of the next one
    /// (recording it), when there is a next one.
    pub gap_s: Option<f64>,
    pub remounted: bool,
    pub caches_dropped: bool,
}

fn index_of<T>(rows: &[(i64, T)], id: i64) -> Option<usize> {
    rows.iter().position(|(x, _)| *x == id)
}

fn seconds_between(a: &str, b: &str) -> Option<f64> {
    let a = DateTime::parse_from_rfc3339(a).ok()?;
    let b = DateTime::parse_from_rfc3339(b).ok()?;
    Some((b - a).num_milliseconds() as f64 / 1000.0)
}

/// The longest a run, a provisioning or a teardown can plausibly have
/// taken (30 days): an estimate learns nothing from a stored `1e9 s`.
pub const MAX_PLAUSIBLE_S: f64 = 30.0 * 86_400.0;

/// How far stored times may disagree with each other (they are written
/// to the millisecond by different calls).
const SLACK_S: f64 = 1.0;

/// A time span the store gives: kept when it can be, else left out
/// with a line saying what it was.
fn plausible(
    what: &str,
    secs: Option<f64>,
    within: Option<f64>,
    left_out: &mut Vec<String>,
) -> Option<f64> {
    let s = secs?;
    let limit = within.map_or(MAX_PLAUSIBLE_S, |w| w.min(MAX_PLAUSIBLE_S) + SLACK_S);
    if s.is_finite() && (-SLACK_S..=limit).contains(&s) {
        return Some(s.max(0.0));
    }
    let shown = match s.abs() < 1e6 {
        true => format!("{s:.1}"),
        false => format!("{s:.1e}"),
    };
    left_out.push(format!("{what} of {shown} s"));
    None
}

impl Store {
    /// Every finished campaign's timings, newest first, at most `limit`.
    pub fn past_timings(&self, limit: usize) -> Result<Vec<PastCampaign>> {
        let mut st = self.conn.prepare(
            "SELECT id, experiment_source, origin, started_at, finished_at FROM campaigns \
             WHERE status = 'finished' ORDER BY id DESC LIMIT ?1",
        )?;
        let heads = st
            .query_map([limit as i64], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        heads
            .into_iter()
            .map(|(id, source, origin, started, finished)| {
                self.past_campaign(id, source, origin, &started, finished.as_deref())
            })
            .collect()
    }

    fn past_campaign(
        &self,
        id: i64,
        source: String,
        origin: String,
        started: &str,
        finished: Option<&str>,
    ) -> Result<PastCampaign> {
        let mut targets_st = self
            .conn
            .prepare("SELECT id, name, kind, params_json FROM targets WHERE campaign_id = ?1 ORDER BY position")?;
        let targets: Vec<(i64, PastTarget)> = targets_st
            .query_map([id], |r| {
                Ok((
                    r.get(0)?,
                    PastTarget {
                        name: r.get(1)?,
                        kind: r.get(2)?,
                        params: r.get(3)?,
                    },
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut workloads_st = self
            .conn
            .prepare("SELECT id, name, kind, params_json FROM workloads WHERE campaign_id = ?1 ORDER BY position")?;
        let workloads: Vec<(i64, PastWorkload)> = workloads_st
            .query_map([id], |r| {
                Ok((
                    r.get(0)?,
                    PastWorkload {
                        name: r.get(1)?,
                        kind: r.get(2)?,
                        params: r.get(3)?,
                    },
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut runs_st = self.conn.prepare(
            "SELECT target_id, workload_id, status, started_at, duration_s, remounted, caches_dropped \
             FROM runs WHERE campaign_id = ?1 ORDER BY position",
        )?;
        type Row = (i64, i64, String, String, f64, bool, bool);
        let rows: Vec<Row> = runs_st
            .query_map([id], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut left_out = Vec::new();
        // The campaign's own span bounds everything in it, where it has one.
        let span = finished.and_then(|f| seconds_between(started, f));
        let span = plausible("its span", span, None, &mut left_out);
        let mut runs = Vec::with_capacity(rows.len());
        for (i, (t, w, status, start, duration_s, remounted, caches_dropped)) in
            rows.iter().enumerate()
        {
            let (Some(target), Some(workload)) = (index_of(&targets, *t), index_of(&workloads, *w))
            else {
                continue;
            };
            let what = format!("run {}", i + 1);
            let Some(duration_s) = plausible(&what, Some(*duration_s), span, &mut left_out) else {
                continue;
            };
            let gap_s = rows
                .get(i + 1)
                .and_then(|next| seconds_between(start, &next.3))
                .filter(|between| (0.0..=MAX_PLAUSIBLE_S).contains(between))
                .map(|between| (between - duration_s).max(0.0));
            runs.push(PastRun {
                target,
                workload,
                ok: status == "ok",
                duration_s,
                gap_s,
                remounted: *remounted,
                caches_dropped: *caches_dropped,
            });
        }
        let setup_s = rows.first().and_then(|r| seconds_between(started, &r.3));
        let setup_s = plausible("provisioning", setup_s, span, &mut left_out);
        // After the last run's end, if that run's time can be.
        let last = rows
            .last()
            .filter(|r| (0.0..=MAX_PLAUSIBLE_S).contains(&r.4));
        let teardown_s = match (last, finished) {
            (Some(last), Some(f)) => seconds_between(&last.3, f).map(|s| s - last.4),
            _ => None,
        };
        let teardown_s = plausible("teardown", teardown_s, span, &mut left_out);
        Ok(PastCampaign {
            id,
            source,
            origin,
            targets: targets.into_iter().map(|(_, t)| t).collect(),
            workloads: workloads.into_iter().map(|(_, w)| w).collect(),
            runs,
            setup_s,
            teardown_s,
            left_out,
        })
    }
}
