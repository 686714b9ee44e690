//! Byte-exact splicing of one JSON array inside a body.
//!
//! A repair rebuilds only the array it changes (`input`, `contents`, a
//! content's `parts`): the array is read as borrowed [`RawValue`]s, each
//! element's byte range in the body is found by pointer arithmetic, and the
//! new array is written from untouched elements copied verbatim plus the new
//! ones. Everything outside the array stays byte-identical, and so does the
//! whitespace between two untouched neighbours.
//!
//! Used by the Gemini and Responses repairs (`wire-a` has its own for the
//! other two dialects; the lead unifies them later).

use std::ops::Range;

use serde_json::value::RawValue;

use crate::{WireError, WireErrorKind};

/// One element of a rebuilt array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// The element at this index of the original array, copied verbatim.
    Orig(usize),
    /// New JSON text.
    New(String),
}

/// A JSON array located in its body.
#[derive(Debug)]
pub(crate) struct ArraySpan<'a> {
    /// The array's range in the body, `[` through `]`.
    pub range: Range<usize>,
    /// Each element's range in the body.
    pub elems: Vec<Range<usize>>,
    /// Each element's text.
    pub raws: Vec<&'a RawValue>,
}

/// The byte offset of `raw` inside `body`; `raw` must borrow from `body`.
pub(crate) fn offset_in(body: &str, raw: &str) -> Result<usize, WireError> {
    let start = (raw.as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
    match body.get(start..start.wrapping_add(raw.len())) {
        Some(s) if s.as_ptr() == raw.as_ptr() => Ok(start),
        _ => Err(WireError::new(
            WireErrorKind::Shape,
            "internal: a value does not borrow from the body",
        )),
    }
}

/// Locate the array `array` (borrowed from `body`) and its elements.
pub(crate) fn array_span<'a>(
    body: &'a str,
    array: &'a RawValue,
) -> Result<ArraySpan<'a>, WireError> {
    let text = array.get();
    let start = offset_in(body, text)?;
    let raws: Vec<&'a RawValue> = serde_json::from_str(text)?;
    let mut elems = Vec::with_capacity(raws.len());
    for raw in &raws {
        let at = offset_in(body, raw.get())?;
        elems.push(at..at + raw.get().len());
    }
    Ok(ArraySpan {
        range: start..start + text.len(),
        elems,
        raws,
    })
}

impl ArraySpan<'_> {
    /// The array rebuilt from `pieces`, as JSON text. Whitespace between two
    /// consecutive original elements is kept; new neighbours are separated
    /// like the original's first two elements (or by a bare `,`).
    pub(crate) fn render(&self, body: &str, pieces: &[Piece]) -> String {
        let gap = |i: usize| &body[self.elems[i].end..self.elems[i + 1].start];
        let default_sep = if self.elems.len() >= 2 { gap(0) } else { "," };
        let (lead, trail) = match (self.elems.first(), self.elems.last()) {
            (Some(f), Some(l)) => (
                &body[self.range.start + 1..f.start],
                &body[l.end..self.range.end - 1],
            ),
            _ => ("", ""),
        };
        let mut out = String::with_capacity(self.range.len() + 256);
        out.push('[');
        if !pieces.is_empty() {
            out.push_str(lead);
        }
        let mut prev: Option<&Piece> = None;
        for piece in pieces {
            if let Some(p) = prev {
                match (p, piece) {
                    (Piece::Orig(a), Piece::Orig(b)) if *b == a + 1 => out.push_str(gap(*a)),
                    _ => out.push_str(default_sep),
                }
            }
            match piece {
                Piece::Orig(i) => out.push_str(&body[self.elems[*i].clone()]),
                Piece::New(s) => out.push_str(s),
            }
            prev = Some(piece);
        }
        if !pieces.is_empty() {
            out.push_str(trail);
        }
        out.push(']');
        out
    }
}

/// `body` with `range` replaced by `with`.
pub(crate) fn replace(body: &str, range: Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(body.len() - range.len() + with.len());
    out.push_str(&body[..range.start]);
    out.push_str(with);
    out.push_str(&body[range.end..]);
    out
}

/// The body as UTF-8 text, or a clear error. Reading a body through
/// `from_str` after this one check is faster than `from_slice`, which
/// checks every string again.
pub(crate) fn as_text(body: &[u8]) -> Result<&str, WireError> {
    std::str::from_utf8(body).map_err(|e| {
        WireError::new(
            WireErrorKind::InvalidJson,
            format!("body is not UTF-8 (byte {})", e.valid_up_to()),
        )
    })
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

/// A JSON string literal for `s`.
pub(crate) fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""))
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

    #[derive(serde::Deserialize)]
    struct Top<'a> {
        #[serde(borrow)]
        a: &'a RawValue,
    }

    #[test]
    fn rebuilds_an_array_keeping_untouched_bytes() {
        let body = "{\"a\": [ 1,\n  {\"x\" : 2},\n  3 ], \"b\":0}";
        let top: Top<'_> = serde_json::from_str(body).unwrap();
        let span = array_span(body, top.a).unwrap();
        assert_eq!(span.elems.len(), 3);
        assert_eq!(&body[span.elems[1].clone()], "{\"x\" : 2}");
        let same = span.render(body, &[Piece::Orig(0), Piece::Orig(1), Piece::Orig(2)]);
        assert_eq!(same, &body[span.range.clone()]);
        let changed = span.render(
            body,
            &[Piece::Orig(0), Piece::New("9".into()), Piece::Orig(2)],
        );
        assert_eq!(changed, "[ 1,\n  9,\n  3 ]");
        let out = replace(body, span.range.clone(), &changed);
        assert_eq!(out, "{\"a\": [ 1,\n  9,\n  3 ], \"b\":0}");
        assert_eq!(span.render(body, &[]), "[]");
    }

    #[test]
    fn offset_of_a_foreign_string_is_an_error() {
        let body = String::from("[1]");
        let other = String::from("[1]");
        assert!(offset_in(&body, &other).is_err());
    }

    #[test]
    fn fnv_is_stable() {
        assert_eq!(fnv1a(&[b""]), 0xcbf2_9ce4_8422_2325);
        assert_ne!(fnv1a(&[b"a", b"b"]), fnv1a(&[b"ab"]));
    }
}
