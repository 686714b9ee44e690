//! The [`Tool`] trait and three ways to make one: implement it, implement
//! [`TypedTool`] (arguments deserialised into a Rust type whose JSON Schema
//! is derived with `schemars`), or wrap an async closure ([`tool_fn`],
//! [`typed_fn`]).

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
