//! The document's summary as text for a terminal, for `storlab run` and
//! `storlab show`: sections separated by a blank line, titles on a line of
//! their own, tables aligned; charts are left out (their numbers are in
//! tables). Given the terminal's width, nothing is wider: prose wraps at
//! words, and tables too wide leave out their least needed columns, wrap
//! their prose cells, or print a record per row. The provenance (versions,
//! host facts) only when asked (`-v`).
//!
//! Warnings come apart, so that they can go where the command sends them:
//! a line per kind with its count and range, or every warning when asked
//! (`show --warnings`, `-v`). Verdicts and warnings carry ANSI styles
//! (anstyle), which the console passes on or strips per stream
//! ([`crate::console`]).

use anstyle::{AnsiColor, Style};

use crate::foreign::{visible, visible_lines};
use crate::report::document::{Block, Document, Section};
use crate::report::sections::summary::PROVENANCE;
use crate::report::sections::warnings::BY_KIND;

/// How the terminal is to be written for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct View {
    /// The width to fit, when there is one (a terminal, or `COLUMNS`).
    pub columns: Option<usize>,
    /// Also the provenance header (`-v`).
    pub verbose: bool,
    /// Every warning rather than a line per kind (`--warnings`, `-v`).
    pub every_warning: bool,
}

/// The summary sections, fitted to `columns` characters when given.
pub fn summary(doc: &Document, columns: Option<usize>) -> String {
    summary_for(
        doc,
        View {
            columns,
            ..View::default()
        },
    )
}

/// The summary sections as `view` asks.
pub fn summary_for(doc: &Document, view: View) -> String {
    let shown = doc.summary.iter().filter(|s| match s.class {
        Some(PROVENANCE) => view.verbose,
        Some(BY_KIND) => false,
        _ => !s.is_empty(),
    });
    let mut out = String::new();
    for (i, s) in shown.enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if !s.title.is_empty() {
            out.push_str(&fill(&visible(&s.title), view.columns));
        }
        for b in &s.blocks {
            out.push_str(&block(b, view.columns));
        }
    }
    out
}

/// `warning: …`, each warning (wrapped to `columns` when given).
pub fn warnings(doc: &Document) -> String {
    every_warning(doc, None)
}

/// The warnings as `view` asks: a line per kind where the document counts
/// them by kind, and a pointer to the full list; or every warning.
pub fn warnings_for(doc: &Document, view: View) -> String {
    let by_kind = doc.summary.iter().find(|s| s.class == Some(BY_KIND));
    match by_kind {
        Some(s) if !view.every_warning && !s.is_empty() => {
            kinds(s, doc.warnings.len(), view.columns)
        }
        _ => every_warning(doc, view.columns),
    }
}

fn warning_style() -> Style {
    Style::new().bold().fg_color(Some(AnsiColor::Yellow.into()))
}

fn every_warning(doc: &Document, columns: Option<usize>) -> String {
    let style = warning_style();
    doc.warnings
        .iter()
        .map(|w| {
            let text = hanging(&format!("warning: {}", visible_lines(&w.text)), columns, 2);
            // Only the first word is styled: `warning` is always ASCII.
            format!("{style}warning{style:#}{}", &text["warning".len()..])
        })
        .collect()
}

/// `16 warnings, by kind (...):` and a line per kind, its label styled and
/// the labels aligned; lines too long wrap under their text. (The
/// section's own sentence is the report's.)
fn kinds(s: &Section, total: usize, columns: Option<usize>) -> String {
    let style = warning_style();
    // Apart from the table above it on the screen.
    let mut out = String::from("\n");
    for b in &s.blocks {
        match b {
            Block::Text(_) => {
                let n = match total {
                    1 => "1 warning".to_string(),
                    n => format!("{n} warnings"),
                };
                out.push_str(&fill(
                    &format!("{n}, by kind (`storlab show --warnings` lists each):"),
                    columns,
                ));
            }
            Block::List(items) => {
                // Names storlab did not write, made visible.
                let items: Vec<String> = items.iter().map(|i| visible(i).into_owned()).collect();
                let split: Vec<(&str, &str)> = items
                    .iter()
                    .map(|i| i.split_once(": ").unwrap_or((i.as_str(), "")))
                    .collect();
                let width = split.iter().map(|(k, _)| k.chars().count()).max();
                let width = width.unwrap_or(0);
                for (label, what) in split {
                    let pad = width - label.chars().count();
                    let line = format!("  {label}{}  {what}", " ".repeat(pad));
                    let text = hanging(&line, columns, width + 4);
                    let rest = &text[2 + label.len()..];
                    out.push_str(&format!("  {style}{label}{style:#}{rest}"));
                }
            }
            _ => {}
        }
    }
    out
}

/// `text` wrapped at words to `columns`, its later lines indented by
/// `indent`; a line as it is without a width.
fn hanging(text: &str, columns: Option<usize>, indent: usize) -> String {
    let Some(w) = columns else {
        return format!("{text}\n");
    };
    let pad = " ".repeat(indent.min(w / 2));
    let opts = textwrap::Options::new(w)
        .break_words(true)
        .subsequent_indent(&pad);
    format!("{}\n", textwrap::fill(text, opts))
}

/// Prose wrapped at words; a word longer than the line is broken, so that
/// no line is wider than the terminal.
fn fill(t: &str, columns: Option<usize>) -> String {
    match columns {
        Some(w) => {
            let opts = textwrap::Options::new(w).break_words(true);
            format!("{}\n", textwrap::fill(t, opts))
        }
        None => format!("{t}\n"),
    }
}

fn block(b: &Block, columns: Option<usize>) -> String {
    match b {
        Block::Text(t) => fill(&visible_lines(t), columns),
        Block::List(items) => items
            .iter()
            .map(|i| hanging(&format!("- {}", visible(i)), columns, 2))
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
    use crate::warning::{Warning, WarningKind};

    fn plain(s: &str) -> String {
        anstream::adapter::strip_str(s).to_string()
    }

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
                Warning::new(WarningKind::Note, "w1"),
                Warning::new(WarningKind::Note, "w2"),
            ],
        };
        assert_eq!(summary(&doc, None), "campaign 1\n\nper test\na\n─\nx\n");
        assert_eq!(plain(&warnings(&doc)), "warning: w1\nwarning: w2\n");
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

    fn with_kinds() -> Document {
        let mut provenance = Section::untitled(1).with_class(PROVENANCE);
        provenance.text("versions: storlab 0.1.0");
        let mut kinds = Section::untitled(2).with_class(BY_KIND);
        kinds.text("3 warnings, by kind:").list(vec![
            "noisy host: 2 of 4 runs, every workload on both targets; others used 25.0–66.7% of the host's CPU".into(),
            "CPU-bound: 1 of 4 runs".into(),
        ]);
        Document {
            title: "t".into(),
            summary: vec![provenance, kinds],
            body: Vec::new(),
            warnings: vec![
                Warning::new(WarningKind::NoisyHost, "run 1: noisy host: a"),
                Warning::new(WarningKind::NoisyHost, "run 2: noisy host: b"),
                Warning::new(WarningKind::CpuBound, "run 3: CPU-bound: c"),
            ],
        }
    }

    #[test]
    fn the_provenance_only_when_verbose_and_warnings_a_line_per_kind_unless_asked() {
        let doc = with_kinds();
        assert_eq!(summary(&doc, None), "");
        let verbose = View {
            verbose: true,
            ..View::default()
        };
        assert_eq!(summary_for(&doc, verbose), "versions: storlab 0.1.0\n");
        let by_kind = plain(&warnings_for(&doc, View::default()));
        assert_eq!(
            by_kind,
            "\n3 warnings, by kind (`storlab show --warnings` lists each):\n  noisy host  2 of 4 runs, every workload on both targets; others used 25.0–66.7% of the host's CPU\n  CPU-bound   1 of 4 runs\n"
        );
        // Fitted: no line wider than 60, the wrapped part under the text.
        let narrow = plain(&warnings_for(
            &doc,
            View {
                columns: Some(60),
                ..View::default()
            },
        ));
        assert!(narrow.lines().all(|l| l.chars().count() <= 60), "{narrow}");
        assert!(narrow.contains("\n              "), "{narrow}");
        let every = View {
            every_warning: true,
            ..View::default()
        };
        assert_eq!(plain(&warnings_for(&doc, every)).lines().count(), 3);
        // Colour: the labels and `warning` carry a style.
        assert!(warnings_for(&doc, View::default()).contains("\x1b["));
    }
}
