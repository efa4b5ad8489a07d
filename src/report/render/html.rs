//! The HTML report: one self-contained file (inline CSS and SVG, no script,
//! no external resource of any kind), readable on a laptop and printed.
//! Every charted number also appears in a table; all text is escaped.

use anyhow::Result;

use super::markup::{self, Markup};
use crate::report::document::{Chart, Document};
use crate::report::svg::{
    bar_chart, curve_chart, diff_chart, heatmap, heatmap_group, history_chart, line_chart,
    overview_chart,
};
use crate::report::table::Table;

const STYLE: &str = r#"
body { font-family: sans-serif; margin: 2rem auto; max-width: 1000px; padding: 0 1rem; color: #222; line-height: 1.4; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2rem; margin-top: 2rem; } h3 { font-size: 1.05rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; display: block; max-width: 100%; width: fit-content; overflow-x: auto; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; white-space: nowrap; }
th { background: #f4f4f4; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.prose, th.prose { white-space: normal; } td.long, th.long { min-width: 20rem; } .nb { white-space: nowrap; }
.chart { margin: .5rem 0 1rem; } .chart svg { max-width: 100%; height: auto; }
.overview .chart svg { width: 960px; }
.matrix table { font-size: .8rem; } .matrix p { margin: .8rem 0 0; font-weight: bold; }
.warnings li { color: #8a4b00; } .step p { font-weight: bold; } .headline li { font-weight: bold; }
td.differs { background: #fff1c2; font-weight: bold; }
.side table { display: inline-block; vertical-align: top; margin-right: 1rem; }
.compared td:first-child { min-width: 9rem; }
nav.toc { font-size: .9rem; line-height: 1.7; margin: .3rem 0 1rem; } nav.toc a { color: #0b5cad; text-decoration: none; white-space: nowrap; } nav.toc a:hover { text-decoration: underline; }
details { margin: .6rem 0; } details > summary { cursor: pointer; list-style: none; } details > summary::-webkit-details-marker { display: none; }
details > summary > h2, details > summary > h3, details > summary > h4 { display: inline; } details > summary > h2 { border-bottom: none; }
details > summary::before { content: "▸ "; color: #777; } details[open] > summary::before { content: "▾ "; }
details > summary:hover > * { color: #0b5cad; } details[open] > summary { margin-bottom: .5rem; }
h2 + details, details + h2 { margin-top: 1rem; }
@media (max-width: 760px) { body { margin: 1rem auto; overflow-wrap: break-word; } .chart { overflow-x: auto; } .chart svg { max-width: none; width: 720px; } .overview .chart svg { max-width: none; width: 960px; } }
@media print { body { max-width: none; margin: 0; } h2 { page-break-before: auto; } .chart, table { page-break-inside: avoid; } table { display: table; } }
"#;

pub fn render(doc: &Document) -> Result<String> {
    markup::render(&Html, doc)
}

pub struct Html;

/// Cells longer than this, with a space, are prose, in a column at least
/// 20rem wide.
const PROSE_OVER: usize = 60;

/// Whether `c` may wrap, and whether it is long prose: a cell with a space
/// wraps at its spaces between values, never inside one
/// ([`words_kept_whole`]): `×2.8 [×1.2, ×6.5]` / `faster`, `consistent:` /
/// `inconclusive in all 3`. A cell of one word (`gluster-no-perf`, a
/// UUID) keeps its line, and so does a number column's cell. A table
/// whose cells all kept one line pushed its last column, the answer (the
/// replicas' verdict), out of sight at 1280 px.
fn prose(c: &str) -> Option<bool> {
    c.contains(' ').then(|| c.chars().count() > PROSE_OVER)
}

/// `c` escaped, each word a browser could break inside (at a hyphen, a
/// slash: `gluster-no-perf`, `MiB/s`), each number with the unit or
/// interval after it (`296 tx/s`, `91 runs`, `×2.8 [×1.2, ×6.5]`), each
/// bracketed group (`[÷11, ×8.2]`) with what it qualifies
/// (`gluster-no-perf (baseline)`), a label with the word after it
/// (`requested: preallocation`) and a value with its `±` kept on one line, so that the cell wraps at its other spaces only.
fn words_kept_whole(c: &str) -> String {
    let words: Vec<&str> = c.split(' ').collect();
    let mut groups: Vec<Vec<&str>> = Vec::new();
    let mut depth = 0i32;
    for (i, w) in words.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| words[j]);
        let bare_number = prev.is_some_and(|p| is_number(p) && !p.ends_with([']', ')']));
        let join = prev.is_some()
            && (depth > 0
                || (bare_number && (is_unit(w) || w.starts_with('[')))
                || w.starts_with('(')
                || prev.is_some_and(|p| p.ends_with(':'))
                || *w == "±"
                || prev == Some("±"));
        match groups.last_mut() {
            Some(g) if join => g.push(w),
            _ => groups.push(vec![w]),
        }
        let opens = w.matches(['[', '(']).count() as i32;
        let closes = w.matches([']', ')']).count() as i32;
        depth = (depth + opens - closes).max(0);
    }
    groups
        .iter()
        .map(|g| {
            let text = html_escape(&g.join(" "));
            match g.len() > 1 || g[0].contains(['-', '/', '?', '–', '—']) {
                true => format!("<span class=\"nb\">{text}</span>"),
                false => text,
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `296`, `1.5`, `±5%`, `[225,`: a word that ends a number.
fn is_number(w: &str) -> bool {
    let w = w.trim_end_matches([',', ';', ')', ']']);
    w.ends_with(|ch: char| ch.is_ascii_digit())
}

/// `tx/s`, `MiB`, `µs`, `runs,`: a short word after a number, its unit
/// (not a word that joins, `5 of 5`).
fn is_unit(w: &str) -> bool {
    const JOINING: &[&str] = &[
        "of", "in", "at", "on", "to", "and", "or", "per", "by", "for",
    ];
    let w = w.trim_end_matches([',', ';', ')', ']', ':']);
    (1..=6).contains(&w.chars().count())
        && w.starts_with(|ch: char| ch.is_alphabetic())
        && !JOINING.contains(&w)
}

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

    /// A cell keeps its value on one line (`336.0 MiB`, `gluster-no-perf`,
    /// `×2.4 [×1.2, ×4.6]`) and the table scrolls sideways where it must;
    /// only a cell of prose ([`prose`]) wraps, at its spaces alone.
    fn table(&self, t: &Table) -> String {
        let cell = |tag: &str, i: usize, c: &str, marked: bool| {
            let num = t.right.get(i).copied().unwrap_or(false);
            let prose = prose(c).filter(|_| !num);
            let long = prose == Some(true);
            let prose = prose.is_some();
            let classes: Vec<&str> = [
                (num, "num"),
                (marked, "differs"),
                (prose, "prose"),
                (long, "long"),
            ]
            .iter()
            .filter_map(|&(on, name)| on.then_some(name))
            .collect();
            let class = match classes.is_empty() {
                true => String::new(),
                false => format!(" class=\"{}\"", classes.join(" ")),
            };
            let text = match prose {
                true => words_kept_whole(c),
                false => html_escape(c),
            };
            format!("<{tag}{class}>{text}</{tag}>")
        };
        let head: String = t
            .header
            .iter()
            .enumerate()
            .map(|(i, c)| cell("th", i, c, false))
            .collect();
        let body: String = t
            .rows
            .iter()
            .enumerate()
            .map(|(r, row)| {
                format!(
                    "<tr>{}</tr>",
                    row.iter()
                        .enumerate()
                        .map(|(i, c)| cell("td", i, c, t.is_marked(r, i)))
                        .collect::<String>()
                )
            })
            .collect();
        format!("<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n")
    }

    /// The chart's SVG, inline.
    fn chart(&self, c: &Chart) -> Result<String> {
        let svg = match c {
            Chart::Bar(b) => bar_chart(b)?,
            Chart::Diff(d) => diff_chart(d)?,
            Chart::Line(l) => line_chart(l)?,
            Chart::Heat(h) => heatmap(h)?,
            Chart::Heats(g) => heatmap_group(g)?,
            Chart::Curve(c) => curve_chart(c)?,
            Chart::Overview(o) => overview_chart(o)?,
            Chart::History(h) => history_chart(h)?,
            Chart::Capacity(k) => crate::report::svg::capacity_chart(k)?,
        };
        Ok(format!("<div class=\"chart\">{svg}</div>\n"))
    }

    fn anchored_heading(&self, level: u8, text: &str, id: &str) -> String {
        format!(
            "<h{level} id=\"{}\">{}</h{level}>\n",
            html_escape(id),
            html_escape(text)
        )
    }

    /// One line of links, each to its part (a folded part opens when its
    /// link is followed).
    fn contents(&self, entries: &[(String, String)]) -> String {
        if entries.is_empty() {
            return String::new();
        }
        let links: Vec<String> = entries
            .iter()
            .map(|(title, id)| {
                format!(
                    "<a href=\"#{}\">{}</a>",
                    html_escape(id),
                    html_escape(title)
                )
            })
            .collect();
        format!(
            "<nav class=\"toc\"><b>Contents</b> {}</nav>\n",
            links.join(" · ")
        )
    }

    fn open_fold(&self, level: u8, text: &str, id: &str) -> String {
        format!(
            "<details id=\"{}\"><summary><h{level}>{}</h{level}></summary>\n",
            html_escape(id),
            html_escape(text)
        )
    }

    fn close_fold(&self) -> String {
        "</details>\n".into()
    }

    fn open(&self, class: &str) -> String {
        format!("<div class=\"{}\">", html_escape(class))
    }

    fn close(&self, _: &str) -> String {
        "</div>\n".into()
    }

    /// The body put in the page where it is, not copied: a report of
    /// thousands of variants is tens of megabytes.
    fn page(&self, title: &str, mut body: String) -> String {
        let head = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{}</title><style>{STYLE}</style></head><body>\n",
            html_escape(title)
        );
        body.insert_str(0, &head);
        body.push_str("</body></html>\n");
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
        t.push(vec!["b".into()]);
        t.marked.insert((1, 0));
        let h = Html.table(&t);
        assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;|x"), "{h}");
        assert!(h.contains("<td class=\"differs\">b</td>"), "{h}");
        assert!(!h.contains("<script>"));
    }

    // A value or a name never wraps mid-value (`336.0 / MiB`,
    // `gluster- / no-perf`, `[×1.2, / ×6.5]`): a cell of one word or
    // numbers keeps one line, others wrap only between values.
    #[test]
    fn values_and_names_keep_one_line_and_prose_wraps_at_spaces() {
        assert!(
            STYLE.contains("th, td {") && STYLE.contains("white-space: nowrap; }"),
            "cells do not wrap by default: {STYLE}"
        );
        assert!(STYLE.contains("td.prose, th.prose { white-space: normal; }"));
        assert!(!STYLE.contains("overflow-wrap: anywhere"), "{STYLE}");
        let verdict =
            "inconclusive ⚠ noisy host on gluster-no-perf (3 of 3 runs); ±5% needs about 9 runs";
        let mut t = Table::new(&["target", "mean", "verdict"], &[false, true, false]);
        t.push(vec![
            "gluster-no-perf (baseline)".into(),
            "336.0 MiB/s ± 12.1 MiB/s and a long value that is still a value".into(),
            verdict.into(),
        ]);
        t.push(vec![
            "cwd".into(),
            "1.0".into(),
            "×2.8 [×1.2, ×6.5] faster".into(),
        ]);
        let h = Html.table(&t);
        assert!(
            h.contains(
                "<td class=\"prose\"><span class=\"nb\">gluster-no-perf (baseline)</span></td>"
            ),
            "{h}"
        );
        assert!(h.contains("<td>cwd</td>"), "{h}");
        assert!(
            h.contains("<td class=\"num\">336.0 MiB/s ± 12.1 MiB/s and a long"),
            "{h}"
        );
        assert!(
            h.contains(
                "<td class=\"prose\"><span class=\"nb\">×2.8 [×1.2, ×6.5]</span> faster</td>"
            ),
            "{h}"
        );
        assert!(
            h.contains("<td class=\"prose long\">inconclusive ⚠ noisy host on <span class=\"nb\">gluster-no-perf (3 of 3 runs);</span> ±5% needs about <span class=\"nb\">9 runs</span>"),
            "{h}"
        );
    }
}
