//! Markup shared by the Markdown and HTML reports: one trait for headings,
//! paragraphs, lists and tables, so that both lay out the same content
//! (after hyperfine's `export/markup.rs`). All text is escaped here.

use super::table::Table;

pub trait Markup {
    fn heading(&self, level: u8, text: &str) -> String;
    fn paragraph(&self, text: &str) -> String;
    fn list(&self, items: &[String]) -> String;
    fn table(&self, t: &Table) -> String;
}

pub struct Markdown;

/// Escapes text for a Markdown table cell or paragraph. `](` and `]:`
/// are broken up, so that a name such as `[x](javascript:…)` never
/// becomes a link; control characters become U+FFFD.
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
            c if c.is_control() => out.push('\u{FFFD}'),
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
        let row = |cells: &[String]| {
            format!(
                "| {} |\n",
                cells
                    .iter()
                    .map(|c| md_escape(c))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )
        };
        let mut out = row(&t.header);
        let rule: Vec<String> = (0..t.header.len())
            .map(|i| {
                if t.right.get(i).copied().unwrap_or(false) {
                    "---:".into()
                } else {
                    "---".into()
                }
            })
            .collect();
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for r in &t.rows {
            out.push_str(&row(r));
        }
        out.push('\n');
        out
    }
}

pub struct Html;

/// Escapes text for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

impl Markup for Html {
    fn heading(&self, level: u8, text: &str) -> String {
        format!("<h{level}>{}</h{level}>\n", html_escape(text))
    }

    fn paragraph(&self, text: &str) -> String {
        format!("<p>{}</p>\n", html_escape(text))
    }

    fn list(&self, items: &[String]) -> String {
        let li: String = items
            .iter()
            .map(|i| format!("<li>{}</li>", html_escape(i)))
            .collect();
        format!("<ul>{li}</ul>\n")
    }

    fn table(&self, t: &Table) -> String {
        let cell = |tag: &str, i: usize, c: &str| {
            let class = if t.right.get(i).copied().unwrap_or(false) {
                " class=\"num\""
            } else {
                ""
            };
            format!("<{tag}{class}>{}</{tag}>", html_escape(c))
        };
        let head: String = t
            .header
            .iter()
            .enumerate()
            .map(|(i, c)| cell("th", i, c))
            .collect();
        let body: String = t
            .rows
            .iter()
            .map(|r| {
                format!(
                    "<tr>{}</tr>",
                    r.iter()
                        .enumerate()
                        .map(|(i, c)| cell("td", i, c))
                        .collect::<String>()
                )
            })
            .collect();
        format!("<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_markups_escape() {
        let mut t = Table::new(&["target"], &[false]);
        t.push(vec!["<script>alert(1)</script>|x".into()]);
        let h = Html.table(&t);
        assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;|x"), "{h}");
        assert!(!h.contains("<script>"));
        let m = Markdown.table(&t);
        assert!(m.contains("\\<script\\>alert(1)\\</script\\>\\|x"), "{m}");
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
