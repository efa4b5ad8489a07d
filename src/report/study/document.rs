//! A study as a list of blocks — headings, notes, tables, charts — that
//! the Markdown and HTML reports lay out alike (Markdown leaves the charts
//! out: every charted number is in a table too).

use super::charts::{curve, heatmaps};
use super::tables::{caption, differences, level_caption, levels, means, SIGNIFICANCE};
use super::{Pivot, Study};
use crate::report::svg::{CurveChart, HeatMap};
use crate::report::table::Table;

pub enum Block {
    Heading(String),
    Note(String),
    Table(Table),
    Curve(CurveChart),
    HeatMaps(Vec<HeatMap>),
}

/// The study's blocks: the primary metric's curve, means and differences
/// from the baseline, the heat maps of two workload factors, the level
/// comparisons asked for, then each headline metric's means and
/// differences.
pub fn blocks(s: &Study) -> Vec<Block> {
    let mut out = vec![Block::Heading(format!(
        "{} ({}) by {}",
        s.family,
        s.kind,
        s.factors.join(", ")
    ))];
    out.extend(pivot_blocks(s, &s.primary, true));
    let maps = heatmaps(s);
    if !maps.is_empty() {
        out.push(Block::HeatMaps(maps));
    }
    for l in &s.levels {
        out.push(Block::Note(level_caption(s, l)));
        out.push(Block::Table(levels(l, true)));
        out.push(Block::Note(SIGNIFICANCE.into()));
    }
    for h in &s.headlines {
        out.extend(pivot_blocks(s, h, false));
    }
    out
}

fn pivot_blocks(s: &Study, p: &Pivot, chart: bool) -> Vec<Block> {
    let mut out = Vec::new();
    if let Some(c) = curve(s, p).filter(|_| chart) {
        out.push(Block::Curve(c));
    }
    out.push(Block::Note(caption(s, p, "mean ± 95% CI")));
    out.push(Block::Table(means(p)));
    let diffs = differences(p, &s.baseline, true);
    if p.rows.len() > 1 {
        let what = format!("% difference from {}, 95% CI", s.baseline);
        out.push(Block::Note(format!(
            "{}; {SIGNIFICANCE}",
            caption(s, p, &what)
        )));
        out.push(Block::Table(diffs));
    }
    out
}
