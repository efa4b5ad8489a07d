//! The layout Markdown and HTML share (after hyperfine's
//! `export/markup.rs`): one trait for the elements — headings, paragraphs,
//! lists, tables, charts, styled divisions, the page — and one function
//! that lays the document's body out with them, so that both formats
//! render the same outline and `markdown.rs` stays small. Each
//! implementation escapes all text it is given.

use anyhow::Result;

use crate::report::document::{Block, Chart, Document, Section};
use crate::report::table::Table;

pub trait Markup {
    fn heading(&self, level: u8, text: &str) -> String;
    fn paragraph(&self, text: &str) -> String;
    fn list(&self, items: &[String]) -> String;
    fn table(&self, t: &Table) -> String;
    /// The chart drawn; empty where the format has no pictures.
    fn chart(&self, c: &Chart) -> Result<String>;
    /// Around a section with a style (`class`); empty where the format
    /// has no styles.
    fn open(&self, class: &str) -> String;
    fn close(&self, class: &str) -> String;
    /// The whole page around the rendered body.
    fn page(&self, title: &str, body: String) -> String;
}

/// The document's title and body in markup `m`.
pub fn render(m: &impl Markup, doc: &Document) -> Result<String> {
    let mut body = m.heading(1, &doc.title);
    for s in &doc.body {
        body.push_str(&section(m, s)?);
    }
    Ok(m.page(&doc.title, body))
}

fn section(m: &impl Markup, s: &Section) -> Result<String> {
    let mut out = String::new();
    if let Some(class) = s.class {
        out.push_str(&m.open(class));
    }
    if !s.title.is_empty() {
        out.push_str(&m.heading(s.level, &s.title));
    }
    for b in &s.blocks {
        out.push_str(&match b {
            Block::Text(t) => m.paragraph(t),
            Block::List(items) => m.list(items),
            Block::Table(t) => m.table(t),
            Block::Chart(c) => m.chart(c)?,
        });
    }
    if let Some(class) = s.class {
        out.push_str(&m.close(class));
    }
    Ok(out)
}
