//! The tidy CSV: one row per run and metric, values in stored base units.
//! Columns: `campaign, run, target, workload, repetition, round, warmup,
//! status, metric, value, unit, direction`; then one column per label key
//! the campaign's metrics use, swept parameters among them (named after the
//! key, `label.KEY` should a key be one of the columns before); `rank, host` when some run ran on
//! several MPI ranks; then the parameters of the run's workload
//! (`workload.KEY`) and target (`target.KEY`), so that a workload's `size`
//! and a target's `size` stay apart.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::metric::labels::LABELS;
use crate::metric::MetricKey;
use crate::store::{CampaignData, Metrics, RunData};

const CSV_HEADER: &[&str] = &[
    "campaign",
    "run",
    "target",
    "workload",
    "repetition",
    "round",
    "warmup",
    "status",
    "metric",
    "value",
    "unit",
    "direction",
];

/// The columns after the fixed ones.
struct Columns {
    labels: Vec<String>,
    ranks: bool,
    workload_params: Vec<String>,
    target_params: Vec<String>,
}

impl Columns {
    fn of(c: &CampaignData) -> Columns {
        let mut labels = BTreeSet::new();
        for r in &c.runs {
            let keys = r
                .metrics
                .keys()
                .chain(r.per_rank.iter().flat_map(|k| k.metrics.keys()));
            labels.extend(keys.flat_map(|k| k.labels.iter().map(|(l, _)| l.to_string())));
            labels.extend(r.factors.iter().map(|(l, _)| l.to_string()));
        }
        let mut labels: Vec<String> = labels.into_iter().collect();
        // storlab's own keys in the catalogue's order, then others by name.
        labels.sort_by_key(|l| {
            (
                LABELS.iter().position(|d| d.key == l).unwrap_or(usize::MAX),
                l.clone(),
            )
        });
        Columns {
            labels,
            ranks: crate::analysis::ranks::has_ranks(c),
            workload_params: param_keys(c.workloads.iter().map(|w| &w.params)),
            target_params: param_keys(c.targets.iter().map(|t| &t.params)),
        }
    }

    fn header(&self) -> Vec<String> {
        let mut h: Vec<String> = CSV_HEADER.iter().map(|s| s.to_string()).collect();
        h.extend(self.labels.iter().map(|l| label_column(l)));
        if self.ranks {
            h.extend(["rank".into(), "host".into()]);
        }
        h.extend(self.workload_params.iter().map(|k| format!("workload.{k}")));
        h.extend(self.target_params.iter().map(|k| format!("target.{k}")));
        h
    }
}

/// A label's column: its key, unless that is the name of a fixed column.
fn label_column(key: &str) -> String {
    if CSV_HEADER.contains(&key) || ["rank", "host"].contains(&key) {
        format!("label.{key}")
    } else {
        key.to_string()
    }
}

/// Every parameter name among the parameter objects, sorted.
fn param_keys<'a>(params: impl Iterator<Item = &'a Value>) -> Vec<String> {
    let keys: BTreeSet<&String> = params
        .filter_map(Value::as_object)
        .flat_map(|o| o.keys())
        .collect();
    keys.into_iter().cloned().collect()
}

/// Tidy CSV of every run and metric; failed runs appear with an empty metric.
/// A run's per-rank rows follow its aggregate rows, with `rank` and `host`
/// set (empty on the aggregate rows).
pub fn to_csv(c: &CampaignData) -> String {
    let cols = Columns::of(c);
    let mut out = String::new();
    push_row(&mut out, &cols.header());
    for r in &c.runs {
        let run = RunCells::new(c, r, &cols);
        let none = if cols.ranks {
            vec![String::new(); 2]
        } else {
            Vec::new()
        };
        metric_rows(&mut out, &run, &r.status, &r.metrics, &none);
        for k in &r.per_rank {
            let rank = vec![k.rank.to_string(), k.host.clone()];
            metric_rows(&mut out, &run, &k.status, &k.metrics, &rank);
        }
    }
    out
}

/// The cells a run's rows share: before the status, and the parameters.
struct RunCells<'a> {
    head: [String; 7],
    params: Vec<String>,
    labels: &'a [String],
    run: &'a RunData,
}

impl<'a> RunCells<'a> {
    fn new(c: &CampaignData, r: &'a RunData, cols: &'a Columns) -> RunCells<'a> {
        let head = [
            c.campaign.id.to_string(),
            r.id.to_string(),
            r.target.clone(),
            r.workload.clone(),
            r.repetition.to_string(),
            r.round.to_string(),
            r.warmup.to_string(),
        ];
        let workload = c
            .workloads
            .iter()
            .find(|w| w.name == r.workload)
            .map(|w| &w.params);
        let target = c
            .targets
            .iter()
            .find(|t| t.name == r.target)
            .map(|t| &t.params);
        let mut params = param_cells(workload, &cols.workload_params);
        params.extend(param_cells(target, &cols.target_params));
        RunCells {
            head,
            params,
            labels: &cols.labels,
            run: r,
        }
    }

    /// One row: the shared cells, `status`, the metric (its key, and its
    /// value, unit and direction) with its labels, `rank` (the rank and
    /// host, or empty cells, or nothing) and the parameters.
    fn row(
        &self,
        status: &str,
        metric: Option<(&MetricKey, [String; 3])>,
        rank: &[String],
    ) -> Vec<String> {
        let mut row: Vec<String> = self.head.to_vec();
        row.push(status.to_string());
        match metric {
            Some((key, cells)) => {
                row.push(key.name.clone());
                row.extend(cells);
                let labels = self.run.labels_of(key);
                row.extend(
                    self.labels
                        .iter()
                        .map(|l| labels.value(l).unwrap_or_default().to_string()),
                );
            }
            None => row.extend(vec![String::new(); 4 + self.labels.len()]),
        }
        row.extend_from_slice(rank);
        row.extend(self.params.iter().cloned());
        row
    }
}

/// The run's value of each parameter column; empty where it has none.
fn param_cells(params: Option<&Value>, keys: &[String]) -> Vec<String> {
    keys.iter()
        .map(|k| {
            params
                .and_then(|p| p.get(k))
                .map(param_text)
                .unwrap_or_default()
        })
        .collect()
}

/// A parameter as a cell: text and numbers as they are, lists and tables
/// as compact JSON.
fn param_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(_) | Value::Number(_) => v.to_string(),
        Value::Array(_) | Value::Object(_) => v.to_string(),
    }
}

/// A row per metric (one with empty metric cells when there is none).
fn metric_rows(
    out: &mut String,
    run: &RunCells<'_>,
    status: &str,
    metrics: &Metrics,
    rank: &[String],
) {
    if metrics.is_empty() {
        push_row(out, &run.row(status, None, rank));
    }
    for (key, m) in metrics {
        let cells = [
            format!("{}", m.value),
            m.unit.to_string(),
            m.direction.as_str().into(),
        ];
        push_row(out, &run.row(status, Some((key, cells)), rank));
    }
}

fn push_row(out: &mut String, cells: &[String]) {
    let escaped: Vec<String> = cells.iter().map(|c| csv_escape(c)).collect();
    out.push_str(&escaped.join(","));
    out.push('\n');
}

/// RFC 4180 quoting, plus a leading quote for cells a spreadsheet would run
/// as a formula.
pub fn csv_escape(cell: &str) -> String {
    let formula = cell.starts_with(['=', '+', '@'])
        || (cell.starts_with('-') && cell.parse::<f64>().is_err());
    let cell = if formula {
        format!("'{cell}")
    } else {
        cell.to_string()
    };
    if cell.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", cell.replace('"', "\"\""))
    } else {
        cell
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_are_quoted_and_defused() {
        assert_eq!(csv_escape("plain"), "plain");
        assert_eq!(csv_escape("a,b"), "\"a,b\"");
        assert_eq!(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_escape("=cmd()"), "'=cmd()");
        assert_eq!(csv_escape("-1.5"), "-1.5");
    }

    #[test]
    fn labels_named_like_columns_are_set_apart() {
        assert_eq!(label_column("test"), "test");
        assert_eq!(label_column("run"), "label.run");
        assert_eq!(label_column("host"), "label.host");
        assert_eq!(param_text(&serde_json::json!(["a", 1])), "[\"a\",1]");
        assert_eq!(param_text(&serde_json::json!(4096)), "4096");
        assert_eq!(param_text(&serde_json::json!("4k")), "4k");
    }
}
