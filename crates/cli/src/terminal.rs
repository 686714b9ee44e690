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

/// The columns a terminal gives `c`, as `wcwidth` does: 0 for combining
/// marks and zero-width characters, 2 for East Asian wide and fullwidth
/// characters and emoji, 1 for the rest.
fn char_columns(c: char) -> usize {
    match u32::from(c) {
        0x0300..=0x036F
        | 0x0483..=0x0489
        | 0x0591..=0x05BD
        | 0x0610..=0x061A
        | 0x064B..=0x065F
        | 0x1AB0..=0x1AFF
        | 0x1DC0..=0x1DFF
        | 0x200B..=0x200F
        | 0x2060..=0x2064
        | 0x20D0..=0x20FF
        | 0xFE00..=0xFE0F
        | 0xFE20..=0xFE2F
        | 0xFEFF
        | 0xE0100..=0xE01EF => 0,
        0x1100..=0x115F
        | 0x231A..=0x231B
        | 0x2329..=0x232A
        | 0x23E9..=0x23EC
        | 0x23F0
        | 0x23F3
        | 0x25FD..=0x25FE
        | 0x2614..=0x2615
        | 0x2648..=0x2653
        | 0x267F
        | 0x2693
        | 0x26A1
        | 0x26AA..=0x26AB
        | 0x26BD..=0x26BE
        | 0x26C4..=0x26C5
        | 0x26CE
        | 0x26D4
        | 0x26EA
        | 0x26F2..=0x26F3
        | 0x26F5
        | 0x26FA
        | 0x26FD
        | 0x2705
        | 0x270A..=0x270B
        | 0x2728
        | 0x274C
        | 0x274E
        | 0x2753..=0x2755
        | 0x2757
        | 0x2795..=0x2797
        | 0x27B0
        | 0x27BF
        | 0x2B1B..=0x2B1C
        | 0x2B50
        | 0x2B55
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xA960..=0xA97F
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE10..=0xFE19
        | 0xFE30..=0xFE6F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x16FE0..=0x16FE4
        | 0x17000..=0x18CFF
        | 0x1B000..=0x1B2FF
        | 0x1F004
        | 0x1F0CF
        | 0x1F18E
        | 0x1F191..=0x1F19A
        | 0x1F200..=0x1F251
        | 0x1F300..=0x1F64F
        | 0x1F680..=0x1F6FF
        | 0x1F7E0..=0x1F7EB
        | 0x1F90C..=0x1F9FF
        | 0x1FA70..=0x1FAFF
        | 0x20000..=0x2FFFD
        | 0x30000..=0x3FFFD => 2,
        _ => 1,
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
