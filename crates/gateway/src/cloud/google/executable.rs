//! The subject token of an executable-sourced `external_account`
//! (`credential_source.executable`: a program that prints the workload's
//! OIDC or SAML token, for identity providers with no file or URL to
//! read), as Google's auth libraries run it:
//!
//! - only when `GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1` was set at
//!   start (otherwise the file is a warning and gives no credentials);
//! - `command` split as a shell would (no shell runs it), its environment
//!   the gateway's with `GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE`, `…_TOKEN_TYPE`,
//!   `…_INTERACTIVE=0`, `…_REVOKE=0`, `…_IMPERSONATED_EMAIL` (with
//!   impersonation) and `…_OUTPUT_FILE` (with `output_file`), no input;
//! - killed past `timeout_millis` (30 s by default, 5 s to 120 s);
//! - its output a JSON response, `{"version": 1, "success": true,
//!   "token_type", "id_token" | "saml_response", "expiration_time"}`, or
//!   `{"success": false, "code", "message"}`; a token past its
//!   `expiration_time` is refused;
//! - with `output_file`, a response there still valid (with an
//!   `expiration_time` to come) is used without running the program, and
//!   one the program wrote there is read when it printed nothing.
//!
//! Interactive mode (workforce pools' `interactive_timeout_millis`) needs
//! a terminal the gateway does not have: it runs as non-interactive.

use std::{
    path::PathBuf,
    process::Stdio,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use serde::Deserialize;
use tokio::io::AsyncReadExt;

use super::FileError;
use crate::cloud::aws::AwsEnv;

/// The variable that must be `1` for an executable to run.
pub(crate) const ALLOW_VAR: &str = "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES";
/// The timeout when the file names none, and its bounds.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
const MIN_TIMEOUT_MS: u64 = 5_000;
const MAX_TIMEOUT_MS: u64 = 120_000;
/// The most output read (a response holds one token).
const MAX_OUTPUT: u64 = 64 * 1024;
/// The newest response version known.
const MAX_VERSION: u64 = 1;

/// An `executable` source's fields.
#[derive(Deserialize)]
pub(super) struct ExecutableFile {
    command: Option<String>,
    timeout_millis: Option<u64>,
    output_file: Option<String>,
}

/// A program that gives subject tokens.
pub(super) struct Executable {
    /// The program and its arguments.
    command: Vec<String>,
    timeout: Duration,
    output_file: Option<PathBuf>,
    /// The variables added to its environment.
    vars: Vec<(&'static str, String)>,
}

/// An executable's response.
#[derive(Deserialize)]
struct Response {
    version: Option<u64>,
    success: Option<bool>,
    code: Option<String>,
    message: Option<String>,
    token_type: Option<String>,
    id_token: Option<String>,
    saml_response: Option<String>,
    expiration_time: Option<i64>,
}

// === impl Executable ===

impl Executable {
    /// The source of `file`, for an account of `audience`, whose tokens
    /// are of `token_type`, impersonating `impersonated` (an email);
    /// `shown` names the credentials file in messages.
    pub(super) fn new(
        file: ExecutableFile,
        env: &AwsEnv,
        shown: &str,
        (audience, token_type, impersonated): (&str, &str, Option<&str>),
    ) -> Result<Executable, FileError> {
        if env.get(ALLOW_VAR) != Some("1") {
            return Err(FileError::Unsupported(format!(
                "{shown}: its token comes from an executable, which runs only when \
                 {ALLOW_VAR}=1 is set"
            )));
        }
        let line = file
            .command
            .filter(|c| !c.trim().is_empty())
            .ok_or_else(|| {
                FileError::Unusable(format!(
                    "{shown}: credential_source.executable needs command"
                ))
            })?;
        let command = shlex::split(&line)
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                FileError::Unusable(format!(
                    "{shown}: credential_source.executable.command is not a command line \
                 (an unclosed quote?)"
                ))
            })?;
        let timeout = match file.timeout_millis {
            None | Some(0) => DEFAULT_TIMEOUT,
            Some(ms) if (MIN_TIMEOUT_MS..=MAX_TIMEOUT_MS).contains(&ms) => {
                Duration::from_millis(ms)
            }
            Some(ms) => {
                return Err(FileError::Unusable(format!(
                    "{shown}: credential_source.executable.timeout_millis {ms} is not between \
                     {MIN_TIMEOUT_MS} and {MAX_TIMEOUT_MS}"
                )));
            }
        };
        let output_file = file
            .output_file
            .filter(|f| !f.is_empty())
            .map(PathBuf::from);
        let mut vars = vec![
            ("GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE", audience.to_string()),
            ("GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE", token_type.to_string()),
            ("GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE", "0".to_string()),
            ("GOOGLE_EXTERNAL_ACCOUNT_REVOKE", "0".to_string()),
        ];
        if let Some(email) = impersonated {
            vars.push((
                "GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL",
                email.to_string(),
            ));
        }
        if let Some(path) = &output_file {
            vars.push((
                "GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE",
                path.display().to_string(),
            ));
        }
        Ok(Executable {
            command,
            timeout,
            output_file,
            vars,
        })
    }

    /// A subject token: from the output file while its response is valid,
    /// else from a run of the program (see the module docs).
    pub(super) async fn subject_token(&self) -> Result<String, String> {
        let now = SystemTime::now();
        if let Some(cached) = self.cached(now).await {
            return Ok(cached);
        }
        let program = &self.command[0];
        let mut child = tokio::process::Command::new(program)
            .args(&self.command[1..])
            .envs(self.vars.iter().map(|(k, v)| (*k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("the credential executable {program}: {e}"))?;
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(format!("the credential executable {program}: no output"));
        };
        let run = async {
            let mut out = Vec::new();
            let mut err = Vec::new();
            let (mut stdout, mut stderr) = (stdout.take(MAX_OUTPUT), stderr.take(MAX_OUTPUT));
            let (read_out, read_err, status) = tokio::join!(
                stdout.read_to_end(&mut out),
                stderr.read_to_end(&mut err),
                child.wait(),
            );
            read_out.and(read_err).map_err(|e| e.to_string())?;
            let status = status.map_err(|e| e.to_string())?;
            Ok::<_, String>((status, out, err))
        };
        let (status, out, err) = tokio::time::timeout(self.timeout, run)
            .await
            .map_err(|_| {
                format!(
                    "the credential executable {program} did not finish within {} ms",
                    self.timeout.as_millis()
                )
            })?
            .map_err(|e| format!("the credential executable {program}: {e}"))?;
        if !status.success() {
            // Its own words, cut: they say why, and hold no token.
            let said = String::from_utf8_lossy(&err);
            let said: String = said.trim().chars().take(300).collect();
            return Err(format!(
                "the credential executable {program} exited with {status}: {said}"
            ));
        }
        let text = if out.iter().all(u8::is_ascii_whitespace) {
            match &self.output_file {
                Some(path) => tokio::fs::read(path)
                    .await
                    .map_err(|e| format!("{}: {e}", path.display()))?,
                None => {
                    return Err(format!(
                        "the credential executable {program} printed nothing"
                    ));
                }
            }
        } else {
            out
        };
        token_of(&text, now).map_err(|e| format!("the credential executable {program}: {e}"))
    }

    /// The token of the output file's response, if one is there and still
    /// valid (with an `expiration_time`).
    async fn cached(&self, now: SystemTime) -> Option<String> {
        let path = self.output_file.as_ref()?;
        let text = tokio::fs::read(path).await.ok()?;
        let response: Response = serde_json::from_slice(&text).ok()?;
        response.expiration_time?;
        token_in(response, now).ok()
    }
}

/// The subject token of a response's text, or why there is none.
fn token_of(text: &[u8], now: SystemTime) -> Result<String, String> {
    let response: Response =
        serde_json::from_slice(text).map_err(|e| format!("its response is not JSON: {e}"))?;
    token_in(response, now)
}

/// The subject token of a response, or why there is none.
fn token_in(response: Response, now: SystemTime) -> Result<String, String> {
    match response.version {
        None => return Err("its response has no version".to_string()),
        Some(v) if v > MAX_VERSION => return Err(format!("its response's version {v} is unknown")),
        Some(_) => {}
    }
    match response.success {
        None => return Err("its response has no success field".to_string()),
        Some(false) => {
            return Err(format!(
                "it answered unsuccessfully: code {}, message {}",
                response.code.as_deref().unwrap_or("(none)"),
                response.message.as_deref().unwrap_or("(none)")
            ));
        }
        Some(true) => {}
    }
    let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if let Some(at) = response.expiration_time
        && at < i64::try_from(now).unwrap_or(i64::MAX)
    {
        return Err("the token it gave has expired".to_string());
    }
    let token = match response.token_type.as_deref() {
        Some(
            "urn:ietf:params:oauth:token-type:jwt" | "urn:ietf:params:oauth:token-type:id_token",
        ) => response.id_token,
        Some("urn:ietf:params:oauth:token-type:saml2") => response.saml_response,
        Some(other) => return Err(format!("its token type {other} is unknown")),
        None => return Err("its response has no token_type".to_string()),
    };
    token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| "its response holds no token".to_string())
}

#[cfg(test)]
mod tests;
