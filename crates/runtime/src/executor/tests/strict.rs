//! Tools registered strict: their definitions for OpenAI's two dialects,
//! refusal at registration, and calls with the nulls strict mode sends.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolwarden_core::Status;
use toolwarden_wire::Dialect;

use super::{call, ctx, executor};
use crate::{
    BoxError, Context, Registry, RegistryErrorKind, StrictSchemaErrorKind, ToolPolicy, tool_fn,
    typed_fn,
};

#[derive(Debug, Clone, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Filter {
    field: String,
    value: Option<String>,
}

#[derive(Debug, Clone, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// At most this many hits.
    limit: Option<u32>,
    /// Skip this many hits.
    #[serde(default)]
    offset: u32,
    filters: Vec<Filter>,
}

/// A `search` tool that keeps the arguments it got.
fn search(seen: Arc<Mutex<Vec<SearchArgs>>>) -> impl crate::Tool {
    typed_fn(
        "search",
        "Search the index.",
        move |args: SearchArgs, _ctx: Context| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(args);
                Ok::<_, BoxError>("3 hits")
            }
        },
    )
}

fn strict_registry(seen: Arc<Mutex<Vec<SearchArgs>>>) -> Registry {
    let r = Registry::new();
    r.register_with(search(seen), ToolPolicy::new().strict(true))
        .unwrap();
    r.register(tool_fn(
        "loose",
        "Not strict.",
        json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        |_a, _c| async { Ok::<_, BoxError>(Value::Null) },
    ))
    .unwrap();
    r
}

/// The strict schema of `SearchArgs` (serde_json's maps are ordered by
/// key here, and so is `required`).
fn strict_parameters() -> Value {
    json!({
        "type": "object",
        "$defs": {"Filter": {
            "type": "object",
            "properties": {"field": {"type": "string"}, "value": {"type": ["string", "null"]}},
            "required": ["field", "value"],
            "additionalProperties": false
        }},
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": ["integer", "null"], "minimum": 0, "description": "At most this many hits."},
            "offset": {"type": ["integer", "null"], "minimum": 0, "description": "Skip this many hits."},
            "filters": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}
        },
        "required": ["filters", "limit", "offset", "query"],
        "additionalProperties": false
    })
}

#[test]
fn openai_chat_and_responses_get_the_strict_schema_and_flag() {
    let r = strict_registry(Arc::default());
    let loose = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    assert_eq!(
        r.definitions(Dialect::OpenAiChat),
        json!([
            {"type": "function", "function": {
                "name": "search", "description": "Search the index.",
                "parameters": strict_parameters(), "strict": true
            }},
            {"type": "function", "function": {"name": "loose", "description": "Not strict.", "parameters": loose}}
        ])
    );
    assert_eq!(
        r.definitions(Dialect::OpenAiResponses),
        json!([
            {"type": "function", "name": "search", "description": "Search the index.",
             "parameters": strict_parameters(), "strict": true},
            {"type": "function", "name": "loose", "description": "Not strict.",
             "parameters": loose, "strict": false}
        ])
    );
}

#[test]
fn other_dialects_get_the_tools_own_schema() {
    let r = strict_registry(Arc::default());
    let own = crate::schema_of::<SearchArgs>();
    assert_eq!(r.definitions(Dialect::Anthropic)[0]["input_schema"], own);
    assert_eq!(
        r.definitions(Dialect::Gemini)[0]["functionDeclarations"][0]["parametersJsonSchema"],
        own
    );
    assert_eq!(
        r.definitions(Dialect::BedrockConverse)[0]["toolSpec"]["inputSchema"]["json"],
        own
    );
    assert!(r.definitions(Dialect::Anthropic)[0].get("strict").is_none());
}

#[test]
fn a_schema_without_a_strict_form_is_refused_at_registration() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct TagArgs {
        labels: std::collections::HashMap<String, String>,
    }
    let r = Registry::new();
    let tool = typed_fn("tag", "Tag a file.", |_a: TagArgs, _c: Context| async {
        Ok::<_, BoxError>("ok")
    });
    let e = r
        .register_with(tool, ToolPolicy::new().strict(true))
        .unwrap_err();
    assert_eq!(e.kind(), RegistryErrorKind::NotStrict);
    assert_eq!(e.name(), "tag");
    let why = e.strict_schema_error().unwrap();
    assert_eq!(why.kind(), StrictSchemaErrorKind::OpenObject);
    assert_eq!(why.path(), "properties.labels");
    assert_eq!(
        e.to_string(),
        "no strict-mode schema for tool: 'tag' (`additionalProperties` lets an object take properties not listed in `properties`, as a map does; strict mode needs `additionalProperties: false` on every object, at properties.labels)"
    );
    // Nothing was registered; without strict the same tool registers.
    assert!(r.is_empty());
    let tool = typed_fn("tag", "Tag a file.", |_a: TagArgs, _c: Context| async {
        Ok::<_, BoxError>("ok")
    });
    r.register(tool).unwrap();
}

/// What strict mode makes the model send (every property, the optional
/// ones as null, nested too) runs the typed tool as if they were left out.
#[tokio::test]
async fn optional_arguments_sent_as_null_are_absent() {
    let seen: Arc<Mutex<Vec<SearchArgs>>> = Arc::default();
    let ex = executor(strict_registry(seen.clone()));
    let args = r#"{"query": "rust", "limit": null, "offset": null,
                   "filters": [{"field": "lang", "value": null}, {"field": "year", "value": "2024"}]}"#;
    let outcome = ex.execute(&call("c1", "search", args), &ctx()).await;
    assert_eq!(outcome.status, Status::Success, "{:?}", outcome.error);
    assert_eq!(
        seen.lock().unwrap()[0],
        SearchArgs {
            query: "rust".into(),
            limit: None,
            offset: 0,
            filters: vec![
                Filter {
                    field: "lang".into(),
                    value: None
                },
                Filter {
                    field: "year".into(),
                    value: Some("2024".into())
                },
            ],
        }
    );
    // A required property sent as null is still a mistake to fix.
    let outcome = ex
        .execute(
            &call("c2", "search", r#"{"query": null, "filters": []}"#),
            &ctx(),
        )
        .await;
    assert_eq!(
        outcome.error.unwrap().model_message,
        "Invalid type for 'query': expected string, got null"
    );
}

/// Without strict, a null for a property whose schema does not take null
/// is refused as before.
#[tokio::test]
async fn without_strict_a_null_is_checked_as_sent() {
    let r = Registry::new();
    r.register(search(Arc::default())).unwrap();
    let ex = executor(r);
    let outcome = ex
        .execute(
            &call(
                "c1",
                "search",
                r#"{"query": "q", "offset": null, "filters": []}"#,
            ),
            &ctx(),
        )
        .await;
    assert_eq!(
        outcome.error.unwrap().model_message,
        "Invalid type for 'offset': expected integer, got null"
    );
}

/// A whole step: a Chat Completions response whose call sends the optional
/// arguments as null gets one successful result.
#[tokio::test]
async fn a_step_with_null_optional_arguments_succeeds() {
    let seen: Arc<Mutex<Vec<SearchArgs>>> = Arc::default();
    let ex = executor(strict_registry(seen.clone()));
    let arguments = json!({"query": "q", "limit": 5, "offset": null, "filters": []}).to_string();
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "search", "arguments": arguments}}]
        }}]
    });
    let step = ex
        .step(Dialect::OpenAiChat, body.to_string().as_bytes(), &ctx())
        .await
        .unwrap();
    assert_eq!(step.outcomes[0].status, Status::Success);
    assert_eq!(seen.lock().unwrap()[0].limit, Some(5));
    assert_eq!(step.messages[0]["tool_call_id"], "call_1");
}
