//! The proxy's side of the cloud routes (issue 18): a cloud request's
//! upstream ([`upstream_for`], from the pipeline, which names it in the
//! request's records too), its path without the route prefix, and the
//! gateway's credentials on it ([`authenticate`]).
//! Request-time code: it reads the validated [`CloudConfig`], which
//! `crate::cloud` defines below `config`.

use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) use crate::pipeline::upstream::upstream_for;
use crate::{
    Config,
    cloud::{CloudConfig, aws, google},
    http_client::{HttpClient, UpstreamBody, whole},
    local::Withheld,
    routes::{Provider, ProxyRoute},
};

/// The gateway's own credentials on a cloud request going upstream
/// (`parts`, URI already the upstream's; `body` as sent):
/// - Bedrock, with AWS credentials: the client's SigV4 signature replaced
///   with the gateway's. A request that cannot be signed (or whose
///   credentials cannot be had now) goes as it came, logged without its
///   headers;
/// - Vertex, with Google credentials, when the client sent none: the
///   gateway's `Authorization: Bearer` token, and its quota project as
///   `x-goog-user-project` unless the client sent one.
///
/// Other routes, no credentials, or a request the gateway does not lend
/// them to (`lend`: a web page elsewhere sent it, or it lacks the
/// `lend_token`, see [`crate::local::lends_credentials`]): left as they
/// are.
///
/// `listening` is the gateway's bound address, which its credential
/// clients refuse to reach (`local::own`).
///
/// Whether the gateway signed the request (its answer then goes to
/// [`observe_answer`]).
pub(crate) async fn authenticate(
    config: &Config,
    listening: std::net::SocketAddr,
    route: &ProxyRoute,
    parts: &mut http::request::Parts,
    body: &[u8],
    client: &HttpClient,
    lend: Result<(), Withheld>,
) -> bool {
    let own = match route.provider {
        Provider::Bedrock => config.cloud.aws_credentials.is_some(),
        Provider::Vertex => config.cloud.google.is_some(),
        _ => false,
    };
    if !own {
        return false;
    }
    if let Err(why) = lend {
        // Logged at the 1st, 2nd, 4th, 8th … such request: a client
        // without the token sends it with every request.
        static WITHHELD: AtomicU64 = AtomicU64::new(0);
        let n = WITHHELD.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_power_of_two() {
            tracing::warn!(
                provider = route.provider.as_str(),
                withheld = n,
                "{}",
                why.reason()
            );
        }
        return false;
    }
    match route.provider {
        Provider::Bedrock => {
            let Some(credentials) = &config.cloud.aws_credentials else {
                return false;
            };
            // A Bedrock API key names no host: the client's own credential
            // goes on, as a Vertex client's token does.
            if aws::client_has_api_key(parts) {
                return false;
            }
            let region = signing_region(&config.cloud, parts);
            let signed = match credentials.current(&config.resolve, listening).await {
                Ok(current) => {
                    let time = config.cloud.aws_clock.now();
                    aws::resign(parts, body, &current, &region, time)
                }
                // None configured: the client's own signature goes on.
                Err(e @ aws::chain::Unavailable::NotFound(_)) => {
                    tracing::debug!(error = %e, "no AWS credentials: a Bedrock request is forwarded as it came");
                    return false;
                }
                Err(e) => Err(format!("{} ({})", e, credentials.source())),
            };
            match signed {
                Ok(()) => {
                    lent_openly(config);
                    return true;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot re-sign a Bedrock request: forwarded as it came");
                }
            }
        }
        Provider::Vertex => {
            let Some(auth) = &config.cloud.google else {
                return false;
            };
            if google::client_has_credential(parts) {
                return false;
            }
            let authorization = auth.authorization(client, listening, &config.resolve);
            if let Some(value) = authorization.await {
                parts.headers.insert(http::header::AUTHORIZATION, value);
                if let Some(project) = auth.quota_project()
                    && !parts.headers.contains_key(google::USER_PROJECT)
                {
                    parts.headers.insert(google::USER_PROJECT, project.clone());
                }
                lent_openly(config);
            }
        }
        _ => {}
    }
    false
}

/// The upstream's answer to a request the gateway signed
/// ([`authenticate`]): a refusal for the signature's time corrects the
/// clock later requests are signed with ([`aws::skew`]). Whether it did:
/// the refused request is then sent again ([`SignedHead::sign_again`]).
pub(crate) fn observe_answer(
    config: &Config,
    status: http::StatusCode,
    headers: &http::HeaderMap,
) -> bool {
    let correction = config
        .cloud
        .aws_clock
        .observe(status, headers, std::time::SystemTime::now());
    matches!(correction, aws::skew::Correction::Corrected(_))
}

/// A request the gateway signed ([`authenticate`]): its head and body
/// (`Bytes`, shared), kept so that it can be sent again once the clock is corrected: a
/// refusal for the signature's time means AWS did not run it, and the AWS
/// SDKs retry such an error once they have corrected their clock
/// (`CLOCK_SKEW_ERROR_CODES` in the JavaScript SDK). Kept only for signed
/// requests (a header map's copy each).
pub(crate) struct SignedHead {
    method: http::Method,
    uri: http::Uri,
    headers: http::HeaderMap,
    body: bytes::Bytes,
}

// === impl SignedHead ===

impl SignedHead {
    pub(crate) fn of(parts: &http::request::Parts, body: bytes::Bytes) -> Self {
        Self {
            method: parts.method.clone(),
            uri: parts.uri.clone(),
            headers: parts.headers.clone(),
            body,
        }
    }

    /// The request signed again, now with the corrected clock; `None`
    /// (logged) when the credentials are not to be had now or the head
    /// cannot be signed, and the refusal stands. `listening` as for
    /// [`authenticate`].
    pub(crate) async fn sign_again(
        self,
        config: &Config,
        listening: std::net::SocketAddr,
    ) -> Option<http::Request<UpstreamBody>> {
        let credentials = config.cloud.aws_credentials.as_ref()?;
        let (mut parts, ()) = http::Request::new(()).into_parts();
        parts.method = self.method;
        parts.uri = self.uri;
        parts.version = http::Version::HTTP_11;
        parts.headers = self.headers;
        let region = signing_region(&config.cloud, &parts);
        let signed = match credentials.current(&config.resolve, listening).await {
            Ok(current) => aws::resign(
                &mut parts,
                &self.body,
                &current,
                &region,
                config.cloud.aws_clock.now(),
            ),
            Err(e) => Err(e.to_string()),
        };
        match signed {
            Ok(()) => Some(http::Request::from_parts(parts, whole(self.body))),
            Err(e) => {
                tracing::warn!(error = %e, "cannot sign a Bedrock request again after correcting the clock: its refusal is the answer");
                None
            }
        }
    }
}

/// Warns once per process when the gateway lends its credentials while
/// listening beyond loopback without `lend_token`: whoever reaches it is
/// lent them.
fn lent_openly(config: &Config) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    if config.is_loopback() || config.cloud.lend_token.is_some() {
        return;
    }
    WARNED.call_once(|| {
        tracing::warn!(
            listen = %config.listen,
            "the gateway lent its cloud credentials to a request while listening beyond \
             loopback without lend_token: any client that reaches it is lent them; set \
             TOOLWARDEN_LEND_TOKEN and send it as x-toolwarden-lend-token"
        );
    });
}

/// The region a Bedrock request is signed for: `bedrock_region`, else the
/// one in the upstream's `bedrock-runtime.<region>.amazonaws.com` host,
/// else the client's signature's, else [`aws::FALLBACK_REGION`].
fn signing_region(cloud: &CloudConfig, parts: &http::request::Parts) -> String {
    cloud
        .bedrock_region
        .clone()
        .or_else(|| {
            let host = parts.uri.host()?;
            aws::host_region(host).map(String::from)
        })
        .or_else(|| aws::client_region(&parts.headers))
        .unwrap_or_else(|| aws::FALLBACK_REGION.to_string())
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::*;
    use crate::routes::cloud::{CloudTarget, classify};
    use crate::upstream_url::Upstream;

    #[test]
    fn a_prefix_alone_with_a_query_leaves_the_root_and_the_query() {
        for prefix in ["/azure", "/bedrock", "/vertex"] {
            let route = classify(&Method::GET, prefix).expect("a cloud route");
            let stripped = |pq: &str| route.upstream_path_and_query(pq).to_string();
            assert_eq!(stripped(&format!("{prefix}?x=1")), "/?x=1");
            assert_eq!(stripped(prefix), "/");
            assert_eq!(stripped(&format!("{prefix}/a?x=1")), "/a?x=1");
        }
    }

    #[tokio::test]
    async fn with_no_region_set_a_request_is_signed_for_the_bedrock_upstreams_region() {
        let mut config = Config::for_tests("http://127.0.0.1:9");
        assert_eq!(config.cloud.bedrock_region, None);
        config.cloud.bedrock =
            Some(Upstream::parse("https://bedrock-runtime-fips.eu-west-3.amazonaws.com").unwrap());
        config.cloud.aws_credentials = Some(aws::AwsCredentials::new(
            "AKIDEXAMPLE",
            "secret",
            None,
            "test",
        ));
        let path = "/model/anthropic.claude-x/invoke";
        let route = classify(&Method::POST, path).expect("a Bedrock route");
        let target = &route.cloud.as_ref().unwrap().target;
        let uri = config
            .cloud
            .upstream(target)
            .unwrap()
            .uri_for(path)
            .unwrap();
        let mut parts = http::Request::post(uri).body(()).unwrap().into_parts().0;
        let client = crate::upstream::build_client(&config).unwrap();
        let listening = config.listen;
        authenticate(
            &config,
            listening,
            &route,
            &mut parts,
            b"{}",
            &client,
            Ok(()),
        )
        .await;
        let auth = parts.headers["authorization"].to_str().unwrap();
        assert!(auth.contains("/eu-west-3/bedrock/aws4_request"), "{auth}");
        // Not lent (a web page elsewhere sent it): not signed.
        let mut parts = http::Request::post(parts.uri.clone())
            .header("authorization", "AWS4-HMAC-SHA256 the-clients")
            .body(())
            .unwrap()
            .into_parts()
            .0;
        authenticate(
            &config,
            listening,
            &route,
            &mut parts,
            b"{}",
            &client,
            Err(Withheld::ForeignOrigin),
        )
        .await;
        assert_eq!(
            parts.headers["authorization"],
            "AWS4-HMAC-SHA256 the-clients"
        );
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
