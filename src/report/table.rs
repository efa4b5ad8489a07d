//! A plain table of text cells, rendered aligned for the terminal. Reports
//! build tables once and hand them to a renderer.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns aligned right (numbers).
    pub right: Vec<bool>,
    /// Cells (row, column) to stand out: a value that differs from the
    /// one it is compared with. Markdown sets them bold, HTML highlights
    /// them; the terminal's aligned text leaves them plain.
    pub marked: BTreeSet<(usize, usize)>,
    /// Columns a narrow terminal may leave out, in the order it leaves
    /// them out (the least needed first). Markdown and HTML keep them all.
    pub droppable: Vec<usize>,
    /// Columns of prose whose cells a narrow terminal may wrap onto more
    /// lines (at spaces), once the droppable columns are out.
    pub wrappable: Vec<usize>,
    /// Cells (row, column) that say a verdict, and which: the terminal
    /// colours them where colour is on.
    pub tones: BTreeMap<(usize, usize), Tone>,
}

/// What a cell says of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Better than the baseline.
    Better,
    /// Worse than the baseline.
    Worse,
    /// Equivalent within the margin.
    Same,
    /// Inconclusive, or not enough to say.
    Unsure,
}

impl Tone {
    /// The tone of a verdict's outcome; none where there is no comparison.
    pub fn of(outcome: Option<crate::analysis::verdict::Outcome>) -> Option<Tone> {
        use crate::analysis::verdict::Outcome;
        Some(match outcome? {
            Outcome::Better => Tone::Better,
            Outcome::Worse => Tone::Worse,
            Outcome::Equivalent => Tone::Same,
            Outcome::Inconclusive | Outcome::TooFew => Tone::Unsure,
        })
    }

    /// The terminal's style for it: green, red, cyan, yellow.
    pub fn style(self) -> anstyle::Style {
        let colour = match self {
            Tone::Better => anstyle::AnsiColor::Green,
            Tone::Worse => anstyle::AnsiColor::Red,
            Tone::Same => anstyle::AnsiColor::Cyan,
            Tone::Unsure => anstyle::AnsiColor::Yellow,
        };
        anstyle::Style::new().fg_color(Some(colour.into()))
    }
}

impl Table {
    pub fn new(header: &[&str], right: &[bool]) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            right: right.to_vec(),
            marked: BTreeSet::new(),
            droppable: Vec::new(),
            wrappable: Vec::new(),
            tones: BTreeMap::new(),
        }
    }

    /// Lets a narrow terminal wrap the cells of the columns named
    /// `headers` (each column of that name), in this order; names that are
    /// not columns are ignored.
    pub fn may_wrap(&mut self, headers: &[&str]) {
        for h in headers {
            for (i, x) in self.header.iter().enumerate() {
                if x == h && !self.wrappable.contains(&i) {
                    self.wrappable.push(i);
                }
            }
        }
    }

    /// Lets a narrow terminal leave out the columns named `headers`, in
    /// this order; names that are not columns are ignored.
    pub fn may_drop(&mut self, headers: &[&str]) {
        for h in headers {
            if let Some(i) = self.header.iter().position(|x| x == h) {
                if !self.droppable.contains(&i) {
                    self.droppable.push(i);
                }
            }
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The table without column `col` (a column every row repeats, such
    /// as the workload under that workload's heading).
    pub fn without_column(mut self, col: usize) -> Table {
        let drop = |v: &mut Vec<String>| {
            if col < v.len() {
                v.remove(col);
            }
        };
        drop(&mut self.header);
        self.rows.iter_mut().for_each(drop);
        if col < self.right.len() {
            self.right.remove(col);
        }
        let shift = |c: usize| if c > col { c - 1 } else { c };
        self.marked = self
            .marked
            .iter()
            .filter(|&&(_, c)| c != col)
            .map(|&(r, c)| (r, shift(c)))
            .collect();
        self.droppable = self
            .droppable
            .iter()
            .filter(|&&c| c != col)
            .map(|&c| shift(c))
            .collect();
        self.wrappable = self
            .wrappable
            .iter()
            .filter(|&&c| c != col)
            .map(|&c| shift(c))
            .collect();
        self.tones = self
            .tones
            .iter()
            .filter(|(&(_, c), _)| c != col)
            .map(|(&(r, c), &t)| ((r, shift(c)), t))
            .collect();
        self
    }

    /// Whether cell (`row`, `col`) stands out.
    pub fn is_marked(&self, row: usize, col: usize) -> bool {
        self.marked.contains(&(row, col))
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                if i < w.len() {
                    w[i] = w[i].max(cell.chars().count());
                }
            }
        }
        w
    }

    /// Aligned text that fits in `columns` characters where it can: the
    /// droppable columns are left out one by one, in their order, until the
    /// table fits (a note under it names them); then the wrappable columns'
    /// cells wrap onto more lines, in their order; a table that
    /// still does not fit is printed as one record per row, a line per
    /// cell. Without a width (output to a file or a pipe), the full table.
    /// Verdict cells carry their tone's style (see [`Tone`]).
    pub fn render_text_within(&self, columns: Option<usize>) -> String {
        let Some(max) = columns else {
            return self.render_text();
        };
        let all = self.widths();
        if self.text_width(&all) <= max {
            return self.render_text();
        }
        let mut dropped = Vec::new();
        let mut narrow = self.clone();
        for &col in &self.droppable {
            dropped.push(self.header[col].clone());
            narrow = self.without(&self.droppable[..dropped.len()]);
            if narrow.text_width(&narrow.widths()) <= max {
                break;
            }
        }
        let Some(widths) = narrow.wrapped_widths(max) else {
            return self.render_records(max);
        };
        let note = match dropped.is_empty() {
            true => String::new(),
            false => format!("({} left out to fit {max} columns)\n", dropped.join(", ")),
        };
        format!("{}{note}", narrow.render_with(&widths))
    }

    /// Widths that fit in `max` characters, narrowing the wrappable
    /// columns in their order (each as far as it goes before the next) no
    /// further than their longest word and header; `None` when that is not
    /// enough.
    fn wrapped_widths(&self, max: usize) -> Option<Vec<usize>> {
        let mut widths = self.widths();
        let least = |c: usize| -> usize {
            let words = self
                .rows
                .iter()
                .filter_map(|r| r.get(c))
                .flat_map(|cell| cell.split(' '))
                .map(|w| w.chars().count());
            let header = self.header[c].split(' ').map(|w| w.chars().count());
            words.chain(header).chain([8]).max().unwrap_or(0)
        };
        while self.text_width(&widths) > max {
            let col = self
                .wrappable
                .iter()
                .copied()
                .find(|&c| widths[c] > least(c))?;
            widths[col] -= 1;
        }
        Some(widths)
    }

    /// Characters of the widest line `render_text` writes.
    fn text_width(&self, widths: &[usize]) -> usize {
        widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
    }

    /// The table without columns `cols`.
    fn without(&self, cols: &[usize]) -> Table {
        let keep: Vec<usize> = (0..self.header.len())
            .filter(|i| !cols.contains(i))
            .collect();
        let pick = |row: &Vec<String>| -> Vec<String> {
            keep.iter()
                .map(|&i| row.get(i).cloned().unwrap_or_default())
                .collect()
        };
        Table {
            header: pick(&self.header),
            rows: self.rows.iter().map(pick).collect(),
            right: keep
                .iter()
                .map(|&i| self.right.get(i).copied().unwrap_or(false))
                .collect(),
            marked: BTreeSet::new(),
            droppable: Vec::new(),
            wrappable: self
                .wrappable
                .iter()
                .filter_map(|c| keep.iter().position(|k| k == c))
                .collect(),
            tones: self
                .tones
                .iter()
                .filter_map(|(&(r, c), &t)| Some(((r, keep.iter().position(|&k| k == c)?), t)))
                .collect(),
        }
    }

    /// One record per row, as psql's expanded display: the first cell
    /// names the record, the others follow a line each under their header.
    /// A name that does not fit in `max` beside its header goes on the
    /// line under it.
    fn render_records(&self, max: usize) -> String {
        let label = self.header.iter().skip(1).map(|h| h.chars().count());
        let width = label.max().unwrap_or(0);
        let mut out = String::new();
        for (n, row) in self.rows.iter().enumerate() {
            if n > 0 {
                out.push('\n');
            }
            let first = row.first().map(String::as_str).unwrap_or("");
            let named = format!("{}: {first}", self.header[0]);
            match named.chars().count() > max {
                true => out.push_str(&format!("{}:\n  {first}\n", self.header[0])),
                false => out.push_str(&format!("{named}\n")),
            }
            for (i, (h, cell)) in self.header.iter().zip(row).enumerate().skip(1) {
                let style = self
                    .tones
                    .get(&(n, i))
                    .map(|t| t.style())
                    .unwrap_or_default();
                out.push_str(&format!("  {h:<width$}  {style}{}{style:#}\n", cell.trim()));
            }
        }
        out
    }

    /// Aligned text with a rule under the header.
    pub fn render_text(&self) -> String {
        self.render_with(&self.widths())
    }

    /// Aligned text in columns of `widths`: a cell wider than its column
    /// wraps at spaces onto the lines below, its row as tall as its
    /// tallest cell. A toned cell is styled (the padding is not).
    fn render_with(&self, widths: &[usize]) -> String {
        let line = |cells: &[Vec<String>], row: Option<usize>, k: usize| -> String {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let c = c.get(k).map(String::as_str).unwrap_or("");
                    let pad = " ".repeat(widths[i].saturating_sub(c.chars().count()));
                    let style = row
                        .and_then(|r| self.tones.get(&(r, i)))
                        .filter(|_| !c.trim().is_empty())
                        .map(|t| t.style())
                        .unwrap_or_default();
                    // The style around the words, not the block's padding.
                    let words = c.trim_end();
                    let c = format!("{style}{words}{style:#}{}", &c[words.len()..]);
                    if self.right.get(i).copied().unwrap_or(false) {
                        format!("{pad}{c}")
                    } else {
                        format!("{c}{pad}")
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let lines = |cells: &[String], row: Option<usize>| -> String {
            let wrapped: Vec<Vec<String>> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let lines = wrap_cell(c, widths[i]);
                    match self.right.get(i).copied().unwrap_or(false) {
                        // A wrapped cell of a right-aligned column: its
                        // lines aligned left within the block, the block
                        // to the right.
                        true => left_in_block(lines),
                        false => lines,
                    }
                })
                .collect();
            let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
            (0..height)
                .map(|k| format!("{}\n", line(&wrapped, row, k)))
                .collect()
        };
        let mut out = lines(&self.header, None);
        out.push_str(
            &widths
                .iter()
                .map(|w| "─".repeat(*w))
                .collect::<Vec<_>>()
                .join("  "),
        );
        out.push('\n');
        for (r, row) in self.rows.iter().enumerate() {
            out.push_str(&lines(row, Some(r)));
        }
        out
    }
}

/// `lines` padded to the widest of them.
fn left_in_block(lines: Vec<String>) -> Vec<String> {
    let block = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    lines
        .into_iter()
        .map(|l| {
            let pad = block - l.chars().count();
            format!("{l}{}", " ".repeat(pad))
        })
        .collect()
}

/// A cell's lines in a column `width` wide: whole when it fits, else
/// wrapped at spaces (a word longer than the column stays whole).
fn wrap_cell(cell: &str, width: usize) -> Vec<String> {
    if cell.chars().count() <= width {
        return vec![cell.to_string()];
    }
    let opts = textwrap::Options::new(width.max(1)).break_words(false);
    textwrap::wrap(cell, opts)
        .into_iter()
        .map(|l| l.into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_goes_with_its_cells_and_marks() {
        let mut t = Table::new(&["w", "a", "b"], &[false, true, false]);
        t.push(vec!["x".into(), "1".into(), "2".into()]);
        t.marked.insert((0, 2));
        t.may_drop(&["b"]);
        let t = t.without_column(0);
        assert_eq!(t.droppable, [1]);
        assert_eq!(t.header, ["a", "b"]);
        assert_eq!(t.rows, [["1", "2"]]);
        assert_eq!(t.right, [true, false]);
        assert!(t.is_marked(0, 1));
    }

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["name", "value"], &[false, true]);
        t.push(vec!["a".into(), "1".into()]);
        t.push(vec!["long".into(), "1000".into()]);
        let text = t.render_text();
        assert!(text.contains("a         1\n"), "{text}");
        assert!(text.contains("long   1000\n"), "{text}");
    }

    fn wide() -> Table {
        let mut t = Table::new(
            &["name", "mean", "CV", "p99", "verdict"],
            &[false, true, true, true, true],
        );
        t.push(vec![
            "randread".into(),
            "2.5 GiB/s".into(),
            "11.5%".into(),
            "2.0 µs".into(),
            "+60.3% faster".into(),
        ]);
        t.push(vec![
            "write".into(),
            "31.3 MiB/s".into(),
            "0.0%".into(),
            "153.9 µs".into(),
            "baseline".into(),
        ]);
        t.may_drop(&["CV", "p99", "no such column"]);
        t
    }

    fn longest_line(text: &str) -> usize {
        text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    #[test]
    fn a_table_that_fits_or_has_no_width_is_printed_whole() {
        let t = wide();
        let full = t.render_text();
        assert_eq!(longest_line(&full), t.text_width(&t.widths()));
        assert_eq!(t.render_text_within(None), full);
        assert_eq!(t.render_text_within(Some(longest_line(&full))), full);
    }

    #[test]
    fn a_narrow_terminal_drops_columns_in_their_order_and_says_so() {
        let t = wide();
        let full = longest_line(&t.render_text());
        // One column less is enough: CV goes, p99 stays.
        let text = t.render_text_within(Some(full - 5));
        let (body, note) = text.rsplit_once("\n(").unwrap();
        assert!(!body.contains("CV") && !body.contains("11.5%"), "{text}");
        assert!(text.contains("p99") && text.contains("153.9 µs"), "{text}");
        assert_eq!(note, format!("CV left out to fit {} columns)\n", full - 5));
        let body: String = text.lines().take(4).collect::<Vec<_>>().join("\n");
        assert!(longest_line(&body) <= full - 5, "{text}");
        // Both droppable columns go; every row keeps its verdict.
        let text = t.render_text_within(Some(40));
        assert!(
            text.contains("(CV, p99 left out to fit 40 columns)"),
            "{text}"
        );
        assert!(
            text.contains("+60.3% faster") && text.contains("baseline"),
            "{text}"
        );
        assert!(longest_line(text.lines().take(4).collect::<Vec<_>>().join("\n").as_str()) <= 40);
    }

    #[test]
    fn prose_cells_wrap_in_their_column_before_the_table_becomes_records() {
        let mut t = wide();
        t.rows[0][4] = "+61.0% (n.s.; ±5% needs about 203 runs)".into();
        t.may_wrap(&["verdict"]);
        t.tones.insert((0, 4), Tone::Unsure);
        let text = t.render_text_within(Some(40));
        let plain = anstream::adapter::strip_str(&text).to_string();
        let lines: Vec<&str> = plain.lines().collect();
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{plain}");
        // The verdict goes on under itself; the row below starts after it.
        assert_eq!(lines[2], "randread   2.5 GiB/s   +61.0% (n.s.; ±5%");
        assert_eq!(lines[3].trim(), "needs about 203");
        // Its lines start under one another, though the column is aligned right.
        assert_eq!(lines[2].find("+61"), lines[3].find("needs"), "{plain}");
        assert!(lines[5].starts_with("write "), "{plain}");
        assert_eq!(lines.last(), Some(&"(CV, p99 left out to fit 40 columns)"));
        // The verdict's lines carry its colour, the padding does not.
        assert!(
            text.contains("\x1b[33m+61.0% (n.s.; ±5%\x1b[0m"),
            "{text:?}"
        );
        // Too narrow for the longest word: records.
        assert!(t
            .render_text_within(Some(20))
            .starts_with("name: randread\n"));
    }

    #[test]
    fn a_table_too_wide_without_its_droppable_columns_becomes_records() {
        let text = wide().render_text_within(Some(20));
        assert_eq!(
            text,
            "name: randread\n  mean     2.5 GiB/s\n  CV       11.5%\n  p99      2.0 µs\n  verdict  +60.3% faster\n\n\
             name: write\n  mean     31.3 MiB/s\n  CV       0.0%\n  p99      153.9 µs\n  verdict  baseline\n"
        );
    }

    #[test]
    fn a_record_name_too_long_for_the_width_goes_under_its_header() {
        let text = wide().render_text_within(Some(12));
        assert!(text.starts_with("name:\n  randread\n  mean"), "{text}");
        assert!(text.contains("\n\nname: write\n"), "{text}");
        // Where it fits, beside it.
        let text = wide().render_text_within(Some(20));
        assert!(text.starts_with("name: randread\n"), "{text}");
    }
}
