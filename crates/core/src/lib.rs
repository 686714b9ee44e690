//! The shared model of tool calls and their failures.
//!
//! Both halves of toolwarden speak these types: the gateway reads
//! [`ToolCall`]s and [`ToolResult`]s off the wire, the runtime produces a
//! [`ToolOutcome`] for every call it executes. A failure is described by an
//! [`ErrorKind`], whose [`Disposition`] says whether a retry can help,
//! whether the agent run must stop, and whether the details may be shown to
//! the model.
//!
//! ```
//! use toolwarden_core::{classify, ErrorKind};
//!
//! let io = std::io::Error::new(std::io::ErrorKind::NotFound, "config.toml");
//! let kind = classify::io_error(&io);
//! assert!(matches!(kind, ErrorKind::ResourceNotFound { .. }));
//! assert!(!kind.disposition().retryable);
//! ```
//!
//! This crate does no I/O.

#![forbid(unsafe_code)]

mod call;
pub mod classify;
mod error;
mod outcome;
pub mod redact;
mod trace_parent;

pub use call::{Basis, ToolCall, ToolResult, Verdict};
pub use error::{Disposition, ErrorKind, ToolError};
pub use outcome::{FLAGLESS_ERROR_PREFIX, Status, ToolFailure, ToolOutcome};
pub use trace_parent::{TraceParent, TraceParentError};

/// This crate's README, whose snippet is compiled (and run) as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[derive(Debug)]
pub struct ReadmeDoctest;
