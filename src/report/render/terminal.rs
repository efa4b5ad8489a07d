//! The document's summary as plain text, for `storlab run` and `storlab
//! show`: sections separated by a blank line, titles on a line of their
//! own, tables aligned; charts are left out (their numbers are in tables).
//! Given the terminal's width, tables too wide for it leave out their least
//! needed columns, or print a record per row.
//! Warnings come apart, so that they can go where the command sends them.

use crate::foreign::{visible, visible_lines};
use crate::report::document::{Block, Document};

/// The summary sections, fitted to `columns` characters when given.
pub fn summary(doc: &Document, columns: Option<usize>) -> String {
    let mut out = String::new();
    for (i, s) in doc.summary.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if !s.title.is_empty() {
            out.push_str(&visible(&s.title));
            out.push('\n');
        }
        for b in &s.blocks {
            out.push_str(&block(b, columns));
        }
    }
    out
}

/// `warning: …`, one line each.
pub fn warnings(doc: &Document) -> String {
    doc.warnings
        .iter()
        .map(|w| format!("warning: {}\n", visible_lines(&w.to_string())))
        .collect()
}

fn block(b: &Block, columns: Option<usize>) -> String {
    match b {
        Block::Text(t) => match (columns, visible_lines(t)) {
            // Prose wraps at words; a word longer than the line stays whole.
            (Some(w), t) => {
                let opts = textwrap::Options::new(w).break_words(false);
                format!("{}\n", textwrap::fill(&t, opts))
            }
            (None, t) => format!("{t}\n"),
        },
        Block::List(items) => items
            .iter()
            .map(|i| format!("- {}\n", visible(i)))
            .collect(),
        Block::Table(t) => {
            // Cells can quote what storlab did not write (names, errors).
            let mut t = t.clone();
            for cell in t.rows.iter_mut().flatten() {
                *cell = visible(cell).into_owned();
            }
            t.render_text_within(columns)
        }
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
            warnings: vec![
                crate::warning::Warning::note("w1"),
                crate::warning::Warning::note("w2"),
            ],
        };
        assert_eq!(summary(&doc, None), "campaign 1\n\nper test\na\n─\nx\n");
        assert_eq!(warnings(&doc), "warning: w1\nwarning: w2\n");
    }

    #[test]
    fn prose_wraps_at_words_to_the_width_given_and_only_then() {
        let mut s = Section::untitled(1);
        s.text("campaign 1 `all-kinds` (finished): 66 of 66 planned runs ok, 0 failed");
        let doc = Document {
            title: "t".into(),
            summary: vec![s],
            body: Vec::new(),
            warnings: Vec::new(),
        };
        assert_eq!(
            summary(&doc, Some(40)),
            "campaign 1 `all-kinds` (finished): 66 of\n66 planned runs ok, 0 failed\n"
        );
        assert_eq!(summary(&doc, None).lines().count(), 1);
    }
}
