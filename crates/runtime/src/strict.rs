//! OpenAI's strict mode for function tools (`"strict": true`, structured
//! outputs): [`strict_schema`] rewrites a tool's parameter schema into the
//! subset strict mode takes, or says why it cannot.
//!
//! Strict mode wants every object closed (`additionalProperties: false`)
//! with every property in `required`, an optional one written as a union
//! with `null`, and only a subset of JSON Schema. The rewrite keeps the
//! meaning of the schema with two exceptions, both widening it where the
//! executor still checks the tool's own schema: value constraints strict
//! mode does not take are left out ([`DROPPED`]), and `oneOf` becomes
//! `anyOf`. What cannot be written in the subset without changing which
//! arguments the tool takes (a map, a tuple, `not`, `if` / `then`, an
//! intersection, a value of any type, an unknown keyword) is a
//! [`StrictSchemaError`].

use std::fmt;

use serde_json::{Map, Value, json};

/// Keywords kept as they are (besides the ones rewritten: `type`,
/// `properties`, `required`, `additionalProperties`, `items`, `anyOf`,
/// `oneOf`, `allOf`, `$ref`, `$defs`, `definitions`, `format`): the
/// annotations and assertions OpenAI's strict mode takes.
const KEPT: &[&str] = &[
    "description",
    "title",
    "enum",
    "const",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Keywords left out of a strict schema: annotations, and value
/// constraints strict mode does not take. Leaving one out widens what the
/// model may send; the executor validates the arguments against the tool's
/// own schema, so a value outside it still gets the model a text saying
/// what to fix. (`format` is left out too when its value is not one of
/// [`FORMATS`], as schemars' `uint32` or `double`; `unevaluatedProperties`
/// and `unevaluatedItems` when `false`.)
pub const DROPPED: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$comment",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
];

/// The string formats strict mode takes.
pub const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Annotations that may stand beside a `$ref` whose target cannot be
/// written in its place (a recursive one): left out there.
const ANNOTATIONS: &[&str] = &["description", "title", "default", "examples", "$comment"];

const TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "integer", "string",
];

/// A tool's parameter schema that has no strict-mode form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrictSchemaError {
    kind: StrictSchemaErrorKind,
    keyword: String,
    path: String,
}

/// Why a schema has no strict-mode form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StrictSchemaErrorKind {
    /// A keyword strict mode does not take and that cannot be left out
    /// without changing which arguments are valid (`not`, `if` / `then` /
    /// `else`, `dependentRequired`, `dependentSchemas`), or that this
    /// rewrite does not know.
    UnsupportedKeyword,
    /// An object that takes properties not listed in `properties` (a
    /// map: `additionalProperties` other than `false`, `patternProperties`,
    /// or a nested object schema without `properties`): strict mode closes
    /// every object.
    OpenObject,
    /// A schema that accepts a value of any type (`{}`, `true`,
    /// `serde_json::Value`): strict mode needs a type.
    AnyValue,
    /// Positional array items (`prefixItems`, an `items` array: a Rust
    /// tuple).
    Tuple,
    /// `allOf` of several schemas.
    Intersection,
    /// A `$ref` that is not a JSON pointer into this schema (`#/…`), or
    /// names nothing in it.
    Reference,
    /// A keyword whose value is not what JSON Schema says it is (a `type`
    /// that names no type, `properties` that is not an object, `false` as
    /// a schema).
    Malformed,
    /// The root is not an object schema, or is a union.
    Root,
}

struct Reason<'a>(&'a StrictSchemaError);

/// The rewrite's state: the whole schema (to resolve `$ref`) and the
/// references being written in place, so a recursive one stops.
struct Rewrite<'a> {
    root: &'a Value,
    inlining: Vec<String>,
}

// === impl StrictSchemaError ===

impl StrictSchemaError {
    fn new(kind: StrictSchemaErrorKind, keyword: &str, path: &str) -> Self {
        StrictSchemaError {
            kind,
            keyword: keyword.to_string(),
            path: path.to_string(),
        }
    }

    /// Why.
    pub fn kind(&self) -> StrictSchemaErrorKind {
        self.kind
    }

    /// The keyword at fault (`not`, `additionalProperties`, …; empty for a
    /// schema without a type).
    pub fn keyword(&self) -> &str {
        &self.keyword
    }

    /// Where in the schema, as `properties.filter.anyOf[1]` (empty for the
    /// root).
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Display for StrictSchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() {
            "the root"
        } else {
            &self.path
        };
        write!(f, "{}, at {at}", Reason(self))
    }
}

impl std::error::Error for StrictSchemaError {}

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kw = &self.0.keyword;
        match self.0.kind {
            StrictSchemaErrorKind::UnsupportedKeyword => {
                write!(f, "OpenAI's strict mode does not take `{kw}`")
            }
            StrictSchemaErrorKind::OpenObject if kw == "type" => f.write_str(
                "an object schema without `properties` takes any property, as a map does; strict mode needs every object to list its properties, with `additionalProperties: false`",
            ),
            StrictSchemaErrorKind::OpenObject => write!(
                f,
                "`{kw}` lets an object take properties not listed in `properties`, as a map does; strict mode needs `additionalProperties: false` on every object"
            ),
            StrictSchemaErrorKind::AnyValue => f.write_str(
                "a schema accepting a value of any type has no strict form: strict mode needs a `type`",
            ),
            StrictSchemaErrorKind::Tuple => write!(
                f,
                "positional array items (`{kw}`: a tuple) have no strict form"
            ),
            StrictSchemaErrorKind::Intersection => {
                f.write_str("`allOf` of several schemas has no strict form")
            }
            StrictSchemaErrorKind::Reference => write!(
                f,
                "`$ref` {kw} is not a reference into this schema that names a schema"
            ),
            StrictSchemaErrorKind::Malformed => write!(f, "`{kw}` is not a valid value"),
            StrictSchemaErrorKind::Root => f.write_str(
                "the parameters must be an object schema, not a union, for strict mode",
            ),
        }
    }
}

/// `schema` as OpenAI's strict mode takes it: every object closed
/// (`additionalProperties: false`) with every property in `required`, an
/// optional property (one its object does not require) made a union with
/// `null` (`"type": ["integer", "null"]`, or `anyOf` with `{"type":
/// "null"}`), `oneOf` written `anyOf`, a single `allOf` merged, a `$ref`
/// beside other keywords replaced by its target, a missing `type` added
/// where `properties`, `items`, `enum` or `const` say it, and the keywords
/// in [`DROPPED`] left out. A root without `properties` (a tool without
/// arguments) becomes an empty closed object.
///
/// The executor accepts what strict mode makes the model send for a tool
/// registered with `ToolPolicy::strict`: an optional property sent as
/// `null` counts as absent.
///
/// ```
/// use serde_json::json;
/// use toolwarden_runtime::strict_schema;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "limit": {"type": "integer", "format": "uint32", "minimum": 0},
///         "path": {"type": "string"}
///     },
///     "required": ["path"]
/// });
/// assert_eq!(
///     strict_schema(&schema).unwrap(),
///     json!({
///         "type": "object",
///         "properties": {
///             "limit": {"type": ["integer", "null"], "minimum": 0},
///             "path": {"type": "string"}
///         },
///         "required": ["limit", "path"],
///         "additionalProperties": false
///     })
/// );
/// ```
///
/// Strict mode's limits on size (how many properties, how deep, how many
/// enum values) are the API's to check; this does not.
pub fn strict_schema(schema: &Value) -> Result<Value, StrictSchemaError> {
    let root_ok = schema.get("type").and_then(Value::as_str) == Some("object")
        && schema.get("anyOf").is_none()
        && schema.get("oneOf").is_none();
    if !root_ok {
        return Err(StrictSchemaError::new(
            StrictSchemaErrorKind::Root,
            "type",
            "",
        ));
    }
    let mut root = schema.clone();
    // A root without properties is a tool without arguments.
    if let Some(map) = root.as_object_mut()
        && !map.contains_key("properties")
        && !map.contains_key("additionalProperties")
        && !map.contains_key("patternProperties")
    {
        map.insert("properties".into(), json!({}));
    }
    let mut rewrite = Rewrite {
        root: schema,
        inlining: Vec::new(),
    };
    rewrite.node(&root, "")
}

/// `path` + `.key` (or `key` at the root).
fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `path` + `[i]`.
fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

// === impl Rewrite ===

impl Rewrite<'_> {
    fn node(&mut self, schema: &Value, path: &str) -> Result<Value, StrictSchemaError> {
        use StrictSchemaErrorKind as K;
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(true) => return Err(StrictSchemaError::new(K::AnyValue, "", path)),
            _ => return Err(StrictSchemaError::new(K::Malformed, "false", path)),
        };
        if let Some(reference) = map.get("$ref") {
            return self.reference(map, reference, path);
        }
        if let Some(all) = map.get("allOf") {
            return self.merge_all_of(map, all, path);
        }
        let mut out = Map::new();
        for (key, value) in map {
            let at = || join(path, key);
            match key.as_str() {
                "type" => {
                    check_type(value, path)?;
                    out.insert(key.clone(), value.clone());
                }
                "properties" => {
                    let Value::Object(props) = value else {
                        return Err(StrictSchemaError::new(K::Malformed, key, path));
                    };
                    let required = required_of(map);
                    let mut rewritten = Map::new();
                    for (name, prop) in props {
                        let mut prop = self.node(prop, &join(&at(), name))?;
                        if !required.contains(&name.as_str()) {
                            prop = nullable(prop);
                        }
                        rewritten.insert(name.clone(), prop);
                    }
                    let names: Vec<Value> = rewritten.keys().cloned().map(Value::String).collect();
                    out.insert("properties".into(), Value::Object(rewritten));
                    out.insert("required".into(), Value::Array(names));
                }
                "required" => {}
                "additionalProperties" => {
                    if *value != Value::Bool(false) {
                        return Err(StrictSchemaError::new(K::OpenObject, key, path));
                    }
                }
                "patternProperties" => {
                    return Err(StrictSchemaError::new(K::OpenObject, key, path));
                }
                "unevaluatedProperties" | "unevaluatedItems" if *value == Value::Bool(false) => {}
                "unevaluatedProperties" => {
                    return Err(StrictSchemaError::new(K::OpenObject, key, path));
                }
                "items" => match value {
                    Value::Array(_) => return Err(StrictSchemaError::new(K::Tuple, key, path)),
                    _ => {
                        out.insert(key.clone(), self.node(value, &at())?);
                    }
                },
                "prefixItems" | "additionalItems" | "unevaluatedItems" => {
                    return Err(StrictSchemaError::new(K::Tuple, key, path));
                }
                "anyOf" | "oneOf" => {
                    if map.contains_key("anyOf") && map.contains_key("oneOf") {
                        return Err(StrictSchemaError::new(K::UnsupportedKeyword, "oneOf", path));
                    }
                    let Value::Array(variants) = value else {
                        return Err(StrictSchemaError::new(K::Malformed, key, path));
                    };
                    let mut rewritten = Vec::with_capacity(variants.len());
                    for (i, variant) in variants.iter().enumerate() {
                        rewritten.push(self.node(variant, &index(&at(), i))?);
                    }
                    out.insert("anyOf".into(), Value::Array(rewritten));
                }
                "$defs" | "definitions" => {
                    let Value::Object(defs) = value else {
                        return Err(StrictSchemaError::new(K::Malformed, key, path));
                    };
                    let mut rewritten = Map::new();
                    for (name, def) in defs {
                        rewritten.insert(name.clone(), self.node(def, &join(&at(), name))?);
                    }
                    out.insert(key.clone(), Value::Object(rewritten));
                }
                "format" => {
                    if value.as_str().is_some_and(|f| FORMATS.contains(&f)) {
                        out.insert(key.clone(), value.clone());
                    }
                }
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if DROPPED.contains(&k) => {}
                _ => return Err(StrictSchemaError::new(K::UnsupportedKeyword, key, path)),
            }
        }
        complete(&mut out, map, path)?;
        Ok(Value::Object(out))
    }

    /// A `$ref` alone stays; beside other keywords it is replaced by its
    /// target merged with them (strict mode takes a `$ref` only alone),
    /// unless the target is being replaced already (recursion): then the
    /// annotations beside it are left out, and anything else is refused.
    fn reference(
        &mut self,
        map: &Map<String, Value>,
        reference: &Value,
        path: &str,
    ) -> Result<Value, StrictSchemaError> {
        use StrictSchemaErrorKind as K;
        let at = join(path, "$ref");
        let Some(pointer) = reference.as_str() else {
            return Err(StrictSchemaError::new(K::Malformed, "$ref", path));
        };
        let target = pointer
            .strip_prefix('#')
            .and_then(|p| self.root.pointer(p))
            .ok_or_else(|| StrictSchemaError::new(K::Reference, pointer, &at))?;
        if map.len() == 1 {
            return Ok(json!({ "$ref": pointer }));
        }
        if self.inlining.iter().any(|r| r == pointer) {
            if let Some(other) = map
                .keys()
                .find(|k| *k != "$ref" && !ANNOTATIONS.contains(&k.as_str()))
            {
                return Err(StrictSchemaError::new(K::UnsupportedKeyword, other, path));
            }
            return Ok(json!({ "$ref": pointer }));
        }
        let Value::Object(target) = target else {
            return Err(StrictSchemaError::new(K::Reference, pointer, &at));
        };
        let mut merged = target.clone();
        for (k, v) in map {
            if k != "$ref" {
                merged.insert(k.clone(), v.clone());
            }
        }
        self.inlining.push(pointer.to_string());
        let out = self.node(&Value::Object(merged), path);
        self.inlining.pop();
        out
    }

    /// `allOf` of one schema is merged into the schema holding it, when
    /// they share no keyword; anything else is an intersection.
    fn merge_all_of(
        &mut self,
        map: &Map<String, Value>,
        all: &Value,
        path: &str,
    ) -> Result<Value, StrictSchemaError> {
        let intersection =
            || StrictSchemaError::new(StrictSchemaErrorKind::Intersection, "allOf", path);
        let Value::Array(members) = all else {
            return Err(StrictSchemaError::new(
                StrictSchemaErrorKind::Malformed,
                "allOf",
                path,
            ));
        };
        let [Value::Object(only)] = members.as_slice() else {
            return Err(intersection());
        };
        let mut merged = map.clone();
        merged.remove("allOf");
        for (k, v) in only {
            if merged.insert(k.clone(), v.clone()).is_some() {
                return Err(intersection());
            }
        }
        self.node(&Value::Object(merged), path)
    }
}

/// A `type` names JSON types.
fn check_type(value: &Value, path: &str) -> Result<(), StrictSchemaError> {
    let known = |v: &Value| v.as_str().is_some_and(|t| TYPES.contains(&t));
    let ok = match value {
        Value::String(_) => known(value),
        Value::Array(types) => !types.is_empty() && types.iter().all(known),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(StrictSchemaError::new(
            StrictSchemaErrorKind::Malformed,
            "type",
            path,
        ))
    }
}

/// The names in a schema's `required`.
fn required_of(map: &Map<String, Value>) -> Vec<&str> {
    map.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether `schema` has `t` among its types.
fn has_type(schema: &Map<String, Value>, t: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(s)) => s == t,
        Some(Value::Array(ts)) => ts.iter().any(|x| x == t),
        _ => false,
    }
}

/// After the keywords are rewritten: the `type` that `properties`, `items`,
/// `enum` or `const` imply when it is missing, and every object closed
/// (an object schema without `properties` takes any property: refused).
fn complete(
    out: &mut Map<String, Value>,
    original: &Map<String, Value>,
    path: &str,
) -> Result<(), StrictSchemaError> {
    use StrictSchemaErrorKind as K;
    if !out.contains_key("type") && !out.contains_key("anyOf") {
        let implied = if out.contains_key("properties") {
            Some(json!("object"))
        } else if out.contains_key("items") {
            Some(json!("array"))
        } else if let Some(Value::Array(values)) = out.get("enum") {
            types_of(values)
        } else {
            out.get("const")
                .and_then(|c| types_of(std::slice::from_ref(c)))
        };
        match implied {
            Some(t) => {
                out.insert("type".into(), t);
            }
            None => return Err(StrictSchemaError::new(K::AnyValue, "", path)),
        }
    }
    if has_type(out, "object") {
        if !out.contains_key("properties") {
            if original.get("additionalProperties") != Some(&Value::Bool(false)) {
                return Err(StrictSchemaError::new(K::OpenObject, "type", path));
            }
            out.insert("properties".into(), json!({}));
            out.insert("required".into(), json!([]));
        }
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    if has_type(out, "array") && !out.contains_key("items") {
        return Err(StrictSchemaError::new(K::AnyValue, "items", path));
    }
    Ok(())
}

/// The JSON types of `values`: one name, or an array of them.
fn types_of(values: &[Value]) -> Option<Value> {
    let mut types: Vec<&str> = Vec::new();
    for v in values {
        let t = crate::validate::type_name(v);
        if !types.contains(&t) {
            types.push(t);
        }
    }
    if types.contains(&"number") {
        types.retain(|t| *t != "integer");
    }
    match types.as_slice() {
        [] => None,
        [one] => Some(json!(one)),
        _ => Some(json!(types)),
    }
}

/// Whether a (rewritten) schema accepts `null` as it stands (a `$ref` is
/// not looked into: it is made a union with `null` all the same).
fn accepts_null(schema: &Map<String, Value>) -> bool {
    if schema.contains_key("$ref") {
        return false;
    }
    let by_type = !schema.contains_key("type") || has_type(schema, "null");
    let by_enum = schema
        .get("enum")
        .and_then(Value::as_array)
        .is_none_or(|values| values.contains(&Value::Null));
    let by_const = schema.get("const").is_none_or(Value::is_null);
    let by_any_of = schema
        .get("anyOf")
        .and_then(Value::as_array)
        .is_none_or(|vs| vs.iter().filter_map(Value::as_object).any(accepts_null));
    by_type && by_enum && by_const && by_any_of
}

/// `schema` (rewritten) as a union with `null`: `null` added to its `type`
/// (and `enum`), a `{"type": "null"}` variant added to its `anyOf`, or
/// else the schema and `{"type": "null"}` in an `anyOf` that carries its
/// description and title.
fn nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    if accepts_null(&map) {
        return Value::Object(map);
    }
    let [any_of, ty, en, co] = ["anyOf", "type", "enum", "const"].map(|k| map.contains_key(k));
    if any_of && !ty && !en && !co {
        if let Some(Value::Array(variants)) = map.get_mut("anyOf") {
            variants.push(json!({"type": "null"}));
        }
        return Value::Object(map);
    }
    if ty && !any_of && !co {
        let types = match map.remove("type") {
            Some(Value::Array(mut ts)) => {
                ts.push(json!("null"));
                ts
            }
            Some(t) => vec![t, json!("null")],
            None => vec![json!("null")],
        };
        map.insert("type".into(), Value::Array(types));
        if let Some(Value::Array(values)) = map.get_mut("enum") {
            values.push(Value::Null);
        }
        return Value::Object(map);
    }
    let mut outer = Map::new();
    for k in ["description", "title"] {
        if let Some(v) = map.remove(k) {
            outer.insert(k.into(), v);
        }
    }
    outer.insert(
        "anyOf".into(),
        json!([Value::Object(map), {"type": "null"}]),
    );
    Value::Object(outer)
}

#[cfg(test)]
mod tests;
