//! Line chart: throughput over time (one line per run) or latency
//! percentiles, with optional log axes and a legend column on the right
//! when there are several lines. Short lines also get point markers.

use std::ops::Range;

use anyhow::Result;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{
    anchored, decades, draw_mesh, draw_title, finite_extent, no_data, nonempty, plottable, render,
    text_width, value_plot, wrap_distinct, y_label_area, Area, GRID, HEIGHT, LABEL_SIZE, MUTED,
    WIDTH,
};
use super::format::{si, TickFormat};
use super::Rgb;

/// One series: a run's throughput samples, a target's percentiles, ...
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub label: String,
    pub color: Rgb,
    pub points: Vec<(f64, f64)>,
}

/// A line chart; axis labels include units. A log axis drops points ≤ 0.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub log_y: bool,
    pub log_x: bool,
    /// Named x ticks (`p50`, `p99.9`) in place of numbers; empty: numbers.
    pub x_ticks: Vec<(f64, String)>,
}

const X_TICKS: usize = 10;
const Y_TICKS: usize = 8;
/// Lines with at most this many points get a marker on each point.
const MARKER_MAX_POINTS: usize = 60;
const MARKER_RADIUS: u32 = 3;
/// Widest a legend entry's text gets, in pixels.
const LEGEND_TEXT_MAX: u32 = 170;
/// Legend sample line length and gaps, in pixels.
const LEGEND_SAMPLE: i32 = 22;
const LEGEND_ROW: i32 = 20;

/// Renders `c` as SVG; "no data" when no line has a drawable point.
pub fn line_chart(c: &LineChart) -> Result<String> {
    let mut series: Vec<Vec<(f64, f64)>> = c
        .lines
        .iter()
        .map(|l| drawable(&l.points, c.log_x, c.log_y))
        .collect();
    if series.iter().all(Vec::is_empty) {
        return no_data(&c.title);
    }
    let points = || series.iter().flatten();
    let x = Axis::new(points().map(|p| p.0), c.log_x, false, X_TICKS);
    let y = Axis::new(points().map(|p| p.1), c.log_y, true, Y_TICKS);
    for points in &mut series {
        points.retain(|&(px, py)| x.contains(px) && y.contains(py));
    }
    render(&c.title, (WIDTH, HEIGHT), |root| {
        draw(root, c, &series, &x, &y)
    })
}

/// The points that can be drawn: finite, and positive on a log axis.
fn drawable(points: &[(f64, f64)], log_x: bool, log_y: bool) -> Vec<(f64, f64)> {
    let ok = |v: f64, log: bool| plottable(v) && (!log || v > 0.0);
    points
        .iter()
        .copied()
        .filter(|&(x, y)| ok(x, log_x) && ok(y, log_y))
        .collect()
}

/// An axis: its range and how its ticks read.
enum Axis {
    Linear(Range<f64>, TickFormat),
    Log(Range<f64>),
}

impl Axis {
    /// `from_zero` starts a non-negative linear axis at 0 (throughput).
    fn new(values: impl Iterator<Item = f64>, log: bool, from_zero: bool, ticks: usize) -> Axis {
        let (lo, hi) = finite_extent(values).unwrap_or((1.0, 10.0));
        if log {
            let (lo, hi) = decades(lo, hi);
            return Axis::Log(lo..hi);
        }
        let (lo, hi) = if from_zero && lo >= 0.0 {
            (0.0, hi * 1.05)
        } else if from_zero {
            let pad = (hi - lo) * 0.05;
            (lo - pad, hi + pad)
        } else {
            (lo, hi)
        };
        let (lo, hi) = nonempty(lo, hi);
        Axis::Linear(lo..hi, TickFormat::for_range(lo, hi, ticks))
    }

    /// Whether `v` lies on the axis (a log axis may cut very low values).
    fn contains(&self, v: f64) -> bool {
        match self {
            Axis::Linear(..) => true,
            Axis::Log(r) => r.start <= v && v <= r.end,
        }
    }

    fn label(&self, v: f64) -> String {
        match self {
            Axis::Linear(_, ticks) => ticks.format(v),
            Axis::Log(_) => si(v),
        }
    }
}

fn draw(
    root: &Area<'_>,
    c: &LineChart,
    series: &[Vec<(f64, f64)>],
    x: &Axis,
    y: &Axis,
) -> Result<()> {
    let area = draw_title(root, &c.title)?;
    let legend = (c.lines.len() > 1).then(|| legend_entries(c, series));
    let legend_w = legend.as_ref().map_or(0, |l| legend_width(l));
    let (plot_area, legend_area) = area.split_horizontally(WIDTH - legend_w);
    let plot = Plot {
        area: &plot_area,
        chart: c,
        series,
        x,
        y,
    };
    let top = match (x, y) {
        (Axis::Linear(xr, _), Axis::Linear(yr, _)) => plot.draw(xr.clone(), yr.clone()),
        (Axis::Linear(xr, _), Axis::Log(yr)) => plot.draw(xr.clone(), yr.clone().log_scale()),
        (Axis::Log(xr), Axis::Linear(yr, _)) => plot.draw(xr.clone().log_scale(), yr.clone()),
        (Axis::Log(xr), Axis::Log(yr)) => plot.draw(xr.clone().log_scale(), yr.clone().log_scale()),
    }?;
    if let Some(entries) = legend {
        draw_legend(
            &legend_area,
            &entries,
            top - legend_area.get_pixel_range().1.start,
        )?;
    }
    Ok(())
}

/// Everything one plot needs, so the coordinate-generic part stays short.
struct Plot<'p, 'a> {
    area: &'p Area<'a>,
    chart: &'p LineChart,
    series: &'p [Vec<(f64, f64)>],
    x: &'p Axis,
    y: &'p Axis,
}

impl Plot<'_, '_> {
    /// Draws axes and series on `x` × `y`; returns the plot's top pixel.
    fn draw<X, Y>(&self, x: X, y: Y) -> Result<i32>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let c = self.chart;
        let mut chart = value_plot(self.area, self.y_label_area(), x, y)?;
        let x_fmt = |v: &f64| self.x.label(*v);
        let y_fmt = |v: &f64| self.y.label(*v);
        let named = !c.x_ticks.is_empty();
        let mut mesh = chart.configure_mesh();
        mesh.x_labels(if named { 0 } else { X_TICKS })
            .y_labels(Y_TICKS)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_desc(c.x_label.as_str())
            .y_desc(c.y_label.as_str());
        if named {
            mesh.disable_x_mesh();
        }
        draw_mesh(&mut mesh)?;
        if named {
            let (bottom, top) = match self.y {
                Axis::Linear(r, _) | Axis::Log(r) => (r.start, r.end),
            };
            for (at, name) in &c.x_ticks {
                chart.draw_series([PathElement::new(vec![(*at, bottom), (*at, top)], GRID)])?;
                let (px, py) = chart.backend_coord(&(*at, bottom));
                let style = anchored(LABEL_SIZE, HPos::Center, VPos::Top);
                self.area.draw_text(name, &style, (px, py + 6))?;
            }
        }
        for (line, points) in c.lines.iter().zip(self.series) {
            let color = RGBColor::from(line.color);
            chart.draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))?;
            if points.len() <= MARKER_MAX_POINTS {
                let marker = |&p: &(f64, f64)| Circle::new(p, MARKER_RADIUS, color.filled());
                chart.draw_series(points.iter().map(marker))?;
            }
        }
        Ok(chart.plotting_area().get_pixel_range().1.start)
    }

    /// Room for the y tick labels plus the rotated axis title.
    fn y_label_area(&self) -> u32 {
        let labels: Vec<f64> = match self.y {
            Axis::Linear(r, _) => vec![r.start, r.end, (r.start + r.end) / 2.0],
            Axis::Log(r) => vec![r.start, r.end],
        };
        y_label_area(labels.into_iter().map(|v| self.y.label(v)))
    }
}

/// A legend entry: colour and the text to show, on up to three lines.
pub(super) struct Entry {
    pub(super) color: Rgb,
    pub(super) lines: Vec<String>,
}

fn legend_entries(c: &LineChart, series: &[Vec<(f64, f64)>]) -> Vec<Entry> {
    entries(
        c.lines
            .iter()
            .zip(series)
            .map(|(line, points)| (line.color, line.label.as_str(), points.is_empty())),
        LEGEND_TEXT_MAX,
    )
}

/// Legend entries for (colour, label, whether it has no data), the labels
/// wrapped onto up to three lines of `max` pixels (at `, `, `=`, `.`…) so
/// that a long variant name reads whole; where two would still read the
/// same, each is fitted on one line so that no two read the same.
pub(super) fn entries<'a>(
    items: impl Iterator<Item = (Rgb, &'a str, bool)>,
    max: u32,
) -> Vec<Entry> {
    let labelled: Vec<(Rgb, String)> = items
        .map(|(color, label, empty)| match empty {
            true => (color, format!("{label} (no data)")),
            false => (color, label.to_string()),
        })
        .collect();
    let texts: Vec<String> = labelled.iter().map(|(_, l)| l.clone()).collect();
    let lines = wrap_distinct(&texts, LABEL_SIZE, max, 3);
    labelled
        .into_iter()
        .zip(lines)
        .map(|((color, _), lines)| Entry { color, lines })
        .collect()
}

pub(super) fn legend_width(entries: &[Entry]) -> u32 {
    let text = entries
        .iter()
        .flat_map(|e| &e.lines)
        .map(|l| text_width(l, LABEL_SIZE))
        .max();
    text.unwrap_or(0) + LEGEND_SAMPLE as u32 + 24
}

/// One row per line, from `top` pixels down: sample stroke, marker, label.
pub(super) fn draw_legend(area: &Area<'_>, entries: &[Entry], top: i32) -> Result<()> {
    let (_, height) = area.dim_in_pixel();
    let count: usize = entries.iter().map(|e| e.lines.len().max(1)).sum();
    let room = (height as i32 - top) / count.max(1) as i32;
    let row = LEGEND_ROW.min(room.max(LABEL_SIZE as i32));
    // A wrapped label's second line sits closer than the next entry.
    let line_step = row * 3 / 4;
    let mut y = top + 8;
    for entry in entries {
        let color = RGBColor::from(entry.color);
        let sample = vec![(0, y), (LEGEND_SAMPLE, y)];
        area.draw(&PathElement::new(sample, color.stroke_width(2)))?;
        area.draw(&Circle::new(
            (LEGEND_SAMPLE / 2, y),
            MARKER_RADIUS,
            color.filled(),
        ))?;
        let style = anchored(LABEL_SIZE, HPos::Left, VPos::Center);
        let muted = entry.lines.last().is_some_and(|l| l.ends_with("(no data)"));
        let style = if muted { style.color(&MUTED) } else { style };
        for (k, line) in entry.lines.iter().enumerate() {
            area.draw_text(line, &style, (LEGEND_SAMPLE + 6, y + k as i32 * line_step))?;
        }
        y += row + line_step * (entry.lines.len().max(1) as i32 - 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::canvas::test_util::*;
    use super::super::target_color;
    use super::*;

    fn line(label: &str, index: usize, points: Vec<(f64, f64)>) -> Line {
        Line {
            label: label.to_string(),
            color: target_color(index),
            points,
        }
    }

    fn chart(lines: Vec<Line>) -> LineChart {
        LineChart {
            title: "throughput over time".to_string(),
            x_label: "time (s)".to_string(),
            y_label: "throughput (MB/s)".to_string(),
            lines,
            log_y: false,
            log_x: false,
            x_ticks: Vec::new(),
        }
    }

    fn ramp(n: usize, scale: f64) -> Vec<(f64, f64)> {
        (0..n)
            .map(|i| (i as f64, scale * (1.0 + (i % 7) as f64)))
            .collect()
    }

    /// The (x, y) pixel pairs of the first polyline stroked in `color`.
    fn polyline_points(svg: &str, color: &Rgb) -> Vec<(i32, i32)> {
        let stroke = format!("stroke=\"{}\"", color.hex().to_uppercase());
        let line = svg
            .lines()
            .find(|l| l.starts_with("<polyline ") && l.contains(&stroke))
            .unwrap();
        let points = line
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        points
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn one_path_per_line_and_a_legend() {
        let c = chart(vec![
            line("run 1", 0, ramp(120, 100.0)),
            line("run 2", 1, ramp(120, 110.0)),
            line("run 3", 2, ramp(120, 90.0)),
        ]);
        let svg = line_chart(&c).unwrap();
        assert_inline_svg(&svg);
        for (i, l) in c.lines.iter().enumerate() {
            // The series and its legend sample.
            assert_eq!(count_stroked(&svg, "polyline", &target_color(i)), 2);
            assert!(svg.contains(&format!(">\n{}\n</text>", l.label)));
            assert_eq!(polyline_points(&svg, &target_color(i)).len(), 120);
        }
        assert!(svg.contains("throughput over time"));
        assert!(svg.contains("time (s)") && svg.contains("throughput (MB/s)"));
        // 120 points are too many for markers: only the 3 legend markers.
        assert_eq!(count(&svg, "<circle "), 3);
    }

    #[test]
    fn a_single_line_has_no_legend_but_markers() {
        let svg = line_chart(&chart(vec![line("only run", 0, ramp(10, 1.0))])).unwrap();
        assert_eq!(count_stroked(&svg, "polyline", &target_color(0)), 1);
        assert!(!svg.contains("only run"));
        assert_eq!(count(&svg, "<circle "), 10);
    }

    #[test]
    fn log_axis_spans_six_decades() {
        let points = (0..7)
            .map(|i| (f64::from(i) + 1.0, 10f64.powi(i + 3)))
            .collect();
        let mut c = chart(vec![line("p99", 0, points)]);
        c.log_y = true;
        c.y_label = "latency (ns)".to_string();
        let svg = line_chart(&c).unwrap();
        for tick in ["1k", "10k", "100k", "1M", "10M", "100M", "1G"] {
            assert!(svg.contains(&format!(">\n{tick}\n</text>")), "tick {tick}");
        }
        // Decades are evenly spaced on a log axis.
        let ys: Vec<i32> = polyline_points(&svg, &target_color(0))
            .iter()
            .map(|p| p.1)
            .collect();
        let steps: Vec<i32> = ys.windows(2).map(|w| w[0] - w[1]).collect();
        assert!(
            steps.iter().all(|&s| s > 20 && (s - steps[0]).abs() <= 1),
            "{steps:?}"
        );
    }

    #[test]
    fn log_x_and_log_y_drop_non_positive_points() {
        let mut c = chart(vec![line(
            "lat",
            0,
            vec![
                (0.0, 5.0),
                (50.0, 1e3),
                (99.0, 5e3),
                (99.9, -1.0),
                (99.99, 2e4),
            ],
        )]);
        c.log_x = true;
        c.log_y = true;
        let svg = line_chart(&c).unwrap();
        assert_eq!(polyline_points(&svg, &target_color(0)).len(), 3);
    }

    #[test]
    fn labels_are_escaped() {
        let c = chart(vec![
            line("<script>alert(1)</script>", 0, ramp(5, 1.0)),
            line("a&b", 1, ramp(5, 2.0)),
        ]);
        let svg = line_chart(&c).unwrap();
        assert!(!svg.contains("<script"));
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(svg.contains("a&amp;b"));
    }

    #[test]
    fn empty_and_non_finite_input() {
        let svg = line_chart(&chart(vec![])).unwrap();
        assert_inline_svg(&svg);
        assert!(svg.contains("no data"));
        let nan = vec![(f64::NAN, 1.0), (1.0, f64::INFINITY)];
        let svg = line_chart(&chart(vec![line("a", 0, nan.clone())])).unwrap();
        assert!(svg.contains("no data"));
        let c = chart(vec![
            line("good", 0, vec![(0.0, 1.0), (f64::NAN, 2.0), (2.0, 3.0)]),
            line("bad", 1, nan),
        ]);
        let svg = line_chart(&c).unwrap();
        assert_eq!(polyline_points(&svg, &target_color(0)).len(), 2);
        assert!(svg.contains("bad (no data)"));
    }

    #[test]
    fn a_single_point_still_renders() {
        let svg = line_chart(&chart(vec![line("one", 0, vec![(3.0, 3.0)])])).unwrap();
        assert_eq!(count(&svg, "<circle "), 1);
    }

    #[test]
    fn a_long_legend_label_wraps_and_reads_whole() {
        let labels = [
            "mount_options=[], preallocation=off",
            "mount_options=[\"auto-invalidation=false\"], preallocation=full",
        ];
        let e = entries(
            labels
                .iter()
                .enumerate()
                .map(|(i, l)| (target_color(i), *l, false)),
            200,
        );
        assert_eq!(e[0].lines, ["mount_options=[],", "preallocation=off"]);
        assert_eq!(e[1].lines.len(), 3, "{:?}", e[1].lines);
        assert!(!e[1].lines.concat().contains('…'), "{:?}", e[1].lines);
        assert!(e
            .iter()
            .flat_map(|e| &e.lines)
            .all(|l| text_width(l, LABEL_SIZE) <= 200));
        assert_eq!(e[1].lines[2], "preallocation=full");
    }
}
