//! A workload's own section: the primary metric's bar chart and %
//! difference chart, then every summary metric as a table of means with
//! intervals, a table of differences from the baseline, and what the runs
//! were measured with (their facts: the PostgreSQL server's version…).

use super::color_of;
use crate::analysis::about::About;
use crate::analysis::laid_out::{Thinned, MAX_VARIANTS};
use crate::analysis::model::{MetricReport, Report, WorkloadReport};
use crate::analysis::CampaignAnalysis;
use crate::report::document::{Chart, Section};
use crate::report::svg::{Bar, BarChart, DiffBar, DiffChart};
use crate::report::table::Table;
use crate::report::text::{diff_text, display_unit, mean_ci_text, p_text};
use crate::report::verdict::{words, Form};

/// `randread (io)`; `pgbench[transactions=12]` for a workload named as
/// its kind.
pub fn titled(name: &str, kind: &str) -> String {
    match crate::experiment::sweep::family_of(name) == kind {
        true => name.to_string(),
        false => format!("{name} ({kind})"),
    }
}

/// The section of `w`; `values` replaces the table of means when a
/// workload kind lays its summary metrics out its own way.
pub fn section(a: &CampaignAnalysis, w: &WorkloadReport, values: Option<Table>) -> Section {
    let (c, r) = (&a.about, &a.model);
    let mut s = Section::new(2, titled(&w.name, &w.kind));
    if let Some(m) = w.primary_metric() {
        s.chart(bar_chart(c, w, m));
        if let Some(diffs) = diff_chart(c, r, w, m) {
            s.chart(diffs);
        }
    }
    s.text(format!(
        "Mean ± 95% CI over measured runs; primary metric {}.",
        w.primary
    ));
    s.table(values.unwrap_or_else(|| values_table(w, &r.baseline)));
    let diffs = diff_table(a, w);
    if !diffs.rows.is_empty() {
        s.text(format!("Difference from the baseline {}:", r.baseline));
        s.table(diffs);
    }
    let facts = facts_table(a, &w.name);
    if !facts.rows.is_empty() {
        s.text("Measured with:");
        s.table(facts);
    }
    s
}

/// Which variants of workload table `t` the sections that follow are,
/// and where the others' figures are ([`crate::analysis::laid_out`]).
pub fn thinned(a: &CampaignAnalysis, t: &Thinned) -> Section {
    let (family, n) = (&t.family, t.variants);
    let mut s = Section::new(
        2,
        format!("{family}: {} of its {n} variants laid out", t.shown),
    );
    let which = match a.laid_out.asked.is_empty() {
        true => format!(
            "{} of the {n} variants of {family}, evenly spaced along the sweep from {} to {}: a report lays out at most {MAX_VARIANTS} of a table",
            t.shown, t.first, t.last
        ),
        false => format!(
            "{} of the {n} variants of {family}, those asked for (--workload)",
            t.shown
        ),
    };
    let study = match a.study(family) {
        Some(_) => format!("The study of {family} above gives every variant's primary metric. "),
        None => String::new(),
    };
    s.text(format!(
        "The sections that follow are those of {which}. {study}`storlab report --workload NAME` lays out the sections of the variant NAME (repeatable), and `--workload {family}` those of all {n}; `storlab export` writes every run's figures."
    ));
    s
}

/// Each target's mean of the primary metric with its interval.
fn bar_chart(c: &About, w: &WorkloadReport, m: &MetricReport) -> Chart {
    let max = m
        .targets
        .iter()
        .filter_map(|t| t.summary.map(|s| s.mean))
        .fold(0.0, f64::max);
    let (scale, unit) = display_unit(m.unit, max);
    let bars = m
        .targets
        .iter()
        .filter_map(|t| {
            let s = t.summary?;
            Some(Bar {
                label: t.target.clone(),
                value: s.mean / scale,
                ci: t.ci.map(|ci| (ci.low / scale, ci.high / scale)),
                color: color_of(c, &t.target),
                runs: t.values.iter().map(|v| v / scale).collect(),
            })
        })
        .collect();
    let clipped = m.targets.iter().any(|t| t.ci_clipped);
    let name = crate::metric::human_name(&m.name);
    let title = format!(
        "{}: {name} (mean, 95% CI{})",
        w.name,
        if clipped { ", clipped at 0" } else { "" }
    );
    Chart::Bar(BarChart {
        title,
        y_label: format!("{name} ({unit})"),
        bars,
    })
}

/// Each other target's % difference from the baseline with its interval;
/// `None` when nothing was compared.
fn diff_chart(c: &About, r: &Report, w: &WorkloadReport, m: &MetricReport) -> Option<Chart> {
    let bars: Vec<DiffBar> = m
        .targets
        .iter()
        .filter_map(|t| {
            let cmp = t.comparison.as_ref()?;
            // An infinite bound is passed on: the chart draws it open.
            Some(DiffBar {
                label: t.target.clone(),
                diff_pct: cmp.diff_pct,
                ci: Some((cmp.diff_pct_ci.low, cmp.diff_pct_ci.high)),
                color: color_of(c, &t.target),
            })
        })
        .collect();
    (!bars.is_empty()).then(|| {
        Chart::Diff(DiffChart {
            title: format!(
                "{}: {} against {} (% difference, CI as judged)",
                w.name, m.name, r.baseline
            ),
            x_label: format!("difference from {} (%)", r.baseline),
            bars,
        })
    })
}

/// Targets as rows, metrics as columns, mean ± CI.
fn values_table(w: &WorkloadReport, baseline: &str) -> Table {
    let mut header = vec!["target".to_string(), "n".to_string()];
    header.extend(w.metrics.iter().map(|m| format!("{} ({})", m.name, m.unit)));
    let mut right = vec![false, true];
    right.extend(w.metrics.iter().map(|_| true));
    let mut t = Table {
        header,
        rows: Vec::new(),
        right,
        ..Table::default()
    };
    let Some(primary) = w.primary_metric() else {
        return t;
    };
    for (i, ts) in primary.targets.iter().enumerate() {
        let name = if ts.target == baseline {
            format!("{} (baseline)", ts.target)
        } else {
            ts.target.clone()
        };
        let mut row = vec![name, ts.values.len().to_string()];
        row.extend(w.metrics.iter().map(|m| {
            m.targets
                .get(i)
                .map(|x| mean_ci_text(x, m.unit))
                .unwrap_or_default()
        }));
        t.rows.push(row);
    }
    t
}

/// Per non-baseline target and metric: % difference with CI, p and verdict.
fn diff_table(a: &CampaignAnalysis, w: &WorkloadReport) -> Table {
    let mut t = Table::new(
        &[
            "target",
            "metric",
            "difference [CI as judged]",
            "p",
            "verdict",
        ],
        &[false, false, true, true, false],
    );
    for m in &w.metrics {
        for ts in m.targets.iter().filter(|x| x.comparison.is_some()) {
            let verdict = a
                .verdict(&w.name, &m.name, &ts.target)
                .map_or("—".into(), |v| words(v, Form::Detail));
            t.push(vec![
                ts.target.clone(),
                m.name.clone(),
                diff_text(ts),
                p_text(ts),
                verdict,
            ]);
        }
    }
    t
}

/// What a workload's runs were measured with (the PostgreSQL server's
/// version and settings): one row per fact, its value when every run
/// agrees, else each target's (`ext4: 15.18; zfs: 16.4`).
fn facts_table(a: &CampaignAnalysis, workload: &str) -> Table {
    let mut t = Table::new(&["fact", "value"], &[false, false]);
    for f in a.measured_with_of(workload) {
        let (name, per_target) = (&f.name, &f.per_target);
        let first = &per_target[0].1;
        let value = if per_target.iter().all(|(_, vs)| vs == first) {
            first.join(" / ")
        } else {
            let each: Vec<String> = per_target
                .iter()
                .map(|(t, vs)| format!("{t}: {}", vs.join(" / ")))
                .collect();
            each.join("; ")
        };
        t.push(vec![name.to_string(), value]);
    }
    t
}
