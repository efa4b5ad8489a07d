//! The matrix workload's (iozone's automatic mode) tests and cells as
//! they label its metrics: iozone's tests in iozone's order, the file size
//! × record size cells, and the labels of each cell's metrics — read back
//! by the analysis of a matrix as the workload writes them. How a test
//! visits the records of a file is the workload's
//! (`crate::workload::matrix::grid`).

use super::labels::{FILE_SIZE, RECORD_SIZE, TEST};
use super::Labels;

/// One iozone test, in the order iozone runs them on each cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    Write,
    Rewrite,
    Read,
    Reread,
    RandRead,
    RandWrite,
    BkwdRead,
    RecRewrite,
    StrideRead,
    FWrite,
    FRead,
}

impl Test {
    pub const ALL: &'static [Test] = &[
        Test::Write,
        Test::Rewrite,
        Test::Read,
        Test::Reread,
        Test::RandRead,
        Test::RandWrite,
        Test::BkwdRead,
        Test::RecRewrite,
        Test::StrideRead,
        Test::FWrite,
        Test::FRead,
    ];

    pub const NAMES: &'static [&'static str] = &[
        "write",
        "rewrite",
        "read",
        "reread",
        "randread",
        "randwrite",
        "bkwdread",
        "recrewrite",
        "strideread",
        "fwrite",
        "fread",
    ];

    pub fn name(self) -> &'static str {
        Test::NAMES[self as usize]
    }

    pub fn parse(s: &str) -> Option<Test> {
        Test::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Test::ALL[i])
    }

    pub fn writes(self) -> bool {
        matches!(
            self,
            Test::Write | Test::Rewrite | Test::RandWrite | Test::RecRewrite | Test::FWrite
        )
    }
}

/// One cell of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cell {
    pub file_size: u64,
    pub record: u64,
}

impl Cell {
    pub fn records(&self) -> u64 {
        self.file_size / self.record
    }
}

/// The labels of a cell's metrics: its test, file size and record size.
pub fn cell_labels(test: Test, cell: Cell) -> Labels {
    test_labels(test)
        .with(&FILE_SIZE, cell.file_size)
        .with(&RECORD_SIZE, cell.record)
}

/// The test and cell of a cell's metric, from its labels; `None` for any
/// other labels.
pub fn cell_of(labels: &Labels) -> Option<(Test, Cell)> {
    let cell = Cell {
        file_size: labels.bytes(&FILE_SIZE)?,
        record: labels.bytes(&RECORD_SIZE)?,
    };
    Some((Test::parse(labels.get(&TEST)?)?, cell))
}

/// The label of a test's metrics (its geometric mean).
pub fn test_labels(test: Test) -> Labels {
    Labels::new().with(&TEST, test.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_labelled_with_its_test_and_sizes_in_bytes() {
        let cell = Cell {
            file_size: 128 << 20,
            record: 1 << 20,
        };
        let l = cell_labels(Test::Reread, cell);
        assert_eq!(l.get(&TEST), Some("reread"));
        assert_eq!(l.bytes(&FILE_SIZE), Some(128 << 20));
        assert_eq!(l.bytes(&RECORD_SIZE), Some(1 << 20));
        assert_eq!(test_labels(Test::FRead).get(&TEST), Some("fread"));
        assert_eq!(cell_of(&l), Some((Test::Reread, cell)));
        assert_eq!(cell_of(&test_labels(Test::Reread)), None);
        assert_eq!(cell_of(&l.clone().with(&TEST, "nosuch")), None);
    }
}
