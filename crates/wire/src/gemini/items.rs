//! Borrowed, typed reading of a Gemini `generateContent` request body.

use std::{borrow::Cow, fmt};

use serde::{
    Deserialize, Deserializer,
    de::{self, SeqAccess, Visitor},
};
use serde_json::value::RawValue;

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
    pub system: Option<&'a RawValue>,
}

/// `contents`, with the first content's raw text kept for the turn hash.
#[derive(Default)]
pub(super) struct Contents<'a> {
    pub list: Vec<Content<'a>>,
    pub first: Option<&'a RawValue>,
}

/// One turn.
#[derive(Deserialize, Default)]
pub(super) struct Content<'a> {
    #[serde(borrow, deserialize_with = "crate::gemini::splice::opt_cow", default)]
    pub role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub parts: Vec<Part<'a>>,
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
    #[serde(borrow, deserialize_with = "crate::gemini::splice::opt_cow", default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub args: Option<&'a RawValue>,
    #[serde(borrow, deserialize_with = "crate::gemini::splice::opt_cow", default)]
    pub id: Option<Cow<'a, str>>,
}

/// `functionResponse`.
#[derive(Deserialize, Default)]
pub(super) struct FnResponse<'a> {
    #[serde(borrow, deserialize_with = "crate::gemini::splice::opt_cow", default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::gemini::splice::opt_cow", default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub response: Option<&'a RawValue>,
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
                let first = seq.next_element::<&'de RawValue>()?;
                if let Some(raw) = first {
                    let c: Content<'de> =
                        serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
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

/// What a `functionResponse.response` says.
pub(super) struct ResponseText<'a> {
    /// The text: an `error`'s message, else `output` / `result` /
    /// `content` when a string, else the object's JSON.
    pub text: Cow<'a, str>,
    /// An `error` key (explicit failure) or an MCP `isError` flag.
    pub explicit: Option<bool>,
}

/// Read a `functionResponse.response` object.
pub(super) fn response_text(raw: Option<&RawValue>) -> ResponseText<'_> {
    #[derive(Deserialize)]
    struct R<'a> {
        #[serde(borrow, default)]
        error: Option<&'a RawValue>,
        #[serde(borrow, default)]
        output: Option<&'a RawValue>,
        #[serde(borrow, default)]
        result: Option<&'a RawValue>,
        #[serde(borrow, default)]
        content: Option<&'a RawValue>,
        #[serde(default, rename = "isError")]
        is_error: Option<bool>,
    }
    #[derive(Deserialize)]
    struct Msg<'a> {
        #[serde(borrow)]
        message: Cow<'a, str>,
    }
    let Some(raw) = raw else {
        return ResponseText {
            text: Cow::Borrowed(""),
            explicit: None,
        };
    };
    let whole = raw.get();
    let Ok(r) = serde_json::from_str::<R<'_>>(whole) else {
        return ResponseText {
            text: Cow::Borrowed(whole),
            explicit: None,
        };
    };
    if let Some(e) = r.error.filter(|e| e.get() != "null") {
        let text = as_text(e)
            .or_else(|| {
                serde_json::from_str::<Msg<'_>>(e.get())
                    .ok()
                    .map(|m| m.message)
            })
            .unwrap_or(Cow::Borrowed(e.get()));
        return ResponseText {
            text,
            explicit: Some(true),
        };
    }
    let text = [r.output, r.result, r.content]
        .into_iter()
        .flatten()
        .next()
        .map(|v| as_text(v).unwrap_or(Cow::Borrowed(v.get())))
        .unwrap_or(Cow::Borrowed(whole));
    ResponseText {
        text,
        explicit: r.is_error,
    }
}

/// A JSON string value as text, borrowed when it has no escapes.
pub(super) fn as_text(v: &RawValue) -> Option<Cow<'_, str>> {
    let raw = v.get();
    if !raw.starts_with('"') {
        return None;
    }
    match serde_json::from_str::<&str>(raw) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(raw).ok().map(Cow::Owned),
    }
}
