//! What `storlab import` accepts: every row of a campaign is checked before
//! it is copied, so that what reaches this store reads back as storlab
//! wrote it. A row is refused for a value of the wrong type (text where a
//! number belongs, `NaN`), out of its range (a negative count, a count no
//! histogram holds), not finite, a unit, direction, status or warning
//! kind storlab does not write, labels that are not a JSON object of
//! text, a series that is not a JSON array of numbers, a histogram that
//! does not decode (or holds another count than it says), or a reference
//! to a row of another campaign or of none. The first bad row names the
//! campaign's refusal; the other campaigns of the store are imported.

use rusqlite::types::ValueRef;
use rusqlite::Transaction;

use crate::foreign::visible;
use crate::metric::{Direction, Labels, Unit};
use crate::warning::WarningKind;

/// What a column must hold; each rule is also SQL selecting bad rows.
#[derive(Clone, Copy)]
enum Rule {
    Text,
    TextOrNull,
    /// Non-empty text.
    Id,
    Int(i64, i64),
    Bool,
    /// A finite number within the bounds.
    Real(f64, f64),
    RealOrNull(f64, f64),
    Json,
    OneOf(&'static [&'static str]),
    /// The id of a row of this table in the same campaign.
    Ref(&'static str),
}

/// Bounds of what storlab stores: counts fit a u32 where it reads them
/// into one; a real is any finite double.
const U32: i64 = u32::MAX as i64;
const FINITE: (f64, f64) = (-f64::MAX, f64::MAX);
const RUN_STATUS: &[&str] = &["ok", "failed", "interrupted", "skipped"];
const CAMPAIGN_STATUS: &[&str] = &["running", "finished", "interrupted", "failed"];

/// (table, column, rule) for every column storlab reads back.
const COLUMNS: &[(&str, &str, Rule)] = &[
    ("campaigns", "uuid", Rule::Id),
    ("campaigns", "name", Rule::Text),
    ("campaigns", "description", Rule::Text),
    ("campaigns", "origin", Rule::Text),
    ("campaigns", "status", Rule::OneOf(CAMPAIGN_STATUS)),
    ("campaigns", "started_at", Rule::Text),
    ("campaigns", "finished_at", Rule::TextOrNull),
    ("campaigns", "storlab_version", Rule::Text),
    ("campaigns", "planned_runs", Rule::Int(0, U32)),
    ("campaigns", "experiment_source", Rule::Text),
    ("campaigns", "experiment_json", Rule::Json),
    ("campaigns", "environment_json", Rule::Json),
    ("targets", "position", Rule::Int(0, U32)),
    ("targets", "name", Rule::Text),
    ("targets", "kind", Rule::Text),
    ("targets", "baseline", Rule::Bool),
    ("targets", "params_json", Rule::Json),
    ("targets", "facts_json", Rule::Json),
    ("workloads", "position", Rule::Int(0, U32)),
    ("workloads", "name", Rule::Text),
    ("workloads", "kind", Rule::Text),
    ("workloads", "primary_metric", Rule::Text),
    ("workloads", "params_json", Rule::Json),
    ("runs", "target_id", Rule::Ref("targets")),
    ("runs", "workload_id", Rule::Ref("workloads")),
    ("runs", "repetition", Rule::Int(0, U32)),
    ("runs", "round", Rule::Int(0, U32)),
    ("runs", "position", Rule::Int(0, U32)),
    ("runs", "warmup", Rule::Bool),
    ("runs", "status", Rule::OneOf(RUN_STATUS)),
    ("runs", "error", Rule::TextOrNull),
    ("runs", "started_at", Rule::Text),
    ("runs", "duration_s", Rule::Real(0.0, f64::MAX)),
    ("runs", "caches_dropped", Rule::Bool),
    ("runs", "remounted", Rule::Bool),
    ("runs", "ranks", Rule::Int(1, U32)),
    ("metrics", "name", Rule::Text),
    ("metrics", "labels", Rule::Text),
    ("metrics", "unit", Rule::Text),
    ("metrics", "direction", Rule::Text),
    ("metrics", "value", Rule::Real(FINITE.0, FINITE.1)),
    ("series", "name", Rule::Text),
    ("series", "labels", Rule::Text),
    ("series", "unit", Rule::Text),
    (
        "series",
        "interval_s",
        Rule::Real(f64::MIN_POSITIVE, f64::MAX),
    ),
    ("series", "values_json", Rule::Json),
    ("histograms", "name", Rule::Text),
    ("histograms", "labels", Rule::Text),
    ("histograms", "unit", Rule::Text),
    ("histograms", "count", Rule::Int(0, i64::MAX)),
    ("warnings", "message", Rule::Text),
    ("warnings", "kind", Rule::Text),
    ("run_facts", "name", Rule::Text),
    ("run_facts", "value", Rule::Text),
    ("pair_stops", "target_id", Rule::Ref("targets")),
    ("pair_stops", "workload_id", Rule::Ref("workloads")),
    ("pair_stops", "reason", Rule::Text),
    ("pair_stops", "measured_runs", Rule::Int(0, U32)),
    ("pair_stops", "ci_pct", Rule::RealOrNull(FINITE.0, FINITE.1)),
    ("run_ranks", "rank", Rule::Int(0, U32)),
    ("run_ranks", "host", Rule::Text),
    ("run_ranks", "status", Rule::OneOf(RUN_STATUS)),
    ("run_ranks", "error", Rule::TextOrNull),
    ("run_ranks", "done_s", Rule::RealOrNull(FINITE.0, FINITE.1)),
    ("rank_metrics", "rank", Rule::Int(0, U32)),
    ("rank_metrics", "name", Rule::Text),
    ("rank_metrics", "labels", Rule::Text),
    ("rank_metrics", "unit", Rule::Text),
    ("rank_metrics", "direction", Rule::Text),
    ("rank_metrics", "value", Rule::Real(FINITE.0, FINITE.1)),
    (
        "campaign_facts",
        "kind",
        Rule::OneOf(&["version", "host", "tag", "import"]),
    ),
    ("campaign_facts", "name", Rule::Text),
    ("campaign_facts", "value", Rule::Text),
];

/// SQL true for a bad value of column `c` under `rule` (`?1`: the campaign).
fn bad_when(c: &str, rule: Rule) -> String {
    let real = |lo: f64, hi: f64| {
        format!("(typeof({c}) NOT IN ('real', 'integer') OR NOT ({c} >= {lo:e} AND {c} <= {hi:e}))")
    };
    match rule {
        Rule::Text => format!("typeof({c}) <> 'text'"),
        Rule::TextOrNull => format!("({c} IS NOT NULL AND typeof({c}) <> 'text')"),
        Rule::Id => format!("(typeof({c}) <> 'text' OR length({c}) = 0)"),
        Rule::Int(lo, hi) => format!("(typeof({c}) <> 'integer' OR {c} < {lo} OR {c} > {hi})"),
        Rule::Bool => format!("(typeof({c}) <> 'integer' OR {c} NOT IN (0, 1))"),
        Rule::Real(lo, hi) => real(lo, hi),
        Rule::RealOrNull(lo, hi) => format!("({c} IS NOT NULL AND {})", real(lo, hi)),
        Rule::Json => format!("(typeof({c}) <> 'text' OR NOT json_valid({c}))"),
        Rule::OneOf(words) => {
            let list: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
            format!(
                "(typeof({c}) <> 'text' OR {c} NOT IN ({}))",
                list.join(", ")
            )
        }
        Rule::Ref(table) => {
            format!("{c} NOT IN (SELECT id FROM other.\"{table}\" WHERE campaign_id = ?1)")
        }
    }
}

/// What a rule asks for, in words.
fn wanted(rule: Rule) -> String {
    match rule {
        Rule::Text => "text".into(),
        Rule::TextOrNull => "text or nothing".into(),
        Rule::Id => "a non-empty text".into(),
        Rule::Int(lo, hi) => format!("a whole number from {lo} to {hi}"),
        Rule::Bool => "0 or 1".into(),
        Rule::Real(lo, _) if lo >= 0.0 => "a finite number, not negative".into(),
        Rule::Real(..) => "a finite number".into(),
        Rule::RealOrNull(..) => "a finite number or nothing".into(),
        Rule::Json => "JSON text".into(),
        Rule::OneOf(words) => format!("one of {}", words.join(", ")),
        Rule::Ref(table) => format!("the id of a row of {table} in the same campaign"),
    }
}

/// Which rows of `table` belong to campaign `?1`.
fn scope(table: &str) -> &'static str {
    match table {
        "campaigns" => "id = ?1",
        "targets" | "workloads" | "runs" | "pair_stops" | "campaign_facts" => "campaign_id = ?1",
        _ => "run_id IN (SELECT id FROM other.runs WHERE campaign_id = ?1)",
    }
}

/// A stored value shown in a refusal: short, and never driving the terminal.
fn shown(v: ValueRef<'_>) -> String {
    let text = match v {
        ValueRef::Null => return "nothing (NULL)".into(),
        ValueRef::Integer(i) => return i.to_string(),
        ValueRef::Real(f) => return f.to_string(),
        ValueRef::Text(t) => format!("text '{}'", String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => return format!("a blob of {} bytes", b.len()),
    };
    let short: String = text.chars().take(60).collect();
    visible(&short).into_owned()
}

/// Why a row of campaign `id` of the attached store `other` is refused:
/// the first bad row found, or `None` when every row reads back.
pub(super) fn campaign(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<Option<String>> {
    if let Some(why) = duplicate_uuid(tx, id)? {
        return Ok(Some(why));
    }
    for &(table, column, rule) in COLUMNS {
        let sql = format!(
            "SELECT rowid, \"{column}\" FROM other.\"{table}\" WHERE {} AND {} LIMIT 1",
            scope(table),
            bad_when(&format!("\"{column}\""), rule)
        );
        let found = tx.query_row(&sql, [id], |r| {
            Ok(format!(
                "table {table}, row {}: {column} is {}, not {}",
                r.get::<_, i64>(0)?,
                shown(r.get_ref(1)?),
                wanted(rule)
            ))
        });
        match found {
            Ok(why) => return Ok(Some(why)),
            Err(rusqlite::Error::QueryReturnedNoRows) => {}
            Err(e) => return Err(e),
        }
    }
    for check in [labels_and_units, series, histograms, warnings, rank_rows] {
        if let Some(why) = check(tx, id)? {
            return Ok(Some(why));
        }
    }
    Ok(None)
}

fn duplicate_uuid(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<Option<String>> {
    let n: i64 = tx.query_row(
        "SELECT COUNT(*) FROM other.campaigns WHERE uuid = (SELECT uuid FROM other.campaigns WHERE id = ?1)",
        [id],
        |r| r.get(0),
    )?;
    Ok((n > 1).then(|| format!("table campaigns: {n} campaigns share its uuid")))
}

/// Runs `each` on every row of `sql` (over campaign `?1`), stopping at the
/// first refusal.
fn first_bad(
    tx: &Transaction<'_>,
    sql: &str,
    id: i64,
    mut each: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<Option<String>>,
) -> rusqlite::Result<Option<String>> {
    let mut st = tx.prepare(sql)?;
    let mut rows = st.query([id])?;
    while let Some(r) = rows.next()? {
        if let Some(why) = each(r)? {
            return Ok(Some(why));
        }
    }
    Ok(None)
}

fn text<'r>(r: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<std::borrow::Cow<'r, str>> {
    Ok(match r.get_ref(i)? {
        ValueRef::Text(t) => String::from_utf8_lossy(t),
        _ => std::borrow::Cow::Borrowed(""),
    })
}

/// Labels are a JSON object of text; units and directions are storlab's.
fn labels_and_units(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<Option<String>> {
    for table in ["metrics", "series", "histograms", "rank_metrics"] {
        let direction = matches!(table, "metrics" | "rank_metrics");
        let unit = table != "histograms";
        let sql = format!(
            "SELECT rowid, labels, {}, {} FROM other.\"{table}\" WHERE {}",
            if unit { "unit" } else { "NULL" },
            if direction { "direction" } else { "NULL" },
            scope(table)
        );
        let bad = first_bad(tx, &sql, id, |r| {
            let row = r.get::<_, i64>(0)?;
            let at = |what: String| Some(format!("table {table}, row {row}: {what}"));
            if Labels::from_json_text(&text(r, 1)?).is_err() {
                return Ok(at(format!(
                    "labels {} are not a JSON object of text",
                    shown(r.get_ref(1)?)
                )));
            }
            if unit && Unit::parse(&text(r, 2)?).is_none() {
                return Ok(at(format!(
                    "unit {} is none storlab writes",
                    shown(r.get_ref(2)?)
                )));
            }
            if direction && Direction::parse(&text(r, 3)?).is_none() {
                return Ok(at(format!(
                    "direction {} is neither higher nor lower",
                    shown(r.get_ref(3)?)
                )));
            }
            Ok(None)
        })?;
        if bad.is_some() {
            return Ok(bad);
        }
    }
    Ok(None)
}

/// A series is a JSON array of numbers (or nulls, for gaps).
fn series(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<Option<String>> {
    let sql = format!(
        "SELECT rowid, values_json FROM other.series WHERE {}",
        scope("series")
    );
    first_bad(tx, &sql, id, |r| {
        let ok = serde_json::from_str::<Vec<Option<f64>>>(&text(r, 1)?).is_ok();
        Ok((!ok).then(|| {
            format!(
                "table series, row {}: values_json {} is not a JSON array of numbers",
                r.get::<_, i64>(0).unwrap_or_default(),
                shown(r.get_ref(1).unwrap_or(ValueRef::Null))
            )
        }))
    })
}

/// A histogram decodes, and holds the count stored beside it.
fn histograms(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<Option<String>> {
    let sql = format!(
        "SELECT rowid, count, hdr_v2 FROM other.histograms WHERE {}",
        scope("histograms")
    );
    first_bad(tx, &sql, id, |r| {
        let row = r.get::<_, i64>(0)?;
        let bytes = match r.get_ref(2)? {
            ValueRef::Blob(b) => b,
            other => {
                return Ok(Some(format!(
                    "table histograms, row {row}: hdr_v2 is {}, not an HdrHistogram",
                    shown(other)
                )))
            }
        };
        let decoded: Result<hdrhistogram::Histogram<u64>, _> =
            hdrhistogram::serialization::Deserializer::new().deserialize(&mut &bytes[..]);
        let count: i64 = r.get(1)?;
        Ok(match decoded {
            Err(e) => Some(format!(
                "table histograms, row {row}: hdr_v2 does not decode as an HdrHistogram ({e:?})"
            )),
            Ok(h) if h.len() != count as u64 => Some(format!(
                "table histograms, row {row}: count is {count}, but the histogram holds {}",
                h.len()
            )),
            Ok(_) => None,
        })
    })
}

/// A warning's kind is one of the catalogue's.
fn warnings(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<Option<String>> {
    let sql = format!(
        "SELECT rowid, kind FROM other.warnings WHERE {}",
        scope("warnings")
    );
    first_bad(tx, &sql, id, |r| {
        let known = WarningKind::from_name(&text(r, 1)?).is_some();
        Ok((!known).then(|| {
            format!(
                "table warnings, row {}: kind {} is none storlab writes",
                r.get::<_, i64>(0).unwrap_or_default(),
                shown(r.get_ref(1).unwrap_or(ValueRef::Null))
            )
        }))
    })
}

/// A rank's metrics belong to a rank of the run.
fn rank_rows(tx: &Transaction<'_>, id: i64) -> rusqlite::Result<Option<String>> {
    let sql = format!(
        "SELECT m.rowid, m.rank FROM other.rank_metrics m WHERE {} AND NOT EXISTS
         (SELECT 1 FROM other.run_ranks k WHERE k.run_id = m.run_id AND k.rank = m.rank) LIMIT 1",
        scope("rank_metrics").replace("run_id", "m.run_id")
    );
    first_bad(tx, &sql, id, |r| {
        Ok(Some(format!(
            "table rank_metrics, row {}: rank {} is no rank of its run",
            r.get::<_, i64>(0)?,
            shown(r.get_ref(1)?)
        )))
    })
}

/// The first column this schema declares that the other store's copy
/// lacks: (table, column).
pub(super) fn missing_column(tx: &Transaction<'_>) -> rusqlite::Result<Option<(String, String)>> {
    let tables: Vec<String> = {
        let mut st = tx.prepare(
            "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )?;
        let rows = st.query_map([], |r| r.get(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let columns = |db: &str, table: &str| -> rusqlite::Result<Vec<String>> {
        let mut st = tx.prepare(&format!("PRAGMA {db}.table_info(\"{table}\")"))?;
        let rows = st.query_map([], |r| r.get(1))?;
        rows.collect()
    };
    for table in tables {
        let theirs = columns("other", &table)?;
        for c in columns("main", &table)? {
            if !theirs.contains(&c) {
                return Ok(Some((table, c)));
            }
        }
    }
    Ok(None)
}
