//! Google application default credentials (ADC) for Vertex AI: when a
//! client sends a Vertex request with no credential of its own (no
//! `Authorization`, no `x-goog-api-key`, no `key=`), the gateway adds its
//! own `Authorization: Bearer` token, and with it, as Google's auth
//! libraries do, the quota project as `x-goog-user-project` (unless the
//! client sent one): `GOOGLE_CLOUD_QUOTA_PROJECT`, else the credentials
//! file's `quota_project_id` (which `gcloud auth application-default login`
//! writes; Vertex refuses some calls on user credentials without it).
//!
//! Where the credentials come from, in ADC's order, read once at start-up:
//! 1. `GOOGLE_APPLICATION_CREDENTIALS`: a JSON file, a `service_account`
//!    (a JWT signed RS256 with its `private_key`, exchanged at its
//!    `token_uri`), an `authorized_user` (a `refresh_token` grant) or an
//!    `external_account` (workload identity federation: the `external` module); an
//!    unreadable file is a configuration error, one of another type (or an
//!    `external_account` of an unsupported source) a warning;
//! 2. gcloud's well-known file, `$CLOUDSDK_CONFIG/application_default_credentials.json`
//!    or `~/.config/gcloud/application_default_credentials.json` (a file of
//!    another type is skipped with a warning);
//! 3. the GCE metadata server (`GCE_METADATA_HOST`, else
//!    `metadata.google.internal` when the machine says it is a Google
//!    Compute Engine VM in `/sys/class/dmi/id/product_name`, or the
//!    environment says it runs on Cloud Run, Cloud Run functions or App
//!    Engine, whose sandboxes show no DMI: [`SERVERLESS_VARS`]).
//!
//! The token is fetched when first needed and kept in a `CredentialCache`
//! (`cloud::cache`): fetched again in the background shortly before it
//! expires (`fetch::refresh_margin`), one fetch at a time, the current
//! token used until then; requests with none valid wait for that one
//! fetch; after a failed fetch the next is tried 5 s after it ended
//! (meanwhile requests with no valid token go without one, as the client
//! sent them). One token per gateway: the cache is bounded by
//! construction. Nothing here logs a token or a key.

use std::{
    fmt,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode};
use ring::{rand::SystemRandom, signature::RsaKeyPair};
use serde::Deserialize;

use super::{
    aws::AwsEnv,
    cache::{CredentialCache, Fetched, Miss},
    fetch,
};
use crate::{cloud::fetch::CredentialClient, http_client::HttpClient, resolve::Resolve};

mod aws_source;
mod executable;
mod external;

/// The OAuth scope asked for.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// The header naming the project a request's quota and billing go to.
pub const USER_PROJECT: &str = "x-goog-user-project";
/// Google's token endpoint when a file names none.
const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// The variable that lets an `external_account` run its executable.
pub const ALLOW_EXECUTABLES_VAR: &str = executable::ALLOW_VAR;

/// Variables Google's serverless platforms set, each naming the metadata
/// server as the credentials' source: Cloud Run services and functions
/// (`K_SERVICE`), Cloud Run jobs (`CLOUD_RUN_JOB`), first-generation Cloud
/// Functions (`FUNCTION_TARGET`), App Engine (`GAE_SERVICE`).
pub const SERVERLESS_VARS: [&str; 4] = [
    "K_SERVICE",
    "CLOUD_RUN_JOB",
    "FUNCTION_TARGET",
    "GAE_SERVICE",
];

/// The gateway's Google credentials and its cached token.
pub struct GoogleAuth {
    source: Source,
    describe: String,
    /// `x-goog-user-project`'s value, when there is a quota project.
    quota_project: Option<HeaderValue>,
    /// `Bearer …`.
    token: CredentialCache<HeaderValue>,
}

enum Source {
    ServiceAccount {
        email: String,
        key_id: Option<String>,
        key: Box<RsaKeyPair>,
        token_uri: String,
    },
    AuthorizedUser {
        client_id: String,
        client_secret: String,
        refresh_token: String,
        token_uri: String,
    },
    Metadata {
        base: String,
    },
    External(Box<external::External>),
}

/// A credentials file as Google writes it.
#[derive(Deserialize)]
struct CredentialsFile {
    #[serde(rename = "type")]
    kind: String,
    client_email: Option<String>,
    private_key: Option<String>,
    private_key_id: Option<String>,
    token_uri: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
    quota_project_id: Option<String>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    expires_in: Option<u64>,
}

/// Why a credentials file gives no credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileError {
    /// It cannot be read, is not a credentials file, or lacks a field.
    Unusable(String),
    /// A credentials file of a type the gateway does not use.
    Unsupported(String),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Unusable(e) | FileError::Unsupported(e) => f.write_str(e),
        }
    }
}

// === impl GoogleAuth ===

impl GoogleAuth {
    /// ADC from the environment (see the module docs); `Ok(None)` when
    /// there are none. A `GOOGLE_APPLICATION_CREDENTIALS` file of a type
    /// the gateway cannot use (`impersonated_service_account`, an
    /// `external_account` whose token comes from an executable) gives none,
    /// with a warning pushed to `warnings`: the environment is set for
    /// other programs, and the gateway may carry no Vertex traffic at all.
    /// One that cannot be read or is not a credentials file is an error,
    /// as is a quota project that cannot be a header value.
    pub fn from_env(
        env: &AwsEnv,
        warnings: &mut Vec<String>,
    ) -> Result<Option<GoogleAuth>, String> {
        let found = GoogleAuth::found(env, warnings)?;
        let Some(mut auth) = found else {
            return Ok(None);
        };
        if let Some(project) = env.get("GOOGLE_CLOUD_QUOTA_PROJECT") {
            auth.quota_project = Some(
                quota_header(project)
                    .ok_or("GOOGLE_CLOUD_QUOTA_PROJECT is not a valid header value")?,
            );
        }
        Ok(Some(auth))
    }

    /// The credentials ADC finds (see [`GoogleAuth::from_env`]), with the
    /// quota project of their file.
    fn found(env: &AwsEnv, warnings: &mut Vec<String>) -> Result<Option<GoogleAuth>, String> {
        if let Some(path) = env.get("GOOGLE_APPLICATION_CREDENTIALS") {
            return match GoogleAuth::from_file(Path::new(path), env) {
                Ok(auth) => Ok(Some(auth)),
                Err(FileError::Unsupported(e)) => {
                    warnings.push(format!(
                        "Google credentials: {e}; Vertex AI requests go with the client's own"
                    ));
                    Ok(None)
                }
                Err(FileError::Unusable(e)) => Err(e),
            };
        }
        let gcloud = env
            .get("CLOUDSDK_CONFIG")
            .map(PathBuf::from)
            .or_else(|| env.get("HOME").map(|h| Path::new(h).join(".config/gcloud")));
        if let Some(dir) = gcloud {
            let path = dir.join("application_default_credentials.json");
            if path.exists() {
                match GoogleAuth::from_file(&path, env) {
                    Ok(auth) => return Ok(Some(auth)),
                    Err(e) => tracing::warn!(error = %e, "Google credentials skipped"),
                }
            }
        }
        let host = env.get("GCE_METADATA_HOST").map(String::from).or_else(|| {
            let serverless = SERVERLESS_VARS.iter().any(|v| env.get(v).is_some());
            let product = || std::fs::read_to_string("/sys/class/dmi/id/product_name").ok();
            (serverless || product().is_some_and(|p| p.contains("Google")))
                .then(|| "metadata.google.internal".to_string())
        });
        Ok(host.map(|host| {
            GoogleAuth::new(
                Source::Metadata {
                    base: format!("http://{host}"),
                },
                format!("the metadata server {host}"),
            )
        }))
    }

    /// Credentials from a `service_account`, `authorized_user` or
    /// `external_account` file, with its `quota_project_id` (`env`: the
    /// AWS variables a workload on AWS signs with).
    pub fn from_file(path: &Path, env: &AwsEnv) -> Result<GoogleAuth, FileError> {
        let shown = path.display();
        let text = std::fs::read(path).map_err(|e| FileError::Unusable(format!("{shown}: {e}")))?;
        let file: CredentialsFile = serde_json::from_slice(&text).map_err(|e| {
            FileError::Unusable(format!("{shown}: not a Google credentials file: {e}"))
        })?;
        let token_uri = file
            .token_uri
            .unwrap_or_else(|| DEFAULT_TOKEN_URI.to_string());
        let quota_project = match file.quota_project_id.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(project) => Some(quota_header(project).ok_or_else(|| {
                FileError::Unusable(format!(
                    "{shown}: quota_project_id is not a valid header value"
                ))
            })?),
        };
        let source = match file.kind.as_str() {
            "service_account" => {
                let (Some(email), Some(pem)) = (file.client_email, file.private_key) else {
                    return Err(FileError::Unusable(format!(
                        "{shown}: client_email and private_key are required"
                    )));
                };
                let der = pem_der(&pem).ok_or_else(|| {
                    FileError::Unusable(format!("{shown}: private_key is not PEM"))
                })?;
                let key = RsaKeyPair::from_pkcs8(&der).map_err(|e| {
                    FileError::Unusable(format!(
                        "{shown}: private_key is not an RSA PKCS#8 key: {e}"
                    ))
                })?;
                Source::ServiceAccount {
                    email,
                    key_id: file.private_key_id,
                    key: Box::new(key),
                    token_uri,
                }
            }
            "authorized_user" => {
                let (Some(client_id), Some(client_secret), Some(refresh_token)) =
                    (file.client_id, file.client_secret, file.refresh_token)
                else {
                    return Err(FileError::Unusable(format!(
                        "{shown}: client_id, client_secret and refresh_token are required"
                    )));
                };
                Source::AuthorizedUser {
                    client_id,
                    client_secret,
                    refresh_token,
                    token_uri,
                }
            }
            "external_account" => Source::External(Box::new(external::External::from_file(
                &text,
                &shown.to_string(),
                env,
            )?)),
            other => {
                return Err(FileError::Unsupported(format!(
                    "{shown}: credentials of type {other:?} are not supported (service_account, \
                     authorized_user and external_account are)"
                )));
            }
        };
        let mut auth = GoogleAuth::new(source, format!("{} in {shown}", file.kind));
        auth.quota_project = quota_project;
        Ok(auth)
    }

    fn new(source: Source, describe: String) -> GoogleAuth {
        GoogleAuth {
            source,
            quota_project: None,
            token: CredentialCache::new(format!("the Google access token ({describe})")),
            describe,
        }
    }

    /// The URLs tokens are fetched from, each with the field or variable
    /// that names it (`token_uri`, `GCE_METADATA_HOST`, an
    /// `external_account`'s `token_url`, …): checked at start against the
    /// gateway's own address.
    pub(crate) fn endpoints(&self) -> Vec<(&'static str, &str)> {
        match &self.source {
            Source::ServiceAccount { token_uri, .. } | Source::AuthorizedUser { token_uri, .. } => {
                vec![("token_uri", token_uri)]
            }
            Source::Metadata { base } => vec![("GCE_METADATA_HOST", base)],
            Source::External(external) => external.endpoints(),
        }
    }

    /// Where the credentials came from (never a key or a token).
    pub fn describe(&self) -> &str {
        &self.describe
    }

    /// The `x-goog-user-project` value sent with the gateway's token
    /// (`None`: no quota project).
    pub fn quota_project(&self) -> Option<&HeaderValue> {
        self.quota_project.as_ref()
    }

    /// The `Authorization` value to add: the cached token, or a new one
    /// (see the module docs) fetched over `client`, with `resolve`
    /// applied, never from the gateway itself, listening on `listen` (its
    /// bound address). `None` when none can be had now (the failure is
    /// logged).
    pub async fn authorization(
        self: &Arc<Self>,
        client: &HttpClient,
        listen: SocketAddr,
        resolve: &Resolve,
    ) -> Option<HeaderValue> {
        let fetch = || {
            let auth = Arc::clone(self);
            let client = CredentialClient::new(client.clone(), listen, resolve.clone());
            async move { auth.fetch_header(&client).await }
        };
        let token = self.token.get(fetch).await;
        match token {
            Ok(value) => Some(value),
            Err(Miss::Backoff) => None,
            Err(e) => {
                tracing::warn!(source = %self.describe, error = %e, "cannot get a Google access token");
                None
            }
        }
    }

    /// A new token as an `Authorization` value, and when it expires.
    async fn fetch_header(
        &self,
        client: &CredentialClient,
    ) -> Result<Fetched<HeaderValue>, String> {
        let (token, lifetime) = self.fetch(client).await?;
        let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| "the access token is not a header value".to_string())?;
        value.set_sensitive(true);
        Ok(Fetched {
            value,
            expires: Some(SystemTime::now() + lifetime),
        })
    }

    /// A new access token and its lifetime.
    async fn fetch(&self, client: &CredentialClient) -> Result<(String, Duration), String> {
        let form = form_body;
        let form_type = [("content-type", "application/x-www-form-urlencoded")];
        let (uri, answer) = match &self.source {
            Source::ServiceAccount {
                email,
                key_id,
                key,
                token_uri,
            } => {
                let jwt = signed_jwt(email, key_id.as_deref(), key, SystemTime::now())?;
                let body = form(&[
                    ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                    ("assertion", &jwt),
                ]);
                let answer = fetch::exchange(client, Method::POST, token_uri, &form_type, body);
                (token_uri.as_str(), answer.await?)
            }
            Source::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
            } => {
                let body = form(&[
                    ("grant_type", "refresh_token"),
                    ("client_id", client_id),
                    ("client_secret", client_secret),
                    ("refresh_token", refresh_token),
                ]);
                let answer = fetch::exchange(client, Method::POST, token_uri, &form_type, body);
                (token_uri.as_str(), answer.await?)
            }
            Source::Metadata { base } => {
                let uri =
                    format!("{base}/computeMetadata/v1/instance/service-accounts/default/token");
                let answer = fetch::exchange(
                    client,
                    Method::GET,
                    &uri,
                    &[("metadata-flavor", "Google")],
                    Bytes::new(),
                )
                .await?;
                return token_answer(&uri, answer);
            }
            Source::External(external) => return external.fetch(client).await,
        };
        token_answer(uri, answer)
    }
}

impl fmt::Debug for GoogleAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GoogleAuth")
            .field("source", &self.describe)
            .finish_non_exhaustive()
    }
}

/// `pairs` as an `application/x-www-form-urlencoded` body.
fn form_body(pairs: &[(&str, &str)]) -> Bytes {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    Bytes::from(s.finish())
}

/// Read a token endpoint's answer.
fn token_answer(
    uri: &str,
    (status, body): (StatusCode, Bytes),
) -> Result<(String, Duration), String> {
    let uri = fetch::Shown(uri);
    if !status.is_success() {
        // OAuth errors name the problem in `error` / `error_description`.
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        return Err(format!(
            "{uri}: {status} {} {}",
            v["error"].as_str().unwrap_or(""),
            v["error_description"].as_str().unwrap_or("")
        ));
    }
    let answer: TokenAnswer =
        serde_json::from_slice(&body).map_err(|e| format!("{uri}: not a token answer: {e}"))?;
    let lifetime = Duration::from_secs(answer.expires_in.unwrap_or(3600).clamp(1, 86_400));
    Ok((answer.access_token, lifetime))
}

/// The audience of a service account's assertion: "When making an access
/// token request this value is always `https://oauth2.googleapis.com/token`"
/// (Google's "Using OAuth 2.0 for Server to Server Applications"), the
/// file's `token_uri` being only where the request goes: one set to a
/// Private Service Connect endpoint and signed as the audience gets
/// "Invalid JWT: Failed audience check" (googleapis/java-storage#1156,
/// google-api-dotnet-client#3025), and Google's libraries sign this
/// constant (google-auth-library-java#833, google-api-dotnet-client#3027,
/// google-auth-python's `_GOOGLE_OAUTH2_TOKEN_ENDPOINT`).
const TOKEN_AUDIENCE: &str = "https://oauth2.googleapis.com/token";

/// A service account's assertion: RS256 over
/// `{"alg":"RS256","typ":"JWT","kid":…}.{"iss","scope","aud","iat","exp"}`,
/// `aud` [`TOKEN_AUDIENCE`].
fn signed_jwt(
    email: &str,
    key_id: Option<&str>,
    key: &RsaKeyPair,
    now: SystemTime,
) -> Result<String, String> {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let iat = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let mut header = serde_json::json!({"alg": "RS256", "typ": "JWT"});
    if let Some(kid) = key_id {
        header["kid"] = kid.into();
    }
    let claims = serde_json::json!({
        "iss": email,
        "scope": SCOPE,
        "aud": TOKEN_AUDIENCE,
        "iat": iat,
        "exp": iat + 3600,
    });
    let signed = format!(
        "{}.{}",
        b64.encode(header.to_string()),
        b64.encode(claims.to_string())
    );
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &SystemRandom::new(),
        signed.as_bytes(),
        &mut signature,
    )
    .map_err(|_| "signing the service account's JWT failed".to_string())?;
    Ok(format!("{signed}.{}", b64.encode(signature)))
}

/// A quota project as `x-goog-user-project`'s value (`None` if it cannot be
/// one).
fn quota_header(project: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(project.trim()).ok()
}

/// The DER bytes of the first PEM block in `pem`.
fn pem_der(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    base64::engine::general_purpose::STANDARD.decode(body).ok()
}

/// Whether a Vertex request already carries a credential of the client's.
pub fn client_has_credential(parts: &http::request::Parts) -> bool {
    parts.headers.contains_key(http::header::AUTHORIZATION)
        || parts.headers.contains_key("x-goog-api-key")
        || parts
            .uri
            .query()
            .is_some_and(|q| q.split('&').any(|p| p.starts_with("key=")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::own::UNBOUND;

    #[tokio::test]
    async fn while_a_refresh_hangs_requests_get_the_still_valid_token_at_once() {
        // A metadata server that takes the connection and never answers.
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", silent.local_addr().unwrap());
        let auth = Arc::new(GoogleAuth::new(
            Source::Metadata { base },
            "a silent metadata server".into(),
        ));
        // A token fetched 50 minutes ago, valid one more minute: inside
        // the refresh margin.
        let now = SystemTime::now();
        let expires = now + Duration::from_secs(60);
        let seeded = HeaderValue::from_static("Bearer ya29.seeded");
        let fetched = now - Duration::from_secs(3000);
        auth.token.seed(seeded.clone(), fetched, Some(expires));
        let config = crate::Config::for_tests("http://127.0.0.1:9");
        let client = crate::upstream::build_client(&config).unwrap();
        let none = Resolve::default();
        let three = async {
            tokio::join!(
                auth.authorization(&client, UNBOUND, &none),
                auth.authorization(&client, UNBOUND, &none),
                auth.authorization(&client, UNBOUND, &none)
            )
        };
        // Far less than the fetch's own timeout.
        let within = fetch::TIMEOUT / 2;
        let (a, b, c) = tokio::time::timeout(within, three)
            .await
            .expect("callers waited for the refresh");
        for token in [a, b, c] {
            assert_eq!(token.as_ref(), Some(&seeded));
        }
    }
}
