//! Validation errors for experiment files: each names file:line:column on
//! its first line and, below it, shows the offending line with a caret
//! under the span (as rustc does, through annotate-snippets).

use std::fmt;
use std::ops::Range;

/// A place in an experiment file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The line it is on, to show under the message; none where the fault
    /// has no place of its own (a missing section).
    pub excerpt: Option<Excerpt>,
}

/// A line of the file and the part of it to underline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    /// The line's text, without its line break.
    pub text: String,
    /// Byte offsets in `text`; a span that goes on to later lines is
    /// underlined to the end of its first.
    pub span: Range<usize>,
}

impl Location {
    /// Converts a byte offset in `source` to a 1-based line and column.
    pub fn at(file: &str, source: &str, offset: usize) -> Location {
        let offset = floor_char_boundary(source, offset.min(source.len()));
        let before = &source[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let column = before[line_start..].chars().count() + 1;
        Location {
            file: file.to_string(),
            line,
            column,
            excerpt: None,
        }
    }

    /// The start of `span`, with its line to show; the top of the file,
    /// without a line, when there is no span.
    pub fn of_span(file: &str, source: &str, span: Option<Range<usize>>) -> Location {
        let Some(span) = span else {
            return Location::at(file, source, 0);
        };
        let mut at = Location::at(file, source, span.start);
        at.excerpt = Some(Excerpt::of(source, span));
        at
    }
}

impl Excerpt {
    fn of(source: &str, span: Range<usize>) -> Excerpt {
        let start = floor_char_boundary(source, span.start.min(source.len()));
        let line_start = source[..start].rfind('\n').map(|i| i + 1).unwrap_or(0);
        let line_end = source[start..]
            .find('\n')
            .map(|i| start + i)
            .unwrap_or(source.len());
        let text = source[line_start..line_end].trim_end_matches('\r');
        let end = floor_char_boundary(source, span.end.clamp(start, line_end));
        let clamp = |i: usize| (i - line_start).min(text.len());
        Excerpt {
            text: text.to_string(),
            span: clamp(start)..clamp(end),
        }
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

    /// `error: FILE:LINE:COL: message`, then the line with a caret under
    /// what is wrong: styled (anstyle) for a stream that strips what its
    /// terminal cannot show (anstream), ending in a line break.
    pub fn render(&self) -> String {
        let title = self.to_string();
        let excerpt = match self {
            ExperimentError::Syntax { at, .. } | ExperimentError::Invalid { at, .. } => {
                at.excerpt.as_ref().map(|e| (at.line, e))
            }
            ExperimentError::Read(..) => None,
        };
        let Some((line, excerpt)) = excerpt else {
            let red = anstyle::Style::new()
                .bold()
                .fg_color(Some(anstyle::AnsiColor::Red.into()));
            return format!("{red}error{red:#}: {title}\n");
        };
        use annotate_snippets::{Level, Renderer, Snippet};
        let snippet = Snippet::source(&excerpt.text)
            .line_start(line)
            .annotation(Level::Error.span(excerpt.span.clone()));
        let message = Level::Error.title(&title).snippet(snippet);
        let text = Renderer::styled().render(message).to_string();
        // Without a label, the renderer closes with an empty gutter line.
        let mut lines: Vec<&str> = text.trim_end().lines().collect();
        if lines.len() > 1
            && anstream::adapter::strip_str(lines[lines.len() - 1])
                .to_string()
                .trim()
                == "|"
        {
            lines.pop();
        }
        format!("{}\n", lines.join("\n"))
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
    fn the_line_is_shown_with_a_caret_under_the_span() {
        let src = "a = 1\r\nnumjobs = \"four\"\r\nb = 2\n";
        let start = src.find("\"four").unwrap();
        let at = Location::of_span("f.toml", src, Some(start..start + 6));
        assert_eq!(at.to_string(), "f.toml:2:11");
        let e = ExperimentError::invalid(at, "`numjobs` must be an integer");
        let plain = anstream::adapter::strip_str(&e.render()).to_string();
        assert_eq!(
            plain,
            "error: f.toml:2:11: `numjobs` must be an integer\n  |\n2 | numjobs = \"four\"\n  |           ^^^^^^\n"
        );
        // A span over several lines is underlined to the end of its first;
        // offsets inside a character and past the end are brought back.
        let src = "x = [\n 1,\n]\né = \"ü\"";
        let e = Excerpt::of(src, 4..12);
        assert_eq!((e.text.as_str(), e.span.clone()), ("x = [", 4..5));
        let u = src.find('ü').unwrap();
        let e = Excerpt::of(src, u + 1..src.len() + 9);
        assert_eq!(
            (e.text.as_str(), e.span.start),
            ("é = \"ü\"", u - src.find('é').unwrap())
        );
        // No span: the message alone.
        let e = ExperimentError::invalid(Location::of_span("f", src, None), "no [[workload]]");
        assert_eq!(
            anstream::adapter::strip_str(&e.render()).to_string(),
            "error: f:1:1: no [[workload]]\n"
        );
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
