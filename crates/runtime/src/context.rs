//! The per-run context handed to every tool: values the model neither sees
//! in the schema nor supplies (working directory, user, a credentials
//! handle…), keyed by their type.

use std::{
    any::{Any, TypeId},
    collections::HashMap,
    fmt,
    path::PathBuf,
    sync::Arc,
};

/// Typed extensions for one agent run. Cloning is cheap (one `Arc`).
///
/// ```
/// use toolwarden_runtime::{Context, WorkingDir};
///
/// let ctx = Context::builder().with(WorkingDir("/srv/repo".into())).build();
/// assert_eq!(ctx.get::<WorkingDir>().unwrap().0.to_str(), Some("/srv/repo"));
/// assert!(ctx.get::<String>().is_none());
/// ```
#[derive(Clone, Default)]
pub struct Context {
    values: Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

/// Builds a [`Context`].
#[derive(Default)]
pub struct ContextBuilder {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

/// The directory a run works in; a common context value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkingDir(pub PathBuf);

/// When the run must stop: in the context, every call still running then
/// is stopped (its future dropped, as at a timeout) and gets its one
/// result, a `cancelled` failure saying the run's deadline passed, so a
/// `step` or a batch cut short by the run's deadline still answers every
/// call. (Dropping the `step` future instead gives no results at all.)
/// Such a call counts in its tool's metrics (a `Cancelled` failure), not
/// in its breaker or the loop guard. A call whose turn at its tool comes
/// only at or after the deadline (queued behind a `sequential` call or
/// for a concurrency slot, or made after it) does not start the tool: it
/// gets the same result, and its tool's metrics do not count it. A retry
/// that could only start at or after the deadline (its backoff, or its
/// wait for a concurrency slot, ends then) is not made: the call ends with
/// the failure that stopped it (a rate limit, say), not with the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline(pub tokio::time::Instant);

/// The user on whose behalf a run acts; a common context value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User(pub String);

// === impl Context ===

impl Context {
    /// An empty context.
    pub fn new() -> Self {
        Context::default()
    }

    /// Start building a context.
    pub fn builder() -> ContextBuilder {
        ContextBuilder::default()
    }

    /// The value of type `T`, if the run has one.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref::<T>())
    }

    /// A copy of this context with `value` added (or replaced).
    pub fn with<T: Any + Send + Sync>(&self, value: T) -> Context {
        let mut values = (*self.values).clone();
        values.insert(TypeId::of::<T>(), Arc::new(value));
        Context {
            values: Arc::new(values),
        }
    }

    /// How many values the context holds.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// `true` when the context holds no value.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Values may be secrets (credentials handles): only count them.
        f.debug_struct("Context")
            .field("values", &self.values.len())
            .finish()
    }
}

// === impl ContextBuilder ===

impl ContextBuilder {
    /// Add (or replace) the value of type `T`.
    pub fn with<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
        self
    }

    /// The finished context.
    pub fn build(self) -> Context {
        Context {
            values: Arc::new(self.values),
        }
    }
}

impl fmt::Debug for ContextBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContextBuilder")
            .field("values", &self.values.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Secret(&'static str);

    #[test]
    fn values_are_found_by_type() {
        let ctx = Context::builder()
            .with(User("ada".into()))
            .with(Secret("s3cr3t"))
            .build();
        assert_eq!(ctx.get::<User>(), Some(&User("ada".into())));
        assert_eq!(ctx.get::<Secret>(), Some(&Secret("s3cr3t")));
        assert_eq!(ctx.get::<WorkingDir>(), None);
        assert_eq!(ctx.len(), 2);
    }

    #[test]
    fn with_copies_and_leaves_the_original_alone() {
        let a = Context::new();
        let b = a.with(User("bob".into()));
        assert!(a.is_empty());
        assert_eq!(b.get::<User>().map(|u| u.0.as_str()), Some("bob"));
    }

    #[test]
    fn debug_does_not_print_values() {
        let ctx = Context::builder().with(Secret("s3cr3t")).build();
        assert!(!format!("{ctx:?}").contains("s3cr3t"));
    }
}
