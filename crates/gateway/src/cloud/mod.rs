//! Cloud endpoints (issue 18): Azure OpenAI, Google Vertex AI and AWS
//! Bedrock Runtime, served by hyper's path ([`crate::proxy::handle`]).
//!
//! - [`routes`]: which cloud path a request takes (each also accepted under
//!   a `/azure`, `/vertex` or `/bedrock` prefix, stripped before
//!   forwarding), its dialect and the model named in the path;
//! - [`CloudConfig`]: the three upstreams, validated once in
//!   [`crate::config`]; [`CloudConfig::upstream`] picks a request's (Vertex's
//!   default comes from the path's location);
//! - [`aws`]: the AWS credentials (`aws-config`'s default chain) and the
//!   SigV4 re-signing of every forwarded Bedrock request;
//! - [`google`]: Google application default credentials, whose token the
//!   gateway adds to Vertex requests that come without one;
//! - [`fetch`]: the Google credential providers' one HTTP exchange;
//! - [`frames`]: Bedrock event streams relayed frame by frame, so that a
//!   cut one ends with an exception frame.

pub mod aws;
pub mod fetch;
pub mod frames;
pub mod google;
pub mod routes;

use std::{borrow::Cow, sync::Arc};

pub use routes::{CloudRoute, CloudTarget};

use crate::{
    Config,
    errors::{ProxyError, ProxyErrorKind},
    proxy::upstream::HttpClient,
    routes::{Provider, ProxyRoute},
    upstream_url::Upstream,
};

/// The cloud upstreams, validated.
#[derive(Debug, Clone, Default)]
pub struct CloudConfig {
    /// `azure_upstream`: an Azure OpenAI resource (no default).
    pub azure: Option<Upstream>,
    /// `vertex_upstream`: `None` = `https://{location}-aiplatform.googleapis.com`
    /// from the request's path.
    pub vertex: Option<Upstream>,
    /// `bedrock_upstream`, else `https://bedrock-runtime.{region}.amazonaws.com`
    /// when a region is known; `None` = not configured.
    pub bedrock: Option<Upstream>,
    /// `bedrock_region` or `AWS_REGION`: the SigV4 signing region.
    pub bedrock_region: Option<String>,
    /// AWS credentials for re-signing Bedrock requests (`None`, or none
    /// found in the chain: forwarded with the client's signature).
    pub aws_credentials: Option<aws::AwsCredentials>,
    /// Google application default credentials: their token is added to
    /// Vertex requests that carry no credential (`None`: none found).
    pub google: Option<Arc<google::GoogleAuth>>,
}

/// The cloud settings as read (see [`crate::RawConfig`]).
#[derive(Debug, Default)]
pub struct RawCloud {
    /// `azure_upstream`.
    pub azure_upstream: Option<String>,
    /// `vertex_upstream`.
    pub vertex_upstream: Option<String>,
    /// `bedrock_upstream`.
    pub bedrock_upstream: Option<String>,
    /// `bedrock_region`.
    pub bedrock_region: Option<String>,
    /// `AWS_*` variables.
    pub aws_env: aws::AwsEnv,
}

// === impl CloudConfig ===

impl CloudConfig {
    /// Validate the cloud settings; problems are pushed to `problems`.
    pub fn validate(raw: RawCloud, problems: &mut Vec<String>) -> CloudConfig {
        let mut upstream = |name: &str, value: Option<String>| {
            let value = value?;
            Upstream::parse(&value)
                .map_err(|e| problems.push(format!("{name} {value:?}: {e}")))
                .ok()
        };
        let azure = upstream("azure_upstream", raw.azure_upstream);
        let vertex = upstream("vertex_upstream", raw.vertex_upstream);
        let explicit_bedrock = raw.bedrock_upstream.is_some();
        let bedrock_upstream = upstream("bedrock_upstream", raw.bedrock_upstream);
        let bedrock_region = raw
            .bedrock_region
            .filter(|r| !r.trim().is_empty())
            .or_else(|| raw.aws_env.region().map(String::from))
            .map(|r| r.trim().to_string());
        if let Some(region) = &bedrock_region {
            let valid = region
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !valid {
                problems.push(format!("bedrock_region {region:?}: not an AWS region name"));
            }
        }
        let bedrock = match (explicit_bedrock, &bedrock_region) {
            (true, _) => bedrock_upstream,
            (false, Some(region)) => bedrock_default(region).ok(),
            (false, None) => None,
        };
        let aws_credentials = raw
            .aws_env
            .credentials(bedrock_region.as_deref())
            .map_err(|e| problems.push(format!("AWS credentials: {e}")))
            .ok();
        let google = google::GoogleAuth::from_env(&raw.aws_env)
            .map_err(|e| problems.push(format!("Google credentials: {e}")))
            .ok()
            .flatten()
            .map(Arc::new);
        CloudConfig {
            azure,
            vertex,
            bedrock,
            bedrock_region,
            aws_credentials,
            google,
        }
    }

    /// Where a cloud request goes, or the error naming the setting to give.
    pub fn upstream(&self, target: &CloudTarget) -> Result<Cow<'_, Upstream>, ProxyError> {
        let (found, flag, host) = match target {
            CloudTarget::Azure => (self.azure.as_ref(), "--azure-upstream", "Azure OpenAI"),
            CloudTarget::Vertex { location } => match &self.vertex {
                Some(up) => (Some(up), "--vertex-upstream", "Vertex AI"),
                None => {
                    return vertex_default(location)
                        .map(Cow::Owned)
                        .map_err(|e| ProxyError::new(ProxyErrorKind::BadRequest, "Vertex AI", e));
                }
            },
            CloudTarget::Bedrock { .. } => (
                self.bedrock.as_ref(),
                "--bedrock-upstream or --bedrock-region (or AWS_REGION)",
                "Bedrock",
            ),
        };
        found.map(Cow::Borrowed).ok_or_else(|| {
            ProxyError::new(
                ProxyErrorKind::NotConfigured,
                host,
                format!("no {host} upstream is configured: start the gateway with {flag}"),
            )
        })
    }
}

/// A proxied request's upstream: the cloud one for cloud routes, else the
/// route's fixed one.
pub fn upstream_for<'a>(
    config: &'a Config,
    route: &ProxyRoute,
) -> Result<Cow<'a, Upstream>, ProxyError> {
    match &route.cloud {
        Some(cloud) => config.cloud.upstream(&cloud.target),
        None => route
            .upstream(&config.upstreams)
            .map(Cow::Borrowed)
            .ok_or_else(|| {
                ProxyError::new(
                    ProxyErrorKind::NotConfigured,
                    route.provider.as_str(),
                    "no upstream for this route",
                )
            }),
    }
}

/// `path_and_query` without the route's `/azure`, `/vertex` or `/bedrock`
/// prefix.
pub fn strip_prefix<'p>(route: &ProxyRoute, path_and_query: &'p str) -> &'p str {
    let n = route.cloud.as_ref().map_or(0, |c| c.prefix_len);
    match path_and_query.get(n..) {
        Some(rest) if rest.starts_with('/') => rest,
        Some(rest) if rest.is_empty() || rest.starts_with('?') => {
            // `/azure` alone or `/azure?x`: the upstream's root.
            if rest.is_empty() { "/" } else { path_and_query }
        }
        _ => path_and_query,
    }
}

/// The gateway's own credentials on a cloud request going upstream
/// (`parts`, URI already the upstream's; `body` as sent):
/// - Bedrock, with AWS credentials: the client's SigV4 signature replaced
///   with the gateway's. A request that cannot be signed (or whose
///   credentials cannot be had now) goes as it came, logged without its
///   headers;
/// - Vertex, with Google credentials, when the client sent none: the
///   gateway's `Authorization: Bearer` token.
///
/// Other routes, or no credentials: left as they are.
pub async fn authenticate(
    config: &Config,
    route: &ProxyRoute,
    parts: &mut http::request::Parts,
    body: &[u8],
    client: &HttpClient,
) {
    match route.provider {
        Provider::Bedrock => {
            let Some(credentials) = &config.cloud.aws_credentials else {
                return;
            };
            let region = config
                .cloud
                .bedrock_region
                .clone()
                .or_else(|| aws::client_region(&parts.headers))
                .unwrap_or_else(|| aws::FALLBACK_REGION.to_string());
            let signed = match credentials.current().await {
                Ok(current) => {
                    aws::resign(parts, body, &current, &region, std::time::SystemTime::now())
                }
                // None configured: the client's own signature goes on.
                Err(e @ aws::chain::Unavailable::NotFound(_)) => {
                    tracing::debug!(error = %e, "no AWS credentials: a Bedrock request is forwarded as it came");
                    return;
                }
                Err(e) => Err(format!("{} ({})", e, credentials.source())),
            };
            if let Err(e) = signed {
                tracing::warn!(error = %e, "cannot re-sign a Bedrock request: forwarded as it came");
            }
        }
        Provider::Vertex => {
            let Some(auth) = &config.cloud.google else {
                return;
            };
            if google::client_has_credential(parts) {
                return;
            }
            if let Some(value) = auth.authorization(client).await {
                parts.headers.insert(http::header::AUTHORIZATION, value);
            }
        }
        _ => {}
    }
}

/// Vertex AI's endpoint for a location: `global` →
/// `https://aiplatform.googleapis.com`, else
/// `https://{location}-aiplatform.googleapis.com`.
pub fn vertex_default(location: &str) -> Result<Upstream, String> {
    if location == "global" {
        return Upstream::parse("https://aiplatform.googleapis.com");
    }
    let valid = !location.is_empty()
        && location
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !valid {
        return Err(format!("{location:?} is not a Vertex AI location"));
    }
    Upstream::parse(&format!("https://{location}-aiplatform.googleapis.com"))
}

/// Bedrock Runtime's endpoint for a region.
pub fn bedrock_default(region: &str) -> Result<Upstream, String> {
    Upstream::parse(&format!("https://bedrock-runtime.{region}.amazonaws.com"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_endpoint_from_the_location() {
        assert_eq!(
            vertex_default("global").unwrap().to_string(),
            "https://aiplatform.googleapis.com"
        );
        assert_eq!(
            vertex_default("us-east5").unwrap().to_string(),
            "https://us-east5-aiplatform.googleapis.com"
        );
        assert!(vertex_default("evil.com/x").is_err());
        assert!(vertex_default("").is_err());
    }

    #[test]
    fn unconfigured_upstreams_name_the_flag() {
        let cloud = CloudConfig::default();
        let err = cloud.upstream(&CloudTarget::Azure).unwrap_err();
        assert!(err.to_string().contains("--azure-upstream"), "{err}");
        let err = cloud
            .upstream(&CloudTarget::Bedrock { stream: false })
            .unwrap_err();
        assert!(err.to_string().contains("--bedrock-region"), "{err}");
        let up = cloud
            .upstream(&CloudTarget::Vertex {
                location: "europe-west1".into(),
            })
            .unwrap();
        assert_eq!(up.host(), "europe-west1-aiplatform.googleapis.com");
    }
}
