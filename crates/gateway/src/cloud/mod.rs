//! Cloud endpoints (issue 18): Azure OpenAI, Google Vertex AI and AWS
//! Bedrock Runtime, served by hyper's path (`proxy::handle`). This
//! module is what `config` needs of them (the settings, validated, with the
//! credential providers) and depends on no request-time module; the
//! proxy's side is `proxy::cloud`.
//!
//! - `routes::cloud`: which cloud path a request takes (each also accepted under
//!   a `/azure`, `/vertex` or `/bedrock` prefix, stripped before
//!   forwarding), its dialect and the model named in the path;
//! - [`CloudConfig`]: the three upstreams, validated once in
//!   `config`; `CloudConfig::upstream` picks a request's (Vertex's
//!   default comes from the path's location);
//! - [`aws`]: the AWS credentials (`aws-config`'s default chain), the
//!   profile's region, and the SigV4 re-signing of every forwarded Bedrock
//!   request, with the clock corrected for skew ([`aws::skew`]);
//! - [`google`]: Google application default credentials, whose token the
//!   gateway adds to Vertex requests that come without one;
//! - `cache`: the AWS credentials and the Google token kept between
//!   requests, fetched again one fetch at a time;
//! - `fetch`: the Google credential providers' one HTTP exchange;
//! - `frames`: Bedrock event streams relayed frame by frame, so that a
//!   cut one ends with an exception frame.

pub mod aws;
pub(crate) mod cache;
pub(crate) mod fetch;
pub(crate) mod frames;
pub mod google;

use std::sync::Arc;

use crate::upstream_url::Upstream;

/// The cloud upstreams, validated.
#[derive(Debug, Clone, Default)]
pub struct CloudConfig {
    /// `azure_upstream`: an Azure OpenAI resource (no default).
    pub azure: Option<Upstream>,
    /// `vertex_upstream`: `None` = `https://{location}-aiplatform.googleapis.com`
    /// from the request's path.
    pub vertex: Option<Upstream>,
    /// `bedrock_upstream`, else `https://bedrock-runtime.{region}.amazonaws.com`
    /// when a region is known; `None` = not configured.
    pub bedrock: Option<Upstream>,
    /// The SigV4 signing region: the region of a `bedrock_upstream` host
    /// `bedrock-runtime[-fips].{region}.amazonaws.com[.cn]`, else
    /// `bedrock_region`, else `AWS_REGION` (or `AWS_DEFAULT_REGION`), else
    /// the selected AWS profile's `region` ([`aws::AwsEnv::profile_region`]).
    pub bedrock_region: Option<String>,
    /// AWS credentials for re-signing Bedrock requests (`None`, or none
    /// found in the chain: forwarded with the client's signature).
    pub aws_credentials: Option<aws::AwsCredentials>,
    /// The clock the gateway signs Bedrock requests with: this host's,
    /// corrected after AWS refuses a signature for its time.
    pub aws_clock: Arc<aws::skew::ClockSkew>,
    /// Google application default credentials: their token is added to
    /// Vertex requests that carry no credential (`None`: none found).
    pub google: Option<Arc<google::GoogleAuth>>,
    /// `lend_token`: the token a client presents to be lent the two above
    /// (`None`: lent to any client but a web page elsewhere).
    pub lend_token: Option<crate::local::LendToken>,
}

/// The cloud settings as read (see [`crate::RawConfig`]).
#[derive(Debug, Default)]
pub struct RawCloud {
    /// `azure_upstream`.
    pub azure_upstream: Option<String>,
    /// `vertex_upstream`.
    pub vertex_upstream: Option<String>,
    /// `bedrock_upstream`.
    pub bedrock_upstream: Option<String>,
    /// `bedrock_region`.
    pub bedrock_region: Option<String>,
    /// `lend_token`.
    pub lend_token: Option<String>,
    /// `AWS_*` variables.
    pub aws_env: aws::AwsEnv,
}

// === impl CloudConfig ===

impl CloudConfig {
    /// Validate the cloud settings; problems are pushed to `problems`,
    /// what start-up should warn of to `warnings`.
    pub fn validate(
        raw: RawCloud,
        problems: &mut Vec<String>,
        warnings: &mut Vec<String>,
    ) -> CloudConfig {
        let mut upstream = |name: &str, value: Option<String>| {
            let value = value?;
            Upstream::parse_setting(name, &value)
                .map_err(|e| problems.push(e))
                .ok()
        };
        let azure = upstream("azure_upstream", raw.azure_upstream);
        let vertex = upstream("vertex_upstream", raw.vertex_upstream);
        let explicit_bedrock = raw.bedrock_upstream.is_some();
        let bedrock_upstream = upstream("bedrock_upstream", raw.bedrock_upstream);
        let set_region = raw
            .bedrock_region
            .filter(|r| !r.trim().is_empty())
            .map(|r| r.trim().to_string());
        // A Bedrock Runtime host accepts only signatures for its own
        // region: an ambient `AWS_REGION` gives way to it, and a
        // `bedrock_region` naming another could never be signed for.
        let host_region = bedrock_upstream
            .as_ref()
            .and_then(|u| aws::host_region(u.host()))
            .map(String::from);
        if let (Some(set), Some(host)) = (&set_region, &host_region)
            && set != host
        {
            problems.push(format!(
                "bedrock_region {set:?} differs from the region of bedrock_upstream's host \
                 ({host:?}), which accepts only requests signed for {host:?}: set \
                 bedrock_region to {host:?} or leave it out"
            ));
        }
        // Told to serve Bedrock, not only set up by an ambient region.
        let bedrock_asked = explicit_bedrock || set_region.is_some();
        let bedrock_region = host_region
            .or(set_region)
            .or_else(|| raw.aws_env.region().map(|r| r.trim().to_string()))
            .or_else(|| {
                raw.aws_env
                    .profile_region()
                    .map_err(|e| {
                        warnings.push(format!("AWS profile: {e}: its region is not read"));
                    })
                    .ok()
                    .flatten()
            });
        if let Some(region) = &bedrock_region {
            let valid = region
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !valid {
                problems.push(format!("bedrock_region {region:?}: not an AWS region name"));
            }
        }
        let bedrock = match (explicit_bedrock, &bedrock_region) {
            (true, _) => bedrock_upstream,
            (false, Some(region)) => bedrock_default(region).ok(),
            (false, None) => None,
        };
        let aws_credentials = raw
            .aws_env
            .credentials(bedrock_region.as_deref())
            .map_err(|e| problems.push(format!("AWS credentials: {e}")))
            .ok();
        // Files a machine keeps for other programs: their fault stops the
        // gateway only when it was told to serve Bedrock, not when the
        // region alone (`AWS_REGION`, the profile's) sets its default up.
        if let Some(problem) = raw.aws_env.profile_keys_problem() {
            if bedrock_asked {
                problems.push(format!("AWS credentials: {problem}"));
            } else if bedrock.is_some() {
                warnings.push(format!(
                    "AWS credentials: {problem}; Bedrock requests the gateway signs would \
                     fail (with bedrock_upstream or bedrock_region set, this stops the gateway)"
                ));
            }
        }
        let google = google::GoogleAuth::from_env(&raw.aws_env, warnings)
            .map_err(|e| problems.push(format!("Google credentials: {e}")))
            .ok()
            .flatten()
            .map(Arc::new);
        let lend_token = crate::local::LendToken::parse(raw.lend_token.as_deref().unwrap_or(""))
            .map_err(|e| problems.push(e))
            .ok()
            .flatten();
        CloudConfig {
            azure,
            vertex,
            bedrock,
            bedrock_region,
            aws_credentials,
            aws_clock: Arc::default(),
            google,
            lend_token,
        }
    }
}

/// Vertex AI's endpoint for a location: `global` →
/// `https://aiplatform.googleapis.com`; the multi-regions `us` and `eu` →
/// their representative endpoints, `https://aiplatform.{us|eu}.rep.googleapis.com`;
/// else `https://{location}-aiplatform.googleapis.com`.
pub fn vertex_default(location: &str) -> Result<Upstream, String> {
    match location {
        "global" => return Upstream::parse("https://aiplatform.googleapis.com"),
        "us" | "eu" => {
            return Upstream::parse(&format!("https://aiplatform.{location}.rep.googleapis.com"));
        }
        _ => {}
    }
    if !is_vertex_location(location) {
        return Err(format!("{location:?} is not a Vertex AI location"));
    }
    Upstream::parse(&format!("https://{location}-aiplatform.googleapis.com"))
}

/// The location whose endpoint [`vertex_default`] makes `host` (lower
/// case), if any.
pub(crate) fn vertex_location(host: &str) -> Option<&str> {
    match host {
        "aiplatform.googleapis.com" => return Some("global"),
        "aiplatform.us.rep.googleapis.com" => return Some("us"),
        "aiplatform.eu.rep.googleapis.com" => return Some("eu"),
        _ => {}
    }
    host.strip_suffix("-aiplatform.googleapis.com")
        .filter(|l| is_vertex_location(l))
}

/// Whether `location` can name a Vertex AI location (lowercase letters,
/// digits and `-`, not empty), and so a host of [`vertex_default`]'s.
pub(crate) fn is_vertex_location(location: &str) -> bool {
    !location.is_empty()
        && location
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Bedrock Runtime's endpoint for a region.
pub fn bedrock_default(region: &str) -> Result<Upstream, String> {
    Upstream::parse(&format!("https://bedrock-runtime.{region}.amazonaws.com"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_endpoint_from_the_location() {
        assert_eq!(
            vertex_default("global").unwrap().to_string(),
            "https://aiplatform.googleapis.com"
        );
        assert_eq!(
            vertex_default("us-east5").unwrap().to_string(),
            "https://us-east5-aiplatform.googleapis.com"
        );
        // The multi-regions' representative endpoints.
        for l in ["us", "eu"] {
            assert_eq!(
                vertex_default(l).unwrap().to_string(),
                format!("https://aiplatform.{l}.rep.googleapis.com")
            );
        }
        assert!(vertex_default("evil.com/x").is_err());
        assert!(vertex_default("").is_err());
    }

    /// A host is a location's endpoint when `vertex_default` makes it.
    #[test]
    fn the_location_of_a_vertex_endpoint() {
        for location in ["global", "us", "eu", "us-central1", "europe-west4"] {
            let up = vertex_default(location).unwrap();
            assert_eq!(vertex_location(up.host()), Some(location));
        }
        for host in [
            "-aiplatform.googleapis.com",
            "x.y-aiplatform.googleapis.com",
            "aiplatform.googleapis.com.evil.test",
            "us-central1-aiplatform.example.com",
        ] {
            assert_eq!(vertex_location(host), None, "{host}");
        }
    }

    /// The cloud settings validated with `bedrock_upstream`, `bedrock_region`
    /// and `AWS_REGION` as given: the signing region, or the problems.
    fn bedrock_region(
        upstream: Option<&str>,
        set: Option<&str>,
        env_region: Option<&str>,
    ) -> Result<Option<String>, Vec<String>> {
        let mut aws_env = aws::AwsEnv::default();
        // Deterministic on an EC2 machine too.
        aws_env.insert("AWS_EC2_METADATA_DISABLED".into(), "true".into());
        if let Some(region) = env_region {
            aws_env.insert("AWS_REGION".into(), region.into());
        }
        let raw = RawCloud {
            bedrock_upstream: upstream.map(String::from),
            bedrock_region: set.map(String::from),
            aws_env,
            ..RawCloud::default()
        };
        let mut problems = Vec::new();
        let cloud = CloudConfig::validate(raw, &mut problems, &mut Vec::new());
        if problems.is_empty() {
            Ok(cloud.bedrock_region)
        } else {
            Err(problems)
        }
    }

    /// The cloud settings validated with `bedrock_region` as set and the
    /// AWS variables `vars`, `AWS_CONFIG_FILE` a file holding `config`.
    fn with_profile(
        config: &str,
        set: Option<&str>,
        vars: &[(&str, &str)],
    ) -> (CloudConfig, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config");
        std::fs::write(&file, config).unwrap();
        let mut aws_env = aws::AwsEnv::default();
        aws_env.insert("AWS_EC2_METADATA_DISABLED".into(), "true".into());
        aws_env.insert("HOME".into(), dir.path().to_str().unwrap().into());
        aws_env.insert("AWS_CONFIG_FILE".into(), file.to_str().unwrap().into());
        for (k, v) in vars {
            aws_env.insert(k.to_string(), v.to_string());
        }
        let raw = RawCloud {
            bedrock_region: set.map(String::from),
            aws_env,
            ..RawCloud::default()
        };
        let (mut problems, mut warnings) = (Vec::new(), Vec::new());
        let cloud = CloudConfig::validate(raw, &mut problems, &mut warnings);
        assert_eq!(problems, Vec::<String>::new());
        (cloud, warnings)
    }

    #[test]
    fn the_region_aws_configure_wrote_configures_bedrock() {
        let config = "[default]\nregion = eu-central-1\n[profile work]\nregion = ap-south-1\n";
        let (cloud, warnings) = with_profile(config, None, &[]);
        assert_eq!(cloud.bedrock_region.as_deref(), Some("eu-central-1"));
        assert_eq!(
            cloud.bedrock.map(|u| u.to_string()).as_deref(),
            Some("https://bedrock-runtime.eu-central-1.amazonaws.com")
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        let region = |set, vars: &[(&str, &str)]| with_profile(config, set, vars).0.bedrock_region;
        assert_eq!(
            region(None, &[("AWS_PROFILE", "work")]).as_deref(),
            Some("ap-south-1")
        );
        // The environment's region, then the setting, come first.
        assert_eq!(
            region(None, &[("AWS_DEFAULT_REGION", "us-west-2")]).as_deref(),
            Some("us-west-2")
        );
        assert_eq!(
            region(Some("ca-central-1"), &[("AWS_REGION", "us-west-2")]).as_deref(),
            Some("ca-central-1")
        );
        // A file that cannot be parsed: a warning, and no region.
        let (cloud, warnings) = with_profile("region = eu-central-1\n", None, &[]);
        assert_eq!(
            (cloud.bedrock_region, cloud.bedrock.is_none()),
            (None, true)
        );
        assert!(warnings[0].starts_with("AWS profile: "), "{warnings:?}");
    }

    #[test]
    fn a_bedrock_upstreams_host_region_is_the_signing_region() {
        let eu = Some("https://bedrock-runtime.eu-west-3.amazonaws.com");
        // AWS_REGION set in the shell for other tools gives way to the
        // region the upstream's host accepts.
        assert_eq!(
            bedrock_region(eu, None, Some("us-east-1")),
            Ok(Some("eu-west-3".into()))
        );
        assert_eq!(
            bedrock_region(eu, Some("eu-west-3"), Some("us-east-1")),
            Ok(Some("eu-west-3".into()))
        );
        // A bedrock_region the host would refuse every signature for.
        let problems = bedrock_region(eu, Some("us-east-1"), None).unwrap_err();
        assert!(
            problems[0].contains("\"us-east-1\"") && problems[0].contains("\"eu-west-3\""),
            "{problems:?}"
        );
        // A host that names no region: the settings as before.
        let local = Some("http://127.0.0.1:9100");
        assert_eq!(
            bedrock_region(local, Some("ap-south-1"), Some("us-east-1")),
            Ok(Some("ap-south-1".into()))
        );
        assert_eq!(
            bedrock_region(local, None, Some("us-east-1")),
            Ok(Some("us-east-1".into()))
        );
        assert_eq!(
            bedrock_region(None, None, Some("us-west-2")),
            Ok(Some("us-west-2".into()))
        );
    }
}
