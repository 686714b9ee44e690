//! Cloud routes. Each is also accepted under its provider's prefix
//! (`/azure`, `/vertex`, `/bedrock`), stripped before forwarding.
//!
//! Read and recorded (`POST`):
//! - Azure OpenAI: `/openai/deployments/{d}/chat/completions`,
//!   `/openai/deployments/{d}/responses`, `/openai/v1/chat/completions`,
//!   `/openai/v1/responses` (and `/openai/v1/responses/compact`) — the
//!   OpenAI dialects; the deployment names the model when the body has none;
//! - Vertex AI: `/{v1|v1beta1}/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent`
//!   and `:streamGenerateContent` (Gemini), `…/publishers/anthropic/models/{m}:rawPredict`
//!   and `:streamRawPredict` (Anthropic Messages); model from the path;
//!   express mode's `/{v1|v1beta1}/publishers/…` too (no project: the
//!   global endpoint); `…/projects/{p}/locations/{l}/endpoints/{e}/chat/completions`
//!   (OpenAI Chat Completions, the model the body's);
//! - Bedrock Runtime: `/model/{id}/invoke` and `/invoke-with-response-stream`
//!   for Anthropic models (`anthropic.` in the id; Anthropic Messages
//!   bodies without `model` or `stream`, both in the path); the id's `:`
//!   raw or as `%3A`; `/model/{id}/converse` and `/converse-stream` (Bedrock
//!   Converse, any model). An `invoke` whose id does not name the model (an
//!   application inference profile's or a provisioned model's ARN) is read
//!   as Anthropic when its body says so ([`bedrock_invoke_by_body`]).
//!
//! Everything else under those shapes (other methods, other Bedrock
//! models' `invoke`) goes to the same upstream as a counted pass-through,
//! but Bedrock's bidirectional stream, which is answered 501
//! ([`unrelayed`]).

use http::Method;
use toolwarden_wire::Dialect;

use crate::routes::{Provider, ProxyRoute};

/// A cloud request's target and the prefix stripped from its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CloudRoute {
    /// Bytes of the `/azure`, `/vertex` or `/bedrock` prefix (0 without).
    pub prefix_len: usize,
    /// Which cloud and what its upstream needs.
    pub target: CloudTarget,
}

/// Which cloud a request goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CloudTarget {
    /// Azure OpenAI.
    Azure,
    /// Vertex AI, with the location named in the path (`global` when none).
    Vertex {
        /// `locations/{l}` of the path.
        location: String,
    },
    /// Bedrock Runtime.
    Bedrock {
        /// `invoke-with-response-stream` / `converse-stream`: an AWS
        /// event-stream answer.
        stream: bool,
    },
}

/// The cloud route a request takes, if its path is a cloud one.
pub(crate) fn classify(method: &Method, path: &str) -> Option<ProxyRoute> {
    let (prefixed, prefix_len, rest) = [("/azure", 0u8), ("/vertex", 1), ("/bedrock", 2)]
        .iter()
        .find_map(|(p, which)| {
            let rest = path.strip_prefix(p)?;
            (rest.is_empty() || rest.starts_with('/')).then_some((Some(*which), p.len(), rest))
        })
        .unwrap_or((None, 0, path));
    let post = *method == Method::POST;
    let route = match prefixed {
        Some(0) => azure(rest, post).or(Some(pass(Provider::Azure, CloudTarget::Azure))),
        Some(1) => vertex(rest, post)
            .or_else(|| vertex_live(rest))
            .or_else(|| Some(vertex_pass(rest))),
        Some(2) => bedrock(rest, post).or(Some(pass(
            Provider::Bedrock,
            CloudTarget::Bedrock { stream: false },
        ))),
        _ => azure(rest, post)
            .or_else(|| vertex(rest, post))
            .or_else(|| vertex_live(rest))
            .or_else(|| bedrock(rest, post)),
    };
    route.map(|mut r| {
        if let Some(cloud) = r.cloud.as_mut() {
            cloud.prefix_len = prefix_len;
        }
        r
    })
}

fn route(
    provider: Provider,
    target: CloudTarget,
    dialect: Option<Dialect>,
    model: Option<String>,
    gemini_stream: bool,
) -> ProxyRoute {
    ProxyRoute {
        provider,
        dialect,
        model,
        gemini_stream,
        chatgpt: false,
        cloud: Some(CloudRoute {
            prefix_len: 0,
            target,
        }),
        version_prefix: None,
    }
}

fn pass(provider: Provider, target: CloudTarget) -> ProxyRoute {
    route(provider, target, None, None, false)
}

/// Azure OpenAI paths; `None` when `path` is not under `/openai/`.
fn azure(path: &str, post: bool) -> Option<ProxyRoute> {
    let rest = path.strip_prefix("/openai/")?;
    let found = if !post {
        None
    } else if let Some(deployment) = rest.strip_prefix("deployments/") {
        let (name, op) = deployment.split_once('/')?;
        openai_dialect(op)
            .filter(|_| !name.is_empty())
            .map(|d| (d, Some(name)))
    } else {
        // `/openai/v1/responses`, and `/openai/responses?api-version=…`
        // (the `AzureOpenAI` clients do not put `responses` under a
        // deployment: the model is the body's).
        rest.strip_prefix("v1/")
            .and_then(openai_dialect)
            .or_else(|| (rest == "responses").then_some(Dialect::OpenAiResponses))
            .map(|d| (d, None))
    };
    Some(match found {
        Some((dialect, deployment)) => route(
            Provider::Azure,
            CloudTarget::Azure,
            Some(dialect),
            deployment.map(decode_path_segment),
            false,
        ),
        None => pass(Provider::Azure, CloudTarget::Azure),
    })
}

fn openai_dialect(op: &str) -> Option<Dialect> {
    match op {
        "chat/completions" => Some(Dialect::OpenAiChat),
        // Its compaction endpoint (the Codex CLI's for an Azure
        // provider) takes a Responses body too.
        "responses" | "responses/compact" => Some(Dialect::OpenAiResponses),
        _ => None,
    }
}

/// Vertex AI paths: `/{v1|v1beta1}/projects/…`, and express mode's
/// `/{v1|v1beta1}/publishers/…` (an API key and no project, served by the
/// global endpoint; google-genai's `Client(vertexai=True, api_key=…)`, and
/// its base model listing).
fn vertex(path: &str, post: bool) -> Option<ProxyRoute> {
    let rest = ["/v1/", "/v1beta1/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))?;
    let (location, express) = match rest.strip_prefix("projects/") {
        Some(after_projects) => (location_of(after_projects), false),
        None if rest.starts_with("publishers/") => ("global".to_string(), true),
        None => return None,
    };
    let target = CloudTarget::Vertex {
        location: location.clone(),
    };
    let dialect_route = (|| {
        if !post {
            return None;
        }
        if !express && is_vertex_chat_completions(rest) {
            return Some(route(
                Provider::Vertex,
                target.clone(),
                Some(Dialect::OpenAiChat),
                None,
                false,
            ));
        }
        let (resource, method) = rest.rsplit_once(':')?;
        let publishers = if express {
            resource.strip_prefix("publishers/")?
        } else {
            resource
                .strip_prefix("projects/")?
                .split_once("/publishers/")?
                .1
        };
        let (publisher, model) = publishers.split_once("/models/")?;
        // `count-tokens:rawPredict` (Claude Code, the Anthropic Vertex
        // SDKs) counts a conversation's tokens: no turn, passed through.
        if model.is_empty() || model.contains('/') || model == "count-tokens" {
            return None;
        }
        let (dialect, stream) = match (publisher, method) {
            ("google", "generateContent") => (Dialect::Gemini, false),
            ("google", "streamGenerateContent") => (Dialect::Gemini, true),
            ("anthropic", "rawPredict") => (Dialect::Anthropic, false),
            ("anthropic", "streamRawPredict") => (Dialect::Anthropic, false),
            _ => return None,
        };
        Some(route(
            Provider::Vertex,
            target.clone(),
            Some(dialect),
            Some(decode_path_segment(model)),
            stream,
        ))
    })();
    Some(dialect_route.unwrap_or_else(|| pass(Provider::Vertex, target)))
}

/// Whether `rest` (after `/{v1|v1beta1}/`) is Vertex AI's Chat Completions
/// endpoint, `projects/{p}/locations/{l}/endpoints/{e}/chat/completions`
/// (`e` is `openapi` for the models Google serves, else a deployed
/// model's endpoint): the OpenAI SDK with Vertex as its base URL.
fn is_vertex_chat_completions(rest: &str) -> bool {
    let parts: Vec<&str> = rest.split('/').collect();
    matches!(
        parts[..],
        ["projects", p, "locations", l, "endpoints", e, "chat", "completions"]
            if ![p, l, e].iter().any(|s| s.is_empty())
    )
}

/// Vertex AI's Live API socket,
/// `/ws/google.cloud.aiplatform.{v1|v1beta1}.LlmBidiService/BidiGenerateContent`
/// (google-genai's `aio.live.connect()` with `vertexai=True`). Its
/// location is named only in the `setup` message that follows the
/// upgrade (`projects/{p}/locations/{l}/publishers/google/models/{m}`):
/// the route's is `global`, which the socket falls back to when that
/// message names none (`ws::vertex` reads it and picks the upstream).
fn vertex_live(path: &str) -> Option<ProxyRoute> {
    let version = path
        .strip_prefix("/ws/google.cloud.aiplatform.")?
        .strip_suffix(".LlmBidiService/BidiGenerateContent")?;
    matches!(version, "v1" | "v1beta1").then(|| {
        pass(
            Provider::Vertex,
            CloudTarget::Vertex {
                location: "global".into(),
            },
        )
    })
}

/// Whether `path` (a cloud route's, its prefix included) is Vertex AI's
/// Live API socket ([`vertex_live`]).
pub(crate) fn is_vertex_live(route: &ProxyRoute, path: &str) -> bool {
    route.provider == Provider::Vertex
        && route
            .cloud
            .as_ref()
            .and_then(|c| path.get(c.prefix_len..))
            .is_some_and(|rest| vertex_live(rest).is_some())
}

/// A pass-through under `/vertex`, whatever its path.
fn vertex_pass(path: &str) -> ProxyRoute {
    let location = path
        .split_once("/projects/")
        .map_or_else(|| "global".to_string(), |(_, rest)| location_of(rest));
    pass(Provider::Vertex, CloudTarget::Vertex { location })
}

/// `{p}/locations/{l}/…` → `l` (`global` when absent).
fn location_of(after_projects: &str) -> String {
    location_in(after_projects).unwrap_or("global").to_string()
}

/// `{p}/locations/{l}/…` → `l`, as written (`None` when absent or empty):
/// a request path's location, and a Vertex AI Live `setup.model`'s
/// (`projects/{p}/locations/{l}/publishers/google/models/{m}`).
pub(crate) fn location_in(after_projects: &str) -> Option<&str> {
    after_projects
        .split_once("/locations/")
        .and_then(|(_, rest)| rest.split(['/', ':']).next())
        .filter(|l| !l.is_empty())
}

/// A Bedrock Runtime path's model id (as written, escapes kept) and
/// operation: `/model/{id}/{op}`.
fn model_and_op(path: &str) -> Option<(&str, &str)> {
    path.strip_prefix("/model/")?.rsplit_once('/')
}

/// Bedrock Runtime paths (`/model/{id}/…`).
fn bedrock(path: &str, post: bool) -> Option<ProxyRoute> {
    let (id, op) = model_and_op(path)?;
    let stream = matches!(op, "invoke-with-response-stream" | "converse-stream");
    let target = CloudTarget::Bedrock { stream };
    let model = decode_path_segment(id);
    let anthropic = model.contains("anthropic.");
    Some(match op {
        "invoke" | "invoke-with-response-stream" if post && anthropic && !id.is_empty() => route(
            Provider::Bedrock,
            target,
            Some(Dialect::Anthropic),
            Some(model),
            false,
        ),
        "converse" | "converse-stream" if post && !id.is_empty() => route(
            Provider::Bedrock,
            target,
            Some(Dialect::BedrockConverse),
            Some(model),
            false,
        ),
        _ => pass(Provider::Bedrock, target),
    })
}

/// Why the gateway answers a cloud request itself instead of relaying it,
/// if it does: Bedrock's bidirectional stream
/// (`/model/{id}/invoke-with-bidirectional-stream`, Nova Sonic's speech
/// to speech). The client signs its request for the gateway's address
/// (SigV4 signs `:authority`) and every event after it with a signature
/// chained from that one; the gateway can neither pass that on nor re-sign
/// an open stream's events, so forwarding could only end in AWS's 403 or
/// a stream that never starts.
pub(crate) fn unrelayed(route: &ProxyRoute, path: &str) -> Option<&'static str> {
    let cloud = route.cloud.as_ref()?;
    if !matches!(cloud.target, CloudTarget::Bedrock { .. }) {
        return None;
    }
    let (_, op) = model_and_op(path.get(cloud.prefix_len..)?)?;
    (op == "invoke-with-bidirectional-stream").then_some(
        "Bedrock's bidirectional stream (InvokeModelWithBidirectionalStream, \
         such as Nova Sonic's) is not relayed by toolwarden: its events are \
         signed for the gateway's address one after another, and the gateway \
         cannot re-sign an open stream; send this client to Bedrock directly",
    )
}

/// The Anthropic route of a Bedrock `invoke` pass-through (`route`, for
/// `path`) whose `body` is an Anthropic Messages body: a JSON object with
/// a string `anthropic_version` at its top level, which Bedrock requires of
/// Anthropic models and no other model's body has. The model id of an
/// application inference profile or a provisioned model is an ARN that
/// does not say which model it runs, so only the body can. `None` for
/// every other route and body (a body in a content coding included: it
/// stays a pass-through).
pub(crate) fn bedrock_invoke_by_body(
    route: &ProxyRoute,
    method: &Method,
    path: &str,
    body: &[u8],
) -> Option<ProxyRoute> {
    let cloud = route.cloud.as_ref()?;
    if route.dialect.is_some()
        || *method != Method::POST
        || !matches!(cloud.target, CloudTarget::Bedrock { .. })
    {
        return None;
    }
    let (id, op) = model_and_op(path.get(cloud.prefix_len..)?)?;
    if id.is_empty() || !matches!(op, "invoke" | "invoke-with-response-stream") {
        return None;
    }
    // A cheap test first: most pass-through bodies are not Anthropic's.
    memchr::memmem::find(body, b"\"anthropic_version\"")?;
    #[derive(serde::Deserialize)]
    struct Versioned {
        anthropic_version: Option<String>,
    }
    serde_json::from_slice::<Versioned>(body)
        .ok()?
        .anthropic_version?;
    let mut anthropic = route.clone();
    anthropic.dialect = Some(Dialect::Anthropic);
    anthropic.model = Some(decode_path_segment(id));
    Some(anthropic)
}

/// A path segment with its `%XX` escapes decoded (an invalid escape stays
/// as it is): boto3 writes a model id's `:` as `%3A`, the Anthropic SDK
/// leaves it raw; both name the same model.
pub(crate) fn decode_path_segment(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(path: &str) -> ProxyRoute {
        classify(&Method::POST, path).unwrap_or_else(|| panic!("{path}: no cloud route"))
    }

    #[test]
    fn azure_routes() {
        let r = post("/openai/deployments/gpt-4o/chat/completions");
        assert_eq!(r.provider, Provider::Azure);
        assert_eq!(r.dialect, Some(Dialect::OpenAiChat));
        assert_eq!(r.model.as_deref(), Some("gpt-4o"));
        let r = post("/azure/openai/v1/responses");
        assert_eq!(r.dialect, Some(Dialect::OpenAiResponses));
        assert_eq!(r.model, None);
        assert_eq!(r.cloud.unwrap().prefix_len, "/azure".len());
        // The `AzureOpenAI` clients' Responses path: no deployment.
        let r = post("/openai/responses");
        assert_eq!(
            (r.provider, r.dialect),
            (Provider::Azure, Some(Dialect::OpenAiResponses))
        );
        assert_eq!(r.model, None);
        let r = post("/azure/openai/v1/responses/compact");
        assert_eq!(
            (r.provider, r.dialect),
            (Provider::Azure, Some(Dialect::OpenAiResponses))
        );
        let r = post("/openai/deployments/x/embeddings");
        assert_eq!((r.provider, r.dialect), (Provider::Azure, None));
        let r = classify(&Method::GET, "/azure/openai/models").unwrap();
        assert_eq!((r.provider, r.dialect), (Provider::Azure, None));
    }

    #[test]
    fn vertex_routes() {
        let r = post(
            "/v1beta1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
        );
        assert_eq!(r.dialect, Some(Dialect::Gemini));
        assert!(r.gemini_stream);
        assert_eq!(r.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!(
            r.cloud.unwrap().target,
            CloudTarget::Vertex {
                location: "us-central1".into()
            }
        );
        let r = post(
            "/vertex/v1/projects/p/locations/global/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict",
        );
        assert_eq!(r.dialect, Some(Dialect::Anthropic));
        assert_eq!(r.model.as_deref(), Some("claude-sonnet-4@20250514"));
        // Counting tokens is no turn.
        let r = post(
            "/v1/projects/p/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict",
        );
        assert_eq!((r.provider, r.dialect), (Provider::Vertex, None));
        let r = post("/v1/projects/p/locations/l/publishers/google/models/m:countTokens");
        assert_eq!((r.provider, r.dialect), (Provider::Vertex, None));
        // The OpenAI-compatible endpoint: Chat Completions, model the body's.
        for path in [
            "/vertex/v1/projects/p/locations/us-central1/endpoints/openapi/chat/completions",
            "/v1beta1/projects/p/locations/global/endpoints/1234/chat/completions",
        ] {
            let r = post(path);
            assert_eq!(
                (r.provider, r.dialect, r.model.as_deref()),
                (Provider::Vertex, Some(Dialect::OpenAiChat), None),
                "{path}"
            );
            assert_eq!(r.envelope(), Provider::OpenAi, "{path}");
        }
        for path in [
            "/v1/projects/p/locations/l/endpoints/openapi/chat/completions/x",
            "/v1/projects/p/locations/l/endpoints//chat/completions",
            "/v1/projects/p/locations/l/endpoints/openapi/embeddings",
        ] {
            let r = post(path);
            assert_eq!((r.provider, r.dialect), (Provider::Vertex, None), "{path}");
        }
        // Express mode (an API key, no project): the global endpoint's.
        for path in [
            "/v1/publishers/google/models/gemini-2.5-flash:generateContent",
            "/vertex/v1beta1/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
        ] {
            let r = post(path);
            assert_eq!(
                (r.provider, r.dialect),
                (Provider::Vertex, Some(Dialect::Gemini)),
                "{path}"
            );
            assert_eq!(r.model.as_deref(), Some("gemini-2.5-flash"));
            assert_eq!(
                r.cloud.unwrap().target,
                CloudTarget::Vertex {
                    location: "global".into()
                }
            );
        }
        let r = classify(&Method::GET, "/v1beta1/publishers/google/models").unwrap();
        assert_eq!((r.provider, r.dialect), (Provider::Vertex, None));
        // The Gemini API's own paths are not Vertex's.
        assert!(classify(&Method::POST, "/v1beta/models/m:generateContent").is_none());
        assert!(classify(&Method::POST, "/v1/models/m:generateContent").is_none());
    }

    #[test]
    fn vertex_live_routes() {
        for path in [
            "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent",
            "/ws/google.cloud.aiplatform.v1.LlmBidiService/BidiGenerateContent",
            "/vertex/ws/google.cloud.aiplatform.v1.LlmBidiService/BidiGenerateContent",
        ] {
            let r = classify(&Method::GET, path).unwrap_or_else(|| panic!("{path}"));
            assert_eq!((r.provider, r.dialect), (Provider::Vertex, None), "{path}");
            assert!(is_vertex_live(&r, path), "{path}");
            assert_eq!(
                r.cloud.unwrap().target,
                CloudTarget::Vertex {
                    location: "global".into()
                }
            );
        }
        // The Gemini API's socket, other versions and services are not it.
        for path in [
            "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent",
            "/ws/google.cloud.aiplatform.v2.LlmBidiService/BidiGenerateContent",
            "/ws/google.cloud.aiplatform.v1.LlmBidiService/Other",
        ] {
            assert!(classify(&Method::GET, path).is_none(), "{path}");
        }
        let other = classify(&Method::GET, "/vertex/v1/projects/p/locations/l/x").unwrap();
        assert!(!is_vertex_live(
            &other,
            "/vertex/v1/projects/p/locations/l/x"
        ));
    }

    #[test]
    fn bedrocks_bidirectional_stream_is_not_relayed() {
        for path in [
            "/model/amazon.nova-sonic-v1:0/invoke-with-bidirectional-stream",
            "/bedrock/model/amazon.nova-sonic-v1%3A0/invoke-with-bidirectional-stream",
        ] {
            let r = post(path);
            assert!(unrelayed(&r, path).is_some(), "{path}");
        }
        for path in [
            "/model/amazon.nova-sonic-v1:0/invoke-with-response-stream",
            "/bedrock/model/x/converse",
            "/vertex/v1/projects/p/locations/l/publishers/google/models/invoke-with-bidirectional-stream",
        ] {
            let r = post(path);
            assert!(unrelayed(&r, path).is_none(), "{path}");
        }
    }

    #[test]
    fn bedrock_routes() {
        for path in [
            "/model/anthropic.claude-3-5-sonnet-20241022-v2:0/invoke",
            "/bedrock/model/anthropic.claude-3-5-sonnet-20241022-v2%3A0/invoke",
        ] {
            let r = post(path);
            assert_eq!(r.dialect, Some(Dialect::Anthropic), "{path}");
            assert_eq!(
                r.model.as_deref(),
                Some("anthropic.claude-3-5-sonnet-20241022-v2:0")
            );
        }
        let r = post("/model/us.anthropic.claude-x%3A0/invoke-with-response-stream");
        assert_eq!(r.dialect, Some(Dialect::Anthropic));
        assert_eq!(
            r.cloud.unwrap().target,
            CloudTarget::Bedrock { stream: true }
        );
        // Other models' invoke bodies are not Anthropic's.
        let r = post("/model/amazon.nova-pro-v1%3A0/invoke");
        assert_eq!((r.provider, r.dialect), (Provider::Bedrock, None));
        let r = post("/bedrock/model/amazon.nova-pro-v1%3A0/converse-stream");
        assert_eq!(r.dialect, Some(Dialect::BedrockConverse));
        assert_eq!(r.model.as_deref(), Some("amazon.nova-pro-v1:0"));
    }

    #[test]
    fn an_invoke_named_by_an_arn_is_read_by_its_body() {
        let arn = "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fa1b2c3";
        let anthropic =
            br#"{"anthropic_version":"bedrock-2023-05-31","max_tokens":9,"messages":[]}"#;
        for path in [
            format!("/model/{arn}/invoke"),
            format!("/bedrock/model/{arn}/invoke-with-response-stream"),
        ] {
            let r = post(&path);
            assert_eq!((r.provider, r.dialect), (Provider::Bedrock, None), "{path}");
            let read = bedrock_invoke_by_body(&r, &Method::POST, &path, anthropic).expect(&path);
            assert_eq!(read.dialect, Some(Dialect::Anthropic));
            assert_eq!(
                read.model.as_deref(),
                Some("arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3")
            );
            assert_eq!(read.cloud, r.cloud, "the prefix and the target stay");
        }
        let path = format!("/model/{arn}/invoke");
        let r = post(&path);
        for body in [
            // Another model's body; the key only inside a string value; not
            // at the top level; not a string; not JSON.
            &br#"{"inputText":"hi"}"#[..],
            br#"{"prompt":"say \"anthropic_version\""}"#,
            br#"{"x":{"anthropic_version":"bedrock-2023-05-31"}}"#,
            br#"{"anthropic_version":null}"#,
            br#"{"anthropic_version":"v""#,
        ] {
            assert!(
                bedrock_invoke_by_body(&r, &Method::POST, &path, body).is_none(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        // Routes the path decides are left to it.
        for path in [
            "/model/anthropic.claude-x%3A0/invoke",
            "/model/amazon.nova-pro-v1%3A0/converse",
            "/model/m/count-tokens",
        ] {
            assert!(
                bedrock_invoke_by_body(&post(path), &Method::POST, path, anthropic).is_none(),
                "{path}"
            );
        }
        let azure = "/openai/v1/files";
        assert!(bedrock_invoke_by_body(&post(azure), &Method::POST, azure, anthropic).is_none());
        // Only a POST is an invoke.
        let path = format!("/model/{arn}/invoke");
        let get = classify(&Method::GET, &path).unwrap();
        assert!(bedrock_invoke_by_body(&get, &Method::GET, &path, anthropic).is_none());
    }

    #[test]
    fn other_paths_are_not_cloud_paths() {
        for path in [
            "/v1/messages",
            "/v1/chat/completions",
            "/azurex/openai/v1/responses",
        ] {
            assert!(classify(&Method::POST, path).is_none(), "{path}");
        }
        assert_eq!(decode_path_segment("a%3Ab%zz%4"), "a:b%zz%4");
    }
}
