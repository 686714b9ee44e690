//! Text helpers shared by the executor and the metrics.

use std::borrow::Cow;

/// The most bytes of a caller's text (a tool name, a call id) a log line
/// shows, before escaping.
pub(crate) const LOG_TEXT_MAX: usize = 200;

/// At most `max` bytes of `s`, cut at a character boundary.
pub(crate) fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

/// A model's or client's text (a tool name, a call id) as a log line shows
/// it: [`clip`]ped to [`LOG_TEXT_MAX`] bytes, each control character (a
/// newline that would start a forged line, the ESC of a terminal
/// sequence) and bidirectional override written out as its escape
/// (`\n`, `\u{1b}`).
pub(crate) fn for_log(s: &str) -> Cow<'_, str> {
    let s = clip(s, LOG_TEXT_MAX);
    if !s.chars().any(escaped_in_logs) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escaped_in_logs(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A character a log line writes out as its escape.
fn escaped_in_logs(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    #[test]
    fn clip_cuts_at_a_character_boundary() {
        assert_eq!(super::clip("héllo", 2), "h");
        assert_eq!(super::clip("héllo", 3), "hé");
        assert_eq!(super::clip("abc", 9), "abc");
    }

    #[test]
    fn log_text_is_clipped_and_escaped() {
        use super::for_log;
        assert_eq!(for_log("read_file · ünïcode"), "read_file · ünïcode");
        assert!(matches!(
            for_log("read_file"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            for_log("a\nfake line\u{1b}[2J\t\u{202e}z"),
            "a\\nfake line\\u{1b}[2J\\t\\u{202e}z"
        );
        assert_eq!(for_log(&"x".repeat(10_000)).len(), super::LOG_TEXT_MAX);
    }
}
