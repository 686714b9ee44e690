//! Integers written with a zero fraction (`5.0`). JSON Schema counts them
//! as integers, but jsonschema's check of a type list (`["integer",
//! "null"]`, an `Option<u32>`) does not, nor do serde's integer types. So
//! where the tool's schema says `integer`, such a number is rewritten as
//! the integer it is before the arguments are validated and handed over;
//! everywhere else (a `number`, a free-form value) it is left as sent.

use serde_json::{Map, Number, Value};

/// How deep schema and arguments are followed (through `$ref`s and
/// `allOf` / `anyOf` / `oneOf` too): a recursive schema ends here.
const MAX_DEPTH: u32 = 128;

/// How many (schema, value) pairs one call's arguments may visit: a union
/// whose branches refer back to it (`{"anyOf":[{"$ref":"#"},{"$ref":"#"}]}`)
/// doubles the walk at each level, and the depth alone would let it run
/// 2^128 steps.
const MAX_VISITS: u32 = 100_000;

/// Rewrite as integers the numbers with a zero fraction in `args` where
/// `schema` (resolving local `$ref`s against itself) says `integer`.
pub(crate) fn write_integers(args: &mut Value, schema: &Value) {
    if has_integral_float(args, 0) {
        let mut visits = MAX_VISITS;
        walk(args, schema, schema, 0, &mut visits);
    }
}

/// Whether `v` holds a float with a zero fraction anywhere: most arguments
/// hold none, and then the schema is not walked.
fn has_integral_float(v: &Value, depth: u32) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match v {
        Value::Number(n) => as_integer(n).is_some(),
        Value::Array(items) => items.iter().any(|i| has_integral_float(i, depth + 1)),
        Value::Object(map) => map.values().any(|i| has_integral_float(i, depth + 1)),
        _ => false,
    }
}

/// `n` as an integer, if it is a float with a zero fraction that fits one.
fn as_integer(n: &Number) -> Option<Number> {
    if !n.is_f64() {
        return None;
    }
    let f = n.as_f64()?;
    // 2^64 and -2^63, exactly representable: the bounds of u64 and i64.
    if f.fract() != 0.0
        || !(-9_223_372_036_854_775_808.0..18_446_744_073_709_551_616.0).contains(&f)
    {
        return None;
    }
    Some(if f >= 0.0 {
        Number::from(f as u64)
    } else {
        Number::from(f as i64)
    })
}

fn declares_integer(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    }
}

fn walk(value: &mut Value, schema: &Value, root: &Value, depth: u32, visits: &mut u32) {
    let Value::Object(schema) = schema else {
        return; // `true` / `false`: nothing declared
    };
    if depth > MAX_DEPTH || *visits == 0 {
        return;
    }
    *visits -= 1;
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| super::local_ref(root, r))
    {
        walk(value, target, root, depth + 1, visits);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for branch in branches {
                walk(value, branch, root, depth + 1, visits);
            }
        }
    }
    match value {
        Value::Number(n) if declares_integer(schema) => {
            if let Some(i) = as_integer(n) {
                *n = i;
            }
        }
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            for (name, v) in map.iter_mut() {
                if let Some(sub) = properties.and_then(|p| p.get(name)).or(additional) {
                    walk(v, sub, root, depth + 1, visits);
                }
            }
        }
        Value::Array(items) => {
            let prefix = schema.get("prefixItems").and_then(Value::as_array);
            for (i, item) in items.iter_mut().enumerate() {
                let sub = match (prefix.and_then(|p| p.get(i)), schema.get("items")) {
                    (Some(sub), _) => Some(sub),
                    // The tuple form of draft 7 and earlier.
                    (None, Some(Value::Array(tuple))) => tuple.get(i),
                    // Past the prefix (or without one): `items` applies.
                    (None, Some(sub)) => Some(sub),
                    (None, None) => None,
                };
                if let Some(sub) = sub {
                    walk(item, sub, root, depth + 1, visits);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn written(mut args: Value, schema: Value) -> Value {
        write_integers(&mut args, &schema);
        args
    }

    #[test]
    fn only_where_the_schema_says_integer() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"]},
                "x": {"type": "number"},
                "list": {"type": "array", "items": {"type": "integer"}},
                "pair": {"prefixItems": [{"type": "integer"}, {"type": "number"}]},
                "opts": {"$ref": "#/$defs/Opts"},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "any": true
            },
            "additionalProperties": {"type": "integer"},
            "$defs": {"Opts": {"type": "object", "properties": {"depth": {"type": "integer"}}}}
        });
        let args = json!({
            "n": 5.0, "x": 2.0, "list": [1.0, -2.0, 3], "pair": [4.0, 4.0],
            "opts": {"depth": 2.0}, "either": 6.0, "any": 1.0, "extra": 8.0
        });
        assert_eq!(
            written(args, schema),
            json!({
                "n": 5, "x": 2.0, "list": [1, -2, 3], "pair": [4, 4.0],
                "opts": {"depth": 2}, "either": 6, "any": 1.0, "extra": 8
            })
        );
    }

    #[test]
    fn fractions_and_out_of_range_numbers_stay() {
        let schema = json!({"type": "array", "items": {"type": "integer"}});
        let args = json!([5.5, 1e300, -0.0, 18446744073709551615u64]);
        assert_eq!(
            written(args, schema),
            json!([5.5, 1e300, 0, 18446744073709551615u64])
        );
    }

    #[test]
    fn a_recursive_schema_ends() {
        let schema = json!({"$ref": "#", "type": "integer"});
        assert_eq!(written(json!(3.0), schema), json!(3));
        let schema = json!({"anyOf": [{"$ref": "#"}]});
        assert_eq!(written(json!(3.0), schema), json!(3.0));
        // Each level doubles: bounded by the visits, not only the depth.
        let schema = json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}]});
        let started = std::time::Instant::now();
        assert_eq!(written(json!(3.0), schema), json!(3.0));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
