//! Borrowed, typed reading of a Gemini `generateContent` request body.
//!
//! Raw values are kept as `&str` ([`Raw`], [`RawObject`]), so that the
//! fast path ([`super::fast`]), which has no `RawValue` to give, builds the
//! same structs as serde.

use std::{borrow::Cow, fmt};

use serde::{
    Deserialize, Deserializer,
    de::{self, SeqAccess, Visitor},
};
use serde_json::value::RawValue;

use crate::splice::Raw;

/// The top level of a request body.
#[derive(Deserialize)]
pub(super) struct Body<'a> {
    #[serde(borrow, default)]
    pub contents: Contents<'a>,
    #[serde(
        borrow,
        default,
        rename = "systemInstruction",
        alias = "system_instruction"
    )]
    pub system: Option<Raw<'a>>,
    /// `generationConfig`, raw: its `candidateCount` is read when it is
    /// there.
    #[serde(
        borrow,
        default,
        rename = "generationConfig",
        alias = "generation_config"
    )]
    pub generation: Option<Raw<'a>>,
}

/// What is read of `generationConfig`: how many candidates to generate.
#[derive(Deserialize)]
pub(super) struct GenerationConfig {
    #[serde(default, rename = "candidateCount", alias = "candidate_count")]
    pub candidate_count: Option<u64>,
}

/// `contents`, with the first content's raw text kept for the turn hash.
#[derive(Default)]
pub(super) struct Contents<'a> {
    pub list: Vec<Content<'a>>,
    pub first: Option<&'a str>,
}

/// One turn.
#[derive(Deserialize, Default)]
pub(super) struct Content<'a> {
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub parts: Parts<'a>,
}

/// `parts`, with their raw text (a text answer's content:
/// [`crate::text_answers`]).
#[derive(Default)]
pub(super) struct Parts<'a> {
    pub list: Vec<Part<'a>>,
    pub raw: Option<&'a str>,
}

impl<'a> std::ops::Deref for Parts<'a> {
    type Target = [Part<'a>];
    fn deref(&self) -> &[Part<'a>] {
        &self.list
    }
}

impl<'a> Parts<'a> {
    /// Whether a part is a function call or response (else the content is
    /// text alone, which may answer calls in text).
    pub fn has_calls_or_responses(&self) -> bool {
        self.list
            .iter()
            .any(|p| p.call.is_some() || p.response.is_some())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Parts<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?.get();
        let list = serde_json::from_str(raw).map_err(de::Error::custom)?;
        Ok(Parts {
            list,
            raw: Some(raw),
        })
    }
}

/// One part; only function calls and responses matter.
#[derive(Deserialize, Default)]
pub(super) struct Part<'a> {
    #[serde(borrow, default, rename = "functionCall", alias = "function_call")]
    pub call: Option<FnCall<'a>>,
    #[serde(
        borrow,
        default,
        rename = "functionResponse",
        alias = "function_response"
    )]
    pub response: Option<FnResponse<'a>>,
}

/// `functionCall`.
#[derive(Deserialize, Default)]
pub(super) struct FnCall<'a> {
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub args: Option<Raw<'a>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub id: Option<Cow<'a, str>>,
}

/// `functionResponse`.
#[derive(Deserialize, Default)]
pub(super) struct FnResponse<'a> {
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub response: Option<RawObject<'a>>,
}

/// A JSON object kept as raw text (syntax checked, members not read); the
/// parse still rejects a value that is not an object.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawObject<'a>(pub &'a str);

impl<'de: 'a, 'a> Deserialize<'de> for RawObject<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        if raw.get().starts_with('{') {
            Ok(RawObject(raw.get()))
        } else {
            Err(de::Error::invalid_type(
                de::Unexpected::Other(raw.get().get(..1).unwrap_or("")),
                &"an object",
            ))
        }
    }
}

/// A JSON object read as its members' raw values, in order: one pass,
/// values left undecoded until asked for (read by the fast path,
/// [`super::fast::entries`], or by serde).
#[derive(Default, Debug)]
pub(super) struct Entries<'a>(pub Vec<(Cow<'a, str>, &'a str)>);

impl<'a> Entries<'a> {
    pub(super) fn get(&self, key: &str) -> Option<&'a str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The object as compact JSON text (members' values byte for byte).
    pub(super) fn to_json(&self) -> String {
        let mut out = String::from("{");
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&crate::splice::json_string(k));
            out.push(':');
            out.push_str(v);
        }
        out.push('}');
        out
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Entries<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                #[derive(Deserialize)]
                struct Key<'a>(#[serde(borrow)] Cow<'a, str>);
                let mut out = Vec::new();
                while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
                    out.push((k, map.next_value::<&'de RawValue>()?.get()));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

impl Content<'_> {
    /// `true` for the model's turns; every other role (user, function) is
    /// the client's side.
    pub fn is_model(&self) -> bool {
        self.role.as_deref() == Some("model")
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Contents<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Contents<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of contents")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(8));
                let first = seq.next_element::<&'de RawValue>()?.map(RawValue::get);
                if let Some(raw) = first {
                    let c: Content<'de> = serde_json::from_str(raw).map_err(de::Error::custom)?;
                    list.push(c);
                    while let Some(c) = seq.next_element::<Content<'de>>()? {
                        list.push(c);
                    }
                }
                Ok(Contents { list, first })
            }
        }
        d.deserialize_seq(V(std::marker::PhantomData))
    }
}
