//! A string quoted as Go's `strconv.Quote` quotes it: how Alertmanager
//! writes a label value in a group key (`model.LabelSet.String`), which
//! receivers key incidents on.

use std::fmt::Write as _;

use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};

/// Appends `value` to `out` in double quotes: `"` and `\` escaped with a
/// backslash, a printable character (Go's `strconv.IsPrint`: a letter,
/// mark, number, punctuation, symbol, or the ASCII space) as it is, the
/// others escaped (`\n`, `\x7f`, `\u00a0`, `\U0010ffff`).
pub(crate) fn go_quote(value: &str, out: &mut String) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ if is_print(c) => out.push(c),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            _ if c < ' ' || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            _ if u32::from(c) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            _ => {
                let _ = write!(out, "\\U{:08x}", u32::from(c));
            }
        }
    }
    out.push('"');
}

/// Go's `unicode.IsPrint`: categories L, M, N, P, S, and U+0020.
fn is_print(c: char) -> bool {
    c == ' '
        || matches!(
            c.general_category_group(),
            GeneralCategoryGroup::Letter
                | GeneralCategoryGroup::Mark
                | GeneralCategoryGroup::Number
                | GeneralCategoryGroup::Punctuation
                | GeneralCategoryGroup::Symbol
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted(value: &str) -> String {
        let mut out = String::new();
        go_quote(value, &mut out);
        out
    }

    /// Go's own cases (`strconv`'s `quotetests`).
    #[test]
    fn quotes_as_go_does() {
        for (value, expected) in [
            ("\u{7}\u{8}\u{c}\r\n\t\u{b}", r#""\a\b\f\r\n\t\v""#),
            ("\\", r#""\\""#),
            ("\u{263a}", "\"\u{263a}\""),
            ("\u{10ffff}", r#""\U0010ffff""#),
            ("\u{4}", r#""\x04""#),
            ("!\u{a0}!\u{2000}!\u{3000}!", r#""!\u00a0!\u2000!\u3000!""#),
            ("\u{7f}", r#""\x7f""#),
            ("say \"hi\"", r#""say \"hi\"""#),
        ] {
            assert_eq!(quoted(value), expected, "{value:?}");
        }
    }

    /// Reads a quoted string back (the escapes [`go_quote`] writes).
    fn unquote(quoted: &str) -> Option<String> {
        let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
        let mut out = String::new();
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            if c == '"' {
                return None;
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let hex = |chars: &mut std::str::Chars<'_>, n| {
                let digits: String = chars.take(n).collect();
                char::from_u32(u32::from_str_radix(&digits, 16).ok()?)
            };
            out.push(match chars.next()? {
                'a' => '\u{7}',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                'v' => '\u{b}',
                'x' => hex(&mut chars, 2)?,
                'u' => hex(&mut chars, 4)?,
                'U' => hex(&mut chars, 8)?,
                c @ ('"' | '\\') => c,
                _ => return None,
            });
        }
        Some(out)
    }

    proptest::proptest! {
        /// Any value reads back as it was, with no control character left
        /// raw; plain text is only put in quotes.
        #[test]
        fn a_quoted_value_reads_back(value in "\\PC*|[\\x00-\\x7f]*|.*") {
            let q = quoted(&value);
            proptest::prop_assert_eq!(unquote(&q), Some(value.clone()), "{}", q);
            proptest::prop_assert!(!q.chars().any(char::is_control), "{}", q);
            if value.chars().all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '-') {
                proptest::prop_assert_eq!(q, format!("\"{value}\""));
            }
        }
    }
}
