//! The report as one document, built once from the store
//! ([`super::outline`]): sections of text, lists, tables and chart
//! descriptions, in reading order. Renderers lay it out and add nothing:
//! the terminal prints the summary part and the warnings, Markdown and
//! HTML the body (Markdown leaves the charts out: every charted number is
//! in a table beside its chart).

use super::svg::{
    BarChart, CapacityChart, CurveChart, DiffChart, HeatMap, HeatMapGroup, HistoryChart, LineChart,
    OverviewChart,
};
use super::table::Table;
use crate::warning::Warning;

#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub title: String,
    /// What `storlab run` and `storlab show` print: the summary table, then
    /// what workload kinds and features add under it.
    pub summary: Vec<Section>,
    /// The report (Markdown, HTML), in reading order.
    pub body: Vec<Section>,
    /// Every warning, once; the terminal prints them after the summary,
    /// the body has them in a section of their own.
    pub warnings: Vec<Warning>,
}

/// A titled run of blocks. Sections do not nest: `level` says how deep the
/// title sits (1 the document's, 2 a part such as a workload, 3 and 4
/// within it).
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Empty: no heading.
    pub title: String,
    pub level: u8,
    /// A style the HTML report gives the whole section (`warnings`,
    /// `headline`, `matrix`); other renderers ignore it.
    pub class: Option<&'static str>,
    /// Folded: the HTML report shows only the title until the reader opens
    /// it, with every section under it (up to the next titled section of
    /// its level or above); other renderers ignore it.
    pub fold: bool,
    pub blocks: Vec<Block>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    List(Vec<String>),
    Table(Table),
    Chart(Chart),
    /// The table of contents: links to the titled parts (level 2) where
    /// the format has links; nothing elsewhere.
    Contents,
}

/// A chart, as the description its SVG is drawn from.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    Bar(BarChart),
    Diff(DiffChart),
    Line(LineChart),
    Heat(HeatMap),
    /// Heat maps that are compared (one test on several targets), on one
    /// colour scale with one colour bar and one legend.
    Heats(HeatMapGroup),
    /// Lines with confidence bands against a swept value.
    Curve(CurveChart),
    /// Every workload against the baseline, on a log axis.
    Overview(OverviewChart),
    /// One series' mean and band over campaigns (`storlab history`).
    History(HistoryChart),
    /// A capacity search's latency against the offered rate.
    Capacity(CapacityChart),
}

/// Sections that are one titled list, each workload's (the summary's
/// "Where the latency went"), merged into the first of their title and
/// level: one heading over every workload's items, where the terminal
/// would print the heading again before each workload's one line.
pub fn merge_titled_lists(sections: Vec<Section>) -> Vec<Section> {
    let is_list =
        |s: &Section| !s.title.is_empty() && matches!(s.blocks.as_slice(), [Block::List(_)]);
    let mut out: Vec<Section> = Vec::with_capacity(sections.len());
    for s in sections {
        let earlier = out
            .iter_mut()
            .find(|o| is_list(o) && is_list(&s) && o.title == s.title && o.level == s.level);
        match (earlier, s.blocks.as_slice()) {
            (Some(o), [Block::List(items)]) => {
                if let Some(Block::List(into)) = o.blocks.first_mut() {
                    into.extend(items.iter().cloned());
                }
            }
            _ => out.push(s),
        }
    }
    out
}

impl Document {
    /// A document that is only read on the terminal (`compare`): its
    /// summary, no report body, no warnings of its own.
    pub fn terminal_only(title: String, summary: Vec<Section>) -> Document {
        Document {
            title,
            summary,
            body: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

impl Section {
    pub fn new(level: u8, title: impl Into<String>) -> Section {
        Section {
            title: title.into(),
            level,
            class: None,
            fold: false,
            blocks: Vec::new(),
        }
    }

    /// A section without a heading.
    pub fn untitled(level: u8) -> Section {
        Section::new(level, "")
    }

    pub fn with_class(mut self, class: &'static str) -> Section {
        self.class = Some(class);
        self
    }

    /// Folded in the HTML report ([`Section::fold`]).
    pub fn folded(mut self) -> Section {
        self.fold = true;
        self
    }

    pub fn text(&mut self, text: impl Into<String>) -> &mut Section {
        self.blocks.push(Block::Text(text.into()));
        self
    }

    /// A list; none when `items` is empty.
    pub fn list(&mut self, items: Vec<String>) -> &mut Section {
        if !items.is_empty() {
            self.blocks.push(Block::List(items));
        }
        self
    }

    pub fn table(&mut self, t: Table) -> &mut Section {
        self.blocks.push(Block::Table(t));
        self
    }

    pub fn chart(&mut self, c: Chart) -> &mut Section {
        self.blocks.push(Block::Chart(c));
        self
    }

    /// The table of contents, where the report wants it.
    pub fn contents(&mut self) -> &mut Section {
        self.blocks.push(Block::Contents);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

#[cfg(test)]
mod merge_tests {
    use super::*;

    #[test]
    fn one_heading_over_every_workloads_list_and_others_left_alone() {
        let list = |t: &str, items: &[&str]| {
            let mut s = Section::new(3, t);
            s.list(items.iter().map(|i| i.to_string()).collect());
            s
        };
        let mut text = Section::new(3, "Where the latency went");
        text.text("a paragraph");
        let merged = merge_titled_lists(vec![
            list("Where the latency went", &["a on x"]),
            list("Ranks", &["r"]),
            list("Where the latency went", &["b on x", "b on y"]),
            text.clone(),
        ]);
        assert_eq!(merged.len(), 3);
        assert_eq!(
            merged[0].blocks,
            vec![Block::List(vec![
                "a on x".into(),
                "b on x".into(),
                "b on y".into()
            ])]
        );
        assert_eq!(merged[1].title, "Ranks");
        assert_eq!(merged[2], text);
    }
}
