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
            "input_schema": anthropic_schema(parameters)
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

/// The keywords Anthropic refuses at the top level of an `input_schema`.
const TOP_LEVEL_COMBINATORS: [&str; 3] = ["oneOf", "anyOf", "allOf"];

/// `parameters` as Anthropic takes them. It refuses `oneOf`, `anyOf` and
/// `allOf` at the top level ("input_schema does not support oneOf, allOf,
/// or anyOf at the top level", failing every request that advertises the
/// tool): they are left out, as the strict rewrite leaves out what strict
/// mode does not take (the executor still validates each call against the
/// tool's own schema and tells the model what to fix), and the properties
/// their branches name (directly or through a local `$ref`) are listed
/// with the others, none more required, so the model still sees every
/// argument. A schema without them is given as it is.
fn anthropic_schema(parameters: &Value) -> std::borrow::Cow<'_, Value> {
    let Some(map) = parameters.as_object() else {
        return std::borrow::Cow::Borrowed(parameters);
    };
    if !TOP_LEVEL_COMBINATORS.iter().any(|k| map.contains_key(*k)) {
        return std::borrow::Cow::Borrowed(parameters);
    }
    let mut out = map.clone();
    // A `properties` that is no map (a schema the validator took) is left
    // as it is, nothing merged in.
    let mut properties = match out.get("properties") {
        Some(Value::Object(p)) => Some(p.clone()),
        Some(_) => None,
        None => Some(serde_json::Map::new()),
    };
    for key in TOP_LEVEL_COMBINATORS {
        let Some(Value::Array(branches)) = out.remove(key) else {
            continue;
        };
        for branch in &branches {
            let branch = match branch.get("$ref").and_then(Value::as_str) {
                Some(r) => r
                    .strip_prefix('#')
                    .and_then(|p| parameters.pointer(p))
                    .unwrap_or(branch),
                None => branch,
            };
            if let (Some(properties), Some(Value::Object(props))) =
                (properties.as_mut(), branch.get("properties"))
            {
                for (name, schema) in props {
                    properties
                        .entry(name.clone())
                        .or_insert_with(|| schema.clone());
                }
            }
        }
    }
    if let Some(properties) = properties.filter(|p| !p.is_empty() || map.contains_key("properties"))
    {
        out.insert("properties".into(), Value::Object(properties));
    }
    std::borrow::Cow::Owned(Value::Object(out))
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

    /// Regression: Anthropic refuses a tool whose `input_schema` has
    /// `oneOf`, `anyOf` or `allOf` at the top level (400 for every request
    /// advertising it: "input_schema does not support oneOf, allOf, or
    /// anyOf at the top level"), a schema the registry takes (an object
    /// with a rule across its properties). Anthropic gets it without them,
    /// the properties their branches name listed with the others.
    #[test]
    fn anthropic_gets_no_top_level_combinator() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "anyOf": [
                {"required": ["path"]},
                {"properties": {"url": {"type": "string", "description": "Or a URL."}}, "required": ["url"]},
                {"$ref": "#/$defs/byId"}
            ],
            "allOf": [{"properties": {"path": {"type": "integer"}}}],
            "$defs": {"byId": {"properties": {"id": {"type": "integer"}}, "required": ["id"]}}
        });
        let def = definition(Dialect::Anthropic, "open", "Open.", &schema);
        let advertised = &def["input_schema"];
        for key in ["oneOf", "anyOf", "allOf"] {
            assert!(advertised.get(key).is_none(), "{key}: {advertised}");
        }
        assert_eq!(
            advertised["properties"],
            json!({
                "path": {"type": "string"},
                "url": {"type": "string", "description": "Or a URL."},
                "id": {"type": "integer"}
            })
        );
        assert_eq!(advertised["$defs"], schema["$defs"]);
        // The other dialects get the schema as it is.
        assert_eq!(
            definition(Dialect::OpenAiChat, "open", "Open.", &schema)["function"]["parameters"],
            schema
        );
        // A schema without them is given as it is.
        let plain = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        assert_eq!(
            definition(Dialect::Anthropic, "q", "Q.", &plain)["input_schema"],
            plain
        );
    }

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
