//! The matrix's axes as the workload runs them: every file size × record
//! size cell (powers of two, a record never above its file), and the order
//! in which a test visits the records of a file. Pure: no I/O here. The
//! tests and cells as they label the metrics are the metric catalogue's
//! ([`crate::metric::matrix`]).

pub use crate::metric::matrix::{cell_labels, cell_of, test_labels, Cell, Test};

/// iozone's default stride for strideread, in records; odd, so that on a
/// power-of-two number of records every record is visited once.
pub const STRIDE: u64 = 17;

impl Test {
    /// Whether the test starts from an empty file (iozone's write and fwrite).
    pub fn truncates(self) -> bool {
        matches!(self, Test::Write | Test::FWrite)
    }

    /// Whether the test goes through a buffered stream (iozone's f-tests).
    pub fn buffered(self) -> bool {
        matches!(self, Test::FWrite | Test::FRead)
    }

    /// The tag written into each record by a writing test, so that what
    /// reaches the disk tells which test wrote it.
    pub fn tag(self) -> u64 {
        0x5354_4f52_4c41_4200 | self as u64
    }

    /// Whether the test visits the records in a shuffled order.
    pub fn random(self) -> bool {
        matches!(self, Test::RandRead | Test::RandWrite)
    }

    /// The index of the record touched by operation `i` of `n` (a power of
    /// two), for the tests that are not random: every record once, except
    /// recrewrite, which rewrites record 0 `n` times.
    #[inline]
    pub fn record_index(self, i: u64, n: u64) -> u64 {
        let mask = n - 1;
        match self {
            Test::BkwdRead => n - 1 - i,
            Test::RecRewrite => 0,
            Test::StrideRead => i.wrapping_mul(STRIDE) & mask,
            _ => i,
        }
    }
}

/// Every cell, file sizes ascending then record sizes ascending, as iozone -a.
pub fn cells(min_file: u64, max_file: u64, min_rec: u64, max_rec: u64) -> Vec<Cell> {
    let mut out = Vec::new();
    let mut f = min_file;
    while f <= max_file {
        let mut r = min_rec;
        while r <= max_rec && r <= f {
            out.push(Cell {
                file_size: f,
                record: r,
            });
            match r.checked_mul(2) {
                Some(next) => r = next,
                None => break,
            }
        }
        match f.checked_mul(2) {
            Some(next) => f = next,
            None => break,
        }
    }
    out
}

/// The record indices `0..n` in a random order (Fisher–Yates), built before
/// a random test's timed loop.
pub fn shuffled(n: u64, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    let mut rng = crate::workload::io::rng::Rng::new(seed);
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iozone_default_axes() {
        let c = cells(64 << 10, 512 << 20, 4 << 10, 16 << 20);
        assert_eq!(
            c.first(),
            Some(&Cell {
                file_size: 64 << 10,
                record: 4 << 10
            })
        );
        assert!(c.iter().all(|c| c.record <= c.file_size));
        // 64k..16m: 5+6+…+13 records; 32m..512m: 13 each.
        assert_eq!(c.len(), (5..=13).sum::<usize>() + 5 * 13);
    }

    #[test]
    fn every_pattern_touches_each_record_once() {
        let n = 64;
        for &t in Test::ALL.iter().filter(|t| **t != Test::RecRewrite) {
            let order = shuffled(n, 9);
            let mut seen = vec![0u32; n as usize];
            for i in 0..n {
                let idx = if t.random() {
                    order[i as usize] as u64
                } else {
                    t.record_index(i, n)
                };
                seen[idx as usize] += 1;
            }
            assert!(seen.iter().all(|&s| s == 1), "{}: {seen:?}", t.name());
        }
        assert_eq!(Test::parse("strideread"), Some(Test::StrideRead));
        assert_eq!(Test::FRead.name(), "fread");
    }

    #[test]
    fn shuffles_are_not_strides() {
        let s = shuffled(1024, 1);
        let steps: std::collections::BTreeSet<i64> =
            s.windows(2).map(|w| w[1] as i64 - w[0] as i64).collect();
        assert!(steps.len() > 500, "{} distinct steps", steps.len());
        assert_ne!(shuffled(1024, 1), shuffled(1024, 2));
    }
}
