//! The model listings and lookups: `GET /v1/models` and `GET
//! /v1/models/{id}` (Anthropic's or OpenAI's, told apart by the
//! `anthropic-version` / `x-api-key` headers), and Gemini's `GET
//! /v1beta/models` and `GET /v1beta/models/{model}` (LlamaIndex's
//! `GoogleGenAI` looks its model up before the first request). Any model
//! id is found, as every model route takes any model.

use http::{Method, Response, StatusCode};

use crate::{
    Shared,
    answer::{denied, json_response},
    body::Body,
    envelope::Provider,
    json::{Obj, array},
};

/// The models a listing names.
const LISTED: [&str; 4] = [
    "mock-model",
    "gpt-4o",
    "claude-sonnet-4-20250514",
    "gemini-2.0-flash",
];

/// The answer to a listing or a lookup, `None` for any other request.
pub(crate) fn serve(
    shared: &Shared,
    parts: &http::request::Parts,
    path: &str,
    query: Option<&str>,
) -> Option<Response<Body>> {
    if parts.method != Method::GET {
        return None;
    }
    let one = match path {
        "/v1/models" | "/v1beta/models" => None,
        _ => Some(
            ["/v1/models/", "/v1beta/models/"]
                .iter()
                .find_map(|p| path.strip_prefix(p))
                .filter(|id| !id.is_empty() && !id.contains('/') && !id.contains(':'))?,
        ),
    };
    let provider = Provider::from_headers(&parts.headers, path);
    if let Some(denied) = denied(shared, provider, parts, query) {
        return Some(denied);
    }
    let body = match one {
        Some(id) => model(provider, id),
        None => match provider {
            Provider::OpenAi => Obj::new()
                .str("object", "list")
                .raw("data", &array(LISTED.iter().map(|m| model(provider, m))))
                .done(),
            Provider::Anthropic => Obj::new()
                .raw("data", &array(LISTED.iter().map(|m| model(provider, m))))
                .bool("has_more", false)
                .str("first_id", LISTED[0])
                .str("last_id", LISTED[LISTED.len() - 1])
                .done(),
            Provider::Gemini => Obj::new()
                .raw("models", &array(LISTED.iter().map(|m| model(provider, m))))
                .done(),
        },
    };
    Some(json_response(StatusCode::OK, body))
}

/// One model as the provider describes it.
fn model(provider: Provider, id: &str) -> String {
    match provider {
        Provider::OpenAi => Obj::new()
            .str("id", id)
            .str("object", "model")
            .num("created", 1_700_000_000)
            .str("owned_by", "mock")
            .done(),
        Provider::Anthropic => Obj::new()
            .str("type", "model")
            .str("id", id)
            .str("display_name", id)
            .str("created_at", "2025-05-14T00:00:00Z")
            .done(),
        Provider::Gemini => {
            let id = id.strip_prefix("models/").unwrap_or(id);
            Obj::new()
                .str("name", &format!("models/{id}"))
                .str("version", "001")
                .str("displayName", id)
                .num("inputTokenLimit", 1_048_576)
                .num("outputTokenLimit", 65_536)
                .raw(
                    "supportedGenerationMethods",
                    r#"["generateContent","streamGenerateContent","countTokens"]"#,
                )
                .done()
        }
    }
}
