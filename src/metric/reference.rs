//! The catalogue as a reference for people: `docs/metrics.md`, one table of
//! every metric (name, unit, direction, merge rule, headline, meaning), one
//! of the histograms and one of the label keys. A test keeps the file equal
//! to what this renders.

use super::catalogue::HISTOGRAMS;
use super::labels::LABELS;
use super::{Direction, Merge, MetricDef, ALL};

/// The whole reference, in Markdown.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Metrics\n\n\
         Every metric storlab records, as its catalogue (`src/metric/catalogue.rs`) \
         declares it. Values are stored in the unit's base form; a value's labels \
         say which part of the run it measured (the matrix cell, the smallfiles \
         operation, …); a value without labels is the run's overall figure. \
         *Merge* says how the values of parts that ran at once (threads, MPI \
         ranks) make the whole; across repeated runs every metric is summarised \
         by its mean and 95% interval. Headline metrics are shown in reports \
         beside each workload's primary metric.\n\n\
         This file is generated: `STORLAB_BLESS=1 cargo test --lib metric::reference` \
         rewrites it.\n\n",
    );
    out.push_str("| metric | unit | better | merge | headline | meaning |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    for d in ALL {
        out.push_str(&row(d));
    }
    out.push_str("\n## Latency histograms\n\n");
    out.push_str("HDR histograms in nanoseconds (three significant digits), merged exactly over threads, ranks and runs. Where a run stores a histogram, the metrics derived from it are recomputed from the merged histogram rather than merged by their own rule.\n\n");
    out.push_str("| histogram | metrics | meaning |\n|---|---|---|\n");
    for h in HISTOGRAMS {
        let names: Vec<String> = h.metrics().map(|m| format!("`{}`", m.name)).collect();
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            h.name,
            names.join(", "),
            h.help
        ));
    }
    out.push_str("\n## Labels\n\n| label | meaning |\n|---|---|\n");
    for l in LABELS {
        out.push_str(&format!("| `{}` | {} |\n", l.key, l.help));
    }
    out
}

fn row(d: &MetricDef) -> String {
    let unit = match d.unit.as_str() {
        "" => "flag (1 or 0)".to_string(),
        u => format!("`{u}`"),
    };
    let better = match d.direction {
        Direction::HigherIsBetter => "higher",
        Direction::LowerIsBetter => "lower",
    };
    let headline = if d.headline { "yes" } else { "" };
    format!(
        "| `{}` | {unit} | {better} | {} | {headline} | {} |\n",
        d.name,
        merge_text(d.merge),
        d.help
    )
}

fn merge_text(m: Merge) -> String {
    match m {
        Merge::Sum => "sum".into(),
        Merge::Max => "largest".into(),
        Merge::Mean => "mean".into(),
        Merge::Rate => "aggregate rate".into(),
        Merge::SumOfRates => "sum of rates".into(),
        Merge::WeightedBy(w) => format!("mean weighted by `{}`", w.name),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn docs_metrics_md_is_the_catalogue() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md");
        let now = super::markdown();
        if std::env::var_os("STORLAB_BLESS").is_some() {
            std::fs::write(&path, &now).unwrap();
        }
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            written == now,
            "docs/metrics.md is not the catalogue; STORLAB_BLESS=1 cargo test --lib metric::reference rewrites it"
        );
    }
}
