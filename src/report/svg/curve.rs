//! Curve chart: a metric against a swept value (seed 002's time against
//! file size, seed 000's TPS against transactions). One line per target —
//! per row of a study — through its mean at each swept value, with a
//! shaded band for the 95% interval (a whisker where a line has a single
//! point). The x axis carries the swept values themselves as ticks: on a
//! log axis for sizes and counts, evenly spaced in the order written for
//! words. A legend column on the right names the lines. The y axis is
//! logarithmic when asked (values a decade or more apart: Gluster's
//! 64-byte writes take 100× the disk's time, and a linear axis lays the
//! disk's lines flat on zero).

use std::ops::Range;

use anyhow::Result;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{
    anchored, decades, draw_mesh, draw_title, draw_whisker_paths, finite_ci, finite_extent,
    fit_text, no_data, nonempty, plottable, render, value_plot, y_label_area, Area, AXIS, GRID,
    HEIGHT, LABEL_SIZE, WIDTH,
};
use super::format::{si, TickFormat};
use super::line::{draw_legend, entries, legend_width, Entry};
use super::Rgb;

/// One line's value at a swept value, with its interval.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    pub x: f64,
    pub y: f64,
    pub ci: Option<(f64, f64)>,
}

/// One line: a target (a row of a study) across the swept values.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub label: String,
    pub color: Rgb,
    pub points: Vec<CurvePoint>,
}

/// A curve chart; the y label includes the unit.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// The swept values: where each lies on x, and how it reads.
    pub x_ticks: Vec<(f64, String)>,
    /// A log x axis (sizes, counts); ticks and points must be positive.
    pub log_x: bool,
    /// A log y axis: points at or below zero are left out and bands are
    /// cut at the axis' foot.
    pub log_y: bool,
    pub curves: Vec<Curve>,
}

const Y_TICKS: usize = 8;
const MARKER_RADIUS: u32 = 3;
/// Opacity of an interval band.
const BAND_OPACITY: f64 = 0.18;
/// Widest a legend entry's text gets, in pixels.
const LEGEND_TEXT_MAX: u32 = 200;

/// Renders `c` as SVG; "no data" when no curve has a drawable point.
pub fn curve_chart(c: &CurveChart) -> Result<String> {
    let ok_x = |x: f64| plottable(x) && (!c.log_x || x > 0.0);
    let ok_y = |y: f64| plottable(y) && (!c.log_y || y > 0.0);
    let curves: Vec<Vec<CurvePoint>> = c
        .curves
        .iter()
        .map(|l| {
            let mut points: Vec<CurvePoint> = l
                .points
                .iter()
                .filter(|p| ok_x(p.x) && ok_y(p.y))
                .map(|p| CurvePoint {
                    ci: finite_ci(p.ci),
                    ..p.clone()
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            points
        })
        .collect();
    let ticks: Vec<(f64, String)> = c.x_ticks.iter().filter(|t| ok_x(t.0)).cloned().collect();
    if curves.iter().all(Vec::is_empty) {
        return no_data(&c.title);
    }
    let xs = curves
        .iter()
        .flatten()
        .map(|p| p.x)
        .chain(ticks.iter().map(|t| t.0));
    let x = x_range(finite_extent(xs).unwrap_or((1.0, 10.0)), c.log_x);
    let ys = curves.iter().flatten().flat_map(|p| {
        let (lo, hi) = p.ci.unwrap_or((p.y, p.y));
        [p.y, lo, hi]
    });
    let y = if c.log_y {
        // The means set the foot (a band's low end may be 0).
        let means = finite_extent(curves.iter().flatten().map(|p| p.y));
        let (lo, _) = means.unwrap_or((1.0, 10.0));
        let (_, hi) = finite_extent(ys.filter(|v| *v > 0.0)).unwrap_or((lo, lo * 10.0));
        let (lo, hi) = decades(lo, hi);
        lo..hi
    } else {
        y_range(finite_extent(ys).unwrap_or((0.0, 1.0)))
    };
    let curves: Vec<Vec<CurvePoint>> = match c.log_y {
        true => curves
            .into_iter()
            .map(|points| {
                points
                    .into_iter()
                    .map(|p| CurvePoint {
                        ci: p.ci.map(|(lo, hi)| (lo.max(y.start), hi.max(y.start))),
                        ..p
                    })
                    .collect()
            })
            .collect(),
        false => curves,
    };
    let plot = Plot {
        chart: c,
        curves: &curves,
        ticks: &ticks,
        y_format: (!c.log_y).then(|| TickFormat::for_range(y.start, y.end, Y_TICKS)),
        y_ends: (y.start, y.end),
    };
    render(&c.title, (WIDTH, HEIGHT), |root| {
        let area = draw_title(root, &c.title)?;
        let entries = legend_entries(c, &curves);
        let legend_w = if c.curves.len() > 1 {
            legend_width(&entries)
        } else {
            0
        };
        let (plot_area, legend_area) = area.split_horizontally(WIDTH - legend_w);
        let top = match (c.log_x, c.log_y) {
            (true, true) => plot.draw(root, &plot_area, x.log_scale(), y.log_scale()),
            (true, false) => plot.draw(root, &plot_area, x.log_scale(), y),
            (false, true) => plot.draw(root, &plot_area, x, y.log_scale()),
            (false, false) => plot.draw(root, &plot_area, x, y),
        }?;
        if c.curves.len() > 1 {
            let offset = top - legend_area.get_pixel_range().1.start;
            draw_legend(&legend_area, &entries, offset)?;
        }
        Ok(())
    })
}

/// The x range around the swept values, with room for the end markers:
/// a quarter of a step either side on a log axis, 5% on a linear one.
fn x_range((lo, hi): (f64, f64), log: bool) -> Range<f64> {
    if log {
        let pad = if hi > lo { (hi / lo).powf(0.06) } else { 2.0 };
        return (lo / pad)..(hi * pad);
    }
    let pad = if hi > lo { (hi - lo) * 0.06 } else { 0.5 };
    let (lo, hi) = nonempty(lo - pad, hi + pad);
    lo..hi
}

/// From 0 for values that are not negative (throughput, time), 5% above.
fn y_range((lo, hi): (f64, f64)) -> Range<f64> {
    let lo = if lo >= 0.0 {
        0.0
    } else {
        lo - (hi - lo) * 0.05
    };
    let (lo, hi) = nonempty(lo, hi + (hi - lo).abs() * 0.05);
    lo..hi
}

fn legend_entries(c: &CurveChart, curves: &[Vec<CurvePoint>]) -> Vec<Entry> {
    entries(
        c.curves
            .iter()
            .zip(curves)
            .map(|(curve, points)| (curve.color, curve.label.as_str(), points.is_empty())),
        LEGEND_TEXT_MAX,
    )
}

/// Everything the coordinate-generic drawing needs.
struct Plot<'p> {
    chart: &'p CurveChart,
    curves: &'p [Vec<CurvePoint>],
    ticks: &'p [(f64, String)],
    /// How the y ticks read: None on a log axis (each its own value).
    y_format: Option<TickFormat>,
    y_ends: (f64, f64),
}

impl Plot<'_> {
    fn y_label(&self, v: f64) -> String {
        match &self.y_format {
            Some(f) => f.format(v),
            None => si(v),
        }
    }

    /// Draws axes, bands, lines and the swept values' ticks; returns the
    /// plot's top pixel.
    fn draw<X, Y>(&self, root: &Area<'_>, area: &Area<'_>, x: X, y: Y) -> Result<i32>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let c = self.chart;
        let (y_lo, y_hi) = self.y_ends;
        let y_label_area = y_label_area([y_lo, y_hi, (y_lo + y_hi) / 2.0].map(|v| self.y_label(v)));
        let mut chart = value_plot(area, y_label_area, x, y)?;
        let y_fmt = |v: &f64| self.y_label(*v);
        // The swept values are the x ticks, drawn below; none of plotters'.
        let x_fmt = |_: &f64| String::new();
        draw_mesh(
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(2)
                .x_label_formatter(&x_fmt)
                .y_labels(Y_TICKS)
                .y_label_formatter(&y_fmt)
                .x_desc(c.x_label.as_str())
                .y_desc(c.y_label.as_str()),
        )?;
        for (tx, _) in self.ticks {
            chart.draw_series(LineSeries::new([(*tx, y_lo), (*tx, y_hi)], GRID))?;
        }
        for (curve, points) in c.curves.iter().zip(self.curves) {
            let color = RGBColor::from(curve.color);
            let band: Vec<(f64, f64)> = points
                .iter()
                .filter_map(|p| p.ci.map(|ci| (p.x, ci.1)))
                .chain(
                    points
                        .iter()
                        .rev()
                        .filter_map(|p| p.ci.map(|ci| (p.x, ci.0))),
                )
                .collect();
            if band.len() >= 4 {
                chart.draw_series(std::iter::once(Polygon::new(
                    band,
                    color.mix(BAND_OPACITY).filled(),
                )))?;
            } else if let Some((p, (lo, hi))) = points.first().and_then(|p| Some((p, p.ci?))) {
                draw_whisker_paths(chart.plotting_area(), &[vec![(p.x, lo), (p.x, hi)]])?;
            }
            let xy = points.iter().map(|p| (p.x, p.y));
            chart.draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))?;
            chart.draw_series(xy.map(|p| Circle::new(p, MARKER_RADIUS, color.filled())))?;
        }
        let style = anchored(LABEL_SIZE, HPos::Center, VPos::Top);
        for (tx, text) in self.ticks {
            let (px, py) = chart.backend_coord(&(*tx, y_lo));
            root.draw(&PathElement::new(vec![(px, py), (px, py + 5)], AXIS))?;
            root.draw_text(&fit_text(text, LABEL_SIZE, 90), &style, (px, py + 7))?;
        }
        Ok(chart.plotting_area().get_pixel_range().1.start)
    }
}

#[cfg(test)]
mod tests {
    use super::super::canvas::test_util::*;
    use super::super::target_color;
    use super::*;

    fn curve(label: &str, i: usize, ys: &[f64]) -> Curve {
        let xs = [10.0 * 1048576.0, 100.0 * 1048576.0, 1024.0 * 1048576.0];
        Curve {
            label: label.into(),
            color: target_color(i),
            points: xs
                .iter()
                .zip(ys)
                .map(|(&x, &y)| CurvePoint {
                    x,
                    y,
                    ci: Some((y * 0.9, y * 1.1)),
                })
                .collect(),
        }
    }

    fn chart(curves: Vec<Curve>) -> CurveChart {
        CurveChart {
            title: "tiny: total_s against total_size".into(),
            x_label: "total_size".into(),
            y_label: "total_s (s)".into(),
            x_ticks: vec![
                (10.0 * 1048576.0, "10M".into()),
                (100.0 * 1048576.0, "100M".into()),
                (1024.0 * 1048576.0, "1G".into()),
            ],
            log_x: true,
            log_y: false,
            curves,
        }
    }

    #[test]
    fn a_line_and_a_band_per_curve_and_the_swept_values_as_ticks() {
        let c = chart(vec![
            curve("disk", 0, &[0.1, 0.9, 9.0]),
            curve("gl", 1, &[7.0, 77.0, 700.0]),
        ]);
        let svg = curve_chart(&c).unwrap();
        assert_inline_svg(&svg);
        for i in 0..2 {
            // The line and its legend sample.
            assert_eq!(count_stroked(&svg, "polyline", &target_color(i)), 2);
            assert_eq!(count_filled(&svg, "polygon", &target_color(i)), 1, "band");
        }
        for tick in ["10M", "100M", "1G", "disk", "gl"] {
            assert!(svg.contains(&format!(">\n{tick}\n</text>")), "{tick}");
        }
        assert!(svg.contains("opacity=\"0.18\""), "bands are translucent");
        // Three markers per line plus one per legend entry.
        assert_eq!(count(&svg, "<circle "), 8);
    }

    #[test]
    fn a_log_axis_spaces_the_sizes_by_ratio() {
        let svg = curve_chart(&chart(vec![curve("disk", 0, &[1.0, 2.0, 3.0])])).unwrap();
        let xs: Vec<i32> = svg
            .lines()
            .filter(|l| l.starts_with("<circle "))
            .map(|l| {
                let cx = l.split("cx=\"").nth(1).unwrap();
                cx.split('"').next().unwrap().parse().unwrap()
            })
            .collect();
        assert_eq!(xs.len(), 3);
        // 10M → 100M is one decade, 100M → 1G slightly more (10.24×).
        let (a, b) = (xs[1] - xs[0], xs[2] - xs[1]);
        assert!(a > 50 && (b - a).abs() <= 4, "{xs:?}");
    }

    #[test]
    fn a_single_value_draws_a_whisker_and_bad_input_renders() {
        let mut c = chart(vec![Curve {
            label: "one".into(),
            color: target_color(0),
            points: vec![CurvePoint {
                x: 1.0,
                y: 5.0,
                ci: Some((4.0, 6.0)),
            }],
        }]);
        c.log_x = false;
        c.x_ticks = vec![(1.0, "1".into())];
        let svg = curve_chart(&c).unwrap();
        assert_eq!(count(&svg, "<circle "), 1);
        assert!(!svg.contains("no data"));
        c.curves[0].points[0].y = f64::NAN;
        assert!(curve_chart(&c).unwrap().contains("no data"));
        c.curves[0].points = vec![
            CurvePoint {
                x: f64::MAX,
                y: -f64::MAX,
                ci: Some((f64::INFINITY, 0.0)),
            },
            CurvePoint {
                x: -1.0,
                y: 1e300,
                ci: None,
            },
        ];
        assert!(curve_chart(&c).is_ok());
        c.log_x = true;
        assert!(curve_chart(&c).is_ok());
    }

    #[test]
    fn labels_are_escaped() {
        let mut c = chart(vec![
            curve("<b>a</b>", 0, &[1.0, 2.0, 3.0]),
            curve("x&y", 1, &[1.0, 2.0, 3.0]),
        ]);
        c.x_ticks[0].1 = "<i>".into();
        let svg = curve_chart(&c).unwrap();
        assert!(!svg.contains("<b>") && !svg.contains("<i>"));
        assert!(svg.contains("&lt;b&gt;a&lt;/b&gt;") && svg.contains("x&amp;y"));
    }

    #[test]
    fn a_log_y_axis_keeps_lines_a_hundred_times_apart_off_the_floor() {
        let mut c = chart(vec![
            curve("disk", 0, &[0.01, 0.1, 1.0]),
            curve("gl", 1, &[1.0, 10.0, 100.0]),
        ]);
        let linear = curve_chart(&c).unwrap();
        c.log_y = true;
        let svg = curve_chart(&c).unwrap();
        assert_inline_svg(&svg);
        // Decades as ticks, and both lines and bands drawn.
        for tick in ["1", "10", "100"] {
            assert!(svg.contains(&format!(">\n{tick}\n</text>")), "{tick}");
        }
        for i in 0..2 {
            assert_eq!(count_stroked(&svg, "polyline", &target_color(i)), 2);
            assert_eq!(count_filled(&svg, "polygon", &target_color(i)), 1, "band");
        }
        assert!(
            !linear.contains(">\n1\n</text>"),
            "a linear axis from 0 to 110 has no tick at 1"
        );
    }
}
