//! The throughput–latency curve of a capacity search, as people draw it:
//! per target, the judged latency percentile (a solid line) and the
//! median (dashed) against the offered rate, a marker at each probe —
//! filled where the target held, open where it did not — and, where a
//! probe achieved less than it offered, an open square at the rate it
//! achieved, joined to its marker. A dashed horizontal line is the
//! latency target; a vertical line in the target's colour marks its
//! capacity, a translucent band its interval. Axes are logarithmic where
//! their values span a decade or more (latencies past the knee grow by
//! orders of magnitude). A legend column names the targets.

use std::ops::Range;

use anyhow::Result;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{
    anchored, decades, draw_mesh, draw_title, finite_extent, no_data, nonempty, plottable, render,
    value_plot, y_label_area, Area, HEIGHT, SMALL_SIZE, WIDTH,
};
use super::format::si;
use super::line::{draw_legend, entries, legend_width};
use super::Rgb;

/// One probe: the rate offered and achieved, its latencies.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityPoint {
    pub offered: f64,
    pub achieved: Option<f64>,
    pub median: Option<f64>,
    /// The judged percentile.
    pub tail: Option<f64>,
    pub passed: bool,
}

/// One target's probes and capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityCurve {
    pub label: String,
    pub color: Rgb,
    pub points: Vec<CapacityPoint>,
    /// The capacity and its interval, where one was found.
    pub knee: Option<(f64, Option<(f64, f64)>)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CapacityChart {
    pub title: String,
    /// `offered rate (tx/s)`.
    pub x_label: String,
    /// `latency (ms)`.
    pub y_label: String,
    /// The latency target, in the y axis' unit, and how it reads.
    pub limit: f64,
    pub limit_label: String,
    pub curves: Vec<CapacityCurve>,
}

const MARKER_RADIUS: u32 = 4;
const BAND_OPACITY: f64 = 0.15;
const LEGEND_TEXT_MAX: u32 = 200;
const LIMIT_COLOR: RGBColor = RGBColor(0xc0, 0x39, 0x2b);

/// Renders `c` as SVG; "no data" when no probe has a drawable latency.
pub fn capacity_chart(c: &CapacityChart) -> Result<String> {
    let xs: Vec<f64> = c
        .curves
        .iter()
        .flat_map(|k| {
            k.points
                .iter()
                .flat_map(|p| [Some(p.offered), p.achieved])
                .chain([k.knee.map(|x| x.0)])
                .flatten()
        })
        .filter(|x| plottable(*x) && *x > 0.0)
        .collect();
    let ys: Vec<f64> = c
        .curves
        .iter()
        .flat_map(|k| k.points.iter().flat_map(|p| [p.median, p.tail]).flatten())
        .chain([c.limit])
        .filter(|y| plottable(*y) && *y > 0.0)
        .collect();
    if xs.is_empty() || ys.len() < 2 {
        return no_data(&c.title);
    }
    let (x_lo, x_hi) = finite_extent(xs.iter().copied()).unwrap_or((1.0, 10.0));
    let (y_lo, y_hi) = finite_extent(ys.iter().copied()).unwrap_or((1.0, 10.0));
    let log_x = x_hi / x_lo >= 10.0;
    let log_y = y_hi / y_lo >= 10.0;
    let x = padded(x_lo, x_hi, log_x);
    let y = match log_y {
        true => {
            let (lo, hi) = decades(y_lo, y_hi);
            lo..hi
        }
        false => {
            let (lo, hi) = nonempty(0.0, y_hi * 1.08);
            lo..hi
        }
    };
    let plot = Plot {
        chart: c,
        y: y.clone(),
    };
    render(&c.title, (WIDTH, HEIGHT), |root| {
        let area = draw_title(root, &c.title)?;
        let entries = entries(
            c.curves
                .iter()
                .map(|k| (k.color, k.label.as_str(), k.points.is_empty())),
            LEGEND_TEXT_MAX,
        );
        let legend_w = legend_width(&entries);
        let (plot_area, legend_area) = area.split_horizontally(WIDTH - legend_w);
        let top = match (log_x, log_y) {
            (true, true) => plot.draw(&plot_area, x.log_scale(), y.log_scale()),
            (true, false) => plot.draw(&plot_area, x.log_scale(), y),
            (false, true) => plot.draw(&plot_area, x, y.log_scale()),
            (false, false) => plot.draw(&plot_area, x, y),
        }?;
        let offset = top - legend_area.get_pixel_range().1.start;
        draw_legend(&legend_area, &entries, offset)
    })
}

/// The x range with room for the end markers.
fn padded(lo: f64, hi: f64, log: bool) -> Range<f64> {
    if log {
        let pad = if hi > lo { (hi / lo).powf(0.05) } else { 2.0 };
        return (lo / pad)..(hi * pad);
    }
    let pad = if hi > lo {
        (hi - lo) * 0.06
    } else {
        lo * 0.1 + 1.0
    };
    let (lo, hi) = nonempty((lo - pad).max(0.0), hi + pad);
    lo..hi
}

struct Plot<'p> {
    chart: &'p CapacityChart,
    y: Range<f64>,
}

impl Plot<'_> {
    /// Draws axes, the target line, each target's band, knee, lines and
    /// markers; returns the plot's top pixel.
    fn draw<X, Y>(&self, area: &Area<'_>, x: X, y: Y) -> Result<i32>
    where
        X: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let c = self.chart;
        let (y_lo, y_hi) = (self.y.start, self.y.end);
        let y_label_area = y_label_area([y_lo, y_hi].map(si));
        let mut chart = value_plot(area, y_label_area, x, y)?;
        let fmt = |v: &f64| si(*v);
        draw_mesh(
            chart
                .configure_mesh()
                .x_labels(8)
                .y_labels(8)
                .x_label_formatter(&fmt)
                .y_label_formatter(&fmt)
                .x_desc(c.x_label.as_str())
                .y_desc(c.y_label.as_str()),
        )?;
        let (x_lo, x_hi) = {
            let r = chart.x_range();
            (r.start, r.end)
        };
        for k in &c.curves {
            let color = RGBColor::from(k.color);
            if let Some((_, Some((lo, hi)))) = k.knee {
                let (lo, hi) = (lo.max(x_lo), hi.min(x_hi));
                if hi > lo {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(lo, y_lo), (hi, y_hi)],
                        color.mix(BAND_OPACITY).filled(),
                    )))?;
                }
            }
        }
        chart.draw_series(DashedLineSeries::new(
            [(x_lo, c.limit), (x_hi, c.limit)],
            6,
            4,
            LIMIT_COLOR.stroke_width(2),
        ))?;
        let style = anchored(SMALL_SIZE, HPos::Right, VPos::Bottom);
        let (px, py) = chart.backend_coord(&(x_hi, c.limit));
        area.draw_text(&c.limit_label, &style.color(&LIMIT_COLOR), (px - 4, py - 3))?;
        for k in &c.curves {
            self.curve(&mut chart, k)?;
        }
        Ok(chart.plotting_area().get_pixel_range().1.start)
    }

    fn curve<DB, CT>(&self, chart: &mut ChartContext<'_, DB, CT>, k: &CapacityCurve) -> Result<()>
    where
        DB: DrawingBackend,
        CT: plotters::coord::CoordTranslate<From = (f64, f64)>,
        DB::ErrorType: 'static,
    {
        let color = RGBColor::from(k.color);
        let (y_lo, y_hi) = (self.y.start, self.y.end);
        let inside = |v: f64| plottable(v) && v > 0.0;
        if let Some((knee, _)) = k.knee.filter(|(x, _)| inside(*x)) {
            chart.draw_series(LineSeries::new(
                [(knee, y_lo), (knee, y_hi)],
                color.stroke_width(2),
            ))?;
        }
        let tail: Vec<(f64, f64)> = k
            .points
            .iter()
            .filter_map(|p| Some((p.offered, p.tail.filter(|v| inside(*v))?)))
            .collect();
        let median: Vec<(f64, f64)> = k
            .points
            .iter()
            .filter_map(|p| Some((p.offered, p.median.filter(|v| inside(*v))?)))
            .collect();
        chart.draw_series(DashedLineSeries::new(median, 5, 4, color.stroke_width(1)))?;
        chart.draw_series(LineSeries::new(tail.clone(), color.stroke_width(2)))?;
        for p in &k.points {
            let Some(t) = p.tail.filter(|v| inside(*v)) else {
                continue;
            };
            let style = match p.passed {
                true => color.filled(),
                false => color.stroke_width(2),
            };
            chart.draw_series(std::iter::once(Circle::new(
                (p.offered, t),
                MARKER_RADIUS,
                style,
            )))?;
            if let Some(a) = p.achieved.filter(|a| inside(*a) && *a < 0.95 * p.offered) {
                chart.draw_series(LineSeries::new(
                    [(a, t), (p.offered, t)],
                    color.stroke_width(1),
                ))?;
                chart.draw_series(std::iter::once(
                    EmptyElement::at((a, t))
                        + Rectangle::new([(-4, -4), (4, 4)], color.stroke_width(2)),
                ))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::canvas::test_util::*;
    use super::super::target_color;
    use super::*;

    fn curve(label: &str, i: usize, knee: f64) -> CapacityCurve {
        let point = |offered: f64, tail: f64, passed| CapacityPoint {
            offered,
            achieved: Some(offered.min(knee * 1.02)),
            median: Some(tail / 5.0),
            tail: Some(tail),
            passed,
        };
        CapacityCurve {
            label: label.into(),
            color: target_color(i),
            points: vec![
                point(knee / 2.0, 5.0, true),
                point(knee * 0.95, 40.0, true),
                point(knee * 1.05, 80.0, false),
                point(knee * 2.0, 5000.0, false),
            ],
            knee: Some((knee, Some((knee * 0.97, knee * 1.03)))),
        }
    }

    fn chart(curves: Vec<CapacityCurve>) -> CapacityChart {
        CapacityChart {
            title: "oltp: p99 latency against the offered rate".into(),
            x_label: "offered rate (tx/s)".into(),
            y_label: "latency (ms)".into(),
            limit: 50.0,
            limit_label: "p99 ≤ 50 ms".into(),
            curves,
        }
    }

    #[test]
    fn curves_knees_and_the_target_line() {
        let c = chart(vec![curve("ext4", 0, 1000.0), curve("zfs", 1, 2000.0)]);
        let svg = capacity_chart(&c).unwrap();
        assert_inline_svg(&svg);
        for i in 0..2 {
            let color = target_color(i);
            // The knee's band.
            assert_eq!(count_filled(&svg, "rect", &color), 1, "{i}");
            // Two passing probes filled, two failing open, and the legend's.
            assert!(count_filled(&svg, "circle", &color) >= 2, "{i}");
        }
        assert!(svg.contains("p99 ≤ 50 ms"));
        // Latencies from 1 ms to 5 s: a log axis with decades.
        assert!(svg.contains(">\n1k\n</text>"), "{svg}");
    }

    #[test]
    fn no_probe_is_no_data_and_bad_input_renders() {
        let mut c = chart(vec![]);
        assert!(capacity_chart(&c).unwrap().contains("no data"));
        let mut k = curve("x", 0, 1000.0);
        k.points[0].tail = Some(f64::NAN);
        k.points[1].offered = -1.0;
        k.points[2].achieved = Some(f64::INFINITY);
        k.knee = Some((f64::MAX, Some((f64::MIN, f64::MAX))));
        c.curves = vec![k];
        assert!(capacity_chart(&c).is_ok());
    }
}
