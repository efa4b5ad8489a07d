//! The layout Markdown and HTML share (after hyperfine's
//! `export/markup.rs`): one trait for the elements — headings, paragraphs,
//! lists, tables, charts, styled divisions, the page — and one function
//! that lays the document's body out with them, so that both formats
//! render the same outline and `markdown.rs` stays small. Each
//! implementation escapes all text it is given.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

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
    /// A heading a contents entry links to as `id`; the plain heading
    /// where the format has no anchors.
    fn anchored_heading(&self, level: u8, text: &str, _id: &str) -> String {
        self.heading(level, text)
    }
    /// The table of contents: (title, id) of each part; none where the
    /// format has no links of its own.
    fn contents(&self, _entries: &[(String, String)]) -> String {
        String::new()
    }
    /// A folded part, opened with its heading as what shows; the plain
    /// heading where the format cannot fold.
    fn open_fold(&self, level: u8, text: &str, id: &str) -> String {
        self.anchored_heading(level, text, id)
    }
    fn close_fold(&self) -> String {
        String::new()
    }
}

/// The document's title and body in markup `m` (no active character of
/// foreign text raw: see [`crate::foreign`]), its contents (the titled
/// parts, level 2) where the body asks for them ([`Block::Contents`]); a
/// folded section folds every section under it, up to the next titled one
/// of its level or above.
pub fn render(m: &impl Markup, doc: &Document) -> Result<String> {
    let ids = anchors(&doc.body);
    let mut body = m.heading(1, &doc.title);
    let entries: Vec<(String, String)> = doc
        .body
        .iter()
        .zip(&ids)
        .filter(|(s, _)| s.level == 2 && !s.title.is_empty())
        .map(|(s, id)| (s.title.clone(), id.clone()))
        .collect();
    let contents = m.contents(&entries);
    let mut open: Vec<u8> = Vec::new();
    for (s, id) in doc.body.iter().zip(&ids) {
        if !s.title.is_empty() {
            while open.last().is_some_and(|l| *l >= s.level) {
                open.pop();
                body.push_str(&m.close_fold());
            }
        }
        body.push_str(&section(m, s, id, &contents, &mut open)?);
    }
    for _ in open {
        body.push_str(&m.close_fold());
    }
    // Foreign text (names, tags, errors) reaches the page through every
    // kind of block, charts' labels included: whatever active character
    // it carries is made visible here, once for the whole page. storlab's
    // own markup holds none but line breaks and tabs.
    let page = m.page(&doc.title, body);
    if let Cow::Owned(escaped) = crate::foreign::visible_lines(&page) {
        return Ok(escaped);
    }
    Ok(page)
}

/// A unique anchor per section, from its title (`what-was-compared`,
/// `seqread-1m-io-2`); empty for an untitled one.
fn anchors(sections: &[Section]) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::new();
    // Per slug, the next number to try: those below were taken (a report
    // of thousands of variants repeats a title thousands of times).
    let mut next: HashMap<String, usize> = HashMap::new();
    sections
        .iter()
        .map(|s| {
            if s.title.is_empty() {
                return String::new();
            }
            let slug: String = s
                .title
                .to_lowercase()
                .chars()
                .map(|c| if c.is_alphanumeric() { c } else { '-' })
                .collect();
            let slug = slug
                .split('-')
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join("-");
            let n = next.entry(slug.clone()).or_insert(1);
            loop {
                let id = match *n {
                    1 => format!("s-{slug}"),
                    n => format!("s-{slug}-{n}"),
                };
                *n += 1;
                if seen.insert(id.clone()) {
                    return id;
                }
            }
        })
        .collect()
}

fn section(
    m: &impl Markup,
    s: &Section,
    id: &str,
    contents: &str,
    open: &mut Vec<u8>,
) -> Result<String> {
    let mut out = String::new();
    if s.fold && !s.title.is_empty() {
        out.push_str(&m.open_fold(s.level, &s.title, id));
        open.push(s.level);
    }
    if let Some(class) = s.class {
        out.push_str(&m.open(class));
    }
    if !s.title.is_empty() && !s.fold {
        out.push_str(&m.anchored_heading(s.level, &s.title, id));
    }
    for b in &s.blocks {
        out.push_str(&match b {
            Block::Text(t) => m.paragraph(t),
            Block::List(items) => m.list(items),
            Block::Table(t) => m.table(t),
            Block::Chart(c) => m.chart(c)?,
            Block::Contents => contents.to_string(),
        });
    }
    if let Some(class) = s.class {
        out.push_str(&m.close(class));
    }
    Ok(out)
}
