//! Schema v7: every warning has a kind ([`crate::warning::WarningKind`]),
//! so that reports group warnings and verdicts carry caveats by kind, never
//! by reading the sentence. Warnings stored before are classified once,
//! by the words their sentence opened with.

use anyhow::{Context, Result};
use rusqlite::{params, Transaction};

use crate::warning::WarningKind;

pub const V7: &str = "ALTER TABLE warnings ADD COLUMN kind TEXT NOT NULL DEFAULT 'note';";

/// Applies [`V7`] and classifies the warnings already stored.
pub fn migrate(tx: &Transaction<'_>) -> Result<()> {
    tx.execute_batch(V7)?;
    let messages = {
        let mut st = tx.prepare("SELECT DISTINCT message FROM warnings")?;
        let rows = st
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows
    };
    for m in messages {
        let kind = WarningKind::classify_legacy(&m);
        if kind != WarningKind::Note {
            tx.execute(
                "UPDATE warnings SET kind = ?1 WHERE message = ?2",
                params![kind.name(), m],
            )
            .context("classifying the warnings stored before they had kinds")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    #[test]
    fn stored_sentences_get_the_kind_their_opening_words_name() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE warnings (run_id INTEGER NOT NULL, message TEXT NOT NULL);",
        )
        .unwrap();
        for (run, m) in [
            (
                1,
                "noisy host: other processes used 55.1% of the host's CPU",
            ),
            (
                2,
                "page cache: the device delivered 291.5 MiB of the 7.7 GiB read",
            ),
            (3, "peak memory not recorded: the kernel reports 16.2 MiB"),
        ] {
            conn.execute("INSERT INTO warnings VALUES (?1, ?2)", params![run, m])
                .unwrap();
        }
        let tx = conn.unchecked_transaction().unwrap();
        migrate(&tx).unwrap();
        tx.commit().unwrap();
        let kinds: Vec<(i64, String)> = conn
            .prepare("SELECT run_id, kind FROM warnings ORDER BY run_id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            kinds,
            [
                (1, "noisy_host".to_string()),
                (2, "page_cache".to_string()),
                (3, "note".to_string())
            ]
        );
    }
}
