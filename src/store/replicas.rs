//! Replicas: a campaign's experiment run again into the same store
//! (`storlab replicate`), to see whether its verdicts replicate. A replica
//! is an ordinary campaign that also records, in table `replicas` (schema
//! v9), the UUID of the first campaign of its group and its number in it
//! (1 for the first replica): UUIDs, not ids, so that the group holds
//! together through `import` into another store.

use anyhow::{Context, Result};
use rusqlite::{params, OptionalExtension};

use super::Store;

/// What makes a campaign a replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replica {
    /// UUID of the group's first campaign, the one replicated.
    pub of: String,
    /// 1 for the first replica, 2 for the second…
    pub number: u32,
}

/// What a new replica of a campaign runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToReplicate {
    /// The experiment as written, and where it came from.
    pub source: String,
    pub origin: String,
    pub replica: Replica,
}

impl Store {
    /// Records that `campaign` is `replica`.
    pub fn record_replica(&mut self, campaign: i64, replica: &Replica) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO replicas (campaign_id, of_uuid, number) VALUES (?1, ?2, ?3)",
                params![campaign, replica.of, replica.number],
            )
            .context("recording the replica")?;
        Ok(())
    }

    /// `campaign`'s place in a group of replicas, if it is a replica.
    pub fn replica(&self, campaign: i64) -> Result<Option<Replica>> {
        Ok(self
            .conn
            .query_row(
                "SELECT of_uuid, number FROM replicas WHERE campaign_id = ?1",
                [campaign],
                |r| {
                    Ok(Replica {
                        of: r.get(0)?,
                        number: r.get(1)?,
                    })
                },
            )
            .optional()?)
    }

    /// The campaigns of `campaign`'s group, oldest first: the campaign
    /// replicated (when this store holds it) and its replicas; `campaign`
    /// alone when it has none.
    pub fn replica_group(&self, campaign: i64) -> Result<Vec<i64>> {
        let root = self.replica_root(campaign)?;
        let mut st = self.conn.prepare(
            "SELECT id FROM campaigns WHERE uuid = ?1
             UNION SELECT campaign_id FROM replicas WHERE of_uuid = ?1
             ORDER BY 1",
        )?;
        let ids = st
            .query_map([&root], |r| r.get::<_, i64>(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?;
        Ok(if ids.is_empty() { vec![campaign] } else { ids })
    }

    /// The UUID of the first campaign of `campaign`'s group.
    fn replica_root(&self, campaign: i64) -> Result<String> {
        if let Some(r) = self.replica(campaign)? {
            return Ok(r.of);
        }
        let uuid: Option<String> = self
            .conn
            .query_row(
                "SELECT uuid FROM campaigns WHERE id = ?1",
                [campaign],
                |r| r.get(0),
            )
            .with_context(|| format!("reading campaign {campaign}"))?;
        Ok(uuid.unwrap_or_default())
    }

    /// What a new replica of `campaign` (or of the first campaign of its
    /// group) runs: the experiment as the group's campaigns recorded it,
    /// and the next number.
    pub fn to_replicate(&self, campaign: i64) -> Result<ToReplicate> {
        let (source, origin): (String, String) = self
            .conn
            .query_row(
                "SELECT experiment_source, origin FROM campaigns WHERE id = ?1",
                [campaign],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .with_context(|| format!("reading campaign {campaign}"))?;
        let group = self.replica_group(campaign)?;
        let mut highest = 0;
        for id in &group {
            highest = highest.max(self.replica(*id)?.map_or(0, |r| r.number));
        }
        Ok(ToReplicate {
            source,
            origin,
            replica: Replica {
                of: self.replica_root(campaign)?,
                number: highest + 1,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::parse_experiment;

    fn campaign(store: &mut Store) -> i64 {
        let exp = parse_experiment(
            "e.toml",
            "name = \"e\"\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"m\"\nkind = \"mock\"\n",
        )
        .unwrap();
        let ids = store
            .begin_campaign(&exp, &serde_json::json!({}), 3)
            .unwrap();
        store.finish_campaign(ids.campaign, "finished").unwrap();
        ids.campaign
    }

    #[test]
    fn replicas_form_one_group_by_the_first_campaigns_uuid() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.db")).unwrap();
        let first = campaign(&mut store);
        let other = campaign(&mut store);
        assert_eq!(store.replica_group(first).unwrap(), [first]);
        assert_eq!(store.replica(first).unwrap(), None);
        let next = store.to_replicate(first).unwrap();
        assert_eq!(next.replica.number, 1);
        assert!(next.source.contains("name = \"e\""));
        let one = campaign(&mut store);
        store.record_replica(one, &next.replica).unwrap();
        // Replicating a replica replicates the first.
        let next = store.to_replicate(one).unwrap();
        assert_eq!(next.replica.number, 2);
        let two = campaign(&mut store);
        store.record_replica(two, &next.replica).unwrap();
        for id in [first, one, two] {
            assert_eq!(store.replica_group(id).unwrap(), [first, one, two]);
        }
        assert_eq!(store.replica_group(other).unwrap(), [other]);
        assert_eq!(store.replica(two).unwrap().unwrap().number, 2);
    }
}
