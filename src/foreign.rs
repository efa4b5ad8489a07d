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

/// JSON text with no active character raw: serde_json escapes the C0
/// controls itself; DEL, the C1 controls, the bidirectional controls and
/// the line separators it leaves raw, and they become `\uXXXX` here. They
/// can only stand inside strings (JSON's own syntax is ASCII), where the
/// escape reads back as the same character: lossless, unlike [`visible`].
pub fn json_inert(json: &str) -> Cow<'_, str> {
    if !json.chars().any(is_active) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        match c {
            // Whitespace between tokens; inside strings serde escaped it.
            '\n' | '\t' | '\r' => out.push(c),
            c if is_active(c) => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `value` as pretty JSON, inert ([`json_inert`]): every JSON storlab
/// prints or writes.
pub fn to_json_pretty<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    Ok(json_inert(&serde_json::to_string_pretty(value)?).into_owned())
}

/// `value` as pretty JSON into `w` as it is made, inert ([`json_inert`]).
pub fn write_json_pretty<T: serde::Serialize + ?Sized>(
    w: &mut dyn std::io::Write,
    value: &T,
) -> serde_json::Result<()> {
    let mut inert = JsonInert {
        inner: w,
        pending: Vec::new(),
    };
    serde_json::to_writer_pretty(&mut inert, value)?;
    std::io::Write::flush(&mut inert).map_err(serde_json::Error::io)
}

/// A writer that passes JSON text on made inert, holding back a
/// character cut between two writes until it is whole.
struct JsonInert<'a> {
    inner: &'a mut dyn std::io::Write,
    pending: Vec<u8>,
}

impl std::io::Write for JsonInert<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(t) => t.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            // Not UTF-8 at all: serde_json never writes that; pass it on.
            Err(_) => self.pending.len(),
        };
        let text = String::from_utf8_lossy(&self.pending[..whole]).into_owned();
        self.inner.write_all(json_inert(&text).as_bytes())?;
        self.pending.drain(..whole);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let rest = std::mem::take(&mut self.pending);
        self.inner.write_all(&rest)?;
        self.inner.flush()
    }
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
    fn json_keeps_every_string_and_no_active_character() {
        let v = serde_json::json!({"n\u{202E}": "a\u{1b}[2J\u{9b}\u{7f}\u{2028}é\r\n"});
        let text = to_json_pretty(&v).unwrap();
        assert!(!text.chars().any(|c| is_active(c) && c != '\n'), "{text}");
        assert!(
            text.contains("\\u202e") && text.contains("\\u009b"),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
        // Written as it is made, a character cut between writes whole.
        let mut out = Vec::new();
        let mut w = JsonInert {
            inner: &mut out,
            pending: Vec::new(),
        };
        let bytes = "\"a\u{202E}b\"".as_bytes();
        for chunk in bytes.chunks(1) {
            std::io::Write::write_all(&mut w, chunk).unwrap();
        }
        std::io::Write::flush(&mut w).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "\"a\\u202eb\"");
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
