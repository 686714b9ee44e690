//! Content flattened to text: a string, an array of parts (text parts
//! joined with newlines; images and other non-text skipped), an object
//! (server tool errors, MCP results) or null.

use std::{borrow::Cow, fmt};

use serde::{
    Deserialize, Deserializer,
    de::{IgnoredAny, MapAccess, SeqAccess, Visitor},
};

use crate::text::push_part;

/// A tool result's content flattened to text, with what the content itself
/// says about failure.
#[derive(Default)]
pub(crate) struct FlatContent<'a> {
    /// Text parts joined with newlines (images and other non-text skipped).
    pub text: Cow<'a, str>,
    /// The `type` of an object content (`web_search_tool_result_error`, …).
    pub object_type: Option<Cow<'a, str>>,
    /// MCP `isError` on an object content.
    pub is_error: Option<bool>,
}

impl FlatContent<'_> {
    /// `true` when an object content is a `*_tool_result_error`.
    pub(crate) fn is_error_object(&self) -> bool {
        self.object_type
            .as_deref()
            .is_some_and(|t| t.ends_with("_error"))
    }

    /// Flatten a content's raw JSON text (`None`: absent or `null`). A
    /// string, the common case, is unescaped directly.
    pub(crate) fn parse(raw: Option<&str>) -> Result<FlatContent<'_>, crate::WireError> {
        match raw {
            Some(raw) if raw.starts_with('"') => Ok(text(crate::text::unescape(raw)?)),
            Some(raw) => Ok(serde_json::from_str(raw)?),
            None => Ok(FlatContent::default()),
        }
    }
}

// === impl FlatContent ===

/// An element of an array content: only text matters.
#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for FlatContent<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FlatContent<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("tool result content: a string, blocks or an object")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(text(Cow::Owned(v)))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(FlatContent::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut acc = None;
                while let Some(part) = seq.next_element::<Part<'de>>()? {
                    if let Some(t) = part.text {
                        push_part(&mut acc, t);
                    }
                }
                Ok(text(acc.unwrap_or_default()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = FlatContent::default();
                let mut acc = None;
                while let Some(key) = map.next_key::<crate::splice::Str<'de>>()? {
                    match &*key.0 {
                        "type" => out.object_type = Some(map.next_value()?),
                        "error_code" | "text" => {
                            if let Some(t) = map.next_value::<Option<Cow<'de, str>>>()? {
                                push_part(&mut acc, t);
                            }
                        }
                        "isError" => out.is_error = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                out.text = acc.unwrap_or_default();
                Ok(out)
            }
        }
        d.deserialize_any(V)
    }
}

fn text(t: Cow<'_, str>) -> FlatContent<'_> {
    FlatContent {
        text: t,
        object_type: None,
        is_error: None,
    }
}
