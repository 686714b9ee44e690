//! Small text helpers shared by the dialects: content flattening, the
//! first-turn hash, MCP `isError` detection and cheap byte-level checks
//! that let the stream parsers skip events before any JSON parsing.

use std::borrow::Cow;

use toolwarden_core::Verdict;

use crate::{WireError, WireErrorKind, bytemask};

/// The content detector as the views call it (a seam so unit tests can
/// pass a fixed rule instead of [`crate::Detector`]): the verdict on a
/// result without an explicit flag ([`crate::Detector::verdict`]).
pub(crate) type Judge<'a> = &'a dyn Fn(&str) -> Verdict;

/// Appends `part` to a text being joined with newlines, borrowing while
/// there is only one part.
pub(crate) fn push_part<'a>(acc: &mut Option<Cow<'a, str>>, part: Cow<'a, str>) {
    match acc {
        None => *acc = Some(part),
        Some(prev) => {
            let s = prev.to_mut();
            s.push('\n');
            s.push_str(&part);
        }
    }
}

/// Decode a JSON string literal (quotes included) that the body's parse
/// has already checked: borrowed when it has no escapes, else one
/// allocation of the literal's size (serde_json would unescape into its
/// scratch buffer and copy again). Errors as serde_json does: a lone UTF-16
/// surrogate escape is invalid JSON text.
pub(crate) fn unescape(raw: &str) -> Result<Cow<'_, str>, WireError> {
    let inner = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .ok_or_else(|| WireError::new(WireErrorKind::Shape, "expected a JSON string"))?;
    let bytes = inner.as_bytes();
    let Some(first) = memchr::memchr(b'\\', bytes) else {
        return Ok(Cow::Borrowed(inner));
    };
    let mut out = String::with_capacity(inner.len());
    // `inner[..done]` is in `out`. Every index below is a backslash's or
    // just past an escape: ASCII, so a char boundary.
    let mut done: usize = 0;
    // Whole 64-byte blocks from the first escape on, each masked once: tool
    // output has an escape every few dozen bytes, and looking for each one
    // afresh (as a `memchr` per escape does) costs more than the copying.
    let mut block = first;
    while let Some(chunk) = bytes.get(block..block + 64) {
        let mut mask = <&[u8; 64]>::try_from(chunk).map_or(0, bytemask::backslashes);
        // An escape decoded in the block before may reach into this one
        // (by at most 11 bytes).
        mask &= !0u64 << done.saturating_sub(block).min(63);
        while mask != 0 {
            let at = block + mask.trailing_zeros() as usize;
            out.push_str(&inner[done..at]);
            done = at + push_escape(&mut out, inner, at)?;
            mask = match done - block {
                next @ 0..64 => mask & (!0u64 << next),
                _ => 0,
            };
        }
        block += 64;
    }
    // The tail, one escape at a time.
    let mut from = done.max(block);
    while let Some(k) = memchr::memchr(b'\\', &bytes[from..]) {
        let at = from + k;
        out.push_str(&inner[done..at]);
        done = at + push_escape(&mut out, inner, at)?;
        from = done;
    }
    out.push_str(&inner[done..]);
    Ok(Cow::Owned(out))
}

/// What a two-byte escape `\x` stands for, by `x`; 0 for `u` (then four
/// hex digits follow) and for what is no escape. The scanner's check of an
/// escape (`scan::string`) reads it too.
pub(crate) const SIMPLE_ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    let pairs = [
        (b'"', b'"'),
        (b'\\', b'\\'),
        (b'/', b'/'),
        (b'b', 0x08),
        (b'f', 0x0c),
        (b'n', b'\n'),
        (b'r', b'\r'),
        (b't', b'\t'),
    ];
    let mut k = 0;
    while k < pairs.len() {
        table[pairs[k].0 as usize] = pairs[k].1;
        k += 1;
    }
    table
};

/// Appends what the escape at `s[at]` (a backslash) stands for and gives
/// its length: a table lookup for the two-byte escapes tool output is full
/// of, [`unicode_escape`] for the rest.
#[inline(always)]
fn push_escape(out: &mut String, s: &str, at: usize) -> Result<usize, WireError> {
    let next = s.as_bytes().get(at + 1).copied().unwrap_or(0);
    match SIMPLE_ESCAPES[usize::from(next)] {
        0 => {
            let (c, len) = unicode_escape(s, at)?;
            out.push(c);
            Ok(len)
        }
        byte => {
            out.push(char::from(byte));
            Ok(2)
        }
    }
}

/// The escape at `s[at]` (a backslash) that is not a two-byte one: a
/// `\u` escape (a surrogate pair's two), its character and length, or an
/// error.
fn unicode_escape(s: &str, at: usize) -> Result<(char, usize), WireError> {
    let invalid = |what: &str| WireError::new(WireErrorKind::InvalidJson, what);
    let after = s.get(at + 1..).unwrap_or_default();
    match after.as_bytes().first() {
        Some(b'u') => {
            let hi = hex4(&after[1..]).ok_or_else(|| invalid("invalid escape"))?;
            match hi {
                0xD800..=0xDBFF => {
                    let lo = after[5..]
                        .strip_prefix("\\u")
                        .and_then(hex4)
                        .filter(|lo| (0xDC00..=0xDFFF).contains(lo))
                        .ok_or_else(|| invalid("lone leading surrogate in hex escape"))?;
                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    let c = char::from_u32(c).ok_or_else(|| invalid("invalid escape"))?;
                    Ok((c, 12))
                }
                0xDC00..=0xDFFF => Err(invalid("lone trailing surrogate in hex escape")),
                _ => Ok((
                    char::from_u32(hi).ok_or_else(|| invalid("invalid escape"))?,
                    6,
                )),
            }
        }
        _ => Err(invalid("invalid escape")),
    }
}

/// Four hex digits at the start of `s`.
fn hex4(s: &str) -> Option<u32> {
    let digits = s.get(..4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// The verdict for a result without an explicit flag: MCP-style `isError`
/// carried inside the content first, then the content detector.
pub(crate) fn flagless_verdict(content: &str, judge: Judge<'_>) -> Verdict {
    if let Some(flag) = mcp_is_error(content) {
        return Verdict::explicit(flag);
    }
    judge(content)
}

/// MCP tool results serialised as text carry `"isError": true|false` at the
/// top level of a JSON object: `Some(flag)` when the content is such an
/// object, `None` otherwise. Cheap when the key is absent.
pub(crate) fn mcp_is_error(content: &str) -> Option<bool> {
    let trimmed = content.trim_start();
    if !trimmed.starts_with('{')
        || memchr::memmem::find(content.as_bytes(), b"\"isError\"").is_none()
    {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Mcp {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    serde_json::from_str::<Mcp>(trimmed).ok()?.is_error
}

/// The offset in a JSON string literal (`"…"`, as sent) at which the first
/// `decoded` bytes of its value end; `None` when `decoded` falls inside
/// an escape or past the value's end.
pub(crate) fn escaped_offset(literal: &str, decoded: usize) -> Option<usize> {
    let bytes = literal.as_bytes();
    let (mut at, mut out) = (1, 0);
    while out < decoded {
        let (raw, value) = match *bytes.get(at)? {
            b'"' => return None,
            b'\\' if *bytes.get(at + 1)? == b'u' => {
                let unit = u32::from_str_radix(literal.get(at + 2..at + 6)?, 16).ok()?;
                match unit {
                    // A surrogate pair: two escapes, one 4-byte character.
                    0xD800..=0xDBFF => (12, 4),
                    _ => (6, char::from_u32(unit).map_or(3, char::len_utf8)),
                }
            }
            b'\\' => (2, 1),
            _ => (1, 1),
        };
        at += raw;
        out += value;
    }
    (out == decoded).then_some(at)
}

/// 64-bit FNV-1a, fed in pieces: stable across runs, platforms and versions
/// (unlike `std`'s `DefaultHasher`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv64(u64);

impl Default for Fnv64 {
    fn default() -> Self {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv64 {
    /// Feed bytes.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Feed a field: its bytes and a separator byte that cannot occur in
    /// UTF-8 text, so `("ab","c")` and `("a","bc")` differ.
    pub(crate) fn field(&mut self, bytes: &[u8]) {
        self.write(bytes);
        self.write(&[0xff]);
    }

    /// The hash.
    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

/// The value of a top-level `"type":"…"` when `data` starts with it (the
/// providers' compact JSON always does); used to name events that come
/// without an `event:` line.
pub(crate) fn leading_type(data: &[u8]) -> Option<&[u8]> {
    let rest = data.strip_prefix(b"{\"type\":\"")?;
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    (rest[end] == b'"').then(|| &rest[..end])
}

/// The top-level `type` of an event's data wherever it sits: read as
/// [`leading_type`] when the object starts with it, else parsed (a server
/// that writes its keys in another order, `type` last).
pub(crate) fn event_type(data: &[u8]) -> Option<&[u8]> {
    if let Some(kind) = leading_type(data) {
        return Some(kind);
    }
    #[derive(serde::Deserialize)]
    struct T<'a> {
        #[serde(borrow, rename = "type")]
        kind: &'a str,
    }
    let t: T<'_> = serde_json::from_slice(data).ok()?;
    // Re-find the slice inside `data` so it borrows from it.
    let at = memchr::memmem::find(data, t.kind.as_bytes())?;
    Some(&data[at..at + t.kind.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_matches_reference_vectors() {
        let mut h = Fnv64::default();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
        let mut h = Fnv64::default();
        h.write(b"foobar");
        assert_eq!(h.finish(), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn mcp_flag_is_read_only_from_objects() {
        assert_eq!(mcp_is_error(r#"{"content":[],"isError":true}"#), Some(true));
        assert_eq!(mcp_is_error(r#" {"isError": false}"#), Some(false));
        assert_eq!(mcp_is_error(r#"the "isError" key"#), None);
        assert_eq!(mcp_is_error(r#"{"isError": tru"#), None);
        assert_eq!(mcp_is_error("plain"), None);
    }

    #[test]
    fn leading_type_reads_compact_json_only() {
        assert_eq!(leading_type(br#"{"type":"ping"}"#), Some(&b"ping"[..]));
        assert_eq!(leading_type(br#"{ "type":"ping"}"#), None);
        assert_eq!(leading_type(br#"{"type":"p\"x"}"#), None);
    }

    #[test]
    fn unescape_agrees_with_serde_json() {
        for raw in [
            r#""plain""#,
            r#""""#,
            r#""a\"b\\c\/d\be\ff\ng\rh\ti""#,
            r#""\u0041\u00e9\u2713 \ud83d\ude00 x""#,
            r#""é✓😀\n""#,
            r#""\u0000\u001f""#,
        ] {
            let want: String = serde_json::from_str(raw).unwrap();
            assert_eq!(unescape(raw).unwrap(), want, "{raw}");
        }
        assert!(matches!(unescape(r#""plain""#), Ok(Cow::Borrowed("plain"))));
        for bad in [
            r#""\ud800""#,
            r#""\ud800\u0041""#,
            r#""\udc00x""#,
            r#""\u12""#,
        ] {
            assert!(serde_json::from_str::<String>(bad).is_err(), "{bad}");
            let e = unescape(bad).unwrap_err();
            assert_eq!(e.kind(), WireErrorKind::InvalidJson, "{bad}");
        }
        assert_eq!(unescape("42").unwrap_err().kind(), WireErrorKind::Shape);
    }

    /// Escapes next to characters of two, three and four bytes, at every
    /// offset from a 64-byte block's edge: decoded as serde_json does.
    #[test]
    fn escapes_beside_wide_characters() {
        for wide in ["é", "✓", "😀"] {
            for lead in 0..40 {
                for gap in [0, 1, 30, 31, 32, 33, 70] {
                    let raw = format!(
                        r#""\n{}{}\t{}\"{}""#,
                        "a".repeat(lead),
                        wide.repeat(12),
                        "b".repeat(gap),
                        wide.repeat(20)
                    );
                    let want: String = serde_json::from_str(&raw).unwrap();
                    assert_eq!(unescape(&raw).unwrap(), want, "{raw}");
                }
            }
        }
    }

    proptest::proptest! {
        /// Literals of any length (escapes across the 64-byte blocks, at
        /// their edges, in the tail), valid or not: decoded exactly as
        /// serde_json decodes them, and refused exactly when it refuses.
        #[test]
        fn unescape_agrees_with_serde_json_on_any_literal(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    6 => proptest::prelude::Just("abcdefg"),
                    2 => proptest::prelude::Just("x"),
                    2 => proptest::prelude::Just("é✓"),
                    3 => proptest::prelude::Just(r"\n"),
                    2 => proptest::prelude::Just(r#"\""#),
                    1 => proptest::prelude::Just(r"\\"),
                    1 => proptest::prelude::Just(r"\/"),
                    1 => proptest::prelude::Just(r"\t"),
                    1 => proptest::prelude::Just(r"\b"),
                    1 => proptest::prelude::Just(r"\f"),
                    1 => proptest::prelude::Just(r"\r"),
                    1 => proptest::prelude::Just(r"\u00e9"),
                    1 => proptest::prelude::Just(r"\ud83d\ude00"),
                    1 => proptest::prelude::Just(r"\ud83d"),
                    1 => proptest::prelude::Just(r"\ude00"),
                    1 => proptest::prelude::Just(r"\u12"),
                    1 => proptest::prelude::Just(r"\q"),
                ],
                0..120,
            )
        ) {
            let raw = format!("\"{}\"", parts.concat());
            let want = serde_json::from_str::<String>(&raw);
            match unescape(&raw) {
                Ok(got) => proptest::prop_assert_eq!(Ok(got.as_ref()), want.as_deref().map_err(|_| ())),
                Err(e) => {
                    proptest::prop_assert!(want.is_err(), "{raw}: {e}");
                    proptest::prop_assert_eq!(e.kind(), WireErrorKind::InvalidJson);
                }
            }
        }
    }

    proptest::proptest! {
        /// Any literal serde_json reads: the offset of each prefix of its
        /// value ends a literal that reads as that prefix.
        #[test]
        fn escaped_offsets_end_each_prefix(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    3 => proptest::prelude::Just("abc"),
                    2 => proptest::prelude::Just("é✓"),
                    2 => proptest::prelude::Just(r"\n"),
                    1 => proptest::prelude::Just(r#"\""#),
                    1 => proptest::prelude::Just(r"\\"),
                    1 => proptest::prelude::Just(r"\u00e9"),
                    1 => proptest::prelude::Just(r"\u2713"),
                    1 => proptest::prelude::Just(r"\ud83d\ude00"),
                ],
                0..40,
            )
        ) {
            let raw = format!("\"{}\"", parts.concat());
            let value: String = serde_json::from_str(&raw).unwrap();
            for k in (0..=value.len()).filter(|&k| value.is_char_boundary(k)) {
                let at = escaped_offset(&raw, k);
                proptest::prop_assert!(at.is_some(), "{raw} {k}");
                let prefix: String = serde_json::from_str(&format!("{}\"", &raw[..at.unwrap()])).unwrap();
                proptest::prop_assert_eq!(prefix, &value[..k]);
            }
            proptest::prop_assert_eq!(escaped_offset(&raw, value.len() + 1), None);
        }
    }

    #[test]
    fn parts_join_with_newlines_and_borrow_when_single() {
        let mut acc = None;
        push_part(&mut acc, Cow::Borrowed("a"));
        assert!(matches!(acc, Some(Cow::Borrowed("a"))));
        push_part(&mut acc, Cow::Borrowed("b"));
        assert_eq!(acc.as_deref(), Some("a\nb"));
    }
}
