//! Heat map: an iozone-style matrix, file size (rows, first row on top) ×
//! record size (columns), colour = value, with a colour bar on the right.
//! Missing cells are light grey. Values print inside cells that fit them.
//! Sequential data uses viridis; differences use blue-white-red around 0.
//! Muted cells (say, differences that are not significant) are faded toward
//! grey and hatched; a legend under the matrix names what missing and
//! muted cells mean. Several maps can share one colour range. A sequential
//! scale can be logarithmic, for values that span decades.
//!
//! Maps that are compared (one test on several targets) are drawn as one
//! [`HeatMapGroup`]: the maps one above the other on one colour scale, with
//! one colour bar spanning them and one legend, so that a colour is one
//! value in every panel and there is one key to read it by.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::FontTransform;

use super::canvas::{
    anchored, draw_title, finite_extent, fit_text, no_data, plottable, render, text_width, Area,
    AXIS, AXIS_TITLE_SIZE, HEIGHT, LABEL_SIZE, LINE_HEIGHT, SMALL_SIZE, WIDTH,
};
use super::format::{nice_ticks, percent, percent_whole, si, si_digits, TickFormat};
use super::Rgb;

/// A matrix of values; `cells[row][col]`, `None` where nothing was measured.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatMap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Column names, e.g. record sizes.
    pub x_ticks: Vec<String>,
    /// Row names, e.g. file sizes.
    pub y_ticks: Vec<String>,
    pub cells: Vec<Vec<Option<f64>>>,
    /// What the colour means, with unit, e.g. "write (KB/s)".
    pub value_label: String,
    /// `true` for % differences: blue-white-red centred at 0.
    pub diverging: bool,
    /// A logarithmic colour scale (sequential maps of positive values; a
    /// value at or below 0 takes the lowest colour).
    pub log: bool,
    /// Colour range shared with other maps, so that a colour means the same
    /// value in each; `None`: this map's own values. A diverging scale stays
    /// symmetric about 0 either way.
    pub range: Option<(f64, f64)>,
    /// `muted[row][col]`: the cell is drawn faded and hatched.
    pub muted: Vec<Vec<bool>>,
    /// Legend for muted cells, shown when one is drawn; empty: none.
    pub muted_label: String,
    /// Legend for missing cells, shown when one is drawn; empty: none.
    pub missing_label: String,
}

/// Maps of one quantity that are compared, drawn one above the other on
/// one colour scale with one colour bar and one legend.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatMapGroup {
    pub title: String,
    /// The panels, top to bottom; each map's title names its panel (the
    /// target). The scale is the first map's (`value_label`, `diverging`,
    /// `log`, `range`), over the values of every map when `range` is `None`.
    pub maps: Vec<HeatMap>,
}

/// Height of one panel of a [`HeatMapGroup`].
const PANEL_HEIGHT: u32 = 300;

/// Slices of the colour bar, one `<rect>` each.
pub(crate) const COLORBAR_STEPS: usize = 32;
const COLORBAR_TICKS: usize = 7;
const COLORBAR_W: i32 = 14;
/// Gap between matrix and colour bar, and around labels.
const GAP: i32 = 14;
/// Missing cells: light grey with a slash, unlike any colour of the scales.
const MISSING: Rgb = Rgb(0xee, 0xee, 0xee);
const MISSING_SLASH: RGBColor = RGBColor(0xc4, 0xc4, 0xc4);
/// Muted cells: their colour mixed this far toward [`MUTED_GREY`], hatched.
const MUTED_MIX: f64 = 0.6;
const MUTED_GREY: Rgb = Rgb(0xc8, 0xc8, 0xc8);
const HATCH: RGBColor = RGBColor(0x90, 0x90, 0x90);
/// Distance between hatch lines, in pixels along x.
const HATCH_STEP: i32 = 7;
/// Legend swatches.
const SWATCH: (i32, i32) = (18, 12);

/// Matplotlib's viridis, sampled at ten evenly spaced points.
const VIRIDIS: [Rgb; 10] = [
    Rgb(0x44, 0x01, 0x54),
    Rgb(0x48, 0x28, 0x78),
    Rgb(0x3e, 0x49, 0x89),
    Rgb(0x31, 0x68, 0x8e),
    Rgb(0x26, 0x82, 0x8e),
    Rgb(0x1f, 0x9e, 0x89),
    Rgb(0x35, 0xb7, 0x79),
    Rgb(0x6e, 0xce, 0x58),
    Rgb(0xb5, 0xde, 0x2b),
    Rgb(0xfd, 0xe7, 0x25),
];

/// ColorBrewer RdBu, blue for negative, white at 0, red for positive.
const BLUE_WHITE_RED: [Rgb; 9] = [
    Rgb(0x21, 0x66, 0xac),
    Rgb(0x43, 0x93, 0xc3),
    Rgb(0x92, 0xc5, 0xde),
    Rgb(0xd1, 0xe5, 0xf0),
    Rgb(0xf7, 0xf7, 0xf7),
    Rgb(0xfd, 0xdb, 0xc7),
    Rgb(0xf4, 0xa5, 0x82),
    Rgb(0xd6, 0x60, 0x4d),
    Rgb(0xb2, 0x18, 0x2b),
];

/// Renders `c` as SVG; "no data" when no cell holds a finite value.
pub fn heatmap(c: &HeatMap) -> Result<String> {
    let values = c.cells.iter().flatten().filter_map(|v| *v);
    let Some(extent) = finite_extent(values) else {
        return no_data(&c.title);
    };
    let extent = c
        .range
        .and_then(|(a, b)| finite_extent([a, b]))
        .unwrap_or(extent);
    let scale = Scale::new(extent, c.diverging, c.log);
    render(&c.title, (WIDTH, HEIGHT), |root| draw(root, c, &scale))
}

/// Renders the maps of `g` one above the other on one colour scale, with
/// one colour bar and one legend; "no data" when no cell of any map holds
/// a finite value.
pub fn heatmap_group(g: &HeatMapGroup) -> Result<String> {
    let Some(scale) = group_scale(&g.maps) else {
        return no_data(&g.title);
    };
    let height = HEIGHT - PANEL_HEIGHT + PANEL_HEIGHT * g.maps.len() as u32;
    render(&g.title, (WIDTH, height), |root| {
        draw_group(root, g, &scale)
    })
}

/// The one scale of `maps`: the first map's kind and range, else the
/// extent of every map's values; `None` when no cell holds a value.
fn group_scale(maps: &[HeatMap]) -> Option<Scale> {
    let first = maps.first()?;
    let values = maps
        .iter()
        .flat_map(|m| m.cells.iter().flatten().filter_map(|v| *v));
    let extent = finite_extent(values)?;
    let extent = first
        .range
        .and_then(|(a, b)| finite_extent([a, b]))
        .unwrap_or(extent);
    Some(Scale::new(extent, first.diverging, first.log))
}

/// Maps values to colours and formats them.
#[derive(Debug, PartialEq)]
struct Scale {
    lo: f64,
    hi: f64,
    diverging: bool,
    log: bool,
}

impl Scale {
    /// Sequential scales span the data; diverging ones are symmetric about
    /// 0; a log scale spans the positive values.
    fn new((lo, hi): (f64, f64), diverging: bool, log: bool) -> Scale {
        if diverging {
            let m = lo.abs().max(hi.abs());
            let m = if m > 0.0 { m } else { 1.0 };
            return Scale {
                lo: -m,
                hi: m,
                diverging,
                log: false,
            };
        }
        if log && hi > 0.0 {
            let lo = if lo > 0.0 { lo } else { hi / 10.0 };
            let (lo, hi) = if hi > lo * 1.001 {
                (lo, hi)
            } else {
                (lo / 2.0, hi * 2.0)
            };
            return Scale {
                lo,
                hi,
                diverging,
                log,
            };
        }
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            (lo - 1.0, hi + 1.0)
        };
        Scale {
            lo,
            hi,
            diverging,
            log: false,
        }
    }

    /// Where `v` sits on the scale, 0 at `lo` and 1 at `hi`.
    fn position(&self, v: f64) -> f64 {
        if self.log {
            let v = v.max(self.lo);
            return (v / self.lo).ln() / (self.hi / self.lo).ln();
        }
        (v - self.lo) / (self.hi - self.lo)
    }

    /// The value at position `t`.
    fn value_at(&self, t: f64) -> f64 {
        if self.log {
            return self.lo * (self.hi / self.lo).powf(t);
        }
        self.lo + (self.hi - self.lo) * t
    }

    fn color(&self, v: f64) -> Rgb {
        let ramp: &[Rgb] = if self.diverging {
            &BLUE_WHITE_RED
        } else {
            &VIRIDIS
        };
        interpolate(ramp, self.position(v))
    }

    /// Texts for a cell value, most precise first.
    fn cell_texts(&self, v: f64) -> [String; 2] {
        if self.diverging {
            [percent(v), percent_whole(v)]
        } else {
            [si(v), si_digits(v, 2)]
        }
    }

    /// Labelled values of the colour bar, and their labels.
    fn ticks(&self) -> Vec<(f64, String)> {
        if self.log {
            return self.log_ticks();
        }
        let format = TickFormat::for_range(self.lo, self.hi, COLORBAR_TICKS);
        nice_ticks(self.lo, self.hi, COLORBAR_TICKS)
            .into_iter()
            .map(|v| {
                let text = format.format(v);
                let text = match (self.diverging, v > 0.0) {
                    (true, true) => format!("+{text}%"),
                    (true, false) => format!("{text}%"),
                    (false, _) => text,
                };
                (v, text)
            })
            .collect()
    }

    /// The powers of ten within a log scale, with 2× and 5× between them
    /// when it spans few decades.
    fn log_ticks(&self) -> Vec<(f64, String)> {
        let span = (self.hi / self.lo).log10();
        let steps: &[f64] = if span <= 2.5 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let first = self.lo.log10().floor() as i32;
        let last = self.hi.log10().ceil() as i32;
        let mut out = Vec::new();
        for k in first..=last {
            for m in steps {
                let v = m * 10f64.powi(k);
                if v >= self.lo * 0.999 && v <= self.hi * 1.001 {
                    out.push((v, si(v)));
                }
            }
        }
        out
    }
}

/// The colour at `t` in 0..=1 along viridis, the heat maps' sequential
/// scale: for series ordered by a size (the matrix's record sizes), so
/// that neighbouring sizes get neighbouring colours.
pub fn sequential_color(t: f64) -> Rgb {
    interpolate(&VIRIDIS, t)
}

/// The colour at `t` in 0..=1 along evenly spaced `stops`.
fn interpolate(stops: &[Rgb], t: f64) -> Rgb {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.5
    };
    let pos = t * (stops.len() - 1) as f64;
    let i = (pos.floor() as usize).min(stops.len() - 2);
    stops[i].mix(stops[i + 1], pos - i as f64)
}

/// Pixel boxes of the parts of the chart.
struct Layout {
    /// Matrix: left, top, right, bottom.
    grid: (i32, i32, i32, i32),
    rows: usize,
    cols: usize,
}

impl Layout {
    fn cell(&self, row: usize, col: usize) -> (i32, i32, i32, i32) {
        let (l, t, r, b) = self.grid;
        let x = |c: usize| l + ((r - l) as f64 * c as f64 / self.cols as f64).round() as i32;
        let y = |r: usize| t + ((b - t) as f64 * r as f64 / self.rows as f64).round() as i32;
        (x(col), y(row), x(col + 1), y(row + 1))
    }

    fn cell_size(&self) -> (f64, f64) {
        let (l, t, r, b) = self.grid;
        (
            f64::from(r - l) / self.cols as f64,
            f64::from(b - t) / self.rows as f64,
        )
    }
}

fn draw(root: &Area<'_>, c: &HeatMap, scale: &Scale) -> Result<()> {
    let area = draw_title(root, &c.title)?;
    let layout = layout(&area, c, scale, has_legend(c));
    draw_matrix(root, &layout, scale, c)?;
    draw_colorbar(
        root,
        (layout.grid.1, layout.grid.2, layout.grid.3),
        scale,
        &c.value_label,
    )?;
    draw_legend(root, &layout, &legend(c, &layout))?;
    Ok(())
}

/// The panels of a group, each under its map's title; the colour bar from
/// the top of the first to the bottom of the last; one legend under the
/// last, naming the kinds of cell any panel drew.
fn draw_group(root: &Area<'_>, g: &HeatMapGroup, scale: &Scale) -> Result<()> {
    let area = draw_title(root, &g.title)?;
    let panels = area.split_evenly((g.maps.len(), 1));
    let last = g.maps.len() - 1;
    let mut entries: Vec<(bool, String)> = Vec::new();
    let mut layouts = Vec::new();
    for (i, (panel, map)) in panels.iter().zip(&g.maps).enumerate() {
        let sub = draw_subtitle(panel, &map.title)?;
        let legend_room = i == last && g.maps.iter().any(has_legend);
        let layout = layout(&sub, map, scale, legend_room);
        draw_matrix(root, &layout, scale, map)?;
        for e in legend(map, &layout) {
            if !entries.contains(&e) {
                entries.push(e);
            }
        }
        layouts.push(layout);
    }
    let (top, bottom) = (layouts[0].grid.1, layouts[last].grid.3);
    let right = layouts.iter().map(|l| l.grid.2).max().unwrap_or(0);
    draw_colorbar(root, (top, right, bottom), scale, &g.maps[0].value_label)?;
    entries.sort_by_key(|(missing, _)| !missing);
    draw_legend(root, &layouts[last], &entries)
}

/// A panel's title, bold, left above its matrix; returns the area below.
fn draw_subtitle<'a>(panel: &Area<'a>, title: &str) -> Result<Area<'a>> {
    let (w, _) = panel.dim_in_pixel();
    let text = fit_text(title, AXIS_TITLE_SIZE, w.saturating_sub(24));
    let style = anchored(AXIS_TITLE_SIZE, HPos::Center, VPos::Top);
    panel.draw_text(&text, &style, (w as i32 / 2, 4))?;
    Ok(panel.margin((LINE_HEIGHT + 10) as u32, 0, 0, 0))
}

/// The cells, tick labels and axis titles of one map.
fn draw_matrix(root: &Area<'_>, layout: &Layout, scale: &Scale, c: &HeatMap) -> Result<()> {
    for row in 0..layout.rows {
        for col in 0..layout.cols {
            let look = Look {
                value: cell_value(c, row, col),
                muted: is_muted(c, row, col),
            };
            draw_cell(root, layout, scale, (row, col), look)?;
        }
    }
    draw_ticks(root, layout, c)?;
    draw_axis_titles(root, layout, c)
}

/// What one cell shows.
#[derive(Clone, Copy)]
struct Look {
    value: Option<f64>,
    muted: bool,
}

fn is_muted(c: &HeatMap, row: usize, col: usize) -> bool {
    c.muted
        .get(row)
        .and_then(|r| r.get(col).copied())
        .unwrap_or(false)
}

/// Legend entries: (missing?, text), for the kinds of cell actually drawn.
fn legend(c: &HeatMap, layout: &Layout) -> Vec<(bool, String)> {
    let cells = || (0..layout.rows).flat_map(|r| (0..layout.cols).map(move |k| (r, k)));
    let any_missing = cells().any(|(r, k)| cell_value(c, r, k).is_none());
    let any_muted = cells().any(|(r, k)| cell_value(c, r, k).is_some() && is_muted(c, r, k));
    let mut out = Vec::new();
    if any_missing && !c.missing_label.is_empty() {
        out.push((true, c.missing_label.clone()));
    }
    if any_muted && !c.muted_label.is_empty() {
        out.push((false, c.muted_label.clone()));
    }
    out
}

fn cell_value(c: &HeatMap, row: usize, col: usize) -> Option<f64> {
    c.cells
        .get(row)
        .and_then(|r| r.get(col).copied().flatten())
        .filter(|&v| plottable(v))
}

/// Where the parts of `c` go in `area`; `legend`: leave a line for the
/// legend under the x title.
fn layout(area: &Area<'_>, c: &HeatMap, scale: &Scale, legend: bool) -> Layout {
    let (xs, ys) = area.get_pixel_range();
    let rows = c.y_ticks.len().max(c.cells.len()).max(1);
    let cols = c.cells.iter().map(Vec::len).max().unwrap_or(0);
    let cols = c.x_ticks.len().max(cols).max(1);
    let y_ticks_w = c.y_ticks.iter().map(|t| text_width(t, LABEL_SIZE)).max();
    let bar_labels_w = scale
        .ticks()
        .iter()
        .map(|(_, text)| text_width(text, SMALL_SIZE))
        .max();
    let left = xs.start + 10 + LINE_HEIGHT + 8 + y_ticks_w.unwrap_or(0) as i32 + 8;
    let right = xs.end - 10 - LINE_HEIGHT - 8 - bar_labels_w.unwrap_or(0) as i32 - 6;
    let right = right - COLORBAR_W - GAP;
    let top = ys.start + 12;
    let bottom = ys.end - 10 - LINE_HEIGHT - 8 - LINE_HEIGHT - 8;
    let bottom = bottom - if legend { LINE_HEIGHT + 10 } else { 0 };
    Layout {
        grid: (
            left,
            top,
            right.max(left + cols as i32),
            bottom.max(top + rows as i32),
        ),
        rows,
        cols,
    }
}

/// Whether the chart may draw a legend: some label is set.
fn has_legend(c: &HeatMap) -> bool {
    !c.missing_label.is_empty() || !c.muted_label.is_empty()
}

/// One cell: its colour (grey when missing, faded and hatched when muted)
/// and its value if it fits.
fn draw_cell(
    root: &Area<'_>,
    layout: &Layout,
    scale: &Scale,
    (row, col): (usize, usize),
    look: Look,
) -> Result<()> {
    let (l, t, r, b) = layout.cell(row, col);
    let Some(v) = look.value else {
        return draw_missing(root, (l, t, r - 1, b - 1));
    };
    let mut fill = scale.color(v);
    if look.muted {
        fill = fill.mix(MUTED_GREY, MUTED_MIX);
    }
    let rect = Rectangle::new([(l, t), (r - 1, b - 1)], RGBColor::from(fill).filled());
    root.draw(&rect)?;
    if look.muted {
        draw_hatch(root, (l, t, r - 1, b - 1))?;
    }
    let room = r - l - 5;
    let text = scale
        .cell_texts(v)
        .into_iter()
        .find(|text| text_width(text, SMALL_SIZE) as i32 <= room);
    if let (Some(text), true) = (text, b - t > 12) {
        let ink = if fill.luma() < 128.0 { WHITE } else { BLACK };
        let style = anchored(SMALL_SIZE, HPos::Center, VPos::Center).color(&ink);
        root.draw_text(&text, &style, ((l + r - 1) / 2, (t + b - 1) / 2))?;
    }
    Ok(())
}

/// A missing cell in the box `(l, t, r, b)`: light grey with a slash.
fn draw_missing(root: &Area<'_>, (l, t, r, b): (i32, i32, i32, i32)) -> Result<()> {
    let rect = Rectangle::new([(l, t), (r, b)], RGBColor::from(MISSING).filled());
    root.draw(&rect)?;
    let slash = vec![(l + 2, b - 2), (r - 2, t + 2)];
    root.draw(&PathElement::new(slash, MISSING_SLASH.stroke_width(1)))?;
    Ok(())
}

/// Parallel lines at 45° across the box `(l, t, r, b)`, clipped to it.
fn draw_hatch(root: &Area<'_>, (l, t, r, b): (i32, i32, i32, i32)) -> Result<()> {
    for (from, to) in hatch_lines((l, t, r, b)) {
        root.draw(&PathElement::new(vec![from, to], HATCH.stroke_width(1)))?;
    }
    Ok(())
}

type Segment = ((i32, i32), (i32, i32));

/// The hatch lines of a box: rising left to right, [`HATCH_STEP`] apart,
/// each clipped to the box.
fn hatch_lines((l, t, r, b): (i32, i32, i32, i32)) -> Vec<Segment> {
    let (w, h) = (r - l, b - t);
    let mut out = Vec::new();
    // Line k starts at (l + d, b) and rises one pixel per pixel to the right.
    let mut d = HATCH_STEP / 2 - h;
    while d < w {
        let (x0, y0) = if d < 0 { (l, b + d) } else { (l + d, b) };
        let end = d + h;
        let (x1, y1) = if end > w {
            (r, t + (end - w))
        } else {
            (l + end, t)
        };
        if x1 > x0 {
            out.push(((x0, y0), (x1, y1)));
        }
        d += HATCH_STEP;
    }
    out
}

/// The legend under the x title: a swatch and its text per entry, left to
/// right; text that would run past the colour bar is shortened.
fn draw_legend(root: &Area<'_>, layout: &Layout, items: &[(bool, String)]) -> Result<()> {
    let (l, _, r, b) = layout.grid;
    let y = b + 6 + LINE_HEIGHT + 10 + LINE_HEIGHT + 10;
    let end = r + GAP + COLORBAR_W;
    let style = anchored(SMALL_SIZE, HPos::Left, VPos::Center);
    let mut x = l;
    for (missing, text) in items {
        let room = (end - x - SWATCH.0 - 6).max(0) as u32;
        let text = fit_text(text, SMALL_SIZE, room);
        let swatch = (x, y, x + SWATCH.0, y + SWATCH.1);
        if *missing {
            draw_missing(root, swatch)?;
        } else {
            let fill = RGBColor::from(Rgb(0xf7, 0xf7, 0xf7).mix(MUTED_GREY, MUTED_MIX));
            root.draw(&Rectangle::new(
                [(x, y), (swatch.2, swatch.3)],
                fill.filled(),
            ))?;
            draw_hatch(root, swatch)?;
        }
        root.draw_text(&text, &style, (x + SWATCH.0 + 6, y + SWATCH.1 / 2))?;
        x += SWATCH.0 + 6 + text_width(&text, SMALL_SIZE) as i32 + 24;
    }
    Ok(())
}

/// Every `stride`-th label along an axis, so labels never overlap.
fn stride(widest: f64, cell: f64) -> usize {
    if cell <= 0.0 {
        return 1;
    }
    (widest / cell).ceil().max(1.0) as usize
}

/// Column names under the matrix, row names to its left.
fn draw_ticks(root: &Area<'_>, layout: &Layout, c: &HeatMap) -> Result<()> {
    let (cell_w, cell_h) = layout.cell_size();
    let (l, _, _, b) = layout.grid;
    let widest = c.x_ticks.iter().map(|t| text_width(t, LABEL_SIZE)).max();
    let every = stride(f64::from(widest.unwrap_or(0) + 6), cell_w);
    let style = anchored(LABEL_SIZE, HPos::Center, VPos::Top);
    for (col, tick) in c.x_ticks.iter().enumerate().step_by(every) {
        let (cl, _, cr, _) = layout.cell(0, col);
        root.draw_text(tick, &style, ((cl + cr) / 2, b + 6))?;
    }
    let every = stride(f64::from(LINE_HEIGHT), cell_h);
    let style = anchored(LABEL_SIZE, HPos::Right, VPos::Center);
    for (row, tick) in c.y_ticks.iter().enumerate().step_by(every) {
        let (_, ct, _, cb) = layout.cell(row, 0);
        root.draw_text(tick, &style, (l - 8, (ct + cb) / 2))?;
    }
    Ok(())
}

/// The x title under the column names, the y title rotated on the left.
fn draw_axis_titles(root: &Area<'_>, layout: &Layout, c: &HeatMap) -> Result<()> {
    let (l, t, r, b) = layout.grid;
    let x_title = fit_text(&c.x_label, AXIS_TITLE_SIZE, (r - l).max(0) as u32);
    let style = anchored(AXIS_TITLE_SIZE, HPos::Center, VPos::Top);
    root.draw_text(&x_title, &style, ((l + r) / 2, b + 6 + LINE_HEIGHT + 10))?;
    let y_title = fit_text(&c.y_label, AXIS_TITLE_SIZE, (b - t).max(0) as u32);
    let style =
        anchored(AXIS_TITLE_SIZE, HPos::Center, VPos::Top).transform(FontTransform::Rotate270);
    root.draw_text(&y_title, &style, (10, (t + b) / 2))?;
    Ok(())
}

/// The colour bar right of the matrix whose grid ends at `r`, from `t`
/// down to `b`: slices, tick labels, rotated title.
fn draw_colorbar(
    root: &Area<'_>,
    (t, r, b): (i32, i32, i32),
    scale: &Scale,
    label: &str,
) -> Result<()> {
    let x0 = r + GAP;
    let x1 = x0 + COLORBAR_W;
    let h = f64::from(b - t);
    let y_at = |frac: f64| b - (h * frac).round() as i32;
    for i in 0..COLORBAR_STEPS {
        let frac = |k: usize| k as f64 / COLORBAR_STEPS as f64;
        let mid = scale.value_at(frac(i) + frac(1) / 2.0);
        let fill = RGBColor::from(scale.color(mid)).filled();
        root.draw(&Rectangle::new(
            [(x0, y_at(frac(i + 1))), (x1, y_at(frac(i)))],
            fill,
        ))?;
    }
    root.draw(&Rectangle::new([(x0, t), (x1, b)], AXIS.stroke_width(1)))?;
    let style = anchored(SMALL_SIZE, HPos::Left, VPos::Center);
    for (v, text) in scale.ticks() {
        let y = y_at(scale.position(v));
        root.draw(&PathElement::new(
            vec![(x1, y), (x1 + 4, y)],
            AXIS.stroke_width(1),
        ))?;
        root.draw_text(&text, &style, (x1 + 7, y))?;
    }
    let (w, _) = root.dim_in_pixel();
    let title = fit_text(label, AXIS_TITLE_SIZE, (b - t).max(0) as u32);
    let style =
        anchored(AXIS_TITLE_SIZE, HPos::Center, VPos::Top).transform(FontTransform::Rotate90);
    root.draw_text(&title, &style, (w as i32 - 10, (t + b) / 2))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::canvas::test_util::*;
    use super::*;

    fn sizes(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    /// A triangular iozone matrix: record size ≤ file size.
    fn iozone(diverging: bool) -> HeatMap {
        let files = ["64k", "256k", "1M", "4M", "16M"];
        let records = ["4k", "16k", "64k", "256k", "1M", "4M", "16M"];
        let cells = (0..files.len())
            .map(|r| {
                (0..records.len())
                    .map(|c| (c <= r + 2).then(|| value(r, c, diverging)))
                    .collect()
            })
            .collect();
        HeatMap {
            title: "iozone write".to_string(),
            x_label: "record size (bytes)".to_string(),
            y_label: "file size (bytes)".to_string(),
            x_ticks: sizes(&records),
            y_ticks: sizes(&files),
            cells,
            value_label: "write (KB/s)".to_string(),
            diverging,
            log: false,
            range: None,
            muted: vec![],
            muted_label: String::new(),
            missing_label: String::new(),
        }
    }

    fn value(r: usize, c: usize, diverging: bool) -> f64 {
        if diverging {
            (r as f64 - 2.0) * 10.0 + c as f64
        } else {
            1e5 * (1.0 + r as f64) * (1.0 + c as f64)
        }
    }

    #[test]
    fn one_rect_per_cell_plus_colorbar() {
        let c = iozone(false);
        let svg = heatmap(&c).unwrap();
        assert_inline_svg(&svg);
        let cells = c.y_ticks.len() * c.x_ticks.len();
        // Background, cells, colour-bar slices and its frame.
        assert_eq!(count(&svg, "<rect "), 1 + cells + COLORBAR_STEPS + 1);
        let missing = c.cells.iter().flatten().filter(|v| v.is_none()).count();
        assert_eq!(count_filled(&svg, "rect", &MISSING), missing);
        let slash = format!("stroke=\"{}\"", Rgb(0xc4, 0xc4, 0xc4).hex().to_uppercase());
        assert_eq!(count(&svg, &slash), missing);
        for text in [
            "iozone write",
            "record size (bytes)",
            "file size (bytes)",
            "write (KB/s)",
        ] {
            assert!(svg.contains(text), "{text}");
        }
        for tick in c.x_ticks.iter().chain(&c.y_ticks) {
            assert!(svg.contains(&format!(">\n{tick}\n</text>")), "{tick}");
        }
        assert!(
            svg.contains(">\n100k\n</text>"),
            "smallest value printed in its cell"
        );
    }

    #[test]
    fn diverging_scale_is_centred_at_zero() {
        let svg = heatmap(&iozone(true)).unwrap();
        assert!(
            svg.contains(">\n0%\n</text>"),
            "colour bar has 0 in the middle"
        );
        assert!(svg.contains(">\n-20%\n</text>") && svg.contains(">\n+20%\n</text>"));
        assert!(svg.contains(">\n-20.0%\n</text>") && svg.contains(">\n+26.0%\n</text>"));
        let scale = Scale::new((-5.0, 20.0), true, false);
        assert_eq!(scale.color(0.0), Rgb(0xf7, 0xf7, 0xf7));
        assert_eq!(scale.color(-20.0), BLUE_WHITE_RED[0]);
        assert_eq!(scale.color(20.0), BLUE_WHITE_RED[8]);
    }

    #[test]
    fn ragged_and_non_finite_cells_are_missing() {
        let mut c = iozone(false);
        c.cells = vec![
            vec![Some(1.0), Some(f64::NAN)],
            vec![Some(f64::INFINITY)],
            vec![],
        ];
        let svg = heatmap(&c).unwrap();
        let cells = c.y_ticks.len() * c.x_ticks.len();
        assert_eq!(count_filled(&svg, "rect", &MISSING), cells - 1);
        assert_eq!(
            Scale::new((1.0, 1.0), false, false).color(1.0),
            interpolate(&VIRIDIS, 0.5)
        );
    }

    #[test]
    fn crowded_tick_labels_are_thinned() {
        let mut c = iozone(false);
        c.x_ticks = (0..60).map(|i| format!("{i}M-record")).collect();
        let svg = heatmap(&c).unwrap();
        assert!(svg.contains(">\n0M-record\n</text>"));
        assert!(!svg.contains(">\n1M-record\n</text>"));
    }

    #[test]
    fn labels_are_escaped() {
        let mut c = iozone(false);
        c.y_ticks[0] = "<script>alert(1)</script>".to_string();
        c.value_label = "<svg onload=x>".to_string();
        let svg = heatmap(&c).unwrap();
        assert!(!svg.contains("<script"));
        assert_eq!(count(&svg, "<svg"), 1);
        assert!(svg.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    }

    #[test]
    fn muted_cells_are_hatched_and_named_in_the_legend() {
        let mut c = iozone(true);
        let rows = c.y_ticks.len();
        // The first measured cell of every row is not significant.
        c.muted = (0..rows).map(|_| vec![true]).collect();
        c.muted_label = "hatched: not significant".into();
        c.missing_label = "empty: record > file".into();
        let svg = heatmap(&c).unwrap();
        assert_inline_svg(&svg);
        let hatch = format!("stroke=\"{}\"", Rgb(0x90, 0x90, 0x90).hex().to_uppercase());
        assert!(
            count(&svg, &hatch) > rows,
            "hatched cells and the legend swatch"
        );
        assert!(svg.contains("hatched: not significant"));
        assert!(svg.contains("empty: record &gt; file"));
        let plain = heatmap(&iozone(true)).unwrap();
        assert_eq!(count(&plain, &hatch), 0);
        assert!(!plain.contains("not significant"));
        // Labels are only drawn for cells that exist.
        c.cells = vec![vec![Some(1.0); 7]; 5];
        c.muted = vec![];
        let svg = heatmap(&c).unwrap();
        assert!(!svg.contains("not significant") && !svg.contains("record &gt; file"));
    }

    #[test]
    fn hatch_lines_stay_inside_their_cell() {
        for (w, h) in [(40, 20), (20, 40), (3, 3), (100, 1)] {
            let lines = hatch_lines((10, 50, 10 + w, 50 + h));
            assert!(!lines.is_empty() || w.min(h) < HATCH_STEP, "{w}x{h}");
            for ((x0, y0), (x1, y1)) in lines {
                for (x, y) in [(x0, y0), (x1, y1)] {
                    assert!((10..=10 + w).contains(&x) && (50..=50 + h).contains(&y));
                }
                assert_eq!(x1 - x0, y0 - y1, "45 degrees");
            }
        }
    }

    #[test]
    fn a_shared_range_fixes_the_colours() {
        let mut a = iozone(false);
        a.range = Some((0.0, 1e7));
        let mut b = a.clone();
        for row in b.cells.iter_mut() {
            for v in row.iter_mut().flatten() {
                *v *= 2.0;
            }
        }
        // The same value gets the same colour in both maps.
        a.cells[0][0] = Some(5e6);
        b.cells[0][0] = Some(5e6);
        let mid = Scale::new((0.0, 1e7), false, false).color(5e6);
        assert!(count_filled(&heatmap(&a).unwrap(), "rect", &mid) >= 1);
        assert!(count_filled(&heatmap(&b).unwrap(), "rect", &mid) >= 1);
        assert!(
            heatmap(&a).unwrap().contains(">\n10M\n</text>"),
            "bar spans the range"
        );
    }

    #[test]
    fn a_log_scale_spreads_decades_evenly() {
        let mut c = iozone(false);
        c.log = true;
        c.cells = vec![vec![Some(1e3), Some(1e4), Some(1e5)]];
        let scale = Scale::new((1e3, 1e5), false, true);
        assert!((scale.position(1e4) - 0.5).abs() < 1e-12);
        let svg = heatmap(&c).unwrap();
        for v in [1e3, 1e4, 1e5] {
            assert!(count_filled(&svg, "rect", &scale.color(v)) >= 1, "{v}");
        }
        assert!(svg.contains(">\n10k\n</text>") && svg.contains(">\n100k\n</text>"));
        assert!(
            svg.contains(">\n2k\n</text>"),
            "few decades: 2× and 5× ticks too"
        );
        // Not positive: the lowest colour, no failure.
        assert_eq!(scale.color(0.0), scale.color(1e3));
    }

    /// Two targets' maps of one test: where one map's values are 20× the
    /// other's, the group still has one scale, over both.
    fn pair() -> HeatMapGroup {
        let mut fast = iozone(false);
        fast.title = "on fast".into();
        let mut slow = fast.clone();
        slow.title = "on slow".into();
        for row in slow.cells.iter_mut() {
            for v in row.iter_mut().flatten() {
                *v /= 20.0;
            }
        }
        HeatMapGroup {
            title: "iozone: write per target".into(),
            maps: vec![fast, slow],
        }
    }

    #[test]
    fn a_group_has_one_scale_over_every_map() {
        let g = pair();
        let scale = group_scale(&g.maps).unwrap();
        // iozone(false) spans 1e5..=3.5e6; the slow copy starts at 5e3.
        assert_eq!((scale.lo, scale.hi), (5e3, 3.5e6));
        // Each map alone would have had its own, unlike the other's.
        let own = |m: &HeatMap| group_scale(std::slice::from_ref(m)).unwrap();
        assert_ne!(own(&g.maps[0]), own(&g.maps[1]));
        // A range given by the first map wins, and its kind (log) holds.
        let mut ranged = g.clone();
        ranged.maps[0].range = Some((1.0, 1e7));
        ranged.maps[0].log = true;
        let s = group_scale(&ranged.maps).unwrap();
        assert_eq!((s.lo, s.hi, s.log), (1.0, 1e7, true));
        assert!(group_scale(&[]).is_none());
    }

    #[test]
    fn a_group_draws_one_colour_bar_and_one_legend() {
        let mut g = pair();
        for m in g.maps.iter_mut() {
            m.missing_label = "empty: record > file".into();
        }
        let svg = heatmap_group(&g).unwrap();
        assert_inline_svg(&svg);
        let cells = g.maps[0].y_ticks.len() * g.maps[0].x_ticks.len();
        // Background, both maps' cells, one colour bar and its frame, one
        // legend swatch.
        assert_eq!(
            count(&svg, "<rect "),
            1 + 2 * cells + COLORBAR_STEPS + 1 + 1
        );
        assert_eq!(count(&svg, "empty: record &gt; file"), 1, "one legend");
        assert_eq!(count(&svg, "write (KB/s)"), 1, "one colour bar title");
        for text in ["iozone: write per target", "on fast", "on slow"] {
            assert!(svg.contains(text), "{text}");
        }
        // The same value is the same colour in both panels: the slow map's
        // largest cell (3.5e6 / 20) is drawn in the colour the group's
        // scale gives it, not the top of a scale of its own.
        let scale = group_scale(&g.maps).unwrap();
        assert!(count_filled(&svg, "rect", &scale.color(3.5e6 / 20.0)) >= 1);
        assert_ne!(scale.color(3.5e6 / 20.0), VIRIDIS[9]);
        assert!(heatmap_group(&HeatMapGroup {
            title: "t".into(),
            maps: vec![]
        })
        .unwrap()
        .contains("no data"));
    }

    #[test]
    fn empty_input_says_no_data() {
        let mut c = iozone(false);
        c.cells = vec![];
        assert!(heatmap(&c).unwrap().contains("no data"));
        c.cells = vec![vec![None, Some(f64::NAN)]];
        let svg = heatmap(&c).unwrap();
        assert_inline_svg(&svg);
        assert!(svg.contains("no data"));
    }
}
