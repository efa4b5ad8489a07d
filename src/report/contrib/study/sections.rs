//! A study as sections of the report's document: for the report, the
//! primary metric's curve, its means and differences from the baseline,
//! the heat maps of two workload factors, the level comparisons asked for,
//! then each headline metric's means and differences; for the summary
//! `storlab show` prints, the primary metric's tables and the level
//! comparisons. The renderers lay them out like every other section.

use super::charts::{curve, heatmaps};
use super::tables::{caption, differences, level_caption, levels, means, SIGNIFICANCE};
use crate::analysis::study::{Pivot, Study};
use crate::report::document::{Chart, Section};

/// The study's section of the report, a part of its own after the
/// overview: the figure first.
pub fn report(s: &Study) -> Section {
    let title = match s.family == s.kind {
        true => format!("{} by {}", s.family, s.factors.join(", ")),
        false => format!("{} ({}) by {}", s.family, s.kind, s.factors.join(", ")),
    };
    let mut out = Section::new(2, title).with_class("study");
    pivot(&mut out, s, &s.primary, true);
    if let Some(g) = heatmaps(s) {
        out.chart(Chart::Heats(g));
    }
    for l in &s.levels {
        out.text(level_caption(s, l))
            .table(levels(l, true))
            .text(SIGNIFICANCE);
    }
    for h in &s.headlines {
        pivot(&mut out, s, h, false);
    }
    out
}

fn pivot(out: &mut Section, s: &Study, p: &Pivot, chart: bool) {
    if let Some(c) = curve(s, p).filter(|_| chart) {
        out.chart(Chart::Curve(c));
    }
    out.text(caption(s, p, "mean ± 95% CI")).table(means(p));
    if p.rows.len() > 1 {
        let what = format!("% difference from {}, CI as judged", s.baseline);
        out.text(format!("{}; {SIGNIFICANCE}", caption(s, p, &what)))
            .table(differences(p, &s.baseline, true));
    }
}

/// The study's sections of the summary: the primary metric's means and
/// differences from the baseline, and the level comparisons asked for.
pub fn summary(s: &Study) -> Vec<Section> {
    let p = &s.primary;
    let mut means_part = Section::untitled(3);
    means_part
        .text(caption(s, p, "mean ± 95% CI"))
        .table(means(p));
    let mut out = vec![means_part];
    if p.rows.len() > 1 {
        let mut part = Section::untitled(3);
        part.text(caption(s, p, &format!("% difference from {}", s.baseline)))
            .table(differences(p, &s.baseline, false))
            .text(SIGNIFICANCE);
        out.push(part);
    }
    for l in &s.levels {
        let mut part = Section::untitled(3);
        part.text(level_caption(s, l)).table(levels(l, false));
        out.push(part);
    }
    out
}
