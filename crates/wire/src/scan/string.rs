//! String literals: where one ends, 64 bytes at a time.
//!
//! Each 64-byte block becomes one bit mask of the bytes that can stop a
//! string — `"`, `\` and the control characters JSON forbids in one
//! ([`crate::bytemask`]). An escape is checked and stepped over inside the same
//! mask, so text with an escape every few dozen bytes (tool output is full
//! of `\n` and `\"`) does not restart the scan.

use super::Bail;
use crate::bytemask::stops;
use crate::text::SIMPLE_ESCAPES;

/// The length of the escape at `bytes[at]` (a `\`), checked as serde_json
/// checks escapes it skips: one of `"\/bfnrt`, or `u` and four hex digits.
#[inline(always)]
fn escape_len(bytes: &[u8], at: usize) -> Result<usize, Bail> {
    let byte = *bytes.get(at + 1).ok_or(Bail)?;
    if SIMPLE_ESCAPES[usize::from(byte)] != 0 {
        return Ok(2);
    }
    if byte != b'u' {
        return Err(Bail);
    }
    match bytes.get(at + 2..at + 6) {
        Some(hex) if hex.iter().all(u8::is_ascii_hexdigit) => Ok(6),
        _ => Err(Bail),
    }
}

/// The end of the string whose opening quote is at `bytes[open]`: the
/// index just past its closing quote, and whether it holds an escape.
/// Bails on a control character, a bad escape or no closing quote.
pub(super) fn end(bytes: &[u8], open: usize) -> Result<(usize, bool), Bail> {
    let mut at = open + 1;
    let mut escaped = false;
    loop {
        // Whole blocks.
        while let Some(block) = bytes.get(at..at + 64) {
            let block: &[u8; 64] = block.try_into().map_err(|_| Bail)?;
            let mut mask = stops(block);
            if mask == 0 {
                at += 64;
                continue;
            }
            let base = at;
            loop {
                let k = mask.trailing_zeros() as usize;
                match bytes[base + k] {
                    b'"' => return Ok((base + k + 1, escaped)),
                    b'\\' => {
                        escaped = true;
                        let next = k + escape_len(bytes, base + k)?;
                        if next >= 64 {
                            at = base + next;
                            break;
                        }
                        mask &= !0u64 << next;
                        if mask == 0 {
                            at = base + 64;
                            break;
                        }
                    }
                    _ => return Err(Bail),
                }
            }
        }
        // The tail, byte by byte.
        while at < bytes.len() && !matches!(bytes[at], b'"' | b'\\' | 0..=0x1f) {
            at += 1;
        }
        match bytes.get(at).ok_or(Bail)? {
            b'"' => return Ok((at + 1, escaped)),
            b'\\' => {
                escaped = true;
                at += escape_len(bytes, at)?;
            }
            _ => return Err(Bail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serde_json says about the same literal.
    fn serde_ok(lit: &[u8]) -> bool {
        serde_json::from_slice::<serde::de::IgnoredAny>(lit).is_ok()
    }

    #[test]
    fn ends_where_serde_json_does() {
        let long = "x".repeat(200);
        let cases: Vec<String> = vec![
            r#""""#.into(),
            r#""abc""#.into(),
            r#""a\"b""#.into(),
            r#""a\\""#.into(),
            r#""\u00e9\n\t\/""#.into(),
            r#""\ud800""#.into(),
            format!(r#""{long}\n{long}""#),
            format!(r#""{long}\"""#),
            format!("\"{}\\n\"", "é".repeat(100)),
        ];
        for lit in &cases {
            let bytes = lit.as_bytes();
            assert_eq!(end(bytes, 0).map(|(e, _)| e), Ok(bytes.len()), "{lit}");
            assert!(serde_ok(bytes), "{lit}");
        }
    }

    #[test]
    fn bails_where_serde_json_fails() {
        let long = "y".repeat(100);
        let cases: Vec<String> = vec![
            "\"abc".into(),
            "\"a\nb\"".into(),
            "\"a\u{1}\"".into(),
            r#""\x""#.into(),
            r#""\u12g4""#.into(),
            r#""\u12""#.into(),
            format!("\"{long}\t{long}\""),
            format!("\"{long}\\q\""),
            format!("\"{long}"),
            "\"\\".into(),
        ];
        for lit in &cases {
            let bytes = lit.as_bytes();
            assert_eq!(end(bytes, 0), Err(Bail), "{lit:?}");
            assert!(!serde_ok(bytes), "{lit:?}");
        }
    }

    /// Where serde_json ends the literal `lit` opens (just past the first
    /// quote no odd run of backslashes escapes), if it reads it.
    fn serde_end(lit: &[u8]) -> Option<usize> {
        let mut run = 0usize;
        for (i, &byte) in lit.iter().enumerate().skip(1) {
            if byte == b'\\' {
                run += 1;
                continue;
            }
            if byte == b'"' && run.is_multiple_of(2) {
                return Some(i + 1).filter(|&e| serde_ok(&lit[..e]));
            }
            run = 0;
        }
        None
    }

    #[test]
    fn escapes_astride_a_blocks_edge() {
        let patterns = [
            r#"\""#, r#"\\""#, r#"\\\""#, r#"\\\\""#, r"\n", r"\\n", r"\u00e9", r"\u00", r"\x",
            r"\\\x", r"\\\\x", "plain",
        ];
        for pattern in patterns {
            for pad in 0..140 {
                for open in [0, 1, 63] {
                    let mut input = vec![b' '; open];
                    input.push(b'"');
                    input.extend(std::iter::repeat_n(b'a', pad));
                    input.extend_from_slice(pattern.as_bytes());
                    // After the literal, an escape of another's, and
                    // enough more that the block after the edge is whole.
                    input.extend_from_slice(b"b\" \\n tail \"");
                    input.extend(std::iter::repeat_n(b'z', 64));
                    let want = serde_end(&input[open..]);
                    let got = end(&input, open).ok();
                    let what = format!("{pattern} after {pad} bytes, opened at {open}");
                    assert_eq!(got.map(|(e, _)| e - open), want, "{what}");
                    if let Some((e, escaped)) = got {
                        assert_eq!(escaped, input[open..e].contains(&b'\\'), "{what}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// Long literals made of escapes, backslash runs and text (mostly
        /// valid, so they cross several blocks, their escapes and runs
        /// astride the blocks' edges), opened anywhere in the input and
        /// followed by more: the scan ends exactly where serde_json does,
        /// or bails where it fails, and says whether it met an escape.
        #[test]
        fn agrees_with_serde_json_across_blocks(
            lead in 0usize..70,
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    6 => proptest::prelude::Just("abcdefgh"),
                    3 => proptest::prelude::Just("\\n"),
                    2 => proptest::prelude::Just("\\\""),
                    2 => proptest::prelude::Just("\\\\"),
                    1 => proptest::prelude::Just("\\\\\\"),
                    1 => proptest::prelude::Just("\\u00e9"),
                    1 => proptest::prelude::Just("\\uD83D"),
                    1 => proptest::prelude::Just("é"),
                    1 => proptest::prelude::Just("x"),
                    1 => proptest::prelude::Just("\\"),
                    1 => proptest::prelude::Just("\\u12"),
                    1 => proptest::prelude::Just("\\q"),
                    1 => proptest::prelude::Just("\t"),
                    1 => proptest::prelude::Just("\""),
                ],
                0..200,
            ),
            after in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80),
        ) {
            let mut input = vec![b' '; lead];
            input.push(b'"');
            for part in &parts {
                input.extend_from_slice(part.as_bytes());
            }
            input.push(b'"');
            input.extend_from_slice(&after);
            let lit = &input[lead..];
            let valid = serde_end(lit);
            match end(&input, lead) {
                Ok((e, escaped)) => {
                    proptest::prop_assert_eq!(Some(e - lead), valid);
                    proptest::prop_assert_eq!(escaped, input[lead..e].contains(&b'\\'));
                }
                Err(Bail) => proptest::prop_assert_eq!(valid, None),
            }
        }

        /// Any bytes after a quote: the scan ends exactly where serde_json
        /// finds the literal's end, or bails where it fails.
        #[test]
        fn agrees_with_serde_json(
            body in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => proptest::prelude::Just(b'a'),
                    2 => proptest::prelude::Just(b'"'),
                    2 => proptest::prelude::Just(b'\\'),
                    1 => proptest::prelude::Just(b'u'),
                    1 => proptest::prelude::Just(b'n'),
                    1 => proptest::prelude::Just(b'0'),
                    1 => proptest::prelude::Just(b'\n'),
                    1 => proptest::prelude::Just(0xc3u8),
                    1 => proptest::prelude::Just(0xa9u8),
                ],
                0..300,
            )
        ) {
            let mut lit = vec![b'"'];
            lit.extend_from_slice(&body);
            match end(&lit, 0) {
                Ok((e, escaped)) => {
                    proptest::prop_assert!(serde_ok(&lit[..e]));
                    proptest::prop_assert_eq!(escaped, lit[..e].contains(&b'\\'));
                    proptest::prop_assert_eq!(lit[e - 1], b'"');
                }
                Err(Bail) => {
                    // No prefix ending in a quote is a valid literal.
                    for e in 2..=lit.len() {
                        if lit[e - 1] == b'"' && std::str::from_utf8(&lit[..e]).is_ok() {
                            proptest::prop_assert!(!serde_ok(&lit[..e]), "{:?}", &lit[..e]);
                        }
                    }
                }
            }
        }
    }
}
