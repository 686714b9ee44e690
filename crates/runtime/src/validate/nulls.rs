//! Optional properties sent as `null`, for a tool registered strict: its
//! strict schema lists every property as required, an optional one as a
//! union with `null`, so the model sends `null` where it means "not
//! given". Removing those keys before validation gives the tool what it
//! would have got had the model left them out.

use serde_json::Value;

/// How many schemas (`$ref`, `allOf`, a union's variant) the walk may pass
/// through without going down into the arguments: their depth bounds the
/// walk otherwise, a chain of references not.
const MAX_HOPS: usize = 32;

/// Remove from `args` every property that is `null` and that its object's
/// schema (in the tool's own `schema`) lists in `properties` but not in
/// `required`, at every depth: properties, array items, `$ref`, `allOf`,
/// and the one `anyOf` / `oneOf` variant the object fits (see [`fits`]);
/// where no variant, or more than one, fits, the nulls stay as sent.
pub(crate) fn absent_nulls(args: &mut Value, schema: &Value) {
    walk(args, schema, schema, 0);
}

fn walk(args: &mut Value, node: &Value, root: &Value, hops: usize) {
    if hops > MAX_HOPS {
        return;
    }
    let Some(map) = node.as_object() else {
        return;
    };
    if let Some(target) = map.get("$ref").and_then(|r| resolve(root, r)) {
        walk(args, target, root, hops + 1);
    }
    if let Some(Value::Array(all)) = map.get("allOf") {
        for member in all {
            walk(args, member, root, hops + 1);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(variants)) = map.get(key) {
            let mut fitting = variants.iter().filter(|v| fits(args, v, root));
            if let (Some(only), None) = (fitting.next(), fitting.next()) {
                walk(args, only, root, hops + 1);
            }
        }
    }
    match args {
        Value::Object(fields) => {
            let Some(Value::Object(props)) = map.get("properties") else {
                return;
            };
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            fields.retain(|name, value| {
                !(value.is_null() && props.contains_key(name) && !required.contains(&name.as_str()))
            });
            for (name, value) in fields.iter_mut() {
                if let Some(prop) = props.get(name) {
                    walk(value, prop, root, 0);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = map.get("items").filter(|i| i.is_object()) {
                for value in items {
                    walk(value, item, root, 0);
                }
            }
        }
        _ => {}
    }
}

/// The schema a local `$ref` names.
fn resolve<'a>(root: &'a Value, reference: &Value) -> Option<&'a Value> {
    root.pointer(reference.as_str()?.strip_prefix('#')?)
}

/// Whether a union's variant is the one `args` was written for: its type
/// admits the value's, and for an object, each key is one of its
/// `properties` and each of its properties with a `const` (a tag) that the
/// object has holds that value.
fn fits(args: &Value, variant: &Value, root: &Value) -> bool {
    let mut variant = variant;
    for _ in 0..8 {
        match variant.get("$ref").and_then(|r| resolve(root, r)) {
            Some(target) => variant = target,
            None => break,
        }
    }
    let Some(map) = variant.as_object() else {
        return false;
    };
    let kind = match args {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let admits = |t: &Value| t == kind || (kind == "number" && t == "integer");
    let typed_ok = match map.get("type") {
        Some(Value::String(t)) => admits(&Value::String(t.clone())),
        Some(Value::Array(ts)) => ts.iter().any(admits),
        _ => true,
    };
    if !typed_ok {
        return false;
    }
    let (Value::Object(fields), Some(Value::Object(props))) = (args, map.get("properties")) else {
        return true;
    };
    fields.iter().all(|(name, value)| {
        props
            .get(name)
            .is_some_and(|p| p.get("const").is_none_or(|c| c == value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stripped(mut args: Value, schema: Value) -> Value {
        absent_nulls(&mut args, &schema);
        args
    }

    #[test]
    fn optional_nulls_go_required_ones_stay() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["path"]
        });
        assert_eq!(
            stripped(json!({"path": null, "limit": null}), schema),
            json!({"path": null})
        );
    }

    #[test]
    fn nested_objects_arrays_and_refs() {
        let schema = json!({
            "type": "object",
            "properties": {
                "opts": {"$ref": "#/$defs/Opts"},
                "list": {"type": "array", "items": {"$ref": "#/$defs/Opts"}}
            },
            "$defs": {"Opts": {
                "type": "object",
                "properties": {"depth": {"type": "integer"}, "tag": {"type": "string"}},
                "required": ["depth"]
            }}
        });
        assert_eq!(
            stripped(
                json!({"opts": {"depth": 1, "tag": null}, "list": [{"depth": null, "tag": null}]}),
                schema
            ),
            json!({"opts": {"depth": 1}, "list": [{"depth": null}]})
        );
    }

    #[test]
    fn the_union_variant_is_found_by_keys_and_tags() {
        let schema = json!({
            "type": "object",
            "properties": {"shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind"]},
                {"type": "object", "properties": {"kind": {"const": "b"}, "x": {"type": "integer"}}, "required": ["kind", "x"]}
            ]}},
            "required": ["shape"]
        });
        assert_eq!(
            stripped(json!({"shape": {"kind": "a", "x": null}}), schema.clone()),
            json!({"shape": {"kind": "a"}})
        );
        assert_eq!(
            stripped(json!({"shape": {"kind": "b", "x": null}}), schema.clone()),
            json!({"shape": {"kind": "b", "x": null}})
        );
        // Two variants fit: the nulls stay.
        assert_eq!(
            stripped(json!({"shape": {"x": null}}), schema),
            json!({"shape": {"x": null}})
        );
    }

    #[test]
    fn a_reference_to_itself_ends() {
        let schema = json!({"$ref": "#", "type": "object"});
        assert_eq!(stripped(json!({"a": null}), schema), json!({"a": null}));
    }
}
