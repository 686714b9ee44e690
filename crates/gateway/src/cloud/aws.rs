//! AWS credentials and SigV4 re-signing of forwarded Bedrock requests.
//!
//! SigV4 signs the host, so a request a client signed for the gateway's
//! address cannot go on to Bedrock as it is: with credentials, the gateway
//! replaces the client's signature (`authorization`, `x-amz-date`,
//! `x-amz-security-token`, `x-amz-content-sha256`) with its own over every
//! header it forwards (the Anthropic SDK signs `accept-encoding`,
//! `x-stainless-*` and the rest; `aws-sigv4` leaves out only
//! `authorization`, `user-agent`, `x-amzn-trace-id`, `transfer-encoding`,
//! as botocore does) and over the path as it was sent, encoded once more
//! for the canonical request (botocore's and AWS's rule, `aws-sigv4`'s
//! [`PercentEncodingMode::Double`]). Without credentials a request goes as
//! it came.
//!
//! Credentials are read once, at start-up, through the config's
//! environment seam: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` /
//! `AWS_SESSION_TOKEN`, else the static keys of the profile `AWS_PROFILE`
//! (or `default`) in the shared credentials file
//! (`AWS_SHARED_CREDENTIALS_FILE` or `~/.aws/credentials`) or config file
//! (`AWS_CONFIG_FILE` or `~/.aws/config`). That is a subset of the standard
//! chain: SSO, `credential_process`, web identity, role assumption and the
//! instance metadata service are not read (the `aws-config` crate would
//! bring them with an HTTP client of its own). Nothing here logs a
//! credential; the `Debug` of [`AwsCredentials`] shows only its source.

use std::{collections::HashMap, fmt, path::PathBuf, time::SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::{
    http_request::{
        PercentEncodingMode, SignableBody, SignableRequest, SigningSettings, sign as sigv4_sign,
    },
    sign::v4,
};
use http::{HeaderValue, header};

/// The SigV4 service name Bedrock Runtime signs with.
pub const SERVICE: &str = "bedrock";
/// The region used when neither the config nor the client's signature names one.
pub const FALLBACK_REGION: &str = "us-east-1";
/// Headers of the client's signature, replaced by the gateway's.
const CLIENT_SIGNATURE: [&str; 4] = [
    "authorization",
    "x-amz-date",
    "x-amz-security-token",
    "x-amz-content-sha256",
];

/// AWS credentials the gateway signs with.
#[derive(Clone)]
pub struct AwsCredentials {
    credentials: Credentials,
    source: String,
}

/// The AWS variables read at start-up (`AWS_*` and `HOME`). Its `Debug`
/// shows only the variable names.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AwsEnv {
    vars: HashMap<String, String>,
}

// === impl AwsEnv ===

impl AwsEnv {
    /// Whether the config's environment seam keeps this variable.
    pub fn wants(name: &str) -> bool {
        name.starts_with("AWS_") || name == "HOME"
    }

    /// Keep a variable.
    pub fn insert(&mut self, name: String, value: String) {
        self.vars.insert(name, value);
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`.
    pub fn region(&self) -> Option<&str> {
        self.get("AWS_REGION")
            .or_else(|| self.get("AWS_DEFAULT_REGION"))
    }

    /// The credentials found, `Ok(None)` when there are none, an error for
    /// a half-given pair or an unreadable named file.
    pub fn credentials(&self) -> Result<Option<AwsCredentials>, String> {
        match (
            self.get("AWS_ACCESS_KEY_ID"),
            self.get("AWS_SECRET_ACCESS_KEY"),
        ) {
            (Some(id), Some(secret)) => {
                let token = self.get("AWS_SESSION_TOKEN").map(String::from);
                return Ok(Some(AwsCredentials::new(id, secret, token, "environment")));
            }
            (Some(_), None) | (None, Some(_)) => {
                return Err(
                    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be given together".into(),
                );
            }
            (None, None) => {}
        }
        let profile = self.get("AWS_PROFILE").unwrap_or("default");
        let home = self.get("HOME").map(PathBuf::from);
        let file = |var: &str, default: &str| {
            self.get(var)
                .map(|p| (PathBuf::from(p), true))
                .or_else(|| home.as_ref().map(|h| (h.join(default), false)))
        };
        let sections = [
            (
                file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials"),
                profile.to_string(),
            ),
            (
                file("AWS_CONFIG_FILE", ".aws/config"),
                if profile == "default" {
                    "default".to_string()
                } else {
                    format!("profile {profile}")
                },
            ),
        ];
        for (found, section) in sections {
            let Some((path, named)) = found else { continue };
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if named => return Err(format!("{}: {e}", path.display())),
                Err(_) => continue,
            };
            let keys = ini_section(&text, &section);
            if let (Some(id), Some(secret)) = (
                keys.get("aws_access_key_id"),
                keys.get("aws_secret_access_key"),
            ) {
                let token = keys.get("aws_session_token").cloned();
                let source = format!("profile {profile} in {}", path.display());
                return Ok(Some(AwsCredentials::new(id, secret, token, &source)));
            }
        }
        Ok(None)
    }
}

impl fmt::Debug for AwsEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort();
        f.debug_struct("AwsEnv").field("names", &names).finish()
    }
}

/// The `key = value` pairs of `[section]` in an INI file.
fn ini_section(text: &str, section: &str) -> HashMap<String, String> {
    let mut keys = HashMap::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = name.trim() == section;
            continue;
        }
        if inside && let Some((k, v)) = line.split_once('=') {
            keys.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    keys
}

// === impl AwsCredentials ===

impl AwsCredentials {
    /// Credentials from their parts; `source` says where they came from.
    pub fn new(id: &str, secret: &str, token: Option<String>, source: &str) -> AwsCredentials {
        AwsCredentials {
            credentials: Credentials::new(id, secret, token, None, "toolwarden"),
            source: source.to_string(),
        }
    }

    /// Where they came from (never the keys).
    pub fn source(&self) -> &str {
        &self.source
    }
}

impl fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// The region of a client's SigV4 credential scope
/// (`Credential=AKID/20250101/us-west-2/bedrock/aws4_request`).
pub fn client_region(headers: &http::HeaderMap) -> Option<String> {
    let auth = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let scope = auth.split("Credential=").nth(1)?.split([',', ' ']).next()?;
    let mut parts = scope.split('/');
    let region = parts.nth(2)?;
    (!region.is_empty()).then(|| region.to_string())
}

/// Replace the client's signature on `parts` (whose URI is already the
/// upstream's) with one made with `credentials` for `region`, over `body`
/// as it will be sent. On error (a header value that is not text) the
/// request is left as it was.
pub fn resign(
    parts: &mut http::request::Parts,
    body: &[u8],
    credentials: &AwsCredentials,
    region: &str,
    time: SystemTime,
) -> Result<(), String> {
    let mut headers = parts.headers.clone();
    for name in CLIENT_SIGNATURE {
        headers.remove(name);
    }
    let authority = parts.uri.authority().ok_or("no upstream host")?.as_str();
    headers.insert(
        header::HOST,
        HeaderValue::from_str(authority).map_err(|e| e.to_string())?,
    );
    let mut pairs = Vec::with_capacity(headers.len());
    for (name, value) in &headers {
        let value = value
            .to_str()
            .map_err(|_| format!("header {name} is not text: cannot sign it"))?;
        pairs.push((name.as_str(), value));
    }
    let uri = parts.uri.to_string();
    let signable = SignableRequest::new(
        parts.method.as_str(),
        &uri,
        pairs.into_iter(),
        SignableBody::Bytes(body),
    )
    .map_err(|e| e.to_string())?;
    let mut settings = SigningSettings::default();
    settings.percent_encoding_mode = PercentEncodingMode::Double;
    let identity = credentials.credentials.clone().into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(SERVICE)
        .time(time)
        .settings(settings)
        .build()
        .map_err(|e| e.to_string())?
        .into();
    let (instructions, _) = sigv4_sign(signable, &params)
        .map_err(|e| e.to_string())?
        .into_parts();
    let mut signed = http::Request::new(());
    *signed.headers_mut() = headers;
    instructions.apply_to_request_http1x(&mut signed);
    parts.headers = std::mem::take(signed.headers_mut());
    Ok(())
}

#[cfg(test)]
mod tests;
