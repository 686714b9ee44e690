//! The tool set both step suites run: `read_file` (succeeds for `a.txt`,
//! fails with the OS's words otherwise), and the three calls every
//! response they build makes (the last names a tool that does not exist).

use std::sync::Arc;

use serde_json::{Value, json};
use toolwarden_runtime::{BoxError, Executor, Registry, tool_fn};

pub fn executor() -> Executor {
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"]
    });
    let r = Registry::new();
    r.register(tool_fn(
        "read_file",
        "Read a file.",
        schema,
        |args: Value, _c| async move {
            match args["path"].as_str() {
                Some("a.txt") => Ok(json!("alpha")),
                Some(other) => Err(BoxError::from(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("open '{other}': no such file"),
                ))),
                None => Ok(Value::Null),
            }
        },
    ))
    .unwrap();
    Executor::new(Arc::new(r))
}

/// (name, arguments) of the three calls every response makes.
pub const CALLS: [(&str, &str); 3] = [
    ("read_file", r#"{"path":"a.txt"}"#),
    ("read_file", r#"{"path":"missing.txt"}"#),
    ("launch_rocket", r#"{}"#),
];
pub const FAILED: [bool; 3] = [false, true, true];

pub fn args(i: usize) -> Value {
    serde_json::from_str(CALLS[i].1).unwrap()
}
