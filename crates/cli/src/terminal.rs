//! Text for the operator's terminal. Tool and model names, session and
//! call ids are chosen by clients and models; printed raw, an escape
//! sequence in one clears the screen, recolours or hides rows, retitles
//! the window or writes the clipboard (OSC 52). Every such string goes
//! through [`shown`] (or [`cell`]) on its way into a text report.

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

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

/// [`shown`], cut to `width` terminal columns (the last one `…`) so that
/// one long name does not push every column of its table out of line.
pub(crate) fn cell(s: &str, width: usize) -> String {
    let s = shown(s);
    if columns(&s) <= width {
        return s.into_owned();
    }
    let mut t = String::with_capacity(width + 3);
    let mut used = 0;
    for c in s.chars() {
        let w = char_columns(c);
        if used + w > width.saturating_sub(1) {
            break;
        }
        used += w;
        t.push(c);
    }
    t.push('…');
    t
}

/// [`cell`], padded with spaces to `width` columns: a column of a table.
/// (`format!("{:<N}")` pads to N characters, and a CJK character or an
/// emoji takes two columns: the rows after such a name went out of line.)
pub(crate) fn column(s: &str, width: usize) -> String {
    padded(&cell(s, width), width)
}

/// `s` (already [`shown`]) followed by spaces up to `width` columns.
pub(crate) fn padded(s: &str, width: usize) -> String {
    let mut out = s.to_string();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(columns(s))));
    out
}

/// The terminal columns `s` takes (no control characters: [`shown`] text).
pub(crate) fn columns(s: &str) -> usize {
    s.chars().map(char_columns).sum()
}

/// The columns a terminal gives `c`, as `wcwidth` does (the
/// `unicode-width` crate's table, kept to the current Unicode version): 0
/// for combining marks and zero-width characters, 2 for East Asian wide
/// and fullwidth characters and emoji, 1 for the rest. Control characters,
/// which [`shown`] text no longer holds, count 0.
fn char_columns(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
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

    /// A CJK name takes two columns a character: padded by characters,
    /// its row's next column started too far right.
    #[test]
    fn wide_names_are_cut_and_padded_by_columns() {
        assert_eq!(columns("検索ツール"), 10);
        assert_eq!(column("検索", 6), "検索  ");
        assert_eq!(column("ab", 6), "ab    ");
        assert_eq!(cell("検索ツール", 6), "検索…");
        assert_eq!(columns(&cell("検索ツール", 6)), 5);
        assert_eq!(column("e\u{301}", 3), "e\u{301}  ");
        assert_eq!(column("🔧fix", 6), "🔧fix ");
    }

    /// Combining marks outside the Latin, Cyrillic, Hebrew and Arabic
    /// blocks (Thai's vowel signs, Devanagari's virama) take no column;
    /// the hand-written table this replaced counted one for each.
    #[test]
    fn marks_of_every_script_take_no_column() {
        assert_eq!(columns("กั"), 1);
        assert_eq!(columns("क्ष"), 2);
        assert_eq!(column("नमस्ते", 6), "नमस्ते  ");
    }

    proptest::proptest! {
        /// Whatever the name, its column is exactly `width` columns wide
        /// (a wide character that would straddle the edge is left out).
        #[test]
        fn a_column_is_as_wide_as_asked(name in "\\PC{0,30}", width in 2usize..40) {
            proptest::prop_assert_eq!(columns(&column(&name, width)), width);
        }
    }

    #[test]
    fn cells_are_cut_to_their_width() {
        assert_eq!(cell("search", 8), "search");
        assert_eq!(cell("mcp__server__tool", 8), "mcp__se…");
        assert_eq!(cell("\u{1b}[2J", 6), "\\u{1b…");
    }
}
