//! OpenAI Responses (`/v1/responses`).
//!
//! Calls are `function_call` {call_id, name, arguments} and
//! `custom_tool_call` {call_id, name, input} items; results are
//! `function_call_output` / `custom_tool_call_output` items {call_id,
//! output}, paired by `call_id`. The built-in tools the client runs are
//! calls too, named after their tool, their `action` or `operation` the
//! arguments: `shell_call`, `local_shell_call`, `apply_patch_call`,
//! `computer_call`, answered by `<kind>_output` items ([`CallKind`]). A
//! `shell_call_output`'s outcomes are its flag (a timeout or a non-zero
//! exit code fails), an `apply_patch_call_output`'s `status`; hosted
//! tools' calls (`web_search_call`, …) are the provider's own and no
//! calls here. With `previous_response_id`, a stored `conversation` (or an
//! `item_reference`) part of the history is on the provider's side: an
//! output whose call is not in the body is then not a defect, and its tool
//! name is unknown here (`None`).
//!
//! - `request_view` reads the `input` items with borrowed, typed serde;
//!   an output's text stays raw JSON until read (`read_result`: status
//!   `incomplete`/`failed`, then MCP `isError`, then the detector);
//! - validation and repair share one pairing plan (`pairing`);
//! - [`StreamState`] reassembles `response.*` stream events;
//! - [`repair_inject`] and [`inject_defects`] judge a WebSocket
//!   `response.inject`'s outputs against the calls of the response they
//!   are committed to.

mod fast;
mod inject;
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
#[cfg(test)]
mod tool_search_tests;

pub use crate::call_kind::CallKind;
pub use inject::{InjectedCall, inject_defects, repair_inject};
pub use stream::StreamState;

pub(crate) use render::{render_answers, render_results};
pub(crate) use repair::repair;
pub(crate) use response::response_view;
pub(crate) use validate::validate;
pub(crate) use view::{fast_path_agrees, inspect, read_result, request_view};
