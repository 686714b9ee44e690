//! Arguments: parse the model's JSON text, write `5.0` as `5` where the
//! schema says `integer` (`integers.rs`), validate it against the tool's
//! schema (compiled once, at registration) and turn every violation into a
//! sentence the model can act on (`Missing required parameter: path`).

use jsonschema::{
    JsonType, ValidationError, Validator, error::TypeKind, error::ValidationErrorKind,
};
use serde_json::Value;

mod integers;
mod nulls;

/// At most this many violations are reported to the model at once.
const MAX_MESSAGES: usize = 8;

/// A tool's argument schema, compiled.
pub(crate) struct ArgValidator {
    validator: Validator,
    schema: Value,
}

// === impl ArgValidator ===

impl ArgValidator {
    /// Compile `schema`; the error says why it is not a usable schema. It
    /// must be an object schema (`"type": "object"`): the arguments are a
    /// JSON object, and what providers accept as a tool's parameters.
    pub(crate) fn compile(schema: &Value) -> Result<Self, String> {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(
                r#"the parameters must be an object schema ("type": "object"), as the arguments are a JSON object"#
                    .to_string(),
            );
        }
        let validator = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
        Ok(ArgValidator {
            validator,
            schema: schema.clone(),
        })
    }

    /// Rewrite as integers the numbers with a zero fraction (`5.0`) where
    /// the schema says `integer`: JSON Schema counts them as integers, but
    /// the validator's type lists and serde's integer types do not.
    pub(crate) fn write_integers(&self, args: &mut Value) {
        integers::write_integers(args, &self.schema);
    }

    /// Remove the optional properties sent as `null` (for a tool registered
    /// strict, whose strict schema has the model send them): see
    /// `nulls.rs`.
    pub(crate) fn absent_nulls(&self, args: &mut Value) {
        nulls::absent_nulls(args, &self.schema);
    }

    /// `Ok` when `args` is valid; otherwise the model-facing text.
    pub(crate) fn check(&self, args: &Value) -> Result<(), String> {
        if self.validator.is_valid(args) {
            return Ok(());
        }
        let mut messages: Vec<String> = Vec::new();
        for error in self.validator.iter_errors(args) {
            let text = describe(&error, &self.schema);
            if !messages.contains(&text) {
                messages.push(text);
            }
            if messages.len() == MAX_MESSAGES {
                break;
            }
        }
        // Missing parameters first: the most direct thing to fix.
        messages.sort_by_key(|m| !m.starts_with("Missing required parameter"));
        if messages.is_empty() {
            messages.push("The arguments do not match the tool's schema".to_string());
        }
        Err(messages.join("; "))
    }
}

impl std::fmt::Debug for ArgValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgValidator").finish_non_exhaustive()
    }
}

/// Parse the model's argument text. Empty text means no arguments (`{}`),
/// as several models send for tools without parameters.
pub(crate) fn parse_arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    serde_json::from_str(raw).map_err(|e| {
        format!(
            "The arguments are not valid JSON ({e}). Send the arguments as a single JSON object."
        )
    })
}

/// `/a/b/0` → `a.b[0]`; empty → `""`.
fn display_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(&seg);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

/// JSON Schema's name for the type of `v` (`integer` for a whole number).
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn expected_types(kind: &TypeKind) -> String {
    let names: Vec<String> = match kind {
        TypeKind::Single(t) => vec![t.to_string()],
        TypeKind::Multiple(set) => set.iter().map(|t: JsonType| t.to_string()).collect(),
    };
    names.join(" or ")
}

/// The schema a local `$ref` (`#/$defs/Opts`) names in `root`.
fn local_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    root.pointer(reference.strip_prefix('#')?)
}

/// The schema node at `path`, an error's schema path: a JSON pointer that
/// may pass through `$ref` keywords (`/properties/opts/$ref/properties/…`),
/// each followed to the schema it names.
fn schema_at<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut node = root;
    for seg in path.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(map) if seg == "$ref" => local_ref(root, map.get("$ref")?.as_str()?)?,
            Value::Object(map) => map.get(&seg)?,
            Value::Array(items) => items.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

/// Whether the schema node holding the failing keyword declares `type`
/// `integer` (alone or among others, as in `["integer", "null"]`).
fn declares_integer(schema: &Value, schema_path: &str) -> bool {
    let Some(cut) = schema_path.rfind('/') else {
        return false;
    };
    match schema_at(schema, &schema_path[..cut]).and_then(|n| n.get("type")) {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    }
}

fn is_number(v: &Value, n: f64) -> bool {
    v.as_f64() == Some(n)
}

fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        s.truncate(crate::text::clip(&s, max).len());
        s.push('…');
    }
    s
}

/// One violation as a sentence.
fn describe(error: &ValidationError<'_>, schema: &Value) -> String {
    let path = display_path(error.instance_path.as_str());
    let prefix = |p: &str| {
        if p.is_empty() {
            String::new()
        } else {
            format!("{p}.")
        }
    };
    let invalid = |what: String| {
        if path.is_empty() {
            format!("Invalid arguments: {what}")
        } else {
            format!("Invalid value for '{path}': {what}")
        }
    };
    let integer = declares_integer(schema, error.schema_path.as_str());
    match &error.kind {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            format!("Missing required parameter: {}{name}", prefix(&path))
        }
        ValidationErrorKind::Type { kind } if path.is_empty() => format!(
            "The arguments must be a JSON {}, not {}",
            expected_types(kind),
            type_name(&error.instance)
        ),
        ValidationErrorKind::Type { kind } => format!(
            "Invalid type for '{path}': expected {}, got {}",
            expected_types(kind),
            type_name(&error.instance)
        ),
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let names = unexpected.join(", ");
            if path.is_empty() {
                format!("Unknown parameter: {names}")
            } else {
                format!("Unknown field in '{path}': {names}")
            }
        }
        ValidationErrorKind::Minimum { limit } if integer && is_number(limit, 1.0) => {
            invalid("must be a positive integer".into())
        }
        ValidationErrorKind::Minimum { limit } if integer && is_number(limit, 0.0) => {
            invalid("must be a non-negative integer".into())
        }
        ValidationErrorKind::ExclusiveMinimum { limit } if integer && is_number(limit, 0.0) => {
            invalid("must be a positive integer".into())
        }
        ValidationErrorKind::Minimum { limit } => invalid(format!("must be at least {limit}")),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            invalid(format!("must be greater than {limit}"))
        }
        ValidationErrorKind::Maximum { limit } => invalid(format!("must be at most {limit}")),
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            invalid(format!("must be less than {limit}"))
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            invalid(format!("must be a multiple of {multiple_of}"))
        }
        ValidationErrorKind::Enum { options } => {
            let list = match options {
                Value::Array(items) => items
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            };
            invalid(truncate(format!("must be one of {list}"), 300))
        }
        ValidationErrorKind::Constant { expected_value } => {
            invalid(truncate(format!("must be {expected_value}"), 300))
        }
        ValidationErrorKind::MinLength { limit } => {
            invalid(format!("must be at least {limit} character(s) long"))
        }
        ValidationErrorKind::MaxLength { limit } => {
            invalid(format!("must be at most {limit} character(s) long"))
        }
        ValidationErrorKind::MinItems { limit } => {
            invalid(format!("must have at least {limit} item(s)"))
        }
        ValidationErrorKind::MaxItems { limit } => {
            invalid(format!("must have at most {limit} item(s)"))
        }
        ValidationErrorKind::MinProperties { limit } => {
            invalid(format!("must have at least {limit} field(s)"))
        }
        ValidationErrorKind::MaxProperties { limit } => {
            invalid(format!("must have at most {limit} field(s)"))
        }
        ValidationErrorKind::UniqueItems => invalid("must not contain duplicate items".into()),
        ValidationErrorKind::Pattern { pattern } => {
            invalid(truncate(format!("must match the pattern {pattern}"), 300))
        }
        ValidationErrorKind::Format { format } => invalid(format!("must be a valid {format}")),
        ValidationErrorKind::Custom { message } => invalid(truncate(message.clone(), 300)),
        _ => invalid(truncate(error.masked().to_string(), 300)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator() -> ArgValidator {
        ArgValidator::compile(&json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "limit": {"type": "integer", "minimum": 1},
                "offset": {"type": "integer", "minimum": 0},
                "mode": {"enum": ["read", "write"]},
                "opts": {
                    "type": "object",
                    "properties": {"depth": {"type": "integer", "maximum": 5}},
                    "required": ["depth"],
                    "additionalProperties": false
                }
            },
            "required": ["path"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    fn check(args: Value) -> String {
        validator().check(&args).unwrap_err()
    }

    #[test]
    fn valid_arguments_pass() {
        assert!(validator().check(&json!({"path": "a", "limit": 3})).is_ok());
    }

    #[test]
    fn missing_required() {
        assert_eq!(check(json!({})), "Missing required parameter: path");
        assert_eq!(
            check(json!({"path": "a", "opts": {}})),
            "Missing required parameter: opts.depth"
        );
    }

    #[test]
    fn positive_and_non_negative_integers() {
        assert_eq!(
            check(json!({"path": "a", "limit": 0})),
            "Invalid value for 'limit': must be a positive integer"
        );
        assert_eq!(
            check(json!({"path": "a", "offset": -1})),
            "Invalid value for 'offset': must be a non-negative integer"
        );
        assert_eq!(
            check(json!({"path": "a", "opts": {"depth": 9}})),
            "Invalid value for 'opts.depth': must be at most 5"
        );
    }

    /// Regression: the error's schema path runs through `$ref` (a nested
    /// struct derived by schemars), which a plain JSON pointer into the
    /// schema cannot follow, so the integer wording was lost.
    #[test]
    fn integers_behind_a_ref_keep_their_wording() {
        let v = ArgValidator::compile(&json!({
            "type": "object",
            "properties": {"opts": {"$ref": "#/$defs/Opts"}},
            "$defs": {"Opts": {
                "type": "object",
                "properties": {"depth": {"type": "integer", "minimum": 1}}
            }}
        }))
        .unwrap();
        assert_eq!(
            v.check(&json!({"opts": {"depth": 0}})).unwrap_err(),
            "Invalid value for 'opts.depth': must be a positive integer"
        );
    }

    #[test]
    fn types_enums_unknown_fields() {
        assert_eq!(
            check(json!({"path": "a", "limit": "ten"})),
            "Invalid type for 'limit': expected integer, got string"
        );
        assert_eq!(
            check(json!({"path": "a", "mode": "delete"})),
            "Invalid value for 'mode': must be one of \"read\", \"write\""
        );
        assert_eq!(
            check(json!({"path": "a", "pth": 1})),
            "Unknown parameter: pth"
        );
        assert_eq!(
            check(json!([1])),
            "The arguments must be a JSON object, not array"
        );
        assert_eq!(
            check(json!({"path": ""})),
            "Invalid value for 'path': must be at least 1 character(s) long"
        );
    }

    #[test]
    fn several_violations_are_all_reported() {
        let msg = check(json!({"limit": 0}));
        assert!(msg.contains("Missing required parameter: path"), "{msg}");
        assert!(msg.contains("'limit': must be a positive integer"), "{msg}");
    }

    #[test]
    fn malformed_json_says_where() {
        let err = parse_arguments(r#"{"path": "a" "limit": 2}"#).unwrap_err();
        assert!(err.starts_with("The arguments are not valid JSON"), "{err}");
        assert!(err.contains("line 1 column 14"), "{err}");
        assert_eq!(parse_arguments("  ").unwrap(), json!({}));
    }

    #[test]
    fn paths_are_readable() {
        assert_eq!(display_path("/a/b~1c/0/d"), "a.b/c[0].d");
        assert_eq!(display_path(""), "");
    }

    #[test]
    fn bad_schema_is_rejected() {
        let bad = json!({"type": "object", "properties": {"a": {"type": 12}}});
        assert!(ArgValidator::compile(&bad).is_err());
    }
}
