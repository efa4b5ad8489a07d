//! The document's summary as plain text, for `storlab run` and `storlab
//! show`: sections separated by a blank line, titles on a line of their
//! own, tables aligned; charts are left out (their numbers are in tables).
//! Warnings come apart, so that they can go where the command sends them.

use crate::report::document::{Block, Document};

/// The summary sections.
pub fn summary(doc: &Document) -> String {
    let mut out = String::new();
    for (i, s) in doc.summary.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if !s.title.is_empty() {
            out.push_str(&s.title);
            out.push('\n');
        }
        for b in &s.blocks {
            out.push_str(&block(b));
        }
    }
    out
}

/// `warning: …`, one line each.
pub fn warnings(doc: &Document) -> String {
    doc.warnings
        .iter()
        .map(|w| format!("warning: {w}\n"))
        .collect()
}

fn block(b: &Block) -> String {
    match b {
        Block::Text(t) => format!("{t}\n"),
        Block::List(items) => items.iter().map(|i| format!("- {i}\n")).collect(),
        Block::Table(t) => t.render_text(),
        Block::Chart(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::{Chart, Section};
    use crate::report::svg::BarChart;
    use crate::report::table::Table;

    #[test]
    fn sections_are_apart_charts_left_out_and_warnings_prefixed() {
        let mut first = Section::untitled(1);
        first.text("campaign 1");
        let mut t = Table::new(&["a"], &[false]);
        t.push(vec!["x".into()]);
        let mut second = Section::new(3, "per test");
        second.table(t).chart(Chart::Bar(BarChart {
            title: "never printed".into(),
            y_label: String::new(),
            bars: Vec::new(),
        }));
        let doc = Document {
            title: "t".into(),
            summary: vec![first, second],
            body: Vec::new(),
            warnings: vec!["w1".into(), "w2".into()],
        };
        assert_eq!(summary(&doc), "campaign 1\n\nper test\na\n─\nx\n");
        assert_eq!(warnings(&doc), "warning: w1\nwarning: w2\n");
    }
}
