//! Byte-exact editing of JSON text: find where a borrowed raw value sits in
//! its source and rebuild an array from verbatim and new elements, keeping
//! the original's layout (indentation and separators).
//!
//! Repairs change only the arrays they must: every untouched element, every
//! unknown field and the key order around the array stay byte-identical.

use std::ops::Range;

use serde_json::value::RawValue;

use crate::{WireError, WireErrorKind};

pub(crate) mod span;

/// The byte range of `part` inside `base`, when `part` is a subslice of it
/// (as every raw value borrowed while parsing `base` is).
pub(crate) fn span_in(base: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(base.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= base.len()).then_some(start..end)
}

/// Like [`span_in`], as a shape error when `part` is not inside `base`
/// (which would be a bug in the caller, not bad input).
pub(crate) fn locate(base: &str, part: &RawValue) -> Result<Range<usize>, WireError> {
    span_in(base, part.get()).ok_or_else(|| {
        WireError::new(
            WireErrorKind::Shape,
            "internal: raw value not borrowed from its body",
        )
    })
}

/// The elements of a JSON array given as raw text, in order.
pub(crate) fn elements(array: &RawValue) -> Result<Vec<&RawValue>, WireError> {
    Ok(serde_json::from_str(array.get())?)
}

/// A JSON string, borrowed when it has no escapes.
#[derive(serde::Deserialize)]
pub(crate) struct Str<'a>(#[serde(borrow)] pub std::borrow::Cow<'a, str>);

/// A value's raw JSON text: serde_json's `RawValue` as a `&str`, so that a
/// view's fast path (see [`crate::scan`]), which has no `RawValue` to give,
/// builds the same structs as serde.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Raw<'a>(pub &'a str);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Raw<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(d).map(|raw| Raw(raw.get()))
    }
}

/// One element of a rebuilt array.
#[derive(Debug, Clone)]
pub(crate) enum Piece<'a> {
    /// Copied verbatim from the source.
    Raw(&'a str),
    /// New JSON text.
    New(String),
}

impl Piece<'_> {
    fn as_str(&self) -> &str {
        match self {
            Piece::Raw(s) => s,
            Piece::New(s) => s,
        }
    }
}

/// The text of an array holding `pieces`, laid out like `original` (the raw
/// text of the array it replaces, whose elements are `old`): the same text
/// after `[`, between elements and before `]`.
pub(crate) fn rebuild_array(original: &str, old: &[&RawValue], pieces: &[Piece<'_>]) -> String {
    let spans: Vec<Range<usize>> = old
        .iter()
        .filter_map(|e| span_in(original, e.get()))
        .collect();
    let (lead, sep, trail) = match spans.as_slice() {
        [first, .., last] if spans.len() >= 2 => (
            &original[1..first.start],
            original[first.end..spans[1].start].to_string(),
            &original[last.end..original.len() - 1],
        ),
        [only] => {
            let lead = &original[1..only.start];
            (
                lead,
                format!(",{lead}"),
                &original[only.end..original.len() - 1],
            )
        }
        _ => ("", ",".to_string(), ""),
    };
    let len = pieces
        .iter()
        .map(|p| p.as_str().len() + sep.len())
        .sum::<usize>()
        + 8;
    let mut out = String::with_capacity(len + lead.len() + trail.len());
    out.push('[');
    if !pieces.is_empty() {
        out.push_str(lead);
    }
    for (i, p) in pieces.iter().enumerate() {
        if i > 0 {
            out.push_str(&sep);
        }
        out.push_str(p.as_str());
    }
    if !pieces.is_empty() {
        out.push_str(trail);
    }
    out.push(']');
    out
}

/// The JSON object `object` with `"key": value` (`value` already JSON)
/// added as its first member: for an id a call lacks, where renaming has
/// no value to replace. `None` when `object` is not an object.
pub(crate) fn with_first_member(object: &str, key: &str, value: &str) -> Option<String> {
    let open = object.find('{')?;
    if !object[..open].trim().is_empty() {
        return None;
    }
    let member = leading_member(&object[open + 1..], key, value);
    let mut out = String::with_capacity(object.len() + member.len());
    out.push_str(&object[..=open]);
    out.push_str(&member);
    out.push_str(&object[open + 1..]);
    Some(out)
}

/// The text of `"key": value` put first in an object whose members (or
/// closing `}`) are `rest`: with a comma after it unless the object was
/// empty.
pub(crate) fn leading_member(rest: &str, key: &str, value: &str) -> String {
    let sep = if rest.trim_start().starts_with('}') {
        ""
    } else {
        ","
    };
    format!("{}:{value}{sep}", json_string(key))
}

/// `base` with the bytes in `span` replaced by `with`.
pub(crate) fn replace(base: &str, span: Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(base.len() - span.len() + with.len());
    out.push_str(&base[..span.start]);
    out.push_str(with);
    out.push_str(&base[span.end..]);
    out
}

/// The body as UTF-8 text, or an error saying it is not.
pub(crate) fn utf8(body: &[u8]) -> Result<&str, WireError> {
    if let Ok(text) = simdutf8::basic::from_utf8(body) {
        return Ok(text);
    }
    std::str::from_utf8(body).map_err(|e| {
        WireError::new(
            WireErrorKind::InvalidJson,
            format!("not UTF-8 at byte {}", e.valid_up_to()),
        )
    })
}

/// A JSON string literal for `s`.
pub(crate) fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// A request body must be a JSON object: say so clearly when it is not.
pub(crate) fn expect_object(body: &[u8]) -> Result<(), WireError> {
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => Ok(()),
        None => Err(WireError::new(WireErrorKind::Truncated, "empty body")),
        Some(_) => Err(WireError::new(
            WireErrorKind::Shape,
            "the body is not a JSON object",
        )),
    }
}

/// For `#[serde(deserialize_with)]` on an `Option<Cow<'a, str>>` field:
/// serde borrows a `Cow<str>` only when it is the field's whole type, so
/// without this every optional string would be copied.
pub(crate) fn opt_cow<'de: 'a, 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<std::borrow::Cow<'a, str>>, D::Error> {
    #[derive(serde::Deserialize)]
    struct W<'a>(#[serde(borrow)] std::borrow::Cow<'a, str>);
    let w: Option<W<'a>> = serde::Deserialize::deserialize(d)?;
    Ok(w.map(|w| w.0))
}

/// FNV-1a, 64 bits: a hash that is stable across builds and platforms.
pub(crate) fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            h ^= 0xff;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_found_for_borrowed_values_only() {
        let text = r#"{"a":[1, {"b":2}]}"#;
        #[derive(serde::Deserialize)]
        struct T<'a> {
            #[serde(borrow)]
            a: &'a RawValue,
        }
        let t: T<'_> = serde_json::from_str(text).unwrap();
        let span = span_in(text, t.a.get()).unwrap();
        assert_eq!(&text[span], r#"[1, {"b":2}]"#);
        assert_eq!(span_in(text, "elsewhere"), None);
    }

    #[test]
    fn rebuilt_arrays_keep_the_layout() {
        let original = "[\n  1,\n  2\n ]";
        let raw: &RawValue = serde_json::from_str(original).unwrap();
        let old = elements(raw).unwrap();
        let pieces = [
            Piece::Raw(old[1].get()),
            Piece::New("3".into()),
            Piece::Raw(old[0].get()),
        ];
        assert_eq!(
            rebuild_array(original, &old, &pieces),
            "[\n  2,\n  3,\n  1\n ]"
        );
        assert_eq!(rebuild_array(original, &old, &[]), "[]");
        let single: &RawValue = serde_json::from_str("[ 1 ]").unwrap();
        let old = elements(single).unwrap();
        let pieces = [Piece::Raw(old[0].get()), Piece::New("2".into())];
        assert_eq!(rebuild_array(single.get(), &old, &pieces), "[ 1, 2 ]");
        let empty: &RawValue = serde_json::from_str("[]").unwrap();
        assert_eq!(rebuild_array("[]", &[], &[Piece::New("1".into())]), "[1]");
        assert!(elements(empty).unwrap().is_empty());
    }

    #[test]
    fn replace_splices_bytes() {
        assert_eq!(replace("abcdef", 2..4, "XY!"), "abXY!ef");
    }

    #[test]
    fn fnv_is_stable() {
        assert_eq!(fnv1a(&[b""]), 0xcbf2_9ce4_8422_2325);
        assert_ne!(fnv1a(&[b"a", b"b"]), fnv1a(&[b"ab"]));
    }
}
