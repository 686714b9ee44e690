//! The `{"type", "message"}` error object Anthropic and OpenAI Chat share.

use std::borrow::Cow;

use serde::Deserialize;

/// An `error` object.
#[derive(Deserialize)]
pub(crate) struct ApiError<'a> {
    #[serde(borrow, default, rename = "type")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub message: Option<Cow<'a, str>>,
}

impl ApiError<'_> {
    /// `type: message`, or whichever of the two is present.
    pub fn describe(&self) -> String {
        match (&self.kind, &self.message) {
            (Some(k), Some(m)) => format!("{k}: {m}"),
            (Some(k), None) => k.to_string(),
            (None, Some(m)) => m.to_string(),
            (None, None) => "error".to_string(),
        }
    }
}
