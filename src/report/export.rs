//! Exports for pandas, R and spreadsheets. CSV is tidy: one row per run and
//! metric, values in stored base units. JSON holds the campaign, the
//! environment, targets with facts and every run, under a schema version.

use serde_json::json;

use crate::store::CampaignData;

pub const JSON_SCHEMA_VERSION: u32 = 1;

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

/// Tidy CSV of every run and metric; failed runs appear with an empty metric.
/// A campaign with multi-client runs has two more columns, `rank` and
/// `host`: empty on a run's aggregate rows, set on each rank's own rows.
pub fn to_csv(c: &CampaignData) -> String {
    let ranks = crate::report::ranks::has_ranks(c);
    let mut out = CSV_HEADER.join(",");
    if ranks {
        out.push_str(",rank,host");
    }
    out.push('\n');
    for r in &c.runs {
        let base = [
            c.campaign.id.to_string(),
            r.id.to_string(),
            r.target.clone(),
            r.workload.clone(),
            r.repetition.to_string(),
            r.round.to_string(),
            r.warmup.to_string(),
            r.status.clone(),
        ];
        let extra = if ranks {
            vec![String::new(); 2]
        } else {
            Vec::new()
        };
        metric_rows(&mut out, &base, &r.metrics, &extra);
        for k in &r.per_rank {
            let mut base = base.clone();
            base[7].clone_from(&k.status);
            metric_rows(
                &mut out,
                &base,
                &k.metrics,
                &[k.rank.to_string(), k.host.clone()],
            );
        }
    }
    out
}

/// A row per metric (one with empty metric cells when there is none).
fn metric_rows(
    out: &mut String,
    base: &[String],
    metrics: &std::collections::BTreeMap<String, crate::store::MetricValue>,
    extra: &[String],
) {
    if metrics.is_empty() {
        let mut row: Vec<String> = base.to_vec();
        row.extend(["".into(), "".into(), "".into(), "".into()]);
        row.extend_from_slice(extra);
        push_row(out, &row);
    }
    for (name, m) in metrics {
        let mut row: Vec<String> = base.to_vec();
        row.extend([
            name.clone(),
            format!("{}", m.value),
            m.unit.clone(),
            m.direction.as_str().into(),
        ]);
        row.extend_from_slice(extra);
        push_row(out, &row);
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

/// The whole campaign as JSON.
pub fn to_json(c: &CampaignData) -> serde_json::Value {
    json!({
        "schema_version": JSON_SCHEMA_VERSION,
        "campaign": c.campaign,
        "environment": c.environment,
        "experiment": c.experiment,
        "targets": c.targets,
        "workloads": c.workloads,
        "runs": c.runs,
        "stops": c.stops,
    })
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
}
