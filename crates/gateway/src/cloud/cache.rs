//! A credential kept between requests and fetched again before it expires
//! ([`CredentialCache`]): the AWS chain's credentials (`aws::chain`) and
//! Google's access token (`google`).
//!
//! - One fetch at a time (single flight).
//! - From [`refresh_margin`] before the credential expires, it is fetched
//!   again in the background; until it expires, callers go on using it
//!   meanwhile, without waiting.
//! - A caller with no valid credential waits for the fetch under way
//!   (bounded by that fetch's own timeout) and takes its result: never one
//!   fetch each.
//! - After a failed fetch the next is tried [`RETRY_AFTER`] after that
//!   fetch ended; until then callers get what is still valid, else
//!   [`Miss::Backoff`] at once. A fetch that gives a credential already
//!   expired counts as failed ([`Miss::Expired`]).
//! - A credential without an expiry (static keys, or session keys written
//!   into a profile file) is fetched again [`NO_EXPIRY_REFRESH`] after it
//!   was loaded, as the AWS SDKs' identity cache does, and used until a
//!   fetch replaces it.
//!
//! The credential's own times are wall-clock ([`SystemTime`], as providers
//! give expiries); the backoff is measured on tokio's clock.

use std::{
    fmt,
    future::Future,
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, SystemTime},
};

use tokio::time::Instant;

use super::fetch::refresh_margin;

/// How long after a failed fetch ended the next is tried.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(5);

/// When a credential that does not say when it expires is fetched again.
pub(crate) const NO_EXPIRY_REFRESH: Duration = Duration::from_secs(15 * 60);

/// What one fetch gives: the credential and when it expires (`None`: the
/// source does not say).
#[derive(Debug)]
pub(crate) struct Fetched<T> {
    /// The credential.
    pub(crate) value: T,
    /// When it expires.
    pub(crate) expires: Option<SystemTime>,
}

/// Why [`CredentialCache::get`] has no credential to give.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Miss<E> {
    /// The fetch this caller made or waited for failed.
    #[error("{0}")]
    Failed(E),
    /// The fetch gave a credential that had already expired.
    #[error("the credential fetched had already expired")]
    Expired,
    /// The last fetch failed moments ago; the next is tried shortly.
    #[error("the last fetch failed moments ago; the next is tried shortly")]
    Backoff,
}

/// A credential shared by every request, fetched one fetch at a time (see
/// the module docs). Cloning gives another handle on the same cache.
pub(crate) struct CredentialCache<T>(Arc<Inner<T>>);

struct Inner<T> {
    /// What is cached, for the log (never the credential).
    what: String,
    state: Mutex<State<T>>,
    /// Held while a fetch runs.
    flight: Arc<tokio::sync::Mutex<()>>,
}

struct State<T> {
    held: Option<Held<T>>,
    /// No fetch before this (set when one fails).
    retry_at: Option<Instant>,
}

struct Held<T> {
    value: T,
    /// When to fetch again.
    refresh_at: SystemTime,
    /// When it stops being valid (`None`: never).
    expires: Option<SystemTime>,
}

/// What the cache can do for a caller now.
enum Look<T> {
    /// A credential to use as it is.
    Use(T),
    /// A credential still valid but due to be fetched again.
    Refresh(T),
    /// None valid, and the last fetch failed moments ago.
    Backoff,
    /// None valid: fetch one (or wait for the fetch under way).
    Missing,
}

// === impl CredentialCache ===

impl<T: Clone + Send + Sync + 'static> CredentialCache<T> {
    /// An empty cache; `what` names the credential in the log.
    pub(crate) fn new(what: impl Into<String>) -> CredentialCache<T> {
        CredentialCache(Arc::new(Inner {
            what: what.into(),
            state: Mutex::new(State {
                held: None,
                retry_at: None,
            }),
            flight: Arc::new(tokio::sync::Mutex::new(())),
        }))
    }

    /// The credential to use now. `fetch` makes the fetch (called at most
    /// once, and only when one is due and none is under way); a refresh
    /// runs in the background while the current credential is still
    /// valid, else this call waits for the fetch under way or makes it.
    pub(crate) async fn get<E, Fut>(&self, fetch: impl FnOnce() -> Fut) -> Result<T, Miss<E>>
    where
        Fut: Future<Output = Result<Fetched<T>, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
    {
        match self.0.look() {
            Look::Use(value) => return Ok(value),
            Look::Refresh(value) => {
                self.refresh_in_background(fetch);
                return Ok(value);
            }
            Look::Backoff => return Err(Miss::Backoff),
            Look::Missing => {}
        }
        let _flight = self.0.flight.lock().await;
        // The fetch waited for may have settled it either way.
        match self.0.look() {
            Look::Use(value) | Look::Refresh(value) => Ok(value),
            Look::Backoff => Err(Miss::Backoff),
            Look::Missing => self.0.keep(fetch().await),
        }
    }

    /// Start a fetch in the background unless one is under way; a failure
    /// is logged (the current credential is used until it expires).
    fn refresh_in_background<E, Fut>(&self, fetch: impl FnOnce() -> Fut)
    where
        Fut: Future<Output = Result<Fetched<T>, E>> + Send + 'static,
        E: fmt::Display + Send + 'static,
    {
        let Ok(flight) = Arc::clone(&self.0.flight).try_lock_owned() else {
            return;
        };
        let inner = Arc::clone(&self.0);
        let fetching = fetch();
        tokio::spawn(async move {
            let _flight = flight;
            // A fetch that ended since this caller looked may have done it.
            if !matches!(inner.look(), Look::Refresh(_)) {
                return;
            }
            if let Err(e) = inner.keep(fetching.await) {
                tracing::warn!(error = %e, credential = %inner.what, "refreshing a cached credential failed; the current one is used until it expires");
            }
        });
    }

    /// Put `value`, loaded at `loaded` and expiring at `expires`, in the
    /// cache (tests: a credential as an earlier fetch left it).
    #[cfg(test)]
    pub(crate) fn seed(&self, value: T, loaded: SystemTime, expires: Option<SystemTime>) {
        self.0.state().held = Some(Held::new(Fetched { value, expires }, loaded));
    }
}

impl<T> Clone for CredentialCache<T> {
    fn clone(&self) -> Self {
        CredentialCache(Arc::clone(&self.0))
    }
}

impl<T> fmt::Debug for CredentialCache<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CredentialCache")
            .field("what", &self.0.what)
            .finish_non_exhaustive()
    }
}

// === impl Inner ===

impl<T: Clone> Inner<T> {
    fn state(&self) -> std::sync::MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the cache holds for a caller now.
    fn look(&self) -> Look<T> {
        let state = self.state();
        let now = SystemTime::now();
        let backoff = state.retry_at.is_some_and(|at| Instant::now() < at);
        match &state.held {
            Some(held) if now < held.refresh_at => Look::Use(held.value.clone()),
            Some(held) if held.expires.is_none_or(|at| now < at) => {
                if backoff {
                    Look::Use(held.value.clone())
                } else {
                    Look::Refresh(held.value.clone())
                }
            }
            _ if backoff => Look::Backoff,
            _ => Look::Missing,
        }
    }

    /// Keep what a fetch gave; after a failure (or a credential already
    /// expired), no fetch before [`RETRY_AFTER`] from now (the fetch's end).
    fn keep<E>(&self, fetched: Result<Fetched<T>, E>) -> Result<T, Miss<E>> {
        let now = SystemTime::now();
        let mut state = self.state();
        let miss = match fetched {
            Ok(fetched) if fetched.expires.is_some_and(|at| at <= now) => Miss::Expired,
            Ok(fetched) => {
                let value = fetched.value.clone();
                state.held = Some(Held::new(fetched, now));
                state.retry_at = None;
                return Ok(value);
            }
            Err(e) => Miss::Failed(e),
        };
        state.retry_at = Some(Instant::now() + RETRY_AFTER);
        Err(miss)
    }
}

// === impl Held ===

impl<T> Held<T> {
    /// A credential loaded at `loaded`, fetched again [`refresh_margin`]
    /// before it expires, or [`NO_EXPIRY_REFRESH`] after `loaded` when it
    /// does not say.
    fn new(fetched: Fetched<T>, loaded: SystemTime) -> Held<T> {
        let refresh_at = match fetched.expires {
            Some(expires) => {
                let lifetime = expires.duration_since(loaded).unwrap_or(Duration::ZERO);
                expires
                    .checked_sub(refresh_margin(lifetime))
                    .unwrap_or(expires)
            }
            None => loaded + NO_EXPIRY_REFRESH,
        };
        Held {
            value: fetched.value,
            refresh_at,
            expires: fetched.expires,
        }
    }
}
