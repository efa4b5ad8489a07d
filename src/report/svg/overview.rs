//! The overview: every workload's result against the baseline on one
//! chart, as a forest plot. One row per compared workload (and target): a
//! dot at the ratio of the candidate's result to the baseline's and its 95%
//! interval as a whisker, on a log axis turned so that right is better
//! (faster) whatever the metric's direction, a line at ×1 (no difference).
//! The row's colour says the verdict (faster, slower, equivalent,
//! inconclusive) and its text says it again beside the row, with the
//! verdict's caveat marks, so that nothing rests on colour alone. Names sit
//! on the left, wrapped rather than cut.

use anyhow::Result;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{
    anchored, draw_mesh, draw_title, draw_whisker_paths, render, text_width, wrap_distinct,
    wrap_text, Area, GRID, HEIGHT, INK, LABEL_SIZE, MUTED, SMALL_SIZE, VALUE_SIZE,
};
use super::Rgb;

/// How a row's comparison came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Faster,
    Slower,
    Equivalent,
    Inconclusive,
}

impl Call {
    /// Blue for better, vermilion for worse, bluish green for equivalent
    /// (Okabe–Ito, colour-blind safe), grey for inconclusive.
    pub fn color(self) -> Rgb {
        match self {
            Call::Faster => Rgb(0x00, 0x72, 0xb2),
            Call::Slower => Rgb(0xd5, 0x5e, 0x00),
            Call::Equivalent => Rgb(0x00, 0x9e, 0x73),
            Call::Inconclusive => Rgb(0x8c, 0x8c, 0x8c),
        }
    }
}

/// One compared workload (on one target).
#[derive(Debug, Clone, PartialEq)]
pub struct OverviewRow {
    pub label: String,
    /// How many times better than the baseline (> 1: better), with its
    /// 95% interval; an infinite or non-positive bound is open.
    pub better: f64,
    pub ci: Option<(f64, f64)>,
    pub call: Call,
    /// What the row says beside it: `×12 faster`, `-3.1% (inconclusive)`.
    pub text: String,
    /// The verdict's caveat marks, under the text; empty without caveats.
    pub marks: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OverviewChart {
    pub title: String,
    /// Under the axis: what a ratio means here.
    pub x_label: String,
    pub rows: Vec<OverviewRow>,
}

/// The colour of caveat marks (the report's warnings' brown).
const CAVEAT: RGBColor = RGBColor(0x8a, 0x4b, 0x00);
/// Pixels per row.
const ROW_PX: u32 = 30;
/// Height taken by title, axis and margins.
const CHROME_PX: u32 = 100;
/// Widest the name column gets, in pixels, when the verdicts beside the
/// rows take their widest; more when they leave room.
const NAME_PX: u32 = 190;
/// The least width of the plot itself, in pixels.
const PLOT_MIN_PX: u32 = 360;
/// Widest the text column on the right gets, in pixels: room for a
/// verdict and its caveat marks (`⚠ page cache (cwd), CPU-bound (tmpfs)`).
const TEXT_PX: u32 = 360;
/// The figure's width: wider than the other charts, so that it is drawn
/// at its own size (not scaled up) in the report's 1000 px column and the
/// caveat marks beside the rows are not cut.
const OVERVIEW_WIDTH: u32 = 960;

/// Renders `c` as SVG; "no data" when no row has a finite ratio.
pub fn overview_chart(c: &OverviewChart) -> Result<String> {
    if !c.rows.iter().any(|r| usable(r.better)) {
        return super::canvas::no_data(&c.title);
    }
    let texts = row_texts(c);
    // The names take what the verdicts beside the rows leave of the
    // width, down to the plot's own least.
    let texts_w = widest(&texts, VALUE_SIZE);
    let name_px = OVERVIEW_WIDTH
        .saturating_sub(texts_w + 56 + PLOT_MIN_PX)
        .max(NAME_PX);
    let labels: Vec<String> = c.rows.iter().map(|r| r.label.clone()).collect();
    let names = wrap_distinct(&labels, LABEL_SIZE, name_px, 3);
    let heights: Vec<f64> = texts
        .iter()
        .zip(&names)
        .map(|(t, n)| row_height(t, n))
        .collect();
    let rows: f64 = heights.iter().sum();
    let height = (HEIGHT / 2).max(CHROME_PX + (f64::from(ROW_PX) * rows).round() as u32);
    render(&c.title, (OVERVIEW_WIDTH, height), |root| {
        draw(root, c, &texts, &names, &heights)
    })
}

/// The widest of `lines` at `size`, in pixels.
fn widest(lines: &[Vec<String>], size: f64) -> u32 {
    lines
        .iter()
        .flatten()
        .map(|l| text_width(l, size))
        .max()
        .unwrap_or(0)
}

fn usable(r: f64) -> bool {
    r.is_finite() && r > 0.0
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// What each row says beside it: its verdict on up to two lines, or, with
/// caveat marks, its verdict on one and the marks on up to three (never
/// cut where three lines hold them: a cut caveat reads as another one).
fn row_texts(c: &OverviewChart) -> Vec<Vec<String>> {
    c.rows
        .iter()
        .map(|r| {
            let mut lines = wrap_text(&r.text, VALUE_SIZE, TEXT_PX, 2);
            if !r.marks.is_empty() {
                lines.truncate(1);
                lines.extend(wrap_text(&r.marks, VALUE_SIZE, TEXT_PX, 3));
            }
            lines
        })
        .collect()
}

/// A row's height in rows of [`ROW_PX`]: one whose caveat marks take two
/// lines under its verdict, or whose name takes three, needs three lines,
/// half a row more; marks on three lines, a whole row more.
fn row_height(text: &[String], name: &[String]) -> f64 {
    if text.len() > 3 {
        2.0
    } else if text.len() > 2 || name.len() > 2 {
        1.5
    } else {
        1.0
    }
}

fn draw(
    root: &Area<'_>,
    c: &OverviewChart,
    texts: &[Vec<String>],
    names: &[Vec<String>],
    heights: &[f64],
) -> Result<()> {
    let area = draw_title(root, &c.title)?;
    let (lo, hi) = log_range(&c.rows);
    let names_w = widest(names, LABEL_SIZE);
    let texts_w = widest(texts, VALUE_SIZE);
    // Each row's centre, the first at the top, in rows of ROW_PX.
    let top: f64 = heights.iter().sum();
    let centres: Vec<f64> = (0..heights.len())
        .map(|i| top - heights[..i].iter().sum::<f64>() - heights[i] / 2.0)
        .collect();
    let mut chart = ChartBuilder::on(&area)
        .margin_left(10)
        .margin_right(texts_w + 18)
        .margin_top(6)
        .margin_bottom(6)
        .x_label_area_size(44)
        .y_label_area_size(names_w + 14)
        .build_cartesian_2d(lo..hi, 0.0..top)?;
    draw_mesh(
        chart
            .configure_mesh()
            .disable_mesh()
            .y_labels(0)
            .x_labels(0)
            .x_desc(c.x_label.as_str()),
    )?;
    // The ratio ladder, drawn here: plotters' own ticks are linear steps.
    for t in ticks(lo, hi) {
        chart.draw_series([PathElement::new(vec![(t, 0.0), (t, top)], GRID)])?;
        let (x, y) = chart.backend_coord(&(t, 0.0));
        let style = anchored(LABEL_SIZE, HPos::Center, VPos::Top);
        root.draw_text(&ratio_tick(t), &style, (x, y + 6))?;
    }
    let one = INK.stroke_width(1);
    chart.draw_series([PathElement::new(vec![(0.0, 0.0), (0.0, top)], one)])?;
    for (i, row) in c.rows.iter().enumerate() {
        let y = centres[i];
        draw_row(&chart, y, row, (lo, hi))?;
        let (x, yp) = chart.backend_coord(&(lo, y));
        lines(root, &names[i], LABEL_SIZE, HPos::Right, (x - 8, yp), &INK)?;
        let (x, _) = chart.backend_coord(&(hi, y));
        let color = RGBColor::from(row.call.color());
        let text = &texts[i];
        let marked = !row.marks.is_empty() && text.len() > 1;
        let (first, rest) = text.split_at(1.min(text.len()));
        // The verdict above, the rest under it, the block centred on the row.
        let (up, down) = match rest.len() {
            0 => (0, 0),
            1 => (8, 8),
            2 => (15, 8),
            _ => (21, 7),
        };
        lines(
            root,
            first,
            VALUE_SIZE,
            HPos::Left,
            (x + 10, yp - up),
            &color,
        )?;
        let second = if marked { CAVEAT } else { color };
        lines(
            root,
            rest,
            VALUE_SIZE,
            HPos::Left,
            (x + 10, yp + down),
            &second,
        )?;
    }
    Ok(())
}

/// Lines of text, 15 px apart, vertically centred on `at`.
fn lines(
    root: &Area<'_>,
    text: &[String],
    size: f64,
    h: HPos,
    at: (i32, i32),
    color: &RGBColor,
) -> Result<()> {
    let step = 15;
    let first = at.1 - step * (text.len() as i32 - 1) / 2;
    for (k, line) in text.iter().enumerate() {
        let style = anchored(size, h, VPos::Center).color(color);
        root.draw_text(line, &style, (at.0, first + step * k as i32))?;
    }
    Ok(())
}

/// The x range in log10 units: every finite ratio and bound, ×1, and at
/// least ÷2..×2, widened to whole steps of the tick ladder.
fn log_range(rows: &[OverviewRow]) -> (f64, f64) {
    let logs = rows.iter().filter(|r| usable(r.better)).flat_map(|r| {
        let (a, b) = r.ci.unwrap_or((r.better, r.better));
        [r.better, a, b]
    });
    let (mut lo, mut hi) = (-2f64.log10(), 2f64.log10());
    for v in logs.filter(|v| usable(*v)).map(f64::log10) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let pad = (hi - lo) * 0.04;
    (lo - pad, hi + pad)
}

/// Tick positions (log10): 1, 2, 5 per decade within the range, thinned
/// to whole decades when the range spans more than two.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = hi - lo;
    let steps: &[f64] = if decades > 2.5 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut out = Vec::new();
    for d in (lo.floor() as i32)..=(hi.ceil() as i32) {
        for s in steps {
            let up = f64::from(d) + s.log10();
            if up >= lo && up <= hi {
                out.push(up);
            }
        }
    }
    out
}

/// `×1`, `×2`, `×10`, `÷2`, `÷10` at a tick (log10 units).
fn ratio_tick(v: f64) -> String {
    let r = 10f64.powf(v);
    let (sign, x) = if r >= 1.0 { ("×", r) } else { ("÷", 1.0 / r) };
    let x = if x >= 1e4 {
        format!("{x:.0e}")
    } else {
        format!("{}", (x * 10.0).round() / 10.0)
    };
    format!("{sign}{x}")
}

/// A row's whisker (open to the edge where a bound is not finite) and dot.
fn draw_row(chart: &Chart<'_, '_>, y: f64, row: &OverviewRow, range: (f64, f64)) -> Result<()> {
    let area = chart.plotting_area();
    let color = RGBColor::from(row.call.color());
    if !usable(row.better) {
        let style = anchored(SMALL_SIZE, HPos::Left, VPos::Center).color(&MUTED);
        area.draw(&(EmptyElement::at((0.0, y)) + Text::new("n/a", (6, 0), style)))?;
        return Ok(());
    }
    let x = row.better.log10();
    if let Some((a, b)) = row.ci {
        let end = |v: f64, edge: f64| if usable(v) { v.log10() } else { edge };
        let (lo, hi) = (end(a.min(b), range.0), end(a.max(b), range.1));
        let cap = 0.18;
        let mut paths = vec![vec![(lo, y), (hi, y)]];
        if usable(a.min(b)) {
            paths.push(vec![(lo, y - cap), (lo, y + cap)]);
        }
        if usable(a.max(b)) {
            paths.push(vec![(hi, y - cap), (hi, y + cap)]);
        }
        draw_whisker_paths(area, &paths)?;
    }
    area.draw(&Circle::new((x, y), 7, WHITE.filled()))?;
    area.draw(&Circle::new((x, y), 6, color.filled()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::canvas::test_util::*;
    use super::*;

    fn row(label: &str, better: f64, ci: (f64, f64), call: Call, text: &str) -> OverviewRow {
        let (text, marks) = text.split_once(" ⚠").unwrap_or((text, ""));
        OverviewRow {
            label: label.into(),
            better,
            ci: Some(ci),
            call,
            text: text.into(),
            marks: match marks {
                "" => String::new(),
                m => format!("⚠{m}"),
            },
        }
    }

    #[test]
    fn rows_sit_on_a_log_axis_with_ratio_ticks_and_say_their_verdict() {
        let c = OverviewChart {
            title: "Every workload against cwd".into(),
            x_label: "× cwd's result (log scale; right is faster)".into(),
            rows: vec![
                row(
                    "seqread-1m · throughput",
                    11.9,
                    (2.4, 58.5),
                    Call::Faster,
                    "×12 faster",
                ),
                row(
                    "seqwrite-1m · throughput",
                    1.6,
                    (0.67, 3.9),
                    Call::Inconclusive,
                    "×1.6 (inconclusive)",
                ),
                row(
                    "tinywrites-64b · total time",
                    1.25,
                    (1.22, 1.27),
                    Call::Faster,
                    "19.7% less time, faster ⚠ noisy host",
                ),
                row("x", 0.5, (0.4, f64::INFINITY), Call::Slower, "÷2.0 slower"),
            ],
        };
        let svg = overview_chart(&c).unwrap();
        assert_inline_svg(&svg);
        for text in [
            "×12 faster",
            "×1.6 (inconclusive)",
            "noisy host",
            "×10",
            "÷2",
            "×1",
        ] {
            assert!(svg.contains(text), "{text} in {svg}");
        }
        assert_eq!(count_filled(&svg, "circle", &Call::Slower.color()), 1);
        assert_eq!(count_filled(&svg, "circle", &Call::Faster.color()), 2);
        assert_eq!(count_filled(&svg, "circle", &Call::Inconclusive.color()), 1);
    }

    #[test]
    fn long_caveat_marks_wrap_under_the_verdict_and_are_not_cut() {
        // The built-in campaign's fsync row: cut to one line it ended
        // "durability not measured (tm…".
        let marks = "⚠ noisy host, page cache (cwd), durability not measured (tmpfs)";
        let c = OverviewChart {
            title: "Every workload against cwd".into(),
            x_label: "× cwd's result".into(),
            rows: vec![row(
                "randwrite-4k-fsync · IOPS",
                71.0,
                (69.0, 73.0),
                Call::Faster,
                &format!("×71 faster {marks}"),
            )],
        };
        let svg = overview_chart(&c).unwrap(); // loads the fonts text is measured with
        let lines = row_texts(&c).remove(0);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines.iter().all(|l| !l.contains('…')), "{lines:?}");
        assert_eq!(lines[1..].join(" "), marks);
        assert!(svg.contains("(tmpfs)"), "{svg}");
        assert!(!svg.contains('…'), "{svg}");
    }

    #[test]
    fn ticks_are_ratios_and_thin_to_decades_over_a_wide_range() {
        assert_eq!(ratio_tick(0.0), "×1");
        assert_eq!(ratio_tick(2f64.log10()), "×2");
        assert_eq!(ratio_tick(-1.0), "÷10");
        let narrow = ticks(-0.5, 1.1);
        assert!(narrow.iter().any(|t| (t - 5f64.log10()).abs() < 1e-9));
        let wide = ticks(-1.0, 3.0);
        assert_eq!(wide, vec![-1.0, 0.0, 1.0, 2.0, 3.0]);
    }
}
