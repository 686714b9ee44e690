//! Small text helpers shared by the dialects: content flattening, the
//! first-turn hash, MCP `isError` detection and cheap byte-level checks
//! that let the stream parsers skip events before any JSON parsing.

use std::borrow::Cow;

use toolwarden_core::Verdict;

use crate::{WireError, WireErrorKind};

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
    let invalid = |what: &str| WireError::new(WireErrorKind::InvalidJson, what);
    let inner = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .ok_or_else(|| WireError::new(WireErrorKind::Shape, "expected a JSON string"))?;
    let Some(first) = memchr::memchr(b'\\', inner.as_bytes()) else {
        return Ok(Cow::Borrowed(inner));
    };
    let mut out = String::with_capacity(inner.len());
    out.push_str(&inner[..first]);
    let mut rest = &inner[first..];
    while let Some(after) = rest.strip_prefix('\\') {
        let mut chars = after.chars();
        let c = match chars.next() {
            Some('"') => '"',
            Some('\\') => '\\',
            Some('/') => '/',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => {
                let hi = hex4(chars.as_str()).ok_or_else(|| invalid("invalid escape"))?;
                chars = chars.as_str()[4..].chars();
                match hi {
                    0xD800..=0xDBFF => {
                        let lo = chars
                            .as_str()
                            .strip_prefix("\\u")
                            .and_then(hex4)
                            .filter(|lo| (0xDC00..=0xDFFF).contains(lo))
                            .ok_or_else(|| invalid("lone leading surrogate in hex escape"))?;
                        chars = chars.as_str()[6..].chars();
                        let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        char::from_u32(c).ok_or_else(|| invalid("invalid escape"))?
                    }
                    0xDC00..=0xDFFF => {
                        return Err(invalid("lone trailing surrogate in hex escape"));
                    }
                    _ => char::from_u32(hi).ok_or_else(|| invalid("invalid escape"))?,
                }
            }
            _ => return Err(invalid("invalid escape")),
        };
        out.push(c);
        rest = chars.as_str();
        let next = memchr::memchr(b'\\', rest.as_bytes()).unwrap_or(rest.len());
        out.push_str(&rest[..next]);
        rest = &rest[next..];
    }
    Ok(Cow::Owned(out))
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

    #[test]
    fn parts_join_with_newlines_and_borrow_when_single() {
        let mut acc = None;
        push_part(&mut acc, Cow::Borrowed("a"));
        assert!(matches!(acc, Some(Cow::Borrowed("a"))));
        push_part(&mut acc, Cow::Borrowed("b"));
        assert_eq!(acc.as_deref(), Some("a\nb"));
    }
}
