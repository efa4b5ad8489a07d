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

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rusqlite::{params, Connection, Transaction};

use super::catalog::{columns, tables};
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
    /// (id in the other store, id here, name, runs added) of campaigns
    /// that went on in the other store since they were imported: their
    /// copy here was replaced by the other's, under the same id.
    pub updated: Vec<(i64, i64, String, usize)>,
    /// (id in the other store, id here, name) of campaigns that each store
    /// holds runs of that the other lacks: left as they are here.
    pub diverged: Vec<(i64, i64, String)>,
    /// (id in the other store, name, why) of campaigns with a row storlab
    /// would not read back as it writes them ([`super::validate`]): not
    /// imported.
    pub refused: Vec<(i64, String, String)>,
}

/// How the other store's copy of a campaign stands to this one's.
enum Standing {
    /// It has no run this store's copy lacks.
    Same,
    /// It has every run of this store's copy, and this many more.
    More(usize),
    /// Each copy has runs the other lacks.
    Diverged,
}

/// Columns that point at another table's rows, and that table.
const REFERENCES: [(&str, &str); 7] = [
    ("campaign_id", "campaigns"),
    ("target_id", "targets"),
    ("workload_id", "workloads"),
    ("run_id", "runs"),
    ("key_id", "metric_keys"),
    ("text_id", "warning_texts"),
    ("fact_id", "fact_texts"),
];

impl Store {
    /// Copies the campaigns of the store at `other` that this one lacks.
    pub fn import(&mut self, other: &Path) -> Result<Imported> {
        check_source(&self.path, other)?;
        // One import into this store at a time: another waits here rather
        // than failing with "database is locked".
        let _one = lock::importing(&self.path)?;
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
        // Immediate: the write lock is taken (waiting for a campaign's
        // commit) before anything is read, so it is never refused midway.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .with_context(|| format!("waiting to write into {}", self.path.display()))?;
        tx.execute_batch(
            "PRAGMA defer_foreign_keys = ON;
             CREATE TEMP TABLE import_set (id INTEGER PRIMARY KEY);",
        )?;
        if let Some((table, column)) = super::validate::missing_column(&tx)? {
            bail!(
                "{} is not a store this storlab can read: its table `{table}` has no column `{column}` (written by another program, or damaged); nothing was imported",
                other.display()
            );
        }
        // (id there, id here, name, runs added) of campaigns to replace.
        let mut replaced = Vec::new();
        for (id, uuid, name, status) in campaigns(&tx)? {
            let here: Option<(i64, String)> = tx
                .query_row(
                    "SELECT id, status FROM main.campaigns WHERE uuid = ?1",
                    [&uuid],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .ok();
            if status == "running" && lock::is_held(other, id) {
                done.running.push((id, name));
                continue;
            }
            if let Some(why) = super::validate::campaign(&tx, id)
                .with_context(|| format!("checking campaign {id} of {}", other.display()))?
            {
                done.refused.push((id, name, why));
                continue;
            }
            let Some((here, here_status)) = here else {
                tx.execute("INSERT INTO import_set (id) VALUES (?1)", [id])?;
                continue;
            };
            match standing(&tx, here, id)? {
                Standing::Same => done.already.push((id, here, name)),
                Standing::Diverged => done.diverged.push((id, here, name)),
                Standing::More(_)
                    if here_status == "running" && lock::is_held(&self.path, here) =>
                {
                    // Being resumed here right now: its runs are not ours to replace.
                    done.diverged.push((id, here, name));
                }
                Standing::More(n) => {
                    super::forget::delete_campaign(&tx, here)?;
                    tx.execute("INSERT INTO import_set (id) VALUES (?1)", [id])?;
                    replaced.push((id, here, name, n));
                }
            }
        }
        let offsets = offsets(&tx)?;
        for table in tables(&tx)? {
            copy_table(&tx, &table, &offsets)
                .with_context(|| format!("copying table {table} from {}", other.display()))?;
        }
        let off = offsets.get("campaigns");
        // A replaced campaign keeps its id here.
        for (id, here, _, _) in &replaced {
            renumber_campaign(&tx, id + off, *here)?;
        }
        let mut st = tx.prepare("SELECT i.id, c.name FROM import_set i JOIN other.campaigns c ON c.id = i.id ORDER BY i.id")?;
        let added = st
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        drop(st);
        let at = now_rfc3339();
        for (id, name) in added {
            let replacing = replaced.iter().find(|r| r.0 == id);
            let here = replacing.map(|r| r.1).unwrap_or(id + off);
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
            match replacing {
                Some(r) => done.updated.push(r.clone()),
                None => done.added.push((id, here, name)),
            }
        }
        tx.execute_batch("DROP TABLE temp.import_set")?;
        tx.commit().with_context(|| {
            format!("committing the campaigns imported from {}", other.display())
        })?;
        Ok(done)
    }
}

/// The runs of a campaign, each known by its place in the plan and when
/// it started; but those cut short by a signal, which a resume removes and
/// runs again (partial, never used in statistics).
fn runs(tx: &Transaction<'_>, db: &str, campaign: i64) -> Result<BTreeSet<(i64, String)>> {
    let mut st = tx.prepare(&format!(
        "SELECT position, started_at FROM {db}.runs WHERE campaign_id = ?1 AND status <> 'interrupted'"
    ))?;
    let rows = st
        .query_map([campaign], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<BTreeSet<_>>>()?;
    Ok(rows)
}

/// How the other store's campaign `theirs` stands to this store's `here`.
fn standing(tx: &Transaction<'_>, here: i64, theirs: i64) -> Result<Standing> {
    let (ours, other) = (runs(tx, "main", here)?, runs(tx, "other", theirs)?);
    let status = |db: &str, id: i64| -> Result<String> {
        let sql = format!("SELECT status FROM {db}.campaigns WHERE id = ?1");
        Ok(tx.query_row(&sql, [id], |r| r.get(0))?)
    };
    // The same runs, but it ended there since (a resume with nothing left
    // to run marks it finished).
    let ended = ours == other
        && status("other", theirs)? == "finished"
        && status("main", here)? != "finished";
    Ok(if ended {
        Standing::More(0)
    } else if other.is_subset(&ours) {
        Standing::Same
    } else if ours.is_subset(&other) {
        Standing::More(other.len() - ours.len())
    } else {
        Standing::Diverged
    })
}

/// Gives the campaign imported as `from` the id `to` it had here.
fn renumber_campaign(tx: &Transaction<'_>, from: i64, to: i64) -> Result<()> {
    for table in tables(tx)? {
        if columns(tx, &table)?.iter().any(|c| c == "campaign_id") {
            tx.execute(
                &format!("UPDATE main.\"{table}\" SET campaign_id = ?2 WHERE campaign_id = ?1"),
                [from, to],
            )?;
        }
    }
    tx.execute(
        "UPDATE main.campaigns SET id = ?2 WHERE id = ?1",
        [from, to],
    )?;
    Ok(())
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

/// A migrated copy of the other store beside this one, removed when
/// dropped. While it lives its process holds a lock on its first byte
/// (which SQLite never locks), so that a copy nobody holds is known to be
/// a killed import's, and the next import removes it.
struct Copy {
    path: PathBuf,
    _held: std::fs::File,
}

/// `.NAME.import-` for the store at `this`: how its copies' names begin.
fn copy_prefix(this: &Path) -> String {
    super::files::import_prefix(this.file_name().unwrap_or_default())
}

/// Removes the copies beside the store at `this` that no living import
/// holds (a killed import's, which can be as large as its source).
fn remove_stale_copies(this: &Path) {
    let dir = match this.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let prefix = copy_prefix(this);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(&prefix) || !name.ends_with(".tmp") {
            continue;
        }
        let path = e.path();
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
        else {
            continue;
        };
        if lock::try_first_byte(&file) {
            remove_with_journals(&path);
        }
    }
}

fn remove_with_journals(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.to_path_buf().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

impl Copy {
    fn of(this: &Path, other: &Path) -> Result<Copy> {
        remove_stale_copies(this);
        let name = format!("{}{}.tmp", copy_prefix(this), std::process::id());
        let path = this.with_file_name(name);
        remove_with_journals(&path);
        let file = std::fs::File::create(&path)
            .with_context(|| format!("creating {} to import into", path.display()))?;
        if !lock::try_first_byte(&file) {
            bail!("{} is in use by another import", path.display());
        }
        let copy = Copy { path, _held: file };
        let source = super::reading_connection(other)
            .with_context(|| format!("opening {} to import from", other.display()))?;
        let mut conn = Connection::open(&copy.path)?;
        super::copy_database(&source, &mut conn).with_context(|| {
            format!(
                "reading {} (is it a storlab results store?) into {}",
                other.display(),
                copy.path.display()
            )
        })?;
        let version = schema::version(&conn)
            .with_context(|| format!("{} is not a storlab results store", other.display()))?;
        if version == 0 {
            bail!(
                "{} is not a storlab results store (it has no schema version)",
                other.display()
            );
        }
        if version < 0 {
            bail!(
                "{} says it has schema version {version}, which no storlab writes: it is damaged or was written by another program; nothing was imported",
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
}

impl Drop for Copy {
    fn drop(&mut self) {
        remove_with_journals(&self.path);
    }
}

/// (id, uuid, name, status) of every campaign in the other store, as text
/// whatever they hold (a row that is not text is refused by validation).
fn campaigns(tx: &Transaction<'_>) -> Result<Vec<(i64, String, String, String)>> {
    let mut st = tx.prepare(
        "SELECT id, CAST(uuid AS TEXT), CAST(name AS TEXT), CAST(status AS TEXT) FROM other.campaigns WHERE typeof(id) = 'integer' ORDER BY id",
    )?;
    let rows = st
        .query_map([], |r| {
            let text = |i| r.get::<_, Option<String>>(i).map(Option::unwrap_or_default);
            Ok((r.get(0)?, text(1)?, text(2)?, text(3)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// This schema's tables, but `meta` and SQLite's own.
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
