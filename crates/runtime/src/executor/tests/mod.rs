//! Executor tests: one per row of the operator table (table.rs), the
//! policies under a paused clock (policies.rs), batches (batch.rs), tools
//! registered strict (strict.rs), a registry that changes while calls run
//! (live.rs), tools that call their executor again (nested.rs).

mod batch;
mod blocking;
mod cancel;
mod capture;
mod live;
mod nested;
mod policies;
mod strict;
mod table;

use std::{
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

use serde_json::{Value, json};
use toolwarden_core::ToolCall;

use crate::{BoxError, Context, Executor, ExecutorConfig, Registry, Tool, ToolPolicy, tool_fn};

pub(super) use capture::Capture;

/// A 3-property object schema with `path` required.
pub(super) fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1},
            "verbose": {"type": "boolean"}
        },
        "required": ["path"]
    })
}

pub(super) fn call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.into(),
    }
}

/// A tool that counts its invocations and answers with `f(attempt)`.
pub(super) fn scripted<F, Fut>(name: &'static str, counter: Arc<AtomicU32>, f: F) -> impl Tool
where
    F: Fn(u32) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, BoxError>> + Send + 'static,
{
    tool_fn(
        name,
        "A scripted test tool.",
        schema(),
        move |_args, _ctx| {
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            f(n)
        },
    )
}

/// A tool that always fails with the error `make()` returns.
pub(super) fn failing<E>(name: &'static str, counter: Arc<AtomicU32>, make: fn() -> E) -> impl Tool
where
    E: Into<BoxError> + 'static,
{
    scripted(name, counter, move |_| {
        let e: BoxError = make().into();
        async move { Err(e) }
    })
}

pub(super) fn ok_tool(name: &'static str) -> impl Tool {
    tool_fn(
        name,
        "Always works.",
        schema(),
        |args: Value, _ctx| async move { Ok::<_, BoxError>(json!({"echo": args["path"]})) },
    )
}

pub(super) fn executor(registry: Registry) -> Executor {
    Executor::with_config(Arc::new(registry), ExecutorConfig::default().with_seed(42))
}

/// A registry with `tool` under `policy` plus an `ok` tool.
pub(super) fn single(tool: impl Tool, policy: ToolPolicy) -> Executor {
    let r = Registry::new();
    r.register(ok_tool("ok")).unwrap();
    r.register_with(tool, policy).unwrap();
    executor(r)
}

pub(super) fn counter() -> Arc<AtomicU32> {
    Arc::new(AtomicU32::new(0))
}

pub(super) fn count(c: &AtomicU32) -> u32 {
    c.load(Ordering::SeqCst)
}

pub(super) fn ctx() -> Context {
    Context::new()
}

pub(super) const SEC: Duration = Duration::from_secs(1);
