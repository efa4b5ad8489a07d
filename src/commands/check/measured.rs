//! An estimate that holds: what the last finished campaign of the same
//! experiment in the store took. A workload's own estimate knows nothing
//! of the target (pgbench assumes 500 transactions a second; on a VM disk
//! on a Gluster volume of one host it commits 60–90) nor of provisioning,
//! remounting and teardown; a campaign that ran here did all of that, so
//! its runs, as measured, and the time outside them, are the estimate.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use crate::store::Store;

/// The last finished campaign of an experiment, as it went.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub campaign: i64,
    /// Mean seconds of a run, by (workload, target) name.
    per_pair: HashMap<(String, String), f64>,
    /// Seconds of the campaign outside its runs: provisioning, cache
    /// drops, remounts, teardown.
    pub outside_s: f64,
}

impl Measured {
    /// The last finished campaign named `name` in the store at `db`, if
    /// the store exists and holds one.
    pub fn of(db: &Path, name: &str) -> Result<Option<Measured>> {
        if !db.exists() {
            return Ok(None);
        }
        let store = Store::open_for_reading(db)?;
        let last = store
            .list_campaigns()?
            .into_iter()
            .filter(|c| c.name == name && c.status == "finished")
            .max_by_key(|c| c.id);
        let Some(c) = last else {
            return Ok(None);
        };
        let Some(wall) = c
            .finished_at
            .as_deref()
            .and_then(|f| seconds(&c.started_at, f))
        else {
            return Ok(None);
        };
        let data = store.load_campaign(c.id)?;
        let mut sums: HashMap<(String, String), (f64, u32)> = HashMap::new();
        let mut in_runs = 0.0;
        for r in &data.runs {
            in_runs += r.duration_s;
            let e = sums
                .entry((r.workload.clone(), r.target.clone()))
                .or_default();
            e.0 += r.duration_s;
            e.1 += 1;
        }
        Ok(Some(Measured {
            campaign: c.id,
            per_pair: sums
                .into_iter()
                .map(|(k, (s, n))| (k, s / f64::from(n)))
                .collect(),
            outside_s: (wall - in_runs).max(0.0),
        }))
    }

    /// The measured mean of a run of `workload` on `target`, if one ran.
    pub fn run(&self, workload: &str, target: &str) -> Option<Duration> {
        self.per_pair
            .get(&(workload.to_string(), target.to_string()))
            .map(|s| Duration::from_secs_f64(*s))
    }
}

/// Seconds from one RFC 3339 time to another.
fn seconds(from: &str, to: &str) -> Option<f64> {
    let a = chrono::DateTime::parse_from_rfc3339(from).ok()?;
    let b = chrono::DateTime::parse_from_rfc3339(to).ok()?;
    Some((b - a).num_milliseconds() as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn campaign_times_subtract() {
        assert_eq!(
            seconds(
                "2026-11-26T07:01:15.702+00:00",
                "2026-11-26T07:11:32.739+00:00"
            ),
            Some(617.037)
        );
        assert_eq!(seconds("x", "2026-11-26T07:11:32.739+00:00"), None);
    }

    #[test]
    fn no_store_is_no_estimate_and_makes_no_store() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("none.db");
        assert_eq!(Measured::of(&db, "x").unwrap(), None);
        assert!(!db.exists());
    }
}
