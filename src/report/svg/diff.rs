//! Difference chart: one horizontal bar per target showing its % difference
//! against the baseline, drawn from a zero line, with a confidence-interval
//! whisker and the signed value at the bar's end. Names sit on the left.
//!
//! An interval with an infinite bound (Fieller's, when the baseline's mean
//! is not told apart from zero) is drawn open: its whisker runs to the
//! chart's edge with an arrowhead and no cap, the value is labelled
//! "unbounded", its bar is an outline with a dot at the estimate (never a
//! solid bar, which would look certain), and the axis is scaled to the finite numbers only, so one
//! unbounded estimate does not squash the others.

use anyhow::Result;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{
    anchored, draw_mesh, draw_title, draw_whisker_paths, finite_ci, finite_extent, fit_distinct,
    no_data, plottable, render, text_width, zero_based_range, Area, HEIGHT, INK, LABEL_SIZE, MUTED,
    SMALL_SIZE, VALUE_SIZE, WIDTH,
};
use super::format::{percent, TickFormat};
use super::Rgb;

/// One target's difference from the baseline, in percent.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffBar {
    pub label: String,
    pub diff_pct: f64,
    /// Confidence interval of `diff_pct`, drawn as a whisker; an infinite
    /// bound is unbounded and drawn open (a NaN bound draws no whisker).
    pub ci: Option<(f64, f64)>,
    pub color: Rgb,
}

/// A difference chart; `x_label` names the axis, e.g. "vs ext4 (%)".
#[derive(Debug, Clone, PartialEq)]
pub struct DiffChart {
    pub title: String,
    pub x_label: String,
    pub bars: Vec<DiffBar>,
}

const X_TICKS: usize = 9;
/// The axis spans at least this far either side of zero (per cent).
const MIN_HALF_SPAN_PCT: f64 = 1.0;
/// Pixels per bar row; the chart grows taller past `HEIGHT`.
const ROW_PX: u32 = 30;
/// Height taken by title, axis and margins.
const CHROME_PX: u32 = 110;
/// Thickest a bar gets, in pixels.
const MAX_BAR_PX: f64 = 26.0;
/// Widest the name column gets, as a share of the width.
const MAX_NAME_SHARE: f64 = 0.38;

/// Renders `c` as SVG; "no data" when no bar has a finite value.
pub fn diff_chart(c: &DiffChart) -> Result<String> {
    if !c.bars.iter().any(|b| plottable(b.diff_pct)) {
        return no_data(&c.title);
    }
    let height = HEIGHT.max(CHROME_PX + ROW_PX * c.bars.len() as u32);
    render(&c.title, (WIDTH, height), |root| draw(root, c))
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn draw(root: &Area<'_>, c: &DiffChart) -> Result<()> {
    let area = draw_title(root, &c.title)?;
    let (lo, hi) = value_range(&c.bars);
    let ticks = TickFormat::percent_range(lo, hi, X_TICKS);
    let name_px = (f64::from(WIDTH) * MAX_NAME_SHARE) as u32;
    let texts: Vec<String> = c.bars.iter().map(|b| b.label.clone()).collect();
    let names = fit_distinct(&texts, LABEL_SIZE, name_px);
    let names_w = names.iter().map(|n| text_width(n, LABEL_SIZE)).max();
    let n = c.bars.len();

    let mut chart = ChartBuilder::on(&area)
        .margin_left(10)
        .margin_right(24)
        .margin_top(10)
        .margin_bottom(6)
        .x_label_area_size(44)
        .y_label_area_size(names_w.unwrap_or(0) + 14)
        .build_cartesian_2d(lo..hi, -0.5..(n as f64 - 0.5))?;
    let format = |v: &f64| ticks.format(*v);
    draw_mesh(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(X_TICKS)
            .x_label_formatter(&format)
            .x_desc(c.x_label.as_str()),
    )?;

    let zero = INK.stroke_width(1);
    let top = n as f64 - 0.5;
    chart.draw_series([PathElement::new(vec![(0.0, -0.5), (0.0, top)], zero)])?;
    let (_, rows_px) = chart.plotting_area().dim_in_pixel();
    let half = (0.32f64).min(MAX_BAR_PX / 2.0 * n as f64 / f64::from(rows_px.max(1)));
    for (i, (bar, name)) in c.bars.iter().zip(&names).enumerate() {
        let y = (n - 1 - i) as f64;
        draw_bar(&chart, y, half, bar, (lo, hi))?;
        let (x, y) = chart.backend_coord(&(lo, y));
        let style = anchored(LABEL_SIZE, HPos::Right, VPos::Center);
        root.draw_text(name, &style, (x - 8, y))?;
    }
    Ok(())
}

/// The x range: 0, every finite difference and finite whisker end (an
/// unbounded end does not stretch it), and room on the outer sides for the
/// value labels.
fn value_range(bars: &[DiffBar]) -> (f64, f64) {
    let values = bars.iter().filter(|b| plottable(b.diff_pct)).flat_map(|b| {
        let (lo, hi) = b.ci.unwrap_or((b.diff_pct, b.diff_pct));
        [b.diff_pct, lo, hi]
    });
    let (lo, hi) = zero_based_range(finite_extent(values).unwrap_or((0.0, 1.0)), 0.2);
    // A little air on the zero side too, so the zero line is not the axis.
    let air = (hi - lo) * 0.04;
    let (lo, hi) = (
        if lo == 0.0 { -air } else { lo },
        if hi == 0.0 { air } else { hi },
    );
    // At least ±1%, the smallest difference ever called: a difference of
    // a few thousandths of a per cent must not fill the chart like an effect.
    (lo.min(-MIN_HALF_SPAN_PCT), hi.max(MIN_HALF_SPAN_PCT))
}

/// The bar from 0 (if the difference is finite), its whisker and its label;
/// `range` is the x axis, where an unbounded whisker ends.
fn draw_bar(
    chart: &Chart<'_, '_>,
    y: f64,
    half: f64,
    bar: &DiffBar,
    range: (f64, f64),
) -> Result<()> {
    let area = chart.plotting_area();
    let d = bar.diff_pct;
    if !plottable(d) {
        let style = anchored(SMALL_SIZE, HPos::Left, VPos::Center).color(&MUTED);
        area.draw(&(EmptyElement::at((0.0, y)) + Text::new("n/a", (6, 0), style)))?;
        return Ok(());
    }
    let color = RGBColor::from(bar.color);
    if let Some(open) = open_ci(bar.ci) {
        // No solid bar for an estimate the data cannot bound: its outline
        // and a dot at the estimate, so that it does not look certain.
        area.draw(&Rectangle::new(
            [(0.0, y - half), (d, y + half)],
            color.stroke_width(1),
        ))?;
        draw_open(chart, y, half, d, open, range)?;
        area.draw(&Circle::new((d, y), 5, color.filled()))?;
        return Ok(());
    }
    area.draw(&Rectangle::new(
        [(0.0, y - half), (d, y + half)],
        color.filled(),
    ))?;
    let ci = finite_ci(bar.ci);
    if let Some((lo, hi)) = ci {
        draw_whisker(chart, y, half * 0.5, lo, hi)?;
    }
    let (lo, hi) = ci.unwrap_or((d, d));
    let (tip, dx, h) = if d >= 0.0 {
        (hi.max(d), 6, HPos::Left)
    } else {
        (lo.min(d), -6, HPos::Right)
    };
    let style = anchored(VALUE_SIZE, h, VPos::Center);
    area.draw(&(EmptyElement::at((tip, y)) + Text::new(percent(d), (dx, 0), style)))?;
    Ok(())
}

/// An interval with at least one infinite bound (and no NaN), its ends as
/// `Some(finite)` or `None` for unbounded, ordered low to high.
type OpenCi = (Option<f64>, Option<f64>);

fn open_ci(ci: Option<(f64, f64)>) -> Option<OpenCi> {
    let (a, b) = ci?;
    let (lo, hi) = (a.min(b), a.max(b));
    if lo.is_nan() || hi.is_nan() || (plottable(lo) && plottable(hi)) {
        return None;
    }
    Some((plottable(lo).then_some(lo), plottable(hi).then_some(hi)))
}

/// An unbounded whisker: from its finite end (capped) to the axis edge on
/// each open side (an arrowhead, no cap), and the value labelled
/// "unbounded" just above the stem beside the bar's end.
fn draw_open(
    chart: &Chart<'_, '_>,
    y: f64,
    half: f64,
    d: f64,
    (low, high): OpenCi,
    (lo, hi): (f64, f64),
) -> Result<()> {
    let cap = half * 0.5;
    let (from, to) = (low.unwrap_or(lo), high.unwrap_or(hi));
    let mut paths = vec![vec![(from, y), (to, y)]];
    // An arrowhead 2% of the axis long at each open end.
    let head = (hi - lo) * 0.02;
    for (end, open, inward) in [(from, low.is_none(), head), (to, high.is_none(), -head)] {
        if open {
            paths.push(vec![
                (end + inward, y - cap),
                (end, y),
                (end + inward, y + cap),
            ]);
        } else {
            paths.push(vec![(end, y - cap), (end, y + cap)]);
        }
    }
    draw_whisker_paths(chart.plotting_area(), &paths)?;
    let text = format!("{} (unbounded)", percent(d));
    // Beside the bar's end, away from zero; a negative bar's label goes
    // right of zero instead when the names' column would be in its way.
    let width = text_width(&text, VALUE_SIZE) as i32 + 6;
    let room_left = chart.backend_coord(&(d, y)).0 - chart.backend_coord(&(lo, y)).0;
    let (x, dx, h) = if d < 0.0 && room_left < width {
        (0.0, 6, HPos::Left)
    } else if d < 0.0 {
        (d, -6, HPos::Right)
    } else {
        (d, 6, HPos::Left)
    };
    let style = anchored(VALUE_SIZE, h, VPos::Bottom);
    let label = EmptyElement::at((x, y)) + Text::new(text, (dx, -3), style);
    chart.plotting_area().draw(&label)?;
    Ok(())
}

/// A horizontal confidence-interval whisker with caps.
fn draw_whisker(chart: &Chart<'_, '_>, y: f64, cap: f64, lo: f64, hi: f64) -> Result<()> {
    let paths = [
        vec![(lo, y), (hi, y)],
        vec![(lo, y - cap), (lo, y + cap)],
        vec![(hi, y - cap), (hi, y + cap)],
    ];
    draw_whisker_paths(chart.plotting_area(), &paths)
}

#[cfg(test)]
mod tests {
    use super::super::canvas::test_util::*;
    use super::super::target_color;
    use super::*;

    fn diff(label: &str, diff_pct: f64, ci: Option<(f64, f64)>, index: usize) -> DiffBar {
        DiffBar {
            label: label.to_string(),
            diff_pct,
            ci,
            color: target_color(index),
        }
    }

    fn chart(bars: Vec<DiffBar>) -> DiffChart {
        DiffChart {
            title: "rand-write IOPS vs ext4".to_string(),
            x_label: "difference vs ext4 (%)".to_string(),
            bars,
        }
    }

    #[test]
    fn one_rect_per_bar_around_zero_with_whiskers() {
        let c = chart(vec![
            diff("xfs", 12.5, Some((8.0, 17.0)), 1),
            diff("btrfs", -23.0, Some((-30.0, -16.0)), 2),
            diff("zfs", 1.0, None, 3),
        ]);
        let svg = diff_chart(&c).unwrap();
        assert_inline_svg(&svg);
        for (i, b) in c.bars.iter().enumerate() {
            assert_eq!(count_filled(&svg, "rect", &target_color(i + 1)), 1);
            assert!(svg.contains(&format!(">\n{}\n</text>", b.label)));
        }
        assert!(svg.contains("rand-write IOPS vs ext4"));
        assert!(svg.contains("difference vs ext4 (%)"));
        assert!(svg.contains("+12.5%") && svg.contains("-23.0%"));
        assert_eq!(count(&svg, "stroke=\"#222222\" stroke-width=\"2\""), 6);
        // The zero line.
        assert_eq!(count(&svg, "stroke=\"#222222\" stroke-width=\"1\""), 1);
        assert!(svg.contains("width=\"720\" height=\"400\""));
    }

    #[test]
    fn many_bars_make_the_chart_taller() {
        let bars = (0..20)
            .map(|i| diff(&format!("t{i}"), i as f64, None, i))
            .collect();
        let svg = diff_chart(&chart(bars)).unwrap();
        assert!(svg.contains("height=\"710\""), "{}", &svg[..200]);
    }

    #[test]
    fn labels_are_escaped() {
        let mut c = chart(vec![diff("<script>alert(1)</script>", 3.0, None, 0)]);
        c.x_label = "<b>x</b>".to_string();
        let svg = diff_chart(&c).unwrap();
        assert!(!svg.contains("<script"));
        assert!(!svg.contains("<b>"));
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    }

    #[test]
    fn empty_and_non_finite_input() {
        let svg = diff_chart(&chart(vec![])).unwrap();
        assert_inline_svg(&svg);
        assert!(svg.contains("no data"));
        let c = chart(vec![
            diff("a", f64::NAN, None, 0),
            diff("b", 5.0, Some((f64::NAN, 6.0)), 1),
            diff("c", f64::NEG_INFINITY, Some((1.0, 2.0)), 2),
        ]);
        let svg = diff_chart(&c).unwrap();
        assert_eq!(count_filled(&svg, "rect", &target_color(1)), 1);
        assert_eq!(count(&svg, ">\nn/a\n</text>"), 2);
        assert_eq!(
            count(&svg, "stroke-width=\"2\""),
            0,
            "no whisker from a NaN bound"
        );
    }

    #[test]
    fn an_unbounded_interval_is_drawn_open_and_does_not_stretch_the_axis() {
        let bounded = chart(vec![diff("xfs", 12.5, Some((8.0, 17.0)), 1)]);
        let c = chart(vec![
            diff("xfs", 12.5, Some((8.0, 17.0)), 1),
            diff("zfs", 40.0, Some((f64::NEG_INFINITY, f64::INFINITY)), 2),
            diff("btrfs", -20.0, Some((-30.0, f64::INFINITY)), 3),
        ]);
        let svg = diff_chart(&c).unwrap();
        assert!(svg.contains("+40.0% (unbounded)"), "{svg}");
        assert!(svg.contains("-20.0% (unbounded)"), "{svg}");
        // Only the bounded estimate is a solid bar; the unbounded ones are
        // outlines with a dot at the estimate.
        assert_eq!(count_filled(&svg, "rect", &target_color(1)), 1);
        for i in [2, 3] {
            assert_eq!(count_filled(&svg, "rect", &target_color(i)), 0);
            assert_eq!(count_stroked(&svg, "rect", &target_color(i)), 1);
            assert_eq!(count_filled(&svg, "circle", &target_color(i)), 1);
        }
        // xfs: stem and two caps; zfs: stem and two arrowheads; btrfs: stem,
        // a cap at -30% and an arrowhead.
        assert_eq!(count(&svg, "stroke=\"#222222\" stroke-width=\"2\""), 9);
        // The axis ends near the largest finite number (+40%), not at 1e300.
        let (lo, hi) = value_range(&c.bars);
        assert!(lo > -50.0 && hi < 60.0, "{lo} {hi}");
        assert!(value_range(&bounded.bars).1 < hi);
    }

    #[test]
    fn a_difference_of_noise_does_not_fill_the_axis() {
        let (lo, hi) = value_range(&[diff("ram", -0.001, Some((-0.009, 0.007)), 1)]);
        assert!(lo <= -1.0 && hi >= 1.0, "{lo} {hi}");
        let (lo, hi) = value_range(&[diff("ram", 60.0, Some((20.0, 115.0)), 1)]);
        assert!((-6.0..=-1.0).contains(&lo) && hi >= 115.0, "{lo} {hi}");
    }

    #[test]
    fn long_names_are_truncated() {
        let long = format!("ext4-{}", "x".repeat(200));
        let svg = diff_chart(&chart(vec![diff(&long, 3.0, None, 0)])).unwrap();
        let line = svg.lines().find(|l| l.starts_with("ext4-")).unwrap();
        assert!(line.ends_with('…'));
        assert!(text_width(line, LABEL_SIZE) <= (f64::from(WIDTH) * MAX_NAME_SHARE) as u32);
    }
}
