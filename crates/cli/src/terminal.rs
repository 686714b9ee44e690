//! Text for the operator's terminal. Tool and model names, session and
//! call ids are chosen by clients and models; printed raw, an escape
//! sequence in one clears the screen, recolours or hides rows, retitles
//! the window or writes the clipboard (OSC 52). Every such string goes
//! through [`shown`] (or [`cell`]) on its way into a text report.

use std::borrow::Cow;

/// `s` with every character a terminal would act on written out instead:
/// control characters (C0, DEL, C1: ESC starts every sequence) as `\u{1b}`,
/// and the bidirectional overrides that reorder what follows them.
pub(crate) fn shown(s: &str) -> Cow<'_, str> {
    if !s.chars().any(acted_on) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if acted_on(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`shown`], cut to `width` characters (the last one `…`) so that one
/// long name does not push every column of its table out of line.
pub(crate) fn cell(s: &str, width: usize) -> String {
    let s = shown(s);
    if s.chars().count() <= width {
        s.into_owned()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A character the terminal acts on rather than shows.
fn acted_on(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_written_out() {
        assert_eq!(
            shown("Ev\u{1b}[2J\u{1b}[31mil"),
            "Ev\\u{1b}[2J\\u{1b}[31mil"
        );
        assert_eq!(shown("m\u{1b}]0;TITLE\u{7}x"), "m\\u{1b}]0;TITLE\\u{7}x");
        assert_eq!(shown("a\u{9b}b\u{202e}c"), "a\\u{9b}b\\u{202e}c");
        assert!(matches!(shown("read_file · ünïcode"), Cow::Borrowed(_)));
    }

    #[test]
    fn cells_are_cut_to_their_width() {
        assert_eq!(cell("search", 8), "search");
        assert_eq!(cell("mcp__server__tool", 8), "mcp__se…");
        assert_eq!(cell("\u{1b}[2J", 6), "\\u{1b…");
    }
}
