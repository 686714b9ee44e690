//! AWS credentials from `aws-config`'s default chain, over the environment
//! the gateway read at start-up ([`super::AwsEnv`]): the environment's
//! keys, the profile (`AWS_PROFILE`) with its static keys, `role_arn` +
//! `source_profile` / `credential_source` (STS `AssumeRole`), SSO
//! (`sso_session` or `sso_start_url`, with the cached token under
//! `~/.aws/sso/cache/`), `credential_process` or web identity; then web
//! identity from the environment, the container credentials endpoint and
//! the EC2 instance metadata service.
//!
//! `aws-config` is built without its default HTTPS client (it would bring
//! aws-lc): its STS, SSO, container and IMDS calls go through
//! `aws-smithy-http-client` on rustls with ring. It reads the profile files
//! itself (`HOME`, `AWS_CONFIG_FILE`, `AWS_SHARED_CREDENTIALS_FILE` from the
//! given environment) and honours `AWS_ENDPOINT_URL_STS` /
//! `AWS_ENDPOINT_URL_SSO` and a profile's `endpoint_url`.
//!
//! Its providers do not cache (an SDK client's identity cache does, and
//! the gateway is not an SDK client), so [`Chain`] keeps the last
//! credentials and asks the chain again shortly before they expire
//! ([`crate::cloud::fetch::refresh_margin`]); one request at a time; after a
//! failure the next is tried [`RETRY_AFTER`] later (credentials still valid
//! are used meanwhile). The chain is built on first use. Nothing here logs a
//! key.

use std::{
    collections::HashMap,
    time::{Duration, SystemTime},
};

use aws_config::{BehaviorVersion, Region};
use aws_credential_types::{
    Credentials,
    provider::{ProvideCredentials, SharedCredentialsProvider, error::CredentialsError},
};
use aws_smithy_http_client::{Builder as HttpClientBuilder, tls};
use aws_types::os_shim_internal::Env;
use tokio::sync::{Mutex, OnceCell};

/// How long after a failed attempt the chain is asked again.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(5);
/// How long one pass through the chain may take (a `credential_process`,
/// an SSO or STS call).
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);

/// Why there are no credentials to sign with now.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unavailable {
    /// No source in the chain is configured.
    #[error("no AWS credentials found in the default chain: {0}")]
    NotFound(String),
    /// A configured source failed (its message, never a key).
    #[error("AWS credentials could not be loaded: {0}")]
    Failed(String),
    /// The last attempt failed moments ago.
    #[error("the last attempt to load AWS credentials failed; retrying shortly")]
    Backoff,
}

/// `aws-config`'s default credential chain, cached.
pub(crate) struct Chain {
    env: HashMap<String, String>,
    region: String,
    provider: OnceCell<SharedCredentialsProvider>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The credentials and when they were loaded.
    current: Option<(Credentials, SystemTime)>,
    retry_at: Option<SystemTime>,
}

// === impl Chain ===

impl Chain {
    /// The chain over `env` (the variables `aws-config` reads), with STS's
    /// region `region`.
    pub(crate) fn new(env: HashMap<String, String>, region: String) -> Chain {
        Chain {
            env,
            region,
            provider: OnceCell::new(),
            state: Mutex::new(State::default()),
        }
    }

    /// The credentials to sign with now: cached, or loaded.
    pub(crate) async fn current(&self) -> Result<Credentials, Unavailable> {
        let mut state = self.state.lock().await;
        let now = SystemTime::now();
        let (fresh, valid) = match &state.current {
            Some((creds, loaded)) => match creds.expiry() {
                None => (Some(creds.clone()), Some(creds.clone())),
                Some(expires) => {
                    let lifetime = expires.duration_since(*loaded).unwrap_or(Duration::ZERO);
                    let refresh_at = expires - super::super::fetch::refresh_margin(lifetime);
                    (
                        (now < refresh_at).then(|| creds.clone()),
                        (now < expires).then(|| creds.clone()),
                    )
                }
            },
            None => (None, None),
        };
        if let Some(creds) = fresh {
            return Ok(creds);
        }
        if state.retry_at.is_some_and(|at| now < at) {
            return valid.ok_or(Unavailable::Backoff);
        }
        let provider = self.provider.get_or_init(|| self.build()).await;
        let loaded = tokio::time::timeout(LOAD_TIMEOUT, provider.provide_credentials()).await;
        let result = match loaded {
            Ok(Ok(creds)) => Ok(creds),
            Ok(Err(e @ CredentialsError::CredentialsNotLoaded(_))) => {
                Err(Unavailable::NotFound(error_chain(&e)))
            }
            Ok(Err(e)) => Err(Unavailable::Failed(error_chain(&e))),
            Err(_) => Err(Unavailable::Failed(format!(
                "no answer within {} s",
                LOAD_TIMEOUT.as_secs()
            ))),
        };
        match result {
            Ok(creds) => {
                state.current = Some((creds.clone(), SystemTime::now()));
                state.retry_at = None;
                Ok(creds)
            }
            Err(e) => {
                state.retry_at = Some(now + RETRY_AFTER);
                match valid {
                    Some(creds) => {
                        tracing::warn!(error = %e, "refreshing AWS credentials failed; the current ones are used");
                        Ok(creds)
                    }
                    None => Err(e),
                }
            }
        }
    }

    /// `aws-config`'s default chain with a rustls-on-ring HTTPS client.
    async fn build(&self) -> SharedCredentialsProvider {
        let http = HttpClientBuilder::new()
            .tls_provider(tls::Provider::Rustls(
                tls::rustls_provider::CryptoMode::Ring,
            ))
            .build_https();
        let config = aws_config::defaults(BehaviorVersion::latest())
            .env(Env::from(self.env.clone()))
            .http_client(http)
            .region(Region::new(self.region.clone()))
            .load()
            .await;
        // `load` always makes the default chain when none was given.
        config
            .credentials_provider()
            .unwrap_or_else(|| SharedCredentialsProvider::new(NoCredentials))
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

/// A provider that has none (what `load` would give without a chain).
#[derive(Debug)]
struct NoCredentials;

impl ProvideCredentials for NoCredentials {
    fn provide_credentials<'a>(
        &'a self,
    ) -> aws_credential_types::provider::future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        aws_credential_types::provider::future::ProvideCredentials::ready(Err(
            CredentialsError::not_loaded("no credential chain"),
        ))
    }
}

/// An error and its sources, `: `-joined (AWS's errors put the useful part
/// in the sources; none holds a key).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}
