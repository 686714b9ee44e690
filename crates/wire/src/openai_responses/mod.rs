//! OpenAI Responses (`/v1/responses`).
//!
//! Calls are `function_call` {call_id, name, arguments} and
//! `custom_tool_call` {call_id, name, input} items; results are
//! `function_call_output` / `custom_tool_call_output` items {call_id,
//! output}, paired by `call_id`. With `previous_response_id` (or an
//! `item_reference`) part of the history is on the provider's side: an
//! output whose call is not in the body is then not a defect, and its tool
//! name is unknown here (`None`).
//!
//! - [`request_view`] reads the `input` items with borrowed, typed serde;
//!   an output's text stays raw JSON until read ([`read_result`]: status
//!   `incomplete`/`failed`, then MCP `isError`, then the detector);
//! - validation and repair share one pairing plan (`pairing`);
//! - [`StreamState`] reassembles `response.*` stream events.

mod items;
mod pairing;
mod repair;
mod request;
mod stream;
mod wire;

#[cfg(test)]
mod proptests;
#[cfg(test)]
pub(crate) mod tests;

pub use stream::StreamState;

use toolwarden_core::ToolOutcome;

use crate::{Defect, Repaired, ResponseView, WireError};

pub(crate) use request::{inspect, read_result, request_view};

pub(crate) fn response_view(body: &[u8]) -> Result<ResponseView, WireError> {
    wire::response_view(body)
}

pub(crate) fn validate(body: &[u8]) -> Result<Vec<Defect>, WireError> {
    request::validate(body)
}

pub(crate) fn repair(body: &[u8]) -> Result<Repaired<'_>, WireError> {
    repair::repair(body)
}

/// One `function_call_output` item per outcome. The API has no error flag,
/// so a failure's output is [`ToolOutcome::flagless_text`].
pub(crate) fn render_results(outcomes: &[ToolOutcome]) -> Vec<serde_json::Value> {
    outcomes
        .iter()
        .map(|o| {
            serde_json::json!({
                "type": "function_call_output",
                "call_id": o.call_id,
                "output": o.flagless_text(),
            })
        })
        .collect()
}
