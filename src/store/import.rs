//! `storlab import OTHER.db`: campaigns of another store (another host's,
//! a CI artifact) copied into this one with everything they recorded.
//!
//! The other store is never written: it is copied (`VACUUM INTO`) beside
//! this one, the copy is migrated to this storlab's schema, attached, and
//! its campaigns that this store does not hold yet — by UUID, so a second
//! import adds nothing — are copied in one transaction. Row ids are moved
//! past this store's own; every table is copied column by column as this
//! schema declares it, and a table import could not tie to a campaign is
//! an error rather than silently left behind.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, OpenFlags, Transaction};

use super::{lock, schema, Store};
use crate::host::now_rfc3339;

/// What an import did.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// (id in the other store, id here, name) of each campaign added.
    pub added: Vec<(i64, i64, String)>,
    /// (id in the other store, id here, name) of campaigns already here.
    pub already: Vec<(i64, i64, String)>,
    /// (id in the other store, name) of campaigns still running there.
    pub running: Vec<(i64, String)>,
}

/// Columns that point at another table's rows, and that table.
const REFERENCES: [(&str, &str); 4] = [
    ("campaign_id", "campaigns"),
    ("target_id", "targets"),
    ("workload_id", "workloads"),
    ("run_id", "runs"),
];

impl Store {
    /// Copies the campaigns of the store at `other` that this one lacks.
    pub fn import(&mut self, other: &Path) -> Result<Imported> {
        check_source(&self.path, other)?;
        let copy = Copy::of(&self.path, other)?;
        let attach = self
            .conn
            .execute("ATTACH DATABASE ?1 AS other", [copy.path.to_string_lossy()]);
        attach.with_context(|| format!("attaching the copy of {}", other.display()))?;
        let result = self.import_attached(other);
        let detach = self.conn.execute_batch("DETACH DATABASE other");
        let imported = result?;
        detach?;
        Ok(imported)
    }

    fn import_attached(&mut self, other: &Path) -> Result<Imported> {
        let source = std::fs::canonicalize(other).unwrap_or_else(|_| other.to_path_buf());
        let mut done = Imported::default();
        let tx = self.conn.transaction()?;
        tx.execute_batch(
            "PRAGMA defer_foreign_keys = ON;
             CREATE TEMP TABLE import_set (id INTEGER PRIMARY KEY);",
        )?;
        for (id, uuid, name, status) in campaigns(&tx)? {
            let here: Option<i64> = tx
                .query_row(
                    "SELECT id FROM main.campaigns WHERE uuid = ?1",
                    [&uuid],
                    |r| r.get(0),
                )
                .ok();
            if let Some(here) = here {
                done.already.push((id, here, name));
            } else if status == "running" && lock::is_held(other, id) {
                done.running.push((id, name));
            } else {
                tx.execute("INSERT INTO import_set (id) VALUES (?1)", [id])?;
            }
        }
        let offsets = offsets(&tx)?;
        for table in tables(&tx)? {
            copy_table(&tx, &table, &offsets)
                .with_context(|| format!("copying table {table} from {}", other.display()))?;
        }
        let off = offsets.get("campaigns");
        let mut st = tx.prepare("SELECT i.id, c.name FROM import_set i JOIN other.campaigns c ON c.id = i.id ORDER BY i.id")?;
        let added = st
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        drop(st);
        let at = now_rfc3339();
        for (id, name) in added {
            let here = id + off;
            for (fact, value) in [
                ("from", source.display().to_string()),
                ("at", at.clone()),
                ("original_id", id.to_string()),
            ] {
                // A campaign imported again from a third store keeps where it
                // was first recorded.
                tx.execute(
                    "INSERT OR IGNORE INTO campaign_facts (campaign_id, kind, name, value) VALUES (?1, 'import', ?2, ?3)",
                    params![here, fact, value],
                )?;
            }
            done.added.push((id, here, name));
        }
        tx.execute_batch("DROP TABLE temp.import_set")?;
        tx.commit().with_context(|| {
            format!("committing the campaigns imported from {}", other.display())
        })?;
        Ok(done)
    }
}

/// The other store must exist, be a file, and not be this store.
fn check_source(this: &Path, other: &Path) -> Result<()> {
    let meta = std::fs::metadata(other)
        .with_context(|| format!("no results store at {} to import from", other.display()))?;
    if !meta.is_file() {
        bail!(
            "{} is not a results store (not a regular file)",
            other.display()
        );
    }
    let same = match (std::fs::canonicalize(this), std::fs::canonicalize(other)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        bail!(
            "{} is this store itself; import another host's store into it (--db names this one)",
            other.display()
        );
    }
    Ok(())
}

/// A migrated copy of the other store beside this one, removed when dropped.
struct Copy {
    path: PathBuf,
}

impl Copy {
    fn of(this: &Path, other: &Path) -> Result<Copy> {
        let name = format!(
            ".{}.import-{}.tmp",
            this.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
            std::process::id()
        );
        let copy = Copy {
            path: this.with_file_name(name),
        };
        copy.remove();
        let source = Connection::open_with_flags(other, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .with_context(|| format!("opening {} to import from", other.display()))?;
        source
            .execute("VACUUM INTO ?1", [copy.path.to_string_lossy()])
            .with_context(|| {
                format!(
                    "reading {} (is it a storlab results store?) into {}",
                    other.display(),
                    copy.path.display()
                )
            })?;
        let conn = Connection::open(&copy.path)?;
        let version = schema::version(&conn)
            .with_context(|| format!("{} is not a storlab results store", other.display()))?;
        if version == 0 {
            bail!(
                "{} is not a storlab results store (it has no schema version)",
                other.display()
            );
        }
        schema::migrate(&conn).with_context(|| {
            format!(
                "migrating a copy of {} (schema {version}) to this storlab's",
                other.display()
            )
        })?;
        Ok(copy)
    }

    fn remove(&self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for Copy {
    fn drop(&mut self) {
        self.remove();
    }
}

/// (id, uuid, name, status) of every campaign in the other store.
fn campaigns(tx: &Transaction<'_>) -> Result<Vec<(i64, String, String, String)>> {
    let mut st = tx.prepare("SELECT id, uuid, name, status FROM other.campaigns ORDER BY id")?;
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// This schema's tables, but `meta` and SQLite's own.
fn tables(tx: &Transaction<'_>) -> Result<Vec<String>> {
    let mut st = tx.prepare(
        "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name <> 'meta' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let rows = st
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(rows)
}

fn columns(tx: &Transaction<'_>, table: &str) -> Result<Vec<String>> {
    let mut st = tx.prepare(&format!("PRAGMA main.table_info(\"{table}\")"))?;
    let rows = st
        .query_map([], |r| r.get(1))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    Ok(rows)
}

/// How far each table's ids move: past the largest id here.
#[derive(Debug, Default)]
struct Offsets(std::collections::BTreeMap<String, i64>);

impl Offsets {
    fn get(&self, table: &str) -> i64 {
        self.0.get(table).copied().unwrap_or(0)
    }
}

fn offsets(tx: &Transaction<'_>) -> Result<Offsets> {
    let mut o = Offsets::default();
    for table in tables(tx)? {
        if !columns(tx, &table)?.iter().any(|c| c == "id") {
            continue;
        }
        let off: i64 = tx.query_row(
            &format!(
                "SELECT COALESCE((SELECT MAX(id) FROM main.\"{table}\"), 0) - COALESCE((SELECT MIN(id) FROM other.\"{table}\"), 1) + 1"
            ),
            [],
            |r| r.get(0),
        )?;
        o.0.insert(table, off.max(0));
    }
    Ok(o)
}

/// Copies the rows of `table` that belong to the campaigns in `import_set`.
fn copy_table(tx: &Transaction<'_>, table: &str, offsets: &Offsets) -> Result<()> {
    let cols = columns(tx, table)?;
    let has = |c: &str| cols.iter().any(|x| x == c);
    let filter = if table == "campaigns" {
        "id IN (SELECT id FROM temp.import_set)".to_string()
    } else if has("campaign_id") {
        "campaign_id IN (SELECT id FROM temp.import_set)".to_string()
    } else if has("run_id") {
        "run_id IN (SELECT id FROM other.runs WHERE campaign_id IN (SELECT id FROM temp.import_set))"
            .to_string()
    } else {
        bail!("import does not know which campaign the rows of table `{table}` belong to; this is a bug in storlab");
    };
    let mut exprs = Vec::new();
    for c in &cols {
        let expr = if c == "id" {
            format!("id + {}", offsets.get(table))
        } else if let Some((_, target)) = REFERENCES.iter().find(|(col, _)| col == c) {
            format!("\"{c}\" + {}", offsets.get(target))
        } else if c.ends_with("_id") {
            bail!("import does not know which table column `{table}.{c}` points at; this is a bug in storlab");
        } else {
            format!("\"{c}\"")
        };
        exprs.push(expr);
    }
    let names: Vec<String> = cols.iter().map(|c| format!("\"{c}\"")).collect();
    tx.execute(
        &format!(
            "INSERT INTO main.\"{table}\" ({}) SELECT {} FROM other.\"{table}\" WHERE {filter}",
            names.join(", "),
            exprs.join(", ")
        ),
        [],
    )?;
    Ok(())
}
