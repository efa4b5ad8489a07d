//! History chart: one metric over campaigns — the mean of each campaign as
//! a line with its 95% interval as a band, campaigns labelled on the x axis
//! (a tag's value or the date), version changes marked above the campaign
//! where they happened, and the step the change-point test found drawn as
//! a dashed line before the campaign it began at.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::canvas::{
    anchored, draw_title, draw_value_axis, finite_extent, fit_text, no_data, render, text_width,
    HEIGHT, LABEL_SIZE, MUTED, SMALL_SIZE, WIDTH,
};
use super::format::TickFormat;
use super::Rgb;

/// One campaign's point: its axis label, mean and interval (same unit as the chart).
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryPoint {
    pub label: String,
    pub mean: f64,
    pub ci: Option<(f64, f64)>,
    /// What changed in versions at this campaign ("glusterfs 10.3 → 11.1").
    pub mark: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HistoryChart {
    pub title: String,
    pub y_label: String,
    pub points: Vec<HistoryPoint>,
    /// Index of the campaign a significant step began at.
    pub step_at: Option<usize>,
    pub color: Rgb,
}

const Y_TICKS: usize = 8;
const STEP: RGBColor = RGBColor(0xc0, 0x39, 0x2b);

pub fn history_chart(c: &HistoryChart) -> Result<String> {
    let values = c.points.iter().flat_map(|p| {
        let (lo, hi) = p.ci.unwrap_or((p.mean, p.mean));
        [p.mean, lo, hi]
    });
    let Some((lo, hi)) = finite_extent(values) else {
        return no_data(&c.title);
    };
    let pad = ((hi - lo) * 0.1)
        .max(hi.abs() * 0.02)
        .max(f64::MIN_POSITIVE);
    let (lo, hi) = (
        (lo - pad).max(if lo >= 0.0 { 0.0 } else { f64::MIN }),
        hi + pad,
    );
    render(&c.title, (WIDTH, HEIGHT), |root| {
        let area = draw_title(root, &c.title)?;
        draw(root, &area, c, lo, hi)
    })
}

/// Draws the chart in `area`; text placed by data coordinates goes on
/// `root`, whose pixels those coordinates are.
fn draw(
    root: &super::canvas::Area<'_>,
    area: &super::canvas::Area<'_>,
    c: &HistoryChart,
    lo: f64,
    hi: f64,
) -> Result<()> {
    let n = c.points.len();
    let ticks = TickFormat::for_range(lo, hi, Y_TICKS);
    let y_area = [lo, hi]
        .iter()
        .map(|v| text_width(&ticks.format(*v), LABEL_SIZE))
        .max()
        .unwrap_or(0)
        + 36;
    let mut chart = ChartBuilder::on(area)
        .margin_left(8)
        .margin_right(16)
        .margin_top(22)
        .x_label_area_size(30)
        .y_label_area_size(y_area)
        .build_cartesian_2d(-0.5..(n as f64 - 0.5), lo..hi)?;
    draw_value_axis(&mut chart, Y_TICKS, &|v| ticks.format(*v), &c.y_label)?;
    let color = RGBColor(c.color.0, c.color.1, c.color.2);
    let band: Vec<(f64, f64)> = c
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.ci.map(|(_, h)| (i as f64, h)))
        .chain(
            c.points
                .iter()
                .enumerate()
                .rev()
                .filter_map(|(i, p)| p.ci.map(|(l, _)| (i as f64, l))),
        )
        .collect();
    if band.len() >= 4 {
        chart.draw_series(std::iter::once(Polygon::new(
            band,
            color.mix(0.18).filled(),
        )))?;
    } else {
        // One campaign with an interval has no band to fill: its
        // interval is a bar through the point, not left out.
        chart.draw_series(c.points.iter().enumerate().filter_map(|(i, p)| {
            let (l, h) = p.ci?;
            let x = i as f64;
            Some(PathElement::new(
                vec![(x, l), (x, h)],
                color.stroke_width(2),
            ))
        }))?;
    }
    let means: Vec<(f64, f64)> = c
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| (i as f64, p.mean))
        .collect();
    chart.draw_series(LineSeries::new(means.clone(), color.stroke_width(2)))?;
    chart.draw_series(means.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
    if let Some(at) = c.step_at {
        let x = at as f64 - 0.5;
        chart.draw_series(DashedLineSeries::new(
            vec![(x, lo), (x, hi)],
            6,
            4,
            STEP.stroke_width(2),
        ))?;
        let (px, py) = chart.backend_coord(&(x, hi));
        root.draw_text(
            "step",
            &anchored(SMALL_SIZE, HPos::Center, VPos::Bottom).color(&STEP),
            (px, py - 2),
        )?;
    }
    let slot =
        (chart.backend_coord(&(1.0, lo)).0 - chart.backend_coord(&(0.0, lo)).0).max(1) as u32;
    for (i, p) in c.points.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64, lo));
        let label = fit_text(&p.label, LABEL_SIZE, slot.saturating_sub(4));
        root.draw_text(
            &label,
            &anchored(LABEL_SIZE, HPos::Center, VPos::Top),
            (x, y + 6),
        )?;
        if let Some(mark) = &p.mark {
            let (mx, my) = chart.backend_coord(&(i as f64, hi));
            let text = fit_text(mark, SMALL_SIZE, slot.saturating_sub(4).max(60));
            root.draw_text(
                &text,
                &anchored(SMALL_SIZE, HPos::Center, VPos::Bottom).color(&MUTED),
                (mx, my - 14),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(label: &str, mean: f64) -> HistoryPoint {
        HistoryPoint {
            label: label.into(),
            mean,
            ci: Some((mean * 0.9, mean * 1.1)),
            mark: None,
        }
    }

    #[test]
    fn a_history_draws_its_band_line_labels_and_step() {
        let mut points: Vec<_> = ["10.3", "10.3", "10.3", "11.1", "11.1"]
            .iter()
            .zip([100.0, 101.0, 99.0, 70.0, 71.0])
            .map(|(l, m)| point(l, m))
            .collect();
        points[3].mark = Some("glusterfs 10.3 → 11.1".into());
        let svg = history_chart(&HistoryChart {
            title: "oltp on ext4: tps".into(),
            y_label: "tps".into(),
            points,
            step_at: Some(3),
            color: Rgb(0x1f, 0x77, 0xb4),
        })
        .unwrap();
        assert!(svg.starts_with("<svg role=\"img\" aria-label=\"oltp on ext4: tps\""));
        assert!(svg.contains("<polygon") || svg.contains("<path"), "a band");
        assert_eq!(svg.matches("<circle").count(), 5);
        for text in ["11.1", "step", "glusterfs 10.3 → 11.1"] {
            assert!(svg.contains(text), "{text}");
        }
    }

    // One campaign has no band to fill: its interval is drawn as a bar
    // through its point, not left out (the point looked exact).
    #[test]
    fn one_campaign_draws_its_interval_as_a_bar() {
        let chart = |ci| {
            let mut p = point("10.3", 100.0);
            p.ci = ci;
            history_chart(&HistoryChart {
                title: "t".into(),
                y_label: "y".into(),
                points: vec![p],
                step_at: None,
                color: Rgb(0x1f, 0x77, 0xb4),
            })
            .unwrap()
        };
        let lines = |svg: &str| svg.matches("<polyline").count();
        let (with, without) = (chart(Some((90.0, 110.0))), chart(None));
        assert_eq!(lines(&with), lines(&without) + 1, "{with}");
    }

    #[test]
    fn nothing_to_draw_says_no_data() {
        let svg = history_chart(&HistoryChart {
            title: "t".into(),
            y_label: "y".into(),
            points: vec![],
            step_at: None,
            color: Rgb(0, 0, 0),
        })
        .unwrap();
        assert!(svg.contains("no data"));
    }
}
