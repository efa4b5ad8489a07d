//! Reading and writing what a campaign ran with (schema v6, see
//! [`super::migrate_v6`]): its UUID, the versions of the programs it used,
//! the host's facts, the user's tags and, for an imported campaign, where it
//! came from. Collecting them is [`crate::provenance`]'s job.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use rusqlite::params;
use serde::Serialize;

use super::Store;

/// What a new campaign records about itself before its first run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Provenance {
    /// Program → the first line it printed for its version.
    pub versions: BTreeMap<String, String>,
    /// Kernel, distribution, hostname, CPU governor, THP, kernel command line.
    pub host: BTreeMap<String, String>,
    /// The user's `--tag KEY=VALUE`.
    pub tags: BTreeMap<String, String>,
}

/// Everything stored about where a campaign comes from.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CampaignFacts {
    pub uuid: String,
    #[serde(flatten)]
    pub provenance: Provenance,
    /// For an imported campaign: `from` (the store), `at`, `original_id`.
    pub imported: BTreeMap<String, String>,
}

impl CampaignFacts {
    /// A fact by name: a tag first, then a version, then a host fact.
    pub fn get(&self, name: &str) -> Option<&str> {
        let p = &self.provenance;
        [&p.tags, &p.versions, &p.host]
            .into_iter()
            .find_map(|m| m.get(name))
            .map(String::as_str)
    }
}

/// Gives a campaign just inserted its random UUID.
pub(super) fn assign_uuid(tx: &rusqlite::Transaction<'_>, campaign: i64) -> Result<()> {
    let uuid = uuid::Uuid::new_v4().hyphenated().to_string();
    tx.execute(
        "UPDATE campaigns SET uuid = ?1 WHERE id = ?2",
        params![uuid, campaign],
    )?;
    Ok(())
}

impl Store {
    /// Records a campaign's provenance (replacing facts of the same name).
    pub fn record_provenance(&mut self, campaign: i64, p: &Provenance) -> Result<()> {
        let tx = self.conn.transaction()?;
        for (kind, facts) in [
            ("version", &p.versions),
            ("host", &p.host),
            ("tag", &p.tags),
        ] {
            for (name, value) in facts {
                tx.execute(
                    "INSERT OR REPLACE INTO campaign_facts (campaign_id, kind, name, value) VALUES (?1, ?2, ?3, ?4)",
                    params![campaign, kind, name, value],
                )?;
            }
        }
        tx.commit().context("recording the campaign's provenance")
    }

    /// A campaign's UUID, versions, host facts, tags and import record.
    pub fn campaign_facts(&self, campaign: i64) -> Result<CampaignFacts> {
        let uuid: Option<String> = self.conn.query_row(
            "SELECT uuid FROM campaigns WHERE id = ?1",
            [campaign],
            |r| r.get(0),
        )?;
        let mut f = CampaignFacts {
            uuid: uuid.unwrap_or_default(),
            ..CampaignFacts::default()
        };
        let mut st = self.conn.prepare(
            "SELECT kind, name, value FROM campaign_facts WHERE campaign_id = ?1 ORDER BY kind, name",
        )?;
        let rows = st.query_map([campaign], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        for row in rows {
            let (kind, name, value) = row?;
            let map = match kind.as_str() {
                "version" => &mut f.provenance.versions,
                "host" => &mut f.provenance.host,
                "tag" => &mut f.provenance.tags,
                _ => &mut f.imported,
            };
            map.insert(name, value);
        }
        Ok(f)
    }

    /// The campaigns (ids, oldest first) whose facts match every
    /// `NAME=VALUE` in `filters`: a tag, a version or a host fact of that
    /// name with exactly that value.
    pub fn campaigns_matching(&self, filters: &[(String, String)]) -> Result<Vec<i64>> {
        let mut st = self.conn.prepare("SELECT id FROM campaigns ORDER BY id")?;
        let ids = st
            .query_map([], |r| r.get::<_, i64>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut found = Vec::new();
        for id in ids {
            let facts = self.campaign_facts(id)?;
            if filters
                .iter()
                .all(|(k, v)| facts.get(k) == Some(v.as_str()))
            {
                found.push(id);
            }
        }
        Ok(found)
    }
}
