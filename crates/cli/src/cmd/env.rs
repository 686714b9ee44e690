//! `toolwarden env`: shell lines that point agent clients at the gateway.

use super::{CmdError, Outcome};
use crate::config;

/// Print the lines for the configured (or given) listen address, read as
/// `serve` reads it ([`toolwarden_gateway::parse_listen`]: a bare port and
/// `localhost:PORT` included).
pub fn run(listen: Option<String>) -> Result<Outcome, CmdError> {
    let raw = config::file_and_env(None)?;
    let listen = listen
        .or(raw.listen)
        .unwrap_or_else(|| toolwarden_gateway::DEFAULT_LISTEN.to_string());
    let addr = toolwarden_gateway::parse_listen(&listen).map_err(CmdError)?;
    out!("{}", toolwarden_gateway::env_lines(addr));
    Ok(Outcome::Ok)
}
