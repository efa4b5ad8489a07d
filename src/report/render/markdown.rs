//! The Markdown report: the document's body as GitHub-flavoured Markdown;
//! charts are left out (their numbers are in the tables beside them).

use anyhow::Result;

use super::markup::{self, Markup};
use crate::report::document::{Chart, Document};
use crate::report::table::Table;

pub fn render(doc: &Document) -> Result<String> {
    markup::render(&Markdown, doc)
}

pub struct Markdown;

/// Escapes text for a Markdown table cell or paragraph. `](` and `]:`
/// are broken up, so that a name such as `[x](javascript:…)` never
/// becomes a link; a line break becomes a space (it would end a table
/// row), and control characters are made visible (`\x1b`), as every
/// active character is on the whole page ([`super::markup::render`]).
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut after_bracket = false;
    for c in s.chars() {
        match c {
            '|' | '\\' | '*' | '`' | '<' | '>' => {
                out.push('\\');
                out.push(c);
            }
            '(' | ':' if after_bracket => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push(' '),
            c if c.is_control() => {
                out.push_str(&crate::foreign::visible(c.encode_utf8(&mut [0; 4])))
            }
            _ => out.push(c),
        }
        after_bracket = c == ']';
    }
    out
}

impl Markup for Markdown {
    fn heading(&self, level: u8, text: &str) -> String {
        format!("{} {}\n\n", "#".repeat(level as usize), md_escape(text))
    }

    fn paragraph(&self, text: &str) -> String {
        format!("{}\n\n", md_escape(text))
    }

    fn list(&self, items: &[String]) -> String {
        let mut out: String = items
            .iter()
            .map(|i| format!("- {}\n", md_escape(i)))
            .collect();
        out.push('\n');
        out
    }

    fn table(&self, t: &Table) -> String {
        let row = |cells: &[String], marked: &dyn Fn(usize) -> bool| {
            let cells: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| match (marked(i), c.is_empty()) {
                    (true, false) => format!("**{}**", md_escape(c)),
                    _ => md_escape(c),
                })
                .collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = row(&t.header, &|_| false);
        let rule: Vec<&str> = (0..t.header.len())
            .map(|i| match t.right.get(i) {
                Some(true) => "---:",
                _ => "---",
            })
            .collect();
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for (i, r) in t.rows.iter().enumerate() {
            out.push_str(&row(r, &|j| t.is_marked(i, j)));
        }
        out.push('\n');
        out
    }

    fn chart(&self, _: &Chart) -> Result<String> {
        Ok(String::new())
    }

    fn open(&self, _: &str) -> String {
        String::new()
    }

    fn close(&self, _: &str) -> String {
        String::new()
    }

    fn page(&self, _: &str, body: String) -> String {
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        let mut t = Table::new(&["target"], &[false]);
        t.push(vec!["<script>alert(1)</script>|x".into()]);
        t.push(vec!["*b*".into()]);
        t.marked.insert((1, 0));
        let m = Markdown.table(&t);
        assert!(m.contains("\\<script\\>alert(1)\\</script\\>\\|x"), "{m}");
        assert!(m.contains("| **\\*b\\*** |"), "a marked cell is bold: {m}");
    }

    #[test]
    fn a_name_never_becomes_a_markdown_link_or_a_terminal_escape() {
        let name = "[click](javascript:alert(1)) [r]: javascript:x \u{1b}[2J\u{7}";
        let m = md_escape(name);
        assert!(!m.contains("](") && !m.contains("]:"), "{m}");
        assert!(
            m.contains("]\\(javascript") && m.contains("]\\: javascript"),
            "{m}"
        );
        assert!(!m.contains('\u{1b}') && !m.contains('\u{7}'), "{m:?}");
        assert_eq!(md_escape("x [95% CI] (n.s.)"), "x [95% CI] (n.s.)");
    }
}
