//! Answers for requests that ask for JSON by schema (the Gemini CLI's
//! router classifier and next-speaker check, OpenAI structured outputs).

use serde_json::{Map, Value};
use toolwarden_wire::Dialect;

/// The JSON schema the request asks the reply to follow, if any.
pub(super) fn requested(dialect: Dialect, v: &Value) -> Option<&Value> {
    match dialect {
        Dialect::Gemini => {
            let config = v.get("generationConfig")?;
            config
                .get("responseJsonSchema")
                .or_else(|| config.get("responseSchema"))
        }
        Dialect::OpenAiChat => v
            .get("response_format")
            .filter(|f| f.get("type").and_then(Value::as_str) == Some("json_schema"))?
            .get("json_schema")?
            .get("schema"),
        Dialect::OpenAiResponses => v
            .get("text")?
            .get("format")
            .filter(|f| f.get("type").and_then(Value::as_str) == Some("json_schema"))?
            .get("schema"),
        Dialect::Anthropic | Dialect::BedrockConverse => None,
    }
}

/// A value that follows `schema`: an enum's first value, every property of
/// an object, empty arrays, `"mock"` strings, zeros, `false`.
pub(super) fn instance(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(first) = ["anyOf", "oneOf", "allOf"].iter().find_map(|k| {
        schema
            .get(*k)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
    }) {
        return instance(first);
    }
    let kind = match schema.get("type") {
        Some(Value::String(t)) => t.to_ascii_lowercase(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null")
            .to_ascii_lowercase(),
        _ if schema.get("properties").is_some() => "object".to_string(),
        _ => "string".to_string(),
    };
    match kind.as_str() {
        "object" => {
            let mut out = Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (k, p) in props {
                    out.insert(k.clone(), instance(p));
                }
            }
            Value::Object(out)
        }
        "array" => Value::Array(Vec::new()),
        "integer" | "number" => Value::from(0),
        "boolean" => Value::Bool(false),
        "null" => Value::Null,
        _ => Value::String("mock".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifier_schema_gets_its_first_choice() {
        let schema = json!({"type":"object","properties":{
            "reasoning":{"type":"string"},
            "model_choice":{"type":"string","enum":["flash","pro"]},
            "n":{"type":"INTEGER"}, "tags":{"type":"array"}}});
        assert_eq!(
            instance(&schema),
            json!({"reasoning":"mock","model_choice":"flash","n":0,"tags":[]})
        );
        let req = json!({"generationConfig":{"responseJsonSchema":schema}});
        assert!(requested(Dialect::Gemini, &req).is_some());
        assert!(requested(Dialect::Gemini, &json!({"contents":[]})).is_none());
    }
}
