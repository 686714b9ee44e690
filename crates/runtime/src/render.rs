//! Tool definitions in each dialect's `tools` field.

use serde_json::{Value, json};
use toolwarden_wire::Dialect;

/// One tool's definition in `dialect`'s shape (for Gemini, one entry of
/// `functionDeclarations`).
pub fn definition(dialect: Dialect, name: &str, description: &str, parameters: &Value) -> Value {
    match dialect {
        Dialect::OpenAiChat => json!({
            "type": "function",
            "function": {"name": name, "description": description, "parameters": parameters}
        }),
        // Without `strict`, the Responses API makes the schema strict where
        // it can (every property required, the model filling the optional
        // ones with empty values), unlike Chat Completions: `false` keeps
        // the schema as written.
        Dialect::OpenAiResponses => json!({
            "type": "function",
            "name": name,
            "description": description,
            "parameters": parameters,
            "strict": false
        }),
        Dialect::Anthropic => json!({
            "name": name,
            "description": description,
            "input_schema": parameters
        }),
        // Gemini's `parameters` takes an OpenAPI subset that rejects common
        // JSON Schema keywords (`additionalProperties`, `$defs`, …);
        // `parametersJsonSchema` takes the schema as it is.
        Dialect::Gemini => json!({
            "name": name,
            "description": description,
            "parametersJsonSchema": parameters
        }),
        // Bedrock refuses an empty `description` (at least one character,
        // though the field is optional): a tool without one leaves it out.
        Dialect::BedrockConverse if description.is_empty() => json!({
            "toolSpec": {"name": name, "inputSchema": {"json": parameters}}
        }),
        Dialect::BedrockConverse => json!({
            "toolSpec": {
                "name": name,
                "description": description,
                "inputSchema": {"json": parameters}
            }
        }),
    }
}

/// One tool's definition in OpenAI's strict mode: `"strict": true` for
/// Chat Completions and Responses, whose `parameters` must then be a
/// strict schema (see [`strict_schema`](crate::strict_schema), which makes
/// one). The other dialects have no such flag: for them this is
/// [`definition`].
pub fn strict_definition(
    dialect: Dialect,
    name: &str,
    description: &str,
    parameters: &Value,
) -> Value {
    let mut def = definition(dialect, name, description, parameters);
    let function = match dialect {
        Dialect::OpenAiChat => def.get_mut("function"),
        Dialect::OpenAiResponses => Some(&mut def),
        _ => None,
    };
    if let Some(Value::Object(function)) = function {
        function.insert("strict".into(), Value::Bool(true));
    }
    def
}

/// The value of the request's `tools` field for these tools: an array of
/// definitions; for Gemini `[{"functionDeclarations": [...]}]`; for Bedrock
/// Converse the value of `toolConfig.tools` (`toolSpec` entries).
pub fn definitions<'a>(
    dialect: Dialect,
    tools: impl IntoIterator<Item = (&'a str, &'a str, &'a Value)>,
) -> Value {
    let defs: Vec<Value> = tools
        .into_iter()
        .map(|(n, d, p)| definition(dialect, n, d, p))
        .collect();
    tools_field(dialect, defs)
}

/// Definitions as the `tools` field of `dialect`.
pub(crate) fn tools_field(dialect: Dialect, defs: Vec<Value>) -> Value {
    match dialect {
        Dialect::Gemini => json!([{ "functionDeclarations": defs }]),
        _ => Value::Array(defs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: Bedrock takes a tool's `description` of at least one
    /// character (a 400 for the whole request otherwise), and a tool may
    /// have none: the field is left out.
    #[test]
    fn bedrock_gets_no_empty_description() {
        let schema = json!({"type": "object"});
        assert_eq!(
            definition(Dialect::BedrockConverse, "ls", "", &schema),
            json!({"toolSpec": {"name": "ls", "inputSchema": {"json": schema}}})
        );
        let strict = strict_definition(Dialect::BedrockConverse, "ls", "", &schema);
        assert!(strict["toolSpec"].get("description").is_none(), "{strict}");
    }

    #[test]
    fn each_dialect_has_its_shape() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let tools = [("search", "Search.", &schema)];
        assert_eq!(
            definitions(Dialect::OpenAiChat, tools),
            json!([{"type": "function", "function": {"name": "search", "description": "Search.", "parameters": schema}}])
        );
        assert_eq!(
            definitions(Dialect::OpenAiResponses, tools),
            json!([{"type": "function", "name": "search", "description": "Search.", "parameters": schema, "strict": false}])
        );
        assert_eq!(
            definitions(Dialect::Anthropic, tools),
            json!([{"name": "search", "description": "Search.", "input_schema": schema}])
        );
        assert_eq!(
            definitions(Dialect::Gemini, tools),
            json!([{"functionDeclarations": [{"name": "search", "description": "Search.", "parametersJsonSchema": schema}]}])
        );
        assert_eq!(
            definitions(Dialect::BedrockConverse, tools),
            json!([{"toolSpec": {"name": "search", "description": "Search.", "inputSchema": {"json": schema}}}])
        );
    }
}
