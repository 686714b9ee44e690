//! AWS Bedrock Converse (`POST /model/{modelId}/converse` and
//! `/converse-stream`): `toolUse` / `toolResult` content blocks, a
//! `toolResult.status` of `"error"` as the failure flag, tools declared in
//! `toolConfig.tools[].toolSpec`; the model is in the path, not the body.
//!
//! - [`request_view`](crate::request_view): borrowed serde shapes (`model`),
//!   read first by the SIMD scanner (`fast`), else by serde; verdict rules
//!   in `view`.
//! - [`validate`](crate::validate) / [`repair`](crate::repair()): Bedrock's
//!   `ValidationException` rules and texts, byte-exact repair.
//! - [`response_view`](crate::response_view): `output.message.content[]`,
//!   `stopReason`, `usage`.
//! - [`StreamState`]: ConverseStream events, framed by
//!   [`crate::eventstream`] (see [`crate::StreamParser`]).
//! - [`render_results`](crate::render_results): one `user` message with a
//!   `toolResult` block per outcome, `status: "error"` on failure.

mod fast;
mod model;
mod render;
mod repair;
mod response;
mod rewrite;
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
mod proptests;
#[cfg(test)]
mod tests;
