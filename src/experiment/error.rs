//! Validation errors for experiment files: each names file:line:column.

use std::fmt;
use std::ops::Range;

/// A place in an experiment file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl Location {
    /// Converts a byte offset in `source` to a 1-based line and column.
    pub fn at(file: &str, source: &str, offset: usize) -> Location {
        let offset = offset.min(source.len());
        let before = &source[..floor_char_boundary(source, offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let column = before[line_start..].chars().count() + 1;
        Location {
            file: file.to_string(),
            line,
            column,
        }
    }

    pub fn of_span(file: &str, source: &str, span: Option<Range<usize>>) -> Location {
        Location::at(file, source, span.map(|s| s.start).unwrap_or(0))
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Everything that can be wrong with an experiment file.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("{0}: cannot read the experiment file: {1}")]
    Read(String, std::io::Error),
    #[error("{at}: syntax error: {message}")]
    Syntax { at: Location, message: String },
    #[error("{at}: {message}")]
    Invalid { at: Location, message: String },
}

impl ExperimentError {
    pub fn invalid(at: Location, message: impl Into<String>) -> Self {
        ExperimentError::Invalid {
            at,
            message: message.into(),
        }
    }
}

/// The closest candidate to an unknown word, for "did you mean" hints: the
/// fewest edits (insertions, deletions, substitutions, swaps of neighbours),
/// at most a third of the word's length and at least one, as rustc and
/// cargo bound theirs. Short keys need this: `bz` is one edit from `bs`,
/// though a similarity score finds them unlike. Ties go to the first
/// candidate; case differences are free.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = word.chars().count().max(3) / 3;
    let lower = word.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// ` (did you mean `x`?)` or nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(word, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_lines_and_columns() {
        let src = "a = 1\nbb = 2\n";
        assert_eq!(Location::at("f", src, 0).to_string(), "f:1:1");
        assert_eq!(Location::at("f", src, 6).to_string(), "f:2:1");
        assert_eq!(Location::at("f", src, 11).to_string(), "f:2:6");
    }

    #[test]
    fn suggestions() {
        assert_eq!(nearest("runtme", ["runtime", "rw", "bs"]), Some("runtime"));
        assert_eq!(nearest("zzz", ["runtime", "rw"]), None);
        // Short keys: one edit away is a suggestion, two is not.
        assert_eq!(nearest("bz", ["rw", "bs", "size"]), Some("bs"));
        assert_eq!(nearest("xy", ["rw", "bs"]), None);
        // Neighbours swapped, and case.
        assert_eq!(nearest("tmpsf", ["dir", "tmpfs", "loop"]), Some("tmpfs"));
        assert_eq!(nearest("Runtime", ["runtime"]), Some("runtime"));
        // Long words allow more edits, bounded by their length.
        assert_eq!(
            nearest("mount_optons", ["mount_options", "mkfs_options"]),
            Some("mount_options")
        );
        assert_eq!(nearest("numjbs", ["numjobs", "iodepth"]), Some("numjobs"));
    }
}
