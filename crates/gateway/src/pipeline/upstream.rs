//! Which upstream a proxied request goes to: the route's fixed one, or a
//! cloud route's ([`CloudConfig::upstream`]). Both HTTP paths and the
//! WebSocket proxy send to it, and the request's records name it
//! ([`super::request_base`]: its span's `server.address`).

use std::borrow::Cow;

use crate::{
    Config,
    cloud::{CloudConfig, vertex_default},
    errors::{ProxyError, ProxyErrorKind},
    routes::{ProxyRoute, cloud::CloudTarget},
    upstream_url::Upstream,
};

// === impl CloudConfig ===

impl CloudConfig {
    /// Where a cloud request goes, or the error naming the setting to give.
    pub(crate) fn upstream(&self, target: &CloudTarget) -> Result<Cow<'_, Upstream>, ProxyError> {
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
                "--bedrock-upstream or --bedrock-region (or AWS_REGION, or a region in the AWS profile)",
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
pub(crate) fn upstream_for<'a>(
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
