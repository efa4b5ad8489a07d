//! The tidy CSV: one row per run and metric, values in stored base units,
//! for pandas and R. Columns: `campaign, run, target, workload,
//! repetition, round, warmup, status, metric, value, unit, direction`;
//! then what places a row among campaigns and in time: `campaign_uuid,
//! campaign_name, host` (the campaign's; a rank's own on its rows),
//! `started_at, duration_s, caches_dropped, remounted` (the run's); one
//! `tag.NAME` column per tag of the campaigns exported; one column per
//! label key their metrics use, swept parameters among them (named after
//! the key, `label.KEY` should a key be one of the columns before);
//! `rank` when some run ran on several MPI ranks; then the parameters of
//! the run's workload (`workload.KEY`) and target (`target.KEY`), so that
//! a workload's `size` and a target's `size` stay apart.
//!
//! Several campaigns (`export --all`) share one header, the union of their
//! columns. Cells are written as they are, quoted as RFC 4180 says (the
//! `csv` crate); only `--excel-safe` defuses text a spreadsheet would run
//! as a formula, and never a number.

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
    "campaign_uuid",
    "campaign_name",
    "host",
    "started_at",
    "duration_s",
    "caches_dropped",
    "remounted",
];

/// How the CSV is written.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvOptions {
    /// Text cells a spreadsheet would run as a formula (`=`, `+`, `-`, `@`,
    /// tab, carriage return first) get a `'` in front; numbers never do.
    pub excel_safe: bool,
}

/// The columns after the fixed ones: the union over the campaigns
/// exported, gathered one campaign at a time ([`Columns::add`]).
#[derive(Debug, Clone, Default)]
pub struct Columns {
    tags: BTreeSet<String>,
    labels: BTreeSet<String>,
    ranks: bool,
    workload_params: BTreeSet<String>,
    target_params: BTreeSet<String>,
}

impl Columns {
    fn of(campaigns: &[CampaignData]) -> Columns {
        let mut cols = Columns::default();
        for c in campaigns {
            cols.add(c);
        }
        cols
    }

    /// Adds the columns campaign `c` needs.
    pub fn add(&mut self, c: &CampaignData) {
        self.add_head(c);
        self.add_runs(&c.runs);
    }

    /// Adds the columns campaign `c` needs whatever its runs: its tags and
    /// the parameters of its targets and workloads.
    pub fn add_head(&mut self, c: &CampaignData) {
        self.tags.extend(c.facts.provenance.tags.keys().cloned());
        self.workload_params
            .extend(param_keys(c.workloads.iter().map(|w| &w.params)));
        self.target_params
            .extend(param_keys(c.targets.iter().map(|t| &t.params)));
    }

    /// Adds the columns `runs` (some or all of a campaign's) need: their
    /// metrics' labels and factors, `rank` for runs of several ranks.
    pub fn add_runs(&mut self, runs: &[RunData]) {
        self.ranks |= runs.iter().any(|r| r.ranks > 1);
        for r in runs {
            let keys = r
                .metrics
                .keys()
                .chain(r.per_rank.iter().flat_map(|k| k.metrics.keys()));
            for k in keys {
                // Most keys' labels are known already: no new text for them.
                for (l, _) in k.labels.iter() {
                    if !self.labels.contains(l) {
                        self.labels.insert(l.to_string());
                    }
                }
            }
            for (l, _) in r.factors.iter() {
                if !self.labels.contains(l) {
                    self.labels.insert(l.to_string());
                }
            }
        }
    }

    /// Label columns: storlab's own keys in the catalogue's order, then
    /// others by name.
    fn labels(&self) -> Vec<String> {
        let mut labels: Vec<String> = self.labels.iter().cloned().collect();
        labels.sort_by_key(|l| {
            (
                LABELS.iter().position(|d| d.key == l).unwrap_or(usize::MAX),
                l.clone(),
            )
        });
        labels
    }

    fn header(&self) -> Vec<String> {
        let mut h: Vec<String> = CSV_HEADER.iter().map(|s| s.to_string()).collect();
        h.extend(self.tags.iter().map(|t| format!("tag.{t}")));
        h.extend(self.labels().iter().map(|l| label_column(l)));
        if self.ranks {
            h.push("rank".into());
        }
        h.extend(self.workload_params.iter().map(|k| format!("workload.{k}")));
        h.extend(self.target_params.iter().map(|k| format!("target.{k}")));
        h
    }
}

/// A label's column: its key, unless that is the name of a fixed column.
fn label_column(key: &str) -> String {
    if CSV_HEADER.contains(&key) || key == "rank" || key.starts_with("tag.") {
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

/// Tidy CSV of every run and metric of one campaign; see [`to_csv_all`].
pub fn to_csv(c: &CampaignData, options: CsvOptions) -> String {
    to_csv_all(std::slice::from_ref(c), options)
}

/// Tidy CSV of every run and metric of `campaigns`, under one header;
/// failed runs appear with an empty metric. A run's per-rank rows follow
/// its aggregate rows, with `rank` and that rank's `host` set (`rank`
/// empty on the aggregate rows).
pub fn to_csv_all(campaigns: &[CampaignData], options: CsvOptions) -> String {
    let mut w = CsvWriter::new(Columns::of(campaigns), options, Vec::new())
        .expect("writing CSV into memory cannot fail");
    for c in campaigns {
        w.campaign(c).expect("writing CSV into memory cannot fail");
    }
    let bytes = w.finish().expect("writing CSV into memory cannot fail");
    String::from_utf8(bytes).expect("CSV of UTF-8 cells is UTF-8")
}

/// The tidy CSV written as it is made, one campaign at a time, under the
/// header of columns gathered beforehand: what `storlab export` streams.
pub struct CsvWriter<W: std::io::Write> {
    cols: Columns,
    labels: Vec<String>,
    rows: Rows<W>,
}

impl<W: std::io::Write> CsvWriter<W> {
    /// Writes the header of `cols` into `w`.
    pub fn new(cols: Columns, options: CsvOptions, w: W) -> std::io::Result<CsvWriter<W>> {
        let mut rows = Rows::new(options, w);
        rows.push(cols.header())?;
        let labels = cols.labels();
        Ok(CsvWriter { cols, labels, rows })
    }

    /// Writes every run of `c`.
    pub fn campaign(&mut self, c: &CampaignData) -> std::io::Result<()> {
        self.runs(c, &c.runs)
    }

    /// Writes `runs` of campaign `c` (some or all of them: a campaign
    /// streamed a chunk at a time).
    pub fn runs(&mut self, c: &CampaignData, runs: &[RunData]) -> std::io::Result<()> {
        let (cols, out) = (&self.cols, &mut self.rows);
        let campaign = CampaignCells::new(c, cols);
        for r in runs {
            let run = RunCells::new(&campaign, c, r, cols, &self.labels);
            let none = if cols.ranks {
                vec![String::new()]
            } else {
                vec![]
            };
            metric_rows(out, &run, &r.status, &r.metrics, (&none, None))?;
            for k in &r.per_rank {
                let rank = vec![k.rank.to_string()];
                metric_rows(out, &run, &k.status, &k.metrics, (&rank, Some(&k.host)))?;
            }
        }
        Ok(())
    }

    /// Flushes what is written and gives the writer back.
    pub fn finish(self) -> std::io::Result<W> {
        self.rows.finish()
    }
}

/// The cells a campaign's rows share: its uuid, name and host, and a cell
/// per tag column.
struct CampaignCells {
    id: String,
    ident: [String; 3],
    tags: Vec<String>,
}

impl CampaignCells {
    fn new(c: &CampaignData, cols: &Columns) -> CampaignCells {
        let host = c
            .facts
            .provenance
            .host
            .get("hostname")
            .cloned()
            .or_else(|| c.environment["hostname"].as_str().map(String::from))
            .unwrap_or_default();
        let tags = &c.facts.provenance.tags;
        CampaignCells {
            id: c.campaign.id.to_string(),
            ident: [c.facts.uuid.clone(), c.campaign.name.clone(), host],
            tags: cols
                .tags
                .iter()
                .map(|t| tags.get(t).cloned().unwrap_or_default())
                .collect(),
        }
    }
}

/// The cells a run's rows share: before the status, the campaign's and
/// the run's own after the metric, and the parameters.
struct RunCells<'a> {
    head: [String; 7],
    campaign: &'a CampaignCells,
    timing: [String; 4],
    params: Vec<String>,
    labels: &'a [String],
    run: &'a RunData,
}

impl<'a> RunCells<'a> {
    fn new(
        campaign: &'a CampaignCells,
        c: &CampaignData,
        r: &'a RunData,
        cols: &Columns,
        labels: &'a [String],
    ) -> RunCells<'a> {
        let head = [
            campaign.id.clone(),
            r.id.to_string(),
            r.target.clone(),
            r.workload.clone(),
            r.repetition.to_string(),
            r.round.to_string(),
            r.warmup.to_string(),
        ];
        let timing = [
            r.started_at.clone(),
            r.duration_s.to_string(),
            r.caches_dropped.to_string(),
            r.remounted.to_string(),
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
            campaign,
            timing,
            params,
            labels,
            run: r,
        }
    }

    /// One row: the shared cells, `status`, the metric (its key, and its
    /// value, unit and direction), the campaign's and the run's cells (a
    /// rank's own host in place of the campaign's), the tags, the metric's
    /// labels, `rank` (the rank, or an empty cell, or nothing) and the
    /// parameters.
    fn row(
        &self,
        status: &str,
        metric: Option<(&MetricKey, [String; 3])>,
        (rank, host): (&[String], Option<&String>),
    ) -> Vec<String> {
        let mut row: Vec<String> = self.head.to_vec();
        row.push(status.to_string());
        let labels = match metric {
            Some((key, cells)) => {
                row.push(key.name.clone());
                row.extend(cells);
                let labels = self.run.labels_of(key);
                self.labels
                    .iter()
                    .map(|l| labels.value(l).unwrap_or_default().to_string())
                    .collect()
            }
            None => {
                row.extend(vec![String::new(); 4]);
                vec![String::new(); self.labels.len()]
            }
        };
        let [uuid, name, campaign_host] = &self.campaign.ident;
        row.extend([uuid, name, host.unwrap_or(campaign_host)].map(String::clone));
        row.extend(self.timing.iter().cloned());
        row.extend(self.campaign.tags.iter().cloned());
        row.extend(labels);
        row.extend_from_slice(rank);
        row.extend(self.params.iter().cloned());
        row
    }
}

/// The run's value of each parameter column; empty where it has none.
fn param_cells(params: Option<&Value>, keys: &BTreeSet<String>) -> Vec<String> {
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
fn metric_rows<W: std::io::Write>(
    out: &mut Rows<W>,
    run: &RunCells<'_>,
    status: &str,
    metrics: &Metrics,
    rank: (&[String], Option<&String>),
) -> std::io::Result<()> {
    if metrics.is_empty() {
        out.push(run.row(status, None, rank))?;
    }
    for (key, m) in metrics {
        let cells = [
            format!("{}", m.value),
            m.unit.to_string(),
            m.direction.as_str().into(),
        ];
        out.push(run.row(status, Some((key, cells)), rank))?;
    }
    Ok(())
}

/// Rows written through the `csv` crate's writer into `W`.
struct Rows<W: std::io::Write> {
    writer: csv::Writer<W>,
    options: CsvOptions,
}

impl<W: std::io::Write> Rows<W> {
    fn new(options: CsvOptions, w: W) -> Rows<W> {
        Rows {
            writer: csv::Writer::from_writer(w),
            options,
        }
    }

    fn push(&mut self, cells: Vec<String>) -> std::io::Result<()> {
        // Foreign text (an imported name, a tag, an error) keeps no
        // character that drives a terminal `cat` shows it on.
        let cells = cells.into_iter().map(|c| {
            let c = crate::foreign::visible_lines(&c).into_owned();
            match self.options.excel_safe {
                true => excel_safe(c),
                false => c,
            }
        });
        self.writer
            .write_record(cells)
            .map_err(std::io::Error::other)
    }

    fn finish(self) -> std::io::Result<W> {
        self.writer.into_inner().map_err(|e| e.into_error())
    }
}

/// A text cell a spreadsheet would take for a formula, with a `'` in
/// front (OWASP's list of first characters); a number, even `-1.5` or
/// `+3e9`, as it is.
pub fn excel_safe(cell: String) -> String {
    let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if formula && cell.parse::<f64>().is_err() {
        format!("'{cell}")
    } else {
        cell
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_text_that_looks_like_a_formula_is_defused_never_a_number() {
        let safe = |s: &str| excel_safe(s.to_string());
        assert_eq!(safe("plain"), "plain");
        assert_eq!(safe("=cmd()"), "'=cmd()");
        assert_eq!(safe("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(safe("-x"), "'-x");
        assert_eq!(safe("+1+1"), "'+1+1");
        assert_eq!(safe("\t=1"), "'\t=1");
        for number in ["-1.5", "+3", "-2e-9", "1e300", "0"] {
            assert_eq!(safe(number), number);
        }
    }

    #[test]
    fn cells_are_quoted_as_rfc_4180_says_and_otherwise_left_as_they_are() {
        for excel_safe in [false, true] {
            let mut rows = Rows::new(CsvOptions { excel_safe }, Vec::new());
            rows.push(vec!["a,b".into(), "say \"hi\"".into(), "x\ny".into()])
                .unwrap();
            rows.push(vec!["-1.5".into(), "".into(), "ü".into()])
                .unwrap();
            assert_eq!(
                String::from_utf8(rows.finish().unwrap()).unwrap(),
                "\"a,b\",\"say \"\"hi\"\"\",\"x\ny\"\n-1.5,,ü\n"
            );
        }
        let mut rows = Rows::new(CsvOptions::default(), Vec::new());
        rows.push(vec!["=cmd()".into(), "-x".into()]).unwrap();
        assert_eq!(
            String::from_utf8(rows.finish().unwrap()).unwrap(),
            "=cmd(),-x\n"
        );
    }

    #[test]
    fn labels_named_like_columns_are_set_apart() {
        assert_eq!(label_column("test"), "test");
        assert_eq!(label_column("run"), "label.run");
        assert_eq!(label_column("host"), "label.host");
        assert_eq!(label_column("duration_s"), "label.duration_s");
        assert_eq!(label_column("rank"), "label.rank");
        assert_eq!(param_text(&serde_json::json!(["a", 1])), "[\"a\",1]");
        assert_eq!(param_text(&serde_json::json!(4096)), "4096");
        assert_eq!(param_text(&serde_json::json!("4k")), "4k");
    }
}
