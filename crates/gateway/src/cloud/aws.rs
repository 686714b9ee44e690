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
//! Credentials come from the standard chain, resolved once at start-up
//! through the config's environment seam: `AWS_ACCESS_KEY_ID` /
//! `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`; else the profile
//! `AWS_PROFILE` (or `default`) in the shared credentials file
//! (`AWS_SHARED_CREDENTIALS_FILE` or `~/.aws/credentials`) or config file
//! (`AWS_CONFIG_FILE` or `~/.aws/config`), its static keys or its
//! `credential_process`; else web identity (`AWS_WEB_IDENTITY_TOKEN_FILE` +
//! `AWS_ROLE_ARN`, STS `AssumeRoleWithWebIdentity`); else the container
//! credentials endpoint
//! (`AWS_CONTAINER_CREDENTIALS_FULL_URI` / `_RELATIVE_URI`); else the EC2
//! instance metadata service when `AWS_EC2_METADATA_SERVICE_ENDPOINT` is
//! set or the machine says it is an EC2 instance (unless
//! `AWS_EC2_METADATA_DISABLED=true`). Those last four expire and are
//! fetched again ([`provider`]). Not read: SSO and profile role
//! assumption (`role_arn` + `source_profile`: a signed STS call). Nothing here logs a
//! credential; the `Debug` of [`AwsCredentials`] shows only its source.

pub mod provider;

use std::{collections::HashMap, fmt, path::PathBuf, sync::Arc, time::SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::{
    http_request::{
        PercentEncodingMode, SignableBody, SignableRequest, SigningSettings, sign as sigv4_sign,
    },
    sign::v4,
};
use http::{HeaderValue, header};

use crate::http_client::HttpClient;

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

/// AWS credentials the gateway signs with: fixed, or fetched again before
/// they expire.
#[derive(Clone)]
pub struct AwsCredentials {
    kind: Kind,
    source: String,
}

#[derive(Clone)]
enum Kind {
    Fixed(Credentials),
    Refreshing(Arc<provider::Refreshing>),
}

/// The AWS variables read at start-up (`AWS_*` and `HOME`). Its `Debug`
/// shows only the variable names.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AwsEnv {
    vars: HashMap<String, String>,
}

// === impl AwsEnv ===

impl AwsEnv {
    /// Whether the config's environment seam keeps this variable: the
    /// AWS ones, and Google's application default credentials'
    /// ([`super::google`]).
    pub fn wants(name: &str) -> bool {
        name.starts_with("AWS_")
            || matches!(
                name,
                "HOME" | "GOOGLE_APPLICATION_CREDENTIALS" | "CLOUDSDK_CONFIG" | "GCE_METADATA_HOST"
            )
    }

    /// Keep a variable.
    pub fn insert(&mut self, name: String, value: String) {
        self.vars.insert(name, value);
    }

    /// A variable's value (`None` when unset or empty).
    pub fn get(&self, name: &str) -> Option<&str> {
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
            if let Some(command) = keys.get("credential_process") {
                let source = format!(
                    "credential_process of profile {profile} in {}",
                    path.display()
                );
                let process = provider::Refreshable::Process(command.clone());
                return Ok(Some(AwsCredentials::refreshing(process, source)));
            }
        }
        if let (Some(token_file), Some(role_arn)) = (
            self.get("AWS_WEB_IDENTITY_TOKEN_FILE"),
            self.get("AWS_ROLE_ARN"),
        ) {
            let region = self.region().unwrap_or(FALLBACK_REGION);
            let endpoint = self
                .get("AWS_ENDPOINT_URL_STS")
                .map(String::from)
                .unwrap_or_else(|| format!("https://sts.{region}.amazonaws.com"));
            let source = format!("web identity ({role_arn}) at {endpoint}");
            let web = provider::Refreshable::WebIdentity {
                token_file: PathBuf::from(token_file),
                role_arn: role_arn.to_string(),
                session_name: self
                    .get("AWS_ROLE_SESSION_NAME")
                    .unwrap_or("toolwarden")
                    .to_string(),
                endpoint,
            };
            return Ok(Some(AwsCredentials::refreshing(web, source)));
        }
        let container = self
            .get("AWS_CONTAINER_CREDENTIALS_FULL_URI")
            .map(String::from)
            .or_else(|| {
                self.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                    .map(|rel| format!("http://169.254.170.2{rel}"))
            });
        if let Some(uri) = container {
            let source = format!("the container credentials endpoint {uri}");
            let container = provider::Refreshable::Container {
                uri,
                token: self
                    .get("AWS_CONTAINER_AUTHORIZATION_TOKEN")
                    .map(String::from),
                token_file: self
                    .get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
                    .map(PathBuf::from),
            };
            return Ok(Some(AwsCredentials::refreshing(container, source)));
        }
        let disabled = self
            .get("AWS_EC2_METADATA_DISABLED")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let endpoint = self
            .get("AWS_EC2_METADATA_SERVICE_ENDPOINT")
            .map(String::from)
            .or_else(|| on_ec2().then(|| "http://169.254.169.254".to_string()));
        if let (false, Some(endpoint)) = (disabled, endpoint) {
            let source = format!("the instance metadata service {endpoint}");
            let imds = provider::Refreshable::Imds(endpoint);
            return Ok(Some(AwsCredentials::refreshing(imds, source)));
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

/// Whether this machine says it is an EC2 instance (its DMI vendor, or a
/// Xen hypervisor UUID starting with `ec2`).
fn on_ec2() -> bool {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    read("/sys/class/dmi/id/board_vendor").contains("Amazon EC2")
        || read("/sys/class/dmi/id/sys_vendor").contains("Amazon EC2")
        || read("/sys/hypervisor/uuid").starts_with("ec2")
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
            kind: Kind::Fixed(Credentials::new(id, secret, token, None, "toolwarden")),
            source: source.to_string(),
        }
    }

    /// Credentials fetched from `from` when first needed and again before
    /// they expire.
    pub fn refreshing(from: provider::Refreshable, source: String) -> AwsCredentials {
        AwsCredentials {
            kind: Kind::Refreshing(Arc::new(provider::Refreshing::new(from))),
            source,
        }
    }

    /// Fixed credentials as they are (`None` for refreshing ones).
    pub fn fixed(&self) -> Option<&Credentials> {
        match &self.kind {
            Kind::Fixed(c) => Some(c),
            Kind::Refreshing(_) => None,
        }
    }

    /// The credentials to sign with now (fetched if they must be).
    pub async fn current(&self, client: &HttpClient) -> Result<Credentials, String> {
        match &self.kind {
            Kind::Fixed(c) => Ok(c.clone()),
            Kind::Refreshing(r) => r.current(client).await,
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
    credentials: &Credentials,
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
    let identity = credentials.clone().into();
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
