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
//! `aws-smithy-http-client` on rustls with ring, with the `resolve`
//! setting applied ([`super::client`]). It reads the profile files
//! itself (`HOME`, `AWS_CONFIG_FILE`, `AWS_SHARED_CREDENTIALS_FILE` from the
//! given environment) and honours `AWS_ENDPOINT_URL_STS` /
//! `AWS_ENDPOINT_URL_SSO` / `AWS_ENDPOINT_URL_SSO_OIDC`, a profile's
//! `[services …]` section and its `endpoint_url`.
//!
//! Its providers do not cache (an SDK client's identity cache does, and
//! the gateway is not an SDK client), so [`Chain`] keeps the last
//! credentials in a [`CredentialCache`]: asked for again in the background
//! shortly before they expire, one pass through the chain at a time, the
//! current ones used until then; requests with none valid wait for that
//! one pass; after a failure the next is tried
//! [`crate::cloud::cache::RETRY_AFTER`] after it ended. The chain is built
//! on first use. Nothing here logs a key.

use std::{collections::HashMap, net::SocketAddr, sync::Arc, time::Duration};

use aws_config::{BehaviorVersion, Region};
use aws_credential_types::{
    Credentials,
    provider::{ProvideCredentials, SharedCredentialsProvider, error::CredentialsError},
};
use aws_types::os_shim_internal::Env;
use tokio::sync::OnceCell;

use crate::{
    cloud::cache::{CredentialCache, Fetched, Miss},
    resolve::Resolve,
};

/// The container credentials endpoint's URL, which `resolve` may change
/// ([`super::client::container_full_uri`]).
const CONTAINER_FULL_URI: &str = "AWS_CONTAINER_CREDENTIALS_FULL_URI";

/// The container credentials endpoint's path at `169.254.170.2`, which
/// comes before [`CONTAINER_FULL_URI`].
const CONTAINER_RELATIVE_URI: &str = "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI";

/// The variables that name a URL the chain calls for credentials
/// (`AWS_ENDPOINT_URL`, every service's, which is as likely set for the
/// clients beside the gateway and may name the gateway itself, is judged
/// with the profile's settings, [`super::profile::endpoints`], where the
/// chain's clients take it).
const ENDPOINT_VARIABLES: [&str; 4] = [
    CONTAINER_FULL_URI,
    "AWS_ENDPOINT_URL_STS",
    "AWS_ENDPOINT_URL_SSO",
    "AWS_ENDPOINT_URL_SSO_OIDC",
];

/// The instance metadata service's URL, asked unless
/// `AWS_EC2_METADATA_DISABLED` is `true` (aws-config's
/// `ImdsCredentialsProvider::imds_disabled`).
const IMDS_ENDPOINT: &str = "AWS_EC2_METADATA_SERVICE_ENDPOINT";

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

/// A URL the chain calls, with the setting that names it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub(crate) setting: String,
    pub(crate) url: String,
    pub(crate) reach: Reach,
}

/// Whose a setting is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// The chain's own (a service's variable or `[services …]` section,
    /// the container's, IMDS's).
    Own,
    /// Every AWS service's (`AWS_ENDPOINT_URL`, a profile's
    /// `endpoint_url`), which the clients beside the gateway read too,
    /// taken by the chain's clients of these services (`STS`, …).
    Shared(Vec<&'static str>),
    /// A service's default endpoint, which no setting names
    /// ([`super::profile::default_endpoints`]): only a `resolve` entry can
    /// lead it elsewhere.
    Default,
}

/// `aws-config`'s default credential chain, cached.
pub(crate) struct Chain {
    env: HashMap<String, String>,
    region: String,
    provider: OnceCell<SharedCredentialsProvider>,
    credentials: CredentialCache<Credentials>,
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
            credentials: CredentialCache::new("AWS credentials"),
        }
    }

    /// The endpoint URLs its environment and the selected profile set
    /// for the chain's calls, each with the setting that names it
    /// ([`super::profile::endpoints`]); the instance metadata service's
    /// only when it is asked. None when the environment's keys come first
    /// in the chain, which then calls nothing: both set and not blank (an
    /// empty or blank one is no key to aws-config's environment provider,
    /// `err_if_blank`, and the chain goes on).
    pub(crate) fn endpoints(&self) -> Vec<Endpoint> {
        let key = |name: &str| self.env.get(name).is_some_and(|v| !v.trim().is_empty());
        if key("AWS_ACCESS_KEY_ID") && key("AWS_SECRET_ACCESS_KEY") {
            return Vec::new();
        }
        let imds = !self
            .env
            .get("AWS_EC2_METADATA_DISABLED")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let imds_variable = imds.then_some(IMDS_ENDPOINT);
        // aws-config's `ecs` module takes the relative URI (at
        // 169.254.170.2) when it is set, and the full one only without it.
        let relative = self.env.contains_key(CONTAINER_RELATIVE_URI);
        let mut urls: Vec<Endpoint> = ENDPOINT_VARIABLES
            .into_iter()
            .filter(|name| !(relative && *name == CONTAINER_FULL_URI))
            .chain(imds_variable)
            .filter_map(|name| {
                Some(Endpoint {
                    setting: name.to_string(),
                    url: self.env.get(name)?.clone(),
                    reach: Reach::Own,
                })
            })
            .collect();
        urls.extend(super::profile::endpoints(&self.env, imds));
        urls.extend(super::profile::default_endpoints(&self.env, &self.region));
        urls
    }

    /// The credentials to sign with now: cached, or loaded (see the module
    /// docs). The chain is built, on first use, with `resolve` applied to
    /// its HTTP client, which refuses to reach `listen`, the gateway's own
    /// bound address ([`super::client`]).
    pub(crate) async fn current(
        self: &Arc<Self>,
        resolve: &Resolve,
        listen: SocketAddr,
    ) -> Result<Credentials, Unavailable> {
        let load = || {
            let chain = Arc::clone(self);
            let resolve = resolve.clone();
            async move { chain.load(&resolve, listen).await }
        };
        self.credentials.get(load).await.map_err(|miss| match miss {
            Miss::Failed(e) => e,
            Miss::Expired => {
                Unavailable::Failed("the chain gave credentials that had already expired".into())
            }
            Miss::Backoff => Unavailable::Backoff,
        })
    }

    /// One pass through the chain, within [`LOAD_TIMEOUT`].
    async fn load(
        &self,
        resolve: &Resolve,
        listen: SocketAddr,
    ) -> Result<Fetched<Credentials>, Unavailable> {
        let provider = self
            .provider
            .get_or_init(|| self.build(resolve, listen))
            .await;
        let loaded = tokio::time::timeout(LOAD_TIMEOUT, provider.provide_credentials()).await;
        match loaded {
            Ok(Ok(creds)) => Ok(Fetched {
                expires: creds.expiry(),
                value: creds,
            }),
            Ok(Err(e @ CredentialsError::CredentialsNotLoaded(_))) => {
                Err(Unavailable::NotFound(error_chain(&e)))
            }
            Ok(Err(e)) => Err(Unavailable::Failed(error_chain(&e))),
            Err(_) => Err(Unavailable::Failed(format!(
                "no answer within {} s",
                LOAD_TIMEOUT.as_secs()
            ))),
        }
    }

    /// `aws-config`'s default chain with a rustls-on-ring HTTPS client
    /// that applies `resolve` and refuses to reach `listen`.
    async fn build(&self, resolve: &Resolve, listen: SocketAddr) -> SharedCredentialsProvider {
        let http = super::client::http_client(resolve, listen);
        let mut env = self.env.clone();
        if let Some(uri) = env
            .get(CONTAINER_FULL_URI)
            .and_then(|uri| super::client::container_full_uri(uri, resolve))
        {
            env.insert(CONTAINER_FULL_URI.into(), uri);
        }
        let config = aws_config::defaults(BehaviorVersion::latest())
            .env(Env::from(env))
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
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
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

#[cfg(test)]
mod tests {
    use std::{
        sync::atomic::{AtomicUsize, Ordering},
        time::SystemTime,
    };

    use aws_credential_types::provider::{self, future};
    use tokio::time::Instant;

    use super::*;
    use crate::{
        cloud::cache::{NO_EXPIRY_REFRESH, RETRY_AFTER},
        local::own::UNBOUND,
    };

    /// A provider that counts its calls and gives `answer` after `delay`
    /// (never, for `None`).
    #[derive(Debug)]
    struct Scripted {
        calls: Arc<AtomicUsize>,
        delay: Option<Duration>,
        answer: fn() -> provider::Result,
    }

    impl ProvideCredentials for Scripted {
        fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
        where
            Self: 'a,
        {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let (delay, answer) = (self.delay, self.answer);
            future::ProvideCredentials::new(async move {
                match delay {
                    Some(delay) => tokio::time::sleep(delay).await,
                    None => std::future::pending().await,
                }
                answer()
            })
        }
    }

    /// A chain whose one source is `Scripted`, and its call count.
    fn scripted(
        delay: Option<Duration>,
        answer: fn() -> provider::Result,
    ) -> (Arc<Chain>, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let mut chain = Chain::new(HashMap::new(), "us-east-1".into());
        let provider = Scripted {
            calls: Arc::clone(&calls),
            delay,
            answer,
        };
        chain.provider = OnceCell::new_with(Some(SharedCredentialsProvider::new(provider)));
        (Arc::new(chain), calls)
    }

    fn refused() -> provider::Result {
        Err(CredentialsError::provider_error("refused"))
    }

    fn loaded() -> provider::Result {
        Ok(Credentials::new("AKIDLOADED", "s", None, None, "test"))
    }

    fn expired() -> provider::Result {
        let expired = SystemTime::now() - Duration::from_secs(1);
        Ok(Credentials::new(
            "AKIDSTALE",
            "s",
            None,
            Some(expired),
            "test",
        ))
    }

    /// Credentials as a load ten minutes ago left them, valid one more
    /// minute: inside the refresh margin.
    fn seed_due(chain: &Chain) {
        let now = SystemTime::now();
        let expires = now + Duration::from_secs(60);
        let creds = Credentials::new("AKIDSEEDED", "s", None, Some(expires), "test");
        let loaded = now - Duration::from_secs(600);
        chain.credentials.seed(creds, loaded, Some(expires));
    }

    /// `current()` three times at once, each with the time it took.
    async fn three_at_once(
        chain: &Arc<Chain>,
    ) -> Vec<(Result<Credentials, Unavailable>, Duration)> {
        let timed = || async {
            let start = Instant::now();
            let current = chain.current(&Resolve::default(), UNBOUND).await;
            (current, start.elapsed())
        };
        let (a, b, c) = tokio::join!(timed(), timed(), timed());
        vec![a, b, c]
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_load_slower_than_the_backoff_is_not_tried_again_at_once() {
        let (chain, calls) = scripted(Some(RETRY_AFTER + Duration::from_secs(1)), refused);
        let first = chain.current(&Resolve::default(), UNBOUND).await;
        assert!(matches!(first, Err(Unavailable::Failed(_))), "{first:?}");
        let start = Instant::now();
        let second = chain.current(&Resolve::default(), UNBOUND).await;
        assert!(matches!(second, Err(Unavailable::Backoff)), "{second:?}");
        assert_eq!(start.elapsed(), Duration::ZERO);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn while_a_refresh_hangs_callers_get_the_still_valid_credentials_at_once() {
        let (chain, calls) = scripted(None, loaded);
        seed_due(&chain);
        for (current, took) in three_at_once(&chain).await {
            assert_eq!(current.unwrap().access_key_id(), "AKIDSEEDED");
            assert_eq!(took, Duration::ZERO);
        }
        // The refresh, started in the background, is still waiting.
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 1, "one refresh");
    }

    #[tokio::test(start_paused = true)]
    async fn callers_with_no_credentials_wait_for_one_load() {
        let (chain, calls) = scripted(Some(Duration::from_secs(2)), loaded);
        for (current, took) in three_at_once(&chain).await {
            assert_eq!(current.unwrap().access_key_id(), "AKIDLOADED");
            assert_eq!(took, Duration::from_secs(2));
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        let (chain, calls) = scripted(Some(Duration::from_secs(2)), refused);
        let results = three_at_once(&chain).await;
        let failed = results
            .iter()
            .filter(|(r, _)| matches!(r, Err(Unavailable::Failed(_))))
            .count();
        let backoff = results
            .iter()
            .filter(|(r, _)| matches!(r, Err(Unavailable::Backoff)))
            .count();
        assert_eq!((failed, backoff), (1, 2), "{results:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn credentials_given_already_expired_count_as_a_failed_load() {
        let (chain, calls) = scripted(Some(Duration::ZERO), expired);
        let first = chain.current(&Resolve::default(), UNBOUND).await;
        assert!(
            matches!(&first, Err(Unavailable::Failed(e)) if e.contains("already expired")),
            "{first:?}"
        );
        let second = chain.current(&Resolve::default(), UNBOUND).await;
        assert!(matches!(second, Err(Unavailable::Backoff)), "{second:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn credentials_without_an_expiry_are_loaded_again_after_15_minutes() {
        let (chain, calls) = scripted(Some(Duration::ZERO), loaded);
        let seed = |age: Duration| {
            let creds = Credentials::new("AKIDSEEDED", "s", None, None, "test");
            let loaded = SystemTime::now() - age;
            chain.credentials.seed(creds, loaded, None);
        };
        let key = || async {
            chain
                .current(&Resolve::default(), UNBOUND)
                .await
                .unwrap()
                .access_key_id()
                .to_string()
        };
        seed(NO_EXPIRY_REFRESH - Duration::from_secs(60));
        assert_eq!(key().await, "AKIDSEEDED");
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 0, "loaded again too soon");

        seed(NO_EXPIRY_REFRESH + Duration::from_secs(60));
        // Used while the load runs in the background, then replaced.
        assert_eq!(key().await, "AKIDSEEDED");
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(key().await, "AKIDLOADED");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
