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

mod model;
mod pairing;
mod repair;
mod response;
mod stream;
mod validate;
mod view;

#[cfg(test)]
mod proptests;
#[cfg(test)]
pub(crate) mod tests;

pub use stream::StreamState;

use toolwarden_core::ToolOutcome;

pub(crate) use repair::repair;
pub(crate) use response::response_view;
pub(crate) use validate::validate;
pub(crate) use view::{inspect, read_result, request_view};

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
