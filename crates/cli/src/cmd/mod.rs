//! One module per subcommand.

pub mod alerts;
pub mod check;
pub mod env;
pub mod eval;
pub mod repair;
pub mod serve;
mod serve_banner;
pub mod stats;
pub mod stats_table;

use std::process::ExitCode;

/// How a command ended: success, or a finding (exit 1). Errors (exit 2)
/// are [`CmdError`]s.
#[derive(Debug)]
pub enum Outcome {
    /// Exit 0.
    Ok,
    /// Exit 1: the command ran and found problems (e.g. pairing defects).
    Findings,
}

pub use crate::error::CmdError;

impl Outcome {
    /// The process exit code.
    pub fn code(&self) -> ExitCode {
        match self {
            Outcome::Ok => ExitCode::SUCCESS,
            Outcome::Findings => ExitCode::from(1),
        }
    }
}
