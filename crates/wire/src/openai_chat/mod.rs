//! OpenAI Chat Completions (`/v1/chat/completions`): `tool_calls` on
//! assistant messages (`function` and `custom` tools), `role: tool`
//! results with string or text-part content, and the legacy
//! `function_call` / `role: function` pair.
//!
//! - request view (`view`): typed borrowed parsing, result contents kept
//!   raw until read; Chat has no error flag, so verdicts come from the
//!   content detector;
//! - `validate` / `repair`: OpenAI's pairing rules, byte-exact splicing;
//! - [`StreamState`]: index-based `tool_calls` deltas, parallel calls;
//! - `render_results`: one `tool` message per outcome, failures framed by
//!   [`ToolOutcome::flagless_text`](toolwarden_core::ToolOutcome::flagless_text).

mod fast;
mod layout;
mod model;
mod render;
mod repair;
mod response;
mod stream;
mod validate;
mod view;

pub use stream::StreamState;

pub(crate) use render::render_results;
pub(crate) use repair::repair;
pub(crate) use response::response_view;
pub(crate) use validate::validate;
pub(crate) use view::{fast_path_agrees, inspect, read_result, request_view};

#[cfg(test)]
mod tests;
