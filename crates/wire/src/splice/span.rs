//! Byte-exact splicing of one JSON array inside a body.
//!
//! A repair rebuilds only the array it changes (`input`, `contents`, a
//! content's `parts`): the array is read as borrowed [`RawValue`]s, each
//! element's byte range in the body is found by pointer arithmetic, and the
//! new array is written from untouched elements copied verbatim plus the new
//! ones. Everything outside the array stays byte-identical, and so does the
//! whitespace between two untouched neighbours.
//!
//! Used by the Gemini and Responses repairs; [`super::rebuild_array`] is
//! the variant the Anthropic and Chat repairs use (one separator for the
//! whole array).

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
    /// The element at this index rewritten (an id renamed): new text,
    /// with the whitespace around it kept as [`Piece::Orig`]'s would be.
    Edited(usize, String),
}

impl Piece {
    /// The index of the original element it stands for, if any.
    fn orig(&self) -> Option<usize> {
        match self {
            Piece::Orig(i) | Piece::Edited(i, _) => Some(*i),
            Piece::New(_) => None,
        }
    }
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
    match super::span_in(body, raw) {
        Some(r) => Ok(r.start),
        None => Err(WireError::new(
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
                match (p.orig(), piece.orig()) {
                    (Some(a), Some(b)) if b == a + 1 => out.push_str(gap(a)),
                    _ => out.push_str(default_sep),
                }
            }
            match piece {
                Piece::Orig(i) => out.push_str(&body[self.elems[*i].clone()]),
                Piece::New(s) | Piece::Edited(_, s) => out.push_str(s),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::splice::replace;

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
}
