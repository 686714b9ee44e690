use serde_json::json;

use super::*;
use crate::{BoxError, tool_fn};

fn noop(name: &'static str) -> impl Tool {
    tool_fn(
        name,
        "Does nothing.",
        json!({"type": "object"}),
        |_a, _c| async { Ok::<_, BoxError>(Value::Null) },
    )
}

#[test]
fn names_aliases_and_states() {
    let r = Registry::new();
    r.register(noop("read_file")).unwrap();
    r.register(noop("write_file")).unwrap();
    assert_eq!(
        r.register(noop("read_file")).unwrap_err().kind(),
        RegistryErrorKind::Duplicate
    );
    r.alias("fs.read", "read_file").unwrap();
    assert_eq!(
        r.alias("fs.read", "write_file").unwrap_err().kind(),
        RegistryErrorKind::Duplicate
    );
    assert_eq!(
        r.alias("x", "nope").unwrap_err().kind(),
        RegistryErrorKind::UnknownTool
    );
    assert_eq!(&*r.resolve("fs.read").unwrap().name, "read_file");

    r.pause("fs.read").unwrap();
    assert_eq!(r.state("read_file"), Some(ToolState::Paused));
    assert_eq!(r.available(), vec!["write_file"]);
    r.disable("write_file").unwrap();
    assert_eq!(
        r.not_available_message("nope"),
        "Tool 'nope' is not available. No tools are available."
    );
    r.enable("read_file").unwrap();
    assert_eq!(
        r.not_available_message("nope"),
        "Tool 'nope' is not available. Available tools: read_file."
    );
}

#[test]
fn definitions_leave_out_disabled_tools_but_keep_paused_ones() {
    let r = Registry::new();
    r.register(noop("a")).unwrap();
    r.register(noop("b")).unwrap();
    r.register(noop("c")).unwrap();
    r.disable("b").unwrap();
    r.pause("c").unwrap();
    let defs = r.definitions(Dialect::Anthropic);
    let names: Vec<&str> = defs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["a", "c"]);
}

#[test]
fn bad_names_and_schemas_are_rejected() {
    let r = Registry::new();
    assert_eq!(
        r.register(noop("has space")).unwrap_err().kind(),
        RegistryErrorKind::InvalidName
    );
    assert_eq!(
        r.register(noop("")).unwrap_err().kind(),
        RegistryErrorKind::InvalidName
    );
    // Regression: Vertex AI's Gemini refuses a function name that does not
    // start with a letter or an underscore (400 on every request that
    // advertises it); the others take it.
    for name in ["1password", "-x", "3d_render"] {
        let err = r.register(noop(name)).unwrap_err();
        assert_eq!(err.kind(), RegistryErrorKind::InvalidName, "{name}");
        assert!(err.to_string().contains("letter or '_'"), "{err}");
    }
    r.register(noop("_private")).unwrap();
    r.register(noop("x-1")).unwrap();
    r.remove("_private").unwrap();
    r.remove("x-1").unwrap();
    let bad = tool_fn("bad", "Bad schema.", json!({"type": 5}), |_a, _c| async {
        Ok::<_, BoxError>(Value::Null)
    });
    let err = r.register(bad).unwrap_err();
    assert_eq!(err.kind(), RegistryErrorKind::InvalidSchema);
    assert!(err.to_string().contains("'bad'"), "{err}");
    assert!(r.is_empty());
}

/// Regression: a fallback naming no tool, or the tool itself, was only
/// found out when a call failed.
#[test]
fn a_fallback_tool_must_be_registered_first_and_not_be_the_tool() {
    use crate::{Fallback, ToolPolicy};
    let r = Registry::new();
    let policy = |name: &str| ToolPolicy::new().fallback(Fallback::tool(name.to_string()));
    let err = r.register_with(noop("live"), policy("cache")).unwrap_err();
    assert_eq!(err.kind(), RegistryErrorKind::InvalidFallback);
    assert_eq!(
        err.to_string(),
        "invalid fallback for tool: 'live' (fallback tool 'cache' is not registered; register it first)"
    );
    let err = r.register_with(noop("live"), policy("live")).unwrap_err();
    assert_eq!(err.kind(), RegistryErrorKind::InvalidFallback);
    assert!(err.to_string().contains("its own fallback"), "{err}");
    r.register(noop("cache")).unwrap();
    r.alias("cached", "cache").unwrap();
    r.register_with(noop("live"), policy("cached")).unwrap();
}

/// Regression: a schema without `"type": "object"` was accepted, and then
/// arguments such as `null`, `[1]` or `"x"` validated against it and
/// reached the tool.
#[test]
fn parameters_must_be_an_object_schema() {
    let with = |schema: Value| {
        tool_fn("t", "T.", schema, |_a, _c| async {
            Ok::<_, BoxError>(Value::Null)
        })
    };
    for schema in [
        json!({"properties": {"a": {"type": "string"}}, "required": ["a"]}),
        json!({"type": "array"}),
        json!({"type": ["object", "null"]}),
        json!(true),
    ] {
        let err = Registry::new().register(with(schema.clone())).unwrap_err();
        assert_eq!(err.kind(), RegistryErrorKind::InvalidSchema, "{schema}");
        assert!(
            err.to_string()
                .contains(r#"must be an object schema ("type": "object")"#),
            "{err}"
        );
    }
    Registry::new()
        .register(with(json!({"type": "object"})))
        .unwrap();
}

fn names_of(defs: &Value) -> Vec<&str> {
    defs.as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect()
}

/// Review L4: tools are added and removed through `&self`, and
/// `definitions` follows the current set.
#[test]
fn definitions_before_and_after_register_and_remove() {
    let r = Registry::new();
    r.register(noop("a")).unwrap();
    assert_eq!(names_of(&r.definitions(Dialect::Anthropic)), ["a"]);
    r.register(noop("b")).unwrap();
    r.alias("bee", "b").unwrap();
    assert_eq!(names_of(&r.definitions(Dialect::Anthropic)), ["a", "b"]);
    assert_eq!(r.len(), 2);

    r.remove("b").unwrap();
    assert_eq!(names_of(&r.definitions(Dialect::Anthropic)), ["a"]);
    assert_eq!(r.available(), ["a"]);
    assert!(!r.contains("b"));
    assert!(!r.contains("bee"), "the aliases go with the tool");
    assert!(r.stats_of("b").is_none());
    assert_eq!(r.stats().len(), 1);

    // Registered again: a new tool, the alias free again.
    r.register(noop("b")).unwrap();
    r.alias("bee", "b").unwrap();
    assert_eq!(names_of(&r.definitions(Dialect::Anthropic)), ["a", "b"]);
    r.remove("a").unwrap();
    r.remove("b").unwrap();
    assert!(r.is_empty());
    assert_eq!(r.definitions(Dialect::Anthropic), json!([]));
}

#[test]
fn removing_an_unknown_tool_an_alias_or_a_fallback_is_refused() {
    use crate::{Fallback, ToolPolicy};
    let r = Registry::new();
    let err = r.remove("nope").unwrap_err();
    assert_eq!(err.kind(), RegistryErrorKind::UnknownTool);
    assert_eq!(err.name(), "nope");

    r.register(noop("cache")).unwrap();
    r.alias("cached", "cache").unwrap();
    let err = r.remove("cached").unwrap_err();
    assert_eq!(err.kind(), RegistryErrorKind::UnknownTool);
    assert_eq!(
        err.to_string(),
        "no such tool: 'cached' (an alias of 'cache'; remove that tool to remove its aliases)"
    );

    // `live` falls back to `cache` through its alias.
    let policy = ToolPolicy::new().fallback(Fallback::tool("cached".to_string()));
    r.register_with(noop("live"), policy).unwrap();
    let err = r.remove("cache").unwrap_err();
    assert_eq!(err.kind(), RegistryErrorKind::InUse);
    assert_eq!(
        err.to_string(),
        "tool in use as a fallback: 'cache' (the fallback of 'live'; remove that tool first)"
    );
    assert!(r.contains("cache"), "a refused removal changes nothing");
    r.remove("live").unwrap();
    r.remove("cache").unwrap();
    assert!(r.is_empty());

    // The duplicate check sees the current set.
    r.register(noop("x")).unwrap();
    assert_eq!(
        r.register(noop("x")).unwrap_err().kind(),
        RegistryErrorKind::Duplicate
    );
}

/// The registry keeps a `sequential` lock per live name only: names
/// registered and removed leave nothing behind, a name registered again
/// while its removed entry lives shares that entry's lock, and a fresh
/// one once nothing holds it.
#[test]
fn sequential_locks_are_shared_by_name_and_shed_when_unused() {
    let r = Registry::new();
    let locks = |r: &Registry| r.writer.lock().unwrap().len();
    for i in 0..1000 {
        let name: &'static str = Box::leak(format!("tool_{i}").into_boxed_str());
        r.register(noop(name)).unwrap();
        r.remove(name).unwrap();
    }
    assert_eq!(locks(&r), 0, "no lock of a name nothing holds");

    r.register(noop("write")).unwrap();
    let in_flight = r.resolve("write").unwrap();
    r.remove("write").unwrap();
    r.register(noop("write")).unwrap();
    let again = r.resolve("write").unwrap();
    assert!(!Arc::ptr_eq(&in_flight, &again));
    assert!(Arc::ptr_eq(&in_flight.sequential, &again.sequential));
    assert_eq!(locks(&r), 1);

    drop((in_flight, again));
    r.remove("write").unwrap();
    assert_eq!(locks(&r), 0);
}

fn named(name: String) -> impl Tool {
    tool_fn(
        name,
        "Does nothing.",
        json!({"type": "object"}),
        |_a, _c| async { Ok::<_, BoxError>(Value::Null) },
    )
}

/// Regression: the model-facing text of an unknown tool listed every
/// enabled tool: with hundreds (an application with many MCP servers) one
/// mistyped name cost the model thousands of tokens. Past
/// `LISTED_TOOLS` it names the closest ones by edit distance, and how many
/// there are.
#[test]
fn an_unknown_tool_names_the_closest_of_many() {
    let r = Registry::new();
    for i in 0..300 {
        r.register(named(format!("mcp_server_{i:03}_search")))
            .unwrap();
    }
    r.register(noop("read_file")).unwrap();
    r.register(noop("write_file")).unwrap();
    let text = r.not_available_message("Read_fle");
    assert!(
        text.starts_with(
            "Tool 'Read_fle' is not available. The closest of the 302 available tools: read_file, write_file, "
        ),
        "{text}"
    );
    assert_eq!(text.matches(", ").count() + 1, LISTED_TOOLS, "{text}");
    assert!(text.len() < 600, "{} bytes: {text}", text.len());
    let text = r.not_available_message("mcp_server_017_serch");
    assert!(text.contains("tools: mcp_server_017_search, "), "{text}");
    // A name of any length: the distance is taken on its first characters.
    let long = "x".repeat(100_000);
    assert!(r.not_available_message(&long).len() < 600);

    // A few tools are all listed, in registration order.
    let r = Registry::new();
    r.register(noop("b")).unwrap();
    r.register(noop("a")).unwrap();
    assert_eq!(
        r.not_available_message("c"),
        "Tool 'c' is not available. Available tools: b, a."
    );
}
