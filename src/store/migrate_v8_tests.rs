//! The migration to schema 8 on real older stores: every row kept, bit
//! for bit (beside migrate_v8, not in it: these tests drive the whole
//! schema, which itself calls migrate_v8).

use super::migrate_v8::*;
use super::schema;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

/// Every row of `sql`, each cell as text that keeps every bit (a real
/// by its bits, a blob in hex).
fn dump(conn: &Connection, sql: &str) -> Vec<String> {
    let mut st = conn.prepare(sql).unwrap();
    let n = st.column_count();
    let mut rows = st.query([]).unwrap();
    let mut out = Vec::new();
    while let Some(r) = rows.next().unwrap() {
        let cells: Vec<String> = (0..n)
            .map(|i| match r.get_ref(i).unwrap() {
                ValueRef::Null => "NULL".into(),
                ValueRef::Integer(v) => format!("i{v}"),
                ValueRef::Real(v) => format!("r{:x}", v.to_bits()),
                ValueRef::Text(t) => format!("t{}", String::from_utf8_lossy(t)),
                ValueRef::Blob(b) => format!("b{}", hex(b)),
            })
            .collect();
        out.push(cells.join("|"));
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A series' values as text, a gap (JSON `null`, a NaN) as `gap`.
fn samples(values: impl IntoIterator<Item = f64>) -> String {
    let cells: Vec<String> = values
        .into_iter()
        .map(|v| match v.is_nan() {
            true => "gap".into(),
            false => format!("{:x}", v.to_bits()),
        })
        .collect();
    cells.join(",")
}

/// The rows a schema-7 store holds in the tables schema 8 replaces, in
/// the v7 layout: read from the tables themselves at 7, from the views
/// (and the packed series) at 8.
fn results(conn: &Connection, v8: bool) -> Vec<(&'static str, Vec<String>)> {
    let warnings = match v8 {
        false => "SELECT run_id, kind, message FROM warnings ORDER BY run_id, rowid",
        true => "SELECT w.run_id, t.kind, t.message FROM run_warnings w JOIN warning_texts t ON t.id = w.text_id ORDER BY w.run_id, w.rowid",
    };
    let mut series: Vec<String> = match v8 {
        false => {
            let mut st = conn
                .prepare("SELECT run_id, name, labels, unit, interval_s, values_json FROM series")
                .unwrap();
            let rows = st
                .query_map([], |r| {
                    let text: String = r.get(5)?;
                    let values: Vec<Option<f64>> = serde_json::from_str(&text).unwrap();
                    let values = values.into_iter().map(|v| v.unwrap_or(f64::NAN));
                    Ok(format!(
                        "{}|{}|{}|{}|{:x}|{}",
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, f64>(4)?.to_bits(),
                        samples(values)
                    ))
                })
                .unwrap();
            rows.collect::<rusqlite::Result<_>>().unwrap()
        }
        true => {
            let mut st = conn
                .prepare(
                    "SELECT v.run_id, k.name, k.labels, k.unit, v.interval_s, v.values_f64
                     FROM series_values v JOIN metric_keys k ON k.id = v.key_id",
                )
                .unwrap();
            let rows = st
                .query_map([], |r| {
                    let bytes: Vec<u8> = r.get(5)?;
                    Ok(format!(
                        "{}|{}|{}|{}|{:x}|{}",
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, f64>(4)?.to_bits(),
                        samples(unpack(&bytes))
                    ))
                })
                .unwrap();
            rows.collect::<rusqlite::Result<_>>().unwrap()
        }
    };
    series.sort();
    vec![
        (
            "metrics",
            dump(
                conn,
                "SELECT run_id, name, labels, value, unit, direction FROM metrics ORDER BY run_id, name, labels",
            ),
        ),
        (
            "rank_metrics",
            dump(
                conn,
                "SELECT run_id, rank, name, labels, value, unit, direction FROM rank_metrics ORDER BY run_id, rank, name, labels",
            ),
        ),
        (
            "histograms",
            dump(
                conn,
                "SELECT run_id, name, labels, unit, count, hdr_v2 FROM histograms ORDER BY run_id, name, labels",
            ),
        ),
        ("warnings", dump(conn, warnings)),
        (
            "run_facts",
            dump(
                conn,
                "SELECT run_id, name, value FROM run_facts ORDER BY run_id, name",
            ),
        ),
        ("series", series),
    ]
}

/// Real stores written by earlier storlabs (tests/fixtures: v3 with
/// every workload kind and MPI ranks, v6 with warnings and facts from a
/// loaded host), migrated to 7, then to 8: every metric, per-rank
/// metric, histogram, warning (in order), fact and series sample is
/// found again, bit for bit, and the store reads back whole.
#[test]
fn real_older_stores_keep_every_row_through_the_migration() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut seen: std::collections::BTreeMap<&str, usize> = Default::default();
    for fixture in ["v3/all-kinds.db", "quick-noisy/quick-noisy.db"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        std::fs::copy(fixtures.join(fixture), &path).unwrap();
        let conn = Connection::open(&path).unwrap();
        schema::migrate_to(&conn, 7).unwrap();
        let before = results(&conn, false);
        schema::migrate_to(&conn, 8).unwrap();
        assert_eq!(schema::version(&conn).unwrap(), 8);
        let after = results(&conn, true);
        for ((table, a), (_, b)) in before.iter().zip(&after) {
            assert_eq!(a.len(), b.len(), "{fixture}: rows of {table}");
            for (x, y) in a.iter().zip(b) {
                assert_eq!(x, y, "{fixture}: a row of {table}");
            }
            *seen.entry(table).or_default() += a.len();
        }
        drop(conn);
        let store = crate::store::Store::open(&path).unwrap();
        for c in store.list_campaigns().unwrap() {
            let data = store.load_campaign(c.id).unwrap();
            let figures: usize = data.runs.iter().map(|r| r.metrics.len()).sum();
            let stored: usize = store
                .conn
                .query_row(
                    "SELECT COUNT(*) FROM metrics m JOIN runs r ON r.id = m.run_id WHERE r.campaign_id = ?1",
                    [c.id],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(figures, stored, "{fixture}: figures of campaign {}", c.id);
        }
    }
    for (table, n) in seen {
        assert!(
            n > 0,
            "no fixture has rows of {table}: the test proves nothing of it"
        );
    }
}

#[test]
fn packed_series_keep_every_bit_and_the_gaps() {
    let values = [0.1 + 0.2, f64::NAN, -0.0, 1e300, f64::MIN_POSITIVE];
    let back = unpack(&pack(&values));
    assert_eq!(back.len(), values.len());
    for (a, b) in values.iter().zip(&back) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
}
