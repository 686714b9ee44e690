//! The APIs' token counting, which clients call beside their model
//! requests: Anthropic's `POST /v1/messages/count_tokens` (Claude Code,
//! CrewAI), Gemini's `POST /{v1,v1beta}/models/{model}:countTokens` and
//! Bedrock's `POST /model/{modelId}/count-tokens` (CrewAI's native
//! providers count before each request). Each checks the API's
//! authentication (Bedrock's SigV4 as its model routes do), answers a body
//! it cannot read with the API's 400, and counts a quarter token per byte
//! of the body, as the default replies count.

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use serde_json::Value;
use toolwarden_wire::Dialect;

use crate::{
    Shared,
    answer::{denied, error_response, json_response, set_headers},
    api_headers::Api,
    body::Body,
    cloud::{self, Cloud, CloudRoute},
    envelope::{self, Provider},
    json::Obj,
};

/// Which API's counting a path is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Counting {
    Anthropic,
    Gemini,
    /// The model id as the path names it (percent-encoded, as boto3 sends
    /// `…-v1:0`).
    Bedrock(String),
}

/// The answer to a token-counting request, `None` for any other.
pub(crate) fn serve(
    shared: &Shared,
    parts: &http::request::Parts,
    path: &str,
    query: Option<&str>,
    body: &Bytes,
) -> Option<Response<Body>> {
    if parts.method != Method::POST {
        return None;
    }
    let counting = counting(path)?;
    let tokens = (body.len() as u64 / 4).max(1);
    Some(match counting {
        Counting::Anthropic => {
            denied(shared, Provider::Anthropic, parts, query).unwrap_or_else(|| {
                json_response(
                    StatusCode::OK,
                    Obj::new().num("input_tokens", tokens).done(),
                )
            })
        }
        Counting::Gemini => denied(shared, Provider::Gemini, parts, query).unwrap_or_else(|| {
            match serde_json::from_slice::<Value>(body) {
                Ok(Value::Object(_)) => {
                    let details = Obj::new()
                        .str("modality", "TEXT")
                        .num("tokenCount", tokens)
                        .done();
                    json_response(
                        StatusCode::OK,
                        Obj::new()
                            .num("totalTokens", tokens)
                            .raw("promptTokensDetails", &format!("[{details}]"))
                            .done(),
                    )
                }
                _ => error_response(
                    Some(Api::Gemini),
                    StatusCode::BAD_REQUEST,
                    envelope::invalid_request(Dialect::Gemini, "Invalid JSON payload received."),
                ),
            }
        }),
        Counting::Bedrock(model) => bedrock(shared, parts, body, model, tokens),
    })
}

/// The API `path` counts for.
fn counting(path: &str) -> Option<Counting> {
    if path == "/v1/messages/count_tokens" {
        return Some(Counting::Anthropic);
    }
    if let Some(model) = ["/v1beta/models/", "/v1/models/"]
        .iter()
        .find_map(|p| path.strip_prefix(p))
        .and_then(|rest| rest.strip_suffix(":countTokens"))
        && !model.is_empty()
        && !model.contains('/')
    {
        return Some(Counting::Gemini);
    }
    let path = path.strip_prefix("/bedrock").unwrap_or(path);
    let model = path
        .strip_prefix("/model/")?
        .strip_suffix("/count-tokens")?;
    (!model.is_empty() && !model.contains('/')).then(|| Counting::Bedrock(model.to_string()))
}

/// Bedrock's `CountTokens`: signed as its model routes are, its body
/// `{"input": {"converse": {…}}}` or `{"input": {"invokeModel": {"body":
/// "…"}}}`, answered `{"inputTokens": n}`.
fn bedrock(
    shared: &Shared,
    parts: &http::request::Parts,
    body: &Bytes,
    model: String,
    tokens: u64,
) -> Response<Body> {
    let route = CloudRoute {
        cloud: Cloud::Bedrock,
        dialect: Dialect::BedrockConverse,
        model: Some(model),
        path_stream: false,
        gemini_sse: false,
        express: false,
    };
    let opts = &shared.opts;
    let aws = cloud::AwsAuth {
        key: opts.aws_key.as_ref(),
        api_key: opts.bedrock_api_key.as_deref(),
    };
    if let Some((status, headers, text)) =
        cloud::check_auth(&route, parts, body, opts.api_key.as_deref(), aws, None)
    {
        let mut resp = json_response(status, text);
        set_headers(&mut resp, headers);
        return resp;
    }
    let input = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("input").cloned());
    let readable = input.as_ref().is_some_and(|input| {
        let converse = input.get("converse").is_some_and(Value::is_object);
        let invoke = input
            .get("invokeModel")
            .and_then(|i| i.get("body"))
            .is_some_and(Value::is_string);
        converse != invoke
    });
    if !readable {
        let message = "1 validation error detected: Value at 'input' failed to satisfy constraint: Member must have exactly one of converse or invokeModel";
        return error_response(
            Some(Api::Bedrock),
            StatusCode::BAD_REQUEST,
            Obj::new().str("message", message).done(),
        );
    }
    json_response(StatusCode::OK, Obj::new().num("inputTokens", tokens).done())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_apis_counting_path() {
        assert_eq!(
            counting("/v1/messages/count_tokens"),
            Some(Counting::Anthropic)
        );
        assert_eq!(
            counting("/v1beta/models/gemini-2.5-flash:countTokens"),
            Some(Counting::Gemini)
        );
        assert_eq!(
            counting("/v1/models/gemini-2.5-pro:countTokens"),
            Some(Counting::Gemini)
        );
        assert_eq!(
            counting("/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens"),
            Some(Counting::Bedrock(
                "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0".into()
            ))
        );
        assert_eq!(
            counting("/bedrock/model/m/count-tokens"),
            Some(Counting::Bedrock("m".into()))
        );
        for other in [
            "/v1/messages",
            "/v1beta/models/:countTokens",
            "/v1beta/models/a/b:countTokens",
            "/v1beta/models/m:generateContent",
            "/model//count-tokens",
            "/model/m/converse",
        ] {
            assert_eq!(counting(other), None, "{other}");
        }
    }
}
