//! Shared plumbing for the charts: embedded font metrics, the SVG canvas,
//! title, "no data" placeholder, fitting text into a width, value ranges.

use std::sync::OnceLock;

use anyhow::{anyhow, Result};
use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontDesc, FontFamily, FontStyle};

/// Canvas width in pixels.
pub(crate) const WIDTH: u32 = 720;
/// Canvas height in pixels (charts with many rows grow taller).
pub(crate) const HEIGHT: u32 = 400;
/// Height of the "no data" placeholder.
const NO_DATA_HEIGHT: u32 = 120;

/// Font sizes in plotters units (the SVG `font-size` is this / 1.24).
pub(crate) const TITLE_SIZE: f64 = 20.0;
pub(crate) const AXIS_TITLE_SIZE: f64 = 16.0;
pub(crate) const LABEL_SIZE: f64 = 14.0;
/// Values printed on bars.
pub(crate) const VALUE_SIZE: f64 = 13.0;
pub(crate) const SMALL_SIZE: f64 = 12.0;
/// Vertical distance between lines of tick-label text, in pixels.
pub(crate) const LINE_HEIGHT: i32 = 14;

pub(crate) const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(crate) const MUTED: RGBColor = RGBColor(0x77, 0x77, 0x77);
pub(crate) const GRID: RGBColor = RGBColor(0xe2, 0xe2, 0xe2);
pub(crate) const AXIS: RGBColor = RGBColor(0x88, 0x88, 0x88);

const ELLIPSIS: char = '…';

/// The drawing area every chart draws on.
pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Registers DejaVu Sans (from the `dejavu` crate, compiled in) as plotters'
/// `sans-serif` family, once per process. Plotters only uses it to measure
/// text; the SVG names the generic family and the browser picks the face.
fn ensure_fonts() -> Result<()> {
    static REGISTERED: OnceLock<Result<(), &'static str>> = OnceLock::new();
    let registered = REGISTERED.get_or_init(|| {
        register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
            .map_err(|_| "DejaVu Sans")?;
        register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold())
            .map_err(|_| "DejaVu Sans Bold")
    });
    registered.map_err(|face| anyhow!("embedded font {face} failed to load"))
}

/// Text style in the chart font.
pub(crate) fn font(size: f64) -> TextStyle<'static> {
    FontDesc::new(FontFamily::SansSerif, size, FontStyle::Normal).color(&INK)
}

/// Text style anchored at `h`, `v`.
pub(crate) fn anchored(size: f64, h: HPos, v: VPos) -> TextStyle<'static> {
    font(size).pos(Pos::new(h, v))
}

/// Renders a `width` × `height` chart: white background, then `draw`.
/// Returns the SVG ready to inline (see [`finish`]).
pub(crate) fn render<F>(title: &str, size: (u32, u32), draw: F) -> Result<String>
where
    F: FnOnce(&Area<'_>) -> Result<()>,
{
    ensure_fonts()?;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
    }
    Ok(finish(&buf, title))
}

/// Makes plotters' output inline-ready: drops any XML declaration and labels
/// the `<svg>` for assistive technology with the chart title.
fn finish(svg: &str, title: &str) -> String {
    let mut svg = svg.trim();
    if svg.starts_with("<?xml") {
        svg = svg
            .find("?>")
            .map_or(svg, |end| svg[end + 2..].trim_start());
    }
    match svg.strip_prefix("<svg") {
        Some(rest) => format!(
            "<svg role=\"img\" aria-label=\"{}\"{rest}\n",
            xml_escape(title)
        ),
        None => format!("{svg}\n"),
    }
}

/// Escapes text for XML content and attribute values.
pub(crate) fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// A chart's plot on the SVG canvas, its x and y coordinates.
pub(crate) type ValuePlot<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// The room a y axis takes: its widest tick label of `labels`, and its
/// title.
pub(crate) fn y_label_area(labels: impl IntoIterator<Item = String>) -> u32 {
    labels
        .into_iter()
        .map(|l| text_width(&l, LABEL_SIZE))
        .max()
        .unwrap_or(0)
        + 36
}

/// The plot of a chart with value axes on `area`, the margins every such
/// chart shares, `y_label_area` pixels for the y axis.
pub(crate) fn value_plot<'a, 'b, X, Y>(
    area: &'a Area<'b>,
    y_label_area: u32,
    x: X,
    y: Y,
) -> Result<ValuePlot<'a, 'b, X::CoordDescType, Y::CoordDescType>>
where
    X: AsRangedCoord,
    Y: AsRangedCoord,
{
    Ok(ChartBuilder::on(area)
        .margin_left(10)
        .margin_right(20)
        .margin_top(10)
        .margin_bottom(6)
        .x_label_area_size(44)
        .y_label_area_size(y_label_area)
        .build_cartesian_2d(x, y)?)
}

/// Gives a chart's axes and grid the look every chart shares (axis titles,
/// tick labels, axis and grid colours, no minor grid lines) and draws them;
/// the caller has set which axes carry ticks, their formats and titles.
pub(crate) fn draw_mesh<X, Y>(mesh: &mut MeshStyle<'_, '_, X, Y, SVGBackend<'_>>) -> Result<()>
where
    X: Ranged + ValueFormatter<<X as Ranged>::ValueType>,
    Y: Ranged + ValueFormatter<<Y as Ranged>::ValueType>,
{
    mesh.axis_desc_style(font(AXIS_TITLE_SIZE))
        .label_style(font(LABEL_SIZE))
        .axis_style(AXIS)
        .bold_line_style(GRID)
        .max_light_lines(0)
        .draw()?;
    Ok(())
}

/// The axes of a chart with one slot per category along x (bars, campaigns)
/// and values up y: no x ticks or vertical grid, `y_ticks` value ticks
/// written by `format`, the y axis titled `y_label`.
pub(crate) fn draw_value_axis(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    y_ticks: usize,
    format: &dyn Fn(&f64) -> String,
    y_label: &str,
) -> Result<()> {
    draw_mesh(
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(y_ticks)
            .y_label_formatter(format)
            .y_desc(y_label),
    )
}

/// Most lines a chart title wraps to; past them it ends in "…".
const TITLE_LINES: usize = 3;

/// Draws the chart title centred at the top, wrapped rather than cut
/// (target and workload names can be long); returns the area below it.
pub(crate) fn draw_title<'a>(root: &Area<'a>, title: &str) -> Result<Area<'a>> {
    let (width, _) = root.dim_in_pixel();
    let style = FontDesc::new(FontFamily::SansSerif, TITLE_SIZE, FontStyle::Bold)
        .color(&INK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let lines = wrap_text(title, TITLE_SIZE, width.saturating_sub(24), TITLE_LINES);
    let line_px = (TITLE_SIZE * 1.15).round() as i32;
    for (i, line) in lines.iter().enumerate() {
        root.draw_text(line, &style, (width as i32 / 2, 5 + line_px * i as i32))?;
    }
    let used = 5 + line_px * lines.len() as i32 + 6;
    Ok(root.margin(used.max(0) as u32, 0, 0, 0))
}

/// A small SVG with the title and "no data", for charts with nothing to show.
pub(crate) fn no_data(title: &str) -> Result<String> {
    render(title, (WIDTH, NO_DATA_HEIGHT), |root| {
        let area = draw_title(root, title)?;
        let (w, h) = area.dim_in_pixel();
        let style = anchored(AXIS_TITLE_SIZE, HPos::Center, VPos::Center).color(&MUTED);
        area.draw_text("no data", &style, (w as i32 / 2, h as i32 / 2))?;
        Ok(())
    })
}

/// Width of `text` in pixels as laid out by plotters.
pub(crate) fn text_width(text: &str, size: f64) -> u32 {
    if text.is_empty() {
        return 0;
    }
    FontDesc::new(FontFamily::SansSerif, size, FontStyle::Normal)
        .box_size(text)
        .map(|(w, _)| w)
        // Unreachable once the font is registered; a wide guess otherwise.
        .unwrap_or_else(|_| (text.chars().count() as f64 * size * 0.62) as u32)
}

/// `text`, or its longest prefix plus "…" that fits in `max_width` pixels.
pub(crate) fn fit_text(text: &str, size: f64, max_width: u32) -> String {
    if text_width(text, size) <= max_width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let shortened = |keep: usize| -> String { chars[..keep].iter().chain([&ELLIPSIS]).collect() };
    // Binary search for the longest prefix that fits: labels can be long.
    let (mut fits, mut too_long) = (0, chars.len());
    while too_long - fits > 1 {
        let mid = (fits + too_long) / 2;
        if text_width(&shortened(mid), size) <= max_width {
            fits = mid;
        } else {
            too_long = mid;
        }
    }
    shortened(fits)
}

/// Each of `texts` fitted into `max_width` pixels, never two the same
/// where the texts differ: labels that share a long start (Gluster
/// options, swept parameters) keep their ends, `vm[perf…invalidate=on]`,
/// or, where their ends are alike too, lose the start they all share.
pub(crate) fn fit_distinct(texts: &[String], size: f64, max_width: u32) -> Vec<String> {
    let plain: Vec<String> = texts.iter().map(|t| fit_text(t, size, max_width)).collect();
    let middle = |texts: &[String]| -> Vec<String> {
        texts
            .iter()
            .map(|t| match text_width(t, size) <= max_width {
                true => t.clone(),
                false => fit_middle(t, size, max_width),
            })
            .collect()
    };
    [middle(texts), middle(&without_common_start(texts))]
        .into_iter()
        .fold(plain, |best, next| match distinct(texts, &best) {
            true => best,
            false => next,
        })
}

/// Whether no two of `shown` read the same where their `texts` differ.
fn distinct<T: Eq + std::hash::Hash>(texts: &[String], shown: &[T]) -> bool {
    // Each shown form's text, the first that reads so: one pass, not one
    // per pair of texts (an overview of thousands of workloads).
    let mut text_of: std::collections::HashMap<&T, &String> = std::collections::HashMap::new();
    texts
        .iter()
        .zip(shown)
        .all(|(text, s)| *text_of.entry(s).or_insert(text) == text)
}

/// Each of `texts` wrapped as [`wrap_text`] does; where two would still
/// read the same (names that differ past what fits), each is fitted on
/// one line by [`fit_distinct`] instead, so that no two read the same.
pub(crate) fn wrap_distinct(
    texts: &[String],
    size: f64,
    max_width: u32,
    max_lines: usize,
) -> Vec<Vec<String>> {
    let wrap = |texts: &[String]| -> Option<Vec<Vec<String>>> {
        let wrapped: Vec<Vec<String>> = texts
            .iter()
            .map(|t| wrap_text(t, size, max_width, max_lines))
            .collect();
        distinct(texts, &wrapped).then_some(wrapped)
    };
    wrap(texts)
        .or_else(|| wrap(&without_common_start(texts)))
        .unwrap_or_else(|| {
            fit_distinct(texts, size, max_width)
                .into_iter()
                .map(|t| vec![t])
                .collect()
        })
}

/// `texts` with the start they all share (`vm[gluster.mount_options=[`)
/// replaced by "…", where it is longer than a few characters.
fn without_common_start(texts: &[String]) -> Vec<String> {
    let chars: Vec<Vec<char>> = texts.iter().map(|t| t.chars().collect()).collect();
    let shortest = chars.iter().map(Vec::len).min().unwrap_or(0);
    let common = (0..shortest)
        .take_while(|&k| chars.iter().all(|c| c[k] == chars[0][k]))
        .count();
    match common > 6 && texts.len() > 1 {
        true => chars
            .iter()
            .map(|c| {
                std::iter::once(ELLIPSIS)
                    .chain(c[common..].iter().copied())
                    .collect()
            })
            .collect(),
        false => texts.to_vec(),
    }
}

/// `text` with its middle replaced by "…" so that it fits: its start and,
/// as much as fits, its end.
fn fit_middle(text: &str, size: f64, max_width: u32) -> String {
    let chars: Vec<char> = text.chars().collect();
    let head = chars.len().min(6);
    let with_tail = |tail: usize| -> String {
        chars[..head]
            .iter()
            .chain([&ELLIPSIS])
            .chain(&chars[chars.len() - tail..])
            .collect()
    };
    let mut tail = chars.len() - head;
    while tail > 0 && text_width(&with_tail(tail), size) > max_width {
        tail -= 1;
    }
    with_tail(tail)
}

/// Breaks `text` into at most `max_lines` lines of `max_width` pixels,
/// preferring breaks after separators common in target names (`-_/.: ,`);
/// the last line ends in "…" when the text does not fit.
pub(crate) fn wrap_text(text: &str, size: f64, max_width: u32, max_lines: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for token in break_tokens(text) {
        let joined = format!("{current}{token}");
        if text_width(joined.trim_end(), size) <= max_width {
            current = joined;
            continue;
        }
        if !current.trim().is_empty() {
            lines.push(current.trim_end().to_string());
        }
        current = hard_break(token.trim_start(), size, max_width, &mut lines);
    }
    if !current.trim().is_empty() {
        lines.push(current.trim_end().to_string());
    }
    if lines.len() > max_lines.max(1) {
        let keep = max_lines.max(1) - 1;
        let rest = join_broken(&lines[keep..]);
        lines.truncate(keep);
        lines.push(fit_text(&format!("{rest}…"), size, max_width));
    }
    lines
}

/// Rejoins wrapped lines: directly after a kept separator, else with a space.
fn join_broken(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        if !out.is_empty() && !out.ends_with(['-', '_', '/', '.', ':']) {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

/// Splits after each separator, keeping the separator on the left piece.
fn break_tokens(text: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '-' | '_' | '/' | '.' | ':' | ' ' | ',') {
            let end = i + c.len_utf8();
            tokens.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        tokens.push(&text[start..]);
    }
    tokens
}

/// Pushes full-width chunks of an over-long `token` onto `lines`; returns
/// the remainder that starts the next line.
fn hard_break(token: &str, size: f64, max_width: u32, lines: &mut Vec<String>) -> String {
    let mut chunk = String::new();
    for c in token.chars() {
        chunk.push(c);
        if text_width(&chunk, size) > max_width && chunk.chars().count() > 1 {
            chunk.pop();
            lines.push(std::mem::take(&mut chunk));
            chunk.push(c);
        }
    }
    chunk
}

/// Largest magnitude drawn. Beyond it values count as infinite: spans and
/// paddings of plottable values then stay finite, and so does axis layout.
const PLOTTABLE_MAX: f64 = 1e300;

/// Whether `v` can be drawn: finite and at most [`PLOTTABLE_MAX`] in size.
pub(crate) fn plottable(v: f64) -> bool {
    v.is_finite() && v.abs() <= PLOTTABLE_MAX
}

/// Smallest and largest of the plottable `values`, if any.
pub(crate) fn finite_extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|&v| plottable(v))
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// A confidence interval usable for drawing: both ends plottable, ordered.
pub(crate) fn finite_ci(ci: Option<(f64, f64)>) -> Option<(f64, f64)> {
    let (a, b) = ci?;
    (plottable(a) && plottable(b)).then(|| (a.min(b), a.max(b)))
}

/// Value range for bars drawn from 0: includes 0 and `extent`, padded by
/// `pad` × span on each side that holds bars (room for value labels).
pub(crate) fn zero_based_range(extent: (f64, f64), pad: f64) -> (f64, f64) {
    let lo = extent.0.min(0.0);
    let hi = extent.1.max(0.0);
    let span = if hi - lo > 0.0 { hi - lo } else { 1.0 };
    let lo = if lo < 0.0 { lo - pad * span } else { lo };
    let hi = if hi > 0.0 || lo == 0.0 {
        hi + pad * span
    } else {
        hi
    };
    (lo, hi)
}

/// A confidence-interval whisker (stem and caps, in chart coordinates):
/// white halos under dark strokes, so it shows on any bar colour.
pub(crate) fn draw_whisker_paths<CT: CoordTranslate>(
    area: &DrawingArea<SVGBackend<'_>, CT>,
    paths: &[Vec<CT::From>],
) -> Result<()>
where
    CT::From: Clone,
{
    for path in paths {
        area.draw(&PathElement::new(path.clone(), WHITE.stroke_width(4)))?;
    }
    for path in paths {
        area.draw(&PathElement::new(path.clone(), INK.stroke_width(2)))?;
    }
    Ok(())
}

/// A non-empty range around `lo..hi` for a linear axis.
pub(crate) fn nonempty(lo: f64, hi: f64) -> (f64, f64) {
    if hi > lo {
        (lo, hi)
    } else {
        let half = if lo == 0.0 { 0.5 } else { lo.abs() * 0.1 };
        (lo - half, hi + half)
    }
}

/// Most decades a log axis spans; plotters' log axis cannot cope with a
/// ratio beyond `f64::MAX`, and no chart is readable near that anyway.
const MAX_DECADES: f64 = 100.0;

/// Whole decades around the positive range `lo..hi`, for a log axis, at most
/// [`MAX_DECADES`] of them counting down from `hi`.
pub(crate) fn decades(lo: f64, hi: f64) -> (f64, f64) {
    let lo = lo.log10().floor().max(hi.log10().ceil() - MAX_DECADES);
    let lo = 10f64.powf(lo);
    let mut hi = 10f64.powf(hi.log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    (lo, hi)
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Assertions on rendered SVG text shared by the chart tests.

    /// Number of non-overlapping occurrences of `needle`.
    pub(crate) fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }

    /// Asserts the SVG is one inline-ready element.
    pub(crate) fn assert_inline_svg(svg: &str) {
        assert!(svg.starts_with("<svg "), "starts with: {}", &svg[..40]);
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(!svg.contains("<?xml"));
        assert!(!svg.contains("href"), "no external references");
        assert!(!svg.contains("url("), "no external references");
        assert!(svg.contains("font-family=\"sans-serif\""));
        assert_eq!(count(svg, "<svg"), 1);
    }

    /// Number of elements whose fill is `color` (plotters writes `#RRGGBB`).
    pub(crate) fn count_filled(svg: &str, tag: &str, color: &super::super::Rgb) -> usize {
        let fill = format!("fill=\"{}\"", color.hex().to_uppercase());
        svg.lines()
            .filter(|l| l.starts_with(&format!("<{tag} ")) && l.contains(&fill))
            .count()
    }

    /// Number of elements whose stroke is `color`.
    pub(crate) fn count_stroked(svg: &str, tag: &str, color: &super::super::Rgb) -> usize {
        let stroke = format!("stroke=\"{}\"", color.hex().to_uppercase());
        svg.lines()
            .filter(|l| l.starts_with(&format!("<{tag} ")) && l.contains(&stroke))
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;

    // Seed 000's targets differ in the middle and at the end: cut at the
    // end, or with the middle left out, two read alike (`vm[glu…
    // eallocation=off]`); each label must name its own target.
    #[test]
    fn labels_that_differ_in_the_middle_and_at_the_end_read_apart() {
        let texts: Vec<String> = ["[]", "[\"auto-invalidation=false\"]"]
            .iter()
            .flat_map(|o| {
                ["off", "full"].map(|p| format!("vm[gluster.mount_options={o},preallocation={p}]"))
            })
            .collect();
        ensure_fonts().unwrap();
        let fitted = fit_distinct(&texts, LABEL_SIZE, 160);
        let wrapped = wrap_distinct(&texts, LABEL_SIZE, 120, 3);
        for i in 0..texts.len() {
            for j in 0..i {
                assert_ne!(fitted[i], fitted[j], "{fitted:?}");
                assert_ne!(wrapped[i], wrapped[j], "{wrapped:?}");
            }
        }
        assert!(
            fitted.iter().all(|f| text_width(f, LABEL_SIZE) <= 160),
            "{fitted:?}"
        );
    }

    #[test]
    fn fitted_labels_that_would_read_alike_keep_their_ends() {
        let texts: Vec<String> = ["on", "off"]
            .iter()
            .map(|v| format!("vm[performance.cache-invalidation={v}]"))
            .collect();
        ensure_fonts().unwrap();
        let plain: Vec<String> = texts.iter().map(|t| fit_text(t, LABEL_SIZE, 150)).collect();
        assert_eq!(plain[0], plain[1], "the case: cut alike at the end");
        let fitted = fit_distinct(&texts, LABEL_SIZE, 150);
        assert_ne!(fitted[0], fitted[1]);
        assert!(
            fitted[0].ends_with("=on]") && fitted[1].ends_with("=off]"),
            "{fitted:?}"
        );
        assert!(fitted.iter().all(|f| text_width(f, LABEL_SIZE) <= 150));
    }

    #[test]
    fn no_data_is_a_small_valid_svg() {
        let svg = no_data("Empty <chart>").unwrap();
        assert_inline_svg(&svg);
        assert!(svg.contains("no data"));
        assert!(svg.contains("Empty &lt;chart&gt;"));
        assert!(svg.contains("height=\"120\""));
    }

    #[test]
    fn finish_strips_xml_declaration_and_labels_the_svg() {
        let out = finish("<?xml version=\"1.0\"?>\n<svg width=\"1\"></svg>", "a\"b");
        assert!(out.starts_with("<svg role=\"img\" aria-label=\"a&quot;b\" width=\"1\">"));
    }

    #[test]
    fn text_is_measured_with_the_embedded_font() {
        ensure_fonts().unwrap();
        let narrow = text_width("iiii", LABEL_SIZE);
        let wide = text_width("WWWW", LABEL_SIZE);
        assert!(narrow > 0 && wide > 2 * narrow, "{narrow} {wide}");
    }

    #[test]
    fn wrap_prefers_separators_and_truncates() {
        ensure_fonts().unwrap();
        let lines = wrap_text("ext4-nvme-noatime-journal", LABEL_SIZE, 80, 3);
        assert!(lines.len() >= 2, "{lines:?}");
        assert!(lines[0].ends_with('-'), "{lines:?}");
        assert!(lines.iter().all(|l| text_width(l, LABEL_SIZE) <= 80));
        let long = "a".repeat(200);
        let lines = wrap_text(&long, LABEL_SIZE, 60, 2);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].ends_with('…'));
        assert_eq!(wrap_text("xfs", LABEL_SIZE, 60, 2), ["xfs"]);
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(zero_based_range((0.0, 0.0), 0.1), (0.0, 0.1));
        assert_eq!(zero_based_range((-2.0, -1.0), 0.5), (-3.0, 0.0));
        assert_eq!(nonempty(5.0, 5.0), (4.5, 5.5));
        assert_eq!(decades(1234.0, 5.6e8), (1e3, 1e9));
        assert_eq!(decades(100.0, 100.0), (100.0, 1000.0));
        assert_eq!(decades(1e-300, 1e300), (1e200, 1e300));
        assert_eq!(
            finite_extent([f64::NAN, 2.0, f64::INFINITY, -1.0]),
            Some((-1.0, 2.0))
        );
        assert_eq!(finite_ci(Some((3.0, 1.0))), Some((1.0, 3.0)));
        assert_eq!(finite_ci(Some((f64::NAN, 1.0))), None);
    }
}
