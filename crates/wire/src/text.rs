//! Small text helpers shared by the dialects: content flattening, the
//! first-turn hash, MCP `isError` detection and cheap byte-level checks
//! that let the stream parsers skip events before any JSON parsing.

use std::borrow::Cow;

use toolwarden_core::Verdict;

/// The content detector as the views call it (a seam so unit tests can
/// pass a fixed rule instead of [`crate::Detector`]).
pub(crate) type Judge<'a> = &'a dyn Fn(&str) -> bool;

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

/// The verdict for a result without an explicit flag: MCP-style `isError`
/// carried inside the content first, then the content detector.
pub(crate) fn flagless_verdict(content: &str, judge: Judge<'_>) -> Verdict {
    if let Some(flag) = mcp_is_error(content) {
        return Verdict::explicit(flag);
    }
    if judge(content) {
        Verdict::heuristic_failure()
    } else {
        Verdict::NONE
    }
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
    fn parts_join_with_newlines_and_borrow_when_single() {
        let mut acc = None;
        push_part(&mut acc, Cow::Borrowed("a"));
        assert!(matches!(acc, Some(Cow::Borrowed("a"))));
        push_part(&mut acc, Cow::Borrowed("b"));
        assert_eq!(acc.as_deref(), Some("a\nb"));
    }
}
