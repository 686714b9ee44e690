//! Small serde building blocks for allocation-free stream parsing: map keys
//! borrowed from the input, and string values appended straight into a
//! buffer (no intermediate `String` even when the JSON string has escapes).

use std::{fmt, sync::OnceLock};

use memchr::memmem::Finder;
use serde::{
    Deserializer,
    de::{DeserializeSeed, Visitor},
};

/// Appends a JSON string value to the buffer (`null` appends nothing).
pub(crate) struct AppendStr<'s>(pub &'s mut String);

impl<'de> DeserializeSeed<'de> for AppendStr<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AppendStr<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.0.push_str(v);
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// A prebuilt substring searcher (building one per call costs more than
/// searching a short event).
pub(crate) struct Needle {
    text: &'static str,
    finder: OnceLock<Finder<'static>>,
}

impl Needle {
    /// A searcher for `needle`, built on first use.
    pub(crate) const fn new(text: &'static str) -> Self {
        Needle {
            text,
            finder: OnceLock::new(),
        }
    }

    fn finder(&self) -> &Finder<'static> {
        self.finder
            .get_or_init(|| Finder::new(self.text.as_bytes()))
    }

    /// `true` when `hay` contains the needle.
    pub(crate) fn in_(&self, hay: &[u8]) -> bool {
        self.finder().find(hay).is_some()
    }

    /// Where the needle ends in `hay`, if it occurs.
    pub(crate) fn end_in(&self, hay: &[u8]) -> Option<usize> {
        Some(self.finder().find(hay)? + self.text.len())
    }

    /// Where each occurrence of the needle ends in `hay`.
    pub(crate) fn ends_in<'h>(&'h self, hay: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
        let n = self.text.len();
        self.finder().find_iter(hay).map(move |at| at + n)
    }

    /// `true` when `hay` contains the needle followed (after optional
    /// whitespace and the colon) by something other than `null`.
    pub(crate) fn non_null_in(&self, hay: &[u8]) -> bool {
        let n = self.text.len();
        self.finder().find_iter(hay).any(|at| {
            let mut rest = &hay[at + n..];
            while let [b' ' | b'\t' | b'\r' | b'\n' | b':', tail @ ..] = rest {
                rest = tail;
            }
            !rest.starts_with(b"null")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static KEY: Needle = Needle::new("\"usage\"");

    #[test]
    fn needles_find_non_null_values() {
        assert!(KEY.in_(br#"{"usage":null}"#));
        assert!(!KEY.non_null_in(br#"{"usage" : null}"#));
        assert!(KEY.non_null_in(br#"{"usage":null,"usage": {"a":1}}"#));
        assert!(!KEY.in_(br#"{"use":1}"#));
    }

    #[test]
    fn strings_are_appended_unescaped() {
        let mut buf = String::from("a");
        let mut de = serde_json::Deserializer::from_str(r#""b\"c\n""#);
        AppendStr(&mut buf).deserialize(&mut de).unwrap();
        assert_eq!(buf, "ab\"c\n");
        let mut de = serde_json::Deserializer::from_str("null");
        AppendStr(&mut buf).deserialize(&mut de).unwrap();
        assert_eq!(buf, "ab\"c\n");
    }
}
