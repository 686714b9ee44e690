//! `toolwarden env`: shell lines that point agent clients at the gateway.

use std::net::SocketAddr;

use super::{CmdError, Outcome};
use crate::config;

/// Print the lines for the configured (or given) listen address.
pub fn run(listen: Option<String>) -> Result<Outcome, CmdError> {
    let raw = config::file_and_env(None)?;
    let listen = listen
        .or(raw.listen)
        .unwrap_or_else(|| toolwarden_gateway::DEFAULT_LISTEN.to_string());
    let addr: SocketAddr = listen
        .parse()
        .map_err(|e| CmdError(format!("listen address {listen:?}: {e}")))?;
    print!("{}", toolwarden_gateway::env_lines(addr));
    Ok(Outcome::Ok)
}
