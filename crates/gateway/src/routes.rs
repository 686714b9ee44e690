//! Which handler serves a request, and for proxied requests which provider
//! and dialect.
//!
//! Dialect routes (read, checked, recorded):
//! - `POST /v1/messages` → Anthropic Messages;
//! - `POST /v1/chat/completions` → OpenAI Chat Completions;
//! - `POST /v1/responses` → OpenAI Responses, and its compaction
//!   endpoint `POST /v1/responses/compact` (a Responses body; the outputs
//!   in the history it compacts go nowhere else);
//! - `POST …/backend-api/codex/responses` (and `…/responses/compact`) →
//!   OpenAI Responses at the ChatGPT backend (`chatgpt_upstream`: the
//!   Codex CLI signed in with ChatGPT); served by hyper's path, whose
//!   client pools by host;
//! - `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent`
//!   (also under `/v1/` and `/v1alpha/`) → Gemini, model from the path.
//!
//! Cloud routes (Azure OpenAI, Vertex AI, Bedrock; issue 18) are
//! [`cloud`], tried first.
//!
//! Gateway routes: `GET /healthz`, `GET /metrics`, and the admin router
//! (`/api/*`, `/dashboard*`, `GET /`).
//!
//! **Pass-through rule** for every other path (e.g. `/v1/models`, which
//! OpenAI and Anthropic both serve), first match wins:
//! 1. Gemini when the path starts with `/v1beta/` or `/v1alpha/`, or an
//!    `x-goog-api-key` header is present;
//! 2. Anthropic when an `anthropic-version` or `x-api-key` header is present,
//!    or the path starts with `/v1/messages` (e.g. `/v1/messages/count_tokens`);
//! 3. OpenAI otherwise.
//!
//! A pass-through path under `/backend-api/` (the ChatGPT backend's
//! `codex/models`) goes to `chatgpt_upstream`.
//!
//! Pass-through requests are forwarded and counted but not parsed.

pub(crate) mod cloud;

use http::{HeaderMap, Method};
use toolwarden_wire::Dialect;

use crate::config::{Upstream, Upstreams};

/// A provider API the gateway forwards to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// api.openai.com
    OpenAi,
    /// api.anthropic.com
    Anthropic,
    /// generativelanguage.googleapis.com
    Gemini,
    /// Azure OpenAI (`azure_upstream`).
    Azure,
    /// Google Vertex AI.
    Vertex,
    /// AWS Bedrock Runtime.
    Bedrock,
}

/// What serves a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// `GET /healthz`
    Healthz,
    /// `GET /metrics`
    Metrics,
    /// `/api/*`, `/dashboard*`, `GET /`: the admin router.
    Admin,
    /// Forwarded to a provider.
    Proxy(ProxyRoute),
}

/// A proxied request's provider and, on dialect routes, its dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProxyRoute {
    /// Where it goes.
    pub provider: Provider,
    /// `None` for pass-through paths.
    pub dialect: Option<Dialect>,
    /// Gemini: the model named in the path.
    pub model: Option<String>,
    /// Gemini `:streamGenerateContent`.
    pub gemini_stream: bool,
    /// The ChatGPT backend's Responses path: goes to `chatgpt_upstream`.
    pub chatgpt: bool,
    /// Azure, Vertex and Bedrock routes: the cloud target and the prefix
    /// stripped before forwarding.
    pub cloud: Option<cloud::CloudRoute>,
    /// The API version the client's path lacks, added before forwarding:
    /// `/v1` for `POST /messages`, where the AI SDK's Anthropic provider
    /// posts when `ANTHROPIC_BASE_URL` names the gateway without `/v1`
    /// (as Claude Code and the Anthropic SDKs want it).
    pub version_prefix: Option<&'static str>,
}

// === impl Provider ===

impl Provider {
    /// All providers, in [`Provider::index`] order.
    pub const ALL: [Provider; 6] = [
        Provider::OpenAi,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Azure,
        Provider::Vertex,
        Provider::Bedrock,
    ];

    /// `openai`, `anthropic`, `gemini`, `azure`, `vertex` or `bedrock`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::Azure => "azure",
            Provider::Vertex => "vertex",
            Provider::Bedrock => "bedrock",
        }
    }

    /// A dense index (0..6).
    pub fn index(self) -> usize {
        match self {
            Provider::OpenAi => 0,
            Provider::Anthropic => 1,
            Provider::Gemini => 2,
            Provider::Azure => 3,
            Provider::Vertex => 4,
            Provider::Bedrock => 5,
        }
    }

    /// This provider's upstream; `None` for the cloud providers, whose
    /// upstream depends on the request (`CloudConfig::upstream`).
    pub fn upstream(self, upstreams: &Upstreams) -> Option<&Upstream> {
        match self {
            Provider::OpenAi => Some(&upstreams.openai),
            Provider::Anthropic => Some(&upstreams.anthropic),
            Provider::Gemini => Some(&upstreams.gemini),
            Provider::Azure | Provider::Vertex | Provider::Bedrock => None,
        }
    }
}

// === impl Route ===

impl Route {
    /// Classify a request by method, path, query and headers.
    pub(crate) fn classify(
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Route {
        if *method == Method::GET {
            match path {
                "/healthz" => return Route::Healthz,
                "/metrics" => return Route::Metrics,
                "/" => return Route::Admin,
                _ => {}
            }
        }
        if path.starts_with("/api/") || path == "/api" || path.starts_with("/dashboard") {
            return Route::Admin;
        }
        if let Some(route) = cloud::classify(method, path) {
            return Route::Proxy(route);
        }
        if *method == Method::POST
            && let Some(route) =
                ProxyRoute::dialect_post(path).or_else(|| ProxyRoute::chatgpt(path))
        {
            return Route::Proxy(route);
        }
        if *method == Method::POST
            && path == "/messages"
            && headers.contains_key("anthropic-version")
        {
            return Route::Proxy(ProxyRoute {
                version_prefix: Some("/v1"),
                ..ProxyRoute::dialect_post("/v1/messages").expect("the Anthropic route")
            });
        }
        Route::Proxy(ProxyRoute {
            provider: pass_through_provider(path, query, headers),
            dialect: None,
            model: None,
            gemini_stream: false,
            // The ChatGPT backend's other paths (`…/codex/models`, …): its
            // upstream too.
            chatgpt: path.starts_with("/backend-api/"),
            cloud: None,
            version_prefix: None,
        })
    }
}

// === impl ProxyRoute ===

impl ProxyRoute {
    /// The dialect route a `POST` to `path` (no query) takes, if any.
    pub(crate) fn dialect_post(path: &str) -> Option<ProxyRoute> {
        let (dialect, provider) = match path {
            "/v1/messages" => (Dialect::Anthropic, Provider::Anthropic),
            "/v1/chat/completions" => (Dialect::OpenAiChat, Provider::OpenAi),
            // The compaction endpoint takes a Responses body: the history
            // it compacts holds outputs no later request may resend.
            "/v1/responses" | "/v1/responses/compact" => {
                (Dialect::OpenAiResponses, Provider::OpenAi)
            }
            _ => return gemini_route(path),
        };
        Some(ProxyRoute {
            provider,
            dialect: Some(dialect),
            model: None,
            gemini_stream: false,
            chatgpt: false,
            cloud: None,
            version_prefix: None,
        })
    }

    /// The ChatGPT backend's Responses path (`…/backend-api/codex/responses`,
    /// the Codex CLI's `{chatgpt base}/responses`) or its compaction
    /// endpoint (`…/responses/compact`), if `path` is one.
    pub(crate) fn chatgpt(path: &str) -> Option<ProxyRoute> {
        (path.ends_with("/backend-api/codex/responses")
            || path.ends_with("/backend-api/codex/responses/compact"))
        .then_some(ProxyRoute {
            provider: Provider::OpenAi,
            dialect: Some(Dialect::OpenAiResponses),
            model: None,
            gemini_stream: false,
            chatgpt: true,
            cloud: None,
            version_prefix: None,
        })
    }

    /// `path_and_query` as the upstream takes it: without the route's
    /// `/azure`, `/vertex` or `/bedrock` prefix (`/azure` alone is the
    /// upstream's root `/`, and `/azure?x` is `/?x`), and with the API
    /// version the client's path lacks (`/messages` → `/v1/messages`).
    pub(crate) fn upstream_path_and_query<'p>(
        &self,
        path_and_query: &'p str,
    ) -> std::borrow::Cow<'p, str> {
        use std::borrow::Cow;
        if let Some(version) = self.version_prefix {
            return Cow::Owned(format!("{version}{path_and_query}"));
        }
        let n = self.cloud.as_ref().map_or(0, |c| c.prefix_len);
        match path_and_query.get(n..) {
            Some(rest) if rest.starts_with('/') => Cow::Borrowed(rest),
            Some("") => Cow::Borrowed("/"),
            Some(query) if query.starts_with('?') => Cow::Owned(format!("/{query}")),
            _ => Cow::Borrowed(path_and_query),
        }
    }

    /// Where this route's requests go; `None` for cloud routes
    /// (`CloudConfig::upstream`).
    pub(crate) fn upstream<'a>(&self, upstreams: &'a Upstreams) -> Option<&'a Upstream> {
        if self.chatgpt {
            Some(&upstreams.chatgpt)
        } else {
            self.provider.upstream(upstreams)
        }
    }

    /// The provider whose error envelope the client reads: a Vertex
    /// `rawPredict` client reads Anthropic's, a Vertex Chat Completions
    /// client (the OpenAI SDK) OpenAI's.
    pub(crate) fn envelope(&self) -> Provider {
        match (self.provider, self.dialect) {
            (Provider::Vertex, Some(Dialect::Anthropic)) => Provider::Anthropic,
            (Provider::Vertex, Some(Dialect::OpenAiChat)) => Provider::OpenAi,
            (provider, _) => provider,
        }
    }
}

/// The Gemini API's `…/models/{m}:generateContent` (and
/// `:streamGenerateContent`). Not a `…/projects/…` or `…/publishers/…` path:
/// those are Vertex AI's (express mode's for the latter; [`cloud::classify`],
/// which [`Route::classify`] tries first), and
/// the fast path (`h1::head`), which asks [`ProxyRoute::dialect_post`]
/// alone, must not send them to the Gemini API's upstream.
fn gemini_route(path: &str) -> Option<ProxyRoute> {
    let rest = ["/v1beta/", "/v1/", "/v1alpha/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))
        // Vertex AI's (`projects/…`, and express mode's `publishers/…`).
        .filter(|rest| !rest.starts_with("projects/") && !rest.starts_with("publishers/"))?;
    let (resource, method) = rest.rsplit_once(':')?;
    let gemini_stream = match method {
        "generateContent" => false,
        "streamGenerateContent" => true,
        _ => return None,
    };
    let model = resource.rsplit('/').next().filter(|m| !m.is_empty())?;
    Some(ProxyRoute {
        provider: Provider::Gemini,
        dialect: Some(Dialect::Gemini),
        model: Some(model.to_string()),
        gemini_stream,
        chatgpt: false,
        cloud: None,
        version_prefix: None,
    })
}

/// Gemini's API key, by header or as the `key` query parameter (the
/// other providers take theirs in headers): a request carrying it is
/// Gemini's, whatever its path, so the key never reaches another provider.
fn pass_through_provider(path: &str, query: Option<&str>, headers: &HeaderMap) -> Provider {
    let gemini_key = headers.contains_key("x-goog-api-key")
        || query.is_some_and(|q| q.split('&').any(|p| p.starts_with("key=")));
    if path.starts_with("/v1beta/") || path.starts_with("/v1alpha/") || gemini_key {
        Provider::Gemini
    } else if headers.contains_key("anthropic-version")
        || headers.contains_key("x-api-key")
        || path.starts_with("/v1/messages")
    {
        Provider::Anthropic
    } else {
        Provider::OpenAi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(method: Method, path: &str, headers: &[(&str, &str)]) -> Route {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        let (path, query) = path
            .split_once('?')
            .map_or((path, None), |(p, q)| (p, Some(q)));
        Route::classify(&method, path, query, &map)
    }

    fn proxy(route: Route) -> ProxyRoute {
        match route {
            Route::Proxy(p) => p,
            other => panic!("expected a proxy route, got {other:?}"),
        }
    }

    /// A Gemini API key in the query (`?key=`) makes a shared path
    /// Gemini's, as `x-goog-api-key` does: it once sent `GET
    /// /v1/models?key=AIza…` to OpenAI, key and all.
    #[test]
    fn a_gemini_key_in_the_query_is_geminis() {
        for path in ["/v1/models?key=AIza-k", "/v1/models?pageSize=5&key=AIza-k"] {
            let r = proxy(classify(Method::GET, path, &[]));
            assert_eq!(r.provider, Provider::Gemini, "{path}");
        }
        for path in ["/v1/models", "/v1/models?monkey=1", "/v1/models?a=key=1"] {
            let r = proxy(classify(Method::GET, path, &[]));
            assert_eq!(r.provider, Provider::OpenAi, "{path}");
        }
    }

    /// Every path a cloud route takes is not a `dialect_post` route: the
    /// fast path, which asks `dialect_post` alone, leaves them to hyper's
    /// path and its cloud upstreams (a Vertex Gemini path once went to the
    /// Gemini API's upstream with the client's Google token).
    #[test]
    fn cloud_paths_are_never_dialect_posts() {
        for path in [
            "/v1/projects/p/locations/us-central1/publishers/google/models/m:generateContent",
            "/v1/projects/p/locations/us-central1/publishers/google/models/m:streamGenerateContent",
            "/v1beta1/projects/p/locations/global/publishers/google/models/m:generateContent",
            "/v1/projects/p/locations/us-east5/publishers/anthropic/models/c:rawPredict",
            "/vertex/v1/projects/p/locations/l/publishers/google/models/m:generateContent",
            "/v1/publishers/google/models/m:generateContent",
            "/v1/publishers/google/models/m:streamGenerateContent",
            "/v1beta1/publishers/google/models/m:generateContent",
            "/openai/deployments/d/chat/completions",
            "/azure/openai/v1/responses",
            "/model/anthropic.claude-v2/invoke",
            "/bedrock/model/m/converse",
        ] {
            let cloud = cloud::classify(&Method::POST, path);
            assert!(
                cloud.as_ref().is_some_and(|r| r.cloud.is_some()),
                "{path}: a cloud route"
            );
            assert!(
                ProxyRoute::dialect_post(path).is_none(),
                "{path}: not a dialect_post route"
            );
            let r = proxy(classify(Method::POST, path, &[]));
            assert!(r.cloud.is_some(), "{path}");
        }
        let gemini = ProxyRoute::dialect_post("/v1/models/gemini-2.5-pro:generateContent");
        assert_eq!(gemini.map(|r| r.provider), Some(Provider::Gemini));
    }

    #[test]
    fn dialect_routes() {
        let r = proxy(classify(Method::POST, "/v1/messages", &[]));
        assert_eq!(
            (r.provider, r.dialect),
            (Provider::Anthropic, Some(Dialect::Anthropic))
        );
        let r = proxy(classify(Method::POST, "/v1/chat/completions", &[]));
        assert_eq!(r.dialect, Some(Dialect::OpenAiChat));
        let r = proxy(classify(Method::POST, "/v1/responses", &[]));
        assert_eq!(r.dialect, Some(Dialect::OpenAiResponses));
        let r = proxy(classify(
            Method::POST,
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            &[],
        ));
        assert_eq!(r.dialect, Some(Dialect::Gemini));
        assert_eq!(r.model.as_deref(), Some("gemini-2.5-flash"));
        assert!(r.gemini_stream);
        let r = proxy(classify(
            Method::POST,
            "/v1beta/models/gemini-pro:generateContent",
            &[],
        ));
        assert!(!r.gemini_stream);
    }

    #[test]
    fn overlapping_paths_follow_the_headers() {
        let r = proxy(classify(Method::GET, "/v1/models", &[]));
        assert_eq!((r.provider, r.dialect), (Provider::OpenAi, None));
        let r = proxy(classify(
            Method::GET,
            "/v1/models",
            &[("anthropic-version", "2023-06-01")],
        ));
        assert_eq!(r.provider, Provider::Anthropic);
        let r = proxy(classify(Method::GET, "/v1/models", &[("x-api-key", "k")]));
        assert_eq!(r.provider, Provider::Anthropic);
        let r = proxy(classify(
            Method::GET,
            "/v1/models",
            &[("x-goog-api-key", "k")],
        ));
        assert_eq!(r.provider, Provider::Gemini);
        let r = proxy(classify(Method::GET, "/v1beta/models", &[]));
        assert_eq!(r.provider, Provider::Gemini);
        let r = proxy(classify(Method::POST, "/v1/messages/count_tokens", &[]));
        assert_eq!((r.provider, r.dialect), (Provider::Anthropic, None));
        // The ChatGPT backend's Responses path is read too.
        let r = proxy(classify(Method::POST, "/backend-api/codex/responses", &[]));
        assert_eq!(
            (r.dialect, r.chatgpt),
            (Some(Dialect::OpenAiResponses), true)
        );
        // Its compaction endpoint, and the API's, are read as Responses
        // requests: the outputs in the history they compact are sent
        // nowhere else.
        let r = proxy(classify(
            Method::POST,
            "/backend-api/codex/responses/compact",
            &[],
        ));
        assert_eq!(
            (r.dialect, r.chatgpt),
            (Some(Dialect::OpenAiResponses), true)
        );
        let r = proxy(classify(Method::POST, "/v1/responses/compact", &[]));
        assert_eq!(
            (r.provider, r.dialect, r.chatgpt),
            (Provider::OpenAi, Some(Dialect::OpenAiResponses), false)
        );
        // The ChatGPT backend's other paths go to its upstream, unread.
        let r = proxy(classify(Method::GET, "/backend-api/codex/models", &[]));
        assert_eq!((r.dialect, r.chatgpt), (None, true));
        assert!(!proxy(classify(Method::GET, "/v1/backend-api/x", &[])).chatgpt);
        // GET on a dialect path is a pass-through, not a dialect request.
        let r = proxy(classify(Method::GET, "/v1/responses", &[]));
        assert_eq!(r.dialect, None);
    }

    #[test]
    fn gateway_routes() {
        assert_eq!(classify(Method::GET, "/healthz", &[]), Route::Healthz);
        assert_eq!(classify(Method::GET, "/metrics", &[]), Route::Metrics);
        assert_eq!(classify(Method::GET, "/api/stats", &[]), Route::Admin);
        assert_eq!(classify(Method::GET, "/", &[]), Route::Admin);
        assert_eq!(
            classify(Method::GET, "/dashboard/app.js", &[]),
            Route::Admin
        );
    }
}
