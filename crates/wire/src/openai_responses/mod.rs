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
//! - `request_view` reads the `input` items with borrowed, typed serde;
//!   an output's text stays raw JSON until read (`read_result`: status
//!   `incomplete`/`failed`, then MCP `isError`, then the detector);
//! - validation and repair share one pairing plan (`pairing`);
//! - [`StreamState`] reassembles `response.*` stream events.

mod fast;
mod model;
mod pairing;
mod render;
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

pub(crate) use render::render_results;
pub(crate) use repair::repair;
pub(crate) use response::response_view;
pub(crate) use validate::validate;
pub(crate) use view::{fast_path_agrees, inspect, read_result, request_view};
