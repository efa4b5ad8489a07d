//! Mutated stores imported, hundreds of them from a fixed seed (issue
//! #29): whatever a store holds — a value of the wrong type or out of
//! range, text where numbers belong, a blob that decodes to nothing, a
//! reference to nowhere, a row or column or table gone, a damaged file —
//! importing it never panics, and afterwards every campaign of the
//! destination (its own and whatever was accepted) still loads, renders as
//! a report, exports and takes part in its experiment's history.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use storlab::store::Store;

/// Mutated stores tried.
const CASES: usize = 240;

/// Values a cell is set to, as SQL.
const HOSTILE: &[&str] = &[
    "NULL",
    "'NaN'",
    "'abc'",
    "''",
    "-1",
    "0",
    "9223372036854775807",
    "-9223372036854775808",
    "9e999",
    "-9e999",
    "1e300",
    "0.5",
    "x'00ff'",
    "x''",
    "'{}'",
    "'[]'",
    "'{\"a\":1}'",
    "'[1,\"x\"]'",
    "'<script>'",
    "char(27) || '[2J'",
    "'a' || char(8238) || 'b'",
    "'running'",
    "'ok'",
    "1000",
];

/// A store with campaigns of its own: two of `mock` (mock workload, three
/// runs each) and one of `src` (io on a directory: metrics, series,
/// histograms); the source of every mutation.
fn base(dir: &Path, name: &str, with_io: bool) -> PathBuf {
    let db = dir.join(name);
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let mock = dir.join("mock.toml");
    std::fs::write(
        &mock,
        format!(
            "name = \"mock\"\n[plan]\nrepetitions = 3\ndrop_caches = false\ntelemetry = false\n\
             [[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"{0}\"\n\
             [[target]]\nname = \"b\"\nkind = \"dir\"\npath = \"{0}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nnoise = 0.05\n",
            data.display()
        ),
    )
    .unwrap();
    let io = dir.join("io.toml");
    std::fs::write(
        &io,
        format!(
            "name = \"src\"\n[plan]\nrepetitions = 2\ndrop_caches = false\ntelemetry = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"r\"\nkind = \"io\"\nrw = \"randread\"\nbs = \"4k\"\nsize = \"1M\"\nruntime = \"100ms\"\n",
            data.display()
        ),
    )
    .unwrap();
    let mut files = vec![&mock, &mock];
    if with_io {
        files.push(&io);
    }
    for f in files {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_storlab"))
            .current_dir(dir)
            .env("STORLAB_DB", &db)
            .env("STORLAB_STATE_DIR", dir.join("state"))
            .args(["run", "--quiet", f.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "INSERT INTO warning_texts (campaign_id, kind, message)
             SELECT campaign_id, 'note', 'a note' FROM runs ORDER BY id LIMIT 1;
         INSERT INTO run_warnings (run_id, text_id)
             SELECT MIN(id), (SELECT id FROM warning_texts WHERE message = 'a note') FROM runs;
         INSERT INTO pair_stops SELECT * FROM pair_stops WHERE 0;
         PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .unwrap();
    db
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn tables(conn: &Connection) -> Vec<String> {
    conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn columns(conn: &Connection, table: &str) -> Vec<String> {
    conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))
        .unwrap()
        .query_map([], |r| r.get(1))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// What names one row of `table`: its rowid, or for a table without
/// rowids (schema 8's values keyed by run) its primary key.
fn row_key(conn: &Connection, table: &str) -> String {
    if conn
        .prepare(&format!("SELECT rowid FROM \"{table}\" LIMIT 0"))
        .is_ok()
    {
        return "rowid".into();
    }
    let mut pk: Vec<(i64, String)> = conn
        .prepare(&format!("PRAGMA table_info(\"{table}\")"))
        .unwrap()
        .query_map([], |r| Ok((r.get(5)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    pk.retain(|(n, _)| *n > 0);
    pk.sort();
    let cols: Vec<String> = pk.into_iter().map(|(_, c)| format!("\"{c}\"")).collect();
    format!("({})", cols.join(", "))
}

/// One to three random edits of the store at `path`; what was done, for
/// the failure message. Edits SQLite refuses (a constraint) are skipped.
fn mutate(path: &Path, rng: &mut Rng) -> Vec<String> {
    let mut done = Vec::new();
    let conn = Connection::open(path).unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    for _ in 0..1 + rng.below(3) {
        let tables = tables(&conn);
        let table = &tables[rng.below(tables.len())];
        let cols = columns(&conn, table);
        let col = &cols[rng.below(cols.len())];
        let key = row_key(&conn, table);
        let sql = match rng.below(10) {
            0 => format!("DELETE FROM \"{table}\" WHERE {key} IN (SELECT {key} FROM \"{table}\" ORDER BY random() LIMIT 1)"),
            1 => format!("ALTER TABLE \"{table}\" DROP COLUMN \"{col}\""),
            2 => format!("UPDATE \"{table}\" SET \"{col}\" = \"{col}\" + 1000"),
            3 => format!("UPDATE meta SET value = '{}' WHERE key = 'schema_version'", [-1, 0, 2, 99, 7][rng.below(5)]),
            _ => format!(
                "UPDATE \"{table}\" SET \"{col}\" = {} WHERE {key} IN (SELECT {key} FROM \"{table}\" ORDER BY random() LIMIT {})",
                HOSTILE[rng.below(HOSTILE.len())],
                1 + rng.below(2)
            ),
        };
        if conn.execute_batch(&sql).is_ok() {
            done.push(sql);
        }
    }
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").ok();
    drop(conn);
    if rng.below(12) == 0 {
        // Damage the file itself.
        let mut bytes = std::fs::read(path).unwrap();
        let at = rng.below(bytes.len());
        let len = (bytes.len() - at).min(64);
        for b in &mut bytes[at..at + len] {
            *b ^= 0x5a;
        }
        std::fs::write(path, bytes).unwrap();
        done.push(format!("{len} bytes flipped at {at}"));
    }
    done
}

/// Every campaign of the store at `db` loads, renders, exports and joins
/// its experiment's history; the first that does not, said.
fn destination_works(db: &Path) -> Result<usize, String> {
    let store = Store::open_for_reading(db).map_err(|e| format!("open: {e:#}"))?;
    let list = store.list_campaigns().map_err(|e| format!("list: {e:#}"))?;
    let mut by_name: std::collections::BTreeMap<String, Vec<_>> = Default::default();
    for c in &list {
        let data = store
            .load_campaign(c.id)
            .map_err(|e| format!("load {}: {e:#}", c.id))?;
        let analysis = storlab::analysis::analyse(&data, &Default::default())
            .map_err(|e| format!("analysis of {}: {e:#}", c.id))?;
        let doc = storlab::report::outline::build(&analysis);
        storlab::report::render::markdown::render(&doc)
            .map_err(|e| format!("markdown of {}: {e:#}", c.id))?;
        storlab::report::render::html::render(&doc)
            .map_err(|e| format!("html of {}: {e:#}", c.id))?;
        storlab::export::to_csv(&data, Default::default());
        storlab::export::to_json(&data);
        by_name
            .entry(data.campaign.name.clone())
            .or_default()
            .push(data);
    }
    for (_, campaigns) in by_name {
        let order = storlab::analysis::history::Order::parse("date").unwrap();
        storlab::analysis::history::build(campaigns, order, &[]);
    }
    Ok(list.len())
}

#[test]
fn mutated_stores_never_panic_and_the_destination_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    let source = base(dir.path(), "source.db", true);
    let dest_dir = dir.path().join("dest");
    std::fs::create_dir(&dest_dir).unwrap();
    let dest_base = base(&dest_dir, "dest.db", false);
    let own = destination_works(&dest_base).unwrap();
    let mut rng = Rng(0x29_2026);
    let (mut panics, mut broken, mut accepted) = (Vec::new(), Vec::new(), 0);
    for case in 0..CASES {
        let bad = dir.path().join(format!("bad{case}.db"));
        std::fs::copy(&source, &bad).unwrap();
        let edits = mutate(&bad, &mut rng);
        let dest = dest_dir.join("case.db");
        std::fs::copy(&dest_base, &dest).unwrap();
        let imported = catch_unwind(AssertUnwindSafe(|| {
            Store::open(&dest).and_then(|mut s| s.import(&bad))
        }));
        match imported {
            Err(_) => panics.push(format!("case {case}: {edits:?}")),
            Ok(result) => {
                let works = catch_unwind(AssertUnwindSafe(|| destination_works(&dest)));
                match works {
                    Err(_) => panics.push(format!("case {case} (destination): {edits:?}")),
                    Ok(Err(e)) => broken.push(format!("case {case}: {e} after {edits:?}")),
                    Ok(Ok(n)) if n < own => broken.push(format!("case {case}: campaigns lost")),
                    Ok(Ok(n)) => accepted += n - own,
                }
                if let Ok(done) = result {
                    assert!(done.added.len() + done.refused.len() <= 3);
                }
            }
        }
        let _ = std::fs::remove_file(&bad);
        for suffix in ["", "-wal", "-shm", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", dest.display()));
        }
    }
    eprintln!(
        "{CASES} mutated stores: {accepted} campaigns accepted, {} panics, {} broken destinations",
        panics.len(),
        broken.len()
    );
    assert!(panics.is_empty(), "{} panics: {panics:#?}", panics.len());
    assert!(broken.is_empty(), "{} broken: {broken:#?}", broken.len());
    assert!(
        accepted > 0,
        "no mutation left a campaign importable: the fuzzer tests nothing"
    );
}
