//! The provider's own pairing rules: which request bodies each real API
//! rejects with a 400, and the text it gives.
//!
//! Written from the providers' documented errors and their public issue
//! threads, and deliberately independent of `toolwarden_wire`: the gateway
//! repairs bodies with the wire crate's view of pairing, so a mock judging
//! by that same view could never show a repair the real API would reject.
//! Each dialect's module names the texts it uses and where they come from.
//!
//! [`violation`] returns the first rule a body breaks (in message or item
//! order), or the provider's text for a body that is not JSON.

mod anthropic;
mod chat;
mod converse;
mod gemini;
pub(crate) mod reasoning;
mod responses;

#[cfg(test)]
mod repair_fuzz;
#[cfg(test)]
mod repair_tests;

use serde_json::Value;
use toolwarden_wire::Dialect;

use crate::envelope::{self, Provider};

/// The text of the 400 the real API gives for `body`, or `None` when it
/// accepts it. `model`: the model id the path names, as written (Bedrock
/// Converse passes some of the model's own refusals on).
pub(crate) fn violation(dialect: Dialect, model: Option<&str>, body: &[u8]) -> Option<String> {
    let v: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Some(envelope::unparsable_text(
                Provider::of(dialect),
                &e.to_string(),
            ));
        }
    };
    violation_value(dialect, model, &v)
}

/// [`violation`] of a body already read as JSON.
pub(crate) fn violation_value(dialect: Dialect, model: Option<&str>, v: &Value) -> Option<String> {
    match dialect {
        Dialect::Anthropic => anthropic::violation(v),
        Dialect::OpenAiChat => chat::violation(v),
        Dialect::OpenAiResponses => responses::violation(v),
        Dialect::Gemini => gemini::violation(v),
        Dialect::BedrockConverse => converse::violation(v, model.is_some_and(converse::is_claude)),
    }
}

/// The text of the refusal of a Responses WebSocket `response.inject` of
/// `items` into a response that has made `calls`, or `None` (see
/// `responses`).
pub(crate) fn inject_violation(calls: &[Value], items: &[Value]) -> Option<String> {
    responses::inject_violation(calls, items)
}

/// `v[key]` as a slice of values (empty when absent or not an array).
fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `v[key]` as a string (empty when absent or not a string).
fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}
