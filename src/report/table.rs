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
}

impl Table {
    pub fn new(header: &[&str], right: &[bool]) -> Table {
        Table {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            right: right.to_vec(),
            marked: BTreeSet::new(),
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
        self.marked = self
            .marked
            .iter()
            .filter(|&&(_, c)| c != col)
            .map(|&(r, c)| (r, if c > col { c - 1 } else { c }))
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
        let t = t.without_column(0);
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
}
