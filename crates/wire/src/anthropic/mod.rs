//! Anthropic Messages (`/v1/messages`): `tool_use` / `tool_result` blocks
//! with string or block content and `is_error`; server tools
//! (`server_tool_use`, `mcp_tool_use`) answered in the same assistant
//! message by `*_tool_result` blocks whose content may be a
//! `*_tool_result_error` object.
//!
//! - [`request_view`](crate::request_view): typed borrowed parsing, no
//!   intermediate `Value` (see `model`); verdict rules in `view`.
//! - [`validate`](crate::validate) / [`repair`](crate::repair()): `validate`,
//!   `repair` (byte-exact splicing).
//! - [`StreamState`]: the SSE stream.
//! - [`render_results`](crate::render_results): one `user` message with a
//!   `tool_result` block per outcome, `is_error: true` on failure.

mod fast;
mod layout;
mod model;
mod prefill;
mod render;
mod repair;
mod response;
mod stream;
mod validate;
mod view;

pub use stream::StreamState;

pub(crate) use render::render_results;
pub(crate) use repair::repair;
pub(crate) use response::{response_fast_path_agrees, response_view};
pub(crate) use validate::validate;
pub(crate) use view::{fast_path_agrees, inspect, read_result, request_view};

#[cfg(test)]
mod tests;
