//! AWS credentials and SigV4 re-signing of forwarded Bedrock requests.
//!
//! SigV4 signs the host, so a request a client signed for the gateway's
//! address cannot go on to Bedrock as it is: with credentials, the gateway
//! replaces the client's signature (`authorization`, `x-amz-date`,
//! `x-amz-security-token`, `x-amz-content-sha256`) with its own over every
//! header it forwards (the Anthropic SDK signs `accept-encoding`,
//! `x-stainless-*` and the rest) but those botocore leaves out:
//! `authorization`, `user-agent`, `x-amzn-trace-id`, `transfer-encoding`
//! (`aws-sigv4`'s list) and `expect` (a proxy on the way may take
//! `expect: 100-continue` off, which would void the signature), a signed
//! value's tabs sent as spaces (as AWS reads them: `tabs_as_spaces`),
//! and over the path as it was sent, encoded once more
//! for the canonical request (botocore's and AWS's rule, `aws-sigv4`'s
//! [`PercentEncodingMode::Double`]). Without credentials a request goes as
//! it came.
//!
//! Credentials come from `aws-config`'s default chain (`chain`), over
//! the environment read at start-up through the config's seam
//! ([`AwsEnv`]): environment keys, the profile (`AWS_PROFILE`, its static
//! keys, `role_arn` with `source_profile` or `credential_source`, SSO,
//! `credential_process`), web identity, the container credentials endpoint
//! and the EC2 instance metadata service. The last is asked only when
//! `AWS_EC2_METADATA_SERVICE_ENDPOINT` is set or the machine says it is an
//! EC2 instance (elsewhere it would only add its timeouts to each miss).
//! Nothing here logs a credential; the `Debug` of [`AwsCredentials`] shows
//! only its source.

pub(crate) mod chain;
mod client;
mod profile;

pub(crate) use chain::{Endpoint, Reach};
pub(crate) use profile::is_region_name;
pub mod skew;

use std::{collections::HashMap, fmt, sync::Arc, time::SystemTime};

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
    Chain(Arc<chain::Chain>),
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
                "HOME"
                    | "GOOGLE_APPLICATION_CREDENTIALS"
                    | "GOOGLE_CLOUD_QUOTA_PROJECT"
                    | "CLOUDSDK_CONFIG"
                    | "GCE_METADATA_HOST"
                    | super::google::ALLOW_EXECUTABLES_VAR
            )
            || super::google::SERVERLESS_VARS.contains(&name)
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

    /// A key variable as aws-config's environment provider takes it: an
    /// empty or blank value is none (`err_if_blank`), and the chain goes on.
    fn key(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|v| !v.trim().is_empty())
    }

    /// Without the environment's keys, what is wrong with the static keys
    /// of the profile the chain would read (`profile::static_keys_problem`:
    /// one without the other fails every load, an empty one is signed
    /// with as it is).
    pub fn profile_keys_problem(&self) -> Option<String> {
        if self.key("AWS_ACCESS_KEY_ID").is_some() {
            return None;
        }
        profile::static_keys_problem(&self.chain_vars())
    }

    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`.
    pub fn region(&self) -> Option<&str> {
        self.get("AWS_REGION")
            .or_else(|| self.get("AWS_DEFAULT_REGION"))
    }

    /// The `region` of the selected profile (`AWS_PROFILE`, else
    /// `default`) in `~/.aws/config` (or `AWS_CONFIG_FILE`) and
    /// `~/.aws/credentials`, where `aws configure` writes it: the AWS SDKs'
    /// region after `AWS_REGION`. An error for a profile file that cannot be
    /// read or parsed.
    pub fn profile_region(&self) -> Result<Option<String>, String> {
        profile::region(&self.chain_vars())
    }

    /// The variables `aws-config` is handed: `AWS_*` and `HOME`.
    fn chain_vars(&self) -> HashMap<String, String> {
        let mut env = self.vars.clone();
        env.retain(|name, _| name.starts_with("AWS_") || name == "HOME");
        env
    }

    /// The default chain over these variables (whether it holds any
    /// credentials is known only when first asked), or an error for a
    /// key pair the chain would not take whole: the environment's half
    /// given, or one of them empty or blank (no key to aws-config, which
    /// goes on without a word). The profile's keys are judged apart
    /// ([`AwsEnv::profile_keys_problem`]). `region` is STS's (the Bedrock
    /// signing region, else [`FALLBACK_REGION`]).
    pub fn credentials(&self, region: Option<&str>) -> Result<AwsCredentials, String> {
        let (id, secret) = (
            self.key("AWS_ACCESS_KEY_ID"),
            self.key("AWS_SECRET_ACCESS_KEY"),
        );
        if id.is_some() != secret.is_some() {
            let (set, unset) = if id.is_some() {
                ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
            } else {
                ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID")
            };
            let how = if self.vars.contains_key(unset) {
                "is empty or blank"
            } else {
                "is not set"
            };
            return Err(format!(
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be given together: {set} is \
                 set and {unset} {how}, which the AWS credential chain takes for no keys, going \
                 on to the profile, web identity, the container and the instance metadata \
                 without them"
            ));
        }
        let mut env = self.chain_vars();
        let imds_asked = self.get("AWS_EC2_METADATA_SERVICE_ENDPOINT").is_some()
            || self.get("AWS_EC2_METADATA_DISABLED").is_some()
            || on_ec2();
        if !imds_asked {
            env.insert("AWS_EC2_METADATA_DISABLED".into(), "true".into());
        }
        let region = region.unwrap_or(FALLBACK_REGION).to_string();
        Ok(AwsCredentials {
            kind: Kind::Chain(Arc::new(chain::Chain::new(env, region))),
            source: "the AWS default credential chain".into(),
        })
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

// === impl AwsCredentials ===

impl AwsCredentials {
    /// Credentials from their parts; `source` says where they came from.
    pub fn new(id: &str, secret: &str, token: Option<String>, source: &str) -> AwsCredentials {
        AwsCredentials {
            kind: Kind::Fixed(Credentials::new(id, secret, token, None, "toolwarden")),
            source: source.to_string(),
        }
    }

    /// Fixed credentials as they are (`None` for refreshing ones).
    pub fn fixed(&self) -> Option<&Credentials> {
        match &self.kind {
            Kind::Fixed(c) => Some(c),
            Kind::Chain(_) => None,
        }
    }

    /// The credentials to sign with now (loaded if they must be, with
    /// `resolve` applied to the chain's HTTP client, which refuses to
    /// reach `listen`, the gateway's own bound address).
    pub(crate) async fn current(
        &self,
        resolve: &crate::resolve::Resolve,
        listen: std::net::SocketAddr,
    ) -> Result<Credentials, chain::Unavailable> {
        match &self.kind {
            Kind::Fixed(c) => Ok(c.clone()),
            Kind::Chain(c) => c.current(resolve, listen).await,
        }
    }

    /// The endpoint URLs the chain's environment and profile set, by
    /// setting (the container endpoint's, STS's, SSO's, SSO OIDC's,
    /// IMDS's, and every service's where the chain's clients take it):
    /// checked at start against the gateway's own address. None for fixed
    /// credentials, which fetch nothing.
    pub(crate) fn endpoints(&self) -> Vec<Endpoint> {
        match &self.kind {
            Kind::Fixed(_) => Vec::new(),
            Kind::Chain(chain) => chain.endpoints(),
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

/// Whether a Bedrock request carries a Bedrock API key of the client's
/// (`Authorization: Bearer …`, the AWS SDKs' `AWS_BEARER_TOKEN_BEDROCK`):
/// unlike a signature it is not bound to the host, so it can go on as it
/// came.
pub fn client_has_api_key(parts: &http::request::Parts) -> bool {
    parts
        .headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.get(..7)
                .is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer "))
        })
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

/// The region of a Bedrock Runtime endpoint's host
/// (`bedrock-runtime.<region>.amazonaws.com`, or `bedrock-runtime-fips.…`;
/// `.amazonaws.com.cn` in China); `None` for any other host.
pub fn host_region(host: &str) -> Option<&str> {
    let rest = host
        .strip_prefix("bedrock-runtime.")
        .or_else(|| host.strip_prefix("bedrock-runtime-fips."))?;
    let (region, domain) = rest.split_once('.')?;
    let valid = !region.is_empty()
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    (valid && matches!(domain, "amazonaws.com" | "amazonaws.com.cn")).then_some(region)
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
    sign(parts, body, credentials, region, SERVICE, time)
}

/// [`resign`] for any AWS `service` (STS's `GetCallerIdentity` that a
/// Google federation signs: `super::google`).
pub(crate) fn sign(
    parts: &mut http::request::Parts,
    body: &[u8],
    credentials: &Credentials,
    region: &str,
    service: &str,
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
    let mut settings = SigningSettings::default();
    settings.percent_encoding_mode = PercentEncodingMode::Double;
    if let Some(excluded) = &mut settings.excluded_headers {
        excluded.push(header::EXPECT.as_str().into());
    }
    let excluded = settings.excluded_headers.as_deref().unwrap_or_default();
    for (name, value) in headers.iter_mut() {
        // One byte search per header; a copy only of a value with a tab.
        if memchr::memchr(b'\t', value.as_bytes()).is_some()
            && !excluded.iter().any(|e| e.as_ref() == name.as_str())
        {
            *value = tabs_as_spaces(value);
        }
    }
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
    let identity = credentials.clone().into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
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

/// `value` with each tab a space. AWS reads a tab in a signed header's
/// value as a space before its canonical request's `Trimall` (the .NET
/// SDK's signature of `x-amz-meta-test: my\tvalue`, which kept the tab,
/// was refused with 403 SignatureDoesNotMatch where the Java SDK's was
/// taken: aws/aws-sdk-net#1222; botocore signs `' '.join(value.split())`),
/// while aws-sigv4 trims and collapses spaces only: the value goes as AWS
/// reads it, so the two agree.
fn tabs_as_spaces(value: &HeaderValue) -> HeaderValue {
    let bytes: Vec<u8> = value
        .as_bytes()
        .iter()
        .map(|&b| if b == b'\t' { b' ' } else { b })
        .collect();
    // A tab and a space are equally valid in a value.
    let mut spaced = HeaderValue::from_bytes(&bytes).unwrap_or_else(|_| value.clone());
    spaced.set_sensitive(value.is_sensitive());
    spaced
}

#[cfg(test)]
mod tests;
