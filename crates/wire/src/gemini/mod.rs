//! Google Gemini `generateContent` / `streamGenerateContent`.
//!
//! Calls are `functionCall` {name, args, id?} parts of `model` turns;
//! results are `functionResponse` {name, response, id?} parts of the next
//! turn. Ids are optional, so calls and responses pair by id when both have
//! one, else by order and name within the two adjacent turns; a call
//! without an id is given `<name>#<n>` (see `turns`). A response whose
//! `response` object has an `error` key stating an error (not `null`,
//! `false`, a number, `""`, `"none"`, `[]` or `{}`) is an explicit failure. The
//! `response` object is kept raw by the request view (checked to be an
//! object) and read when asked for (`view::read_result`). The model
//! is named in the URL, not the body.
//!
//! Streams come as SSE (`?alt=sse`) or as a streamed JSON array (see
//! `array`); streamed calls may carry `partialArgs` (see `partial`).

pub(crate) mod array;
mod call;
mod fast;
mod model;
mod partial;
mod render;
mod repair;
mod response;
mod scan;
mod stream;
mod turns;
mod validate;
mod view;

#[cfg(test)]
mod proptests;
#[cfg(test)]
pub(crate) mod tests;

pub use stream::StreamState;
pub use turns::synthetic_id;

pub(crate) use render::render_results;
pub(crate) use repair::repair;
pub(crate) use response::response_view;
pub(crate) use validate::validate;
pub(crate) use view::{fast_path_agrees, inspect, read_result, request_view};
