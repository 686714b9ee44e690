//! One test per row of the table "what the model sees, what the operator
//! sees": the model text, the fatal flag and the log level.

use std::{io, sync::atomic::Ordering, time::Duration};

use toolwarden_core::{Disposition, ErrorKind, Status, ToolError};
use tracing::Level;

use super::*;
use crate::{FatalError, HttpError, RetryPolicy, UNEXPECTED_MESSAGE};

fn no_retry() -> ToolPolicy {
    ToolPolicy::new().retry(RetryPolicy::none())
}

#[tokio::test]
async fn unknown_disabled_or_paused_tool() {
    let (cap, _g) = Capture::install();
    let r = Registry::new();
    r.register(ok_tool("read_file")).unwrap();
    r.register(ok_tool("write_file")).unwrap();
    r.register(ok_tool("shell")).unwrap();
    r.disable("write_file").unwrap();
    r.pause("shell").unwrap();
    let ex = executor(r);
    for (id, name, reason) in [
        ("c1", "delete_file", "unknown tool"),
        ("c2", "write_file", "tool 'write_file' is disabled"),
        ("c3", "shell", "tool 'shell' is paused"),
    ] {
        let o = ex.execute(&call(id, name, r#"{"path":"a"}"#), &ctx()).await;
        let e = o.error.as_ref().unwrap();
        // The same text whatever the reason: it does not say why.
        assert_eq!(
            e.model_message,
            format!("Tool '{name}' is not available. Available tools: read_file.")
        );
        assert!(!e.fatal && !e.retryable);
        assert_eq!(e.kind, ErrorKind::NotAvailable);
        assert_eq!(o.attempts, 0);
        let ev = cap
            .events()
            .into_iter()
            .find(|ev| ev.fields.get("reason").map(String::as_str) == Some(reason))
            .unwrap_or_else(|| panic!("no log with reason {reason}: {:#?}", cap.events()));
        assert_eq!(ev.level, Level::WARN);
    }
    assert_eq!(
        ex.registry().error_summary().get("<unknown>:NotAvailable"),
        Some(&1)
    );
}

/// Regression: an unknown tool's warning clipped the model's name but
/// logged its control characters as they came: a newline in it forged a
/// log line of its own. They are written out (`\n`).
#[tokio::test]
async fn an_unknown_tools_warning_escapes_the_name() {
    let (cap, _g) = Capture::install();
    let ex = executor(Registry::new());
    let name = format!("x\nERROR forged\u{1b}]0;t\u{7}{}", "y".repeat(5_000));
    let o = ex.execute(&call("c\n1", &name, "{}"), &ctx()).await;
    assert_eq!(o.tool, name);
    let ev = cap.find("tool not available");
    assert!(
        ev.fields["tool"].starts_with("x\\nERROR forged\\u{1b}]0;t\\u{7}yyy"),
        "{:?}",
        ev.fields["tool"]
    );
    assert_eq!(ev.fields["call_id"], "c\\n1");
    for text in ev.fields.values() {
        assert!(!text.chars().any(char::is_control), "{text:?}");
        assert!(text.len() < 300);
    }
}

/// Regression: a tool that answered "not available" itself (its backend,
/// a nested tool) had the model told `Tool 'x' is not available.
/// Available tools: x, …`, naming the tool it had just called among the
/// available ones. The list is for calls the executor refused.
#[tokio::test]
async fn a_tool_that_says_it_is_unavailable_is_not_listed_as_available() {
    let ex = single(
        failing("search", counter(), || {
            ToolError::new(ErrorKind::NotAvailable, "the index is being rebuilt")
        }),
        no_retry(),
    );
    let o = ex
        .execute(&call("c1", "search", r#"{"path":"a"}"#), &ctx())
        .await;
    let e = o.error.unwrap();
    assert_eq!(e.kind, ErrorKind::NotAvailable);
    assert_eq!(e.model_message, "Tool 'search' is not available.");
    assert_eq!(o.attempts, 1);
}

#[tokio::test]
async fn invalid_arguments_schema_violation_and_malformed_json() {
    let (cap, _g) = Capture::install();
    let runs = counter();
    let ex = single(
        failing("read", runs.clone(), || io::Error::other("unreached")),
        no_retry(),
    );
    let o = ex
        .execute(&call("c1", "read", r#"{"limit": 0}"#), &ctx())
        .await;
    let e = o.error.unwrap();
    assert_eq!(
        e.model_message,
        "Missing required parameter: path; Invalid value for 'limit': must be a positive integer"
    );
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(!e.fatal);
    assert_eq!(cap.find("invalid tool arguments").level, Level::DEBUG);

    let o = ex
        .execute(&call("c2", "read", r#"{"path": "a", "limit": 2"#), &ctx())
        .await;
    let e = o.error.unwrap();
    assert!(
        e.model_message.starts_with(
            "The arguments are not valid JSON (EOF while parsing an object at line 1 column 24)"
        ),
        "{}",
        e.model_message
    );
    assert_eq!(e.code.as_deref(), Some("invalid_json"));
    assert_eq!(count(&runs), 0, "the tool never runs on bad arguments");
}

/// Regression: JSON Schema counts `5.0` as an integer, but the validator
/// refused it for `["integer", "null"]` (an `Option<u32>`) and serde's
/// integer types refused it after validation.
#[tokio::test(start_paused = true)]
async fn schema_valid_integers_written_with_a_fraction_are_integers() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Opts {
        depth: u32,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Args {
        limit: Option<u32>,
        offsets: Vec<i64>,
        opts: Opts,
        scale: f64,
        raw: Value,
    }
    let r = Registry::new();
    r.register(crate::typed_fn(
        "window",
        "Window.",
        |a: Args, _c: Context| async move {
            Ok::<_, BoxError>(json!([a.limit, a.offsets, a.opts.depth, a.scale, a.raw]))
        },
    ))
    .unwrap();
    // A raw tool whose first attempt fails: the retry sees integers too.
    let runs = counter();
    let seen = runs.clone();
    r.register(tool_fn(
        "count",
        "Count.",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        move |args: Value, _c| {
            let first = seen.fetch_add(1, Ordering::SeqCst) == 0;
            async move {
                if first {
                    return Err(io::Error::new(io::ErrorKind::ConnectionReset, "reset").into());
                }
                Ok::<_, BoxError>(args["n"].clone())
            }
        },
    ))
    .unwrap();
    let ex = executor(r);
    let args =
        r#"{"limit": 5.0, "offsets": [-2.0, 3], "opts": {"depth": 2.0}, "scale": 2.0, "raw": 1.0}"#;
    let o = ex.execute(&call("c1", "window", args), &ctx()).await;
    // Only where the schema says integer: the number and the free-form
    // value keep their 2.0 and 1.0.
    assert_eq!(
        o.output,
        Some(json!([5, [-2, 3], 2, 2.0, 1.0])),
        "{:?}",
        o.error
    );
    let o = ex
        .execute(
            &call(
                "c2",
                "window",
                r#"{"limit": 5.5, "offsets": [], "opts": {"depth": 1}, "scale": 1, "raw": null}"#,
            ),
            &ctx(),
        )
        .await;
    assert_eq!(
        o.error.unwrap().model_message,
        "Invalid type for 'limit': expected integer or null, got number"
    );
    let o = ex
        .execute(&call("c3", "count", r#"{"n": 7.0}"#), &ctx())
        .await;
    assert_eq!((o.output, o.attempts), (Some(json!(7)), 2));
}

#[tokio::test]
async fn resource_not_found_typed_io_http_and_message() {
    let (cap, _g) = Capture::install();
    type Case = (fn() -> BoxError, &'static str);
    let cases: Vec<Case> = vec![
        (
            || ToolError::not_found("/etc/app.toml").into(),
            "Resource not found: /etc/app.toml",
        ),
        (
            || io::Error::new(io::ErrorKind::NotFound, "open /srv/data.csv: no such file").into(),
            "Resource not found: /srv/data.csv",
        ),
        (
            || {
                HttpError::new(404)
                    .with_url("https://api.example.com/items/7")
                    .into()
            },
            "Resource not found: https://api.example.com/items/7",
        ),
        (
            || "no such file: 'notes.md'".into(),
            "Resource not found: notes.md",
        ),
    ];
    for (i, (make, text)) in cases.into_iter().enumerate() {
        let runs = counter();
        let ex = single(failing("fetch", runs.clone(), make), ToolPolicy::new());
        let o = ex
            .execute(&call(&format!("c{i}"), "fetch", r#"{"path":"x"}"#), &ctx())
            .await;
        let e = o.error.unwrap();
        assert_eq!(e.model_message, text);
        assert!(!e.fatal && !e.retryable);
        assert_eq!(count(&runs), 1, "not retried");
    }
    let events = cap.events();
    let nf: Vec<_> = events
        .iter()
        .filter(|e| e.message == "tool resource not found")
        .collect();
    assert_eq!(nf.len(), 4);
    assert!(nf.iter().all(|e| e.level == Level::INFO));
}

/// `std::io::Error` carries no path: the model is told the path- or
/// URL-like argument of the call, unless the error names the resource.
#[tokio::test]
async fn io_errors_name_the_resource_from_the_arguments() {
    let missing = std::env::temp_dir().join("toolwarden-no-such-dir/notes.md");
    let missing = missing.to_str().unwrap().to_string();
    let read = tool_fn(
        "read",
        "Reads a file.",
        schema(),
        |args: Value, _ctx| async move {
            let path = args["path"].as_str().unwrap_or_default().to_string();
            Ok::<_, BoxError>(Value::String(std::fs::read_to_string(path)?))
        },
    );
    let ex = single(read, ToolPolicy::new());
    let args = json!({ "path": missing, "limit": 5 }).to_string();
    let o = ex.execute(&call("c1", "read", &args), &ctx()).await;
    let e = o.error.unwrap();
    assert_eq!(e.model_message, format!("Resource not found: {missing}"));
    assert_eq!(
        e.kind,
        ErrorKind::ResourceNotFound {
            resource: Some(missing.clone())
        }
    );
    assert!(
        e.technical_message
            .ends_with(&format!("(resource: {missing})"))
    );

    // A typed error that names the path in its message wins over the
    // arguments.
    #[derive(Debug)]
    struct ReadConfig(io::Error);
    impl std::fmt::Display for ReadConfig {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("reading /etc/app/config.toml")
        }
    }
    impl std::error::Error for ReadConfig {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }
    let ex = single(
        failing("load", counter(), || {
            ReadConfig(io::Error::from(io::ErrorKind::NotFound))
        }),
        ToolPolicy::new(),
    );
    let o = ex
        .execute(&call("c2", "load", r#"{"path":"ignored.toml"}"#), &ctx())
        .await;
    assert_eq!(
        o.error.unwrap().model_message,
        "Resource not found: /etc/app/config.toml"
    );

    // Permission denied, shown to the model (per-tool disposition): the
    // URL-like argument, found by its shape.
    let lenient = ToolPolicy::new().disposition(
        &ErrorKind::Permission,
        Disposition {
            retryable: false,
            fatal: false,
            show_details: true,
        },
    );
    let ex = single(
        failing("fetch", counter(), || io::Error::from_raw_os_error(13)),
        lenient,
    );
    let o = ex
        .execute(
            &call("c3", "fetch", r#"{"path":"s3://bucket/key.csv","limit":1}"#),
            &ctx(),
        )
        .await;
    let e = o.error.unwrap();
    assert!(
        e.model_message.starts_with(
            "The tool is not permitted to access s3://bucket/key.csv (Permission denied"
        ),
        "{}",
        e.model_message
    );
    // Fatal by default: the application's message names it too.
    let ex = single(
        failing("fetch", counter(), || io::Error::from_raw_os_error(13)),
        ToolPolicy::new(),
    );
    let o = ex
        .execute(&call("c4", "fetch", r#"{"path":"/root/secret"}"#), &ctx())
        .await;
    let fatal = FatalError::from_outcome(&o).unwrap();
    assert!(
        fatal.message.ends_with("(resource: /root/secret)"),
        "{}",
        fatal.message
    );
}

#[tokio::test(start_paused = true)]
async fn timeout_rate_limit_network_after_retries() {
    let (cap, _g) = Capture::install();
    // Timeout: 4 attempts of 30 s each, then the model is told.
    let runs = counter();
    let hang = scripted("slow", runs.clone(), |_| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(Value::Null)
    });
    let ex = single(hang, ToolPolicy::new());
    let o = ex
        .execute(&call("c1", "slow", r#"{"path":"x"}"#), &ctx())
        .await;
    assert_eq!(o.status, Status::Timeout);
    assert_eq!(o.attempts, 4);
    assert_eq!(count(&runs), 4);
    let e = o.error.unwrap();
    assert_eq!(
        e.model_message,
        "The tool timed out (no result within 30 s) after 4 attempt(s). Trying again later may help."
    );
    assert!(e.retryable && !e.fatal);
    let ev = cap.find("tool failed after retries");
    assert_eq!(ev.level, Level::ERROR);
    assert_eq!(ev.fields["attempts"], "4");

    // Rate limited with a Retry-After beyond the cap: not waited for.
    let runs = counter();
    let ex = single(
        failing("search", runs.clone(), || {
            HttpError::new(429).with_retry_after(Some(Duration::from_secs(120)))
        }),
        ToolPolicy::new(),
    );
    let e = ex
        .execute(&call("c2", "search", r#"{"path":"x"}"#), &ctx())
        .await
        .error
        .unwrap();
    assert_eq!(
        e.model_message,
        "The tool's backend is rate-limiting requests (after 1 attempt(s)). Retry after 120 s."
    );
    assert_eq!(count(&runs), 1);

    // Network: retried 4 times, the model is told what happened.
    let runs = counter();
    let ex = single(
        failing("net", runs.clone(), || {
            io::Error::new(
                io::ErrorKind::ConnectionRefused,
                "connect to 10.0.0.7:443 refused",
            )
        }),
        ToolPolicy::new(),
    );
    let e = ex
        .execute(&call("c3", "net", r#"{"path":"x"}"#), &ctx())
        .await
        .error
        .unwrap();
    assert_eq!(
        e.model_message,
        "A network error stopped the tool after 4 attempt(s): connect to 10.0.0.7:443 refused. Trying again later may help."
    );
    assert_eq!(count(&runs), 4);
    let errors: Vec<_> = cap
        .events()
        .into_iter()
        .filter(|e| e.message == "tool failed after retries")
        .collect();
    assert_eq!(errors.len(), 3);
    assert!(errors.iter().all(|e| e.level == Level::ERROR));
}

#[tokio::test]
async fn authentication_and_permission_are_fatal_with_a_specific_message() {
    let (cap, _g) = Capture::install();
    let runs = counter();
    let ex = single(
        failing("deploy", runs.clone(), || {
            HttpError::new(401)
                .with_url("https://ci.example.com/api")
                .with_message("token expired at 02:00")
        }),
        ToolPolicy::new(),
    );
    let o = ex
        .execute(&call("c1", "deploy", r#"{"path":"x"}"#), &ctx())
        .await;
    assert!(o.is_fatal());
    assert_eq!(count(&runs), 1, "not retried");
    let fatal = FatalError::from_outcome(&o).unwrap();
    assert_eq!(
        fatal.message,
        "Tool 'deploy' could not authenticate with its backend: HTTP 401 from https://ci.example.com/api: token expired at 02:00"
    );
    assert!(!fatal.message.to_lowercase().contains("api key"));
    assert_eq!(
        o.error.as_ref().unwrap().model_message,
        "The tool could not authenticate with its backend (HTTP 401 from https://ci.example.com/api: token expired at 02:00). Retrying will not help; the operator has been notified."
    );
    assert_eq!(cap.find("tool denied access").level, Level::ERROR);

    let ex = single(
        failing("rm", counter(), || {
            io::Error::new(io::ErrorKind::PermissionDenied, "unlink /etc/passwd")
        }),
        ToolPolicy::new(),
    );
    let o = ex
        .execute(&call("c2", "rm", r#"{"path":"x"}"#), &ctx())
        .await;
    assert!(o.is_fatal());
    assert_eq!(
        FatalError::from_outcome(&o).unwrap().message,
        "Tool 'rm' was denied permission: unlink /etc/passwd"
    );

    // Overridable per tool.
    let lenient = ToolPolicy::new().disposition(
        &ErrorKind::Permission,
        Disposition {
            retryable: false,
            fatal: false,
            show_details: true,
        },
    );
    let ex = single(
        failing("rm", counter(), || {
            io::Error::new(io::ErrorKind::PermissionDenied, "unlink /etc/passwd")
        }),
        lenient,
    );
    let o = ex
        .execute(&call("c3", "rm", r#"{"path":"x"}"#), &ctx())
        .await;
    assert!(!o.is_fatal());
    assert_eq!(
        o.error.unwrap().model_message,
        "The tool is not permitted to do this (unlink /etc/passwd). Retrying will not help."
    );
}

#[tokio::test(start_paused = true)]
async fn circuit_open_rejects_without_running_the_tool() {
    let (cap, _g) = Capture::install();
    let runs = counter();
    let ex = single(
        failing("flaky", runs.clone(), || {
            io::Error::new(io::ErrorKind::ConnectionReset, "reset")
        }),
        no_retry(),
    );
    // Different arguments each time, so the run's loop guard stays out of it.
    for i in 0..5 {
        let args = format!(r#"{{"path":"x{i}"}}"#);
        ex.execute(&call(&format!("c{i}"), "flaky", &args), &ctx())
            .await;
    }
    tokio::time::advance(Duration::from_millis(400)).await;
    let o = ex
        .execute(&call("c5", "flaky", r#"{"path":"x"}"#), &ctx())
        .await;
    assert_eq!(
        count(&runs),
        5,
        "the open breaker kept the tool from running"
    );
    let e = o.error.unwrap();
    assert_eq!(
        e.model_message,
        "Tool 'flaky' is temporarily unavailable, retry after 60 s."
    );
    assert!(!e.fatal);
    let ev = cap.find("circuit open: call rejected");
    assert_eq!(ev.level, Level::WARN);
    assert_eq!(ev.fields["breaker"], "open");
    let stats = ex.registry().stats_of("flaky").unwrap();
    assert_eq!(stats.breaker, Some(crate::BreakerState::Open));
    assert_eq!(stats.breaker_trips, 1);
}

/// A breaker open until reset (`open_for` of `Duration::MAX`) gives the
/// model no time to wait for (it was told to retry after 946080000 s).
#[tokio::test(start_paused = true)]
async fn a_breaker_open_until_reset_names_no_time() {
    let until_reset = crate::BreakerConfig::try_new(1, Duration::MAX, 1).unwrap();
    let ex = single(
        failing("flaky", counter(), || {
            io::Error::new(io::ErrorKind::ConnectionReset, "reset")
        }),
        no_retry().breaker(until_reset),
    );
    ex.execute(&call("c1", "flaky", r#"{"path":"x1"}"#), &ctx())
        .await;
    let o = ex
        .execute(&call("c2", "flaky", r#"{"path":"x2"}"#), &ctx())
        .await;
    let e = o.error.unwrap();
    assert_eq!(e.kind, ErrorKind::CircuitOpen { retry_after: None });
    assert_eq!(
        e.model_message,
        "Tool 'flaky' is unavailable, with no known time it will be back. Do not call it again; try another way."
    );
    assert!(
        e.technical_message.ends_with("open until reset"),
        "{}",
        e.technical_message
    );
}

#[tokio::test]
async fn panics_and_unexpected_errors_show_only_the_generic_text() {
    let (cap, _g) = Capture::install();
    let boom = scripted("boom", counter(), |_| async {
        let v: Vec<u8> = Vec::new();
        let _ = v[3]; // index out of bounds: a panic inside the tool
        Ok(Value::Null)
    });
    let ex = single(boom, ToolPolicy::new());
    let o = ex
        .execute(&call("c1", "boom", r#"{"path":"x"}"#), &ctx())
        .await;
    let e = o.error.unwrap();
    assert_eq!(e.model_message, UNEXPECTED_MESSAGE);
    assert_eq!(e.code.as_deref(), Some("panic"));
    assert!(
        e.technical_message.contains("index out of bounds"),
        "{}",
        e.technical_message
    );
    assert!(!e.fatal);
    let ev = cap.find("unexpected tool error");
    assert_eq!(ev.level, Level::ERROR);
    assert!(ev.fields["error"].contains("index out of bounds"));

    // A foreign error with a chain: the whole chain is logged, the model
    // sees the generic (configurable) text.
    let chained = failing("db", counter(), || {
        ToolError::new(ErrorKind::Internal, "query failed")
            .with_source(io::Error::other("constraint users_pkey violated"))
    });
    let ex = single(
        chained,
        ToolPolicy::new().message(&ErrorKind::Internal, "The database tool hit a bug."),
    );
    let e = ex
        .execute(&call("c2", "db", r#"{"path":"x"}"#), &ctx())
        .await
        .error
        .unwrap();
    assert_eq!(e.model_message, "The database tool hit a bug.");
    assert_eq!(
        e.technical_message,
        "query failed: constraint users_pkey violated"
    );
}

/// Regression: a foreign error whose message held a status code's digits
/// in another number was read as that status: `failed at row 14012` made
/// the call an authentication failure, fatal (the run stopped), and a port
/// `:4290` a rate limit, retried four times. A status is read from a
/// message only where it stands alone in one that speaks of HTTP.
#[tokio::test(start_paused = true)]
async fn digits_of_a_status_in_another_number_are_no_status() {
    for (msg, kind) in [
        ("failed at row 14012: disk full", ErrorKind::Internal),
        ("listening on :4290 failed", ErrorKind::Internal),
        ("build 1403 failed", ErrorKind::Internal),
        (
            "https://ci.example.com/api: status code 401",
            ErrorKind::Authentication,
        ),
    ] {
        let tries = counter();
        let tool = scripted("job", tries.clone(), move |_| async move {
            Err(BoxError::from(msg))
        });
        let o = single(tool, ToolPolicy::new())
            .execute(&call("c1", "job", r#"{"path":"x"}"#), &ctx())
            .await;
        let e = o.error.unwrap();
        assert_eq!(e.kind, kind, "{msg}");
        assert_eq!(e.fatal, kind == ErrorKind::Authentication, "{msg}");
        assert_eq!(count(&tries), 1, "{msg}: not retried");
    }
}
