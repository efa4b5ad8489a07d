//! Bar chart: one vertical bar per target with a confidence-interval
//! whisker, for the primary metric of a workload. Target names are wrapped
//! under their bar; each bar carries its value on top.

use anyhow::Result;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{
    anchored, draw_title, draw_value_axis, draw_whisker_paths, finite_ci, finite_extent, no_data,
    plottable, render, wrap_distinct, zero_based_range, Area, HEIGHT, INK, LABEL_SIZE, LINE_HEIGHT,
    MUTED, SMALL_SIZE, VALUE_SIZE, WIDTH,
};
use super::format::{si, TickFormat};
use super::Rgb;

/// One target's value.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// Confidence interval of `value`, drawn as a whisker.
    pub ci: Option<(f64, f64)>,
    pub color: Rgb,
    /// Each run's value, drawn as a dot over the bar when there are few
    /// ([`DOTS_MAX`]): with three runs a mean and an interval hide how
    /// they scatter.
    pub runs: Vec<f64>,
}

/// Most runs drawn one dot each.
pub const DOTS_MAX: usize = 12;

/// A bar chart; `y_label` includes the unit, e.g. "throughput (MB/s)".
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub bars: Vec<Bar>,
}

const Y_TICKS: usize = 8;
const MAX_LABEL_LINES: usize = 3;
/// Widest a bar gets, in pixels, so one or two bars do not fill the chart.
const MAX_BAR_PX: f64 = 90.0;
const MARGIN_LEFT: u32 = 10;
const MARGIN_RIGHT: u32 = 20;

/// Renders `c` as SVG; "no data" when no bar has a finite value.
pub fn bar_chart(c: &BarChart) -> Result<String> {
    if !c.bars.iter().any(|b| plottable(b.value)) {
        return no_data(&c.title);
    }
    render(&c.title, (WIDTH, HEIGHT), |root| draw(root, c))
}

fn draw(root: &Area<'_>, c: &BarChart) -> Result<()> {
    let area = draw_title(root, &c.title)?;
    let (lo, hi) = value_range(&c.bars);
    let ticks = TickFormat::for_range(lo, hi, Y_TICKS);
    let y_area = y_label_area(&ticks, lo, hi);
    let n = c.bars.len();
    let slot_px = (WIDTH - MARGIN_LEFT - MARGIN_RIGHT - y_area) as f64 / n as f64;
    let texts: Vec<String> = c.bars.iter().map(|b| b.label.clone()).collect();
    let labels = wrap_distinct(&texts, LABEL_SIZE, (slot_px - 8.0) as u32, MAX_LABEL_LINES);
    let lines = labels.iter().map(Vec::len).max().unwrap_or(1) as u32;

    let mut chart = ChartBuilder::on(&area)
        .margin_left(MARGIN_LEFT)
        .margin_right(MARGIN_RIGHT)
        .margin_top(10)
        .margin_bottom(6)
        .x_label_area_size(lines * LINE_HEIGHT as u32 + 12)
        .y_label_area_size(y_area)
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), lo..hi)?;
    draw_value_axis(&mut chart, Y_TICKS, &|v| ticks.format(*v), &c.y_label)?;

    let half = (0.36f64).min(MAX_BAR_PX / 2.0 / slot_px);
    for (i, bar) in c.bars.iter().enumerate() {
        draw_bar(&chart, i as f64, half, bar)?;
    }
    for (i, lines) in labels.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64, lo));
        draw_category_label(root, lines, (x, y + 6))?;
    }
    Ok(())
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The y range: 0, every finite value and whisker, with headroom for labels.
fn value_range(bars: &[Bar]) -> (f64, f64) {
    let values = bars.iter().filter(|b| plottable(b.value)).flat_map(|b| {
        let (lo, hi) = finite_ci(b.ci).unwrap_or((b.value, b.value));
        [b.value, lo, hi].into_iter().chain(dots(b))
    });
    zero_based_range(finite_extent(values).unwrap_or((0.0, 1.0)), 0.1)
}

/// Room for the y tick labels plus the rotated axis title.
fn y_label_area(ticks: &TickFormat, lo: f64, hi: f64) -> u32 {
    let widest = [lo, hi, (lo + hi) / 2.0]
        .iter()
        .map(|&v| super::canvas::text_width(&ticks.format(v), LABEL_SIZE))
        .max()
        .unwrap_or(0);
    widest + 36
}

/// The bar (if its value is finite), its whisker and its value label.
fn draw_bar(chart: &Chart<'_, '_>, x: f64, half: f64, bar: &Bar) -> Result<()> {
    let area = chart.plotting_area();
    if !plottable(bar.value) {
        let style = anchored(SMALL_SIZE, HPos::Center, VPos::Bottom).color(&MUTED);
        area.draw(&(EmptyElement::at((x, 0.0)) + Text::new("n/a", (0, -4), style)))?;
        return Ok(());
    }
    let fill = RGBColor::from(bar.color).filled();
    area.draw(&Rectangle::new(
        [(x - half, 0.0), (x + half, bar.value)],
        fill,
    ))?;
    let ci = finite_ci(bar.ci);
    if let Some((lo, hi)) = ci {
        draw_whisker(chart, x, half * 0.35, lo, hi)?;
    }
    // The runs, beside the whisker: white dots ringed in ink.
    for v in dots(bar) {
        let at = (x + half * 0.55, v);
        area.draw(&Circle::new(at, 4, WHITE.filled()))?;
        area.draw(&Circle::new(at, 4, INK.stroke_width(1)))?;
    }
    let (lo, hi) = ci.unwrap_or((bar.value, bar.value));
    let (tip, dy, v) = if bar.value >= 0.0 {
        (hi.max(bar.value), -4, VPos::Bottom)
    } else {
        (lo.min(bar.value), 4, VPos::Top)
    };
    let style = anchored(VALUE_SIZE, HPos::Center, v);
    area.draw(&(EmptyElement::at((x, tip)) + Text::new(si(bar.value), (0, dy), style)))?;
    Ok(())
}

/// The runs drawn as dots: finite ones, when there are few.
fn dots(bar: &Bar) -> Vec<f64> {
    let finite: Vec<f64> = bar.runs.iter().copied().filter(|v| plottable(*v)).collect();
    match finite.len() <= DOTS_MAX {
        true => finite,
        false => Vec::new(),
    }
}

/// A vertical confidence-interval whisker with caps.
fn draw_whisker(chart: &Chart<'_, '_>, x: f64, cap: f64, lo: f64, hi: f64) -> Result<()> {
    let paths = [
        vec![(x, lo), (x, hi)],
        vec![(x - cap, lo), (x + cap, lo)],
        vec![(x - cap, hi), (x + cap, hi)],
    ];
    draw_whisker_paths(chart.plotting_area(), &paths)
}

/// A (possibly wrapped) target name centred under its bar at pixel `top`.
fn draw_category_label(root: &Area<'_>, lines: &[String], top: (i32, i32)) -> Result<()> {
    let style = anchored(LABEL_SIZE, HPos::Center, VPos::Top);
    for (k, line) in lines.iter().enumerate() {
        root.draw_text(line, &style, (top.0, top.1 + k as i32 * LINE_HEIGHT))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::canvas::test_util::*;
    use super::super::target_color;
    use super::*;

    fn bar(label: &str, value: f64, ci: Option<(f64, f64)>, index: usize) -> Bar {
        Bar {
            label: label.to_string(),
            value,
            ci,
            color: target_color(index),
            runs: Vec::new(),
        }
    }

    fn chart(bars: Vec<Bar>) -> BarChart {
        BarChart {
            title: "seq-read: throughput".to_string(),
            y_label: "throughput (MB/s)".to_string(),
            bars,
        }
    }

    #[test]
    fn few_runs_are_drawn_as_dots_many_are_not() {
        let mut few = bar("ext4", 10.0, Some((8.0, 12.0)), 0);
        few.runs = vec![9.0, 10.0, 11.0];
        let mut many = bar("xfs", 10.0, Some((9.0, 11.0)), 1);
        many.runs = vec![10.0; DOTS_MAX + 1];
        let svg = bar_chart(&chart(vec![few, many])).unwrap();
        let ink = super::super::Rgb(0x22, 0x22, 0x22);
        assert_eq!(count_stroked(&svg, "circle", &ink), 3, "{svg}");
    }

    #[test]
    fn one_rect_per_bar_with_whiskers_and_labels() {
        let c = chart(vec![
            bar("ext4", 1520.0, Some((1480.0, 1560.0)), 0),
            bar("xfs", 1610.0, Some((1590.0, 1630.0)), 1),
            bar("btrfs-zstd", 1204.0, None, 2),
        ]);
        let svg = bar_chart(&c).unwrap();
        assert_inline_svg(&svg);
        for (i, b) in c.bars.iter().enumerate() {
            assert_eq!(
                count_filled(&svg, "rect", &target_color(i)),
                1,
                "{}",
                b.label
            );
            assert!(
                svg.contains(&format!(">\n{}\n</text>", b.label)),
                "{}",
                b.label
            );
        }
        assert!(svg.contains("seq-read: throughput"));
        assert!(svg.contains("throughput (MB/s)"));
        assert!(svg.contains("1.52k"), "value label on the bar");
        // Two whiskers, three strokes each (stem and two caps).
        assert_eq!(count(&svg, "stroke=\"#222222\" stroke-width=\"2\""), 6);
        assert!(svg.contains("width=\"720\" height=\"400\""));
    }

    #[test]
    fn tick_labels_are_human_readable() {
        let svg = bar_chart(&chart(vec![bar("a", 2.5e6, None, 0)])).unwrap();
        assert!(svg.contains(">\n2M\n</text>") || svg.contains(">\n2.5M\n</text>"));
        assert!(!svg.contains("2500000"));
    }

    #[test]
    fn long_labels_wrap_instead_of_overlapping() {
        let bars = (0..8)
            .map(|i| {
                bar(
                    &format!("ext4-nvme{i}-noatime-journal-ordered"),
                    100.0,
                    None,
                    i,
                )
            })
            .collect();
        let svg = bar_chart(&chart(bars)).unwrap();
        assert!(svg.contains(">\next4-\n</text>"), "{svg}");
        assert!(svg.contains(">\nnvme0-\n</text>"), "{svg}");
        let third = svg.lines().find(|l| l.starts_with("noatime-")).unwrap();
        assert!(third.ends_with('…'), "{third}");
    }

    #[test]
    fn labels_are_escaped() {
        let mut c = chart(vec![bar("<script>alert(1)</script>", 1.0, None, 0)]);
        c.title = "<script>alert(2)</script>".to_string();
        c.y_label = "a & b <i>".to_string();
        let svg = bar_chart(&c).unwrap();
        assert!(!svg.contains("<script"));
        assert!(!svg.contains("<i>"));
        assert!(svg.contains("&lt;script&gt;alert(2)&lt;/script&gt;"));
        assert!(svg.contains("a &amp; b &lt;i&gt;"));
    }

    #[test]
    fn empty_or_non_finite_input_says_no_data() {
        let svg = bar_chart(&chart(vec![])).unwrap();
        assert_inline_svg(&svg);
        assert!(svg.contains("no data"));
        let svg = bar_chart(&chart(vec![bar("a", f64::NAN, None, 0)])).unwrap();
        assert!(svg.contains("no data"));
    }

    #[test]
    fn non_finite_values_are_skipped() {
        let c = chart(vec![
            bar("ok", 10.0, Some((f64::NEG_INFINITY, 12.0)), 0),
            bar("b", f64::NAN, Some((1.0, 2.0)), 1),
            bar("c", f64::INFINITY, None, 2),
            bar("neg", -5.0, Some((-6.0, -4.0)), 3),
        ]);
        let svg = bar_chart(&c).unwrap();
        assert_eq!(count_filled(&svg, "rect", &target_color(0)), 1);
        assert_eq!(count_filled(&svg, "rect", &target_color(1)), 0);
        assert_eq!(count_filled(&svg, "rect", &target_color(2)), 0);
        assert_eq!(count_filled(&svg, "rect", &target_color(3)), 1);
        assert_eq!(count(&svg, ">\nn/a\n</text>"), 2);
        assert!(!svg.contains("NaN") && !svg.contains("inf\n"));
    }
}
