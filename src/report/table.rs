//! A plain table of text cells, rendered aligned for the terminal. Reports
//! build tables once and hand them to a renderer.

use std::collections::BTreeSet;

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
}

impl Table {
    pub fn new(header: &[&str], right: &[bool]) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            right: right.to_vec(),
            marked: BTreeSet::new(),
            droppable: Vec::new(),
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
    /// table fits (a note under it names them); a table that still does not
    /// fit is printed as one record per row, a line per cell. Without a
    /// width (output to a file or a pipe), the full table.
    pub fn render_text_within(&self, columns: Option<usize>) -> String {
        let Some(max) = columns else {
            return self.render_text();
        };
        if self.text_width(&self.widths()) <= max {
            return self.render_text();
        }
        let mut dropped = Vec::new();
        for &col in &self.droppable {
            dropped.push(self.header[col].clone());
            let narrow = self.without(&self.droppable[..dropped.len()]);
            if narrow.text_width(&narrow.widths()) <= max {
                return format!(
                    "{}({} left out to fit {max} columns)\n",
                    narrow.render_text(),
                    dropped.join(", ")
                );
            }
        }
        self.render_records()
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
        }
    }

    /// One record per row, as psql's expanded display: the first cell
    /// names the record, the others follow a line each under their header.
    fn render_records(&self) -> String {
        let label = self.header.iter().skip(1).map(|h| h.chars().count());
        let width = label.max().unwrap_or(0);
        let mut out = String::new();
        for (n, row) in self.rows.iter().enumerate() {
            if n > 0 {
                out.push('\n');
            }
            let first = row.first().map(String::as_str).unwrap_or("");
            out.push_str(&format!("{}: {first}\n", self.header[0]));
            for (h, cell) in self.header.iter().zip(row).skip(1) {
                out.push_str(&format!("  {h:<width$}  {}\n", cell.trim()));
            }
        }
        out
    }

    /// Aligned text with a rule under the header.
    pub fn render_text(&self) -> String {
        let widths = self.widths();
        let line = |cells: &[String]| -> String {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let pad = widths[i].saturating_sub(c.chars().count());
                    if self.right.get(i).copied().unwrap_or(false) {
                        format!("{}{c}", " ".repeat(pad))
                    } else {
                        format!("{c}{}", " ".repeat(pad))
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = line(&self.header);
        out.push('\n');
        out.push_str(
            &widths
                .iter()
                .map(|w| "─".repeat(*w))
                .collect::<Vec<_>>()
                .join("  "),
        );
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
            out.push('\n');
        }
        out
    }
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
    fn a_table_too_wide_without_its_droppable_columns_becomes_records() {
        let text = wide().render_text_within(Some(20));
        assert_eq!(
            text,
            "name: randread\n  mean     2.5 GiB/s\n  CV       11.5%\n  p99      2.0 µs\n  verdict  +60.3% faster\n\n\
             name: write\n  mean     31.3 MiB/s\n  CV       0.0%\n  p99      153.9 µs\n  verdict  baseline\n"
        );
    }
}
