//! SVG charts for the HTML report.
//!
//! Each chart function takes a plain description (data structs, no plotting
//! types) and returns one `<svg>` element as a string, ready to be inlined in
//! HTML: no XML declaration, no external reference of any kind, text set in
//! the generic `sans-serif` family so the reader's browser picks the face.
//!
//! Layout needs font metrics at render time; they come from DejaVu Sans,
//! compiled into the binary (crate `dejavu`), so rendering needs no font on
//! the machine. DejaVu Sans is wider than most browser sans-serif faces,
//! which makes the measured text boxes err on the roomy side.
//!
//! Empty input (or input with no finite value) yields a small "no data" SVG.

pub mod bar;
mod canvas;
pub mod capacity;
pub mod curve;
pub mod diff;
mod format;
pub mod heatmap;
pub mod history;
pub mod line;
pub mod overview;

pub use bar::{bar_chart, Bar, BarChart};
pub use capacity::{capacity_chart, CapacityChart, CapacityCurve, CapacityPoint};
pub use curve::{curve_chart, Curve, CurveChart, CurvePoint};
pub use diff::{diff_chart, DiffBar, DiffChart};
pub use heatmap::{heatmap, heatmap_group, sequential_color, HeatMap, HeatMapGroup};
pub use history::{history_chart, HistoryChart, HistoryPoint};
pub use line::{line_chart, Line, LineChart};
pub use overview::{overview_chart, Call, OverviewChart, OverviewRow};

use plotters::style::RGBColor;

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// CSS hex notation, lower case: `#0072b2`.
    pub fn hex(&self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// Mix with `other`; `t = 0` keeps `self`, `t = 1` gives `other`.
    pub(crate) fn mix(self, other: Rgb, t: f64) -> Rgb {
        let t = t.clamp(0.0, 1.0);
        let ch = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u8;
        Rgb(
            ch(self.0, other.0),
            ch(self.1, other.1),
            ch(self.2, other.2),
        )
    }

    /// Perceived brightness, 0..=255.
    pub(crate) fn luma(self) -> f64 {
        0.299 * f64::from(self.0) + 0.587 * f64::from(self.1) + 0.114 * f64::from(self.2)
    }
}

impl From<Rgb> for RGBColor {
    fn from(c: Rgb) -> RGBColor {
        RGBColor(c.0, c.1, c.2)
    }
}

/// The Okabe–Ito palette (colour-blind safe), ordered so that the first
/// colours have the best contrast on white; yellow comes late.
const OKABE_ITO: [Rgb; 8] = [
    Rgb(0x00, 0x72, 0xb2), // blue
    Rgb(0xe6, 0x9f, 0x00), // orange
    Rgb(0x00, 0x9e, 0x73), // bluish green
    Rgb(0xd5, 0x5e, 0x00), // vermillion
    Rgb(0xcc, 0x79, 0xa7), // reddish purple
    Rgb(0x56, 0xb4, 0xe9), // sky blue
    Rgb(0x00, 0x00, 0x00), // black
    Rgb(0xf0, 0xe4, 0x42), // yellow
];

/// Colour of the target at `index` (its position in the experiment), the
/// same in every chart. The eight Okabe–Ito colours come first; past eight,
/// the palette repeats darkened (black: dark grey), then lightened, then
/// from the start again.
pub fn target_color(index: usize) -> Rgb {
    let base = OKABE_ITO[index % OKABE_ITO.len()];
    let white = Rgb(0xff, 0xff, 0xff);
    match (index / OKABE_ITO.len()) % 3 {
        0 => base,
        // Black cannot get darker: it turns dark grey instead.
        1 if base.luma() < 40.0 => base.mix(white, 0.3),
        1 => base.mix(Rgb(0, 0, 0), 0.4),
        _ => base.mix(white, 0.5),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extreme_bar_input_renders() {
        let bars = (0..300)
            .map(|i| Bar {
                label: String::new(),
                value: f64::from(i) * 1e12,
                ci: Some((f64::MAX, f64::MIN)),
                color: target_color(i as usize),
                runs: Vec::new(),
            })
            .collect();
        let title = "x".repeat(500);
        let y_label = title.clone();
        let c = BarChart {
            title,
            y_label,
            bars,
        };
        assert!(bar_chart(&c).is_ok());
    }

    #[test]
    fn extreme_diff_input_renders() {
        let bars = (0..300)
            .map(|i| DiffBar {
                label: "y".repeat(i),
                diff_pct: 1e-12 * i as f64,
                ci: Some((-f64::MAX, f64::MAX)),
                color: target_color(i),
            })
            .collect();
        let c = DiffChart {
            title: String::new(),
            x_label: String::new(),
            bars,
        };
        assert!(diff_chart(&c).is_ok());
    }

    #[test]
    fn extreme_line_input_renders() {
        let lines = (0..200)
            .map(|i| Line {
                label: i.to_string(),
                color: target_color(i),
                points: vec![(1.0, 1e-300), (2.0, 1e300), (f64::MAX, f64::MAX)],
            })
            .collect();
        let mut c = LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            lines,
            log_y: true,
            log_x: false,
            x_ticks: Vec::new(),
        };
        let svg = line_chart(&c).unwrap();
        assert!(svg.contains("<circle") && svg.contains(">\n1e296\n</text>"));
        c.log_y = false;
        c.lines[0].points.push((-f64::MAX, -f64::MAX));
        assert!(line_chart(&c).is_ok());
    }

    #[test]
    fn extreme_heatmap_input_renders() {
        let c = HeatMap {
            title: "h".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            x_ticks: vec!["w".repeat(300); 3],
            y_ticks: vec![],
            cells: vec![vec![Some(-1.0); 150]; 150],
            value_label: "v".into(),
            diverging: true,
            log: false,
            range: Some((f64::MAX, -f64::MAX)),
            muted: vec![vec![true; 150]; 150],
            muted_label: "m".repeat(400),
            missing_label: "w".repeat(400),
        };
        assert!(heatmap(&c).is_ok());
        let log = HeatMap {
            diverging: false,
            log: true,
            range: Some((-1.0, f64::MAX)),
            ..c
        };
        assert!(heatmap(&log).is_ok());
    }

    #[test]
    fn hex_is_css_notation() {
        assert_eq!(Rgb(0, 0x72, 0xb2).hex(), "#0072b2");
        assert_eq!(Rgb(255, 255, 255).hex(), "#ffffff");
    }

    #[test]
    fn target_colors_are_stable_and_distinct_for_a_long_list() {
        assert_eq!(target_color(3), target_color(3));
        assert_eq!(target_color(0), Rgb(0x00, 0x72, 0xb2));
        let colors: Vec<Rgb> = (0..24).map(target_color).collect();
        let distinct: std::collections::HashSet<_> = colors.iter().collect();
        assert_eq!(distinct.len(), colors.len());
    }
}
