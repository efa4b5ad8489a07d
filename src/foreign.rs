//! Text storlab did not write — a command's stderr, a `--tag` value, an
//! imported campaign's name, a stored error — on its way to a terminal.
//! Such text must not drive the terminal: an escape sequence could clear
//! the screen (ESC[2J), retitle the window (OSC 0) or rewrite what storlab
//! printed before, and a bidirectional override can make a line read
//! other than it is. So it is printed with those characters made visible
//! (`\x1b`, `\u{202e}`), and names and tags that a user types are refused
//! when they hold one ([`unprintable`]).

use std::borrow::Cow;
use std::fmt::Write;

/// Characters that reorder the text around them: the bidirectional
/// embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Characters a terminal acts on or that break a line: C0 and C1 controls,
/// DEL, the bidirectional controls and the Unicode line and paragraph
/// separators.
fn is_active(c: char) -> bool {
    c.is_control() || is_bidi_control(c) || matches!(c, '\u{2028}' | '\u{2029}')
}

/// The first character of `text` that a name or tag may not hold, said
/// for an error message (`U+001B`, `U+202E (a bidirectional override)`).
pub fn unprintable(text: &str) -> Option<String> {
    let c = text.chars().find(|&c| is_active(c))?;
    let what = if is_bidi_control(c) {
        " (a bidirectional control, which reorders the text around it)"
    } else if matches!(c, '\u{2028}' | '\u{2029}') {
        " (a line separator)"
    } else {
        " (a control character)"
    };
    Some(format!("U+{:04X}{what}", c as u32))
}

/// `text` on one line with every active character made visible: `\n`,
/// `\t`, `\x1b`, `\u{202e}`, and a backslash doubled only where it could be
/// read as one of those.
pub fn visible(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// As [`visible`], but line breaks and tabs stay as they are: for text of
/// several lines (a command's stderr), printed as lines.
pub fn visible_lines(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, keep_lines: bool) -> Cow<'_, str> {
    let keep = |c: char| keep_lines && matches!(c, '\n' | '\t');
    if !text.chars().any(|c| is_active(c) && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if keep(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_active(c) && (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_active(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_bidi_are_made_visible() {
        assert_eq!(visible("plain text, é ✓"), "plain text, é ✓");
        assert_eq!(visible("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(visible("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
        assert_eq!(visible("x\u{9b}31m"), "x\\x9b31m");
        assert_eq!(visible("abc\u{202E}fed"), "abc\\u{202e}fed");
        assert_eq!(visible("l1\nl2\r"), "l1\\nl2\\r");
        assert_eq!(visible_lines("l1\n\tl2\r\x1b[K"), "l1\n\tl2\\r\\x1b[K");
        assert!(matches!(visible("ok"), Cow::Borrowed(_)));
    }

    #[test]
    fn names_with_active_characters_are_refused() {
        assert_eq!(unprintable("release-1.2 ✓"), None);
        assert!(unprintable("a\u{202E}b").unwrap().contains("U+202E"));
        assert!(unprintable("a\u{2066}b").unwrap().contains("bidirectional"));
        assert!(unprintable("a\u{2028}b")
            .unwrap()
            .contains("line separator"));
        assert!(unprintable("a\x1bb").unwrap().contains("U+001B"));
    }
}
