//! Schema v6: what a campaign ran with and who it is across stores.
//!
//! - `campaigns.uuid`: a campaign's identity that survives `storlab import`
//!   into other stores (ids do not), so that importing twice adds nothing.
//!   New campaigns get a random (v4) UUID; campaigns of older stores get
//!   one derived from what they recorded (name, start, environment,
//!   experiment), so that two copies of the same old store, migrated
//!   apart, agree on it.
//! - `campaign_facts`: per campaign, facts of four kinds — `version` (the
//!   programs it used: storlab, gluster, mkfs.ext4, fio…), `host` (kernel,
//!   distribution, CPU governor, transparent huge pages, kernel command
//!   line), `tag` (the user's `--tag KEY=VALUE`) and `import` (where an
//!   imported campaign came from). Older campaigns get their host facts
//!   from the environment they recorded.

use anyhow::{Context, Result};
use rusqlite::{params, Transaction};

pub const V6: &str = r#"
ALTER TABLE campaigns ADD COLUMN uuid TEXT;
CREATE TABLE campaign_facts (
    campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
    kind TEXT NOT NULL CHECK (kind IN ('version', 'host', 'tag', 'import')),
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (campaign_id, kind, name)
);
"#;

/// Applies [`V6`], gives every campaign a UUID, then makes UUIDs unique.
pub fn migrate(tx: &Transaction<'_>) -> Result<()> {
    tx.execute_batch(V6)?;
    derive_uuids(tx).context("giving older campaigns their UUID")?;
    tx.execute_batch("CREATE UNIQUE INDEX campaigns_by_uuid ON campaigns (uuid);")?;
    host_facts(tx).context("copying older campaigns' host facts")?;
    Ok(())
}

fn derive_uuids(tx: &Transaction<'_>) -> Result<()> {
    let mut st = tx.prepare(
        "SELECT id, name, started_at, environment_json, experiment_source FROM campaigns WHERE uuid IS NULL",
    )?;
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                [
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                ],
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for (id, parts) in rows {
        tx.execute(
            "UPDATE campaigns SET uuid = ?1 WHERE id = ?2",
            params![derived_uuid(&parts), id],
        )?;
    }
    Ok(())
}

/// A UUID (version 5 layout) from the SHA-1 of `parts`, each ended by NUL.
pub fn derived_uuid(parts: &[String]) -> String {
    use sha1::{Digest, Sha1};
    let mut h = Sha1::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    let digest = h.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_sha1_bytes(bytes)
        .into_uuid()
        .hyphenated()
        .to_string()
}

fn host_facts(tx: &Transaction<'_>) -> Result<()> {
    for name in ["hostname", "kernel", "distribution"] {
        tx.execute(
            "INSERT OR IGNORE INTO campaign_facts (campaign_id, kind, name, value)
             SELECT id, 'host', ?1, json_extract(environment_json, '$.' || ?1) FROM campaigns
             WHERE json_valid(environment_json) AND json_type(environment_json, '$.' || ?1) = 'text'",
            [name],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_uuids_are_stable_and_tell_campaigns_apart() {
        let a = derived_uuid(&["x".into(), "2026-01-01".into()]);
        assert_eq!(a, derived_uuid(&["x".into(), "2026-01-01".into()]));
        assert_ne!(a, derived_uuid(&["x".into(), "2026-01-02".into()]));
        // Parts are delimited: ("ab", "c") is not ("a", "bc").
        assert_ne!(
            derived_uuid(&["ab".into(), "c".into()]),
            derived_uuid(&["a".into(), "bc".into()])
        );
        let u = uuid::Uuid::parse_str(&a).unwrap();
        assert_eq!(u.get_version_num(), 5);
    }
}
