//! AWS credentials that expire and are fetched again: a profile's
//! `credential_process`, the container credentials endpoint (ECS, EKS Pod
//! Identity: `AWS_CONTAINER_CREDENTIALS_FULL_URI` /
//! `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`, with
//! `AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE]`) and the EC2 instance
//! metadata service (IMDSv2, `AWS_EC2_METADATA_SERVICE_ENDPOINT` or
//! `http://169.254.169.254`), and STS `AssumeRoleWithWebIdentity`
//! (`AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN`).
//!
//! They are implemented here, on the gateway's own HTTP client, rather than
//! with `aws-config`: that crate brings its own HTTP stack, the STS/SSO SDK
//! clients and, by default, aws-lc (see ARCHITECTURE.md). The answers'
//! shapes are AWS's (`AccessKeyId`, `SecretAccessKey`, `Token` /
//! `SessionToken`, `Expiration`).
//!
//! One set of credentials is cached (bounded by construction), fetched when
//! first needed and again shortly before it expires
//! ([`crate::cloud::fetch::refresh_margin`]); one fetch at a time; after a
//! failure the next is tried 5 s later (credentials still valid are used
//! meanwhile). Nothing here logs a key.

use std::{
    path::PathBuf,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use aws_credential_types::Credentials;
use bytes::Bytes;
use http::Method;
use serde::Deserialize;

use crate::{cloud::fetch, http_client::HttpClient};

/// How long after a failed fetch the next is tried.
const RETRY_AFTER: Duration = Duration::from_secs(5);
/// How long a `credential_process` may run.
const PROCESS_TIMEOUT: Duration = Duration::from_secs(30);
/// The IMDS session token's lifetime asked for (seconds).
const IMDS_TOKEN_TTL: &str = "21600";

/// Where refreshable credentials come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refreshable {
    /// A profile's `credential_process` command line (run by `sh -c`).
    Process(String),
    /// The container credentials endpoint and its `Authorization`.
    Container {
        /// The full URI.
        uri: String,
        /// `AWS_CONTAINER_AUTHORIZATION_TOKEN`.
        token: Option<String>,
        /// `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (read at each fetch).
        token_file: Option<PathBuf>,
    },
    /// The instance metadata service at this base URL.
    Imds(String),
    /// STS `AssumeRoleWithWebIdentity` (EKS IRSA and the like):
    /// `AWS_WEB_IDENTITY_TOKEN_FILE` (read at each fetch), `AWS_ROLE_ARN`,
    /// `AWS_ROLE_SESSION_NAME`, at `AWS_ENDPOINT_URL_STS` or the region's
    /// STS endpoint. The call is not signed (the token is the credential).
    WebIdentity {
        /// The OIDC token's file.
        token_file: PathBuf,
        /// The role to assume.
        role_arn: String,
        /// The session's name.
        session_name: String,
        /// STS's base URL.
        endpoint: String,
    },
}

/// Refreshable credentials and their cache.
#[derive(Debug)]
pub struct Refreshing {
    source: Refreshable,
    cache: tokio::sync::Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    /// The credentials, when to fetch again, when they expire (`None`: never).
    current: Option<(Credentials, Option<Instant>, Option<Instant>)>,
    retry_at: Option<Instant>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("cached", &self.current.is_some())
            .finish_non_exhaustive()
    }
}

/// The JSON every source answers with (`Token` or `SessionToken`).
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Answer {
    access_key_id: String,
    secret_access_key: String,
    #[serde(alias = "SessionToken")]
    token: Option<String>,
    expiration: Option<String>,
}

// === impl Refreshing ===

impl Refreshing {
    /// Credentials from `source`, fetched when first asked for.
    pub fn new(source: Refreshable) -> Refreshing {
        Refreshing {
            source,
            cache: tokio::sync::Mutex::new(Cache::default()),
        }
    }

    /// The current credentials: cached, or fetched.
    pub async fn current(&self, client: &HttpClient) -> Result<Credentials, String> {
        let mut cache = self.cache.lock().await;
        let now = Instant::now();
        let (fresh, valid) = match &cache.current {
            Some((creds, refresh_at, expires)) => (
                refresh_at.is_none_or(|at| now < at).then(|| creds.clone()),
                expires.is_none_or(|at| now < at).then(|| creds.clone()),
            ),
            None => (None, None),
        };
        if let Some(creds) = fresh {
            return Ok(creds);
        }
        if cache.retry_at.is_some_and(|at| now < at) {
            return valid.ok_or_else(|| "the last fetch failed; retrying shortly".to_string());
        }
        match self.fetch(client).await {
            Ok(answer) => {
                let expires =
                    match &answer.expiration {
                        Some(text) => Some(parse_iso8601(text).ok_or_else(|| {
                            format!("Expiration {text:?} is not an ISO 8601 time")
                        })?),
                        None => None,
                    };
                let creds = Credentials::new(
                    answer.access_key_id,
                    answer.secret_access_key,
                    answer.token,
                    expires,
                    "toolwarden",
                );
                let lifetime = expires.map(|at| {
                    at.duration_since(SystemTime::now())
                        .unwrap_or(Duration::ZERO)
                });
                let fetched = Instant::now();
                cache.current = Some((
                    creds.clone(),
                    lifetime.map(|l| fetched + l - fetch::refresh_margin(l)),
                    lifetime.map(|l| fetched + l),
                ));
                cache.retry_at = None;
                Ok(creds)
            }
            Err(e) => {
                cache.retry_at = Some(now + RETRY_AFTER);
                match valid {
                    Some(creds) => {
                        tracing::warn!(error = %e, "refreshing AWS credentials failed; the current ones are used");
                        Ok(creds)
                    }
                    None => Err(e),
                }
            }
        }
    }

    async fn fetch(&self, client: &HttpClient) -> Result<Answer, String> {
        let body = match &self.source {
            Refreshable::Process(command) => run_process(command).await?,
            Refreshable::Container {
                uri,
                token,
                token_file,
            } => {
                let token = match token_file {
                    Some(path) => Some(
                        std::fs::read_to_string(path)
                            .map_err(|e| format!("{}: {e}", path.display()))?
                            .trim()
                            .to_string(),
                    ),
                    None => token.clone(),
                };
                let headers: Vec<(&str, &str)> = token
                    .as_deref()
                    .map(|t| ("authorization", t))
                    .into_iter()
                    .collect();
                let (status, body) =
                    fetch::exchange(client, Method::GET, uri, &headers, Bytes::new()).await?;
                if !status.is_success() {
                    return Err(format!("{uri}: {status}"));
                }
                body
            }
            Refreshable::Imds(base) => imds(client, base).await?,
            Refreshable::WebIdentity {
                token_file,
                role_arn,
                session_name,
                endpoint,
            } => return web_identity(client, token_file, role_arn, session_name, endpoint).await,
        };
        serde_json::from_slice(&body).map_err(|e| format!("not AWS credentials: {e}"))
    }
}

/// IMDSv2: a session token, the role's name, the role's credentials.
async fn imds(client: &HttpClient, base: &str) -> Result<Bytes, String> {
    let base = base.trim_end_matches('/');
    let uri = format!("{base}/latest/api/token");
    let ttl = [("x-aws-ec2-metadata-token-ttl-seconds", IMDS_TOKEN_TTL)];
    let (status, token) = fetch::exchange(client, Method::PUT, &uri, &ttl, Bytes::new()).await?;
    if !status.is_success() {
        return Err(format!("{uri}: {status}"));
    }
    let token = std::str::from_utf8(&token).map_err(|_| format!("{uri}: not text"))?;
    let auth = [("x-aws-ec2-metadata-token", token.trim())];
    let roles = format!("{base}/latest/meta-data/iam/security-credentials/");
    let (status, role) = fetch::exchange(client, Method::GET, &roles, &auth, Bytes::new()).await?;
    if !status.is_success() {
        return Err(format!("{roles}: {status} (no instance role?)"));
    }
    let role = std::str::from_utf8(&role)
        .ok()
        .and_then(|r| r.lines().next())
        .map(str::trim)
        .filter(|r| !r.is_empty() && !r.contains('/'))
        .ok_or_else(|| format!("{roles}: no role name"))?;
    let uri = format!("{roles}{role}");
    let (status, body) = fetch::exchange(client, Method::GET, &uri, &auth, Bytes::new()).await?;
    if !status.is_success() {
        return Err(format!("{uri}: {status}"));
    }
    Ok(body)
}

/// STS `AssumeRoleWithWebIdentity`; its answer is XML.
async fn web_identity(
    client: &HttpClient,
    token_file: &std::path::Path,
    role_arn: &str,
    session_name: &str,
    endpoint: &str,
) -> Result<Answer, String> {
    let token = std::fs::read_to_string(token_file)
        .map_err(|e| format!("{}: {e}", token_file.display()))?;
    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("Action", "AssumeRoleWithWebIdentity")
        .append_pair("Version", "2011-06-15")
        .append_pair("RoleArn", role_arn)
        .append_pair("RoleSessionName", session_name)
        .append_pair("WebIdentityToken", token.trim())
        .finish();
    let uri = format!("{}/", endpoint.trim_end_matches('/'));
    let headers = [("content-type", "application/x-www-form-urlencoded")];
    let (status, body) =
        fetch::exchange(client, Method::POST, &uri, &headers, Bytes::from(form)).await?;
    let text = String::from_utf8_lossy(&body);
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&format!("</{name}>"))? + start;
        Some(text[start..end].trim().to_string())
    };
    if !status.is_success() {
        return Err(format!(
            "{uri}: {status} {} {}",
            tag("Code").unwrap_or_default(),
            tag("Message").unwrap_or_default()
        ));
    }
    match (tag("AccessKeyId"), tag("SecretAccessKey")) {
        (Some(access_key_id), Some(secret_access_key)) => Ok(Answer {
            access_key_id,
            secret_access_key,
            token: tag("SessionToken"),
            expiration: tag("Expiration"),
        }),
        _ => Err(format!("{uri}: no credentials in the answer")),
    }
}

/// Run a `credential_process` and read its standard output (version 1).
async fn run_process(command: &str) -> Result<Bytes, String> {
    let run = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(PROCESS_TIMEOUT, run)
        .await
        .map_err(|_| {
            format!(
                "credential_process did not finish within {} s",
                PROCESS_TIMEOUT.as_secs()
            )
        })?
        .map_err(|e| format!("credential_process could not run: {e}"))?;
    if !out.status.success() {
        // Its standard error is the process's own message (not its output,
        // which holds keys).
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "credential_process failed ({}): {}",
            out.status,
            err.trim().chars().take(500).collect::<String>()
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("credential_process output is not JSON: {e}"))?;
    if v["Version"] != 1 {
        return Err("credential_process output: Version must be 1".into());
    }
    Ok(Bytes::from(out.stdout))
}

/// `2025-11-25T17:00:00Z` (fractional seconds and a `+00:00` offset taken).
pub fn parse_iso8601(text: &str) -> Option<SystemTime> {
    let t = text.trim();
    let num = |r: std::ops::Range<usize>| t.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let sep = |i: usize, c: u8| t.as_bytes().get(i) == Some(&c);
    if !(sep(4, b'-')
        && sep(7, b'-')
        && (sep(10, b'T') || sep(10, b' '))
        && sep(13, b':')
        && sep(16, b':'))
    {
        return None;
    }
    let rest = t[19..].trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    if !matches!(rest, "Z" | "z" | "+00:00" | "")
        || !(1..=12).contains(&mo)
        || !(1..=31).contains(&d)
    {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + s;
    u64::try_from(secs)
        .ok()
        .map(|s| UNIX_EPOCH + Duration::from_secs(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_times() {
        let at = |s| parse_iso8601(s).map(|t| t.duration_since(UNIX_EPOCH).unwrap().as_secs());
        assert_eq!(at("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(at("2025-11-25T17:00:00Z"), Some(1_764_090_000));
        assert_eq!(at("2025-11-25T17:00:00.123Z"), Some(1_764_090_000));
        assert_eq!(at("2024-02-29T00:00:00+00:00"), Some(1_709_164_800));
        assert_eq!(at("2025-13-01T00:00:00Z"), None);
        assert_eq!(at("tomorrow"), None);
    }

    #[tokio::test]
    async fn a_credential_process_is_run_and_cached_until_near_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let count = dir.path().join("count");
        // Credentials that expire in 10 s: refreshed after 5 s, so a
        // second call at once reads the cache.
        let expires = SystemTime::now() + Duration::from_secs(10);
        let secs = expires.duration_since(UNIX_EPOCH).unwrap().as_secs();
        let command = format!(
            "echo x >> {count}; printf '{{\"Version\":1,\"AccessKeyId\":\"AKIDP\",\"SecretAccessKey\":\"s\",\"SessionToken\":\"t\",\"Expiration\":\"%s\"}}' \"$(date -u -d @{secs} +%Y-%m-%dT%H:%M:%SZ)\"",
            count = count.display()
        );
        let p = Refreshing::new(Refreshable::Process(command));
        let client =
            crate::upstream::build_client(&crate::Config::for_tests("http://127.0.0.1:9")).unwrap();
        let c = p.current(&client).await.unwrap();
        assert_eq!(c.access_key_id(), "AKIDP");
        assert_eq!(c.session_token(), Some("t"));
        p.current(&client).await.unwrap();
        assert_eq!(std::fs::read_to_string(&count).unwrap().lines().count(), 1);
        let failing = Refreshing::new(Refreshable::Process("echo nope >&2; exit 3".into()));
        let err = failing.current(&client).await.unwrap_err();
        assert!(err.contains("nope"), "{err}");
    }
}
