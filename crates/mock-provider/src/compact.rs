//! The Responses API's compaction endpoint, `POST /v1/responses/compact`
//! (and the ChatGPT backend's `…/codex/responses/compact`, where the
//! Codex CLI signed in with ChatGPT compacts): it takes a Responses body
//! (`model`, `input`, `instructions`, …) and answers a
//! `response.compaction` object whose `output` is every user message of
//! the input, followed by one `compaction` item standing for the rest
//! (the real one's content is encrypted; here it is a hash of the
//! input). The Codex CLI then replaces its history with that output, so
//! what the input held beyond the user messages (calls, their outputs)
//! is not sent again.

use bytes::Bytes;
use http::StatusCode;
use serde_json::{Value, json};

use toolwarden_wire::Dialect;

use crate::{envelope::Provider, plan::fnv1a};

/// Whether `path` is a compaction endpoint.
pub(crate) fn is_compact_path(path: &str) -> bool {
    path == "/v1/responses/compact" || path.ends_with("/backend-api/codex/responses/compact")
}

/// The answer to a compaction request: its status and JSON body.
pub(crate) fn answer(
    headers: &http::HeaderMap,
    query: Option<&str>,
    expected_key: Option<&str>,
    body: &Bytes,
) -> (StatusCode, String) {
    if let Some(denied) =
        crate::envelope::check_auth(Provider::OpenAi, headers, query, expected_key)
    {
        return denied;
    }
    let request: Value = match serde_json::from_slice(body) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            let message = "We could not parse the JSON body of your request.";
            return (
                StatusCode::BAD_REQUEST,
                crate::envelope::invalid_request(Dialect::OpenAiResponses, message),
            );
        }
    };
    let mut output: Vec<Value> = match &request["input"] {
        Value::String(text) => vec![json!({"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]})],
        Value::Array(items) => items
            .iter()
            .filter(|item| item["role"] == "user")
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    let hash = fnv1a(body);
    output.push(
        json!({"type": "compaction", "id": format!("cmp_mock{hash:016x}"),
        "encrypted_content": format!("mock-compaction-{hash:016x}")}),
    );
    let input_tokens = (body.len() as u64 / 4).max(1);
    let reply = json!({
        "id": format!("resp_cmp{hash:016x}"),
        "object": "response.compaction",
        "created_at": 1_700_000_000,
        "output": output,
        "usage": {"input_tokens": input_tokens, "output_tokens": 64,
            "total_tokens": input_tokens + 64,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0}},
    });
    (StatusCode::OK, reply.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_user_messages_and_adds_one_compaction_item() {
        let body = Bytes::from(
            json!({"model": "gpt-5", "input": [
                {"role": "user", "content": "fix it"},
                {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "ok"}]})
            .to_string(),
        );
        let (status, text) = answer(&http::HeaderMap::new(), Some("key=x"), None, &body);
        // Without a bearer token: the API's 401.
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
        let mut headers = http::HeaderMap::new();
        headers.insert("authorization", "Bearer sk-x".parse().unwrap());
        let (status, text) = answer(&headers, None, None, &body);
        assert_eq!(status, StatusCode::OK, "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["object"], "response.compaction");
        let types: Vec<&str> = v["output"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["type"].as_str().unwrap_or("message"))
            .collect();
        assert_eq!(types, ["message", "compaction"]);
        assert!(is_compact_path("/backend-api/codex/responses/compact"));
        assert!(!is_compact_path("/v1/responses"));
    }
}
