use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::validate::ArgValidator;

fn strict(schema: Value) -> Value {
    strict_schema(&schema).unwrap_or_else(|e| panic!("{e}"))
}

fn refused(schema: Value) -> StrictSchemaError {
    strict_schema(&schema).unwrap_err()
}

#[allow(dead_code)]
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Opts {
    /// How deep.
    depth: u32,
    tags: Vec<String>,
    note: Option<String>,
}

#[allow(dead_code)]
#[derive(serde::Deserialize, schemars::JsonSchema)]
enum Mode {
    Read,
    Write,
}

#[allow(dead_code)]
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    /// The file.
    path: String,
    limit: Option<u32>,
    #[serde(default)]
    count: u64,
    /// Options.
    opts: Opts,
    maybe: Option<Opts>,
    list: Vec<Opts>,
    mode: Mode,
}

/// The schema schemars derives for nested structs, arrays, options, a
/// defaulted field and a unit enum, rewritten: every object closed and
/// fully required, the optional non-nullable `count` made nullable, the
/// documented `$ref` replaced by its target, `uint32` / `uint64` gone.
/// (serde_json's maps are ordered by key in this workspace, and so is each
/// `required`: it follows `properties`.)
#[test]
fn a_derived_schema_becomes_strict() {
    let out = strict(crate::schema_of::<Args>());
    let opts = json!({
        "type": "object",
        "properties": {
            "depth": {"type": "integer", "minimum": 0, "description": "How deep."},
            "tags": {"type": "array", "items": {"type": "string"}},
            "note": {"type": ["string", "null"]}
        },
        "required": ["depth", "note", "tags"],
        "additionalProperties": false
    });
    let mut inlined = opts.clone();
    inlined["description"] = json!("Options.");
    assert_eq!(
        out,
        json!({
            "type": "object",
            "$defs": {
                "Mode": {"type": "string", "enum": ["Read", "Write"]},
                "Opts": opts
            },
            "properties": {
                "path": {"type": "string", "description": "The file."},
                "limit": {"type": ["integer", "null"], "minimum": 0},
                "count": {"type": ["integer", "null"], "minimum": 0},
                "opts": inlined,
                "maybe": {"anyOf": [{"$ref": "#/$defs/Opts"}, {"type": "null"}]},
                "list": {"type": "array", "items": {"$ref": "#/$defs/Opts"}},
                "mode": {"$ref": "#/$defs/Mode"}
            },
            "required": ["count", "limit", "list", "maybe", "mode", "opts", "path"],
            "additionalProperties": false
        })
    );
}

#[test]
fn optional_properties_become_unions_with_null() {
    let out = strict(json!({
        "type": "object",
        "properties": {
            "word": {"type": "string", "description": "A word."},
            "kind": {"type": "string", "enum": ["a", "b"]},
            "tag": {"const": "x"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "pair": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
            "nullable": {"type": ["integer", "null"]}
        }
    }));
    assert_eq!(
        out["properties"],
        json!({
            "word": {"type": ["string", "null"], "description": "A word."},
            "kind": {"type": ["string", "null"], "enum": ["a", "b", null]},
            "tag": {"anyOf": [{"const": "x", "type": "string"}, {"type": "null"}]},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            "pair": {
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "properties": {"k": {"type": ["string", "null"]}},
                    "required": ["k"],
                    "additionalProperties": false
                }
            },
            "nullable": {"type": ["integer", "null"]}
        })
    );
    assert_eq!(
        out["required"],
        json!(["either", "kind", "nullable", "pair", "tag", "word"])
    );
}

#[test]
fn unions_intersections_and_references() {
    let out = strict(json!({
        "type": "object",
        "properties": {
            "shape": {"oneOf": [
                {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"]},
                {"type": "string", "enum": ["unit"]}
            ]},
            "one": {"allOf": [{"$ref": "#/$defs/Node"}], "description": "A tree."}
        },
        "required": ["shape", "one"],
        "$defs": {"Node": {
            "type": "object",
            "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                "parent": {"$ref": "#/$defs/Node", "description": "Up."}
            },
            "required": ["children"]
        }}
    }));
    assert_eq!(
        out["properties"]["shape"],
        json!({"anyOf": [
            {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"], "additionalProperties": false},
            {"type": "string", "enum": ["unit"]}
        ]})
    );
    // The single `allOf` merged, its `$ref` beside a description inlined;
    // inside it the recursive reference stays a bare `$ref`.
    let one = &out["properties"]["one"];
    assert_eq!(one["description"], "A tree.");
    assert_eq!(one["additionalProperties"], false);
    assert_eq!(
        one["properties"]["parent"],
        json!({"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]})
    );
    assert_eq!(
        out["$defs"]["Node"]["properties"]["children"],
        json!({"type": "array", "items": {"$ref": "#/$defs/Node"}})
    );
}

#[test]
fn constraints_strict_mode_does_not_take_are_left_out() {
    let out = strict(json!({
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email", "minLength": 3, "maxLength": 99},
            "ratio": {"type": "number", "format": "double", "minimum": 0, "maximum": 1},
            "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true, "maxItems": 5},
            "word": {"type": "string", "pattern": "^[a-z]+$", "default": "x", "examples": ["y"]}
        },
        "required": ["email", "ratio", "ids", "word"],
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args"
    }));
    assert_eq!(
        out,
        json!({
            "type": "object",
            "title": "Args",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "ratio": {"type": "number", "minimum": 0, "maximum": 1},
                "ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 5},
                "word": {"type": "string", "pattern": "^[a-z]+$"}
            },
            "required": ["email", "ids", "ratio", "word"],
            "additionalProperties": false
        })
    );
}

#[test]
fn a_tool_without_arguments_is_an_empty_closed_object() {
    assert_eq!(
        strict(json!({"type": "object"})),
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
}

#[test]
fn missing_types_are_added_where_the_schema_implies_them() {
    let out = strict(json!({
        "type": "object",
        "properties": {
            "e": {"enum": [1, 2.5]},
            "o": {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            "l": {"items": {"type": "boolean"}}
        },
        "required": ["e", "o", "l"]
    }));
    assert_eq!(out["properties"]["e"]["type"], "number");
    assert_eq!(out["properties"]["o"]["type"], "object");
    assert_eq!(out["properties"]["l"]["type"], "array");
}

#[test]
fn schemas_without_a_strict_form_are_refused_with_kind_keyword_and_place() {
    use StrictSchemaErrorKind as K;
    let cases = [
        (
            json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}}),
            K::OpenObject,
            "additionalProperties",
            "properties.m",
        ),
        (
            json!({"type": "object", "properties": {"m": {"type": "object"}}}),
            K::OpenObject,
            "type",
            "properties.m",
        ),
        (
            json!({"type": "object", "properties": {"m": {"type": "object", "patternProperties": {"^x": {}}}}}),
            K::OpenObject,
            "patternProperties",
            "properties.m",
        ),
        (
            json!({"type": "object", "properties": {"t": {"type": "array", "prefixItems": [{"type": "integer"}]}}}),
            K::Tuple,
            "prefixItems",
            "properties.t",
        ),
        (
            json!({"type": "object", "properties": {"any": true}}),
            K::AnyValue,
            "",
            "properties.any",
        ),
        (
            json!({"type": "object", "properties": {"any": {"description": "Anything."}}}),
            K::AnyValue,
            "",
            "properties.any",
        ),
        (
            json!({"type": "object", "properties": {"q": {"type": "string", "not": {"const": ""}}}}),
            K::UnsupportedKeyword,
            "not",
            "properties.q",
        ),
        (
            json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string", "x-vendor": 1}}}}),
            K::UnsupportedKeyword,
            "x-vendor",
            "properties.l.items",
        ),
        (
            json!({"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}, "properties": {}}),
            K::UnsupportedKeyword,
            "if",
            "",
        ),
        (
            json!({"type": "object", "properties": {"u": {"anyOf": [{"type": "string"}, {"allOf": [{"type": "string"}, {"minLength": 2}]}]}}}),
            K::Intersection,
            "allOf",
            "properties.u.anyOf[1]",
        ),
        (
            json!({"type": "object", "properties": {"r": {"$ref": "https://example.com/s.json"}}}),
            K::Reference,
            "https://example.com/s.json",
            "properties.r.$ref",
        ),
        (
            json!({"type": "object", "properties": {"r": {"$ref": "#/$defs/Missing"}}}),
            K::Reference,
            "#/$defs/Missing",
            "properties.r.$ref",
        ),
        (
            json!({"type": "object", "properties": {"k": {"type": "text"}}}),
            K::Malformed,
            "type",
            "properties.k",
        ),
        (
            json!({"type": "object", "anyOf": [{"properties": {}}]}),
            K::Root,
            "type",
            "",
        ),
    ];
    for (schema, kind, keyword, path) in cases {
        let e = refused(schema.clone());
        assert_eq!(
            (e.kind(), e.keyword(), e.path()),
            (kind, keyword, path),
            "{schema}: {e}"
        );
    }
}

#[test]
fn the_error_says_what_and_where() {
    let e = refused(
        json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": true}}}),
    );
    assert_eq!(
        e.to_string(),
        "`additionalProperties` lets an object take properties not listed in `properties`, as a map does; strict mode needs `additionalProperties: false` on every object, at properties.m"
    );
    let e = refused(json!({"type": "object", "not": {}}));
    assert_eq!(
        e.to_string(),
        "OpenAI's strict mode does not take `not`, at the root"
    );
}

/// A schema and an instance of it, with the instance strict mode has the
/// model send for it (every optional property left out sent as `null`).
#[derive(Debug, Clone)]
struct Case {
    schema: Value,
    value: Value,
    strict_value: Value,
}

fn leaf() -> impl Strategy<Value = Case> {
    prop_oneof![
        Just((json!({"type": "string", "minLength": 1}), json!("x"))),
        Just((
            json!({"type": "string", "format": "uuid", "description": "Id."}),
            json!("3f2504e0-4f89-11d3-9a0c-0305e82c3301")
        )),
        Just((
            json!({"type": "integer", "format": "uint32", "minimum": 0}),
            json!(7)
        )),
        Just((json!({"type": "number", "format": "double"}), json!(1.5))),
        Just((json!({"type": "boolean"}), json!(true))),
        Just((json!({"type": "string", "enum": ["a", "b"]}), json!("b"))),
        Just((json!({"type": ["integer", "null"]}), json!(null))),
        Just((json!({"type": ["integer", "null"]}), json!(3))),
        Just((json!({"const": "tag"}), json!("tag"))),
    ]
    .prop_map(|(schema, value)| Case {
        schema,
        strict_value: value.clone(),
        value,
    })
}

/// An object schema over `fields`: each (case, required, present); an
/// optional field may be left out of the instance.
fn object(fields: Vec<(Case, bool, bool)>) -> Case {
    let mut props = serde_json::Map::new();
    let mut required = Vec::new();
    let mut value = serde_json::Map::new();
    let mut strict_value = serde_json::Map::new();
    for (i, (case, req, present)) in fields.into_iter().enumerate() {
        let name = format!("p{i}");
        props.insert(name.clone(), case.schema);
        if req {
            required.push(json!(name));
        }
        if req || present {
            value.insert(name.clone(), case.value);
            strict_value.insert(name, case.strict_value);
        } else {
            strict_value.insert(name, Value::Null);
        }
    }
    Case {
        schema: json!({"type": "object", "properties": props, "required": required}),
        value: Value::Object(value),
        strict_value: Value::Object(strict_value),
    }
}

fn case() -> impl Strategy<Value = Case> {
    let inner = leaf().prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(|items| {
                // An array of the first item's schema, holding copies of it.
                let Some(first) = items.first().cloned() else {
                    return Case {
                        schema: json!({"type": "array", "items": {"type": "string"}}),
                        value: json!([]),
                        strict_value: json!([]),
                    };
                };
                let n = items.len();
                Case {
                    schema: json!({"type": "array", "items": first.schema, "maxItems": 8}),
                    value: Value::Array(vec![first.value; n]),
                    strict_value: Value::Array(vec![first.strict_value; n]),
                }
            }),
            proptest::collection::vec((inner, any::<bool>(), any::<bool>()), 0..4).prop_map(object),
        ]
    });
    proptest::collection::vec((inner, any::<bool>(), any::<bool>()), 0..5).prop_map(object)
}

/// Every object of a strict schema is closed and requires all its
/// properties; no dropped keyword is left.
fn check_strict_shape(node: &Value) {
    match node {
        Value::Object(map) => {
            if let Some(Value::Object(props)) = map.get("properties") {
                assert_eq!(
                    map.get("additionalProperties"),
                    Some(&Value::Bool(false)),
                    "{node}"
                );
                let names: Vec<Value> = props.keys().cloned().map(Value::String).collect();
                assert_eq!(map.get("required"), Some(&Value::Array(names)), "{node}");
            }
            for k in map.keys() {
                assert!(!DROPPED.contains(&k.as_str()), "{k} in {node}");
            }
            if let Some(f) = map.get("format").and_then(Value::as_str) {
                assert!(FORMATS.contains(&f), "{node}");
            }
            map.values().for_each(check_strict_shape);
        }
        Value::Array(items) => items.iter().for_each(check_strict_shape),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// For any schema of nested objects, arrays and optional fields and any
    /// instance of it: the strict schema has the strict shape, rewriting it
    /// again changes nothing, the instance strict mode makes the model send
    /// is valid against it, and with its nulls taken as absent that
    /// instance is the original one again, valid against the tool's own
    /// schema.
    #[test]
    fn strict_schemas_take_what_strict_mode_sends(case in case()) {
        let original = jsonschema::validator_for(&case.schema).unwrap();
        prop_assert!(original.is_valid(&case.value), "{} !~ {}", case.value, case.schema);
        let out = strict_schema(&case.schema).unwrap();
        check_strict_shape(&out);
        prop_assert_eq!(&strict_schema(&out).unwrap(), &out);
        let strict = jsonschema::validator_for(&out).unwrap();
        prop_assert!(strict.is_valid(&case.strict_value), "{} !~ {}", case.strict_value, out);
        let validator = ArgValidator::compile(&case.schema).unwrap();
        let mut sent = case.strict_value.clone();
        validator.absent_nulls(&mut sent);
        let mut expected = case.value.clone();
        validator.absent_nulls(&mut expected);
        prop_assert_eq!(&sent, &expected);
        prop_assert!(validator.check(&sent).is_ok(), "{}", sent);
    }
}
