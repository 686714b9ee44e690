//! The [`Tool`] trait and the ways to make one: implement it, implement
//! [`TypedTool`] (arguments deserialised into a Rust type whose JSON Schema
//! is derived with `schemars`), wrap an async closure ([`tool_fn`],
//! [`typed_fn`]) or a blocking one ([`blocking_fn`], [`typed_blocking_fn`],
//! run on tokio's blocking pool).

use std::{fmt, future::Future, marker::PhantomData, sync::Arc};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;
use toolwarden_core::{ErrorKind, ToolError};

use crate::Context;

/// Any error a tool returns. The runtime classifies it by type first (a
/// [`ToolError`], a [`std::io::Error`], an [`HttpError`](crate::HttpError)),
/// by message only as a fallback.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A tool the model can call.
///
/// `call` receives the arguments already parsed and validated against
/// [`Tool::parameters`], and the run's [`Context`].
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The name the model calls the tool by.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// The JSON Schema of the arguments: an object schema (`"type":
    /// "object"`); the registry refuses any other.
    fn parameters(&self) -> &Value;
    /// Run the tool.
    async fn call(&self, args: Value, ctx: &Context) -> Result<Value, BoxError>;
}

/// A tool whose arguments are a Rust type: the schema is derived from
/// `Args` and the arguments arrive deserialised into it. Register it with
/// [`typed`].
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The arguments; their JSON Schema is what the model sees.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// The output, serialised to JSON for the model.
    type Output: Serialize + Send + 'static;
    /// The name the model calls the tool by.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// Run the tool.
    async fn run(&self, args: Self::Args, ctx: &Context) -> Result<Self::Output, BoxError>;
}

/// A [`TypedTool`] as a [`Tool`].
pub struct Typed<T> {
    inner: T,
    schema: Value,
}

/// A tool made from an async closure over raw JSON arguments; see [`tool_fn`].
pub struct FnTool<F> {
    name: Arc<str>,
    description: String,
    schema: Value,
    f: F,
}

/// A tool made from an async closure over typed arguments; see [`typed_fn`].
pub struct TypedFnTool<A, F> {
    name: Arc<str>,
    description: String,
    schema: Value,
    f: F,
    _args: PhantomData<fn(A)>,
}

/// A tool made from a blocking closure over raw JSON arguments; see
/// [`blocking_fn`].
pub struct BlockingFnTool<F> {
    name: Arc<str>,
    description: String,
    schema: Value,
    f: Arc<F>,
}

/// A tool made from a blocking closure over typed arguments; see
/// [`typed_blocking_fn`].
pub struct TypedBlockingFnTool<A, F> {
    name: Arc<str>,
    description: String,
    schema: Value,
    f: Arc<F>,
    _args: PhantomData<fn(A)>,
}

/// Wrap a [`TypedTool`] so it can be registered.
pub fn typed<T: TypedTool>(tool: T) -> Typed<T> {
    Typed {
        schema: schema_of::<T::Args>(),
        inner: tool,
    }
}

/// A tool from an async closure taking the JSON arguments and the context.
///
/// ```
/// use serde_json::{json, Value};
/// use toolwarden_runtime::{tool_fn, BoxError, Tool};
///
/// let echo = tool_fn(
///     "echo",
///     "Repeat the text.",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
///     |args: Value, _ctx| async move { Ok::<_, BoxError>(args["text"].clone()) },
/// );
/// assert_eq!(echo.name(), "echo");
/// ```
pub fn tool_fn<F, Fut, E>(
    name: impl Into<Arc<str>>,
    description: impl Into<String>,
    schema: Value,
    f: F,
) -> FnTool<F>
where
    F: Fn(Value, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, E>> + Send + 'static,
    E: Into<BoxError>,
{
    FnTool {
        name: name.into(),
        description: description.into(),
        schema,
        f,
    }
}

/// A tool from an async closure taking typed arguments (schema derived from
/// `A` with `schemars`) and the context.
pub fn typed_fn<A, O, E, F, Fut>(
    name: impl Into<Arc<str>>,
    description: impl Into<String>,
    f: F,
) -> TypedFnTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + 'static,
    E: Into<BoxError>,
    F: Fn(A, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
{
    TypedFnTool {
        name: name.into(),
        description: description.into(),
        schema: schema_of::<A>(),
        f,
        _args: PhantomData,
    }
}

/// A tool from a blocking closure taking the JSON arguments and the
/// context, run on tokio's blocking pool (`tokio::task::spawn_blocking`):
/// for synchronous code (`std::fs`, `std::process::Command`, a blocking
/// HTTP client or database driver, a long computation).
///
/// A timeout can only interrupt a tool at an `.await`. Run on the blocking
/// pool, such a tool's timeout still answers the model on time and the
/// calls of a batch run in parallel; but a thread cannot be stopped: at
/// the timeout (or the run's [`Deadline`](crate::Deadline)) the closure is
/// abandoned, keeps its blocking-pool thread until it returns, and its
/// result is dropped. Whatever it does meanwhile (a file written, a request
/// sent) still happens, and a retry starts a second thread beside it, as
/// does the next call of a [`sequential`](crate::ToolPolicy::sequential)
/// tool; mark such a tool
/// [`not_idempotent`](crate::ToolPolicy::not_idempotent).
///
/// ```
/// use serde_json::{json, Value};
/// use toolwarden_runtime::{blocking_fn, BoxError, Tool};
///
/// let size = blocking_fn(
///     "file_size",
///     "The size of a file in bytes.",
///     json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
///     |args: Value, _ctx| {
///         let path = args["path"].as_str().unwrap_or_default();
///         Ok::<_, BoxError>(json!(std::fs::metadata(path)?.len()))
///     },
/// );
/// assert_eq!(size.name(), "file_size");
/// ```
pub fn blocking_fn<F, E>(
    name: impl Into<Arc<str>>,
    description: impl Into<String>,
    schema: Value,
    f: F,
) -> BlockingFnTool<F>
where
    F: Fn(Value, Context) -> Result<Value, E> + Send + Sync + 'static,
    E: Into<BoxError>,
{
    BlockingFnTool {
        name: name.into(),
        description: description.into(),
        schema,
        f: Arc::new(f),
    }
}

/// A tool from a blocking closure taking typed arguments (schema derived
/// from `A` with `schemars`) and the context, run on tokio's blocking pool;
/// see [`blocking_fn`] for what a timeout does to it.
///
/// ```
/// use toolwarden_runtime::{typed_blocking_fn, BoxError, Context, Tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct ReadArgs {
///     /// The file to read.
///     path: String,
/// }
///
/// let read = typed_blocking_fn("read_file", "Read a text file.", |args: ReadArgs, _ctx: Context| {
///     Ok::<_, BoxError>(std::fs::read_to_string(args.path)?)
/// });
/// assert_eq!(read.parameters()["required"][0], "path");
/// ```
pub fn typed_blocking_fn<A, O, E, F>(
    name: impl Into<Arc<str>>,
    description: impl Into<String>,
    f: F,
) -> TypedBlockingFnTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + 'static,
    E: Into<BoxError>,
    F: Fn(A, Context) -> Result<O, E> + Send + Sync + 'static,
{
    TypedBlockingFnTool {
        name: name.into(),
        description: description.into(),
        schema: schema_of::<A>(),
        f: Arc::new(f),
        _args: PhantomData,
    }
}

/// Run `f` on tokio's blocking pool and wait for it. A panic in `f` is
/// resumed here, so the executor reports it as the tool's panic; if the
/// call's future is dropped (a timeout), the thread runs on, abandoned.
async fn on_blocking_pool<F>(f: F) -> Result<Value, BoxError>
where
    F: FnOnce() -> Result<Value, BoxError> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(Box::new(ToolError::new(
            ErrorKind::Internal,
            format!("the tool's blocking task did not finish: {e}"),
        ))),
    }
}

/// The JSON Schema of `A` as a tool's parameters: `$schema` and the Rust
/// type's `title` are dropped (providers do not want them).
pub fn schema_of<A: JsonSchema>() -> Value {
    let mut value = schemars::schema_for!(A).to_value();
    if let Some(map) = value.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
    }
    value
}

fn deserialize_args<A: DeserializeOwned>(args: Value) -> Result<A, BoxError> {
    serde_json::from_value(args).map_err(|e| {
        Box::new(ToolError::invalid_arguments(format!(
            "Invalid arguments: {e}"
        ))) as BoxError
    })
}

fn serialize_output<O: Serialize>(output: O) -> Result<Value, BoxError> {
    serde_json::to_value(output).map_err(|e| {
        Box::new(ToolError::new(
            ErrorKind::Internal,
            format!("the tool's output could not be serialised to JSON: {e}"),
        )) as BoxError
    })
}

// === impl Typed ===

#[async_trait]
impl<T: TypedTool> Tool for Typed<T> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    async fn call(&self, args: Value, ctx: &Context) -> Result<Value, BoxError> {
        let args = deserialize_args::<T::Args>(args)?;
        serialize_output(self.inner.run(args, ctx).await?)
    }
}

impl<T> fmt::Debug for Typed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Typed")
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

// === impl FnTool ===

#[async_trait]
impl<F, Fut, E> Tool for FnTool<F>
where
    F: Fn(Value, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, E>> + Send + 'static,
    E: Into<BoxError>,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    async fn call(&self, args: Value, ctx: &Context) -> Result<Value, BoxError> {
        (self.f)(args, ctx.clone()).await.map_err(Into::into)
    }
}

impl<F> fmt::Debug for FnTool<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnTool").field("name", &self.name).finish()
    }
}

// === impl TypedFnTool ===

#[async_trait]
impl<A, O, E, F, Fut> Tool for TypedFnTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + 'static,
    E: Into<BoxError>,
    F: Fn(A, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    async fn call(&self, args: Value, ctx: &Context) -> Result<Value, BoxError> {
        let args = deserialize_args::<A>(args)?;
        let output = (self.f)(args, ctx.clone()).await.map_err(Into::into)?;
        serialize_output(output)
    }
}

impl<A, F> fmt::Debug for TypedFnTool<A, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedFnTool")
            .field("name", &self.name)
            .finish()
    }
}

// === impl BlockingFnTool ===

#[async_trait]
impl<F, E> Tool for BlockingFnTool<F>
where
    F: Fn(Value, Context) -> Result<Value, E> + Send + Sync + 'static,
    E: Into<BoxError>,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    async fn call(&self, args: Value, ctx: &Context) -> Result<Value, BoxError> {
        let (f, ctx) = (self.f.clone(), ctx.clone());
        on_blocking_pool(move || f(args, ctx).map_err(Into::into)).await
    }
}

impl<F> fmt::Debug for BlockingFnTool<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockingFnTool")
            .field("name", &self.name)
            .finish()
    }
}

// === impl TypedBlockingFnTool ===

#[async_trait]
impl<A, O, E, F> Tool for TypedBlockingFnTool<A, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + 'static,
    E: Into<BoxError>,
    F: Fn(A, Context) -> Result<O, E> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    async fn call(&self, args: Value, ctx: &Context) -> Result<Value, BoxError> {
        let args = deserialize_args::<A>(args)?;
        let (f, ctx) = (self.f.clone(), ctx.clone());
        on_blocking_pool(move || serialize_output(f(args, ctx).map_err(Into::into)?)).await
    }
}

impl<A, F> fmt::Debug for TypedBlockingFnTool<A, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedBlockingFnTool")
            .field("name", &self.name)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct ReadArgs {
        /// The file to read.
        path: String,
        limit: Option<u32>,
    }

    struct Read;

    #[async_trait]
    impl TypedTool for Read {
        type Args = ReadArgs;
        type Output = String;
        fn name(&self) -> &str {
            "read_file"
        }
        fn description(&self) -> &str {
            "Read a file."
        }
        async fn run(&self, args: ReadArgs, _ctx: &Context) -> Result<String, BoxError> {
            Ok(format!("read {}", args.path))
        }
    }

    #[test]
    fn typed_schema_is_derived_without_meta_keys() {
        let t = typed(Read);
        let schema = t.parameters();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["path"]));
        assert_eq!(
            schema["properties"]["path"]["description"],
            "The file to read."
        );
        assert!(schema.get("$schema").is_none());
        assert!(schema.get("title").is_none());
    }

    #[tokio::test]
    async fn typed_tool_deserialises_and_serialises() {
        let t = typed(Read);
        let out = t.call(json!({"path": "a.txt"}), &Context::new()).await;
        assert_eq!(out.unwrap(), json!("read a.txt"));
        let err = t
            .call(json!({"path": 3}), &Context::new())
            .await
            .unwrap_err();
        let te = err.downcast_ref::<ToolError>().unwrap();
        assert_eq!(te.kind(), &ErrorKind::InvalidArguments);
    }

    #[tokio::test]
    async fn typed_fn_receives_context() {
        #[derive(Deserialize, JsonSchema)]
        struct Args {
            name: String,
        }
        let t = typed_fn("greet", "Greet.", |a: Args, ctx: Context| async move {
            let user = ctx
                .get::<crate::User>()
                .map(|u| u.0.clone())
                .unwrap_or_default();
            Ok::<_, BoxError>(format!("{} greets {}", user, a.name))
        });
        let ctx = Context::builder().with(crate::User("ada".into())).build();
        let out = t.call(json!({"name": "bob"}), &ctx).await.unwrap();
        assert_eq!(out, json!("ada greets bob"));
        // The context value is not part of the schema the model sees.
        assert!(t.parameters()["properties"].get("user").is_none());
    }
}
